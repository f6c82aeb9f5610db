import fs from 'node:fs';
import path from 'node:path';
import { sharedBuildDir } from './shared-build';

export default async function globalTeardown(): Promise<void> {
  const runId = process.env.TEST_RUN_ID;
  if (runId) {
    const build = sharedBuildDir(path.resolve(__dirname, '..', '..'), runId);
    fs.rmSync(build, { recursive: true, force: true });
  }
  const state = globalThis.registryTestPostgres;
  if (!state) return;
  await state.server?.stop();
  if (state.dir) fs.rmSync(state.dir, { recursive: true, force: true });
}
