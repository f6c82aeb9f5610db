import { activeMembersSql } from './collection.repository';
import { In, type EntityManager, type Repository } from 'typeorm';
import {
  HEAD,
  OrganizationEntity,
  RepositoryEntity,
  RepositoryVersionEntity,
  UserEntity,
  type RepositoryKind,
} from '../db/entities';
import { hydrate, type Raw } from './hydrate';
import { preparedQuery } from './prepared';
import {
  orderBy,
  searchWords,
  sliceOf,
  whereAnyOf,
  whereExtras,
  whereWordsMatch,
  type ExtrasFilter,
  facetsOf,
  type FacetCounts,
  type Slice,
  type SortSpec,
  type Viewer,
  type Window,
  visibleRepository,
} from './list';

/** The mnemonic of a collection HEAD's auto-expansion (spec operations §1.1). */
export const AUTO_EXPANSION = 'autoexpand-HEAD';

export type RepoSortKey = 'bestMatch' | 'lastUpdate' | 'name' | 'id' | 'dateCreated';

export type OwnerKey =
  { orgId: string; userId?: undefined } | { userId: string; orgId?: undefined };

export interface RepoSearch {
  kind?: RepositoryKind;
  owner?: OwnerKey;
  /** Only repositories owned by orgs this user belongs to. */
  ofOrgsOfUserId?: string;
  /** Only public repositories, whoever asks (the `/sources/` and `/collections/` lists). */
  publicOnly?: boolean;
  ownerType?: 'Organization' | 'User';
  q?: string;
  sourceType?: string[];
  collectionType?: string[];
  locale?: string[];
  customValidationSchema?: string[];
  canonicalUrl?: string[];
  /**
   * Collections referencing one of these expressions, or (`containsVersions`) holding one of
   * these concept or mapping versions in the version's expansion (spec core §4.5 `contains`).
   */
  contains?: string[];
  containsVersions?: ContainedVersion[];
  extras?: ExtrasFilter;
  updatedSince?: Date;
  /** Every version row, not only HEAD. */
  allVersions?: boolean;
}

/** A concept (`c`) or mapping (`m`) version by its id, with the code its URL names. */
export interface ContainedVersion {
  resource: 'c' | 'm';
  code: string;
  versionId: string;
}

/** A repository with its HEAD version and its owner (an org or a user). */
export interface RepositoryHead {
  repo: RepositoryEntity;
  version: RepositoryVersionEntity;
  org: OrganizationEntity | null;
  user: UserEntity | null;
}

export interface ContentCounts {
  activeConcepts: number;
  activeMappings: number;
}

const HAYSTACK = `registry_fold(r.mnemonic || ' ' || r.name || ' ' || coalesce(r.full_name, '') || ' ' || coalesce(r.description, ''))`;
const ORDER: Record<RepoSortKey, string[]> = {
  bestMatch: ['r.name', 'r.id', 'v.created_at'],
  lastUpdate: ['r.updated_at', 'r.id', 'v.created_at'],
  dateCreated: ['r.created_at', 'r.id', 'v.created_at'],
  name: ['r.name', 'r.id', 'v.created_at'],
  id: ['r.mnemonic', 'r.id', 'v.created_at'],
};

/** Sources and collections, and their versions (HEAD included). */
export class RepoRepository {
  private readonly repos: Repository<RepositoryEntity>;
  private readonly versions: Repository<RepositoryVersionEntity>;

  constructor(private readonly em: EntityManager) {
    this.repos = em.getRepository(RepositoryEntity);
    this.versions = em.getRepository(RepositoryVersionEntity);
  }

  findByOwner(owner: OwnerKey, mnemonic: string): Promise<RepositoryEntity | null> {
    return this.repos.findOneBy(
      owner.orgId ? { ownerOrgId: owner.orgId, mnemonic } : { ownerUserId: owner.userId, mnemonic },
    );
  }

