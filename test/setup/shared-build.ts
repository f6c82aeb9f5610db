import path from 'node:path';

/** Where the run's shared server build lives (`buildServer` in test/e2e/server-process.ts). */
export function sharedBuildDir(root: string, runId: string): string {
  return path.join(root, 'node_modules', '.cache', 'e2e-builds', `server-${runId}`);
}
