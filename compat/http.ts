import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { match } from 'path-to-regexp';
import { STATUS_CODES } from 'node:http';
import type { Writable } from 'node:stream';
import { TextDecoder } from 'node:util';
import {
  AppError,
  fromDatabaseError,
  isAppError,
  type ErrorCode,
  type FieldErrors,
} from '../src/errors';
import { baseUrlOf, requestContext } from '../src/context';
import { capEchoes, findInputProblem, inputProblemMessage, type InputProblem } from '../src/text';
import type { Logger } from '../src/logger';
import {
  DEFAULT_LIMIT,
  type ExtrasFilter,
  type ListParams,
  type Page,
  type ServiceContext,
  zipText,
} from '../src/services';

/** The API generation and revision (spec core §9.1), also sent as `X-OCL-API-VERSION`. */
export const API_VERSION = '2.0.0';

/** What a REST handler returns; only `route` writes HTTP (design §7.1). */
export type Reply =
  | { kind: 'json'; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'empty'; status: number }
  | { kind: 'redirect'; location: string }
  | { kind: 'list'; page: Page<unknown>; render: (item: never) => unknown; facetsOnly: boolean }
  /** A body written piece by piece (a file, a whole repository); none for HEAD requests. */
  | {
      kind: 'stream';
      status: number;
      type: string;
      headers?: Record<string, string>;
      body?: (out: Writable) => Promise<void>;
    };

export const ok = (body: unknown): Reply => ({ kind: 'json', status: 200, body });
export const created = (body: unknown, location: string): Reply => ({
  kind: 'json',
  status: 201,
  body,
  headers: { Location: location },
});
export const noContent = (): Reply => ({ kind: 'empty', status: 204 });
export const redirect = (location: string): Reply => ({ kind: 'redirect', location });
export function list<T>(page: Page<T>, render: (item: T) => unknown, req: Request): Reply {
  return { kind: 'list', page, render: render, facetsOnly: flag(req.query.facetsOnly) };
}

export type Handler = (req: Request, ctx: ServiceContext) => Promise<Reply>;

/** Adapts a handler: the request's context in, the reply written out, errors to the error handler. */
export function route(handler: Handler): RequestHandler {
  return async (req, res) => {
    const reply = await handler(req, requestContext(res));
    await write(req, res, reply);
  };
}

const STATUS: Record<ErrorCode, number> = {
  NOT_FOUND: 404,
  INVALID: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  CONFLICT: 409,
  UNCHANGED: 208,
  NOT_ALLOWED: 405,
  GONE: 410,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
};

async function write(req: Request, res: Response, reply: Reply): Promise<void> {
  switch (reply.kind) {
    case 'empty':
      res.status(reply.status).end();
      return;
    case 'redirect':
      res.redirect(302, reply.location);
      return;
    case 'json':
      for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
      await sendJson(req, res, reply.status, reply.body);
      return;
    case 'list':
      setPagingHeaders(req, res, reply.page);
      await sendJson(req, res, 200, listBody(req, reply));
      return;
    case 'stream':
      for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
      res.status(reply.status).type(reply.type);
      if (req.method === 'HEAD' || !reply.body) {
        res.end();
        return;
      }
      await reply.body(res);
      res.end();
      return;
  }
}

function listBody(req: Request, reply: Extract<Reply, { kind: 'list' }>): unknown {
  const { page } = reply;
  if (reply.facetsOnly) return { facets: { fields: page.facets ?? {} } };
  const results = page.items.map((item) => reply.render(item as never));
  if (!page.facets || !flag(req.get('includeFacets'))) return results;
  return { facets: { fields: page.facets }, results };
}

/** spec core §2.1 paging headers; `next`/`previous` are absolute URLs. */
function setPagingHeaders(req: Request, res: Response, page: Page<unknown>): void {
  const { total, limit, offset } = page;
  const pageNumber = limit > 0 ? Math.floor(offset / limit) + 1 : 1;
  const pages = limit > 0 ? Math.ceil(total / limit) : total > 0 ? 1 : 0;
  res.setHeader('num_found', String(total));
  res.setHeader('num_returned', String(page.items.length));
  res.setHeader('offset', String(offset));
  res.setHeader('pages', String(pages));
  res.setHeader('page_number', String(pageNumber));
  const link = (n: number): string => {
    const url = new URL(req.originalUrl, baseUrlOf(req));
    url.searchParams.set('page', String(n));
    return url.toString();
  };
  if (limit > 0 && offset + limit < total) res.setHeader('next', link(pageNumber + 1));
  if (limit > 0 && pageNumber > 1) res.setHeader('previous', link(pageNumber - 1));
}

