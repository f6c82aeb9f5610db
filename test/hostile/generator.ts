/**
 * Hostile inputs for the hostile-input suite: a seeded generator (the same seed, the same
 * requests, so every failure reproduces) and the catalogs of bad values it draws from.
 */

/** What a case demands beyond "no 5xx, no hang, nothing written when refused". */
export type Expect =
  /** Any answer below 500. */
  | 'no5xx'
  /** A 4xx: the input can never be right (invalid Unicode, malformed JSON, a bad credential…). */
  | 'refused';

/** One bad value, with a short label for failure messages. */
export interface Hostile {
  label: string;
  value: unknown;
  expect: Expect;
}

/** A seeded pseudo-random source (mulberry32). */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let x = this.state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** `k` distinct items in a seeded order (all of them when there are fewer). */
  sample<T>(items: readonly T[], k: number): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i -= 1) {
      const j = this.int(i + 1);
      [copy[i], copy[j]] = [copy[j], copy[i]];
    }
    return copy.slice(0, k);
  }

  /** Letters and digits, `length` of them. */
  word(length: number): string {
    const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
    let out = '';
    for (let i = 0; i < length; i += 1) out += alphabet[this.int(alphabet.length)];
    return out;
  }
}

/** The seed of the whole suite; `HOSTILE_SEED` replays another run. */
export const SEED = Number(process.env.HOSTILE_SEED ?? 20240611);

export const ONE_MB = 1024 * 1024;

const huge = new Map<number, string>();

/**
 * A 1 MB string of seeded words (not one repeated letter: no storage trick makes it cheap). Made
 * once: every case shares the one immutable string.
 */
export function hugeString(length = ONE_MB): string {
  let text = huge.get(length);
  if (text === undefined) {
    const rng = new Rng(SEED ^ length);
    const words: string[] = [];
    let size = 0;
    while (size < length) {
      const w = rng.word(3 + rng.int(8));
      words.push(w);
      size += w.length + 1;
    }
    text = words.join(' ').slice(0, length);
    huge.set(length, text);
  }
  return text;
}

/** `{"a": {"a": … "leaf" …}}`, `depth` objects deep. */
export function deepObject(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i += 1) value = { a: value };
  return value;
}

export function deepArray(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i += 1) value = [value];
  return value;
}

/** Invalid Unicode and NUL: no field of any resource can hold these (issue 9, part 2). */
export const BAD_UNICODE: Hostile[] = [
  { label: 'a lone high surrogate', value: 'a\ud800b', expect: 'refused' },
  { label: 'a lone low surrogate', value: '\udc00', expect: 'refused' },
  { label: 'a reversed surrogate pair', value: 'x\udc00\ud800', expect: 'refused' },
  { label: 'a NUL character', value: 'a\u0000b', expect: 'refused' },
];

/** C0/C1 control characters (not tab, newline or carriage return). */
export const CONTROL = ['a\u0001b', '\u001b[2J', 'a\u007fb', 'a\u0085b', 'a\u0008b'];

/** SQL metacharacters and classic injections. */
export const SQL = [
  "'",
  "''",
  '"',
  ';',
  '--',
  '%',
  '_',
  '\\',
  "'); DROP TABLE x;--",
  "x' OR '1'='1",
  '%_%\\',
  "\\'; SELECT pg_sleep(20);--",
  '$1',
  '/* */',
  "E'\\x41'",
  '*',
];

/** Strings that are odd but harmless: each may be accepted. */
export const ODD_TEXT = ['', '   ', '\u200b', '\ufeffbom', 'é'.repeat(300), '\ud83d\ude00 emoji'];

/** Anything but a string, for a field that takes a string. */
export const NOT_A_STRING: unknown[] = [
  0,
  -1,
  1.5,
  1e308,
  true,
  false,
  [],
  ['x'],
  {},
  { x: 'y' },
  null,
];
export const NOT_A_BOOLEAN: unknown[] = ['yes', 'x', 1, 0, [], {}, null, 'TRUE '];
export const NOT_A_NUMBER: unknown[] = [
  'abc',
  '1',
  true,
  [],
  {},
  null,
  1e308,
  -1,
  1.5,
  2 ** 53 + 2,
];
export const NOT_AN_OBJECT: unknown[] = ['str', 1, true, [], [1, 2], null];
export const NOT_A_LIST: unknown[] = ['str', 1, true, {}, null, [null], [1], [[]], [{}]];

// Shared, never mutated: building them once keeps case generation fast.
const DEEP_OBJECT = deepObject(40);
const DEEP_ARRAY = deepArray(3000);
const MANY_KEYS = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]));

