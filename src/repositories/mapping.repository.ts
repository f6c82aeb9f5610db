import { type EntityManager, type Repository, type SelectQueryBuilder } from 'typeorm';
import { MappingEntity, MappingVersionEntity } from '../db/entities';
import { insertRows } from './bulk';
import { memberVersionsQuery } from './collection.repository';
import { entitiesByIds, hydrate, jsonColumns, rowsOfParts, type Part, type Raw } from './hydrate';
import { atChange, VersionedRepository } from './versioned.repository';
import {
  facetsOf,
  keyColumns,
  likeLiteral,
  named,
  repositoryFacet,
  orderBy,
  searchWords,
  narrowSliceOf,
  rankedSliceOf,
  visibleRepository,
  type RankTop,
  whereAnyOf,
  whereExtras,
  type ExtrasFilter,
  type FacetCounts,
  type KeyColumn,
  type KeyType,
  type KeyTypes,
  type Listing,
  type Slice,
  type SortSpec,
  type Viewer,
  type Window,
} from './list';

export type MappingSortKey = 'bestMatch' | 'lastUpdate' | 'id' | 'mapType' | 'sortWeight';

/** spec core §4.4 mapping list filters. */
export interface MappingSearch {
  /**
   * Words every mapping must hold (`whereWordsFound`), and who reads: the names of end concepts
   * are searched in the sources this viewer may see only.
   */
  q?: { text: string; viewer: Viewer };
  includeRetired?: boolean;
  mapType?: string[];
  updatedSince?: Date;
  updatedBy?: string[];
  /** Codes of either end / of the from end / of the to end. */
  concept?: string[];
  fromConcept?: string[];
  toConcept?: string[];
  /** Source ids (short codes) of either end / the from end / the to end. */
  conceptSource?: string[];
  fromConceptSource?: string[];
  toConceptSource?: string[];
  /** Owners (org ids or usernames) of the source of the from end / the to end. */
  fromConceptOwner?: string[];
  toConceptOwner?: string[];
  /** The kind of owner of the source of the from end / the to end. */
  fromConceptOwnerType?: Array<'Organization' | 'User'>;
  toConceptOwnerType?: Array<'Organization' | 'User'>;
  extras?: ExtrasFilter;
  /** Mappings of these ids (a collection member by its id). */
  ids?: string[];
}

/** Where mappings are listed from. */
export type MappingScope =
  | { scope: 'source'; repositoryId: string; seq: string | null }
  /** The members of a collection's expansion held in these (visible) repositories. */
  | { scope: 'expansion'; expansionId: string; repositoryIds: string[] }
  /** The mappings of a source (as of a change) that start at (or, inverse, end at) one concept. */
  | {
      scope: 'concept';
      repositoryId?: string;
      conceptId: string;
      inverse: boolean;
      seq: string | null;
    }
  /**
   * Current mappings of every public source; `owners` narrows to sources of these owners,
   * `sources` and `notSources` to sources of (not of) these ids.
   */
  | {
      scope: 'public';
      owners?: string[];
      ownerType?: 'Organization' | 'User';
      sources?: string[];
      notSources?: string[];
    };

const ORDER: Record<MappingSortKey, string[]> = {
  // Map type case-insensitively, then exactly: the order of the indexes `…_listed`, which answer
  // a `mapType` filter (`lower(map_type) IN …`) in this order too.
  bestMatch: ['lower(mv.map_type)', 'mv.map_type', 'mv.sort_weight', 'mv.id'],
  lastUpdate: ['mv.created_at', 'mv.id'],
  id: ['mv.mnemonic', 'mv.id'],
  mapType: ['lower(mv.map_type)', 'mv.map_type', 'mv.sort_weight', 'mv.id'],
  sortWeight: ['mv.sort_weight', 'mv.id'],
};

