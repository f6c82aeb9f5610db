import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tables no kept answer is read from, whose writes would only empty every process's kept answers
 * for nothing: task progress, rate-limit counts, export download tokens, bulk-import files, API
 * tokens (announced on `registry_accounts` instead) and the migrations' own record.
 */
export const NOT_CONTENT_TABLES = [
  'tasks',
  'rate_limit_counters',
  'export_downloads',
  'bulk_imports',
  'api_tokens',
  'schema_migrations',
];

/**
 * Every process keeps the answers of some GET routes until content changes
 * (compat/http/answer-cache.ts). A statement that writes any other table of the schema announces
 * it on `registry_content` (once per transaction: PostgreSQL folds equal notifications), at
 * commit, whichever process or tool made it. A table added later needs the same trigger
 * (test/compat/answer-cache.test.ts checks every table has it or is listed above).
 */
export class ContentNotifications1765500000000 implements MigrationInterface {
  name = 'ContentNotifications1765500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION notify_content_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('registry_content', '');
        RETURN NULL;
      END $$`);
    for (const table of await contentTables(q)) {
      await q.query(`
        CREATE TRIGGER ${table}_content_change
        AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${table}
        FOR EACH STATEMENT EXECUTE FUNCTION notify_content_change()`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP FUNCTION notify_content_change() CASCADE');
  }
}

async function contentTables(q: QueryRunner): Promise<string[]> {
  const rows = (await q.query(
    `SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND NOT (tablename = ANY($1))
     ORDER BY tablename`,
    [NOT_CONTENT_TABLES],
  )) as Array<{ tablename: string }>;
  return rows.map((row) => row.tablename);
}
