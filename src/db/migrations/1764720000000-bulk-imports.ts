import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bulk imports: the uploaded file waits here for its task (any worker process can read it), the
 * report grows as batches commit, and a cancel request is a flag the task reads between batches.
 * The file is dropped once the task ends; the report stays with the task.
 *
 * The uniqueness rule of mappings (spec core §2.7: map type and ends) is checked for a whole
 * batch in one statement; without an index on the ends each check read every current mapping of
 * the source (quadratic over a CIEL import, and a full scan for each single create too).
 */
export class BulkImports1764720000000 implements MigrationInterface {
  name = 'BulkImports1764720000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE bulk_imports (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        task_id uuid UNIQUE,
        queue text NOT NULL DEFAULT 'default',
        format text NOT NULL CHECK (format IN ('jsonl', 'csv')),
        update_if_exists boolean NOT NULL DEFAULT true,
        content text,
        cancelled_by text,
        report jsonb,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX mapping_versions_head_ends ON mapping_versions
         (repository_id, map_type, coalesce(from_concept_code, ''), coalesce(to_concept_code, ''))
       WHERE valid_to_seq IS NULL AND NOT retired`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX mapping_versions_head_ends`);
    await q.query(`DROP TABLE bulk_imports`);
  }
}
