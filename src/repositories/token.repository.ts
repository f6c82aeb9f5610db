import type { EntityManager, Repository } from 'typeorm';
import { ApiTokenEntity, UserEntity } from '../db/entities';

export class TokenRepository {
  private readonly repo: Repository<ApiTokenEntity>;

  constructor(private readonly em: EntityManager) {
    this.repo = em.getRepository(ApiTokenEntity);
  }

  async insert(userId: string, tokenHash: string): Promise<void> {
    await this.repo.insert({ userId, tokenHash });
  }

  /** The active owner of the token with this hash. */
  findActiveUserByTokenHash(tokenHash: string): Promise<UserEntity | null> {
    return this.em
      .getRepository(UserEntity)
      .createQueryBuilder('u')
      .innerJoin('api_tokens', 't', 't.user_id = u.id')
      .where('t.token_hash = :tokenHash', { tokenHash })
      .andWhere('u.is_active')
      .getOne();
  }
}
