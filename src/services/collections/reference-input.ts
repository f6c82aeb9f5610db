import {
  cascadeInputOf,
  parseCascadeParameters,
  type CascadeParameters,
} from './cascade-parameters';
import { AppError } from '../../errors';
import {
  FILTER_PROPERTIES,
  type FilterOp,
  type NewReference,
  type PropertyFilter,
  type ResourceType,
} from '../../repositories';
import { parseConceptUrl } from '../shared/urls';

/**
 * Collection reference input (spec operations §2.4, OCL `PUT …/references/`): every form a
 * client sends, taken apart into stored references. Pure: nothing here reads the database.
 */

/** One reference of a request: taken apart, or why it could not be. */
export type ReferenceItem =
  { ok: true; reference: NewReference } | { ok: false; expression: string; message: string };

export const CASCADE_MODES = ['sourcemappings', 'sourcetoconcepts'] as const;
const FILTER_OPS: FilterOp[] = [
  '=',
  'in',
  'not-in',
  'regex',
  'exists',
  'is-a',
  'descendent-of',
  'is-not-a',
  'generalizes',
];
/** More references than this in one request are refused (a bulk import takes more). */
export const MAX_REFERENCES = 50_000;

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
const SHORTHAND = /^[^/:\s[\]]+:[^/:\s[\]]+(\[[^\]]+\])?:[^/:\s[\]]+(\[[^\]]+\])?$/;
const RELATIVE = /^\/(orgs|users)\/([^/]+)\/(sources|collections)\/([^/]+)\/(.*)$/;
/** Query parameters of an inline expression that filter concepts, and the property each names. */
const QUERY_FILTERS: Record<string, string> = {
  conceptclass: 'concept_class',
  concept_class: 'concept_class',
  datatype: 'datatype',
  locale: 'locale',
  maptype: 'map_type',
  map_type: 'map_type',
  q: 'q',
};

/**
 * The references of a `PUT …/references/` body: `{data: {expressions: [...]}}`,
 * `{data: {concepts: [...] | "*", mappings: [...] | "*", uri}}`, expanded-form objects (one or a
 * list), or a list of expressions. A malformed body is a 400; a malformed reference inside a
 * well-formed body is reported on its own.
 */
export function referencesOfBody(body: unknown, cascade?: string | null): ReferenceItem[] {
  const record = isObject(body) ? body : null;
  const data: unknown = record && 'data' in record ? record.data : body;
  if (data === undefined || data === null) {
    throw AppError.field(
      'data',
      'Give the references to add, e.g. {"data": {"expressions": [...]}}.',
    );
  }
  if (cascade !== undefined && cascade !== null && !isCascadeMode(cascade)) {
    throw AppError.field('cascade', `Must be ${CASCADE_MODES.join(' or ')}.`);
  }
  const inputs: unknown[] = [];
  if (Array.isArray(data)) {
    inputs.push(...(data as unknown[]));
  } else if (isObject(data) && ('url' in data || 'system' in data)) {
    inputs.push(data);
  } else if (isObject(data)) {
    const uri = typeof data.uri === 'string' ? data.uri : undefined;
    let known = false;
    for (const [field, segment] of [
      ['expressions', null],
      ['concepts', 'concepts'],
      ['mappings', 'mappings'],
    ] as const) {
      const value = data[field];
      if (value === undefined) continue;
      known = true;
      if (value === '*') {
        if (!uri)
          throw AppError.field(field, `"*" needs "uri": the repository to take them all from.`);
        inputs.push(`${withSlash(uri)}${segment ?? 'concepts'}/`);
        if (segment === null) inputs.push(`${withSlash(uri)}mappings/`);
      } else if (Array.isArray(value)) {
        inputs.push(...(value as unknown[]));
      } else {
        throw AppError.field(field, 'Must be a list of references or "*".');
      }
    }
    if (!known) {
      throw AppError.field(
        'data',
        'Give expressions, concepts or mappings (lists or "*"), or references in expanded form.',
      );
    }
  } else if (typeof data === 'string') {
    inputs.push(data);
  } else {
    throw AppError.field('data', 'Must be an object or a list of references.');
  }
  if (inputs.length === 0) throw AppError.field('data', 'There are no references to add.');
  if (inputs.length > MAX_REFERENCES) {
    throw AppError.field('data', `At most ${MAX_REFERENCES} references in one request.`);
  }
  const items = inputs.flatMap((input) => itemsOf(input));
  if (cascade) {
    for (const item of items) {
      if (item.ok && item.reference.resourceType === 'Concept' && !item.reference.cascade) {
        item.reference.cascade = cascade;
      }
    }
  }
  return items;
}