  findByIds(ids: readonly string[]): Promise<RepositoryEntity[]> {
    return this.repos.findBy({ id: In([...ids]) });
  }

  /** Ids are unique per owner across sources and collections, in any letter case. */
  mnemonicTaken(owner: OwnerKey, mnemonic: string): Promise<boolean> {
    const qb = this.repos
      .createQueryBuilder('r')
      .where('lower(r.mnemonic) = lower(:mnemonic)', { mnemonic });
    if (owner.orgId) qb.andWhere('r.owner_org_id = :orgId', { orgId: owner.orgId });
    else qb.andWhere('r.owner_user_id = :userId', { userId: owner.userId });
    return qb.getExists();
  }

  /** A new repository with its HEAD version row. */
  async insert(values: Partial<RepositoryEntity>, createdBy: string): Promise<RepositoryEntity> {
    const repo = await this.repos.save(this.repos.create(values));
    const head = await this.versions.insert({
      repositoryId: repo.id,
      mnemonic: HEAD,
      seq: null,
      createdBy,
      updatedBy: createdBy,
    });
    if (repo.kind === 'collection') {
      // A collection's HEAD keeps an auto-expansion that follows its references (spec
      // operations §1.1); its concept and mapping lists read it.
      const headId = String(head.identifiers[0].id);
      await this.em.query(
        `WITH e AS (
           INSERT INTO expansions (collection_id, version_id, mnemonic, created_by)
           VALUES ($1, $2, '${AUTO_EXPANSION}', $3) RETURNING id)
         UPDATE repository_versions SET expansion_id = (SELECT id FROM e) WHERE id = $2`,
        [repo.id, headId, createdBy],
      );
    }
    return repo;
  }

  /** The row as committed, locked until the transaction ends (inside a transaction only). */
  lock(repositoryId: string): Promise<RepositoryEntity> {
    return this.repos.findOneOrFail({
      where: { id: repositoryId },
      lock: { mode: 'pessimistic_write' },
    });
  }

  save(repo: RepositoryEntity): Promise<RepositoryEntity> {
    return this.repos.save(repo);
  }

  async delete(repositoryId: string): Promise<void> {
    await this.repos.delete({ id: repositoryId });
  }

  /**
   * Locks the repository row for this transaction and answers its current change number and
   * active counts: what a version freezes.
   */
  async lockHead(repositoryId: string): Promise<{ seq: string } & ContentCounts> {
    const rows = await this.em.query<Array<{ seq: string; concepts: number; mappings: number }>>(
      `SELECT head_seq::text AS seq, active_concepts AS concepts, active_mappings AS mappings
       FROM repositories WHERE id = $1 FOR UPDATE`,
      [repositoryId],
    );
    return { seq: rows[0].seq, activeConcepts: rows[0].concepts, activeMappings: rows[0].mappings };
  }

  /**
   * Records one content change in a source and answers its number; locks the source row for
   * the transaction, so changes of one source are numbered in the order they commit.
   */
  async nextChange(repositoryId: string): Promise<string> {
    const rows = await this.em.query<Array<{ seq: string }>>(
      // As a CTE so that the driver answers plain rows, as for a SELECT.
      `WITH bumped AS (UPDATE repositories SET head_seq = head_seq + 1 WHERE id = $1 RETURNING head_seq)
       SELECT head_seq::text AS seq FROM bumped`,
      [repositoryId],
    );
    return rows[0].seq;
  }

  /** Active repositories registered under a canonical URL. */
  findByCanonicalUrl(url: string): Promise<RepositoryEntity[]> {
    return this.repos.findBy({ canonicalUrl: url, isActive: true });
  }

