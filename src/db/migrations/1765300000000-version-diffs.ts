import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Comparing two versions of a source (`$compare`, `$changelog`) reads only what changed between
 * their change numbers: the versions begun after the older one (`…_interval`, by
 * `valid_from_seq`) and those ended after it, found here by when they ended. Only ended versions
 * are indexed: the current ones (most rows) are never looked up this way.
 */
export class VersionDiffs1765300000000 implements MigrationInterface {
  name = 'VersionDiffs1765300000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['concept_versions', 'mapping_versions']) {
      await q.query(
        `CREATE INDEX ${table}_ended ON ${table} (repository_id, valid_to_seq)
         WHERE valid_to_seq IS NOT NULL`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['concept_versions', 'mapping_versions']) {
      await q.query(`DROP INDEX ${table}_ended`);
    }
  }
}