/** The references named for removal: `{expressions: [...] | "*"}`, `{references: [...]}` or `{ids: [...]}`. */
export function removalOf(
  body: unknown,
): { all: true } | { expressions: string[] } | { ids: string[] } {
  const record = isObject(body) ? body : {};
  const data = isObject(record.data) ? record.data : record;
  const expressions = data.expressions ?? data.references;
  if (expressions === '*') return { all: true };
  if (Array.isArray(expressions) && expressions.length > 0) {
    if (!expressions.every((e) => typeof e === 'string')) {
      throw AppError.field('expressions', 'Must be a list of expressions or "*".');
    }
    return { expressions: expressions };
  }
  if (Array.isArray(data.ids) && data.ids.length > 0) {
    if (!data.ids.every((id) => typeof id === 'string' || typeof id === 'number')) {
      throw AppError.field('ids', 'Must be a list of reference ids.');
    }
    return { ids: data.ids.map(String) };
  }
  throw AppError.invalid(
    'Name the references to remove: {"expressions": [...] | "*"} or {"ids": [...]}.',
  );
}

function itemsOf(input: unknown): ReferenceItem[] {
  try {
    if (typeof input === 'string') return [{ ok: true, reference: parseExpression(input) }];
    if (isObject(input)) return expandedForm(input).map((reference) => ({ ok: true, reference }));
    return [
      failed(JSON.stringify(input) ?? String(input), 'A reference is a string or an object.'),
    ];
  } catch (error) {
    const expression = typeof input === 'string' ? input : (JSON.stringify(input) ?? '');
    if (error instanceof AppError) return [failed(expression, messageOf(error))];
    throw error;
  }
}

/**
 * An inline expression: a relative URL (repository, version, `concepts|mappings`, id, resource
 * version, and filter parameters), a canonical URL with an optional `|version`, or the concept
 * shorthand `org:source:concept`.
 */
export function parseExpression(raw: string): NewReference {
  const text = raw.trim();
  if (text.length === 0) throw AppError.invalid('An expression cannot be empty.');
  if (text.length > 2000) throw AppError.invalid('An expression has at most 2000 characters.');
  if (SHORTHAND.test(text)) {
    const ref = parseConceptUrl(text);
    const source = `/orgs/${ref.source.owner.type === 'org' ? ref.source.owner.id : ''}/sources/${ref.source.id}/`;
    return reference({
      expression: text,
      system: source,
      version: ref.source.version ?? null,
      code: ref.id,
      resourceVersion: ref.conceptVersion ?? null,
    });
  }
  if (SCHEME.test(text)) {
    const [url, version] = splitPipe(text);
    return reference({ expression: text, system: url, version });
  }
  if (!text.startsWith('/')) {
    throw AppError.invalid(
      `'${raw}' is not a reference: give a relative URL (/orgs/:org/sources/:source/concepts/:concept/), a canonical URL, or org:source:concept.`,
    );
  }
  const [path, query] = splitOnce(text, '?');
  const match = RELATIVE.exec(withSlash(path));
  if (!match) {
    throw AppError.invalid(
      `'${raw}' is not a repository URL like /orgs/:org/sources/:source/[concepts/:concept/].`,
    );
  }
  const [, ownerType, owner, repoType, repo, rest] = match;
  const segments = rest
    .split('/')
    .filter((s) => s.length > 0)
    .map(decode);
  let version: string | null = null;
  if (segments.length > 0 && segments[0] !== 'concepts' && segments[0] !== 'mappings') {
    version = segments.shift()!;
  }
  let resourceType: ResourceType = 'Concept';
  let code: string | null = null;
  let resourceVersion: string | null = null;
  if (segments.length > 0) {
    resourceType = segments[0] === 'mappings' ? 'Mapping' : 'Concept';
    code = segments[1] ?? null;
    resourceVersion = segments[2] ?? null;
    if (segments.length > 3) {
      throw AppError.invalid(`'${raw}' has more path than a reference takes.`);
    }
  }
  const filter = query ? filtersOfQuery(query, resourceType) : null;
  if (filter && code) {
    throw AppError.invalid(
      `'${raw}' names one ${resourceType.toLowerCase()}; filters apply to a repository.`,
    );
  }
  return reference({
    // One spelling per reference: a missing trailing slash names the same thing.
    expression: `${withSlash(path)}${query ? `?${query}` : ''}`,
    system: `/${ownerType}/${owner}/${repoType}/${repo}/`,
    version,
    resourceType,
    code,
    resourceVersion,
    filter,
  });
}

