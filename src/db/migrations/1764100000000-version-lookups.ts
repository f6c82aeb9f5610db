import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every version of one concept or mapping by its object: version counts, version lists and the
 * cascade of a delete read these (without them each was a scan of the whole table).
 */
export class VersionLookups1764100000000 implements MigrationInterface {
  name = 'VersionLookups1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX concept_versions_concept ON concept_versions (concept_id, id)`);
    await q.query(`CREATE INDEX mapping_versions_mapping ON mapping_versions (mapping_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX mapping_versions_mapping`);
    await q.query(`DROP INDEX concept_versions_concept`);
  }
}