/** Values of free JSON (extras, expansion parameters, reference bodies). */
export function hostileJson(rng: Rng): Hostile[] {
  return [
    { label: 'an object 40 levels deep', value: DEEP_OBJECT, expect: 'refused' },
    { label: 'an array 3000 levels deep', value: DEEP_ARRAY, expect: 'refused' },
    { label: 'a lone surrogate in a key', value: { 'k\ud800': 1 }, expect: 'refused' },
    { label: 'a lone surrogate in a value', value: { k: ['\udc00'] }, expect: 'refused' },
    { label: 'a NUL in a key', value: { 'k\u0000': 1 }, expect: 'refused' },
    { label: 'a control character in a key', value: { 'k\u0001': 'v' }, expect: 'no5xx' },
    { label: 'SQL in keys and values', value: { [rng.pick(SQL)]: rng.pick(SQL) }, expect: 'no5xx' },
    { label: 'an empty key', value: { '': 1 }, expect: 'no5xx' },
    {
      label: 'numbers JSON cannot round-trip',
      value: { big: 1e308, small: 5e-324, neg: -0 },
      expect: 'no5xx',
    },
    {
      label: '5000 keys',
      value: MANY_KEYS,
      expect: 'no5xx',
    },
  ];
}

/** Path segments: each replaces one id of a path (already URL-encoded, some deliberately not). */
export const PATH_IDS: Array<{ label: string; raw: string; expect: Expect }> = [
  ...SQL.map((s) => ({
    label: `SQL ${JSON.stringify(s)}`,
    raw: encodeURIComponent(s),
    expect: 'no5xx' as const,
  })),
  { label: 'a malformed % escape', raw: '%zz', expect: 'refused' },
  { label: 'a lone % sign', raw: 'a%', expect: 'refused' },
  { label: 'an encoded lone surrogate (invalid UTF-8)', raw: '%ED%A0%80', expect: 'refused' },
  { label: 'an overlong NUL (invalid UTF-8)', raw: '%C0%80', expect: 'refused' },
  { label: 'a 0xFF byte', raw: '%FF', expect: 'refused' },
  { label: 'an encoded NUL', raw: 'a%00b', expect: 'refused' },
  { label: 'an encoded control character', raw: 'a%01b', expect: 'refused' },
  { label: 'an encoded slash', raw: 'a%2Fb', expect: 'no5xx' },
  { label: 'dot dot', raw: '..', expect: 'no5xx' },
  { label: 'an encoded dot dot', raw: '%2E%2E', expect: 'no5xx' },
  { label: 'a 5000-character id', raw: 'x'.repeat(5000), expect: 'no5xx' },
  { label: 'a huge number', raw: '99999999999999999999999', expect: 'no5xx' },
  { label: 'minus one', raw: '-1', expect: 'no5xx' },
  { label: 'an exponent', raw: '1e99', expect: 'no5xx' },
  { label: 'a non-ASCII id', raw: encodeURIComponent('éü中'), expect: 'no5xx' },
];

/** Query values that are not even text (raw, already encoded). */
export const RAW_QUERY_VALUES: Array<{ label: string; raw: string; expect: Expect }> = [
  { label: 'an encoded lone surrogate (invalid UTF-8)', raw: '%ED%A0%80', expect: 'no5xx' },
  { label: 'a malformed % escape', raw: '%zz', expect: 'no5xx' },
  { label: 'an encoded NUL', raw: 'a%00', expect: 'refused' },
  { label: 'a control character', raw: 'a%1B', expect: 'no5xx' },
  { label: 'an 8 KB value', raw: 'q'.repeat(8000), expect: 'no5xx' },
];

export const BAD_LIMITS = [
  '-1',
  'abc',
  '1e99',
  '99999999999999999999999',
  '0x10',
  '1.5',
  ' 1',
  'NaN',
  'Infinity',
  '1000000000',
  '1000000001',
  '%00',
];
export const BAD_PAGES = ['0', '-1', '1e99', 'abc', '99999999999', '1000000000', '2.5', ''];
export const BAD_DATES = [
  '2024-13-45',
  "'; DROP TABLE x;--",
  '9999999-01-01',
  '0000-00-00',
  '2024-01-01T25:61:00Z',
  '275760-09-14',
  '2024-02-30T00:00:00+99:99',
  '1e99',
];