  /** The HEAD version rows of many repositories. */
  /** Repositories by id with their HEAD versions and owners, in one statement. */
  async findRepositoryHeads(repositoryIds: readonly string[]): Promise<RepositoryHead[]> {
    const rows = await preparedQuery<{ repo: Raw; version: Raw; org: Raw; user: Raw }>(
      this.em,
      `SELECT to_json(r) AS repo, to_json(v) AS version, to_json(o) AS org, to_json(u) AS "user"
       FROM repositories r
       JOIN repository_versions v ON v.repository_id = r.id AND v.mnemonic = '${HEAD}'
       LEFT JOIN organizations o ON o.id = r.owner_org_id
       LEFT JOIN users u ON u.id = r.owner_user_id
       WHERE r.id = ANY($1::bigint[])`,
      [repositoryIds],
    );
    return rows.map((row) => ({
      repo: hydrate(this.em, RepositoryEntity, row.repo)!,
      version: hydrate(this.em, RepositoryVersionEntity, row.version)!,
      org: hydrate(this.em, OrganizationEntity, row.org),
      user: hydrate(this.em, UserEntity, row.user),
    }));
  }

  findHeads(repositoryIds: readonly string[]): Promise<RepositoryVersionEntity[]> {
    return this.versions.findBy({ repositoryId: In([...repositoryIds]), mnemonic: HEAD });
  }

  findVersion(repositoryId: string, mnemonic: string): Promise<RepositoryVersionEntity | null> {
    return this.versions.findOneBy({ repositoryId, mnemonic });
  }

  versionTaken(repositoryId: string, mnemonic: string): Promise<boolean> {
    return this.versions
      .createQueryBuilder('v')
      .where('v.repository_id = :repositoryId AND lower(v.mnemonic) = lower(:mnemonic)', {
        repositoryId,
        mnemonic,
      })
      .getExists();
  }

  /** `latest`: the newest released version. */
  latestReleased(repositoryId: string): Promise<RepositoryVersionEntity | null> {
    return this.versions
      .createQueryBuilder('v')
      .where('v.repository_id = :repositoryId AND v.released', { repositoryId })
      .orderBy('v.created_at', 'DESC')
      .addOrderBy('v.id', 'DESC')
      .getOne();
  }

  /** The most recent version other than HEAD. */
  newestVersion(repositoryId: string): Promise<RepositoryVersionEntity | null> {
    return (
      this.versions
        .createQueryBuilder('v')
        .where('v.repository_id = :repositoryId AND v.seq IS NOT NULL', { repositoryId })
        // Ids grow in the order versions are inserted, which `lockHead` serializes; created_at is
        // the start of each transaction, so two creates racing for the lock could cross over.
        .orderBy('v.id', 'DESC')
        .getOne()
    );
  }

  insertVersion(values: Partial<RepositoryVersionEntity>): Promise<RepositoryVersionEntity> {
    return this.versions.save(this.versions.create(values));
  }

  /** The row as committed, locked until the transaction ends (inside a transaction only). */
  lockVersion(versionId: string): Promise<RepositoryVersionEntity> {
    return this.versions.findOneOrFail({
      where: { id: versionId },
      lock: { mode: 'pessimistic_write' },
    });
  }

  saveVersion(version: RepositoryVersionEntity): Promise<RepositoryVersionEntity> {
    return this.versions.save(version);
  }

  async deleteVersion(versionId: string): Promise<void> {
    await this.versions.delete({ id: versionId });
  }

  /** Versions that name this one as their `previous_version`. */
  async dependentVersions(repositoryId: string, mnemonic: string): Promise<string[]> {
    const rows = await this.versions.findBy({ repositoryId, previousVersion: mnemonic });
    return rows.map((v) => v.mnemonic);
  }

  /** Versions of one repository, newest first (HEAD, the oldest, last). */
  async listVersions(
    repositoryId: string,
    window: Window,
    updatedSince?: Date,
  ): Promise<Slice<RepositoryVersionEntity>> {
    const qb = this.versions
      .createQueryBuilder('v')
      .where('v.repository_id = :repositoryId', { repositoryId })
      .orderBy('v.created_at', 'DESC')
      .addOrderBy('v.id', 'DESC');
    if (updatedSince) qb.andWhere('v.updated_at >= :updatedSince', { updatedSince });
    return sliceOf(qb, window);
  }