/** JSON, or with the `compress: true` request header the JSON zipped (spec core §2.1). */
async function sendJson(req: Request, res: Response, status: number, body: unknown): Promise<void> {
  if (!flag(req.get('compress'))) {
    res.status(status).json(body);
    return;
  }
  const zipped = await zipText(JSON.stringify(body));
  res
    .status(status)
    .type('application/zip')
    .setHeader('Content-Disposition', 'attachment; filename="export.zip"');
  res.end(zipped);
}

/** `true`/`1`/`yes`, case-insensitive. */
export function flag(value: unknown): boolean {
  return typeof value === 'string' && ['true', '1', 'yes'].includes(value.trim().toLowerCase());
}

/** OCL's `includeSourceVersions` / `includeCollectionVersions` of a version list. */
export function holdersAsked(req: Request): boolean {
  return flag(req.query.includeSourceVersions) || flag(req.query.includeCollectionVersions);
}

/** One query parameter as a string (the first when repeated). */
export function queryString(req: Request, name: string): string | undefined {
  const value = req.query[name];
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/**
 * The list parameters of spec core §2.1: `limit` (default 10, 0 = all), `page`, `q`,
 * `sortAsc`/`sortDesc`, `updatedSince`, the named filters (comma = OR) and the
 * `includeFacets` header. A malformed value is a 400.
 */
export function listParams(req: Request, filterNames: string[] = []): ListParams {
  const limit = wholeNumber(req, 'limit', DEFAULT_LIMIT, 0);
  const page = wholeNumber(req, 'page', 1, 1);
  const sortAsc = queryString(req, 'sortAsc');
  const sortDesc = queryString(req, 'sortDesc');
  if (sortAsc && sortDesc)
    throw AppError.field('sortAsc', 'Send either sortAsc or sortDesc, not both.');
  const filters: Record<string, string[]> = {};
  for (const name of filterNames) {
    const raw = queryString(req, name);
    const values = raw
      ?.split(',')
      .map((v) => v.trim())
      .filter((v) => v.length > 0);
    if (values && values.length > 0) filters[name] = values;
  }
  const q = queryString(req, 'q')?.trim();
  const updatedSince = queryString(req, 'updatedSince');
  // spec operations §4.10: `offset` counts items (synchronization pages); else `page` does.
  const offset = queryString(req, 'offset')
    ? wholeNumber(req, 'offset', 0, 0)
    : limit > 0
      ? (page - 1) * limit
      : 0;
  return {
    q: q ? q : undefined,
    sortField: sortDesc ?? sortAsc,
    sortDesc: sortDesc !== undefined,
    limit,
    offset,
    filters,
    updatedSince: updatedSince ? parseTimestamp(updatedSince, 'updatedSince') : undefined,
    includeFacets: flag(req.get('includeFacets')) || flag(req.query.facetsOnly),
    extras: extrasFilter(req),
    allVersions: flag(req.query.allVersions),
    verbose: flag(req.query.verbose),
  };
}

/**
 * `extras.<name>=v` filters (spec operations §4.9): space = OR, repeated = AND, `*` wildcards,
 * leading `!` negates, `extras.exists=a,b`; and the older `extras__a__b=v1,v2` (`!=` negates).
 * A dot or `__` in a name reaches into nested attributes.
 */
function extrasFilter(req: Request): ExtrasFilter | undefined {
  const filter: ExtrasFilter = { conditions: [], exists: [] };
  for (const [key, raw] of Object.entries(req.query as Record<string, unknown>)) {
    const values = (Array.isArray(raw) ? raw : [raw]).filter(
      (v): v is string => typeof v === 'string',
    );
    if (key === 'extras.exists') {
      for (const names of values) {
        for (const name of names
          .split(',')
          .map((n) => n.trim())
          .filter(Boolean)) {
          filter.exists.push(name.split('.'));
        }
      }
    } else if (key.startsWith('extras.') && key.length > 'extras.'.length) {
      const path = key.slice('extras.'.length).split('.');
      for (const value of values) {
        const negate = value.startsWith('!');
        const alternatives = (negate ? value.slice(1) : value).split(' ').filter(Boolean);
        if (alternatives.length > 0) filter.conditions.push({ path, values: alternatives, negate });
      }
    } else if (key.startsWith('extras__') && key.length > 'extras__'.length) {
      const negate = key.endsWith('!');
      const path = key.slice('extras__'.length).replace(/!$/, '').split('__');
      for (const value of values) {
        const alternatives = value
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean);
        if (alternatives.length > 0) filter.conditions.push({ path, values: alternatives, negate });
      }
    }
  }
  return filter.conditions.length || filter.exists.length ? filter : undefined;
}