/** The expanded form of spec operations §2.4 (OCL's `system`, `concept`, `exclude` accepted too). */
function expandedForm(input: Record<string, unknown>): NewReference[] {
  const url = input.url ?? input.system;
  if (typeof url !== 'string' || url.trim() === '') {
    throw AppError.invalid('A reference object needs "url" (a relative or canonical URL).');
  }
  const base = parseExpression(url);
  const version = optionalString(input, 'version');
  if (version !== null) {
    if (base.version !== null && base.version !== version) {
      throw AppError.invalid(
        `The url names version '${base.version}' and "version" names '${version}'.`,
      );
    }
    base.version = version;
  }
  const resourceType = input.resourceType ?? input.resource_type;
  if (resourceType !== undefined && resourceType !== null) {
    if (resourceType !== 'Concept' && resourceType !== 'Mapping') {
      throw AppError.invalid('"resourceType" must be Concept or Mapping.');
    }
    base.resourceType = resourceType;
  }
  const includeExclude = input.includeExclude ?? input.include_exclude;
  if (includeExclude !== undefined && includeExclude !== null) {
    if (includeExclude !== 'Include' && includeExclude !== 'Exclude') {
      throw AppError.invalid('"includeExclude" must be Include or Exclude.');
    }
    base.include = includeExclude === 'Include';
  }
  if (input.exclude !== undefined) {
    if (typeof input.exclude !== 'boolean') throw AppError.invalid('"exclude" must be a boolean.');
    base.include = !input.exclude;
  }
  base.namespace = optionalString(input, 'namespace');
  const code = optionalString(input, 'code');
  const id = optionalString(input, 'id');
  if (code !== null && id !== null) throw AppError.invalid('Give "code" or "id", not both.');
  if (id !== null) base.resourceType = 'Mapping';
  if (code !== null || id !== null) {
    if (base.code !== null && base.code !== (code ?? id)) {
      throw AppError.invalid(
        `The url names '${base.code}' and the reference names '${code ?? id}'.`,
      );
    }
    base.code = code ?? id;
  }
  const resourceVersion =
    optionalString(input, 'resourceVersion') ?? optionalString(input, 'resource_version');
  if (resourceVersion !== null) base.resourceVersion = resourceVersion;
  if (input.filter !== undefined && input.filter !== null) {
    base.filter = filtersOf(input.filter, base.resourceType);
  }
  base.display = optionalString(input, 'display');
  if (input.cascade !== undefined && input.cascade !== null)
    base.cascade = cascadeOf(input.cascade);

  // OCL's `concept: [{code, display}]`: one reference per code.
  const concepts = input.concept;
  let expanded: NewReference[] = [base];
  if (concepts !== undefined && concepts !== null) {
    if (!Array.isArray(concepts) || concepts.length === 0) {
      throw AppError.invalid('"concept" must be a non-empty list of {code, display}.');
    }
    if (base.code !== null) throw AppError.invalid('Give "code" or "concept", not both.');
    expanded = concepts.map((c) => {
      if (!isObject(c) || typeof c.code !== 'string' || c.code.trim() === '') {
        throw AppError.invalid('Each entry of "concept" needs a "code".');
      }
      return {
        ...base,
        code: c.code.trim(),
        display: typeof c.display === 'string' ? c.display : base.display,
      };
    });
  }
  for (const r of expanded) {
    if (r.filter && (r.code !== null || r.resourceVersion !== null)) {
      throw AppError.invalid('"filter" cannot be combined with "code" or "id".');
    }
    if (r.display !== null && r.code === null) throw AppError.invalid('"display" needs "code".');
    if (r.cascade !== null && r.code === null && !r.filter && r.resourceType === 'Concept') {
      // A whole repository with cascade is allowed only with a filter (spec operations §2.4).
      throw AppError.invalid('"cascade" needs "code" or "filter".');
    }
    if (r.cascade !== null && r.resourceType === 'Mapping') {
      throw AppError.invalid('"cascade" applies to concept references.');
    }
    r.expression = expressionOf(r);
  }
  return expanded;
}

