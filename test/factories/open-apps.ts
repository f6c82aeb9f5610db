/**
 * Apps created in this test file and not yet closed. The test environment
 * (`test/setup/environment.ts`) closes them after the file's own hooks, so a file that forgets its
 * `afterAll(() => t.close())` cannot leave the queue's timers and pool running and keep Jest from
 * exiting. Imports nothing, so that files that never build an app do not load it.
 */
export const openApps = new Set<{ close(): Promise<void> }>();

/** What the environment calls at the end of the file (the file's global is its sandbox). */
(globalThis as { __closeOpenTestApps?: () => Promise<void> }).__closeOpenTestApps = async () => {
  await Promise.all([...openApps].map((app) => app.close()));
};
