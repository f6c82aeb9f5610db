import type { Request } from 'express';
import {
  parseLanguages,
  TerminologyError,
  type ExpansionOptions,
  type ValidateOptions,
  type ValueSetTarget,
  type ValueSetResource,
} from '../../src/services';
import type { OperationParams } from './parameters';

/** The expansion parameters this server honours (TerminologyCapabilities lists them). */
export const EXPANSION_PARAMETERS = [
  'activeOnly',
  'check-system-version',
  'count',
  'default-valueset-version',
  'designation',
  'displayLanguage',
  'excludeNested',
  'filter',
  'force-system-version',
  'includeDefinition',
  'includeDesignations',
  'offset',
  'property',
  'system-version',
  'tx-resource',
  'useSupplement',
];

/** Those an expansion echoes (in the order they were given). */
const ECHOED = EXPANSION_PARAMETERS.filter(
  (name) => !['property', 'tx-resource', 'useSupplement'].includes(name),
);

/** The expansion parameters shared by $expand and $validate-code. */
export function expansionOptions(
  params: OperationParams,
  req: Request,
): Omit<ExpansionOptions, 'maxCodes'> {
  return {
    activeOnly: params.boolean('activeOnly'),
    filter: params.string('filter'),
    count: params.integer('count'),
    offset: params.integer('offset'),
    excludeNested: params.boolean('excludeNested'),
    includeDesignations: params.boolean('includeDesignations'),
    designations: params.strings('designation'),
    languages: parseLanguages(params.string('displayLanguage')),
    acceptLanguage: req.get('accept-language'),
    properties: params.strings('property'),
    systemVersions: params.strings('system-version'),
    checkSystemVersions: params.strings('check-system-version'),
    forceSystemVersions: params.strings('force-system-version'),
    defaultValueSetVersions: params.strings('default-valueset-version'),
    useSupplements: params.strings('useSupplement'),
    echo: params.echo(ECHOED),
  };
}

export function validateOptions(
  params: OperationParams,
  req: Request,
): Omit<ValidateOptions, 'maxCodes'> {
  return {
    ...expansionOptions(params, req),
    inferSystem: params.boolean('inferSystem'),
    lenientDisplay: params.boolean('lenient-display-validation'),
    abstractAllowed: params.boolean('abstract'),
    systemVersion: params.string('systemVersion'),
    membershipOnly: params.boolean('valueset-membership-only'),
  };
}

/** The value set an operation names: `url` (+ `valueSetVersion`), an inline `valueSet`, or `:id`. */
export function valueSetTarget(params: OperationParams, req: Request): ValueSetTarget {
  const inline = params.resource('valueSet');
  if (inline && inline.resourceType !== 'ValueSet') {
    throw TerminologyError.invalid('The parameter valueSet must be a ValueSet', 'valueSet');
  }
  if (inline) {
    const problem = composeProblem(inline.compose);
    if (problem) throw TerminologyError.invalid(`valueSet.compose${problem}`, 'valueSet');
  }
  const id = typeof req.params.id === 'string' ? req.params.id : undefined;
  return {
    url: params.string('url') ?? params.string('context'),
    version: params.string('valueSetVersion'),
    valueSet: (inline as ValueSetResource | undefined) ?? undefined,
    id,
  };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What makes an inline value set's compose unreadable (the engine takes the FHIR shape for
 * granted, as it does of stored resources), or undefined.
 */
function composeProblem(compose: unknown): string | undefined {
  if (compose === undefined) return undefined;
  if (!isObject(compose)) return ' must be an object';
  for (const key of ['include', 'exclude'] as const) {
    const components = compose[key];
    if (components === undefined) continue;
    if (!Array.isArray(components)) return `.${key} must be a list`;
    for (const [i, c] of components.entries()) {
      const at = `.${key}[${i}]`;
      if (!isObject(c)) return `${at} must be an object`;
      for (const field of ['system', 'version'] as const) {
        if (c[field] !== undefined && typeof c[field] !== 'string')
          return `${at}.${field} must be a string`;
      }
      // Only the types: what is missing is the engine's to report, in its own words.
      const strings = (item: unknown, fields: string[]): boolean =>
        isObject(item) && fields.every((f) => item[f] === undefined || typeof item[f] === 'string');
      const lists: Array<[string, (item: unknown) => boolean]> = [
        ['concept', (item) => strings(item, ['code', 'display'])],
        ['filter', (item) => strings(item, ['property', 'op', 'value'])],
        ['valueSet', (item) => typeof item === 'string'],
      ];
      for (const [field, valid] of lists) {
        const items = c[field];
        if (items === undefined) continue;
        if (!Array.isArray(items) || !items.every(valid)) {
          return `${at}.${field} must be a list of ${field === 'valueSet' ? 'canonical URLs' : `well-formed ${field}s`}`;
        }
      }
    }
  }
  return undefined;
}
