import { In, type EntityManager, type Repository } from 'typeorm';
import {
  MembershipEntity,
  OrganizationEntity,
  type MemberRole,
  type PublicAccess,
} from '../db/entities';
import {
  facetsOf,
  orderBy,
  searchWords,
  sliceOf,
  whereAnyOf,
  whereExtras,
  whereWordsMatch,
  type ExtrasFilter,
  type Facet,
  type FacetCounts,
  type Slice,
  type SortSpec,
  type Viewer,
  type Window,
} from './list';

export type OrgSortKey = 'bestMatch' | 'lastUpdate' | 'name' | 'id' | 'dateCreated';

export interface OrgSearch {
  q?: string;
  company?: string[];
  location?: string[];
  updatedSince?: Date;
  /** Only orgs this user belongs to. */
  memberUserId?: string;
  extras?: ExtrasFilter;
}

export interface OrgCounts {
  members: number;
  publicSources: number;
  publicCollections: number;
}

const HAYSTACK = `registry_fold(o.mnemonic || ' ' || o.name || ' ' || coalesce(o.company, ''))`;
const ORDER: Record<OrgSortKey, string[]> = {
  bestMatch: ['o.mnemonic'],
  lastUpdate: ['o.updated_at', 'o.id'],
  dateCreated: ['o.created_at', 'o.id'],
  name: ['o.name', 'o.mnemonic'],
  id: ['o.mnemonic'],
};
const FACETS: Record<string, Facet> = {
  company: { column: 'o.company' },
  location: { column: 'o.location' },
};

export class OrgRepository {
  private readonly repo: Repository<OrganizationEntity>;
  private readonly members: Repository<MembershipEntity>;

  constructor(private readonly em: EntityManager) {
    this.repo = em.getRepository(OrganizationEntity);
    this.members = em.getRepository(MembershipEntity);
  }

  findByMnemonic(mnemonic: string): Promise<OrganizationEntity | null> {
    return this.repo.findOneBy({ mnemonic });
  }

  findByIds(ids: readonly string[]): Promise<OrganizationEntity[]> {
    return this.repo.findBy({ id: In([...ids]) });
  }

  mnemonicTaken(mnemonic: string): Promise<boolean> {
    return this.repo
      .createQueryBuilder('o')
      .where('lower(o.mnemonic) = lower(:mnemonic)', { mnemonic })
      .getExists();
  }

  insert(values: Partial<OrganizationEntity>): Promise<OrganizationEntity> {
    return this.repo.save(this.repo.create(values));
  }

  /**
   * The row as committed, locked until the transaction ends (inside a transaction only):
   * serializes edits and membership changes of one org.
   */
  lock(orgId: string): Promise<OrganizationEntity> {
    return this.repo.findOneOrFail({ where: { id: orgId }, lock: { mode: 'pessimistic_write' } });
  }

  save(org: OrganizationEntity): Promise<OrganizationEntity> {
    return this.repo.save(org);
  }

  async delete(orgId: string): Promise<void> {
    await this.repo.delete({ id: orgId });
  }

  async search(
    filter: OrgSearch,
    viewer: Viewer,
    sort: SortSpec<OrgSortKey>,
    window: Window,
  ): Promise<Slice<OrganizationEntity>> {
    const qb = this.filtered(filter, viewer);
    const words = filter.q ? searchWords(filter.q) : [];
    const rank = words.length
      ? {
          expression: `(CASE WHEN lower(o.mnemonic) = :q THEN 100 ELSE 0 END)
             + (CASE WHEN registry_fold(o.name) LIKE :qAny THEN 30 ELSE 0 END)
             + 10 * word_similarity(:q, ${HAYSTACK})`,
          parameters: { q: words.join(' '), qAny: `%${words.join(' ')}%` },
        }
      : undefined;
    orderBy(qb, sort, ORDER, rank);
    return sliceOf(qb, window);
  }

  facets(filter: OrgSearch, viewer: Viewer): Promise<FacetCounts> {
    return facetsOf(this.em, this.filtered(filter, viewer), FACETS);
  }

