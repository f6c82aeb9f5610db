import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a concept version says (spec core §2.6). Names and descriptions are JSON on the version
 * row: a version is read in one row, and a new version is one insert. `search_text` is the
 * folded text `q` searches (id, names, descriptions) behind a trigram index.
 */
export class ConceptContent1763900000000 implements MigrationInterface {
  name = 'ConceptContent1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE concept_versions
        ADD COLUMN mnemonic text NOT NULL DEFAULT '',
        ADD COLUMN concept_class text,
        ADD COLUMN datatype text,
        ADD COLUMN external_id text,
        ADD COLUMN names jsonb NOT NULL DEFAULT '[]'::jsonb,
        ADD COLUMN descriptions jsonb NOT NULL DEFAULT '[]'::jsonb,
        ADD COLUMN extras jsonb,
        ADD COLUMN display_name text,
        ADD COLUMN display_locale text,
        ADD COLUMN checksum_standard text,
        ADD COLUMN checksum_smart text,
        ADD COLUMN update_comment text,
        ADD COLUMN search_text text NOT NULL DEFAULT ''`);
    await q.query(
      `UPDATE concept_versions cv SET mnemonic = c.mnemonic FROM concepts c WHERE c.id = cv.concept_id`,
    );
    await q.query(
      `CREATE INDEX concept_versions_search ON concept_versions USING gin (search_text gin_trgm_ops)`,
    );
    await q.query(
      `CREATE INDEX concept_versions_names ON concept_versions USING gin (names jsonb_path_ops)`,
    );
    await q.query(
      `CREATE INDEX concept_versions_head_id ON concept_versions (repository_id, mnemonic) WHERE valid_to_seq IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX concept_versions_head_id`);
    await q.query(`DROP INDEX concept_versions_names`);
    await q.query(`DROP INDEX concept_versions_search`);
    await q.query(`
      ALTER TABLE concept_versions
        DROP COLUMN mnemonic, DROP COLUMN concept_class, DROP COLUMN datatype, DROP COLUMN external_id,
        DROP COLUMN names, DROP COLUMN descriptions, DROP COLUMN extras, DROP COLUMN display_name,
        DROP COLUMN display_locale, DROP COLUMN checksum_standard, DROP COLUMN checksum_smart,
        DROP COLUMN update_comment, DROP COLUMN search_text`);
  }
}