  /**
   * Repositories (one row per HEAD, or per version with `allVersions`) matching the search that
   * the viewer may see. Each version comes with its repository.
   */
  async search(
    filter: RepoSearch,
    viewer: Viewer,
    sort: SortSpec<RepoSortKey>,
    window: Window,
  ): Promise<Slice<{ version: RepositoryVersionEntity; repo: RepositoryEntity }>> {
    const qb = this.filtered(filter, viewer);
    const words = filter.q ? searchWords(filter.q) : [];
    const rank = words.length
      ? {
          expression: `(CASE WHEN lower(r.mnemonic) = :q THEN 100 ELSE 0 END)
             + (CASE WHEN registry_fold(r.name) LIKE :qAny THEN 30 ELSE 0 END)
             + 10 * word_similarity(:q, ${HAYSTACK})`,
          parameters: { q: words.join(' '), qAny: `%${words.join(' ')}%` },
        }
      : undefined;
    orderBy(qb, sort, ORDER, rank);
    const slice = await sliceOf(qb, window);
    return {
      total: slice.total,
      rows: slice.rows.map((v) => ({ version: v, repo: (v as VersionWithRepo).repo })),
    };
  }

  facets(filter: RepoSearch, viewer: Viewer): Promise<FacetCounts> {
    return facetsOf(this.em, this.filtered(filter, viewer), {
      sourceType: { column: 'r.source_type' },
      collectionType: { column: 'r.collection_type' },
      locale: { column: 'r.supported_locales', each: true },
      customValidationSchema: { column: 'r.custom_validation_schema' },
      ownerType: { column: `CASE WHEN r.owner_org_id IS NULL THEN 'User' ELSE 'Organization' END` },
      repoType: { column: `CASE r.kind WHEN 'source' THEN 'Source' ELSE 'Collection' END` },
    });
  }

