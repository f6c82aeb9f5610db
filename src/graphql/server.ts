import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import { unwrapResolverError } from '@apollo/server/errors';
import { expressMiddleware } from '@as-integrations/express5';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { Router, type Response } from 'express';
import {
  GraphQLError,
  getOperationAST,
  type GraphQLFormattedError,
  type ValidationContext,
} from 'graphql';
import type { Server } from 'node:http';
import path from 'node:path';
import type { Config } from '../config';
import { requestContext } from '../context';
import { fromDatabaseError, isAppError } from '../errors';
import type { Logger } from '../logger';
import type { Services } from '../services';
import { graphqlRefusals, type GraphqlRefusal } from '../metrics/registry';
import { REFUSAL_CODES } from './refusals';
import { capEchoes } from '../text';
import type { GraphQLContext } from './context';
import { withPermissions } from './permissions';
import { costLimit, refuseCostly, type ChargeRequests } from './complexity';
import { inputGuard, inputRefusal } from './input-guard';
import { createWebSocketEdge, type WebSocketOptions } from './websocket';
import { buildGraphqlSchema } from './schema';

export interface GraphqlEdge {
  router: Router;
  /** Takes the WebSocket upgrades (subscriptions) of `server`'s `/graphql`. */
  attachWebSocket(server: Server): void;
  /** Refuses new WebSocket connections and closes the open ones (clients reconnect elsewhere). */
  drain(): void;
  stop(): Promise<void>;
}

/**
 * `/graphql`: Apollo Server over the type-graphql schema, plus an offline GraphiQL for browsers,
 * and subscriptions over WebSocket on the same path once attached to the HTTP server
 * (`authenticateUpgrade` checks a connection's credentials). `charge` counts a costly query as
 * more requests of the caller (none: no rate limits).
 */
export async function createGraphqlEdge(
  services: Services,
  config: Config,
  log: Logger,
  authenticateUpgrade: WebSocketOptions['authenticate'],
  charge?: (res: Response, units: number) => Promise<number | undefined>,
): Promise<GraphqlEdge> {
  const schema = withPermissions(await buildGraphqlSchema());
  // Reported as a validation error (HTTP 400, each reason its own code: `refusals.ts`), not
  // thrown as a crash.
  const validationRules = [
    maxDepthRule({ n: config.graphqlMaxDepth, ignoreIntrospection: true, ...reportAs('depth') }),
    // Each alias of a field runs it again, whatever the cost estimate says (issue 23).
    maxAliasesRule({ n: config.graphqlMaxAliases, ...reportAs('aliases') }),
  ];
  const costRules = {
    maxCost: config.graphqlMaxCost,
    searchCost: config.graphqlSearchCost,
    countCost: config.graphqlCountCost,
    costPerRateUnit: config.graphqlCostPerRateUnit,
  };
  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    introspection: true,
    // src/main.ts owns SIGTERM/SIGINT and stops Apollo in its orderly shutdown.
    stopOnTerminationSignals: false,
    includeStacktraceInErrorResponses: false,
    // No automatic persisted queries: a per-process cache any caller could fill, which no
    // client of ours uses; a request that asks for one is told so (PERSISTED_QUERY_NOT_SUPPORTED).
    persistedQueries: false,
    validationRules,
    formatError: (formatted, error) => capEchoesOf(formatError(formatted, error, log)),
    plugins: [
      ApolloServerPluginLandingPageDisabled(),
      // No cache hints are used; left on, the plugin wraps every field's resolution.
      ApolloServerPluginCacheControlDisabled(),
      statusForUnauthenticated(),
      // Before the cost limit: refused text is named as such, whatever the query costs.
      inputGuard<GraphQLContext>(),
      costLimit<GraphQLContext>(costRules),
    ],
  });
  await apollo.start();

  const router = Router();
  router.get('/graphql', (req, res, next) => {
    // A browser gets the IDE; API clients (JSON, or a query in the URL) get GraphQL.
    if (
      req.query.query === undefined &&
      req.accepts(['application/json', 'text/html']) === 'text/html'
    ) {
      res.type('html').send(GRAPHIQL_PAGE);
      return;
    }
    next();
  });
  router.get('/graphql/assets/:file', (req, res, next) => {
    const file = GRAPHIQL_ASSETS[req.params.file];
    if (!file) {
      next();
      return;
    }
    res.sendFile(file, { maxAge: '1d' });
  });
  // Exactly `/graphql`: other paths below it fall through to the app's 404.
  router.all(
    '/graphql',
    expressMiddleware(apollo, {
      context: async ({ res }) => {
        try {
          const ctx = requestContext(res);
          const chargeRequests: ChargeRequests | undefined =
            charge && ((units) => charge(res, units));
          return { ...ctx, services, chargeRequests };
        } catch (error) {
          if (!isAppError(error)) throw error;
          // Refused credentials are a 401; Basic credentials of a throttled login a 429.
          const retryAfter = error.retryAfterSeconds;
          const http =
            error.code === 'RATE_LIMITED'
              ? { status: 429, headers: new Map([['retry-after', String(retryAfter ?? 60)]]) }
              : { status: 401 };
          throw new GraphQLError(error.message, {
            extensions: {
              code: error.code,
              http,
              ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
            },
          });
        }
      },
    }),
  );
  const websocket = createWebSocketEdge({
    schema,
    services,
    log,
    maxSubscriptions: config.graphqlMaxSubscriptions,
    validationRules,
    refuse: ({ document, operationName, variables }) => {
      const refused = inputRefusal({ document, operationName, variables });
      if (refused) return refused;
      const operation = getOperationAST(document, operationName);
      // Throws the refusal of a costly one.
      if (operation)
        refuseCostly(costRules, { schema, document, operation, operationName, variables });
      return undefined;
    },
    formatError: (error) => withoutHttp(capEchoesOf(formatError(error.toJSON(), error, log))),
    authenticate: authenticateUpgrade,
  });
  return {
    router,
    attachWebSocket: (server) => websocket.attach(server),
    drain: () => websocket.drain(),
    stop: async () => {
      try {
        await websocket.stop();
      } finally {
        await apollo.stop();
      }
    },
  };
}