/** `Authorization` header values a server must refuse (all ASCII: Node refuses the others). */
export function badAuthorizations(
  rng: Rng,
  username: string,
): Array<{ label: string; value: string }> {
  const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
  return [
    { label: 'Basic with bad base64', value: 'Basic !!!not*base64!!!' },
    { label: 'Basic with nothing', value: 'Basic ' },
    { label: 'Basic without a colon', value: `Basic ${b64('nocolon')}` },
    { label: 'Basic with an empty user and password', value: `Basic ${b64(':')}` },
    { label: 'Basic with a wrong password', value: `Basic ${b64(`${username}:wrong-password`)}` },
    { label: 'Basic with a lone surrogate', value: `Basic ${b64('a\ud800:b')}` },
    {
      label: 'Basic with a 4 KB password',
      value: `Basic ${b64(`${username}:${'p'.repeat(3000)}`)}`,
    },
    { label: 'Basic with SQL', value: `Basic ${b64("' OR 1=1;--:x")}` },
    { label: 'an empty Token', value: 'Token ' },
    { label: 'a bare Token', value: 'Token' },
    { label: 'an empty Bearer', value: 'Bearer ' },
    { label: 'a Token with spaces', value: 'Token a b c' },
    { label: 'a Token with SQL', value: "Token ' OR '1'='1" },
    { label: 'a random Token', value: `Token ${rng.word(40)}` },
    { label: 'an unknown scheme', value: `Digest username="${username}"` },
    { label: 'no scheme', value: rng.word(40) },
    { label: 'a 12 KB Token', value: `Token ${'t'.repeat(12_000)}` },
    { label: 'a 40 KB header', value: `Token ${'t'.repeat(40_000)}` },
  ];
}

/** Bodies that are not JSON, or not well-formed JSON (raw bytes with a content type). */
export const BAD_BODIES: Array<{
  label: string;
  contentType: string;
  data: string | Buffer;
  /** Valid JSON in another Unicode encoding is JSON still (RFC 8259 §8.1 allows reading it). */
  expect?: Expect;
}> = [
  { label: 'text/plain', contentType: 'text/plain', data: '{"name": "x"}' },
  { label: 'form-encoded', contentType: 'application/x-www-form-urlencoded', data: 'name=x&id=y' },
  {
    label: 'multipart',
    contentType: 'multipart/form-data; boundary=XyZ',
    data: '--XyZ\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--XyZ--\r\n',
  },
  { label: 'XML', contentType: 'application/xml', data: '<name>x</name>' },
  { label: 'no content type', contentType: '', data: '{"name": "x"}' },
  { label: 'a non-UTF-8 charset', contentType: 'application/json; charset=latin9', data: '{}' },
  { label: 'an unknown charset', contentType: 'application/json; charset=klingon', data: '{}' },
  { label: 'truncated JSON', contentType: 'application/json', data: '{"name": "x"' },
  { label: 'a trailing comma', contentType: 'application/json', data: '{"name": "x",}' },
  { label: 'single quotes', contentType: 'application/json', data: "{'name': 'x'}" },
  { label: 'garbage after JSON', contentType: 'application/json', data: '{"name": "x"} trailing' },
  { label: 'a bare word', contentType: 'application/json', data: 'undefined' },
  { label: 'a NaN literal', contentType: 'application/json', data: '{"n": NaN}' },
  { label: 'a raw NUL byte', contentType: 'application/json', data: '{"name": "a\u0000b"}' },
  { label: 'a bad escape', contentType: 'application/json', data: '{"name": "\\x41"}' },
  {
    label: 'an unescaped lone surrogate escape',
    contentType: 'application/json',
    data: '{"name": "\\ud800"}',
  },
  {
    label: 'invalid UTF-8 bytes',
    contentType: 'application/json',
    data: Buffer.concat([
      Buffer.from('{"name": "a'),
      Buffer.from([0xed, 0xa0, 0x80, 0xff]),
      Buffer.from('b"}'),
    ]),
  },
  { label: '100000 open brackets', contentType: 'application/json', data: '['.repeat(100_000) },
  {
    label: '20000 nested arrays',
    contentType: 'application/json',
    data: '['.repeat(20_000) + ']'.repeat(20_000),
  },
  {
    label: 'a UTF-16 body',
    contentType: 'application/json; charset=utf-16',
    data: Buffer.from('{"a":1}', 'utf16le'),
    expect: 'no5xx',
  },
];

/** A short, copyable rendering of a value: JSON with every non-ASCII character escaped. */
export function show(value: unknown, max = 160): string {
  let text: string;
  if (value === undefined) return 'undefined';
  if (Buffer.isBuffer(value)) text = `<bytes ${value.toString('hex').slice(0, max)}>`;
  else {
    try {
      text = JSON.stringify(value) ?? typeof value;
    } catch {
      text = `<${typeof value}>`;
    }
  }

  text = text.replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return text.length > max ? `${text.slice(0, max)}…(${text.length} chars)` : text;
}
