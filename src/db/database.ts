import path from 'node:path';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { createDataSource } from './data-source';
import { startEmbeddedPostgres } from './embedded-postgres';

export interface Database {
  dataSource: DataSource;
  /** Whether the server runs its own embedded Postgres. */
  embedded: boolean;
  close(): Promise<void>;
}

/** Connects to `DATABASE_URL`, or starts the embedded Postgres under `DATA_DIR/pg`; then migrates. */
export async function openDatabase(config: Config, log: Logger): Promise<Database> {
  let url = config.databaseUrl;
  let stopEmbedded: (() => Promise<void>) | undefined;
  if (!url) {
    const started = Date.now();
    const pg = await startEmbeddedPostgres({
      dataDir: path.join(config.dataDir, 'pg'),
      log: (line) => log.debug({ postgres: line }),
    });
    log.info({ port: pg.port, ms: Date.now() - started }, 'embedded Postgres started');
    url = pg.url;
    stopEmbedded = () => pg.stop();
  }
  const dataSource = createDataSource(url, config.database);
  try {
    await migrate(url, log);
    await dataSource.initialize();
  } catch (error) {
    if (dataSource.isInitialized) await dataSource.destroy();
    await stopEmbedded?.();
    throw error;
  }
  return {
    dataSource,
    embedded: stopEmbedded !== undefined,
    close: async () => {
      await dataSource.destroy();
      await stopEmbedded?.();
    },
  };
}

/** The advisory lock every process takes to migrate a database (any fixed number would do). */
const MIGRATION_LOCK = 7_336_281_500;

/**
 * Migrations on a connection of their own, free of the request time limits (an index build may
 * take minutes), one process at a time: processes started together on one database wait for the
 * first one's migrations under a session advisory lock, then find nothing left to apply.
 */
async function migrate(url: string, log: Logger): Promise<void> {
  const lock = new Client({ connectionString: url });
  await lock.connect();
  try {
    const free = await lock.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_lock($1) AS locked',
      [MIGRATION_LOCK],
    );
    if (!free.rows[0].locked) {
      log.info('waiting for another process to finish migrating');
      await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    }
    const migrator = createDataSource(url, {
      poolSize: 1,
      statementTimeoutMs: 0,
      idleInTransactionTimeoutMs: 0,
    });
    await migrator.initialize();
    try {
      const applied = await migrator.runMigrations({ transaction: 'each' });
      if (applied.length > 0)
        log.info({ migrations: applied.map((m) => m.name) }, 'migrations applied');
    } finally {
      await migrator.destroy();
    }
  } finally {
    // Ending the session releases the lock.
    await lock.end();
  }
}
