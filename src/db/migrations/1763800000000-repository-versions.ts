import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Versions without copying (design §4). A repository's `head_seq` counts its changes; a content
 * row (concept or mapping version) is current for `valid_from_seq <= s < valid_to_seq` (null =
 * still current). A repository version stores only the `seq` it froze, so creating one is O(1)
 * and "as of version v" is an interval test. HEAD is a version row too, with `seq` null.
 */
export class RepositoryVersions1763800000000 implements MigrationInterface {
  name = 'RepositoryVersions1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX repositories_search ON repositories USING gin (
        (registry_fold(mnemonic || ' ' || name || ' ' || coalesce(full_name, '') || ' ' || coalesce(description, ''))) gin_trgm_ops)`);
    await q.query(`CREATE INDEX repositories_owner_org ON repositories (owner_org_id, kind)`);
    await q.query(`CREATE INDEX repositories_owner_user ON repositories (owner_user_id, kind)`);

    await q.query(`
      CREATE TABLE repository_versions (
        id bigserial PRIMARY KEY,
        repository_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
        mnemonic text NOT NULL,
        seq bigint,
        description text,
        released boolean NOT NULL DEFAULT false,
        retired boolean NOT NULL DEFAULT false,
        previous_version text,
        external_id text,
        extras jsonb,
        metadata jsonb,
        processing boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        created_by text,
        updated_by text,
        CHECK ((mnemonic = 'HEAD') = (seq IS NULL))
      )`);
    await q.query(
      `CREATE UNIQUE INDEX repository_versions_key ON repository_versions (repository_id, lower(mnemonic))`,
    );
    await q.query(
      `CREATE INDEX repository_versions_released ON repository_versions (repository_id, created_at DESC) WHERE released`,
    );

    // Content: the versioned objects and the intervals of their versions, the same shape for
    // concepts and mappings. The descriptive columns (names, classes, map types, checksums) are
    // added to these tables by the migrations of the content API.
    for (const [objects, versions, key] of [
      ['concepts', 'concept_versions', 'concept_id'],
      ['mappings', 'mapping_versions', 'mapping_id'],
    ]) {
      await q.query(`
        CREATE TABLE ${objects} (
          id bigserial PRIMARY KEY,
          repository_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
          mnemonic text NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now(),
          created_by text
        )`);
      await q.query(`CREATE UNIQUE INDEX ${objects}_key ON ${objects} (repository_id, mnemonic)`);
      await q.query(`
        CREATE TABLE ${versions} (
          id bigserial PRIMARY KEY,
          ${key} bigint NOT NULL REFERENCES ${objects} (id) ON DELETE CASCADE,
          repository_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
          valid_from_seq bigint NOT NULL,
          valid_to_seq bigint,
          retired boolean NOT NULL DEFAULT false,
          created_at timestamptz NOT NULL DEFAULT now(),
          created_by text,
          CHECK (valid_to_seq IS NULL OR valid_to_seq > valid_from_seq)
        )`);
      // One current version per object; HEAD reads use the partial index, versions the interval.
      await q.query(
        `CREATE UNIQUE INDEX ${versions}_current ON ${versions} (${key}) WHERE valid_to_seq IS NULL`,
      );
      await q.query(
        `CREATE INDEX ${versions}_head ON ${versions} (repository_id) WHERE valid_to_seq IS NULL`,
      );
      await q.query(
        `CREATE INDEX ${versions}_interval ON ${versions} (repository_id, valid_from_seq, valid_to_seq)`,
      );
    }

    // Active counts kept on the repository row by statement-level triggers (one UPDATE per
    // statement, whatever its size), so that HEAD and a new version read them in O(1) and every
    // write path — API, bulk import, plain SQL — keeps them exact. A version copies them when
    // it freezes: its content never changes afterwards.
    await q.query(`ALTER TABLE repositories ADD COLUMN active_concepts integer NOT NULL DEFAULT 0`);
    await q.query(`ALTER TABLE repositories ADD COLUMN active_mappings integer NOT NULL DEFAULT 0`);
    await q.query(`ALTER TABLE repository_versions ADD COLUMN active_concepts integer`);
    await q.query(`ALTER TABLE repository_versions ADD COLUMN active_mappings integer`);
    for (const [table, column] of [
      ['concept_versions', 'active_concepts'],
      ['mapping_versions', 'active_mappings'],
    ]) {
      await q.query(`
        CREATE FUNCTION registry_count_${table}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP IN ('INSERT', 'UPDATE') THEN
            UPDATE repositories r SET ${column} = r.${column} + d.n
            FROM (SELECT repository_id, count(*)::int AS n FROM new_rows
                  WHERE valid_to_seq IS NULL AND NOT retired GROUP BY repository_id) d
            WHERE r.id = d.repository_id;
          END IF;
          IF TG_OP IN ('UPDATE', 'DELETE') THEN
            UPDATE repositories r SET ${column} = r.${column} - d.n
            FROM (SELECT repository_id, count(*)::int AS n FROM old_rows
                  WHERE valid_to_seq IS NULL AND NOT retired GROUP BY repository_id) d
            WHERE r.id = d.repository_id;
          END IF;
          RETURN NULL;
        END $$`);
      await q.query(`CREATE TRIGGER ${table}_count_insert AFTER INSERT ON ${table}
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION registry_count_${table}()`);
      await q.query(`CREATE TRIGGER ${table}_count_update AFTER UPDATE ON ${table}
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION registry_count_${table}()`);
      await q.query(`CREATE TRIGGER ${table}_count_delete AFTER DELETE ON ${table}
        REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION registry_count_${table}()`);
    }

    // References of collections, versioned by the collection's change sequence like content.
    await q.query(`
      CREATE TABLE collection_references (
        id bigserial PRIMARY KEY,
        collection_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
        expression text NOT NULL,
        include boolean NOT NULL DEFAULT true,
        valid_from_seq bigint NOT NULL,
        valid_to_seq bigint,
        created_at timestamptz NOT NULL DEFAULT now(),
        created_by text
      )`);
    await q.query(
      `CREATE INDEX collection_references_expression ON collection_references (expression)`,
    );
    await q.query(
      `CREATE INDEX collection_references_collection ON collection_references (collection_id, valid_from_seq)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'collection_references',
      'mapping_versions',
      'mappings',
      'concept_versions',
      'concepts',
      'repository_versions',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
    await q.query(`DROP FUNCTION registry_count_concept_versions()`);
    await q.query(`DROP FUNCTION registry_count_mapping_versions()`);
    await q.query(
      `ALTER TABLE repositories DROP COLUMN active_concepts, DROP COLUMN active_mappings`,
    );
    await q.query(`DROP INDEX repositories_owner_user`);
    await q.query(`DROP INDEX repositories_owner_org`);
    await q.query(`DROP INDEX repositories_search`);
  }
}
