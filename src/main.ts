import 'reflect-metadata';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { loadConfig } from './config';
import { openDatabase } from './db/database';
import { DataDirInUseError } from './db/embedded-postgres';
import { createLogger, type Logger } from './logger';
import { limitHeapGrowth } from './heap';
import { serveMetrics } from './metrics';
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
    log.info(
      'created the lookup sources: the OCL org’s, and ISO’s iso639-1 for /locales/ (LOOKUP_SOURCES=off to skip)',
    );
  }

  // A worker builds the same app (the edges wire what tasks need, e.g. the export document's
  // shape) but never listens.
  const app = await createApp(services, config, log);
  let server: Server | null = null;
  if (config.role === 'worker') {
    log.info(
      { workers: config.jobsWorkers, embeddedDatabase: db.embedded },
      'worker started (background tasks only, no API listener)',
    );
  } else {
    const listening = app.express.listen(config.port, config.host);
    // Subscriptions over WebSocket on the same server and path as GraphQL.
    app.attachWebSocket(listening);
    await new Promise<void>((resolve, reject) => {
      listening.once('listening', resolve);
      listening.once('error', reject);
    });
    server = listening;
    const address = listening.address() as AddressInfo;
    log.info({ port: address.port, host: config.host, embeddedDatabase: db.embedded }, 'listening');
    await app.warmUp(ownUrl(address));
  }

  // METRICS_PORT: /metrics alone on a listener of its own (the only one a worker has).
  let metricsServer: Server | null = null;
  if (config.metricsToken && config.metricsPort !== undefined) {
    metricsServer = await serveMetrics(config.metricsToken, config.metricsPort, config.host, log);
    const { port } = metricsServer.address() as AddressInfo;
    log.info({ port, host: config.host }, 'metrics listening');
  }

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    if (server) {
      log.info({ signal, drainSeconds: config.drainSeconds }, 'draining');
      app.drain();
    } else {
      log.info({ signal, jobsStopSeconds: config.jobsStopSeconds }, 'stopping');
    }
    const listeners = [server, metricsServer].filter((s): s is Server => s !== null);
    await Promise.all(listeners.map((s) => drain(s, config.drainSeconds, log)));
    await app.close();
    await db.close();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/** The address this process reaches its own listener at (loopback when it listens on all). */
function ownUrl({ address, family, port }: AddressInfo): string {
  if (address === '0.0.0.0' || address === '::') return `http://127.0.0.1:${port}`;
  return family === 'IPv6' ? `http://[${address}]:${port}` : `http://${address}:${port}`;
}

/**
 * Stops accepting connections and lets requests in flight finish with their normal answers; a
 * kept-alive connection is closed once its answer is sent (the answers of a draining app say
 * `Connection: close`). After `seconds`, what is still open is closed. Resolves when every
 * connection has ended, so that nothing still running loses its database.
 */
async function drain(server: Server, seconds: number, log: Logger): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  const idle = setInterval(() => server.closeIdleConnections(), 100);
  const deadline = setTimeout(() => {
    log.warn('drain time is up: closing the connections still open');
    server.closeAllConnections();
  }, seconds * 1000);
  server.closeIdleConnections();
  try {
    await closed;
  } finally {
    clearInterval(idle);
    clearTimeout(deadline);
  }
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
