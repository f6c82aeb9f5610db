import { AsyncLocalStorage } from 'node:async_hooks';

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