/** The columns of `ORDER` as keyset paging compares them. */
const KEY_TYPES: KeyTypes = {
  'lower(mv.map_type)': { type: 'text', nullable: true },
  'mv.map_type': { type: 'text', nullable: true },
  'mv.sort_weight': { type: 'number', nullable: true },
  'mv.id': { type: 'id' },
  'mv.created_at': { type: 'time' },
  'mv.mnemonic': { type: 'text' },
};

/**
 * The rank of a mapping for `q` (best match first), from its words as `searchWords` folds them:
 * the whole query equal to its id or an end's code (100), then the share of the words that begin
 * a word of its own text (id, map type, the ends' codes and stored names; up to 10), then the
 * list's order. A few `LIKE`s a row: trigram word similarity to the whole text cost about 20 µs
 * a row (a word of 10,000 mappings: 222 → 140 ms p50, `concept-search` benchmark part e), and
 * scored a mapping found by its concept's name by how its codes happened to look. A mapping whose
 * own text has none of the words (most of a common name word's matches) ranks 0 on its `LIKE`s
 * alone, without the three `lower()`s.
 *
 * An id or code counts as equal only when the own text has a word too, so that every mapping
 * ranked above 0 is one whose own text has a word (`topOf`): PostgreSQL's `lower()` and the words'
 * fold differ on a few letters (a Greek final sigma: the text of the id `ΑΣ` holds `ας`, its
 * `lower()` is `ασ`), and such an id, equal by one and not by the other, ranked 100 outside the
 * top (e52807f).
 */
function rankOf(words: string[]): { expression: string; parameters: Record<string, unknown> } {
  const parameters: Record<string, unknown> = { q: words.join(' ') };
  const inOwn = words.map((word, i) => {
    parameters[`rFirst${i}`] = `${likeLiteral(word)}%`;
    parameters[`rWord${i}`] = `% ${likeLiteral(word)}%`;
    return `(${inOwnText(i, 'r')})`;
  });
  const starts = inOwn.map((own) => `(CASE WHEN ${own} THEN 1 ELSE 0 END)`);
  return {
    expression: `(CASE WHEN ${inOwn.join(' OR ')}
         THEN (CASE WHEN lower(mv.mnemonic) = :q OR lower(mv.from_concept_code) = :q
                 OR lower(mv.to_concept_code) = :q THEN 100 ELSE 0 END)
           + 10.0::float8 * (${starts.join(' + ')}) / ${words.length}
         ELSE 0::float8 END)`,
    parameters,
  };
}

/** The sort keys of a search's order: the rank first when best match orders a search with words. */
function keysOf(filter: MappingSearch, sort: SortSpec<MappingSortKey>): KeyColumn[] {
  const words = filter.q ? searchWords(filter.q.text) : [];
  return keyColumns(sort, ORDER, KEY_TYPES, words.length ? rankOf(words) : undefined);
}

/** Mappings (the versioned objects) and their versions, as of HEAD or a frozen change. */
export class MappingRepository extends VersionedRepository<MappingVersionEntity> {
  private readonly mappings: Repository<MappingEntity>;

  constructor(em: EntityManager) {
    super(em, MappingVersionEntity, {
      table: 'mapping_versions',
      alias: 'mv',
      key: 'mapping_id',
      keyProperty: 'mappingId',
    });
    this.mappings = em.getRepository(MappingEntity);
  }

  findMapping(repositoryId: string, mnemonic: string): Promise<MappingEntity | null> {
    return this.mappings.findOneBy({ repositoryId, mnemonic });
  }

  findMappingsByIds(ids: readonly string[]): Promise<MappingEntity[]> {
    return entitiesByIds(this.em, MappingEntity, ids);
  }

  /** The current (HEAD) version of each mapping. */
  currentVersionsOf(mappingIds: readonly string[]): Promise<MappingVersionEntity[]> {
    if (mappingIds.length === 0) return Promise.resolve([]);
    return this.versions
      .createQueryBuilder('mv')
      .where('mv.mapping_id IN (:...mappingIds) AND mv.valid_to_seq IS NULL', {
        mappingIds: [...mappingIds],
      })
      .getMany();
  }

