import { In, type EntityManager, type Repository, type SelectQueryBuilder } from 'typeorm';
import { ConceptEntity, ConceptVersionEntity } from '../db/entities';
import { atChange, VersionedRepository } from './versioned.repository';
import {
  orderBy,
  searchWords,
  sliceOf,
  whereAnyOf,
  whereExtras,
  whereWordsMatch,
  type ExtrasFilter,
  type FacetCounts,
  type Slice,
  type SortSpec,
  type Window,
} from './list';

export type ConceptSortKey =
  'bestMatch' | 'lastUpdate' | 'name' | 'id' | 'datatype' | 'conceptClass';

export interface ConceptSearch {
  q?: string;
  conceptClass?: string[];
  datatype?: string[];
  /** Concepts having a name in any of these locales. */
  locale?: string[];
  includeRetired?: boolean;
  updatedSince?: Date;
  extras?: ExtrasFilter;
  /** Let `q` words match by trigram similarity too (typos), not only as substrings. */
  fuzzy?: boolean;
}

const ORDER: Record<ConceptSortKey, string[]> = {
  bestMatch: ['cv.mnemonic', 'cv.id'],
  lastUpdate: ['cv.created_at', 'cv.id'],
  name: ['cv.display_name', 'cv.id'],
  id: ['cv.mnemonic', 'cv.id'],
  datatype: ['cv.datatype', 'cv.mnemonic'],
  conceptClass: ['cv.concept_class', 'cv.mnemonic'],
};

/** Concepts (the versioned objects) and their versions, as of HEAD or a frozen change number. */
export class ConceptRepository extends VersionedRepository<ConceptVersionEntity> {
  private readonly concepts: Repository<ConceptEntity>;

  constructor(em: EntityManager) {
    super(em, ConceptVersionEntity, {
      table: 'concept_versions',
      alias: 'cv',
      key: 'concept_id',
      keyProperty: 'conceptId',
    });
    this.concepts = em.getRepository(ConceptEntity);
  }

  /**
   * The next free number for a sequential id scheme: above every numeric id (or external id) of
   * the source's concepts, and at least `from`.
   */
  async nextNumericId(
    repositoryId: string,
    column: 'mnemonic' | 'external_id',
    from: number,
  ): Promise<string> {
    const source =
      column === 'mnemonic'
        ? `SELECT mnemonic AS value FROM concepts WHERE repository_id = $1`
        : `SELECT external_id AS value FROM concept_versions WHERE repository_id = $1`;
    const rows = await this.em.query<Array<{ next: string }>>(
      `SELECT greatest($2::numeric, coalesce(max(value::numeric) + 1, $2::numeric))::text AS next
       FROM (${source}) ids WHERE value ~ '^[0-9]{1,30}$'`,
      [repositoryId, from],
    );
    return rows[0].next;
  }

  findConcept(repositoryId: string, mnemonic: string): Promise<ConceptEntity | null> {
    return this.concepts.findOneBy({ repositoryId, mnemonic });
  }

  insertConcept(values: Partial<ConceptEntity>): Promise<ConceptEntity> {
    return this.concepts.save(this.concepts.create(values));
  }

  /** The current (HEAD) version of each concept. */
  currentVersions(conceptIds: readonly string[]): Promise<ConceptVersionEntity[]> {
    if (conceptIds.length === 0) return Promise.resolve([]);
    return this.versions
      .createQueryBuilder('cv')
      .where('cv.concept_id IN (:...conceptIds) AND cv.valid_to_seq IS NULL', {
        conceptIds: [...conceptIds],
      })
      .getMany();
  }

  findConceptsByIds(ids: readonly string[]): Promise<ConceptEntity[]> {
    return this.concepts.findBy({ id: In([...ids]) });
  }

  /** The concepts of a source as HEAD (`seq` null) or a version sees them. */
  /**
   * Concepts of one source as HEAD (`seq` null) or a version sees them; or, with `scope`
   * `public`, the current concepts of every public source (spec core §4.3 `/concepts/`).
   */
  async search(
    where: ConceptScope,
    filter: ConceptSearch,
    sort: SortSpec<ConceptSortKey>,
    window: Window,
  ): Promise<Slice<ConceptVersionEntity>> {
    const qb = this.filtered(where, filter);
    const words = filter.q ? searchWords(filter.q) : [];
    const rank = words.length
      ? {
          // An exact id first, then an exact name, then name prefixes, then similarity.
          expression: `(CASE WHEN lower(cv.mnemonic) = :q THEN 100 ELSE 0 END)
             + (CASE WHEN registry_fold(coalesce(cv.display_name, '')) = :q THEN 50 ELSE 0 END)
             + (CASE WHEN registry_fold(coalesce(cv.display_name, '')) LIKE :qPrefix THEN 20 ELSE 0 END)
             + 10 * word_similarity(:q, lower(coalesce(cv.display_name, '')))`,
          parameters: { q: words.join(' '), qPrefix: `${words.join(' ')}%` },
        }
      : undefined;
    orderBy(qb, sort, ORDER, rank);
    return sliceOf(qb, window);
  }

