import crypto from 'node:crypto';
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import type { EntityManager } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { assertOutsideTransaction } from '../db/transaction-scope';

const statementNames = new Map<string, string>();

/**
 * Rows of a statement sent as a named prepared statement: Postgres parses and plans it once per
 * connection rather than on every call. For the small statements run on every request, planning
 * costs more than executing. Logged like any other statement (tests count them).
 */
export async function preparedQuery<T>(
  em: EntityManager,
  sql: string,
  params: unknown[],
): Promise<T[]> {
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `registry_${crypto.createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    statementNames.set(sql, name);
  }
  const query = { name, text: sql, values: params };
  const runner = em.queryRunner;
  em.dataSource.logger.logQuery(sql, params, runner);
  if (runner) {
    // Inside a transaction: its own connection, and no other (transaction-scope.ts).
    const client = (await runner.connect()) as PoolClient;
    return (await client.query<T & QueryResultRow>(query)).rows;
  }
  // Outside one, straight to the pool: TypeORM's query runner would add a layer per statement.
  assertOutsideTransaction();
  const pool = (em.dataSource.driver as PostgresDriver).master as Pool;
  return (await pool.query<T & QueryResultRow>(query)).rows;
}