  /** Inserts many mappings in one statement; their ids by mnemonic. */
  async insertMappings(
    values: ReadonlyArray<Partial<MappingEntity>>,
  ): Promise<Map<string, string>> {
    const rows = await insertRows(this.em, MappingEntity, values, ['id', 'mnemonic']);
    return new Map(rows.map((row) => [row.mnemonic, row.id]));
  }

  /**
   * Of many end tuples (spec core §2.7 uniqueness), those a current, active mapping of the
   * source already holds: its mapping id and mnemonic by the tuple's index.
   */
  async duplicatesOf(
    repositoryId: string,
    ends: ReadonlyArray<{
      mapType: string;
      fromCode: string | null;
      fromSourceUrl: string | null;
      toCode: string | null;
      toSourceUrl: string | null;
    }>,
  ): Promise<Map<number, { mappingId: string; mnemonic: string }>> {
    if (ends.length === 0) return new Map();
    const rows = await this.em.query<Array<{ i: number; id: string; mnemonic: string }>>(
      // LATERAL … LIMIT 1: one probe of the ends index a tuple, whatever the statistics say (a
      // hash join would read every current mapping of the source for each batch). A source
      // holds at most one such mapping (what this check keeps true).
      `SELECT k.i, mv.id, mv.mnemonic
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
         WITH ORDINALITY AS k(map_type, from_code, from_url, to_code, to_url, i)
       CROSS JOIN LATERAL (
         SELECT m.mapping_id::text AS id, m.mnemonic FROM mapping_versions m
         WHERE m.repository_id = $1 AND m.valid_to_seq IS NULL
           AND NOT m.retired AND m.map_type = k.map_type
           AND coalesce(m.from_concept_code, '') = coalesce(k.from_code, '')
           AND coalesce(m.to_concept_code, '') = coalesce(k.to_code, '')
           AND m.from_concept_code IS NOT DISTINCT FROM k.from_code
           AND m.from_source_url IS NOT DISTINCT FROM k.from_url
           AND m.to_concept_code IS NOT DISTINCT FROM k.to_code
           AND m.to_source_url IS NOT DISTINCT FROM k.to_url
         LIMIT 1) mv`,
      [
        repositoryId,
        ends.map((e) => e.mapType),
        ends.map((e) => e.fromCode),
        ends.map((e) => e.fromSourceUrl),
        ends.map((e) => e.toCode),
        ends.map((e) => e.toSourceUrl),
      ],
    );
    return new Map(rows.map((r) => [Number(r.i) - 1, { mappingId: r.id, mnemonic: r.mnemonic }]));
  }

  insertMapping(values: Partial<MappingEntity>): Promise<MappingEntity> {
    return this.mappings.save(this.mappings.create(values));
  }

  /** Mappings of a source (as of a change) from — or, inverse, to — any of these concepts. */
  ofConcepts(
    repositoryId: string,
    seq: string | null,
    conceptIds: readonly string[],
    inverse: boolean,
  ): Promise<MappingVersionEntity[]> {
    return this.ofConceptsQuery({ repositoryId, seq, conceptIds, inverse }).getMany();
  }

  /**
   * `ofConcepts` of several sources (or changes, or directions) in one statement: each group's
   * mappings in its order, with the mapping each version is of (`parents`).
   */
  ofConceptGroups(
    groups: ReadonlyArray<{
      repositoryId: string;
      seq: string | null;
      conceptIds: readonly string[];
      inverse: boolean;
    }>,
  ): Promise<Array<Part<MappingVersionEntity, MappingEntity>>> {
    return rowsOfParts(
      this.em,
      MappingVersionEntity,
      groups.map((g) => this.ofConceptsQuery(g).select('mv.id', 'key').getQueryAndParameters()),
      { target: MappingEntity, column: 'mapping_id' },
    );
  }

