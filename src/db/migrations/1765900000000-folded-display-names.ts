import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a concept search ranks by, kept with each version (issue 27):
 * - `display_folded`, the display name folded as `registry_fold` folds it, written by PostgreSQL
 *   as versions are written. The rank of every match read it through `unaccent` three or four
 *   times a row (about 3 µs of a common word's 41,000 matches each).
 * - A trigram index of it after a space (so that a word's start is ` word`) for the current
 *   versions, keyed by source (`btree_gin`): a search with more matches than lists count
 *   (`LIST_COUNT_CAP`) ranks only the matches whose name has every word at a word's start, where
 *   its best matches are (`ConceptRepository.search`), found here instead of among all of them.
 * - The current versions by their lower-cased id and source: the exact id, which ranks above
 *   every name, is found there beside them.
 * Adding the column rewrites `concept_versions` once (about 10 s for a million rows).
 */
export class FoldedDisplayNames1765900000000 implements MigrationInterface {
  name = 'FoldedDisplayNames1765900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE concept_versions ADD COLUMN display_folded text NOT NULL
         GENERATED ALWAYS AS (registry_fold(coalesce(display_name, ''))) STORED`,
    );
    await q.query(
      `CREATE INDEX concept_versions_head_display_starts ON concept_versions
         USING gin (repository_id, (' ' || display_folded) gin_trgm_ops)
         WHERE valid_to_seq IS NULL`,
    );
    await q.query(
      `CREATE INDEX concept_versions_head_lower_id ON concept_versions
         (lower(mnemonic), repository_id) WHERE valid_to_seq IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX concept_versions_head_lower_id`);
    await q.query(`DROP INDEX concept_versions_head_display_starts`);
    await q.query(`ALTER TABLE concept_versions DROP COLUMN display_folded`);
  }
}
