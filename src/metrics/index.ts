import crypto from 'node:crypto';
import type { Server } from 'node:http';
import express, {
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { collectDefaultMetrics, Gauge, Histogram } from 'prom-client';
import type { JobQueue } from '../jobs';
import type { Logger } from '../logger';
import { registry } from './registry';

export {
  answerCacheLookups,
  fhirCacheLookups,
  fhirCacheSize,
  graphqlRefusals,
  rateLimitRefusals,
  registry,
  taskDuration,
} from './registry';

/**
 * The route template a request matched (never its raw path); `unmatched` when none did. An
 * answer served from the kept answers names the route that wrote it.
 */
export function routeOf(req: Parameters<RequestHandler>[0]): string {
  const cached = (req.res?.locals as { cachedRoute?: unknown } | undefined)?.cachedRoute;
  if (typeof cached === 'string') return cached;
  const template = templateOf((req as { route?: { path?: unknown } }).route?.path);
  return template === undefined ? 'unmatched' : `${req.baseUrl}${template}` || '/';
}

/** A route's path as written: a string, a regular expression's source, or several of them. */
function templateOf(path: unknown): string | undefined {
  if (typeof path === 'string') return path;
  if (path instanceof RegExp) return path.source;
  if (Array.isArray(path)) return path.map((p) => templateOf(p) ?? '').join('|');
  return undefined;
}

let wired: JobQueue | undefined;

const httpDuration = new Histogram({
  name: 'registry_http_request_duration_seconds',
  help: 'Duration of HTTP requests, by method, route template and status class.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

const inFlight = new Gauge({
  name: 'registry_http_requests_in_flight',
  help: 'HTTP requests being answered.',
  registers: [registry],
});

new Gauge({
  name: 'registry_db_pool_connections',
  help: 'Connections of the database pool, by state (total, idle).',
  labelNames: ['state'] as const,
  registers: [registry],
  collect() {
    const pool = poolOf();
    if (!pool) return;
    this.set({ state: 'total' }, pool.totalCount);
    this.set({ state: 'idle' }, pool.idleCount);
  },
});

new Gauge({
  name: 'registry_db_pool_waiting',
  help: 'Requests waiting for a connection of the database pool.',
  registers: [registry],
  collect() {
    const pool = poolOf();
    if (pool) this.set(pool.waitingCount);
  },
});

const TASK_STATES = ['PENDING', 'STARTED', 'SUCCESS', 'FAILURE'] as const;

new Gauge({
  name: 'registry_tasks',
  help: 'Background tasks in the tasks table, by state (the queue depth is PENDING).',
  labelNames: ['state'] as const,
  registers: [registry],
  async collect() {
    if (!wired) return;
    const counts = await wired.countByState();
    for (const state of TASK_STATES) this.set({ state }, counts[state] ?? 0);
  },
});

function poolOf(): ReturnType<JobQueue['poolUse']> {
  return wired?.poolUse();
}

/** Points the scrape-time families at this process's job queue and its database pool. */
export function watch(jobs: JobQueue): void {
  if (!wired) collectDefaultMetrics({ register: registry, prefix: 'registry_' });
  wired = jobs;
}

/** Times every request; mount first, so that every answer (404 and errors too) is counted. */
export const measureRequests: RequestHandler = (req, res, next) => {
  inFlight.inc();
  const end = httpDuration.startTimer();
  res.once('close', () => {
    inFlight.dec();
    end({
      method: req.method,
      route: routeOf(req),
      status: `${Math.floor(res.statusCode / 100)}xx`,
    });
  });
  next();
};

/**
 * `GET /metrics` in Prometheus's text format, for a caller with `Authorization: Bearer <token>`;
 * 401 for any other. Mounted only when `METRICS_TOKEN` is set (otherwise the path is a 404): on
 * the main listener, or alone on a listener of its own (`serveMetrics`).
 */
export function metricsEndpoint(token: string): RequestHandler {
  const expected = crypto.createHash('sha256').update(`Bearer ${token}`).digest();
  return (req, res, next) => {
    const given = crypto
      .createHash('sha256')
      .update(req.headers.authorization ?? '')
      .digest();
    if (!crypto.timingSafeEqual(given, expected)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
      res.status(401).json({ detail: 'A valid metrics token is required.' });
      return;
    }
    registry.metrics().then((text) => {
      res.setHeader('Content-Type', registry.contentType);
      res.send(text);
    }, next);
  };
}

/**
 * A listener of its own (`METRICS_PORT`) that serves only `GET /metrics` with the token's rule
 * (any other path is a 404): how a worker, which has no HTTP listener, is scraped. Resolves once
 * it listens.
 */
export async function serveMetrics(
  token: string,
  port: number,
  host: string,
  log: Logger,
): Promise<Server> {
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', metricsEndpoint(token));
  app.use((req, res) => {
    res.status(404).json({ detail: `No endpoint ${req.method} ${req.path} (only GET /metrics).` });
  });
  // A family read at scrape time failed (the task counts when the database does not answer).
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    log.warn({ err: error }, 'collecting the metrics failed');
    res.status(503).json({ detail: 'The metrics could not be collected; try again.' });
  });
  const server = app.listen(port, host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  return server;
}
