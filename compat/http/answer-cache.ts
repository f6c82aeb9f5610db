import type { Request, RequestHandler, Response } from 'express';
import fresh from 'fresh';
import { LRUCache } from 'lru-cache';
import onHeaders from 'on-headers';
import { peekContext } from '../../src/context';
import type { Notifications } from '../../src/db/notifications';
import { answerCacheLookups, routeOf } from '../../src/metrics';

/**
 * Where the database announces that content changed (statement triggers of migration
 * `ContentNotifications1765500000000` on every table an answer may be read from).
 */
export const CONTENT_CHANNEL = 'registry_content';

/** A GET answer as its route wrote it, and the content generation it was read in. */
interface Answer {
  generation: number;
  status: number;
  /** The headers the route set (not those the middleware before it set for this request). */
  headers: Array<[string, string | number | readonly string[]]>;
  body: Buffer;
  /** The route template, for the metrics. */
  route: string;
}

/** The kept answers always have room for this many of the largest kept. */
const ENTRIES_AT_LEAST = 32;

/** Headers that belong to one answer's connection, never kept. */
const NOT_KEPT = new Set([
  'content-length',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
]);

/**
 * Answers of GET routes that read stored content (those that `cacheable` marks), kept as the bytes
 * the route wrote, so that asking again costs no statement and no rendering, and an
 * `If-None-Match` of the answer's `ETag` is a 304 at once. An answer is kept per caller (the
 * actor), base URL, `Accept`, `Accept-Language`, `compress` and URL, so it is only ever served to
 * the caller it was rendered for, and only while no content has changed since it was read:
 * - a change committed by any process (or tool) is announced on `CONTENT_CHANNEL` at commit, and
 *   moves the generation on, so that every answer read before is not served again;
 * - this process's own writes move it on before their answer is sent (read your writes);
 * - while the listening connection is down nothing is served from here, and everything is dropped
 *   when it is back.
 * A change by another process is seen here as PostgreSQL delivers its notification
 * (milliseconds). `Cache-Control: no-cache` on a request asks the route again.
 */
export class AnswerCache {
  private readonly answers: LRUCache<string, Answer> | null;
  private generation = 0;

  constructor(
    private readonly notifications: Notifications,
    maxBytes: number,
  ) {
    this.answers =
      maxBytes > 0
        ? new LRUCache({
            maxSize: maxBytes,
            // A large answer (a whole repository with its concepts) is not kept: one would push
            // out thousands of detail reads.
            maxEntrySize: Math.max(64 * 1024, Math.floor(maxBytes / ENTRIES_AT_LEAST)),
            sizeCalculation: (answer, key) => answer.body.length + key.length + 200,
          })
        : null;
    notifications.on(CONTENT_CHANNEL, () => this.changed());
    notifications.onGap(() => {
      this.changed();
      this.answers?.clear();
    });
  }

  /** Mount after the request's context (the caller) is attached, before the routes. */
  readonly middleware: RequestHandler = (req, res, next) => {
    if (!this.answers) return next();
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      if (mayWrite(req)) onHeaders(res, () => this.changed());
      return next();
    }
    const key = keyOf(req, res);
    if (key === undefined) return next();
    const kept = this.notifications.live ? this.answers.get(key) : undefined;
    if (kept && kept.generation === this.generation && !noCache(req)) {
      answerCacheLookups.inc({ result: 'hit' });
      serve(req, res, kept);
      return;
    }
    if (kept) this.answers.delete(key);
    answerCacheLookups.inc({ result: 'miss' });
    this.keep(key, req, res);
    next();
  };

  /** Content changed: nothing read before is served again. */
  private changed(): void {
    this.generation += 1;
  }

  /**
   * Keeps the answer `res` is about to end with, when its route marked it and it is whole. A
   * conditional GET is rendered whole (so that there is something to keep) and answered 304 here
   * when its validators still hold, as Express would have.
   */
  private keep(key: string, req: Request, res: Response): void {
    const generation = this.generation;
    const conditions = takeConditions(req);
    const before = new Map(Object.entries(res.getHeaders()));
    let written = false;
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    res.write = ((...args: unknown[]) => {
      written = true; // streamed: not kept
      return write(...args);
    }) as Response['write'];
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    const keep = (chunk: unknown): void => {
      if (written || !isCacheable(res) || res.statusCode !== 200 || !this.notifications.live)
        return;
      if (generation !== this.generation || res.getHeader('set-cookie') !== undefined) return;
      const body = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      if (!Buffer.isBuffer(body)) return;
      const headers: Answer['headers'] = [];
      for (const [name, value] of Object.entries(res.getHeaders())) {
        if (value === undefined || NOT_KEPT.has(name) || before.get(name) === value) continue;
        headers.push([name, value]);
      }
      this.answers?.set(key, { generation, status: 200, headers, body, route: routeOf(res.req) });
    };
    res.end = ((...args: unknown[]) => {
      keep(args[0]);
      if (conditions && !written && res.statusCode === 200 && fresh(conditions, validators(res))) {
        notModified(res);
        return end();
      }
      return end(...args);
    }) as Response['end'];
  }
}

