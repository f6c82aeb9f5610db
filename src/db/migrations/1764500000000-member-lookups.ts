import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What list pages need to read only their rows.
 *
 * - Expansion members carry their object's repository and id (`mnemonic`), which never change: a
 *   collection's concept page in id order walks `(expansion_id, mnemonic)` and stops after its
 *   rows, instead of finding and sorting every member's version; the repositories members come
 *   from are found by skipping through `(expansion_id, repository_id)`.
 * - Counting active members subtracts the retired ones, found from the few retired current
 *   versions (`…_retired_head`) and pinned members (`…_pinned`), rather than reading every member.
 * - A source's HEAD concepts narrowed by class or datatype have an index of their own, in id
 *   order: the first page stops after its rows, the count reads only the index.
 */
export class MemberLookups1764500000000 implements MigrationInterface {
  name = 'MemberLookups1764500000000';

  async up(q: QueryRunner): Promise<void> {
    for (const [table, objects, key, version] of [
      ['expansion_concepts', 'concepts', 'concept_id', 'concept_version_id'],
      ['expansion_mappings', 'mappings', 'mapping_id', 'mapping_version_id'],
    ]) {
      await q.query(
        `ALTER TABLE ${table} ADD COLUMN repository_id bigint, ADD COLUMN mnemonic text`,
      );
      await q.query(`
        UPDATE ${table} x SET repository_id = o.repository_id, mnemonic = o.mnemonic
        FROM ${objects} o WHERE o.id = x.${key}`);
      // Members of deleted content no longer join to anything; they have no object to copy from.
      await q.query(`DELETE FROM ${table} WHERE repository_id IS NULL`);
      await q.query(`
        ALTER TABLE ${table} ALTER COLUMN repository_id SET NOT NULL,
          ALTER COLUMN mnemonic SET NOT NULL`);
      await q.query(`CREATE INDEX ${table}_order ON ${table} (expansion_id, mnemonic, ${key})`);
      await q.query(`CREATE INDEX ${table}_repository ON ${table} (expansion_id, repository_id)`);
      await q.query(
        `CREATE INDEX ${table}_pinned ON ${table} (expansion_id) WHERE ${version} IS NOT NULL`,
      );
    }
    for (const table of ['concept_versions', 'mapping_versions']) {
      await q.query(
        `CREATE INDEX ${table}_retired_head ON ${table} (repository_id)
         WHERE valid_to_seq IS NULL AND retired`,
      );
    }
    for (const column of ['concept_class', 'datatype']) {
      await q.query(
        `CREATE INDEX concept_versions_head_${column} ON concept_versions
         (repository_id, lower(${column}), mnemonic, id) WHERE valid_to_seq IS NULL AND NOT retired`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const column of ['concept_class', 'datatype']) {
      await q.query(`DROP INDEX concept_versions_head_${column}`);
    }
    for (const table of ['concept_versions', 'mapping_versions']) {
      await q.query(`DROP INDEX ${table}_retired_head`);
    }
    for (const table of ['expansion_concepts', 'expansion_mappings']) {
      await q.query(`ALTER TABLE ${table} DROP COLUMN repository_id, DROP COLUMN mnemonic`);
    }
  }
}