  private ofConceptsQuery(g: {
    repositoryId: string;
    seq: string | null;
    conceptIds: readonly string[];
    inverse: boolean;
  }): SelectQueryBuilder<MappingVersionEntity> {
    const { repositoryId, seq, conceptIds, inverse } = g;
    const qb = this.versions
      .createQueryBuilder('mv')
      .where(
        // The ids as one array parameter: one text (and one plan) for any number of them.
        `mv.repository_id = :repositoryId AND mv.${inverse ? 'to' : 'from'}_concept_id = ANY(CAST(:conceptIds AS bigint[]))`,
        {
          repositoryId,
          conceptIds: [...conceptIds],
        },
      )
      .andWhere('NOT mv.retired')
      .orderBy('mv.map_type', 'ASC')
      .addOrderBy('mv.sort_weight', 'ASC')
      .addOrderBy('mv.id', 'ASC');
    atChange(qb, 'mv', seq);
    return qb;
  }

  /**
   * The next free number for sequential mapping ids (or external ids): above every numeric id
   * (or external id, of any version) of the source's mappings, and at least `from`.
   */
  async nextNumericId(
    repositoryId: string,
    from: number,
    column: 'mnemonic' | 'external_id' = 'mnemonic',
  ): Promise<string> {
    const source =
      column === 'mnemonic'
        ? `SELECT mnemonic AS value FROM mappings WHERE repository_id = $1`
        : `SELECT external_id AS value FROM mapping_versions WHERE repository_id = $1`;
    const rows = await this.em.query<Array<{ next: string }>>(
      `SELECT greatest($2::numeric, coalesce(max(value::numeric) + 1, $2::numeric))::text AS next
       FROM (${source}) ids WHERE value ~ '^[0-9]{1,30}$'`,
      [repositoryId, from],
    );
    return rows[0].next;
  }

  /**
   * Another current mapping of the source with the same map type and ends (the reference
   * implementation's uniqueness rule), other than `exceptMappingId`.
   */
  async duplicateOf(
    repositoryId: string,
    ends: {
      mapType: string;
      fromCode: string | null;
      fromSourceUrl: string | null;
      toCode: string | null;
      toSourceUrl: string | null;
    },
    exceptMappingId?: string,
  ): Promise<string | null> {
    const rows = await this.em.query<Array<{ mnemonic: string }>>(
      `SELECT mnemonic FROM mapping_versions
       WHERE repository_id = $1 AND valid_to_seq IS NULL AND NOT retired AND map_type = $2
         AND coalesce(from_concept_code, '') = coalesce($3, '')
         AND coalesce(to_concept_code, '') = coalesce($5, '')
         AND from_concept_code IS NOT DISTINCT FROM $3 AND from_source_url IS NOT DISTINCT FROM $4
         AND to_concept_code IS NOT DISTINCT FROM $5 AND to_source_url IS NOT DISTINCT FROM $6
         AND ($7::bigint IS NULL OR mapping_id <> $7::bigint)
       LIMIT 1`,
      [
        repositoryId,
        ends.mapType,
        ends.fromCode,
        ends.fromSourceUrl,
        ends.toCode,
        ends.toSourceUrl,
        exceptMappingId ?? null,
      ],
    );
    return rows[0]?.mnemonic ?? null;
  }

  async search(
    where: MappingScope,
    filter: MappingSearch,
    sort: SortSpec<MappingSortKey>,
    window: Window,
  ): Promise<Slice<MappingVersionEntity>> {
    const words = filter.q ? searchWords(filter.q.text) : [];
    const concepts = await this.conceptsNamed(words, filter.q?.viewer);
    const qb = this.ordered(where, filter, sort, concepts);
    const keys = keysOf(filter, sort);
    const load = (ids: string[]) => entitiesByIds(this.em, MappingVersionEntity, ids);
    // Ranked, every match is read for its rank (counted in the same scan), up to the count's
    // cap: past it, the mappings whose own text has a word are ranked, and the rest follow them
    // in the list's order, unranked (a word of concept names: they all rank 0).
    if (sort.key === 'bestMatch' && words.length > 0) {
      const top = topOf(words);
      const outside = this.ordered(where, filter, sort, concepts, 'walked');
      outside.andWhere(`NOT (${top.sql})`);
      return rankedSliceOf(this.em, qb, window, keys, load, { ...top, flat: outside });
    }
    return narrowSliceOf(this.em, qb, window, keys, load);
  }

