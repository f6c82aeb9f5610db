import type { NextFunction, Request, Response } from 'express';
import { TextDecoder } from 'node:util';
import { findInputProblem, inputProblemMessage, type InputProblem } from '../../src/text';
import { errorBody } from './errors';

/** Headers read as text; credentials are answered 401 when bad, Host and X-Request-Id by pattern. */
const TEXT_HEADERS = ['includeFacets', 'compress'];
/** Its body and query string are GraphQL's: that edge checks them and answers in its shape. */
const GRAPHQL_PATH = '/graphql';

/**
 * Refuses input no service should see, before any does (the character rule is src/text.ts, the
 * one every edge applies): a refused character (NUL, a lone surrogate, a control character) in a
 * path segment, a query parameter, a header read as text, or any string or object key of the
 * body; a query string that is not UTF-8; JSON nested deeper than 32 levels. A 400 naming the
 * field, its `errors` keyed by the field's path as sent (`names[0].name`).
 */
export function guardInput(req: Request, res: Response, next: NextFunction): void {
  const refused = refusedInput(req);
  if (refused) {
    res.status(400).json(errorBody(400, refused.message, { [refused.field]: [refused.message] }));
    return;
  }
  next();
}

type Refusal = { field: string; message: string };

function problem(
  field: string,
  found: InputProblem | undefined,
  what: string,
): Refusal | undefined {
  return found
    ? { field: found.field || field, message: inputProblemMessage(found, what) }
    : undefined;
}

function refusedInput(req: Request): Refusal | undefined {
  for (const header of TEXT_HEADERS) {
    const found = problem(header, findInputProblem(req.get(header), header), header);
    if (found) return found;
  }
  if (!plainUrl(req.originalUrl)) {
    const inUrl = refusedInUrl(req);
    if (inUrl) return inUrl;
  }
  if (req.path === GRAPHQL_PATH) return undefined;
  return problem('__all__', findInputProblem(req.body), 'the request body');
}

/**
 * A URL of printable ASCII whose escapes all stand for printable ASCII: nothing in its path or
 * query can hold a refused character or bytes that are not UTF-8, so most requests skip the
 * decoding and parsing of `refusedInUrl`.
 */
function plainUrl(url: string): boolean {
  return /^(?:[\x21-\x24\x26-\x7e]|%(?:[2-6][0-9a-fA-F]|7[0-9a-eA-E]))*$/.test(url);
}

/** A refused character in a path segment or a query parameter, or a query string not UTF-8. */
function refusedInUrl(req: Request): Refusal | undefined {
  let path: Refusal | undefined;
  for (const segment of req.path.split('/')) {
    try {
      path ??= problem('path', findInputProblem(decodeURIComponent(segment)), 'the path');
    } catch {
      // a malformed escape is answered by the router
    }
  }
  if (path) return path;
  const notUtf8 = queryNotUtf8(req.originalUrl);
  if (notUtf8 !== undefined) {
    const message = notUtf8
      ? `'${notUtf8}' is not valid UTF-8.`
      : 'The query string is not valid UTF-8.';
    return { field: notUtf8 || '__all__', message };
  }
  if (req.path === GRAPHQL_PATH) return undefined;
  for (const [key, value] of Object.entries(req.query as Record<string, unknown>)) {
    const found =
      problem('__all__', findInputProblem(key), 'a query parameter name') ??
      (Array.isArray(value) ? value : [value])
        .map((v) => problem(key, findInputProblem(v, key), key))
        .find(Boolean);
    if (found) return found;
  }
  return undefined;
}

/**
 * The parameter whose percent-escapes are not UTF-8 ('' when its name is the one), or undefined
 * when the whole query string is (Express would decode the bytes into U+FFFD).
 */
function queryNotUtf8(url: string): string | undefined {
  const query = url.indexOf('?') >= 0 ? url.slice(url.indexOf('?') + 1) : '';
  const decode = (text: string): string | undefined => {
    try {
      // A stray '%' is a literal as Express reads it, not an escape.
      return decodeURIComponent(text.replace(/\+/g, ' ').replace(/%(?![0-9a-f]{2})/gi, '%25'));
    } catch {
      return undefined;
    }
  };
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    const key = decode(eq >= 0 ? pair.slice(0, eq) : pair);
    if (key === undefined) return '';
    if (eq >= 0 && decode(pair.slice(eq + 1)) === undefined) return key;
  }
  return undefined;
}

/**
 * `verify` of the JSON body parser: a body whose bytes are not text in its charset is refused
 * (decoding would put U+FFFD in their place, and store that instead of what was sent).
 */
export function verifyEncoding(_req: unknown, _res: unknown, body: Buffer, encoding: string): void {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(encoding, { fatal: true });
  } catch {
    return; // a charset the parser does not take: it answers 415 itself
  }
  try {
    decoder.decode(body);
  } catch {
    throw Object.assign(new Error(`The request body is not valid ${encoding.toUpperCase()}.`), {
      status: 400,
      type: 'entity.verify.failed',
    });
  }
}
