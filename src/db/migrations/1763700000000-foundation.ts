import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Owners (users, orgs, memberships, API tokens) and the repositories they own. Identifiers are
 * unique case-insensitively (no `CIEL` beside `ciel`) but looked up exactly, as OCL does.
 */
export class Foundation1763700000000 implements MigrationInterface {
  name = 'Foundation1763700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await q.query(`CREATE EXTENSION IF NOT EXISTS unaccent`);
    // unaccent() is STABLE; an IMMUTABLE wrapper with a fixed dictionary can back indexes.
    await q.query(`
      CREATE OR REPLACE FUNCTION registry_fold(value text) RETURNS text
      LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, value)) $$`);

    await q.query(`
      CREATE TABLE users (
        id bigserial PRIMARY KEY,
        username text NOT NULL,
        password_hash text,
        name text NOT NULL,
        email text NOT NULL,
        company text,
        location text,
        preferred_locale text NOT NULL DEFAULT 'en',
        website text,
        extras jsonb,
        is_superuser boolean NOT NULL DEFAULT false,
        is_active boolean NOT NULL DEFAULT true,
        verified boolean NOT NULL DEFAULT true,
        verification_token_hash text,
        verify_success_url text,
        verify_failure_url text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        created_by text,
        updated_by text
      )`);
    await q.query(`CREATE UNIQUE INDEX users_username_key ON users (lower(username))`);
    await q.query(`CREATE INDEX users_username_exact ON users (username)`);
    await q.query(`
      CREATE INDEX users_search ON users USING gin (
        (registry_fold(username || ' ' || name || ' ' || coalesce(company, '') || ' ' || coalesce(location, ''))) gin_trgm_ops)`);

    await q.query(`
      CREATE TABLE api_tokens (
        id bigserial PRIMARY KEY,
        user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        token_hash text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX api_tokens_user ON api_tokens (user_id)`);

    await q.query(`
      CREATE TABLE organizations (
        id bigserial PRIMARY KEY,
        mnemonic text NOT NULL,
        name text NOT NULL,
        company text,
        website text,
        location text,
        public_access text NOT NULL DEFAULT 'View' CHECK (public_access IN ('View', 'Edit', 'None')),
        extras jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        created_by text,
        updated_by text
      )`);
    await q.query(
      `CREATE UNIQUE INDEX organizations_mnemonic_key ON organizations (lower(mnemonic))`,
    );
    await q.query(`CREATE INDEX organizations_mnemonic_exact ON organizations (mnemonic)`);
    await q.query(`
      CREATE INDEX organizations_search ON organizations USING gin (
        (registry_fold(mnemonic || ' ' || name || ' ' || coalesce(company, ''))) gin_trgm_ops)`);

    await q.query(`
      CREATE TABLE org_memberships (
        org_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        role text NOT NULL DEFAULT 'member' CHECK (role IN ('admin', 'member')),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (org_id, user_id)
      )`);
    await q.query(`CREATE INDEX org_memberships_user ON org_memberships (user_id)`);

    // Sources and collections share one table: their ids are unique per owner across both kinds
    // (spec core §2.5), and /repos/ lists them together (§4.7).
    await q.query(`
      CREATE TABLE repositories (
        id bigserial PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('source', 'collection')),
        owner_org_id bigint REFERENCES organizations (id) ON DELETE CASCADE,
        owner_user_id bigint REFERENCES users (id) ON DELETE CASCADE,
        mnemonic text NOT NULL,
        name text NOT NULL,
        full_name text,
        description text,
        website text,
        external_id text,
        public_access text NOT NULL DEFAULT 'View' CHECK (public_access IN ('View', 'Edit', 'None')),
        default_locale text NOT NULL DEFAULT 'en',
        supported_locales text[] NOT NULL DEFAULT ARRAY['en'],
        source_type text,
        collection_type text,
        preferred_source text,
        custom_validation_schema text,
        canonical_url text,
        extras jsonb,
        settings jsonb NOT NULL DEFAULT '{}'::jsonb,
        head_seq bigint NOT NULL DEFAULT 0,
        is_active boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        created_by text,
        updated_by text,
        CHECK ((owner_org_id IS NULL) <> (owner_user_id IS NULL))
      )`);
    await q.query(
      `CREATE UNIQUE INDEX repositories_org_mnemonic_key ON repositories (owner_org_id, lower(mnemonic)) WHERE owner_org_id IS NOT NULL`,
    );
    await q.query(
      `CREATE UNIQUE INDEX repositories_user_mnemonic_key ON repositories (owner_user_id, lower(mnemonic)) WHERE owner_user_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE repositories`);
    await q.query(`DROP TABLE org_memberships`);
    await q.query(`DROP TABLE organizations`);
    await q.query(`DROP TABLE api_tokens`);
    await q.query(`DROP TABLE users`);
    await q.query(`DROP FUNCTION registry_fold(text)`);
  }
}
