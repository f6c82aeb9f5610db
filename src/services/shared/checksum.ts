/**
 * OCL-compatible checksums (spec core §9.4; reference notes §1.4): an MD5 hex digest of a
 * canonical serialization that reproduces `ocldev/checksum.py` byte for byte, so that values
 * agree with those OCL computes.
 *
 * Every resource has two checksums:
 * - `standard` covers all content that an edit can change. Identical standard checksums mean an
 *   edit is a no-op (no new version, status 208).
 * - `smart` covers only what changes meaning: for a concept its class, datatype, retired flag and
 *   fully specified names; for a mapping its map type, codes, names and retired flag. Only a
 *   smart change counts as a major change.
 *
 * Python semantics that are reproduced: `json.dumps` spacing (`", "`) and `ensure_ascii`
 * escaping, `true`/`false`/`null`, lists sorted by value (other items by their Python `str()`), a
 * one-element list unwrapped to its element, dict keys sorted, falsy fields dropped. JavaScript
 * has a single number type, so every integer-valued number is written as a Python int (the
 * reference turns integer-valued top-level floats into ints in its cleanup).
 */
import { createHash } from 'node:crypto';

export interface ChecksumPair {
  standard: string;
  smart: string;
}

type Nullable<T> = T | null | undefined;
type Extras = Nullable<Readonly<Record<string, unknown>>>;

export interface ConceptNameChecksumInput {
  name?: Nullable<string>;
  locale?: Nullable<string>;
  locale_preferred?: Nullable<boolean>;
  name_type?: Nullable<string>;
  external_id?: Nullable<string>;
}

export interface ConceptDescriptionChecksumInput {
  description?: Nullable<string>;
  locale?: Nullable<string>;
  locale_preferred?: Nullable<boolean>;
  description_type?: Nullable<string>;
  external_id?: Nullable<string>;
}

export interface ConceptChecksumInput {
  concept_class?: Nullable<string>;
  datatype?: Nullable<string>;
  retired?: Nullable<boolean>;
  external_id?: Nullable<string>;
  extras?: Extras;
  names?: Nullable<readonly ConceptNameChecksumInput[]>;
  descriptions?: Nullable<readonly ConceptDescriptionChecksumInput[]>;
  parent_concept_urls?: Nullable<readonly string[]>;
  child_concept_urls?: Nullable<readonly string[]>;
}

export interface MappingChecksumInput {
  map_type?: Nullable<string>;
  from_concept_code?: Nullable<string>;
  from_concept_name?: Nullable<string>;
  from_concept_url?: Nullable<string>;
  to_concept_code?: Nullable<string>;
  to_concept_name?: Nullable<string>;
  to_concept_url?: Nullable<string>;
  from_source_url?: Nullable<string>;
  from_source_version?: Nullable<string>;
  to_source_url?: Nullable<string>;
  to_source_version?: Nullable<string>;
  retired?: Nullable<boolean>;
  sort_weight?: Nullable<number | string>;
  extras?: Extras;
  external_id?: Nullable<string>;
}

/** The standard and smart checksums of a concept (with its names and descriptions inline). */
export function conceptChecksums(concept: ConceptChecksumInput): ChecksumPair {
  const base = {
    concept_class: concept.concept_class ?? null,
    datatype: concept.datatype ?? null,
    retired: concept.retired ?? false,
  };
  const names = concept.names ?? [];
  const standard = {
    ...base,
    external_id: concept.external_id ?? null,
    extras: concept.extras ?? null,
    names: names.map(nameFields),
    descriptions: (concept.descriptions ?? []).map(descriptionFields),
    parent_concept_urls: concept.parent_concept_urls ?? [],
    child_concept_urls: concept.child_concept_urls ?? [],
  };
  const smart = {
    ...base,
    names: names.filter((name) => isFullySpecifiedNameType(name.name_type)).map(nameFields),
  };
  return { standard: checksumOf(standard), smart: checksumOf(smart) };
}

/**
 * The standard and smart checksums of a mapping. A missing concept code or source URL is taken
 * from the matching `*_concept_url` (`/orgs/WHO/sources/ICD-10-WHO/concepts/B54/` → source
 * `/orgs/WHO/sources/ICD-10-WHO/`, code `B54`, URL-decoded).
 */
export function mappingChecksums(mapping: MappingChecksumInput): ChecksumPair {
  const from = splitConceptUrl(mapping.from_concept_url);
  const to = splitConceptUrl(mapping.to_concept_url);
  const base = {
    map_type: mapping.map_type ?? null,
    from_concept_code:
      mapping.from_concept_code || from?.code || (mapping.from_concept_code ?? null),
    to_concept_code: mapping.to_concept_code || to?.code || (mapping.to_concept_code ?? null),
    from_concept_name: mapping.from_concept_name ?? null,
    to_concept_name: mapping.to_concept_name ?? null,
    retired: mapping.retired ?? false,
  };
  const standard = {
    ...base,
    sort_weight: sortWeight(mapping.sort_weight),
    extras: mapping.extras || null,
    external_id: mapping.external_id || null,
    from_source_url: mapping.from_source_url || from?.sourceUrl || null,
    from_source_version: mapping.from_source_version || null,
    to_source_url: mapping.to_source_url || to?.sourceUrl || null,
    to_source_version: mapping.to_source_version || null,
  };
  return { standard: checksumOf(standard), smart: checksumOf(base) };
}

