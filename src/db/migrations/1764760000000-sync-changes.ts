import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a subscriber's `updatedSince` read (spec operations §4.10) needs to see every change, and
 * to find it without reading a whole repository.
 *
 * - Expansion members carry when they joined (`added_at`: added, or re-pinned to another
 *   version); members present before this migration count as joined now, so a read since an
 *   earlier time repeats them rather than missing one.
 * - `expansion_removals`: what left an expansion (a reference removed, an exclude added) and when,
 *   one row per object (the last removal; forgotten when it joins again), so that a collection's
 *   changes include its removals.
 * - The current versions of a repository by creation time: changes since a time are a range of
 *   that index, not a pass over every current version of the repository.
 */
export class SyncChanges1764760000000 implements MigrationInterface {
  name = 'SyncChanges1764760000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['expansion_concepts', 'expansion_mappings']) {
      await q.query(`ALTER TABLE ${table} ADD COLUMN added_at timestamptz NOT NULL DEFAULT now()`);
      await q.query(`CREATE INDEX ${table}_added ON ${table} (expansion_id, added_at)`);
    }
    await q.query(`
      CREATE TABLE expansion_removals (
        expansion_id bigint NOT NULL REFERENCES expansions (id) ON DELETE CASCADE,
        resource char(1) NOT NULL CHECK (resource IN ('c', 'm')),
        object_id bigint NOT NULL,
        -- The version it was pinned at; null: it followed the current version.
        version_id bigint,
        removed_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (expansion_id, resource, object_id)
      )`);
    await q.query(
      `CREATE INDEX expansion_removals_since ON expansion_removals (expansion_id, resource, removed_at)`,
    );
    for (const table of ['concept_versions', 'mapping_versions']) {
      await q.query(
        `CREATE INDEX ${table}_head_created ON ${table} (repository_id, created_at)
         WHERE valid_to_seq IS NULL`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['concept_versions', 'mapping_versions']) {
      await q.query(`DROP INDEX ${table}_head_created`);
    }
    await q.query(`DROP TABLE expansion_removals`);
    for (const table of ['expansion_concepts', 'expansion_mappings']) {
      await q.query(`DROP INDEX ${table}_added`);
      await q.query(`ALTER TABLE ${table} DROP COLUMN added_at`);
    }
  }
}
