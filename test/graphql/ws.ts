import type { FormattedExecutionResult } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { until } from '../factories';

export { until };

/**
 * GraphQL subscriptions over WebSocket as a client makes them: a real `graphql-ws` client on
 * `ws`, against a server listening on a port.
 */

/** A `graphql-ws` client of `url` (`ws://host:port/graphql`) sending `authorization`, no retries. */
export function wsClient(url: string, authorization?: string): Client {
  return createClient({
    url,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: authorization === undefined ? {} : { authorization },
  });
}

/** One `next` of a subscription. */
export type Result = FormattedExecutionResult<Record<string, unknown>, unknown>;

/** How a subscription ended: completed, or with the error the client was given. */
export type Ending = { complete: true } | { error: unknown };

/** One subscription's events as they come. */
export interface Recording {
  readonly events: Result[];
  /** Resolves when the subscription ends (never rejects). */
  readonly ended: Promise<Ending>;
  /** Whether it has ended. */
  readonly done: boolean;
  /** Stops it (the client sends `complete`). */
  stop(): void;
  /**
   * The events once there are at least `n` (or once it ended, whatever came); throws after `ms`
   * with what came.
   */
  atLeast(n: number, ms?: number): Promise<Result[]>;
}

/** Subscribes `query` on `client` and records what comes. */
export function record(
  client: Client,
  query: string,
  variables?: Record<string, unknown>,
): Recording {
  const events: Result[] = [];
  let done = false;
  let end!: (ending: Ending) => void;
  const ended = new Promise<Ending>((resolve) => {
    end = (ending) => {
      done = true;
      resolve(ending);
    };
  });
  const stop = client.subscribe(
    { query, variables },
    {
      next: (value) => events.push(value),
      error: (error) => end({ error }),
      complete: () => end({ complete: true }),
    },
  );
  return {
    events,
    ended,
    get done() {
      return done;
    },
    stop,
    atLeast: async (n, ms = 10_000) => {
      await until(
        () => events.length >= n || done,
        ms,
        () => JSON.stringify(events),
      );
      return events;
    },
  };
}

/** The close code of an ending by a closed connection (a CloseEvent); undefined otherwise. */
export function closeCode(ending: Ending): number | undefined {
  if (!('error' in ending)) return undefined;
  const error = ending.error as { code?: unknown };
  return typeof error.code === 'number' ? error.code : undefined;
}

/** The `extensions.code` of each GraphQL error in an event or an error ending. */
export function codesOf(value: Result | Ending | undefined): string[] {
  const errors = !value
    ? undefined
    : 'error' in value
      ? (value.error as Array<{ extensions?: { code?: string } }>)
      : (value as Result).errors;
  if (!Array.isArray(errors)) return [];
  return errors.map((e) => String(e.extensions?.code));
}
