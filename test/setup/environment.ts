import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import { TestEnvironment } from 'jest-environment-node';

/**
 * The Node test environment, plus two things:
 * - with several Jest workers, the file's `TEST_DATABASE_URL` names its worker's own copy of the
 *   test database (made by the global setup), so files running side by side share nothing;
 * - at the end of each test file, apps the file left open (test/factories/open-apps.ts) are closed
 *   after all of its own hooks have run, so that a file that forgets `afterAll(() => t.close())`
 *   cannot leave the job queue's timers and pool running and keep Jest from exiting (or run later
 *   files' tasks in a torn-down module registry). A file's own `close()` runs first; closing twice
 *   is harmless.
 */
export default class RegistryTestEnvironment extends TestEnvironment {
  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    const env = this.global.process.env;
    if (env.TEST_DATABASE_PER_WORKER && env.TEST_DATABASE_URL) {
      const url = new URL(env.TEST_DATABASE_URL);
      url.pathname = `${url.pathname}_w${process.env.JEST_WORKER_ID ?? '1'}`;
      env.TEST_DATABASE_URL = url.toString();
    }
  }

  override async teardown(): Promise<void> {
    const close = (this.global as { __closeOpenTestApps?: () => Promise<void> })
      .__closeOpenTestApps;
    if (typeof close === 'function') await close();
    await super.teardown();
  }
}
