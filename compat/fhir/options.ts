import type { Request } from 'express';
import {
  inlineValueSet,
  parseLanguages,
  type ExpansionOptions,
  type ValidateOptions,
  type ValueSetTarget,
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
  const found = params.resource('valueSet');
  const inline = found && inlineValueSet(found);
  const id = typeof req.params.id === 'string' ? req.params.id : undefined;
  return {
    url: params.string('url') ?? params.string('context'),
    version: params.string('valueSetVersion'),
    valueSet: inline,
    id,
  };
}
