import type { EntityManager, Repository } from 'typeorm';
import { ApiTokenEntity } from '../db/entities';

export interface TokenHolder {
  id: string;
  username: string;
  isSuperuser: boolean;
  /** The user's own rate limits (null: the instance's). */
  rateLimits: { perMinute: number | null; perDay: number | null };
}

interface HolderRow {
  id: string;
  username: string;
  is_superuser: boolean;
  rate_limit_per_minute: number | null;
  rate_limit_per_day: number | null;
}

export class TokenRepository {
  private readonly repo: Repository<ApiTokenEntity>;

  constructor(private readonly em: EntityManager) {
    this.repo = em.getRepository(ApiTokenEntity);
  }

  async insert(userId: string, tokenHash: string): Promise<void> {
    await this.repo.insert({ userId, tokenHash });
  }

  /** Who holds the token with this hash, if active: only what authentication needs. */
  async findActiveHolder(tokenHash: string): Promise<TokenHolder | null> {
    const rows = await this.em.query<HolderRow[]>(
      `SELECT ${HOLDER_COLUMNS}
       FROM api_tokens t JOIN users u ON u.id = t.user_id
       WHERE t.token_hash = $1 AND u.is_active`,
      [tokenHash],
    );
    return rows.length === 0 ? null : holderOf(rows[0]);
  }

  /** The same for a user known by id (a single sign-on token's), if active. */
  async findActiveUser(userId: string): Promise<TokenHolder | null> {
    const rows = await this.em.query<HolderRow[]>(
      `SELECT ${HOLDER_COLUMNS} FROM users u WHERE u.id = $1 AND u.is_active`,
      [userId],
    );
    return rows.length === 0 ? null : holderOf(rows[0]);
  }
}

const HOLDER_COLUMNS = `u.id::text AS id, u.username, u.is_superuser,
  u.rate_limit_per_minute, u.rate_limit_per_day`;

function holderOf(row: HolderRow): TokenHolder {
  return {
    id: row.id,
    username: row.username,
    isSuperuser: row.is_superuser,
    rateLimits: { perMinute: row.rate_limit_per_minute, perDay: row.rate_limit_per_day },
  };
}
