import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A source's hierarchy root (OCL's `hierarchy_root_url`): the code of one of its own concepts,
 * where a hierarchy view of the source starts. A code, not a row id: a concept's code never
 * changes, and a version freezes it with the rest of the metadata (`repository_versions.metadata`).
 */
export class HierarchyRoot1765100000000 implements MigrationInterface {
  name = 'HierarchyRoot1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE repositories ADD COLUMN hierarchy_root text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE repositories DROP COLUMN hierarchy_root`);
  }
}
