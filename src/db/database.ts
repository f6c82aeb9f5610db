import path from 'node:path';
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

/** Migrations on a connection of their own, free of the request time limits (an index build may take minutes). */
async function migrate(url: string, log: Logger): Promise<void> {
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
}