/** The expression stored for an expanded-form reference: its URL form, filters as a query. */
function expressionOf(r: NewReference): string {
  const plural = r.resourceType === 'Mapping' ? 'mappings' : 'concepts';
  let text: string;
  if (r.system!.startsWith('/')) {
    text = `${r.system}${r.version ? `${encodeURIComponent(r.version)}/` : ''}${plural}/`;
  } else {
    text = `${r.system}${r.version ? `|${r.version}` : ''}${r.code !== null || r.filter || r.resourceType === 'Mapping' ? `/${plural}/` : ''}`;
  }
  if (r.code !== null) text += `${encodeURIComponent(r.code)}/`;
  if (r.resourceVersion !== null) text += `${encodeURIComponent(r.resourceVersion)}/`;
  if (r.filter?.length) {
    text += `?${r.filter
      .map((f) =>
        f.op === '='
          ? `${encodeURIComponent(f.property)}=${encodeURIComponent(f.value)}`
          : `${encodeURIComponent(f.property)}:${f.op}=${encodeURIComponent(f.value)}`,
      )
      .join('&')}`;
  }
  return text;
}

function filtersOfQuery(query: string, resourceType: ResourceType): PropertyFilter[] | null {
  const filters: PropertyFilter[] = [];
  for (const [key, value] of new URLSearchParams(query)) {
    const [name, op] = splitOnce(key, ':');
    const property = QUERY_FILTERS[name.toLowerCase()] ?? name;
    filters.push(
      checkedFilter(
        { property, op: op ?? (value.includes(',') ? 'in' : '='), value },
        resourceType,
      ),
    );
  }
  return filters.length ? filters : null;
}

function filtersOf(value: unknown, resourceType: ResourceType): PropertyFilter[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > 20) {
    throw AppError.invalid('"filter" must be a list of 1 to 20 {property, op, value}.');
  }
  return value.map((f) => {
    if (!isObject(f)) throw AppError.invalid('Each filter is {property, op, value}.');
    const { property, op } = f;
    const raw = f.value;
    if (typeof property !== 'string' || typeof op !== 'string') {
      throw AppError.invalid('Each filter needs "property" and "op" strings.');
    }
    const text =
      typeof raw === 'string'
        ? raw
        : typeof raw === 'boolean' || typeof raw === 'number'
          ? String(raw)
          : null;
    if (text === null) throw AppError.invalid(`The filter on '${property}' needs a "value".`);
    return checkedFilter({ property, op, value: text }, resourceType);
  });
}