  private filtered(filter: OrgSearch, viewer: Viewer) {
    const qb = this.repo.createQueryBuilder('o');
    if (!viewer.superuser) {
      // A private org (public_access None) is seen only by its members.
      qb.andWhere(
        `(o.public_access <> 'None' OR EXISTS (
           SELECT 1 FROM org_memberships vm WHERE vm.org_id = o.id AND vm.user_id = :viewerId))`,
        { viewerId: viewer.userId ?? '0' },
      );
    }
    if (filter.q) whereWordsMatch(qb, HAYSTACK, searchWords(filter.q));
    whereAnyOf(qb, 'o.company', filter.company, 'company');
    whereAnyOf(qb, 'o.location', filter.location, 'location');
    whereExtras(qb, 'o.extras', filter.extras);
    if (filter.updatedSince)
      qb.andWhere('o.updated_at >= :updatedSince', { updatedSince: filter.updatedSince });
    if (filter.memberUserId) {
      qb.innerJoin(MembershipEntity, 'm', 'm.org_id = o.id AND m.user_id = :memberUserId', {
        memberUserId: filter.memberUserId,
      });
    }
    return qb;
  }

  /** The roles of one user in many orgs: org id → role (absent = not a member). */
  async rolesOf(userId: string, orgIds: readonly string[]): Promise<Map<string, MemberRole>> {
    const rows = await this.members.findBy({ userId, orgId: In([...orgIds]) });
    return new Map(rows.map((m) => [m.orgId, m.role]));
  }

  findMembership(orgId: string, userId: string): Promise<MembershipEntity | null> {
    return this.members.findOneBy({ orgId, userId });
  }

  async upsertMembership(orgId: string, userId: string, role: MemberRole): Promise<void> {
    await this.members.upsert({ orgId, userId, role }, ['orgId', 'userId']);
  }

  async deleteMembership(orgId: string, userId: string): Promise<void> {
    await this.members.delete({ orgId, userId });
  }

  countAdmins(orgId: string): Promise<number> {
    return this.members.countBy({ orgId, role: 'admin' });
  }

  async countsFor(orgIds: readonly string[]): Promise<Map<string, OrgCounts>> {
    const rows = await this.em.query<CountRow[]>(
      `SELECT o.id::text AS id, ${COUNT_COLUMNS} FROM organizations o WHERE o.id = ANY($1::bigint[])`,
      [orgIds],
    );
    return new Map(rows.map((r) => [r.id, countsOf(r)]));
  }

  /** The org and its counts in one round trip: the hot path of every org detail read. */
  async findWithCounts(
    mnemonic: string,
  ): Promise<{ org: OrganizationEntity; counts: OrgCounts } | null> {
    const rows = await this.em.query<Array<OrgRow & CountRow>>(
      `SELECT o.id::text AS id, o.mnemonic, o.name, o.company, o.website, o.location, o.public_access,
         o.extras, o.created_at, o.updated_at, o.created_by, o.updated_by, ${COUNT_COLUMNS}
       FROM organizations o WHERE o.mnemonic = $1`,
      [mnemonic],
    );
    if (rows.length === 0) return null;
    const row = rows[0];
    const org = this.repo.create({
      id: row.id,
      mnemonic: row.mnemonic,
      name: row.name,
      company: row.company,
      website: row.website,
      location: row.location,
      publicAccess: row.public_access,
      extras: row.extras,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      createdBy: row.created_by,
      updatedBy: row.updated_by,
    });
    return { org, counts: countsOf(row) };
  }
}

/** Counts shown on an org: active members, and public active repositories by kind. */
const COUNT_COLUMNS = `
  (SELECT count(*)::int FROM org_memberships m JOIN users u ON u.id = m.user_id
    WHERE m.org_id = o.id AND u.is_active) AS members,
  (SELECT count(*)::int FROM repositories r WHERE r.owner_org_id = o.id AND r.kind = 'source'
    AND r.is_active AND r.public_access <> 'None') AS public_sources,
  (SELECT count(*)::int FROM repositories r WHERE r.owner_org_id = o.id AND r.kind = 'collection'
    AND r.is_active AND r.public_access <> 'None') AS public_collections`;

interface CountRow {
  id: string;
  members: number;
  public_sources: number;
  public_collections: number;
}

interface OrgRow {
  mnemonic: string;
  name: string;
  company: string | null;
  website: string | null;
  location: string | null;
  public_access: PublicAccess;
  extras: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  created_by: string | null;
  updated_by: string | null;
}

function countsOf(row: CountRow): OrgCounts {
  return {
    members: row.members,
    publicSources: row.public_sources,
    publicCollections: row.public_collections,
  };
}
