import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  GraphQLError,
  OperationTypeNode,
  getOperationAST,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import { CloseCode } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import { isAppError } from '../errors';
import type { Logger } from '../logger';
import type { ServiceContext, Services } from '../services';
import type { GraphQLContext } from './context';

/** The path GraphQL answers on, over HTTP and WebSocket alike. */
const PATH = '/graphql';
/** The largest message a client may send (a subscription document and its variables). */
const MAX_MESSAGE_BYTES = 256 * 1024;
/** After a drain or a stop, how long clients get to answer the close before they are cut. */
const CLOSE_WAIT_MS = 1000;

/**
 * What a connection's `connection_init` carries: the credentials in `authorization` (or
 * `Authorization`), as in HTTP's header.
 */
type ConnectionParams = Record<string, unknown>;

/** What a connection keeps between its messages: who it is, once accepted. */
type Extra = { context?: ServiceContext } & Record<PropertyKey, unknown>;

export interface WebSocketOptions {
  schema: GraphQLSchema;
  services: Services;
  log: Logger;
  /** Subscriptions one connection may hold at once. */
  maxSubscriptions: number;
  /** The validation rules every operation passes besides GraphQL's own (depth, aliases). */
  validationRules: ValidationRule[];
  /** The refusal of an operation that passed validation (refused text, cost); none: undefined. */
  refuse(args: {
    document: DocumentNode;
    operationName?: string | null;
    variables?: Record<string, unknown> | null;
  }): GraphQLError | undefined;
  /** An error as the API formats GraphQL errors (typed codes, no internals). */
  formatError(error: GraphQLError): GraphQLFormattedError;
  /**
   * The context of a connection's caller: the credentials of its `connection_init` checked as an
   * HTTP request's `Authorization` header is (same code); throws the AppError that refuses them.
   */
  authenticate(
    authorization: string | undefined,
    request: IncomingMessage,
  ): Promise<ServiceContext>;
}

/** GraphQL over WebSocket (`graphql-transport-ws`) on `/graphql` of the app's HTTP server. */
export interface WebSocketEdge {
  /** Takes the WebSocket upgrades of `server`'s `/graphql`. */
  attach(server: Server): void;
  /** Refuses new connections (503) and closes the open ones (1001: clients reconnect elsewhere). */
  drain(): void;
  /** Closes every connection and the WebSocket server. */
  stop(): Promise<void>;
}

/**
 * Subscriptions over WebSocket with the HTTP edge's rules: the same schema and shield, the same
 * credentials (`connectionParams.authorization`, checked by the same code: a refused one closes
 * the connection with 4401, a throttled one with 4403), the same depth, alias, text and cost
 * limits, the same error shape. Only subscriptions: queries and mutations go by HTTP, where the
 * rate limits and the request time budget hold.
 */
