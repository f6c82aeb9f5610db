import 'reflect-metadata';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { openDatabase } from '../src/db/database';
import { createLogger } from '../src/logger';
import { limitHeapGrowth } from '../src/heap';
import { createMailer, Services } from '../src/services';

/**
 * The registry wired as `src/main.ts` wires it, in a process of its own so that the load generator
 * does not share its event loop. Started by `harness.ts` with DATABASE_URL and ADMIN_PASSWORD set;
 * sends `{ port }` once listening, and stops on any message or when the parent goes away.
 */
async function main(): Promise<void> {
  limitHeapGrowth();
  const config = loadConfig({ ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent' });
  const log = createLogger(config.logLevel);
  const db = await openDatabase(config, log); // connects to DATABASE_URL and migrates
  const services = new Services(
    db.dataSource,
    createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom }, log),
    config.services,
  );
  await services.ensureAdmin(config.adminPassword);
  const app = await createApp(services, config, log);
  const server = app.express.listen(config.port, config.host);
  await once(server, 'listening');

  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    server.close();
    server.closeAllConnections();
    await app.close();
    await db.close();
    process.exit(0);
  };
  // Any message stops it (the harness reads its CPU time from /proc).
  process.on('message', () => void stop());
  process.once('disconnect', () => void stop());
  const { port } = server.address() as AddressInfo;
  // As src/main.ts does: ready once the FHIR path is warm.
  await app.warmUp(`http://127.0.0.1:${port}`);
  process.send?.({ port });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `Benchmark server failed: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
