import { AsyncLocalStorage } from 'node:async_hooks';
import type { Request, RequestHandler, Response } from 'express';
import { rateLimit, type ClientRateLimitInfo, type Store } from 'express-rate-limit';
import type { Config } from '../src/config';
import { peekContext } from '../src/context';
import type { Logger } from '../src/logger';
import {
  COUNT_FLUSH_MS,
  type RateLimitService,
  type RateWindow,
  type ServiceContext,
  type Services,
  type WindowCount,
} from '../src/services';
import { rateLimitRefusals } from '../src/metrics/registry';
import { errorBody } from './http';

type Limits = Config['rateLimits'];

interface Window extends RateWindow {
  /** Which figure of a limit setting applies to this window. */
  per: 'perMinute' | 'perDay';
}

/** spec core §8.2: per minute and per day. */
const WINDOWS: readonly Window[] = [
  { name: 'minute', ms: 60_000, per: 'perMinute' },
  { name: 'day', ms: 86_400_000, per: 'perDay' },
];

/** Expired counters are deleted this often, by every process (a cheap, idempotent statement). */
const SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * The request being served: the limit it is held to in each window, and its counts by client key.
 * The first window's store counts the request in every window at once; the next window's store
 * finds its count here.
 */
interface RequestCounts {
  limits: number[];
  counts: Map<string, Promise<WindowCount[]>>;
}
const requestCounts = new AsyncLocalStorage<RequestCounts>();

/**
 * express-rate-limit's `Store` over our shared counters (`RateLimitService`), one instance per
 * window. Every server process sees the same counts, and parallel requests all count.
 */
class SharedCounterStore implements Store {
  readonly localKeys = false;
  readonly prefix: string;

  constructor(
    private readonly counters: RateLimitService,
    private readonly window: Window,
  ) {
    this.prefix = `${window.name}:`;
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const request = requestCounts.getStore();
    if (!request) return infoOf((await this.counters.hit(key, [this.window]))[0]);
    let pending = request.counts.get(key);
    if (!pending) {
      pending = this.counters.hit(
        key,
        WINDOWS.map((window, i) => ({ ...window, limit: request.limits[i] })),
      );
      request.counts.set(key, pending);
    }
    return infoOf((await pending)[WINDOWS.indexOf(this.window)]);
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const count = await this.counters.count(key, this.window);
    return count && infoOf(count);
  }

  decrement(key: string): Promise<void> {
    return this.counters.uncount(key, this.window);
  }

  resetKey(key: string): Promise<void> {
    return this.counters.reset(key, this.window);
  }
}

function infoOf(count: WindowCount): ClientRateLimitInfo {
  return { totalHits: count.hits, resetTime: count.resetAt };
}

export interface RateLimiting {
  /** Mount after `attachContext` (limits depend on who asks) and before the edges. */
  handlers: RequestHandler[];
  /** Stops the timers and hands on the counts not yet shared. */
  stop(): Promise<void>;
  /**
   * Counts `units` more requests of the caller of `res` (a costly GraphQL query); answers the
   * seconds to wait when that puts it over a limit (a refusal, counted in the metrics). Absent
   * when nothing is limited.
   */
  charge?: (res: Response, units: number) => Promise<number | undefined>;
}

/**
 * The request limits of spec core §8.2: per user for a signed-in caller (an administrator may
 * set a user's own), per address for anyone else; `RateLimit`/`RateLimit-Policy` headers (IETF
 * draft 8, one entry per window) on every answer, and 429 with `Retry-After` once over. Also
 * sets the failed-login limits the services apply.
 */
