import type { EntityManager } from 'typeorm';

/** The provider's name for a person: its issuer and the subject it gives them. */
export interface IdentityKey {
  issuer: string;
  subject: string;
}

/** Links between OpenID Connect identities and users (single sign-on). */
export class IdentityRepository {
  constructor(private readonly em: EntityManager) {}

  /** The user this identity signs in as, if it was linked before. */
  async findUserId({ issuer, subject }: IdentityKey): Promise<string | null> {
    const rows = await this.em.query<{ user_id: string }[]>(
      `WITH seen AS (
         UPDATE user_identities SET last_seen_at = now()
         WHERE issuer = $1 AND subject = $2 RETURNING user_id)
       SELECT user_id::text FROM seen`,
      [issuer, subject],
    );
    return rows[0]?.user_id ?? null;
  }

  /**
   * Holds, until the transaction ends, the right to link this identity, so that parallel first
   * sign-ins of one person wait for each other instead of each creating a user.
   */
  async lock({ issuer, subject }: IdentityKey): Promise<void> {
    await this.em.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
      JSON.stringify(['oidc', issuer, subject]),
    ]);
  }

  async link(
    userId: string,
    { issuer, subject }: IdentityKey,
    email: string | null,
  ): Promise<void> {
    await this.em.query(
      `INSERT INTO user_identities (user_id, issuer, subject, email) VALUES ($1, $2, $3, $4)`,
      [userId, issuer, subject, email],
    );
  }

  /** The ids of the users with this email address (case-insensitive). */
  async userIdsWithEmail(email: string): Promise<string[]> {
    const rows = await this.em.query<{ id: string }[]>(
      `SELECT id::text FROM users WHERE lower(email) = lower($1) ORDER BY id LIMIT 2`,
      [email],
    );
    return rows.map((row) => row.id);
  }
}
