import crypto from 'node:crypto';
import type { PoolClient, QueryResultRow } from 'pg';
import type { EntityManager } from 'typeorm';

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
  const runner = em.queryRunner ?? em.dataSource.createQueryRunner();
  try {
    const client = (await runner.connect()) as PoolClient;
    em.dataSource.logger.logQuery(sql, params, runner);
    return (await client.query<T & QueryResultRow>({ name, text: sql, values: params })).rows;
  } finally {
    if (runner !== em.queryRunner) await runner.release();
  }
}