  /**
   * The concepts each of `words` names (`whereWordsFound`), as `viewer` may see them: looked up
   * once for every statement of a search (found inside each, a common word's 5,000 concepts cost
   * each statement 26 ms at CIEL scale).
   */
  private async conceptsNamed(words: string[], viewer: Viewer | undefined): Promise<string[][]> {
    if (words.length === 0 || !viewer) return [];
    const parameters: Record<string, unknown> = {};
    const visible = visibleRepository('er', viewer, named('qVisible', parameters));
    const arrays = words.map((word, i) => {
      const nameWord = nameWordOf(word);
      parameters[`qName${i}`] = nameWord;
      return `ARRAY(SELECT cv.concept_id FROM concept_versions cv
        JOIN repositories er ON er.id = cv.repository_id
        WHERE cv.valid_to_seq IS NULL AND ${inName(nameWord, `registry_fold(:qName${i})`)}
          AND ${visible}) AS w${i}`;
    });
    const [sql, values] = this.em.connection.driver.escapeQueryWithParameters(
      `SELECT ${arrays.join(', ')}`,
      parameters,
    );
    const [row] = await this.em.query<Array<Record<string, string[]>>>(sql, values);
    return words.map((_, i) => row[`w${i}`]);
  }

  /** The types of the sort keys of a `search` (what its rows' `keys` hold, `window.after` takes). */
  keyTypes(filter: MappingSearch, sort: SortSpec<MappingSortKey>): KeyType[] {
    return keysOf(filter, sort).map((key) => key.type);
  }

  /**
   * `[value, count]` per facet over the same filtered mappings (spec core §2.1); the end sources'
   * facets by repository id.
   */
  async facets(where: MappingScope, filter: MappingSearch): Promise<FacetCounts> {
    const byRepository = (value: string) => repositoryFacet('mv.repository_id', value);
    const words = filter.q ? searchWords(filter.q.text) : [];
    const concepts = await this.conceptsNamed(words, filter.q?.viewer);
    return facetsOf(this.em, this.ordered(where, filter, { key: 'id', desc: false }, concepts), {
      mapType: { column: 'mv.map_type' },
      retired: { column: 'mv.retired::text' },
      source: byRepository('fr.mnemonic'),
      owner: byRepository('coalesce(fo.mnemonic, fu.username)'),
      ownerType: byRepository(
        `CASE WHEN fr.owner_org_id IS NULL THEN 'User' ELSE 'Organization' END`,
      ),
      // By repository id: an end may lie in a source the reader may not see, whose name the
      // service leaves out (it decides who sees what).
      fromConceptSource: { column: 'mv.from_repository_id' },
      toConceptSource: { column: 'mv.to_repository_id' },
    });
  }

  /**
   * The statement of `search` without a window, each row as JSON (`rowOf` reads it back): what
   * a cursor walks to list every match in the same order as the pages (exports, synchronization).
   */
  listing(where: MappingScope, filter: MappingSearch, sort: SortSpec<MappingSortKey>): Listing {
    const endName = (side: 'from' | 'to') =>
      `(SELECT en.display_name FROM concept_versions en
        WHERE en.concept_id = mv.${side}_concept_id AND en.valid_to_seq IS NULL)`;
    // The order is found on the narrow keys; each row's JSON is built after, in that order (a
    // lateral join walks the keys in order), so no sort ever carries the wide rows. The lateral's
    // LIMIT keeps it a nested loop over the ordered keys: without it the planner may flatten it
    // into a join (a hash join on a large table), which keeps no order.
    const [keys, params] = this.ordered(where, filter, sort)
      .select('mv.id', 'key')
      .getQueryAndParameters();
    const sql = `SELECT l.* FROM (${keys}) k CROSS JOIN LATERAL (
        SELECT ${jsonColumns(this.em, MappingVersionEntity, 'mv')} AS row,
          ${jsonColumns(this.em, MappingEntity, 'mo')} AS object,
          ${endName('from')} AS from_name, ${endName('to')} AS to_name
        FROM mapping_versions mv JOIN mappings mo ON mo.id = mv.mapping_id
        WHERE mv.id = k.key LIMIT 1) l`;
    return { sql, params };
  }

