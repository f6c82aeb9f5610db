import { In, type EntityManager, type Repository } from 'typeorm';
import { MembershipEntity, UserEntity } from '../db/entities';
import {
  facetsOf,
  orderBy,
  searchWords,
  sliceOf,
  whereAnyOf,
  whereWordsMatch,
  type Facet,
  type FacetCounts,
  type Slice,
  type SortSpec,
  type Window,
} from './list';

export type UserSortKey = 'bestMatch' | 'dateJoined' | 'username' | 'name' | 'lastUpdate';

export interface UserSearch {
  q?: string;
  company?: string[];
  location?: string[];
  updatedSince?: Date;
  includeInactive?: boolean;
  /** Only these users (e.g. the members of one org). */
  memberOfOrgId?: string;
}

export interface UserCounts {
  orgs: number;
  publicSources: number;
  publicCollections: number;
}

const HAYSTACK = `registry_fold(u.username || ' ' || u.name || ' ' || coalesce(u.company, '') || ' ' || coalesce(u.location, ''))`;
const ORDER: Record<UserSortKey, string[]> = {
  bestMatch: ['u.username'],
  dateJoined: ['u.created_at', 'u.id'],
  lastUpdate: ['u.updated_at', 'u.id'],
  username: ['u.username'],
  name: ['u.name', 'u.username'],
};
const FACETS: Record<string, Facet> = {
  company: { column: 'u.company' },
  location: { column: 'u.location' },
  preferredLocale: { column: 'u.preferred_locale' },
};

export class UserRepository {
  private readonly repo: Repository<UserEntity>;

  constructor(private readonly em: EntityManager) {
    this.repo = em.getRepository(UserEntity);
  }

  findByUsername(username: string): Promise<UserEntity | null> {
    return this.repo.findOneBy({ username });
  }

  findByIds(ids: readonly string[]): Promise<UserEntity[]> {
    return this.repo.findBy({ id: In([...ids]) });
  }

  /** Case-insensitive, for uniqueness checks before insert. */
  async usernameTaken(username: string): Promise<boolean> {
    return this.repo
      .createQueryBuilder('u')
      .where('lower(u.username) = lower(:username)', { username })
      .getExists();
  }

  countActiveSuperusers(): Promise<number> {
    return this.repo.countBy({ isSuperuser: true, isActive: true });
  }

  insert(values: Partial<UserEntity>): Promise<UserEntity> {
    return this.repo.save(this.repo.create(values));
  }

  /** The row as committed, locked until the transaction ends (inside a transaction only). */
  lock(userId: string): Promise<UserEntity> {
    return this.repo.findOneOrFail({ where: { id: userId }, lock: { mode: 'pessimistic_write' } });
  }

  save(user: UserEntity): Promise<UserEntity> {
    return this.repo.save(user);
  }

  async search(
    filter: UserSearch,
    sort: SortSpec<UserSortKey>,
    window: Window,
  ): Promise<Slice<UserEntity>> {
    const qb = this.filtered(filter);
    const words = filter.q ? searchWords(filter.q) : [];
    // spec core §4.1: username weighs most, then name, then company and location.
    const rank = words.length
      ? {
          expression: `(CASE WHEN lower(u.username) = :q THEN 100 ELSE 0 END)
             + (CASE WHEN registry_fold(u.username) LIKE :qPrefix THEN 40 ELSE 0 END)
             + (CASE WHEN registry_fold(u.name) LIKE :qAny THEN 20 ELSE 0 END)
             + 10 * word_similarity(:q, ${HAYSTACK})`,
          parameters: { q: words.join(' '), qPrefix: `${words[0]}%`, qAny: `%${words.join(' ')}%` },
        }
      : undefined;
    orderBy(qb, sort, ORDER, rank);
    return sliceOf(qb, window);
  }

  facets(filter: UserSearch): Promise<FacetCounts> {
    return facetsOf(this.em, this.filtered(filter), FACETS);
  }

  private filtered(filter: UserSearch) {
    const qb = this.repo.createQueryBuilder('u');
    if (!filter.includeInactive) qb.andWhere('u.is_active');
    if (filter.q) whereWordsMatch(qb, HAYSTACK, searchWords(filter.q));
    whereAnyOf(qb, 'u.company', filter.company, 'company');
    whereAnyOf(qb, 'u.location', filter.location, 'location');
    if (filter.updatedSince)
      qb.andWhere('u.updated_at >= :updatedSince', { updatedSince: filter.updatedSince });
    if (filter.memberOfOrgId) {
      qb.innerJoin(MembershipEntity, 'm', 'm.user_id = u.id AND m.org_id = :memberOf', {
        memberOf: filter.memberOfOrgId,
      });
    }
    return qb;
  }

  /**
   * Counts shown on user records, for many users at once. `orgs` counts only the orgs the
   * viewer may see (public ones, the viewer's own, or all for a superuser).
   */
  async countsFor(
    userIds: readonly string[],
    viewerId: string | null,
    viewerIsSuperuser: boolean,
  ): Promise<Map<string, UserCounts>> {
    const rows = await this.em.query<
      Array<{ id: string; orgs: number; public_sources: number; public_collections: number }>
    >(
      `SELECT u.id::text AS id,
         (SELECT count(*)::int FROM org_memberships m JOIN organizations o ON o.id = m.org_id
           WHERE m.user_id = u.id
             AND ($2 OR o.public_access <> 'None'
                  OR EXISTS (SELECT 1 FROM org_memberships vm WHERE vm.org_id = o.id AND vm.user_id = $3))) AS orgs,
         (SELECT count(*)::int FROM repositories r
           WHERE r.owner_user_id = u.id AND r.kind = 'source' AND r.is_active AND r.public_access <> 'None') AS public_sources,
         (SELECT count(*)::int FROM repositories r
           WHERE r.owner_user_id = u.id AND r.kind = 'collection' AND r.is_active AND r.public_access <> 'None') AS public_collections
       FROM users u WHERE u.id = ANY($1::bigint[])`,
      [userIds, viewerIsSuperuser, viewerId],
    );
    return new Map(
      rows.map((r) => [
        r.id,
        { orgs: r.orgs, publicSources: r.public_sources, publicCollections: r.public_collections },
      ]),
    );
  }
}
