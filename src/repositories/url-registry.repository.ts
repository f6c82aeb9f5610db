import type { EntityManager, Repository } from 'typeorm';
import { RepositoryEntity, UrlRegistryEntryEntity } from '../db/entities';
import {
  orderBy,
  searchWords,
  sliceOf,
  whereWordsMatch,
  type Slice,
  type SortSpec,
  type Window,
} from './list';
import type { OwnerKey } from './repo.repository';

/** Whose registry: an org's, a user's, or (null) the global one. */
export type RegistryKey = OwnerKey | null;

export type UrlRegistrySortKey = 'bestMatch' | 'lastUpdate' | 'dateCreated' | 'url' | 'name' | 'id';

export interface UrlRegistrySearch {
  q?: string;
  /** Exact canonical URLs (any of). */
  url?: string[];
  /** Exact namespaces (any of), as stored: `/orgs/X/`. */
  namespace?: string[];
}

const HAYSTACK = `registry_fold(e.url || ' ' || coalesce(e.name, '') || ' ' || coalesce(e.namespace, '') || ' ' || coalesce(e.extras::text, ''))`;
const ORDER: Record<UrlRegistrySortKey, string[]> = {
  bestMatch: ['e.url', 'e.id'],
  lastUpdate: ['e.updated_at', 'e.id'],
  dateCreated: ['e.created_at', 'e.id'],
  url: ['e.url', 'e.id'],
  name: ['e.name', 'e.id'],
  id: ['e.id'],
};

/** Canonical URL registry entries (only active ones are ever read) and canonical URL lookups. */
export class UrlRegistryRepository {
  private readonly entries: Repository<UrlRegistryEntryEntity>;
  private readonly repos: Repository<RepositoryEntity>;

  constructor(em: EntityManager) {
    this.entries = em.getRepository(UrlRegistryEntryEntity);
    this.repos = em.getRepository(RepositoryEntity);
  }

  /** An active entry of one registry by id. */
  findById(registry: RegistryKey, id: string): Promise<UrlRegistryEntryEntity | null> {
    return this.scoped(registry).andWhere('e.id = :id', { id }).getOne();
  }

  /** The active entry of one registry for a URL (at most one). */
  findByUrl(registry: RegistryKey, url: string): Promise<UrlRegistryEntryEntity | null> {
    return this.scoped(registry).andWhere('e.url = :url', { url }).getOne();
  }

  urlTaken(registry: RegistryKey, url: string, exceptId?: string): Promise<boolean> {
    const qb = this.scoped(registry).andWhere('e.url = :url', { url });
    if (exceptId !== undefined) qb.andWhere('e.id <> :exceptId', { exceptId });
    return qb.getExists();
  }

  insert(values: Partial<UrlRegistryEntryEntity>): Promise<UrlRegistryEntryEntity> {
    return this.entries.save(this.entries.create(values));
  }

  save(entry: UrlRegistryEntryEntity): Promise<UrlRegistryEntryEntity> {
    return this.entries.save(entry);
  }

  async search(
    registry: RegistryKey,
    filter: UrlRegistrySearch,
    sort: SortSpec<UrlRegistrySortKey>,
    window: Window,
  ): Promise<Slice<UrlRegistryEntryEntity>> {
    const qb = this.scoped(registry);
    const words = filter.q ? searchWords(filter.q) : [];
    if (words.length) whereWordsMatch(qb, HAYSTACK, words, 'exact');
    if (filter.url?.length) qb.andWhere('e.url IN (:...urls)', { urls: filter.url });
    if (filter.namespace?.length) {
      qb.andWhere('e.namespace IN (:...namespaces)', { namespaces: filter.namespace });
    }
    orderBy(qb, sort, ORDER);
    return sliceOf(qb, window);
  }

  /**
   * Active repositories of one owner registered under a canonical URL: sources before
   * collections, then the oldest first (so that the answer is stable).
   */
  reposWithCanonicalUrl(owner: OwnerKey, url: string): Promise<RepositoryEntity[]> {
    const qb = this.repos
      .createQueryBuilder('r')
      .where('r.canonical_url = :url AND r.is_active', { url })
      .orderBy('r.kind', 'DESC') // 'source' after 'collection' alphabetically
      .addOrderBy('r.id');
    if (owner.orgId) qb.andWhere('r.owner_org_id = :orgId', { orgId: owner.orgId });
    else qb.andWhere('r.owner_user_id = :userId', { userId: owner.userId });
    return qb.getMany();
  }

  private scoped(registry: RegistryKey) {
    const qb = this.entries.createQueryBuilder('e').where('e.is_active');
    if (registry?.orgId) qb.andWhere('e.owner_org_id = :orgId', { orgId: registry.orgId });
    else if (registry?.userId)
      qb.andWhere('e.owner_user_id = :userId', { userId: registry.userId });
    else qb.andWhere('e.owner_org_id IS NULL AND e.owner_user_id IS NULL');
    return qb;
  }
}
