import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Single sign-on: which user an OpenID Connect identity (the provider's issuer and subject) is.
 * One row per identity, so a provider's user is linked to exactly one of ours.
 */
export class OidcIdentities1764740000000 implements MigrationInterface {
  name = 'OidcIdentities1764740000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE user_identities (
        id bigserial PRIMARY KEY,
        user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        issuer text NOT NULL,
        subject text NOT NULL,
        email text,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (issuer, subject)
      )`);
    await q.query(`CREATE INDEX user_identities_user ON user_identities (user_id)`);
    // Linking a first sign-in by verified email looks users up by address.
    await q.query(`CREATE INDEX users_email_folded ON users (lower(email))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX users_email_folded`);
    await q.query(`DROP TABLE user_identities`);
  }
}
