/**
 * The JSON comparison of HL7's terminology test runner, ported from
 * `org.hl7.fhir.r5.test.utils.CompareUtilities` (hapifhir/org.hl7.fhir.core): the expected
 * document (a test's response file, with its `$…$` templates and `$optional…$` markers) against
 * the actual one (the server's answer, already converted to R5, scrubbed and sorted).
 *
 * The port keeps the Java behaviour on purpose, quirks included (each is marked "Java:"): a test
 * passes here exactly when it passes in the Java runner. See README.md for the rules in prose.
 */

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export interface CompareOptions {
  /** The runner's modes (`general` by default); `$optional$` conditions test them. */
  modes?: ReadonlySet<string> | null;
  /**
   * The strings for `$external:N:…$` of this response file (an entry of an externals file such
   * as messages-tx.fhir.org.json). Null: only the fragments after the second `:` are checked.
   */
  externals?: Readonly<Record<string, string>> | null;
  /** `version`: the FHIR version of the client (`4.0.1` for R4), for `$version$`. */
  variables?: Readonly<Record<string, string>>;
  /** Only the expected properties are looked for, anything else is ignored (metadata tests). */
  patternMode?: boolean;
}

const has = (o: JsonObject, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);
const isObject = (v: Json | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Java's `String.split(regex)` for a one-character separator: trailing empty strings dropped. */
export function javaSplit(s: string, sep: string): string[] {
  if (!s.includes(sep)) return [s];
  const parts = s.split(sep);
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/** Java's `String.trim()`: strips every character up to U+0020, and only those. */
function javaTrim(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && s.charCodeAt(start) <= 0x20) start++;
  while (end > start && s.charCodeAt(end - 1) <= 0x20) end--;
  return s.slice(start, end);
}

// org.hl7.fhir.utilities.regex.RegexConstants, anchored as Java's String.matches() is.
const INSTANT =
  /^(?:([0-9]([0-9]([0-9][1-9]|[1-9]0)|[1-9]00)|[1-9]000)-(0[1-9]|1[0-2])-(0[1-9]|[1-2][0-9]|3[0-1])T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]{1,9})?(Z|(\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00)))$/;
const DATE =
  /^(?:([0-9]([0-9]([0-9][1-9]|[1-9]0)|[1-9]00)|[1-9]000)-(0[1-9]|1[0-2])-(0[1-9]|[1-2][0-9]|3[0-1])(T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]{1,9})?(Z|(\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00)))?)$/;
