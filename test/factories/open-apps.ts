/**
 * Apps created in this test file and not yet closed. `test/setup/close-apps.ts` closes them after
 * the file's tests, so a file that forgets its `afterAll(() => t.close())` cannot leave the queue's
 * timers and pool running and keep Jest from exiting. Imports nothing, so that files that never
 * build an app do not load it.
 */
export const openApps = new Set<{ close(): Promise<void> }>();

/** Closes every app of this test file still open (a file's own `close()` runs first). */
export async function closeOpenApps(): Promise<void> {
  await Promise.all([...openApps].map((app) => app.close()));
}