function wholeNumber(req: Request, name: string, fallback: number, min: number): number {
  const raw = queryString(req, name);
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > 1_000_000_000) {
    throw AppError.field(name, `'${name}' must be a whole number of at least ${min}.`);
  }
  return Number(raw);
}

/**
 * ISO 8601, `YYYY-MM-DD HH:MM:SS` as OCL documents it, or the `YYYY-MM-DD_HHMMSS` of export file
 * names (spec operations §4.10 step 3); a zone-less time is UTC.
 */
export function parseTimestamp(raw: string, field: string): Date {
  const stamp = /^(\d{4}-\d{2}-\d{2})_(\d{2})(\d{2})(\d{2})$/.exec(raw.trim());
  const text = stamp
    ? `${stamp[1]}T${stamp[2]}:${stamp[3]}:${stamp[4]}`
    : raw.trim().replace(' ', 'T');
  const withZone = /([zZ]|[+-]\d\d:?\d\d)$/.test(text) || !text.includes('T') ? text : `${text}Z`;
  const date = /^\d{4}-\d{2}-\d{2}/.test(text) ? new Date(withZone) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) {
    throw AppError.field(field, `'${raw}' is not a date; use ISO 8601, e.g. 2024-01-31T12:00:00Z.`);
  }
  return date;
}

/** The REST error body of spec core §7: `{code, message, errors?}`, field names as sent. */
export function errorBody(status: number, message: string, fieldErrors?: FieldErrors): object {
  const body: { code: string; message: string; errors?: FieldErrors } = {
    code: STATUS_CODES[status] ?? 'Error',
    message,
  };
  if (fieldErrors) body.errors = fieldErrors;
  return body;
}

/**
 * Field errors under the names the client used: a query parameter as sent (`updatedSince`),
 * a body field in its REST spelling (`preferred_locale`), not the service's camelCase.
 */
function restFieldNames(
  req: Request,
  fieldErrors: FieldErrors | undefined,
): FieldErrors | undefined {
  if (!fieldErrors) return undefined;
  const query = req.query as Record<string, unknown>;
  const rename = (field: string): string => (field in query ? field : snakeCase(field));
  return Object.fromEntries(Object.entries(fieldErrors).map(([k, v]) => [rename(k), v]));
}

export function statusOf(error: AppError): number {
  return STATUS[error.code];
}

/**
 * The one error handler of the REST edge: typed errors to their status, body-parser failures to
 * 400/413, anything else is a bug: logged, answered 500 without internals.
 */
export function errorHandler(
  error: unknown,
  req: Request,
  res: Response,
  next: NextFunction,
): void {
  if (res.headersSent) {
    next(error);
    return;
  }
  const typed = isAppError(error) ? error : fromDatabaseError(error);
  if (typed) {
    const status = statusOf(typed);
    if (typed.retryAfterSeconds !== undefined) {
      res.setHeader('Retry-After', String(typed.retryAfterSeconds));
    }
    res
      .status(status)
      .json(errorBody(status, capEchoes(typed.message), restFieldNames(req, typed.fieldErrors)));
    return;
  }
  const httpError = error as { status?: number; type?: string; message?: string };
  if (typeof httpError.status === 'number' && httpError.status >= 400 && httpError.status < 500) {
    const message =
      httpError.type === 'entity.parse.failed'
        ? 'Malformed JSON in the request body.'
        : httpError.type === 'entity.too.large'
          ? 'The request body is too large.'
          : (httpError.message ?? 'Bad request.');
    res.status(httpError.status).json(errorBody(httpError.status, message));
    return;
  }
  (req as Request & { log?: Logger }).log?.error({ err: error }, 'unhandled error');
  res.status(500).json(errorBody(500, 'Internal server error.'));
}

/** JSON is the only request body format (spec core §1.6). */
export function requireJsonBody(req: Request, res: Response, next: NextFunction): void {
  const hasBody =
    Number(req.get('content-length') ?? 0) > 0 || req.get('transfer-encoding') !== undefined;
  if (hasBody && !req.is(['application/json', 'application/*+json'])) {
    res
      .status(415)
      .json(errorBody(415, 'Request bodies must be JSON (Content-Type: application/json).'));
    return;
  }
  next();
}