const URN_UUID = /^(?:urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
const ID = /^(?:[A-Za-z0-9\-.]{1,64})$/;
// Java: the class `[[:blank:|:blank:]]` is a union, i.e. the characters `:blank|` (checked with
// java.util.regex); it is not POSIX [:blank:].
const URL =
  /^(((https?):\/\/)(%[0-9A-Fa-f]{2}|[-()_.!~*';/?:@&=+$,A-Za-z0-9])+)([).!';/?:,][:blank|])?$/;
const TOKEN = /^(?:[0-9a-zA-Z_][0-9a-zA-Z_.-]*)$/;
// VersionUtilities.isSemVer(s, false) (SemverParser): major.minor.patch, optional -pre and +build.
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/**
 * commons-codec `Base64.decodeBase64` (lenient): characters outside both base64 alphabets are
 * skipped, the first `=` ends the input, leftover bits are dropped.
 */
function lenientBase64(text: string): number[] {
  const out: number[] = [];
  let bits = 0;
  let count = 0;
  for (const byte of Buffer.from(text, 'utf8')) {
    if (byte === 0x3d) break; // '='
    let v = -1;
    if (byte >= 0x41 && byte <= 0x5a) v = byte - 0x41;
    else if (byte >= 0x61 && byte <= 0x7a) v = byte - 0x61 + 26;
    else if (byte >= 0x30 && byte <= 0x39) v = byte - 0x30 + 52;
    else if (byte === 0x2b || byte === 0x2d)
      v = 62; // '+' '-'
    else if (byte === 0x2f || byte === 0x5f) v = 63; // '/' '_'
    if (v < 0) continue;
    bits = ((bits << 6) | v) & 0xffffff;
    count++;
    if (count === 4) {
      out.push((bits >> 16) & 0xff, (bits >> 8) & 0xff, bits & 0xff);
      count = 0;
      bits = 0;
    }
  }
  if (count === 2) out.push((bits >> 4) & 0xff);
  if (count === 3) out.push((bits >> 10) & 0xff, (bits >> 2) & 0xff);
  return out;
}

/** CompareUtilities.sameBytes(unBase64(a), unBase64(b)). */
function sameBase64Bytes(a: string, b: string): boolean {
  const x = lenientBase64(a);
  const y = lenientBase64(b);
  return x.length > 0 && y.length > 0 && x.length === y.length && x.every((v, i) => v === y[i]);
}

function className(v: Json): string {
  if (v === null) return 'JsonNull';
  if (Array.isArray(v)) return 'JsonArray';
  if (typeof v === 'object') return 'JsonObject';
  if (typeof v === 'string') return 'JsonString';
  if (typeof v === 'number') return 'JsonNumber';
  return 'JsonBoolean';
}

const isPrimitive = (v: Json): v is null | boolean | number | string =>
  v === null || typeof v !== 'object';

/** The text Java's JsonPrimitive.asString() gives (numbers as JavaScript prints them). */
const asString = (v: null | boolean | number | string): string => (v === null ? 'null' : `${v}`);

export class Comparator {
  readonly warnings: string[] = [];
  private readonly modes: ReadonlySet<string> | null;
  private readonly externals: Readonly<Record<string, string>> | null;
  private readonly variables: Readonly<Record<string, string>>;
  private readonly patternMode: boolean;

  constructor(options: CompareOptions = {}) {
    this.modes = options.modes ?? null;
    this.externals = options.externals ?? null;
    this.variables = options.variables ?? {};
    this.patternMode = options.patternMode ?? false;
  }

  /** Null when `actual` satisfies `expected`, else a message naming the path of the first difference. */
  compare(id: string, expected: JsonObject, actual: JsonObject): string | null {
    return this.compareObjects(id, '', expected, actual);
  }

  private notEqual(id: string, message: string, expected: string, actual: string): string {
    const sep = this.patternMode ? '. ' : '\n';
    return `${message}${sep}Expected:${this.presentExpected(expected)} for ${id}${sep}Actual  :"${actual}"`;
  }

  private presentExpected(expected: string): string {
    if (!(expected.startsWith('$') && expected.endsWith('$'))) return `"${expected}"`;
    if (expected.startsWith('$choice:')) {
      return `Contains one of [${javaSplit(expected.slice(8, -1), '|').join(', ')}]`;
    }
    if (expected.startsWith('$fragments:')) {
      return `Contains all of [${javaSplit(expected.slice(11, -1), '|').join(', ')}]`;
    }
    if (expected.startsWith('$external:')) {
      const cmd = javaSplit(expected.slice(1, -1), ':');
      if (this.externals) return `"${this.externals[cmd[1]]}" (Ext)`;
      return `Contains all of [${javaSplit(cmd[2] ?? '', '|').join(', ')}] (because no external string provided for ${cmd[1]})`;
    }
    const named: Record<string, string> = {
      $$: '$$',
      $instant$: '"An Instant"',
      $date$: '"A date"',
      $uuid$: '"A Uuid"',
      $string$: '"A string"',
      $id$: '"An Id"',
      $url$: '"A URL"',
      $token$: '"A Token"',
      $version$: this.variables.version ?? '(anything)',
      $semver$: 'A semver',
    };
    return named[expected] ?? `Unhandled template: ${expected}`;
  }

  private compareObjects(
    id: string,
    path: string,
    expected: JsonObject,
    actual: JsonObject,
  ): string | null {
    const optionals = listOptionals(expected);
    const countOnlys = stringsOf(expected['$count-arrays$']);
    for (const [n, value] of Object.entries(actual)) {
      if (n === 'fhir_comments') continue;
      if (has(expected, n)) {
        const s = this.compareNodes(id, `${path}.${n}`, expected[n], value, countOnlys.includes(n));
        if (s) return s;
      } else if (!this.patternMode && !optionals.includes(n)) {
        // Java: only the names listed are allowed here; a "*" in $optional-properties$ is not.
        return `properties differ at ${path}: unexpected property ${n}`;
      }
    }
    for (const [n, value] of Object.entries(expected)) {
      if (n === 'fhir_comments' || isOptionalName(n, optionals)) continue;
      if (!has(actual, n) && !allOptional(value)) {
        return `properties differ at ${path}: missing property ${n}`;
      }
    }
    return null;
  }

  private compareNodes(
    id: string,
    path: string,
    expected: Json,
    actual: Json,
    countOnly: boolean,
  ): string | null {
    if (
      !(isPrimitive(expected) && isPrimitive(actual)) &&
      className(expected) !== className(actual)
    ) {
      return this.notEqual(
        id,
        `properties differ at ${path}`,
        className(expected),
        className(actual),
      );
    }
    if (isPrimitive(actual)) {
      const exp = expected as null | boolean | number | string;
      if (typeof actual === 'boolean' && typeof exp === 'boolean') {
        if (actual !== exp) {
          return this.notEqual(
            id,
            `boolean property values differ at ${path}`,
            `${exp}`,
            `${actual}`,
          );
        }
      } else if (typeof actual === 'string' && typeof exp === 'string') {
        // Java: two narratives are never compared; a string also matches another that decodes
        // (leniently, as base64) to the same bytes.
        if (!(actual.includes('<div') && exp.includes('<div'))) {
          if (!this.matches(actual, exp) && !sameBase64Bytes(actual, exp)) {
            return this.notEqual(id, `string property values differ at ${path}`, exp, actual);
          }
        }
      } else if (typeof actual === 'number' && typeof exp === 'number') {
        if (asString(actual) !== asString(exp)) {
          return this.notEqual(
            id,
            `number property values differ at ${path}`,
            asString(exp),
            asString(actual),
          );
        }
      } else if (exp === null) {
        if (actual !== null)
          return this.notEqual(id, `null Properties differ at ${path}`, 'null', asString(actual));
      } else {
        return this.notEqual(
          id,
          `property types differ at ${path}`,
          asString(exp),
          asString(actual),
        );
      }
      return null;
    }
    if (!Array.isArray(actual))
      return this.compareObjects(id, path, expected as JsonObject, actual);
    return this.compareArrays(id, path, expected as Json[], actual, countOnly);
  }

  private compareArrays(
    id: string,
    path: string,
    expected: Json[],
    actual: Json[],
    countOnly: boolean,
  ): string | null {
    const as = actual.length;
    const es = expected.length;
    if (countOnly) {
      return as === es
        ? null
        : this.notEqual(id, `array item count differs at ${path}`, `${es}`, `${as}`);
    }
    if (this.patternMode) {
      // Each expected item is looked for from where the previous one was found: the actual items
      // may have others between them, but not in another order.
      let c = 0;
      for (let i = 0; i < es; i++) {
        let s: string | null = "Doesn't exist";
        const tried: string[] = [''];
        while (s !== null && c < as) {
          s = this.compareNodes(id, `${path}[${i}]`, expected[i], actual[c], false);
          if (s !== null) tried.push(`  ${s}`);
          c++;
        }
        if (s !== null) {
          return `The expected item at ${path} at index ${i} was not found: ${tried.join('\r\n')}`;
        }
      }
      return null;
    }
    const oc = expected.filter((e) => this.isOptionalItem(e)).length;
    const expectedMin = es - oc;
    if (as > es || as < expectedMin) {
      return this.notEqual(id, `array item count differs at ${path}`, `${es}`, `${as}`);
    }
    // An optional expected item that does not match the actual item in front is skipped; the
    // actual items must all be used, in order.
    let c = 0;
    for (let i = 0; i < es; i++) {
      const item = expected[i]!;
      if (c >= as) {
        // Java: once the actual items run out, the rest is accepted only from an optional item
        // among the last `oc` positions on (and is then not looked at any further).
        if (i >= es - oc && this.isOptionalItem(item)) {
          const warning = optionalWarning(item);
          if (warning !== null) this.warnings.push(warning);
          return null;
        }
        return `One or more array items did not match at ${path} starting at index ${i}`;
      }
      const s = this.compareNodes(id, `${path}[${i}]`, item, actual[c], false);
      if (s && !this.isOptionalItem(item)) return s;
      if (!s) c++;
    }
    if (c < as) return `Unexpected Node found in array at '${path}' at index ${c}`;
    return null;
  }

  /** An array item that may be missing: `"$optional$": true`, or a condition that holds. */
  private isOptionalItem(e: Json): boolean {
    if (!isObject(e)) return false;
    const o = e.$optional$;
    if (typeof o === 'string') return this.passesOptionalFilter(o);
    return o === true;
  }

  /**
   * CompareUtilities.passesOptionalFilter: `!mode` holds when the runner is not in that mode
   * (so `!tx.fhir.org` holds in general mode), `warning:…` always holds (and warns when the item
   * is missing), `version:V` holds when the client's FHIR version starts with V (R4: `4.0.1`),
   * any other token holds only when the runner is in that mode.
   */
  private passesOptionalFilter(token: string): boolean {
    if (token.startsWith('!')) return this.modes === null || !this.modes.has(token.slice(1));
    if (token.startsWith('warning:')) return true;
    if (token.startsWith('version:')) {
      const v = this.variables.version;
      return v !== undefined && v.startsWith(token.slice(8));
    }
    return this.modes !== null && this.modes.has(token);
  }

  /** CompareUtilities.matches: a template or, else, equality (`$version$` inside replaced). */
  private matches(actual: string, expected: string): boolean {
    if (!(expected.startsWith('$') && expected.endsWith('$'))) {
      const version = this.variables.version;
      const exp = version !== undefined ? expected.split('$version$').join(version) : expected;
      return actual === exp;
    }
    if (expected.startsWith('$choice:'))
      return javaSplit(expected.slice(8, -1), '|').includes(actual);
    if (expected.startsWith('$fragments:'))
      return containsAll(actual, javaSplit(expected.slice(11, -1), '|'));
    if (expected.startsWith('$external:')) {
      // Java: split on every ':', so only the text up to the next ':' (e.g. "http" of a URL) is
      // the fragment list when there is no externals file.
      const cmd = javaSplit(expected.slice(1, -1), ':');
      if (this.externals) return actual === this.externals[cmd[1]];
      if (cmd.length <= 2) return true;
      return containsAll(actual, javaSplit(cmd[2], '|'));
    }
    switch (expected) {
      case '$$':
        return true;
      case '$instant$':
        return INSTANT.test(actual);
      case '$date$':
        return DATE.test(actual);
      case '$uuid$':
        return URN_UUID.test(actual);
      case '$string$':
        return actual === javaTrim(actual);
      case '$id$':
        return ID.test(actual);
      case '$url$':
        return URL.test(actual);
      case '$token$':
        return TOKEN.test(actual);
      case '$semver$':
        return SEMVER.test(actual);
      case '$version$':
        return this.variables.version === undefined || actual === this.variables.version;
      default:
        // Java throws an Error here, which ends the test.
        throw new Error(`Unhandled template: ${expected}`);
    }
  }
}

function containsAll(actual: string, fragments: string[]): boolean {
  const lower = actual.toLowerCase();
  return fragments.every((f) => lower.includes(f.toLowerCase()));
}

function stringsOf(v: Json | undefined): string[] {
  if (Array.isArray(v)) return v.filter((s): s is string => typeof s === 'string');
  return typeof v === 'string' ? [v] : [];
}

/**
 * CompareUtilities.listOptionals: the names in `$optional-properties$`, plus the two markers
 * themselves. Java: `$count-arrays$` is excused only when `$optional-properties$` is present.
 */
function listOptionals(expected: JsonObject): string[] {
  if (!has(expected, '$optional-properties$')) return [];
  return [
    '$optional-properties$',
    '$count-arrays$',
    ...stringsOf(expected['$optional-properties$']),
  ];
}

function isOptionalName(n: string, optionals: string[]): boolean {
  return n === '$optional$' || optionals.includes('*') || optionals.includes(n);
}

/**
 * CompareUtilities.allOptional: an expected array may be absent when each object in it carries
 * `$optional$` — whatever its value (Java tests presence only here); other items do not count.
 */
function allOptional(value: Json): boolean {
  if (!Array.isArray(value)) return false;
  return value.every((e) => !isObject(e) || has(e, '$optional$'));
}

function optionalWarning(e: Json): string | null {
  if (!isObject(e)) return null;
  const o = e.$optional$;
  return typeof o === 'string' && o.startsWith('warning:') ? o.slice('warning:'.length) : null;
}

/** One comparison (a fresh Comparator): null, or the first difference. */
export function compareJson(
  id: string,
  expected: JsonObject,
  actual: JsonObject,
  options: CompareOptions = {},
): string | null {
  return new Comparator(options).compare(id, expected, actual);
}
