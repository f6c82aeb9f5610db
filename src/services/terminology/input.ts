import type { TerminologyResource, ValueSetResource } from './fhir';
import { TerminologyError } from './issues';

/**
 * Checks of the resources a request brings (`tx-resource`, an inline `valueSet`), shared by the
 * FHIR edge and GraphQL: the engine takes the FHIR shape of its content for granted, as it does
 * of stored resources.
 */

const TERMINOLOGY_TYPES = new Set(['CodeSystem', 'ValueSet', 'ConceptMap']);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `tx-resource` values: code systems, value sets and concept maps for one request. */
export function terminologyResources(values: unknown[]): TerminologyResource[] {
  return values.map((resource, i) => {
    if (
      !isObject(resource) ||
      typeof resource.resourceType !== 'string' ||
      !TERMINOLOGY_TYPES.has(resource.resourceType)
    ) {
      throw TerminologyError.invalid(
        `tx-resource ${i + 1} must be a CodeSystem, ValueSet or ConceptMap`,
        'tx-resource',
      );
    }
    return resource as unknown as TerminologyResource;
  });
}

/** An inline value set (the `valueSet` parameter), its compose readable by the engine. */
export function inlineValueSet(resource: Record<string, unknown>): ValueSetResource {
  if (resource.resourceType !== 'ValueSet') {
    throw TerminologyError.invalid('The parameter valueSet must be a ValueSet', 'valueSet');
  }
  const problem = composeProblem(resource.compose);
  if (problem) throw TerminologyError.invalid(`valueSet.compose${problem}`, 'valueSet');
  return resource as ValueSetResource;
}

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
