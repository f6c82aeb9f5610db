/**
 * The one rule for text every edge accepts (REST, GraphQL, FHIR), applied to every string and
 * object key of a request before any service sees it, so that what is stored is what was sent
 * and what the answer echoes:
 *
 * - a lone UTF-16 surrogate is not Unicode: `jsonb` refuses it (a 500 once) and text columns
 *   silently store U+FFFD in its place;
 * - NUL cannot be stored in Postgres text at all;
 * - the other C0 controls (TAB, LF and CR are text), DEL and the C1 controls (U+0080–U+009F)
 *   mean nothing in terminology content, are invisible in every client and cannot appear in
 *   XML 1.0 (FHIR); where they occur they are an encoding mistake to fix at the source.
 *
 * The regular expression runs on UTF-16 code units (no `u` flag) so that it sees surrogates.
 */
const REFUSED =
  // eslint-disable-next-line no-control-regex -- finding control characters is its purpose
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** JSON deeper than this is refused (walking it costs stack in every layer below). */
export const MAX_INPUT_DEPTH = 32;

/** The first refused character of `text` (its UTF-16 code unit), or undefined when it is clean. */
export function refusedCharacter(text: string): number | undefined {
  const found = REFUSED.exec(text);
  return found ? found[0].charCodeAt(0) : undefined;
}

/** `U+D800` */
function codePointLabel(codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** What is wrong with one part of a request; `field` is its path as the client wrote it. */
export type InputProblem =
  | { kind: 'character'; field: string; codePoint: number; inKey: boolean }
  | { kind: 'depth'; field: string };

/**
 * The first string or object key under `value` holding a refused character, or the first place
 * nested deeper than `maxDepth`. Fields are named from `field` on: `names[0].name`, `extras.k`.
 */
export function findInputProblem(
  value: unknown,
  field = '',
  maxDepth = MAX_INPUT_DEPTH,
): InputProblem | undefined {
  return walk(value, field, 0, maxDepth);
}

function walk(
  value: unknown,
  field: string,
  depth: number,
  maxDepth: number,
): InputProblem | undefined {
  if (typeof value === 'string') {
    const codePoint = refusedCharacter(value);
    return codePoint === undefined
      ? undefined
      : { kind: 'character', field, codePoint, inKey: false };
  }
  if (value === null || typeof value !== 'object') return undefined;
  if (depth >= maxDepth) return { kind: 'depth', field };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const problem = walk(value[i], `${field}[${i}]`, depth + 1, maxDepth);
      if (problem) return problem;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const codePoint = refusedCharacter(key);
    if (codePoint !== undefined) return { kind: 'character', field, codePoint, inKey: true };
    const problem = walk(item, field ? `${field}.${key}` : key, depth + 1, maxDepth);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * The message of a problem: `'names[0].name' contains an invalid character (U+D800).`; a field
 * named '' is the whole of `what` (e.g. "the request body").
 */
export function inputProblemMessage(problem: InputProblem, what = 'the input'): string {
  const name = problem.field ? `'${problem.field}'` : what;
  const subject = name.charAt(0).toUpperCase() + name.slice(1);
  if (problem.kind === 'depth')
    return `${subject} is nested deeper than ${MAX_INPUT_DEPTH} levels.`;
  const character = `an invalid character (${codePointLabel(problem.codePoint)})`;
  return problem.inKey
    ? `${subject} holds a key that contains ${character}.`
    : `${subject} contains ${character}.`;
}

/** Longest part of a quoted value an error message repeats back. */
const MAX_ECHOED_CHARS = 100;
/** Longest error message sent, whatever it quotes. */
const MAX_MESSAGE_CHARS = 1000;

/**
 * An error message with every quoted value ("…", as GraphQL and JSON quote them) cut to
 * `MAX_ECHOED_CHARS` characters, and the whole to `MAX_MESSAGE_CHARS`: a request's megabyte
 * argument is not sent back in its error.
 */
export function capEchoes(message: string): string {
  if (message.length <= MAX_ECHOED_CHARS) return message;
  let capped = '';
  let from = 0;
  while (from < message.length && capped.length <= MAX_MESSAGE_CHARS) {
    const open = message.indexOf('"', from);
    let close = open + 1;
    while (open >= 0 && close < message.length && message[close] !== '"') {
      close += message[close] === '\\' ? 2 : 1;
    }
    if (open < 0 || close >= message.length) {
      capped += message.slice(from);
      break;
    }
    const inner = message.slice(open + 1, close);
    const shown = inner.length > MAX_ECHOED_CHARS ? `${cut(inner, MAX_ECHOED_CHARS)}…` : inner;
    capped += `${message.slice(from, open)}"${shown}"`;
    from = close + 1;
  }
  return capped.length > MAX_MESSAGE_CHARS ? `${cut(capped, MAX_MESSAGE_CHARS)}…` : capped;
}

/** The first `n` UTF-16 units, never ending inside a surrogate pair or an escape. */
function cut(text: string, n: number): string {
  let end = n;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  const head = text.slice(0, end);
  // A trailing lone backslash would escape the closing quote.
  return /(^|[^\\])(\\\\)*\\$/.test(head) ? head.slice(0, -1) : head;
}
