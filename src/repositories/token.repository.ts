import type { EntityManager, Repository } from 'typeorm';
import { ApiTokenEntity } from '../db/entities';

export interface TokenHolder {
  id: string;
  username: string;
  isSuperuser: boolean;
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
    const rows = await this.em.query<
      Array<{ id: string; username: string; is_superuser: boolean }>
    >(
      `SELECT u.id::text AS id, u.username, u.is_superuser
       FROM api_tokens t JOIN users u ON u.id = t.user_id
       WHERE t.token_hash = $1 AND u.is_active`,
      [tokenHash],
    );
    return rows.length
      ? { id: rows[0].id, username: rows[0].username, isSuperuser: rows[0].is_superuser }
      : null;
  }
}