/**
 * Sends a write's answer only once every process has heard of it (`Notifications.settle`): what
 * each keeps from before (answers here, the holders of API tokens) is dropped there before the
 * caller, or anyone the caller tells, can ask any of them again. A refused write changed nothing
 * and is answered at once.
 */
export function answerWritesOnceHeard(notifications: Notifications): RequestHandler {
  return (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD' || !mayWrite(req)) return next();
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      if (res.statusCode >= 400) return end(...args);
      void notifications.settle().then(() => end(...args)); // settle never rejects
      return res;
    }) as Response['end'];
    next();
  };
}

/** Marks the answer a route is writing as one the cache may keep (a read of stored content). */
export const cacheable: RequestHandler = (_req, res, next) => {
  res.locals.cacheable = true;
  next();
};

function isCacheable(res: Response): boolean {
  return res.locals.cacheable === true;
}

/** Who asks, from where, in which formats and languages, for what. */
function keyOf(req: Request, res: Response): string | undefined {
  const ctx = peekContext(res);
  if (!ctx) return undefined;
  const actor = ctx.actor.kind === 'user' ? `user:${ctx.actor.id}` : ctx.actor.kind;
  // HEAD is answered from a GET's answer, without its body.
  return [
    actor,
    ctx.baseUrl,
    req.get('accept') ?? '',
    req.get('accept-language') ?? '',
    req.get('compress') ?? '',
    req.originalUrl,
  ].join('\n');
}

function noCache(req: Request): boolean {
  return /\bno-cache\b/i.test(req.get('cache-control') ?? '') || req.get('pragma') === 'no-cache';
}

/** Requests by POST that only read, or write nothing an answer shows (a sign-in's token). */
const READS_BY_POST =
  /^\/users\/login\/?$|\/\$match\/?$|\/(CodeSystem|ValueSet|ConceptMap)(\/[^/]+)?\/\$[a-z-]+$/;

/**
 * Whether a request other than GET may change content: every one but those that only read (the
 * FHIR operations and `$match` asked by POST, a sign-in, GraphQL documents without a mutation).
 */
function mayWrite(req: Request): boolean {
  if (req.method === 'OPTIONS') return false;
  if (req.path === '/graphql') {
    const query = (req.body as { query?: unknown } | undefined)?.query;
    return typeof query !== 'string' || /\bmutation\b/.test(query);
  }
  return !(req.method === 'POST' && READS_BY_POST.test(req.path));
}

/** A GET's validators (`If-None-Match`, `If-Modified-Since`), taken off the request; none: undefined. */
function takeConditions(req: Request): Record<string, string> | undefined {
  if (req.method !== 'GET') return undefined;
  const conditions: Record<string, string> = {};
  for (const name of ['if-none-match', 'if-modified-since']) {
    const value = req.headers[name];
    if (typeof value !== 'string') continue;
    conditions[name] = value;
    delete req.headers[name];
  }
  return Object.keys(conditions).length > 0 ? conditions : undefined;
}

function validators(res: Response): Record<string, string | undefined> {
  const header = (name: string): string | undefined => {
    const value = res.getHeader(name);
    return value === undefined ? undefined : String(value);
  };
  return { etag: header('etag'), 'last-modified': header('last-modified') };
}

/** Turns the answer being written into a 304: its validators stay, its content goes. */
function notModified(res: Response): void {
  for (const name of ['content-type', 'content-length', 'transfer-encoding'])
    res.removeHeader(name);
  res.statusCode = 304;
}

function serve(req: Request, res: Response, answer: Answer): void {
  res.locals.cachedRoute = answer.route;
  for (const [name, value] of answer.headers) res.setHeader(name, value);
  if (req.fresh) {
    notModified(res);
    res.end();
    return;
  }
  res.statusCode = answer.status;
  res.setHeader('content-length', answer.body.length);
  res.end(req.method === 'HEAD' ? undefined : answer.body);
}