/**
 * An error without `extensions.http`, the status hint HTTP answers read (Apollo drops it from
 * its answers; a WebSocket message has no status).
 */
function withoutHttp(formatted: GraphQLFormattedError): GraphQLFormattedError {
  if (!formatted.extensions || !('http' in formatted.extensions)) return formatted;
  const extensions: Record<string, unknown> = { ...formatted.extensions };
  delete extensions.http;
  return { ...formatted, extensions };
}

/** The reasons counted for each validation under way (one per request, whatever it repeats). */
const counted = new WeakMap<ValidationContext, Set<GraphqlRefusal>>();

/** Reports a refusal as a validation error and counts it in the metrics, once a request. */
function reportAs(reason: GraphqlRefusal) {
  return {
    propagateOnRejection: false,
    onReject: [
      (ctx: ValidationContext | null, error: GraphQLError) => {
        if (!ctx) return;
        const reasons = counted.get(ctx) ?? new Set<GraphqlRefusal>();
        if (!reasons.has(reason)) graphqlRefusals.inc({ reason });
        counted.set(ctx, reasons.add(reason));
        // Apollo names every validation error GRAPHQL_VALIDATION_FAILED; `formatError` gives
        // this one its own code by the reason it carries.
        ctx.reportError(
          new GraphQLError(error.message, {
            nodes: error.nodes,
            extensions: { ...error.extensions, refusal: reason },
          }),
        );
      },
    ],
  };
}

/** Typed service errors keep their code; anything else is a bug and says nothing of internals. */
function formatError(
  formatted: GraphQLFormattedError,
  error: unknown,
  log: Logger,
): GraphQLFormattedError {
  const refusal = formatted.extensions?.refusal as GraphqlRefusal | undefined;
  if (refusal !== undefined && refusal in REFUSAL_CODES) {
    const extensions: Record<string, unknown> = { ...formatted.extensions };
    delete extensions.refusal;
    return { ...formatted, extensions: { ...extensions, code: REFUSAL_CODES[refusal] } };
  }
  const invalid = invalidVariable(formatted);
  if (invalid) return invalid;
  const original = unwrapResolverError(error);
  const typed = isAppError(original) ? original : fromDatabaseError(original);
  if (typed) {
    return {
      message: typed.message,
      locations: formatted.locations,
      path: formatted.path,
      extensions: {
        code: typed.code,
        ...(typed.fieldErrors ? { fieldErrors: typed.fieldErrors } : {}),
        ...(typed.retryAfterSeconds !== undefined
          ? { retryAfterSeconds: typed.retryAfterSeconds }
          : {}),
      },
    };
  }
  if (original instanceof GraphQLError || formatted.extensions?.code !== 'INTERNAL_SERVER_ERROR') {
    return formatted;
  }
  log.error({ err: original }, 'unhandled GraphQL error');
  return {
    message: 'Internal server error.',
    path: formatted.path,
    extensions: { code: 'INTERNAL_SERVER_ERROR' },
  };
}

