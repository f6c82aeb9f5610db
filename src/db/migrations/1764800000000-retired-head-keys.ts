import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The retired current versions of a repository with their object's id in the index: counting a
 * collection's active members subtracts the followed members whose current version is retired,
 * and reads those ids from the index alone instead of a heap row each.
 */
export class RetiredHeadKeys1764800000000 implements MigrationInterface {
  name = 'RetiredHeadKeys1764800000000';

  async up(q: QueryRunner): Promise<void> {
    for (const [table, key] of [
      ['concept_versions', 'concept_id'],
      ['mapping_versions', 'mapping_id'],
    ]) {
      await q.query(`DROP INDEX ${table}_retired_head`);
      await q.query(
        `CREATE INDEX ${table}_retired_head ON ${table} (repository_id, ${key})
         WHERE valid_to_seq IS NULL AND retired`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['concept_versions', 'mapping_versions']) {
      await q.query(`DROP INDEX ${table}_retired_head`);
      await q.query(
        `CREATE INDEX ${table}_retired_head ON ${table} (repository_id)
         WHERE valid_to_seq IS NULL AND retired`,
      );
    }
  }
}
