import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What collections hold (spec operations §1.1, §2.1, §2.4): references stored as given and
 * versioned by the collection's change sequence like content, and expansions — the materialized
 * evaluation of a collection version's references.
 *
 * An expansion keeps, per reference, the rows that reference evaluated to
 * (`expansion_reference_rows`: include or exclude, a pinned version or none = follows the current
 * version), and the resulting members (`expansion_concepts`, `expansion_mappings`: every object
 * some include holds and no exclude removes, one row per object). Adding or removing a reference
 * recomputes the members of just the objects it touches.
 */
export class CollectionContent1764300000000 implements MigrationInterface {
  name = 'CollectionContent1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE collection_references
        ADD COLUMN resource_type text NOT NULL DEFAULT 'Concept' CHECK (resource_type IN ('Concept', 'Mapping')),
        ADD COLUMN system text,
        ADD COLUMN version text,
        ADD COLUMN code text,
        ADD COLUMN resource_version text,
        ADD COLUMN filter jsonb,
        ADD COLUMN cascade jsonb,
        ADD COLUMN namespace text,
        ADD COLUMN display text,
        ADD COLUMN search_text text NOT NULL DEFAULT ''`);
    await q.query(
      `CREATE INDEX collection_references_head ON collection_references (collection_id, expression) WHERE valid_to_seq IS NULL`,
    );

    // The hierarchy (a concept's `parent_concept_urls` inside its source), for the hierarchy
    // filters of references (is-a, descendent-of, generalizes).
    await q.query(
      `ALTER TABLE concept_versions ADD COLUMN parent_codes text[] NOT NULL DEFAULT '{}'::text[]`,
    );
    await q.query(
      `CREATE INDEX concept_versions_parents ON concept_versions USING gin (parent_codes) WHERE valid_to_seq IS NULL`,
    );

    await q.query(`
      CREATE TABLE expansions (
        id bigserial PRIMARY KEY,
        collection_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
        version_id bigint NOT NULL REFERENCES repository_versions (id) ON DELETE CASCADE,
        mnemonic text NOT NULL,
        parameters jsonb NOT NULL DEFAULT '{}'::jsonb,
        canonical_url text,
        is_processing boolean NOT NULL DEFAULT false,
        resolved jsonb NOT NULL DEFAULT '[]'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        created_by text
      )`);
    await q.query(`CREATE UNIQUE INDEX expansions_key ON expansions (version_id, lower(mnemonic))`);
    await q.query(`CREATE INDEX expansions_collection ON expansions (collection_id)`);
    // The expansion a version's concept and mapping lists read (OCL's expansion_uri).
    await q.query(`
      ALTER TABLE repository_versions
        ADD COLUMN expansion_id bigint REFERENCES expansions (id) ON DELETE SET NULL`);

    await q.query(`
      CREATE TABLE expansion_reference_rows (
        expansion_id bigint NOT NULL REFERENCES expansions (id) ON DELETE CASCADE,
        -- No foreign key: references are never deleted once they selected rows (they end), and
        -- a check per row would cost more than the evaluation itself at 10,000 references.
        reference_id bigint NOT NULL,
        resource char(1) NOT NULL CHECK (resource IN ('c', 'm')),
        object_id bigint NOT NULL,
        version_id bigint,
        include boolean NOT NULL
      )`);
    await q.query(
      `CREATE INDEX expansion_reference_rows_object ON expansion_reference_rows (expansion_id, resource, object_id)`,
    );
    await q.query(
      `CREATE INDEX expansion_reference_rows_reference ON expansion_reference_rows (reference_id)`,
    );
    // Membership asks, for each included object, whether an exclusion names it: a lookup here
    // rather than a pass over every row of the expansion (rows just written have no statistics,
    // so the planner cannot be trusted to choose well without it).
    await q.query(
      `CREATE INDEX expansion_reference_rows_excludes ON expansion_reference_rows (expansion_id, resource, object_id) WHERE NOT include`,
    );

    for (const [table, object, version] of [
      ['expansion_concepts', 'concept_id', 'concept_version_id'],
      ['expansion_mappings', 'mapping_id', 'mapping_version_id'],
    ]) {
      await q.query(`
        CREATE TABLE ${table} (
          expansion_id bigint NOT NULL REFERENCES expansions (id) ON DELETE CASCADE,
          -- Members of deleted content simply no longer join to a version: no key checks here,
          -- they cost a lookup per member on every evaluation.
          ${object} bigint NOT NULL,
          ${version} bigint,
          PRIMARY KEY (expansion_id, ${object})
        )`);
      await q.query(`CREATE INDEX ${table}_${object} ON ${table} (${object})`);
    }

    // Every collection's HEAD gets its auto-expansion (spec operations §1.1).
    await q.query(`
      INSERT INTO expansions (collection_id, version_id, mnemonic, created_by)
      SELECT v.repository_id, v.id, 'autoexpand-HEAD', v.created_by
      FROM repository_versions v JOIN repositories r ON r.id = v.repository_id
      WHERE r.kind = 'collection' AND v.seq IS NULL`);
    await q.query(`
      UPDATE repository_versions v SET expansion_id = e.id
      FROM expansions e WHERE e.version_id = v.id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE repository_versions DROP COLUMN expansion_id`);
    for (const table of [
      'expansion_mappings',
      'expansion_concepts',
      'expansion_reference_rows',
      'expansions',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
    await q.query(`DROP INDEX collection_references_head`);
    await q.query(`ALTER TABLE concept_versions DROP COLUMN parent_codes`);
    await q.query(`
      ALTER TABLE collection_references
        DROP COLUMN resource_type, DROP COLUMN system, DROP COLUMN version, DROP COLUMN code,
        DROP COLUMN resource_version, DROP COLUMN filter, DROP COLUMN cascade,
        DROP COLUMN namespace, DROP COLUMN display, DROP COLUMN search_text`);
  }
}
