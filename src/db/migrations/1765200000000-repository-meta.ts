import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * OCL's `meta` of a source or collection and of each of its versions: how the web client shows
 * it (`meta.display.default_filter`: the filters its concept list opens with). Presentation, not
 * content: a version keeps its own, and editing it changes no checksum and no content.
 */
export class RepositoryMeta1765200000000 implements MigrationInterface {
  name = 'RepositoryMeta1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE repositories ADD COLUMN meta jsonb`);
    await q.query(`ALTER TABLE repository_versions ADD COLUMN meta jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE repository_versions DROP COLUMN meta`);
    await q.query(`ALTER TABLE repositories DROP COLUMN meta`);
  }
}
