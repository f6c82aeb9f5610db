import fs from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  const state = globalThis.registryTestPostgres;
  if (!state) return;
  await state.server?.stop();
  if (state.dir) fs.rmSync(state.dir, { recursive: true, force: true });
}