  /** A row of `listing`: the version, its mapping and the current names of its ends' concepts. */
  rowOf(raw: { row: Raw; object: Raw; from_name: string | null; to_name: string | null }): {
    version: MappingVersionEntity;
    mapping: MappingEntity;
    names: { from: string | null; to: string | null };
  } {
    return {
      version: hydrate(this.em, MappingVersionEntity, raw.row)!,
      mapping: hydrate(this.em, MappingEntity, raw.object)!,
      names: { from: raw.from_name, to: raw.to_name },
    };
  }

  /**
   * The search's statement; `concepts`: those each word of `q` names (`conceptsNamed`), found
   * through the end indexes, or `walked`: only by testing each row (`whereWordsFound`).
   */
  private ordered(
    where: MappingScope,
    filter: MappingSearch,
    sort: SortSpec<MappingSortKey>,
    concepts: string[][] = [],
    ends: 'indexed' | 'walked' = 'indexed',
  ): SelectQueryBuilder<MappingVersionEntity> {
    const qb =
      where.scope === 'expansion'
        ? memberVersionsQuery(this.em, MappingVersionEntity, 'mv', where, filter)
        : this.versions.createQueryBuilder('mv');
    if (where.scope === 'source') {
      qb.where('mv.repository_id = :repositoryId', { repositoryId: where.repositoryId });
      atChange(qb, 'mv', where.seq);
    } else if (where.scope === 'public') {
      qb.innerJoin('repositories', 'r', 'r.id = mv.repository_id')
        .where(
          `mv.valid_to_seq IS NULL AND r.kind = 'source' AND r.is_active AND r.public_access <> 'None'`,
        )
        .andWhere(
          `(r.owner_org_id IS NULL OR EXISTS (SELECT 1 FROM organizations po WHERE po.id = r.owner_org_id AND po.public_access <> 'None'))`,
        )
        .andWhere(
          `(r.owner_user_id IS NULL OR EXISTS (SELECT 1 FROM users pu WHERE pu.id = r.owner_user_id AND pu.is_active))`,
        );
      if (where.sources?.length)
        qb.andWhere('r.mnemonic IN (:...sources)', { sources: where.sources });
      if (where.notSources?.length)
        qb.andWhere('r.mnemonic NOT IN (:...notSources)', { notSources: where.notSources });
      if (where.ownerType === 'Organization') qb.andWhere('r.owner_org_id IS NOT NULL');
      if (where.ownerType === 'User') qb.andWhere('r.owner_user_id IS NOT NULL');
      if (where.owners?.length) {
        qb.andWhere(
          `(r.owner_org_id IN (SELECT id FROM organizations WHERE mnemonic IN (:...owners))
            OR r.owner_user_id IN (SELECT id FROM users WHERE username IN (:...owners)))`,
          { owners: where.owners },
        );
      }
    } else if (where.scope === 'concept') {
      qb.where(`mv.${where.inverse ? 'to' : 'from'}_concept_id = :conceptId`, {
        conceptId: where.conceptId,
      });
      atChange(qb, 'mv', where.seq);
      if (where.repositoryId)
        qb.andWhere('mv.repository_id = :repositoryId', { repositoryId: where.repositoryId });
    }
    if (!filter.includeRetired) qb.andWhere('NOT mv.retired');
    const words = filter.q ? searchWords(filter.q.text) : [];
    if (words.length) whereWordsFound(qb, words, concepts, ends);
    if (filter.ids?.length) {
      qb.andWhere('mv.mnemonic IN (:...ids)', { ids: filter.ids });
    }
    whereAnyOf(qb, 'mv.map_type', filter.mapType, 'mapType');
    whereAnyOf(qb, 'mv.created_by', filter.updatedBy, 'updatedBy');
    whereAnyOf(qb, 'mv.from_concept_code', filter.fromConcept, 'fromConcept');
    whereAnyOf(qb, 'mv.to_concept_code', filter.toConcept, 'toConcept');
    if (filter.concept?.length) {
      qb.andWhere(
        '(lower(mv.from_concept_code) IN (:...anyCode) OR lower(mv.to_concept_code) IN (:...anyCode))',
        {
          anyCode: filter.concept.map((c) => c.toLowerCase()),
        },
      );
    }
    const sourceIds = (
      side: 'from' | 'to',
      values: string[] | undefined,
      param: string,
    ): string | undefined =>
      values?.length
        ? `mv.${side}_repository_id IN (SELECT id FROM repositories WHERE kind = 'source' AND mnemonic IN (:...${param}))`
        : undefined;
    const fromSource = sourceIds('from', filter.fromConceptSource, 'fromSources');
    const toSource = sourceIds('to', filter.toConceptSource, 'toSources');
    if (fromSource) qb.andWhere(fromSource, { fromSources: filter.fromConceptSource });
    if (toSource) qb.andWhere(toSource, { toSources: filter.toConceptSource });
    if (filter.conceptSource?.length) {
      qb.andWhere(
        `(${sourceIds('from', filter.conceptSource, 'eitherSources')} OR ${sourceIds('to', filter.conceptSource, 'eitherSources')})`,
        { eitherSources: filter.conceptSource },
      );
    }
    for (const side of ['from', 'to'] as const) {
      const owners = filter[`${side}ConceptOwner`];
      const types = filter[`${side}ConceptOwnerType`];
      if (!owners?.length && !types?.length) continue;
      const conditions: string[] = [];
      if (owners?.length) {
        conditions.push(`coalesce(eo.mnemonic, eu.username) IN (:...${side}Owners)`);
      }
      if (types?.length) {
        conditions.push(
          `(CASE WHEN er.owner_org_id IS NULL THEN 'User' ELSE 'Organization' END) IN (:...${side}OwnerTypes)`,
        );
      }
      qb.andWhere(
        `mv.${side}_repository_id IN (SELECT er.id FROM repositories er
           LEFT JOIN organizations eo ON eo.id = er.owner_org_id
           LEFT JOIN users eu ON eu.id = er.owner_user_id
           WHERE ${conditions.join(' AND ')})`,
        { [`${side}Owners`]: owners, [`${side}OwnerTypes`]: types },
      );
    }
    // An expansion's changes are its members' (joined, edited or removed since then).
    if (filter.updatedSince && where.scope !== 'expansion')
      qb.andWhere('mv.created_at >= :updatedSince', { updatedSince: filter.updatedSince });
    whereExtras(qb, 'mv.extras', filter.extras);
    orderBy(qb, sort, ORDER, words.length ? rankOf(words) : undefined);
    return qb;
  }
}

