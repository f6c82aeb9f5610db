import cors from 'cors';
import express, { type Express } from 'express';
import { pinoHttp } from 'pino-http';
import crypto from 'node:crypto';
import type { Server } from 'node:http';
import {
  AnswerCache,
  answerWritesOnceHeard,
  errorBody,
  errorHandler,
  guardInput,
  requireJsonBody,
  verifyEncoding,
} from '../compat/http';
import { rateLimiting } from '../compat/rate-limit';
import {
  API_VERSION,
  BULK_IMPORT_PATH,
  exportSerializer,
  restRouter,
  restRoutes,
} from '../compat/rest';
import { fhirErrorHandler, fhirRouter, negotiate } from '../compat/fhir';
import { docsRouter } from '../compat/openapi';
import type { Config } from './config';
import { attachContext, authenticatedContext, upgradeCaller } from './context';
import { withinRequest } from './db/transaction-scope';
import { createGraphqlEdge } from './graphql/server';
import type { Logger } from './logger';
import { measureRequests, metricsEndpoint, watch } from './metrics';
import type { Services } from './services';

/** Headers OCL clients send (oclweb2, OpenMRS) and the paging headers they read (spec core §2.1). */
const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'X-OCL-CLIENT',
  'X-Request-Id',
  'includeFacets',
  'includeSearchStats',
  'includeSearchLatest',
  'compress',
  'apollo-require-preflight',
];
const EXPOSED_HEADERS = [
  'num_found',
  'num_found_relation',
  'num_returned',
  'offset',
  'pages',
  'page_number',
  'next',
  'previous',
  'Location',
  'X-OCL-API-VERSION',
  'X-OCL-REQUEST-USER',
  'X-Request-Id',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
];

export interface App {
  express: Express;
  /**
   * Serves GraphQL subscriptions over WebSocket (`graphql-transport-ws`) on `/graphql` of
   * `server`, the HTTP server listening for `express`; `drain` and `close` close them.
   */
  attachWebSocket(server: Server): void;
  /**
   * The start of a drain: readiness answers 503 at once and every answer from now on closes its
   * connection, so that load balancers and keep-alive clients move to other processes.
   */
  drain(): void;
  /**
   * Sends the app, listening at `baseUrl`, the requests of `WARM_UP_PATHS`, so that the first
   * caller's request is not the one that compiles the FHIR terminology path and prepares its
   * statements; `/readyz/` answers 503 until they are answered. Failures are logged, not thrown.
   */
  warmUp(baseUrl: string): Promise<void>;
  close(): Promise<void>;
}

/** The header a warm-up request carries its start's secret in (it is not rate-limited). */
const WARM_UP_HEADER = 'x-registry-warm-up';

/**
 * What a start warms: a `$lookup` and a ValueSet `$validate-code` of a system no one stores (the
 * FHIR edge, the terminology core and its search statement, answered 404).
 */
export const WARM_UP_PATHS = [
  '/fhir/CodeSystem/$lookup?system=urn%3Aregistry%3Awarm-up&code=warm-up',
  '/fhir/ValueSet/$validate-code?url=urn%3Aregistry%3Awarm-up&system=urn%3Aregistry%3Awarm-up&code=warm-up',
];

/**
 * The composition root of the edges (the one place in src/ that mounts compat/): shared
 * middleware, then GraphQL, then the OCL REST paths, then one 404 and one error handler.
 */
