import { TestEnvironment } from 'jest-environment-node';

/**
 * The Node test environment, plus one thing at the end of each test file: apps the file left open
 * (test/factories/open-apps.ts) are closed after all of its own hooks have run, so that a file
 * that forgets `afterAll(() => t.close())` cannot leave the job queue's timers and pool running
 * and keep Jest from exiting (or run later files' tasks in a torn-down module registry). A file's
 * own `close()` runs first; closing twice is harmless.
 */
export default class RegistryTestEnvironment extends TestEnvironment {
  override async teardown(): Promise<void> {
    const close = (this.global as { __closeOpenTestApps?: () => Promise<void> })
      .__closeOpenTestApps;
    if (typeof close === 'function') await close();
    await super.teardown();
  }
}