/**
 * MD5 hex of one resource's checksum fields: cleaned up ({@link cleanupChecksumFields}), then
 * serialized ({@link serializeForChecksum}).
 */
export function checksumOf(value: unknown): string {
  return md5(serializeForChecksum(cleanupChecksumFields(value)));
}

/**
 * The checksum of several resources: one resource gives its own checksum; otherwise the MD5 of
 * the serialized list of the individual checksums (as ocldev's `generate()` over a list).
 */
export function checksumOfList(values: readonly unknown[]): string {
  const checksums = values.map(checksumOf);
  return checksums.length === 1 ? checksums[0] : md5(serializeForChecksum(checksums));
}

/** OCL's test for a fully specified name type (`FULLY_SPECIFIED`, `Fully Specified`, …). */
export function isFullySpecifiedNameType(type: Nullable<string>): boolean {
  if (!type) return false;
  if (type === 'FULLY_SPECIFIED' || type === 'Fully Specified') return true;
  return type.replace(/[ _-]/g, '').toLowerCase() === 'fullyspecified';
}

const DROPPED_WHEN_FALSY = new Set([
  'retired',
  'parent_concept_urls',
  'child_concept_urls',
  'descriptions',
  'extras',
  'names',
  'locale_preferred',
  'name_type',
  'description_type',
]);

/**
 * ocldev's `_cleanup` of a field dict: drops null values, falsy values of the optional keys, a
 * true `is_active`, and `extras` keys starting with `__`; names and descriptions are cleaned the
 * same way. Anything other than a plain object is returned unchanged.
 */
export function cleanupChecksumFields(fields: unknown): unknown {
  if (!isRecord(fields)) return fields;
  const result: Record<string, unknown> = {};
  for (const [key, original] of Object.entries(fields)) {
    let value = original;
    if (value === null || value === undefined) continue;
    if (DROPPED_WHEN_FALSY.has(key) && !isTruthy(value)) continue;
    if ((key === 'names' || key === 'descriptions') && Array.isArray(value)) {
      value = value.map(cleanupChecksumFields);
    }
    if (key === 'is_active' && isTruthy(value)) continue;
    if (key === 'extras' && isRecord(value)) {
      value = Object.fromEntries(Object.entries(value).filter(([k]) => !k.startsWith('__')));
    }
    result[key] = value;
  }
  return result;
}

/**
 * ocldev's `_serialize`: `{` + the sorted keys as a JSON list + each value serialized and followed
 * by `,` + `}` for objects; `[` + the sorted items serialized, joined by `,` + `]` for lists (a
 * one-item list is its item); Python `json.dumps` for scalars.
 */
export function serializeForChecksum(value: unknown): string {
  const unwrapped = Array.isArray(value) && value.length === 1 ? (value[0] as unknown) : value;
  if (Array.isArray(unwrapped)) {
    return `[${pythonSorted(unwrapped as unknown[])
      .map(serializeForChecksum)
      .join(',')}]`;
  }
  if (isRecord(unwrapped)) {
    const keys = pythonSorted(definedKeys(unwrapped));
    let result = `{[${keys.map(pythonJsonString).join(', ')}]`;
    for (const key of keys) result += `${serializeForChecksum(unwrapped[key])},`;
    return `${result}}`;
  }
  return pythonJsonScalar(unwrapped);
}

function nameFields(name: ConceptNameChecksumInput): Record<string, unknown> {
  return {
    locale: name.locale ?? null,
    locale_preferred: name.locale_preferred ?? null,
    name: name.name ?? null,
    name_type: name.name_type ?? null,
    external_id: name.external_id ?? null,
  };
}

function descriptionFields(description: ConceptDescriptionChecksumInput): Record<string, unknown> {
  return {
    locale: description.locale ?? null,
    locale_preferred: description.locale_preferred ?? null,
    description: description.description ?? null,
    description_type: description.description_type ?? null,
    external_id: description.external_id ?? null,
  };
}

/** Python `float(sort_weight or 0) or None`; an unreadable weight counts as absent. */
function sortWeight(weight: Nullable<number | string>): number | null {
  const value = typeof weight === 'string' ? Number(weight.trim() || 'NaN') : (weight ?? 0);
  return Number.isFinite(value) && value !== 0 ? value : null;
}

function splitConceptUrl(url: Nullable<string>): { sourceUrl: string; code: string } | null {
  if (!url) return null;
  const at = url.indexOf('/concepts/');
  if (at < 0) return null;
  const code = url.slice(at + '/concepts/'.length).split('/')[0] ?? '';
  return { sourceUrl: url.slice(0, at + 1), code: pythonUnquote(code) };
}

