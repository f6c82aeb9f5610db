import { DataSource, type Logger as TypeOrmLogger } from 'typeorm';
import { entities } from './entities';
import { migrations } from './migrations';
import { assertOutsideTransaction } from './transaction-scope';

export interface DataSourceOptions {
  poolSize?: number;
  /** How long a request waits for a free pool connection before it is refused (503). */
  acquireTimeoutMs?: number;
  /** Postgres cancels a statement running longer than this (0: never). */
  statementTimeoutMs?: number;
  /** Postgres ends a session left idle inside an open transaction this long (0: never). */
  idleInTransactionTimeoutMs?: number;
  /** Called with every SQL statement sent (tests count them to prove batching). */
  onQuery?: (sql: string) => void;
}

/** The limits that keep a stuck request from holding the service (see the README). */
export const DATABASE_DEFAULTS = {
  acquireTimeoutMs: 10_000,
  statementTimeoutMs: 60_000,
  idleInTransactionTimeoutMs: 60_000,
} as const;

/**
 * What each session of ours asks of PostgreSQL's planner, as the session starts (`-c`):
 * - `random_page_cost` 1.1 (PostgreSQL's default, 4, is for spinning disks): a registry's
 *   dictionaries are read from memory or SSD. With 4 the planner preferred to read a whole
 *   60,000-concept source and test each concept's search text (90 ms) over the trigram index's
 *   3,000 candidates (8 ms), because it prices those as random reads and the text test as free.
 */
export const SESSION_SETTINGS: Readonly<Record<string, string>> = { random_page_cost: '1.1' };

/** `SESSION_SETTINGS` as node-postgres's `options` (PostgreSQL's startup options). */
export const SESSION_OPTIONS = Object.entries(SESSION_SETTINGS)
  .map(([key, value]) => `-c ${key}=${value}`)
  .join(' ');

/** `url` with `SESSION_SETTINGS` for clients that are not ours (benchmarks' raw database). */
export function withSessionSettings(url: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('options', SESSION_OPTIONS);
  return parsed.toString();
}

export function createDataSource(url: string, options: DataSourceOptions = {}): DataSource {
  const {
    poolSize = 10,
    acquireTimeoutMs = DATABASE_DEFAULTS.acquireTimeoutMs,
    statementTimeoutMs = DATABASE_DEFAULTS.statementTimeoutMs,
    idleInTransactionTimeoutMs = DATABASE_DEFAULTS.idleInTransactionTimeoutMs,
    onQuery,
  } = options;
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    entities,
    migrations,
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    // node-postgres passes the two timeouts to each new session as startup parameters.
    extra: {
      max: poolSize,
      connectionTimeoutMillis: acquireTimeoutMs,
      statement_timeout: statementTimeoutMs,
      idle_in_transaction_session_timeout: idleInTransactionTimeoutMs,
      options: SESSION_OPTIONS,
    },
    ...(onQuery ? { logging: ['query'] as const, logger: statementListener(onQuery) } : {}),
  });
  // Every statement outside a transaction takes its connection here (see transaction-scope.ts).
  const createQueryRunner = dataSource.createQueryRunner.bind(dataSource);
  dataSource.createQueryRunner = (mode) => {
    assertOutsideTransaction();
    return createQueryRunner(mode);
  };
  return dataSource;
}

function statementListener(onQuery: (sql: string) => void): TypeOrmLogger {
  const ignore = (): void => undefined;
  return {
    logQuery: (sql) => onQuery(sql),
    logQueryError: ignore,
    logQuerySlow: ignore,
    logSchemaBuild: ignore,
    logMigration: ignore,
    log: ignore,
  };
}