export function createWebSocketEdge(options: WebSocketOptions): WebSocketEdge {
  const { schema, services, log } = options;
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  let draining = false;
  const format = (errors: readonly GraphQLError[]): GraphQLFormattedError[] =>
    errors.map((error) => options.formatError(error));
  const server = useServer<ConnectionParams | undefined, Extra>(
    {
      schema,
      onConnect: async (ctx) => {
        const params = ctx.connectionParams ?? {};
        const given = params.authorization ?? params.Authorization;
        const authorization = typeof given === 'string' ? given : undefined;
        try {
          ctx.extra.context = await options.authenticate(authorization, ctx.extra.request);
          return true;
        } catch (error) {
          if (!isAppError(error)) throw error;
          // 4401 (like HTTP's 401) is final for graphql-ws clients; a throttled login may retry.
          const code = error.code === 'RATE_LIMITED' ? CloseCode.Forbidden : CloseCode.Unauthorized;
          ctx.extra.socket.close(code, closeReason(error.message));
          return false;
        }
      },
      onSubscribe: (ctx, _id, payload) => {
        if (Object.keys(ctx.subscriptions).length > options.maxSubscriptions) {
          return [
            refusal(
              `A connection holds at most ${options.maxSubscriptions} subscriptions at once.`,
              'RATE_LIMITED',
            ),
          ];
        }
        let document: DocumentNode;
        try {
          document = parse(payload.query);
        } catch (error) {
          if (error instanceof GraphQLError) return [coded(error, 'GRAPHQL_PARSE_FAILED')];
          throw error;
        }
        const operation = getOperationAST(document, payload.operationName);
        if (!operation) return [refusal('Unable to identify the operation to run.', 'INVALID')];
        if (operation.operation !== OperationTypeNode.SUBSCRIPTION) {
          return [
            refusal(
              'Only subscriptions are sent over WebSocket; send queries and mutations by HTTP (POST /graphql).',
              'NOT_ALLOWED',
            ),
          ];
        }
        const invalid = validate(schema, document, [...specifiedRules, ...options.validationRules]);
        if (invalid.length > 0) {
          return invalid.map((error) => coded(error, 'GRAPHQL_VALIDATION_FAILED'));
        }
        let refused: GraphQLError | undefined;
        try {
          refused = options.refuse({
            document,
            operationName: payload.operationName,
            variables: payload.variables,
          });
        } catch (error) {
          if (error instanceof GraphQLError) return [error];
          throw error;
        }
        if (refused) return [refused];
        const caller = ctx.extra.context as ServiceContext;
        // Each subscription its own loaders, as each HTTP request has.
        const contextValue: GraphQLContext = {
          ...services.context(caller.actor, caller.log, caller.baseUrl, caller.client),
          services,
        };
        const args: ExecutionArgs = {
          schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue,
        };
        return args;
      },
      onError: (_ctx, _id, _payload, errors) => format(errors),
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors ? { ...result, errors: format(result.errors) } : undefined,
    },
    wss,
  );
  wss.on('connection', (socket: WebSocket) => {
    if (draining) socket.close(1001, 'The server is stopping.');
  });

  const closeAll = async (): Promise<void> => {
    for (const client of wss.clients) client.close(1001, 'The server is stopping.');
    if (wss.clients.size === 0) return;
    await new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref());
    for (const client of wss.clients) client.terminate();
  };

  return {
    attach(http: Server): void {
      // Node (24.9 and later) asks this which upgrades the 'upgrade' listener takes: any other
      // (an `Upgrade: h2c` of `curl --http2`, a WebSocket elsewhere) is answered as the plain
      // request it also is. Older Node hands every upgrade to the listener, which refuses those.
      (http as Server & { shouldUpgradeCallback?: unknown }).shouldUpgradeCallback = isOurs;
      http.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
        if (!isOurs(request)) {
          refuseUpgrade(socket, 404, 'Not Found');
          return;
        }
        if (draining) {
          refuseUpgrade(socket, 503, 'Service Unavailable');
          return;
        }
        wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
      });
    },
    drain(): void {
      draining = true;
      closeAll().catch((error: unknown) =>
        log.warn({ err: error }, 'closing the WebSocket connections failed'),
      );
    },
    async stop(): Promise<void> {
      draining = true;
      await closeAll();
      await server.dispose();
    },
  };
}

/** `error` with `code` unless it has one (HTTP's codes for these, as Apollo gives them). */
function coded(error: GraphQLError, code: string): GraphQLError {
  if (error.extensions.code !== undefined) return error;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    extensions: { ...error.extensions, code },
  });
}

function refusal(message: string, code: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code } });
}

/** Whether an upgrade is a WebSocket on the GraphQL path. */
function isOurs(request: IncomingMessage): boolean {
  return (
    (request.url ?? '').split('?')[0] === PATH &&
    request.headers.upgrade?.toLowerCase() === 'websocket'
  );
}

/** A close frame's reason holds at most 123 bytes. */
function closeReason(message: string): string {
  const buffer = Buffer.from(message);
  if (buffer.length <= 123) return message;
  return `${buffer
    .subarray(0, 120)
    .toString()
    .replace(/\uFFFD+$/, '')}…`;
}

/** Answers an upgrade that is not taken with a plain HTTP status, and closes its connection. */
function refuseUpgrade(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}