/**
 * A variable graphql-js could not coerce (Apollo's BAD_USER_INPUT) in the one shape of invalid
 * input: `INVALID` with `fieldErrors` keyed by the path within the variable (`names.0.name`, as
 * the services key theirs), or by the variable's name when the variable itself is wrong.
 */
function invalidVariable(formatted: GraphQLFormattedError): GraphQLFormattedError | null {
  if (formatted.extensions?.code !== 'BAD_USER_INPUT') return null;
  const match = /^Variable "\$([^"]+)" (?:got invalid value .*? at "([^"]+)"; )?(.*)$/s.exec(
    formatted.message,
  );
  if (!match) return null;
  const [, variable, at, reason] = match;
  const field = at
    ? at
        .replace(/^[^.[]+\.?/, '')
        .replace(/\[(\d+)\]/g, '.$1')
        .replace(/^\./, '') || variable
    : variable;
  return {
    message: formatted.message,
    locations: formatted.locations,
    extensions: { code: 'INVALID', fieldErrors: { [field]: [reason] } },
  };
}

/**
 * Every error, whoever raised it (graphql-js quotes the values it refuses), repeats at most a
 * short part of any value the request sent: a megabyte argument is not sent back.
 */
function capEchoesOf(formatted: GraphQLFormattedError): GraphQLFormattedError {
  const fieldErrors = formatted.extensions?.fieldErrors as Record<string, string[]> | undefined;
  return {
    ...formatted,
    message: capEchoes(formatted.message),
    ...(fieldErrors
      ? {
          extensions: {
            ...formatted.extensions,
            fieldErrors: Object.fromEntries(
              Object.entries(fieldErrors).map(([field, messages]) => [
                capEchoes(field),
                messages.map(capEchoes),
              ]),
            ),
          },
        }
      : {}),
  };
}

/** A request whose credentials were rejected answers HTTP 401, as on the REST edge. */
function statusForUnauthenticated(): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response, errors }) {
          const rejected = errors?.some(
            (e) => e.extensions?.http && e.extensions.code === 'UNAUTHENTICATED',
          );
          if (rejected) response.http.status = 401;
        },
      };
    },
  };
}

/** Browser builds shipped inside the npm packages, so the IDE needs no internet access. */
const packageFile = (pkg: string, file: string): string =>
  path.join(path.dirname(require.resolve(`${pkg}/package.json`)), file);
const GRAPHIQL_ASSETS: Record<string, string> = {
  'react.production.min.js': packageFile('react', 'umd/react.production.min.js'),
  'react-dom.production.min.js': packageFile('react-dom', 'umd/react-dom.production.min.js'),
  'graphiql.min.js': packageFile('graphiql', 'graphiql.min.js'),
  'graphiql.min.css': packageFile('graphiql', 'graphiql.min.css'),
};

const GRAPHIQL_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <title>Terminology Registry · GraphiQL</title>
  <link rel="stylesheet" href="/graphql/assets/graphiql.min.css" />
</head>
<body style="margin: 0">
  <div id="graphiql" style="height: 100vh"></div>
  <script src="/graphql/assets/react.production.min.js"></script>
  <script src="/graphql/assets/react-dom.production.min.js"></script>
  <script src="/graphql/assets/graphiql.min.js"></script>
  <script>
    const fetcher = GraphiQL.createFetcher({ url: window.location.pathname });
    ReactDOM.createRoot(document.getElementById('graphiql')).render(
      React.createElement(GraphiQL, {
        fetcher,
        isHeadersEditorEnabled: true,
        defaultHeaders: '{\\n  "Authorization": "Token <your token>"\\n}',
      }),
    );
  </script>
</body>
</html>`;