function checkedFilter(
  f: { property: string; op: string; value: string },
  resourceType: ResourceType,
): PropertyFilter {
  const op = f.op as FilterOp;
  if (!FILTER_OPS.includes(op)) {
    throw AppError.invalid(`Unknown filter op '${f.op}'. Known: ${FILTER_OPS.join(', ')}.`);
  }
  const property = f.property.trim();
  const known = FILTER_PROPERTIES[resourceType];
  const hierarchy = ['is-a', 'descendent-of', 'is-not-a', 'generalizes'].includes(op);
  if (hierarchy) {
    if (resourceType !== 'Concept') throw AppError.invalid(`'${op}' filters concepts.`);
    if (!['concept', 'code', 'parent', 'id'].includes(property.toLowerCase())) {
      throw AppError.invalid(`'${op}' takes the property 'concept' (a concept id of the source).`);
    }
  } else if (
    property.toLowerCase() !== 'q' &&
    !known.includes(property.toLowerCase()) &&
    !property.startsWith('extras.')
  ) {
    throw AppError.invalid(
      `Unknown ${resourceType.toLowerCase()} property '${property}'. Known: ${known.join(', ')}, q, extras.<name>.`,
    );
  }
  if (property.toLowerCase() === 'q' && op !== '=') throw AppError.invalid(`'q' takes the op '='.`);
  if (f.value.length > 500) throw AppError.invalid('A filter value has at most 500 characters.');
  return { property, op, value: f.value };
}

function cascadeOf(value: unknown): string | Record<string, unknown> {
  if (typeof value === 'string') {
    if (!isCascadeMode(value.toLowerCase())) {
      throw AppError.invalid(`"cascade" must be ${CASCADE_MODES.join(' or ')}, or an object.`);
    }
    return value.toLowerCase();
  }
  if (isObject(value)) {
    const method = (
      typeof value.method === 'string' ? value.method : 'sourcetoconcepts'
    ).toLowerCase();
    if (!isCascadeMode(method)) {
      throw AppError.invalid(`"cascade.method" must be ${CASCADE_MODES.join(' or ')}.`);
    }
    const cascade = { ...value, method };
    try {
      cascadeParametersOf(cascade);
    } catch (error) {
      if (error instanceof AppError) throw AppError.invalid(`"cascade": ${error.message}`);
      throw error;
    }
    return cascade;
  }
  throw AppError.invalid(`"cascade" must be ${CASCADE_MODES.join(' or ')}, or an object.`);
}

export function isCascadeMode(value: string): value is (typeof CASCADE_MODES)[number] {
  return (CASCADE_MODES as readonly string[]).includes(value);
}

/**
 * The walk a stored cascade asks for (spec operations §2.4): a method name, or an object of the
 * parameters of `$cascade` (spec operations §4.2; `snake_case` names too); null for none.
 */
export function cascadeParametersOf(cascade: NewReference['cascade']): CascadeParameters | null {
  if (cascade === null) return null;
  if (typeof cascade === 'string') return parseCascadeParameters({ method: cascade });
  const input = cascadeInputOf(cascade, 'cascade');
  return parseCascadeParameters(input);
}

function reference(values: Partial<NewReference> & { expression: string }): NewReference {
  return {
    include: true,
    resourceType: 'Concept',
    system: null,
    version: null,
    code: null,
    resourceVersion: null,
    filter: null,
    cascade: null,
    namespace: null,
    display: null,
    ...values,
  };
}

function failed(expression: string, message: string): ReferenceItem {
  return { ok: false, expression, message };
}

function messageOf(error: AppError): string {
  const fields = error.fieldErrors ? Object.values(error.fieldErrors).flat() : [];
  return fields.length ? `${error.message} ${fields.join(' ')}` : error.message;
}

function optionalString(input: Record<string, unknown>, key: string): string | null {
  const value = input[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw AppError.invalid(`"${key}" must be a string.`);
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

function splitPipe(text: string): [string, string | null] {
  const at = text.indexOf('|');
  return at < 0 ? [text, null] : [text.slice(0, at), text.slice(at + 1) || null];
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

function withSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw AppError.invalid(`'${segment}' is not a valid URL segment.`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
