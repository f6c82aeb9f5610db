import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a mapping version says (spec core §2.7). Each end is stored as given (source URL, version,
 * code, name) plus the ids it resolved to when it lies inside the service, so that a concept's
 * mappings and inverse mappings are index lookups.
 */
export class MappingContent1764000000000 implements MigrationInterface {
  name = 'MappingContent1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE mapping_versions
        ADD COLUMN mnemonic text NOT NULL DEFAULT '',
        ADD COLUMN map_type text,
        ADD COLUMN from_source_url text,
        ADD COLUMN from_source_version text,
        ADD COLUMN from_concept_code text,
        ADD COLUMN from_concept_name text,
        ADD COLUMN from_repository_id bigint REFERENCES repositories (id) ON DELETE SET NULL,
        ADD COLUMN from_concept_id bigint REFERENCES concepts (id) ON DELETE SET NULL,
        ADD COLUMN to_source_url text,
        ADD COLUMN to_source_version text,
        ADD COLUMN to_concept_code text,
        ADD COLUMN to_concept_name text,
        ADD COLUMN to_repository_id bigint REFERENCES repositories (id) ON DELETE SET NULL,
        ADD COLUMN to_concept_id bigint REFERENCES concepts (id) ON DELETE SET NULL,
        ADD COLUMN sort_weight double precision,
        ADD COLUMN external_id text,
        ADD COLUMN extras jsonb,
        ADD COLUMN checksum_standard text,
        ADD COLUMN checksum_smart text,
        ADD COLUMN update_comment text,
        ADD COLUMN search_text text NOT NULL DEFAULT ''`);
    await q.query(
      `UPDATE mapping_versions mv SET mnemonic = m.mnemonic FROM mappings m WHERE m.id = mv.mapping_id`,
    );
    await q.query(
      `CREATE INDEX mapping_versions_from_concept ON mapping_versions (from_concept_id) WHERE valid_to_seq IS NULL`,
    );
    await q.query(
      `CREATE INDEX mapping_versions_to_concept ON mapping_versions (to_concept_id) WHERE valid_to_seq IS NULL`,
    );
    await q.query(
      `CREATE INDEX mapping_versions_search ON mapping_versions USING gin (search_text gin_trgm_ops)`,
    );
    await q.query(
      `CREATE INDEX mapping_versions_head_id ON mapping_versions (repository_id, mnemonic) WHERE valid_to_seq IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of ['head_id', 'search', 'to_concept', 'from_concept']) {
      await q.query(`DROP INDEX mapping_versions_${index}`);
    }
    const columns = [
      'mnemonic',
      'map_type',
      'from_source_url',
      'from_source_version',
      'from_concept_code',
      'from_concept_name',
      'from_repository_id',
      'from_concept_id',
      'to_source_url',
      'to_source_version',
      'to_concept_code',
      'to_concept_name',
      'to_repository_id',
      'to_concept_id',
      'sort_weight',
      'external_id',
      'extras',
      'checksum_standard',
      'checksum_smart',
      'update_comment',
      'search_text',
    ];
    await q.query(
      `ALTER TABLE mapping_versions ${columns.map((c) => `DROP COLUMN ${c}`).join(', ')}`,
    );
  }
}