  private filtered(filter: RepoSearch, viewer: Viewer) {
    const qb = this.versions
      .createQueryBuilder('v')
      .innerJoinAndMapOne('v.repo', RepositoryEntity, 'r', 'r.id = v.repository_id')
      .where('r.is_active')
      // A deactivated user's repositories are hidden with the account (spec core §3).
      .andWhere(
        '(r.owner_user_id IS NULL OR EXISTS (SELECT 1 FROM users ou WHERE ou.id = r.owner_user_id AND ou.is_active))',
      );
    if (!filter.allVersions) qb.andWhere(`v.mnemonic = '${HEAD}'`);
    // Public: the repository and, for an org's, the org too (a private org hides everything in it).
    const isPublic = `(r.public_access <> 'None' AND (r.owner_org_id IS NULL OR EXISTS (
      SELECT 1 FROM organizations po WHERE po.id = r.owner_org_id AND po.public_access <> 'None')))`;
    if (filter.publicOnly) qb.andWhere(isPublic);
    else if (!viewer.superuser) {
      qb.andWhere(
        `(${isPublic} OR r.owner_user_id = :viewerId OR EXISTS (
           SELECT 1 FROM org_memberships vm WHERE vm.org_id = r.owner_org_id AND vm.user_id = :viewerId)
           OR r.owner_org_id = :readerOrgId OR r.owner_user_id = :readerUserId)`,
        {
          viewerId: viewer.userId ?? '0',
          readerOrgId: viewer.owner && 'orgId' in viewer.owner ? viewer.owner.orgId : '0',
          readerUserId: viewer.owner && 'userId' in viewer.owner ? viewer.owner.userId : '0',
        },
      );
    }
    if (filter.kind) qb.andWhere('r.kind = :kind', { kind: filter.kind });
    if (filter.owner?.orgId)
      qb.andWhere('r.owner_org_id = :ownerOrgId', { ownerOrgId: filter.owner.orgId });
    if (filter.owner?.userId)
      qb.andWhere('r.owner_user_id = :ownerUserId', { ownerUserId: filter.owner.userId });
    if (filter.ofOrgsOfUserId) {
      qb.andWhere(
        'r.owner_org_id IN (SELECT m.org_id FROM org_memberships m WHERE m.user_id = :ofOrgsOf)',
        {
          ofOrgsOf: filter.ofOrgsOfUserId,
        },
      );
    }
    if (filter.ownerType === 'Organization') qb.andWhere('r.owner_org_id IS NOT NULL');
    if (filter.ownerType === 'User') qb.andWhere('r.owner_user_id IS NOT NULL');
    if (filter.q) whereWordsMatch(qb, HAYSTACK, searchWords(filter.q));
    whereAnyOf(qb, 'r.source_type', filter.sourceType, 'sourceType');
    whereAnyOf(qb, 'r.collection_type', filter.collectionType, 'collectionType');
    whereAnyOf(qb, 'r.custom_validation_schema', filter.customValidationSchema, 'schema');
    if (filter.canonicalUrl?.length)
      qb.andWhere('r.canonical_url IN (:...canonicalUrl)', { canonicalUrl: filter.canonicalUrl });
    if (filter.locale?.length) {
      qb.andWhere('r.supported_locales && :locales::text[]', { locales: filter.locale });
    }
    if (filter.contains?.length) {
      const held = (filter.containsVersions ?? []).map((item, i) => {
        const [members, object, version, versions] =
          item.resource === 'c'
            ? ['expansion_concepts', 'concept_id', 'concept_version_id', 'concept_versions']
            : ['expansion_mappings', 'mapping_id', 'mapping_version_id', 'mapping_versions'];
        qb.setParameter(`heldVersion${i}`, item.versionId);
        qb.setParameter(`heldCode${i}`, item.code);
        // A member without a version follows its object's current version.
        return `EXISTS (SELECT 1 FROM ${versions} h JOIN ${members} x ON x.${object} = h.${object}
            WHERE h.id = :heldVersion${i} AND h.mnemonic = :heldCode${i}
              AND x.expansion_id = v.expansion_id
              AND (x.${version} = h.id OR (x.${version} IS NULL AND h.valid_to_seq IS NULL)))`;
      });
      qb.andWhere(
        `(EXISTS (SELECT 1 FROM collection_references cr WHERE cr.collection_id = r.id AND cr.include
           AND cr.expression IN (:...contains) AND cr.valid_from_seq <= coalesce(v.seq, r.head_seq)
           AND (cr.valid_to_seq IS NULL OR cr.valid_to_seq > coalesce(v.seq, r.head_seq)))
           ${held.map((condition) => `OR ${condition}`).join('\n           ')})`,
        { contains: filter.contains },
      );
    }
    whereExtras(qb, 'r.extras', filter.extras);
    if (filter.updatedSince)
      qb.andWhere('r.updated_at >= :updatedSince', { updatedSince: filter.updatedSince });
    return qb;
  }

  /** Version records per repository, HEAD included. */
  async versionCounts(repositoryIds: readonly string[]): Promise<Map<string, number>> {
    const rows = await this.em.query<Array<{ id: string; versions: number }>>(
      `SELECT repository_id::text AS id, count(*)::int AS versions FROM repository_versions
       WHERE repository_id = ANY($1::bigint[]) GROUP BY repository_id`,
      [repositoryIds],
    );
    return new Map(rows.map((r) => [r.id, r.versions]));
  }

