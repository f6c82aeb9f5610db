import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes in the order the big lists are read (issue 27 part 2: a first page that reads a page,
 * not the list), so that a page walks an index and stops instead of sorting every match:
 * - `/concepts/` (every public source, newest first): 255 ms → under 1 ms for the page of a
 *   100,000-concept instance.
 * - A source's and every public source's mappings, by map type then sort weight: keyed on
 *   `lower(map_type)` first (the order is case-insensitive on the map type, then exact), so the
 *   same index answers a `mapType` filter in order too. Source mappings by `SAME-AS`:
 *   520 ms → 0.2 ms; `/mappings/`: 1 s → 0.4 ms.
 * - Statistics on the filters' folded values (`lower(concept_class)`, …), which PostgreSQL
 *   otherwise guesses: it guessed 230 drugs among 100,000 public concepts (there were 14,761),
 *   so it sorted every drug for `/concepts/?conceptClass=Drug` (28 ms) rather than walk the
 *   newest concepts until 25 drugs were found (under 4 ms).
 * - The locales of a concept version's names as a column (`name_locales`, kept by PostgreSQL from
 *   `names`), carried by the index of a source's active HEAD concepts with `created_at`: a
 *   `locale` or `updatedSince` filter's page and count read that index alone instead of each row
 *   (the count of French names in a CIEL-scale source, up to the cap: 42 ms → 7 ms).
 */
/** The filtered columns (`lower(column) IN …`) whose folded values get statistics. */
const STATISTICS = [
  ['concept_versions', 'concept_class'],
  ['concept_versions', 'datatype'],
  ['mapping_versions', 'map_type'],
] as const;

export class ListOrders1765700000000 implements MigrationInterface {
  name = 'ListOrders1765700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION registry_name_locales(names jsonb) RETURNS text[]
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT coalesce(array_agg(DISTINCT n->>'locale') FILTER (WHERE n->>'locale' IS NOT NULL),
          '{}')
        FROM jsonb_array_elements(CASE jsonb_typeof(names) WHEN 'array' THEN names ELSE '[]' END) n
      $$`);
    await q.query(
      `ALTER TABLE concept_versions ADD COLUMN name_locales text[] NOT NULL
       GENERATED ALWAYS AS (registry_name_locales(names)) STORED`,
    );
    await q.query('DROP INDEX concept_versions_head_active');
    await q.query(
      `CREATE INDEX concept_versions_head_active ON concept_versions (repository_id, mnemonic, id)
       INCLUDE (name_locales, created_at) WHERE valid_to_seq IS NULL AND NOT retired`,
    );
    // Each carries what a page's filters and visibility read, so a page walks it alone.
    await q.query(
      `CREATE INDEX concept_versions_public_recent ON concept_versions (created_at DESC, id DESC)
       INCLUDE (repository_id, name_locales) WHERE valid_to_seq IS NULL AND NOT retired`,
    );
    await q.query(
      `CREATE INDEX mapping_versions_head_listed ON mapping_versions
       (repository_id, lower(map_type), map_type, sort_weight, id)
       WHERE valid_to_seq IS NULL AND NOT retired`,
    );
    await q.query(
      `CREATE INDEX mapping_versions_public_listed ON mapping_versions
       (lower(map_type), map_type, sort_weight, id) INCLUDE (repository_id)
       WHERE valid_to_seq IS NULL AND NOT retired`,
    );
    for (const [table, column] of STATISTICS) {
      await q.query(
        `CREATE STATISTICS ${table}_${column}_folded ON (lower(${column})) FROM ${table}`,
      );
    }
    await q.query('ANALYZE concept_versions');
    await q.query('ANALYZE mapping_versions');
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [table, column] of STATISTICS) {
      await q.query(`DROP STATISTICS ${table}_${column}_folded`);
    }
    await q.query('DROP INDEX mapping_versions_public_listed');
    await q.query('DROP INDEX mapping_versions_head_listed');
    await q.query('DROP INDEX concept_versions_public_recent');
    await q.query('DROP INDEX concept_versions_head_active');
    await q.query(
      `CREATE INDEX concept_versions_head_active ON concept_versions (repository_id, mnemonic, id)
       WHERE valid_to_seq IS NULL AND NOT retired`,
    );
    await q.query('ALTER TABLE concept_versions DROP COLUMN name_locales');
    await q.query('DROP FUNCTION registry_name_locales(jsonb)');
  }
}
