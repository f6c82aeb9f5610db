import { DataSource, type Logger as TypeOrmLogger } from 'typeorm';
import { entities } from './entities';
import { migrations } from './migrations';

export interface DataSourceOptions {
  poolSize?: number;
  /** Called with every SQL statement sent (tests count them to prove batching). */
  onQuery?: (sql: string) => void;
}

export function createDataSource(url: string, options: DataSourceOptions = {}): DataSource {
  const { poolSize = 10, onQuery } = options;
  return new DataSource({
    type: 'postgres',
    url,
    entities,
    migrations,
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    extra: { max: poolSize },
    ...(onQuery ? { logging: ['query'] as const, logger: statementListener(onQuery) } : {}),
  });
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