  /** `[value, count]` per facet over the same filtered concepts (spec core §2.1). */
  async facets(where: ConceptScope, filter: ConceptSearch): Promise<FacetCounts> {
    const facets: FacetCounts = {};
    const expressions: Record<string, string> = {
      conceptClass: 'cv.concept_class',
      datatype: 'cv.datatype',
      locale: `jsonb_array_elements(cv.names)->>'locale'`,
      retired: 'cv.retired::text',
      source: '(SELECT fr.mnemonic FROM repositories fr WHERE fr.id = cv.repository_id)',
      owner: `(SELECT coalesce(fo.mnemonic, fu.username) FROM repositories fr
                 LEFT JOIN organizations fo ON fo.id = fr.owner_org_id
                 LEFT JOIN users fu ON fu.id = fr.owner_user_id WHERE fr.id = cv.repository_id)`,
    };
    for (const [name, expression] of Object.entries(expressions)) {
      const rows = await this.filtered(where, filter)
        .select(expression, 'value')
        .addSelect('count(DISTINCT cv.id)::int', 'count')
        .groupBy('value')
        .orderBy('count', 'DESC')
        .addOrderBy('value', 'ASC')
        .limit(100)
        .getRawMany<{ value: string | null; count: number }>();
      facets[name] = rows.filter((r) => r.value !== null).map((r) => [String(r.value), r.count]);
    }
    return facets;
  }

  private filtered(
    where: ConceptScope,
    filter: ConceptSearch,
  ): SelectQueryBuilder<ConceptVersionEntity> {
    const qb = this.versions.createQueryBuilder('cv');
    if (where.scope === 'source') {
      qb.where('cv.repository_id = :repositoryId', { repositoryId: where.repositoryId });
      atChange(qb, 'cv', where.seq);
    } else {
      // Public, active sources of public orgs or active users; HEAD only.
      qb.innerJoin('repositories', 'r', 'r.id = cv.repository_id')
        .where(
          `cv.valid_to_seq IS NULL AND r.kind = 'source' AND r.is_active AND r.public_access <> 'None'`,
        )
        .andWhere(
          `(r.owner_org_id IS NULL OR EXISTS (SELECT 1 FROM organizations po WHERE po.id = r.owner_org_id AND po.public_access <> 'None'))`,
        )
        .andWhere(
          `(r.owner_user_id IS NULL OR EXISTS (SELECT 1 FROM users pu WHERE pu.id = r.owner_user_id AND pu.is_active))`,
        );
      if (where.sources?.length)
        qb.andWhere('r.mnemonic IN (:...sources)', { sources: where.sources });
      if (where.ownerUsers?.length) {
        qb.andWhere(
          'r.owner_user_id IN (SELECT id FROM users WHERE username IN (:...ownerUsers))',
          {
            ownerUsers: where.ownerUsers,
          },
        );
      }
      where.mapsTo?.forEach((target, i) => {
        qb.andWhere(
          `EXISTS (SELECT 1 FROM mapping_versions mm WHERE mm.from_concept_id = cv.concept_id
             AND mm.valid_to_seq IS NULL AND NOT mm.retired AND mm.to_concept_code = :mapCode${i}
             AND mm.to_source_url IN (:...mapSources${i}))`,
          { [`mapCode${i}`]: target.code, [`mapSources${i}`]: target.sourceUrls },
        );
      });
      if (where.ownerOrgs?.length) {
        qb.andWhere(
          'r.owner_org_id IN (SELECT id FROM organizations WHERE mnemonic IN (:...ownerOrgs))',
          {
            ownerOrgs: where.ownerOrgs,
          },
        );
      }
    }
    if (!filter.includeRetired) qb.andWhere('NOT cv.retired');
    const words = filter.q ? searchWords(filter.q) : [];
    if (words.length) whereWordsMatch(qb, 'cv.search_text', words, filter.fuzzy ?? false);
    whereAnyOf(qb, 'cv.concept_class', filter.conceptClass, 'conceptClass');
    whereAnyOf(qb, 'cv.datatype', filter.datatype, 'datatype');
    if (filter.locale?.length) {
      qb.andWhere(
        `(${filter.locale.map((_, i) => `cv.names @> :loc${i}::jsonb`).join(' OR ')})`,
        Object.fromEntries(
          filter.locale.map((l, i) => [`loc${i}`, JSON.stringify([{ locale: l }])]),
        ),
      );
    }
    if (filter.updatedSince)
      qb.andWhere('cv.created_at >= :updatedSince', { updatedSince: filter.updatedSince });
    whereExtras(qb, 'cv.extras', filter.extras);
    return qb;
  }
}

/** Where concepts are listed from: one source at a change, or every public source. */
export type ConceptScope =
  | { scope: 'source'; repositoryId: string; seq: string | null }
  | {
      scope: 'public';
      sources?: string[];
      ownerUsers?: string[];
      ownerOrgs?: string[];
      /** Concepts with a current mapping to one of these ends (source URLs and a code). */
      mapsTo?: Array<{ sourceUrls: string[]; code: string }>;
    };
