import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What `$cascade` asks of a released version, whose rows are not all current: the mappings from
 * (or, reversed, to) some concepts, and the concepts naming some codes as parents. The indexes of
 * these questions so far covered current (HEAD) rows only; a version's walk would read every
 * mapping of its source.
 */
export class CascadeLookups1764600000000 implements MigrationInterface {
  name = 'CascadeLookups1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX mapping_versions_from_concept_all ON mapping_versions (from_concept_id, valid_from_seq)`,
    );
    await q.query(
      `CREATE INDEX mapping_versions_to_concept_all ON mapping_versions (to_concept_id, valid_from_seq)`,
    );
    await q.query(
      `CREATE INDEX concept_versions_parents_all ON concept_versions USING gin (parent_codes)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX concept_versions_parents_all`);
    await q.query(`DROP INDEX mapping_versions_to_concept_all`);
    await q.query(`DROP INDEX mapping_versions_from_concept_all`);
  }
}