export async function createApp(services: Services, config: Config, log: Logger): Promise<App> {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  watch(services.jobs);
  app.use(measureRequests);
  app.use(
    pinoHttp({
      logger: log,
      genReqId: (req, res) => {
        const incoming = req.headers['x-request-id'];
        const id =
          typeof incoming === 'string' && /^[\w.-]{1,100}$/.test(incoming)
            ? incoming
            : crypto.randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
    }),
  );
  app.use(
    cors({
      origin: true,
      allowedHeaders: ALLOWED_HEADERS,
      exposedHeaders: EXPOSED_HEADERS,
      maxAge: 600,
    }),
  );
  let draining = false;
  /** While warming up: the secret its requests carry in `WARM_UP_HEADER`. */
  let warmUpSecret: string | null = null;
  // Answers not yet begun: a drain tells them to close their connections too.
  const unanswered = new Set<express.Response>();
  app.use((_req, res, next) => {
    // Each answer carries a close listener of several middlewares (metrics, request logging, rate
    // limits, this drain, the request's abort) and a streamed file's pipeline adds its own: more
    // than Node's default of 10 is how every download is answered, not a leak.
    res.setMaxListeners(20);
    res.setHeader('X-OCL-API-VERSION', API_VERSION);
    if (draining) res.setHeader('Connection', 'close');
    else {
      unanswered.add(res);
      res.once('close', () => unanswered.delete(res));
    }
    next();
  });
  // Probes for load balancers and orchestrators: alive while the process runs; ready while it
  // is not draining and its database answers.
  app.get('/livez/', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz/', (_req, res) => {
    if (draining) {
      res.status(503).json(errorBody(503, 'This process is stopping.'));
      return;
    }
    if (warmUpSecret !== null) {
      res.status(503).json(errorBody(503, 'This process is warming up.'));
      return;
    }
    services.ping().then(
      () => res.json({ status: 'ok' }),
      () => res.status(503).json(errorBody(503, 'The database does not answer.')),
    );
  });
  // With METRICS_PORT, /metrics is served there (src/main.ts) and not here.
  if (config.metricsToken && config.metricsPort === undefined) {
    app.get('/metrics', metricsEndpoint(config.metricsToken));
  }
  app.use(negotiate);
  const jsonBody = express.json({
    limit: config.maxBodySize,
    type: ['application/json', 'application/*+json'],
    strict: false,
    verify: verifyEncoding,
  });
  // A bulk import's body is its file (JSON lines, CSV or multipart), read by its own route.
  const isImportFile = (req: express.Request): boolean =>
    req.method === 'POST' && BULK_IMPORT_PATH.test(req.path);
  app.use((req, res, next) => (isImportFile(req) ? next() : requireJsonBody(req, res, next)));
  app.use((req, res, next) => (isImportFile(req) ? next() : jsonBody(req, res, next)));
  app.use(guardInput);
  app.use(attachContext(services, config.publicUrl));
  // issue 23: a request's transactions stop when its client goes and keep a time budget.
  app.use((_req, res, next) => {
    const gone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    withinRequest({ signal: gone.signal, budgetMs: config.database.requestTransactionMs }, next);
  });
  const rateLimits = rateLimiting(services, config.rateLimits, log);
  if (rateLimits.handlers.length > 0) {
    // The warm-up's own requests (they carry this start's secret) are not a caller's to count.
    const limited = express.Router().use(rateLimits.handlers);
    app.use((req, res, next) => {
      if (warmUpSecret !== null && req.get(WARM_UP_HEADER) === warmUpSecret) next();
      else limited(req, res, next);
    });
  }

  // A write is answered once every process has dropped what it kept from before it.
  app.use(answerWritesOnceHeard(services.notifications));
  // After the caller is known and counted: what this caller was answered before, if unchanged.
  app.use(new AnswerCache(services.notifications, config.answerCacheBytes).middleware);

  // A WebSocket connection's credentials, checked as an HTTP request's are.
  const wsLog = log.child({ transport: 'websocket' });
  const graphql = await createGraphqlEdge(
    services,
    config,
    log,
    (authorization, request) =>
      authenticatedContext(
        services,
        authorization,
        upgradeCaller(app, request, wsLog, config.publicUrl),
      ),
    rateLimits.charge,
  );
  app.use(graphql.router);
  const fhir = fhirRouter(services);
  app.use(fhir);
  // An export file's document is the REST edge's shape (written by the export task).
  services.exports.useSerializer(exportSerializer(services));
  // The one REST route table: every path answers its methods, or 405 with `Allow`; the index,
  // OpenAPI document and API reference describe it.
  const restRows = restRoutes(services);
  app.use(docsRouter(restRows));
  app.use(restRouter(services, restRows));

  app.use((req, res) => {
    res.status(404).json(errorBody(404, `No endpoint ${req.method} ${req.path}.`));
  });
  app.use(fhirErrorHandler);
  app.use(errorHandler);

  await services.notifications.start(log);
  services.watches.useLogger(log);
  // Last, so that nothing above can fail with workers already running.
  await services.jobs.start({
    workers: config.jobsWorkers,
    shutdownSeconds: config.jobsStopSeconds,
    keepFinishedDays: config.tasksKeepDays,
    log,
  });
  return {
    express: app,
    attachWebSocket: (server) => graphql.attachWebSocket(server),
    drain: () => {
      draining = true;
      // Subscriptions move to other processes at once: their clients reconnect (1001).
      graphql.drain();
      for (const res of unanswered) {
        if (!res.headersSent) res.setHeader('Connection', 'close');
      }
      unanswered.clear();
    },
    warmUp: async (baseUrl) => {
      const secret = crypto.randomUUID();
      warmUpSecret = secret;
      const started = Date.now();
      try {
        for (const path of WARM_UP_PATHS) {
          try {
            const res = await fetch(baseUrl + path, {
              headers: {
                accept: 'application/fhir+json',
                'x-request-id': 'warm-up',
                [WARM_UP_HEADER]: secret,
              },
            });
            await res.arrayBuffer();
          } catch (error) {
            log.warn({ err: error, path }, 'warm-up request failed');
          }
        }
      } finally {
        warmUpSecret = null;
      }
      log.info({ ms: Date.now() - started }, 'warmed up');
    },
    close: async () => {
      await rateLimits.stop();
      try {
        await graphql.stop();
        await services.watches.stop();
      } finally {
        await services.jobs.stop();
        await services.notifications.stop();
      }
    },
  };
}
