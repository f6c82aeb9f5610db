import { AsyncLocalStorage } from 'node:async_hooks';
import type { EntityManager } from 'typeorm';
import { AppError } from '../errors';

/**
 * Marks the call chain of an open transaction. Work inside a transaction must use that
 * transaction's connection: asking the pool for a second one while holding the first is how a
 * handful of concurrent requests can take every connection and wait on each other for ever. The
 * data source refuses such a request at once (see `createDataSource`), so the mistake fails the
 * test that reaches it instead of hanging the service under load.
 */
const scope = new AsyncLocalStorage<{ open: boolean }>();

/** Runs `work` as the body of an open transaction. */
export async function insideTransaction<T>(work: () => Promise<T>): Promise<T> {
  const state = { open: true };
  try {
    return await scope.run(state, work);
  } finally {
    // Work the transaction started but did not wait for may go on; it is outside it now.
    state.open = false;
  }
}

/** Throws when a pool connection is asked for from inside an open transaction. */
export function assertOutsideTransaction(): void {
  if (scope.getStore()?.open) {
    throw new Error(
      'A pool connection was requested inside an open transaction; ' +
        "use the transaction's repositories (the `r` its work receives) for every statement in it.",
    );
  }
}

/** What bounds the transactions of one HTTP request. */
export interface RequestBounds {
  /** Aborted when the client has gone before its answer was sent. */
  signal: AbortSignal;
  /** How long one of its transactions may run (0: no limit). */
  budgetMs: number;
}

const request = new AsyncLocalStorage<RequestBounds>();

/** Runs `work` (an HTTP request's handling) with the bounds its transactions keep. */
export function withinRequest<T>(bounds: RequestBounds, work: () => T): T {
  return request.run(bounds, work);
}

/**
 * Bounds a transaction that runs for an HTTP request (issue 23: no request transaction outlives
 * its client): each statement gets the request's budget as `statement_timeout`, and no statement
 * starts once the client has gone or the budget has passed since the transaction began; the
 * refused statement's error makes the transaction roll back. Returns what lifts the guard before
 * COMMIT or ROLLBACK (which must always be sent). Outside a request it does nothing.
 */
export async function boundTransaction(em: EntityManager): Promise<() => void> {
  const bounds = request.getStore();
  const runner = em.queryRunner;
  if (!bounds || !runner) return () => undefined;
  const deadline = bounds.budgetMs > 0 ? Date.now() + bounds.budgetMs : Infinity;
  const query = runner.query.bind(runner);
  runner.query = ((...args: Parameters<typeof query>) => {
    if (bounds.signal.aborted) {
      return Promise.reject(
        new AppError('UNAVAILABLE', 'The client has gone; its work was rolled back.'),
      );
    }
    if (Date.now() > deadline) {
      return Promise.reject(
        new AppError(
          'UNAVAILABLE',
          `The request's work took longer than ${bounds.budgetMs} ms; nothing was changed.`,
          undefined,
          1,
        ),
      );
    }
    return query(...args);
  }) as typeof runner.query;
  if (bounds.budgetMs > 0) {
    await query(`SET LOCAL statement_timeout = ${Math.trunc(bounds.budgetMs)}`);
  }
  return () => {
    runner.query = query;
  };
}
