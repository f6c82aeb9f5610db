import type { EntityManager } from 'typeorm';

export type FollowedType = 'User' | 'Organization' | 'Source' | 'Collection';

export interface FollowRow {
  id: string;
  follower_id: string;
  following_type: FollowedType;
  following_id: string;
  created_at: Date;
}

const COLUMNS = `id::text AS id, follower_id::text AS follower_id, following_type,
  following_id::text AS following_id, created_at`;

export class FollowRepository {
  constructor(private readonly em: EntityManager) {}

  /** What these users follow, newest first, by follower. */
  async listForUsers(userIds: readonly string[]): Promise<Map<string, FollowRow[]>> {
    const rows = await this.em.query<FollowRow[]>(
      `SELECT ${COLUMNS} FROM follows WHERE follower_id = ANY($1::bigint[])
       ORDER BY created_at DESC, id DESC`,
      [userIds],
    );
    const byUser = new Map<string, FollowRow[]>();
    for (const row of rows)
      byUser.set(row.follower_id, [...(byUser.get(row.follower_id) ?? []), row]);
    return byUser;
  }

  /** Follows `what`; null when the user follows it already. */
  async insert(
    followerId: string,
    type: FollowedType,
    followingId: string,
  ): Promise<FollowRow | null> {
    const rows = await this.em.query<FollowRow[]>(
      `INSERT INTO follows (follower_id, following_type, following_id) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
      [followerId, type, followingId],
    );
    return rows[0] ?? null;
  }

  async find(followerId: string, followId: string): Promise<FollowRow | null> {
    const rows = await this.em.query<FollowRow[]>(
      `SELECT ${COLUMNS} FROM follows WHERE follower_id = $1 AND id = $2`,
      [followerId, followId],
    );
    return rows[0] ?? null;
  }

  /** Removes a follow; false when there was none. */
  async delete(followerId: string, followId: string): Promise<boolean> {
    const rows = await this.em.query<Array<{ id: string }>>(
      `DELETE FROM follows WHERE follower_id = $1 AND id = $2 RETURNING id`,
      [followerId, followId],
    );
    return rows.length > 0;
  }
}
