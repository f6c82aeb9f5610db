import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An import's file is kept uncompressed while it waits for its task: it lives for one import
 * (dropped when the task ends), and compressing a CIEL-sized file (200 MB) on upload and
 * decompressing it again cost the database seconds of CPU before the first batch.
 */
export class BulkImportSpeed1764770000000 implements MigrationInterface {
  name = 'BulkImportSpeed1764770000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE bulk_imports ALTER COLUMN content SET STORAGE EXTERNAL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE bulk_imports ALTER COLUMN content SET STORAGE EXTENDED`);
  }
}