export function rateLimiting(services: Services, limits: Limits, log: Logger): RateLimiting {
  const { failedLogins } = limits;
  services.rateLimits.limitFailedLogins(
    limits.enabled
      ? {
          perAccount: failedLogins.perAccount,
          perClient: failedLogins.perIp,
          windowMs: failedLogins.windowMinutes * 60_000,
        }
      : null,
  );
  if (!limits.enabled) return { handlers: [], stop: async () => undefined };
  const logger = {
    error: (error: unknown, message?: string) => log.error({ err: error }, message ?? 'rate limit'),
    warn: (error: unknown, message?: string) => log.warn({ err: error }, message ?? 'rate limit'),
  };
  const scope: RequestHandler = (_req, res, next) =>
    requestCounts.run(
      {
        limits: WINDOWS.map((window) => limitOf(peekContext(res), limits, window)),
        counts: new Map(),
      },
      next,
    );
  const limiters = WINDOWS.map((window) =>
    rateLimit({
      windowMs: window.ms,
      limit: (_req, res) => limitOf(peekContext(res), limits, window),
      skip: (req, res) => isHealthCheck(req) || limitOf(peekContext(res), limits, window) === 0,
      keyGenerator: (_req, res) => clientKey(peekContext(res)),
      identifier: window.name,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      store: new SharedCounterStore(services.rateLimits, window),
      handler: (req, res) => refuse(req, res, limitOf(peekContext(res), limits, window), window),
      logger,
    }),
  );
  const sweeper = setInterval(() => {
    services.rateLimits.sweep().catch((error: unknown) => {
      log.warn({ err: error }, 'deleting expired rate-limit counters failed');
    });
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();
  const charge = async (res: Response, units: number): Promise<number | undefined> => {
    const ctx = peekContext(res);
    const held = WINDOWS.map((window) => ({ ...window, limit: limitOf(ctx, limits, window) }));
    const counts = await services.rateLimits.hit(clientKey(ctx), held, units);
    // The window that is over its limit longest says how long to wait (and is counted).
    const over = held
      .map((window, i) => ({ window, until: counts[i].resetAt.getTime() }))
      .filter(({ window }, i) => window.limit > 0 && counts[i].hits > window.limit)
      .sort((a, b) => b.until - a.until)[0];
    if (!over) return undefined;
    rateLimitRefusals.inc({ window: over.window.name });
    return Math.max(1, Math.ceil((over.until - Date.now()) / 1000));
  };
  const flush = (): Promise<void> =>
    services.rateLimits.flush().catch((error: unknown) => {
      log.warn({ err: error }, 'sharing rate-limit counts failed');
    });
  const flusher = setInterval(() => void flush(), COUNT_FLUSH_MS);
  flusher.unref();
  return {
    handlers: [scope, ...limiters],
    charge,
    stop: async () => {
      clearInterval(sweeper);
      clearInterval(flusher);
      await flush();
    },
  };
}

/** A user's own limit (set by an administrator) or the instance's; 0 is no limit. */
function limitOf(ctx: ServiceContext | undefined, limits: Limits, window: Window): number {
  const actor = ctx?.actor;
  if (actor?.kind !== 'user') return limits.anonymous[window.per];
  return actor.rateLimits?.[window.per] ?? limits.user[window.per];
}

/** Signed-in callers are counted per user (wherever they call from), others per address. */
function clientKey(ctx: ServiceContext | undefined): string {
  if (ctx?.actor.kind === 'user') return `user:${ctx.actor.id}`;
  return `ip:${ctx?.client ?? 'unknown'}`;
}

/** Load balancers' probes must not be refused. */
function isHealthCheck(req: Request): boolean {
  return req.path === '/healthz/' || req.path === '/healthz';
}

/** 429 in the edge's own error shape; express-rate-limit has set `Retry-After` already. */
function refuse(req: Request, res: Response, limit: number, window: Window): void {
  rateLimitRefusals.inc({ window: window.name });
  const seconds = Number(res.getHeader('Retry-After'));
  const who = peekContext(res)?.actor.kind === 'user' ? 'for this user' : 'from this address';
  const message =
    `Too many requests: ${limit} per ${window.name} are allowed ${who}; ` +
    `try again in ${seconds} seconds.`;
  res.status(429);
  if (req.path === '/graphql') {
    res.json({
      errors: [{ message, extensions: { code: 'RATE_LIMITED', retryAfterSeconds: seconds } }],
    });
    return;
  }
  res.json(errorBody(429, message));
}