  /**
   * The newest version (never HEAD) of a repository that holds a content version current for
   * the changes `fromSeq <= s < toSeq` (spec core §2.6/§2.7 `latest_source_version`), for each
   * key `repositoryId:fromSeq:toSeq` (`toSeq` empty while current); null when none holds it.
   */
  async latestVersionsHolding(keys: readonly string[]): Promise<Map<string, string | null>> {
    const rows = await this.em.query<Array<{ key: string; mnemonic: string | null }>>(
      `SELECT k.key, ${newestVersionHoldingSql(
        `split_part(k.key, ':', 1)::bigint`,
        `split_part(k.key, ':', 2)::bigint`,
        `NULLIF(split_part(k.key, ':', 3), '')::bigint`,
      )} AS mnemonic
       FROM unnest($1::text[]) AS k(key)`,
      [keys],
    );
    return new Map(rows.map((r) => [r.key, r.mnemonic]));
  }

  /**
   * Active (not retired) concepts and mappings as each version sees them: HEAD's are kept on the
   * repository row by triggers, a frozen version's were copied when it was made. O(1) each.
   */
  async contentCounts(
    versionIds: readonly string[],
    viewer: Viewer,
  ): Promise<Map<string, ContentCounts>> {
    // Sources (and what collections there are) first, by a statement planned once; only
    // collection versions need the statement counting members, whose plan costs milliseconds.
    const kept = await preparedQuery<{
      id: string;
      collection: boolean;
      concepts: number;
      mappings: number;
    }>(
      this.em,
      `SELECT v.id::text AS id, r.kind = 'collection' AS collection,
         CASE WHEN v.seq IS NULL THEN r.active_concepts ELSE coalesce(v.active_concepts, 0) END AS concepts,
         CASE WHEN v.seq IS NULL THEN r.active_mappings ELSE coalesce(v.active_mappings, 0) END AS mappings
       FROM repository_versions v JOIN repositories r ON r.id = v.repository_id
       WHERE v.id = ANY($1::bigint[])`,
      [versionIds],
    );
    const counts = new Map(
      kept
        .filter((r) => !r.collection)
        .map((r) => [r.id, { activeConcepts: r.concepts, activeMappings: r.mappings }]),
    );
    const collections = kept.filter((r) => r.collection).map((r) => r.id);
    if (collections.length === 0) return counts;
    const params: unknown[] = [collections];
    const visible = (alias: string): string => visibleRepository(alias, viewer, params);
    const rows = await this.em.query<Array<{ id: string; concepts: number; mappings: number }>>(
      // A collection version holds what its expansion holds (dynamic members read at HEAD).
      `SELECT v.id::text AS id,
         CASE WHEN v.expansion_id IS NULL THEN 0
           ELSE ${activeMembersSql('c', 'v.expansion_id', visible)} END AS concepts,
         CASE WHEN v.expansion_id IS NULL THEN 0
           ELSE ${activeMembersSql('m', 'v.expansion_id', visible)} END AS mappings
       FROM repository_versions v
       WHERE v.id = ANY($1::bigint[])`,
      params,
    );
    for (const r of rows)
      counts.set(r.id, { activeConcepts: r.concepts, activeMappings: r.mappings });
    return counts;
  }
}

interface VersionWithRepo extends RepositoryVersionEntity {
  repo: RepositoryEntity;
}

/**
 * SQL for the mnemonic of the newest version (never HEAD) of `repositoryId` that holds content
 * current for the changes `fromSeq <= s < toSeq` (`toSeq` null while current): spec core
 * §2.6/§2.7 `latest_source_version`. Arguments are SQL expressions.
 */
export function newestVersionHoldingSql(
  repositoryId: string,
  fromSeq: string,
  toSeq: string,
): string {
  return `(SELECT hv.mnemonic FROM repository_versions hv
    WHERE hv.repository_id = ${repositoryId} AND hv.seq IS NOT NULL AND hv.seq >= ${fromSeq}
      AND (${toSeq} IS NULL OR hv.seq < ${toSeq})
    ORDER BY hv.seq DESC, hv.id DESC LIMIT 1)`;
}