/**
 * JSON is what the REST edge answers (exports and `Compress: true` reads: zips), so a request
 * asking only for another format (`Accept: application/xml`, `text/csv`; `?format=xml` on a read)
 * gets 406 rather than JSON it did not ask for (spec core §1.6). Mounted on the REST router only.
 */
export function requireJsonAnswer(req: Request, res: Response, next: NextFunction): void {
  const format =
    req.method === 'GET' || req.method === 'HEAD' ? queryString(req, 'format') : undefined;
  const unsupported =
    format !== undefined && format.toLowerCase() !== 'json'
      ? `The format '${format}' is not supported; this API answers JSON.`
      : req.accepts(['application/json', 'application/zip']) === false
        ? `None of the accepted formats '${req.get('accept')}' can be produced; this API answers JSON.`
        : null;
  if (unsupported) {
    res.status(406).json(errorBody(406, unsupported));
    return;
  }
  next();
}

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

function refusedInput(req: Request): { field: string; message: string } | undefined {
  const problem = (field: string, found: InputProblem | undefined, what: string) =>
    found ? { field: found.field || field, message: inputProblemMessage(found, what) } : undefined;
  let path: { field: string; message: string } | undefined;
  for (const segment of req.path.split('/')) {
    try {
      path ??= problem('path', findInputProblem(decodeURIComponent(segment)), 'the path');
    } catch {
      // a malformed escape is answered by the router
    }
  }
  if (path) return path;
  for (const header of TEXT_HEADERS) {
    const found = problem(header, findInputProblem(req.get(header), header), header);
    if (found) return found;
  }
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
  return problem('__all__', findInputProblem(req.body), 'the request body');
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

/** A REST body as service input: a JSON object with its top-level snake_case keys in camelCase. */
export function bodyOf(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw AppError.invalid('The request body must be a JSON object.');
  }
  return Object.fromEntries(Object.entries(body).map(([k, v]) => [camelCase(k), v]));
}

/** A query string as service input, its keys in camelCase like a body's. */
export function queryOf(req: Request): Record<string, unknown> {
  return Object.fromEntries(Object.entries(req.query).map(([k, v]) => [camelCase(k), v]));
}

function camelCase(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** A path parameter as one string. */
export function param(req: Request, name: string): string {
  const value: unknown = req.params[name];
  return Array.isArray(value) ? value.join('/') : String(value);
}

/** 405 for a static path that a parameter route would otherwise take (e.g. `/users/login/`). */
export function onlyMethods(...allowed: string[]): RequestHandler {
  const list = [...allowed, ...(allowed.includes('GET') ? ['HEAD'] : [])].sort().join(', ');
  return (req, res) => {
    res.setHeader('Allow', list);
    res
      .status(405)
      .json(errorBody(405, `${req.method} is not allowed on ${req.path}; allowed: ${list}.`));
  };
}

interface RouteEntry {
  matches: (path: string) => boolean;
  methods: string[];
}

/**
 * 405 with an `Allow` header for a path some route serves, asked with a method none of them
 * serves (spec core §7: 404 is only for what does not exist). Mount after the routers.
 */
export function methodNotAllowed(routers: Router[]): RequestHandler {
  let table: RouteEntry[] | undefined;
  return (req, res, next) => {
    table ??= routers.flatMap((router) => routesOf(router as unknown as { stack?: LayerLike[] }));
    const allowed = new Set<string>();
    for (const route of table) {
      if (route.matches(req.path)) route.methods.forEach((m) => allowed.add(m));
    }
    if (allowed.size === 0) {
      next();
      return;
    }
    if (allowed.has('GET')) allowed.add('HEAD');
    const list = [...allowed].sort().join(', ');
    res.setHeader('Allow', list);
    res
      .status(405)
      .json(errorBody(405, `${req.method} is not allowed on ${req.path}; allowed: ${list}.`));
  };
}

interface LayerLike {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: LayerLike[] };
}

function routesOf(router: { stack?: LayerLike[] }): RouteEntry[] {
  return (router.stack ?? []).flatMap((layer): RouteEntry[] => {
    if (layer.route) {
      const test = match(layer.route.path, { decode: false, end: true, sensitive: false });
      const methods = Object.keys(layer.route.methods)
        .filter((m) => m !== '_all')
        .map((m) => m.toUpperCase());
      return [{ matches: (path) => test(path) !== false, methods }];
    }
    return layer.handle?.stack ? routesOf(layer.handle) : [];
  });
}