/** Python `urllib.parse.unquote`: %XX runs decoded as UTF-8 (invalid bytes → U+FFFD), `+` kept. */
function pythonUnquote(text: string): string {
  return text.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) =>
    Buffer.from(run.replace(/%/g, ''), 'hex').toString('utf8'),
  );
}

function md5(text: string): string {
  return createHash('md5').update(text, 'utf8').digest('hex');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function definedKeys(record: Record<string, unknown>): string[] {
  return Object.keys(record).filter((key) => record[key] !== undefined);
}

/** Python truthiness of a JSON value (NaN is truthy in Python). */
function isTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === '') return false;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'bigint') return value !== 0n;
  if (Array.isArray(value)) return value.length > 0;
  if (isRecord(value)) return definedKeys(value).length > 0;
  return true;
}

type SortKey = { numeric: true; value: number } | { numeric: false; value: string };

/**
 * Python `sorted(items, key=…)` as in ocldev's `generic_sort`: numbers and booleans by value,
 * strings by code point, anything else by its Python `str()`. Python cannot order a number
 * against a string (TypeError); here numbers come first. Stable, like Python's sort.
 */
function pythonSorted<T>(items: readonly T[]): T[] {
  // The common case (dict keys, lists of codes): strings only, compared as they are.
  if (items.every((item) => typeof item === 'string')) {
    return [...items].sort((a, b) => compareCodePoints(a, b));
  }
  const keyed = items.map((item) => ({ item, key: sortKeyOf(item) }));
  keyed.sort((a, b) => compareSortKeys(a.key, b.key));
  return keyed.map(({ item }) => item);
}

function sortKeyOf(item: unknown): SortKey {
  if (typeof item === 'number' || typeof item === 'boolean' || typeof item === 'bigint') {
    return { numeric: true, value: Number(item) };
  }
  return { numeric: false, value: typeof item === 'string' ? item : pythonRepr(item) };
}

function compareSortKeys(a: SortKey, b: SortKey): number {
  if (a.numeric && b.numeric) return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
  if (!a.numeric && !b.numeric) return compareCodePoints(a.value, b.value);
  return a.numeric ? -1 : 1;
}

/** Orders strings by Unicode code point (Python), not by UTF-16 code unit (JavaScript). */
function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** Moves surrogates (astral code points) above U+E000–U+FFFF, keeping the rest in order. */
function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  return unit >= 0xe000 ? unit - 0x800 : unit;
}

/** Python `json.dumps` of a scalar (ensure_ascii); `undefined` is `null`. */
function pythonJsonScalar(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'NaN';
    if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
    return pythonNumber(value);
  }
  if (typeof value === 'bigint') return value.toString();
  // Functions and symbols are not JSON values: written as JSON.stringify writes them in arrays.
  return typeof value === 'string' ? pythonJsonString(value) : 'null';
}

const JSON_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  '"': '\\"',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

/** Python `json.dumps(str)`: everything outside printable ASCII as `\uXXXX` (surrogate pairs). */
function pythonJsonString(text: string): string {
  const escaped = text.replace(
    /[\\"]|[^ -~]/g,
    (unit) => JSON_ESCAPES[unit] ?? `\\u${hex(unit.charCodeAt(0), 4)}`,
  );
  return `"${escaped}"`;
}

/** A number as Python writes it: integer-valued as an int, else `float.__repr__`. */
function pythonNumber(value: number): string {
  if (Number.isInteger(value)) return BigInt(value).toString();
  const [mantissa = '', exponentText = '0'] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 16) {
    return `${mantissa}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return String(value);
}

/** Python `repr()` of a JSON value, as `str()` of a dict or list renders it. */
function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'string') return pythonReprString(value);
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'nan';
    if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
    return pythonNumber(value);
  }
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(', ')}]`;
  if (isRecord(value)) {
    const entries = definedKeys(value).map(
      (key) => `${pythonReprString(key)}: ${pythonRepr(value[key])}`,
    );
    return `{${entries.join(', ')}}`;
  }
  return 'None';
}

const NON_PRINTABLE = /^[\p{C}\p{Z}]$/u;
/** Printable ASCII without `'` or `\\`: written as is between single quotes. */
const PLAIN_ASCII = /^[ -&(-[\]-~]*$/;

/** Python `repr(str)`: single quotes unless only `'` occurs; non-printables escaped. */
function pythonReprString(text: string): string {
  if (PLAIN_ASCII.test(text)) return `'${text}'`;
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let result = quote;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === quote || char === '\\') result += `\\${char}`;
    else if (char === '\t') result += '\\t';
    else if (char === '\n') result += '\\n';
    else if (char === '\r') result += '\\r';
    else if (code < 0x20 || code === 0x7f) result += `\\x${hex(code, 2)}`;
    else if (code < 0x7f || !NON_PRINTABLE.test(char)) result += char;
    else if (code <= 0xff) result += `\\x${hex(code, 2)}`;
    else if (code <= 0xffff) result += `\\u${hex(code, 4)}`;
    else result += `\\U${hex(code, 8)}`;
  }
  return result + quote;
}

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, '0');
}
