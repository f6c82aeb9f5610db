import 'reflect-metadata';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { loadConfig } from './config';
import { openDatabase } from './db/database';
import { DataDirInUseError } from './db/embedded-postgres';
import { createLogger } from './logger';
import { limitHeapGrowth } from './heap';
import { ADMIN_USERNAME, createMailer, Services } from './services';

async function main(): Promise<void> {
  limitHeapGrowth();
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const db = await openDatabase(config, log);
  const services = new Services(
    db.dataSource,
    createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom }, log),
    config.services,
  );

  const admin = await services.ensureAdmin(config.adminPassword);
  if (admin.generatedPassword) {
    // Printed once, on the first start, and never stored in clear.
    process.stdout.write(
      `\n  Bootstrap administrator created: username '${ADMIN_USERNAME}', password '${admin.generatedPassword}'\n` +
        '  (set ADMIN_PASSWORD to choose it; this password is not shown again)\n\n',
    );
  }

  if (config.lookupSources && (await services.lookups.ensure())) {
    log.info('created the OCL org with the lookup sources (LOOKUP_SOURCES=off to skip)');
  }

  const app = await createApp(services, config, log);
  const server: Server = app.express.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  log.info({ port, host: config.host, embeddedDatabase: db.embedded }, 'listening');

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    server.close();
    server.closeIdleConnections();
    await app.close();
    await db.close();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  // An expected refusal is told in one line; anything else with its stack.
  const told =
    error instanceof DataDirInUseError
      ? error.message
      : error instanceof Error
        ? error.stack
        : String(error);
  process.stderr.write(`Failed to start: ${told}\n`);
  process.exit(1);
});
