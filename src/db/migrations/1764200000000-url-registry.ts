import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The canonical URL registries (spec operations §2.3, §4.6): the global one (no owner) and one
 * per org or user. An active URL appears once per registry; a deleted entry keeps its row
 * (`is_active` false) and frees its URL.
 */
export class UrlRegistry1764200000000 implements MigrationInterface {
  name = 'UrlRegistry1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE url_registry_entries (
        id bigserial PRIMARY KEY,
        owner_org_id bigint REFERENCES organizations (id) ON DELETE CASCADE,
        owner_user_id bigint REFERENCES users (id) ON DELETE CASCADE,
        url text NOT NULL,
        namespace text,
        name text,
        extras jsonb,
        is_active boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        created_by text,
        updated_by text,
        CHECK (owner_org_id IS NULL OR owner_user_id IS NULL)
      )`);
    // One active entry per URL in each registry; coalesce makes the global registry one key.
    await q.query(`
      CREATE UNIQUE INDEX url_registry_entries_active_url ON url_registry_entries
        (coalesce(owner_org_id, 0), coalesce(owner_user_id, 0), url) WHERE is_active`);
    await q.query(
      `CREATE INDEX url_registry_entries_owner_org ON url_registry_entries (owner_org_id) WHERE owner_org_id IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX url_registry_entries_owner_user ON url_registry_entries (owner_user_id) WHERE owner_user_id IS NOT NULL`,
    );
    // Resolution looks repositories up by canonical URL within an owner.
    await q.query(
      `CREATE INDEX IF NOT EXISTS repositories_canonical_url ON repositories (canonical_url) WHERE canonical_url IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS repositories_canonical_url`);
    await q.query(`DROP TABLE url_registry_entries`);
  }
}