/**
 * The display name of a current concept version as `q` searches it: folded, its ASCII
 * punctuation read as spaces (`Malaria (disorder)` has the word `disorder`), after a space, so
 * that a word's start is ` word` (indexed by `concept_versions_head_display_words`).
 */
const DISPLAY_WORDS = `(' ' || regexp_replace(cv.display_folded, '[[:punct:]]+', ' ', 'g'))`;

/** A query word as it is looked for in display names: its ASCII punctuation read as spaces. */
function nameWordOf(word: string): string {
  return word.replace(/[!-/:-@[-`{-~]+/g, ' ').trim();
}

/**
 * Where the folded display name has `word` (punctuation read as spaces, `nameWordOf`), bound as
 * `name`, at a word's start. A one-letter word names the concepts with that word (`hepatitis a`):
 * as the start of a word it would name most of them, too many to look the mappings up by.
 * Punctuation alone names no concept.
 */
function inName(word: string, name: string): string {
  if (word.length === 0) return 'false';
  if (word.length > 1) return `${DISPLAY_WORDS} LIKE '% ' || ${name} || '%'`;
  return `(${DISPLAY_WORDS} LIKE '% ' || ${name} || ' %' OR ${DISPLAY_WORDS} LIKE '% ' || ${name})`;
}

/**
 * Where a mapping's own text (`search_text`) has word `i` at a word's start: by the search's
 * parameters (`q…`, `whereWordsFound`) or the rank's (`r…`, `rankOf`), the same test, so that the
 * rank's top is exactly the rows this finds.
 */
function inOwnText(i: number, parameters: 'q' | 'r' = 'q'): string {
  return `mv.search_text LIKE :${parameters}First${i} OR mv.search_text LIKE :${parameters}Word${i}`;
}

/**
 * The rows a mapping search's best matches are among (`RankTop`): those whose own text has a word.
 * Every other match was found by its ends' concept names only, and ranks 0 (`rankOf`, whose exact
 * id or code counts only with a word in the own text). No `columns`: the rank of a row found by
 * name is its two `LIKE`s, cheaper to compute as the first 10,001 are read than to carry their
 * text and rank them after (carried, a common name word under the cap took about 10 ms more at
 * CIEL scale).
 */
function topOf(words: string[]): RankTop<MappingVersionEntity> {
  return {
    sql: words.map((_, i) => inOwnText(i)).join(' OR '),
    outside: 0,
  };
}

/**
 * `q` on mappings, as OCL indexes a mapping (its id, and each end as its code and its concept's
 * name): every word must start a word (after the start or a space) of the mapping's own text —
 * id, map type, the ends' codes and the names stored with them — or of the current display name
 * of the concept an end points to, in a source the reader may see (the name the mapping shows; a
 * private concept's name finds nothing for those who may not see it): `concepts`, each word's,
 * looked up before (`conceptsNamed`). A code matches itself and the codes it begins (1002:
 * 1002, 10020; not 21002). The names are read at search time, so a renamed concept is found by
 * its new name at once, and by its old one no more (unless the mapping itself stores it).
 *
 * The concepts are passed as an array that PostgreSQL reads when it runs the statement, not when
 * it plans it (a subquery's): planning with the values in view cost 18 ms for a common word's
 * 5,000 (its estimate of each), and the estimate made it walk a source's every mapping to count
 * them. `walked`, no index of the ends can find them: the rows outside a common word's top are
 * found by walking the list's order (`RankTop.flat`), about 100 rows for a page of 10, where
 * the end indexes gave all 30,000 of them to sort (34–42 ms).
 */
function whereWordsFound(
  qb: SelectQueryBuilder<MappingVersionEntity>,
  words: string[],
  concepts: string[][],
  ends: 'indexed' | 'walked',
): void {
  const end = (side: 'from' | 'to') =>
    ends === 'indexed' ? `mv.${side}_concept_id` : `(mv.${side}_concept_id + 0)`;
  words.forEach((word, i) => {
    if (!concepts[i])
      throw new Error('a mapping search looks up the concepts its words name first');
    const anyNamed =
      ends === 'indexed'
        ? `ANY(CAST((SELECT CAST(:qConcepts${i} AS bigint[])) AS bigint[]))`
        : `ANY(CAST(:qConcepts${i} AS bigint[]))`;
    qb.andWhere(`(${inOwnText(i)} OR ${end('from')} = ${anyNamed} OR ${end('to')} = ${anyNamed})`, {
      [`qFirst${i}`]: `${likeLiteral(word)}%`,
      [`qWord${i}`]: `% ${likeLiteral(word)}%`,
      [`qConcepts${i}`]: concepts[i],
    });
  });
}
