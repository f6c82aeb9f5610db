import { LRUCache } from 'lru-cache';
import {
  type DataSource,
  type EntityManager,
  type EntityTarget,
  type Repository,
  type SelectQueryBuilder,
} from 'typeorm';
import {
  ConceptEntity,
  ConceptVersionEntity,
  HEAD,
  MappingEntity,
  type ConceptName,
  MappingVersionEntity,
  OrganizationEntity,
  RepositoryEntity,
  UserEntity,
} from '../db/entities';
import { insertRows } from './bulk';
import { activeMembersSql, memberVersionsQuery } from './collection.repository';
import { entitiesByIds, hydrate, jsonColumns, keyedRowsOfParts, type Raw } from './hydrate';
import { pathQuery, pathRowOf, type PathRaw, type PathRow } from './path.repository';
import { preparedQuery } from './prepared';
import { newestVersionHoldingSql } from './repo.repository';
import { atChange, interval, VersionedRepository } from './versioned.repository';
import {
  afterSql,
  keyColumns,
  keysJsonSql,
  keysOf,
  keyValuesOf,
  likeLiteral,
  named,
  orderBy,
  orderSql,
  narrowSliceOf,
  rankedSliceOf,
  type RankTop,
  searchWords,
  selectKeys,
  spellingsOf,
  whereAnyOf,
  whereExtras,
  whereWordsMatch,
  type ExtrasFilter,
  facetsOf,
  repositoryFacet,
  type FacetCounts,
  type KeyColumn,
  type KeyType,
  type KeyTypes,
  type KeyValues,
  type Listing,
  type Slice,
  type SortSpec,
  type KnownSpellings,
  type Tolerance,
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
  /** How far `q` words may be from what they match (typos); substrings only by default. */
  tolerance?: Tolerance;
  /** With a tolerance: per word of `q`, the other spellings to look up (`spellingsInUse`). */
  spellings?: KnownSpellings;
  /**
   * A search whose every word (by a spelling) is held by at least this share of the concept
   * versions, as PostgreSQL's statistics tell, counts its matches from the index of searched
   * text (`SEARCH_COVERED`); 0: every search; unset: none (`SEARCH_COMMON_SHARE`).
   */
  commonShare?: number;
  /** Concepts of these ids (a collection member by its id). */
  ids?: string[];
  /** Concepts naming this code among their parents (its children in the hierarchy). */
  childOf?: string;
}

/** What one concept read names: the path's owner, source and source version, and the concept. */
export interface ConceptReadKey {
  owner: { org: string } | { username: string } | { userId: string };
  source: string;
  /** HEAD, `latest` (the newest released version) or a version id. */
  version: string;
  concept: string;
  /** One of the concept's versions by id; else the one current in the source version read. */
  conceptVersion?: string;
  /** The current mappings the source holds from the concept, and those to it, as of that version. */
  mappings: boolean;
  inverseMappings: boolean;
  /** A signed-in reader, whose role in the owning org comes along. */
  viewerId: string | null;
}

export interface MappingRow {
  mapping: MappingEntity;
  version: MappingVersionEntity;
}

/** Of a source a mapping end lies in: what the end shows, and what deciding access needs. */
export type EndRepository = Pick<
  RepositoryEntity,
  'id' | 'mnemonic' | 'ownerOrgId' | 'ownerUserId' | 'publicAccess' | 'isActive'
>;

/** Everything a concept read needs, found in one statement; null where the path names nothing. */
export interface ConceptRead extends PathRow {
  concept: ConceptEntity | null;
  conceptVersion: ConceptVersionEntity | null;
  /** How many versions the concept has. */
  versionCount: number;
  /** The newest version (never HEAD) of the source holding the concept version read. */
  latestSourceVersion: string | null;
  /** In the order of `MappingRepository.ofConcepts`: map type, sort weight, id. */
  mappings: MappingRow[];
  inverseMappings: MappingRow[];
  /**
   * The sources the mappings' ends lie in, other than the one read (found above), with their
   * owners other than its owner.
   */
  endSources: EndRepository[];
  endOrgs: Array<Pick<OrganizationEntity, 'id' | 'mnemonic'>>;
  endUsers: Array<Pick<UserEntity, 'id' | 'username'>>;
  /** The current display name of each concept a mapping end points to, by concept id. */
  endNames: Map<string, string | null>;
}

interface ConceptReadRaw extends PathRaw {
  concept: Raw;
  concept_version: Raw;
  version_count: number;
  latest_source_version: string | null;
  mappings: Array<{ inverse: boolean; mapping: Raw; version: Raw }>;
  end_sources: Raw[];
  end_orgs: Raw[];
  end_users: Raw[];
  end_names: Record<string, string | null>;
}

const ORDER: Record<ConceptSortKey, string[]> = {
  bestMatch: ['cv.mnemonic', 'cv.id'],
  lastUpdate: ['cv.created_at', 'cv.id'],
  name: ['cv.display_name', 'cv.id'],
  id: ['cv.mnemonic', 'cv.id'],
  // The id last: concepts of several sources (a collection's, `/concepts/`) may share both.
  datatype: ['cv.datatype', 'cv.mnemonic', 'cv.id'],
  conceptClass: ['cv.concept_class', 'cv.mnemonic', 'cv.id'],
};

/** The columns of `ORDER` as keyset paging compares them. */
const KEY_TYPES: KeyTypes = {
  'cv.mnemonic': { type: 'text' },
  'cv.id': { type: 'id' },
  'cv.created_at': { type: 'time' },
  'cv.display_name': { type: 'text', nullable: true },
  'cv.datatype': { type: 'text', nullable: true },
  'cv.concept_class': { type: 'text', nullable: true },
};

/** Rows between two anchors of a plain list (`ConceptRepository.anchorOf`). */
const ANCHOR_STRIDE = 500;

/** A source's plain-list anchors, as of its change `seq`; `complete` when they cover the list. */
interface Anchors {
  seq: string;
  complete: boolean;
  anchors: KeyValues[];
}

/** A page of a source version's plain list, as `plainPages` reads it. */
interface PlainPage {
  /** `headSeq`: the source's change number as the caller read it (HEAD only): see `anchorOf`. */
  where: { repositoryId: string; seq: string | null; headSeq?: string };
  sort: SortSpec<ConceptSortKey>;
  window: Window;
}

/** Where an anchored page starts: after `after`, `offset` rows on, in the state `seq`. */
interface Anchor {
  seq: string;
  after: KeyValues;
  offset: number;
}

/** The anchors this process keeps, per database (tests run several), by source and order. */
const anchorCaches = new WeakMap<DataSource, LRUCache<string, Anchors>>();

function anchorsOf(em: EntityManager): LRUCache<string, Anchors> {
  let kept = anchorCaches.get(em.dataSource);
  if (!kept) {
    kept = new LRUCache<string, Anchors>({ max: 1000 });
    anchorCaches.set(em.dataSource, kept);
  }
  return kept;
}

/**
 * The rank of a concept for `q` (best match first), from its words as `searchWords` folds them:
 * an exact id (100), then an exact name (70), then a name that starts with `q` (20), then how
 * close the name is to `q` (up to 10), then, among equals, the shorter name (under 1). The name
 * is read folded (`display_folded`, kept by PostgreSQL as versions are written), and the rank is
 * a float8: folding each match's name as it was ranked, and numeric arithmetic, cost a common
 * word's search a third of its time.
 *
 * How close: the share of the words that begin a word of the name (a few `LIKE`s on the name,
 * where trigram `word_similarity` cost about 20 µs a row and most of a common word's search:
 * 41,000 rows ranked for one page); a word counts by any spelling the search matched it by
 * (`swaps`: two neighbouring letters swapped back; `similar`: a word like it found among the
 * words in use), weighted by how like the word that spelling is. Only a `similar` search for a
 * word whose spellings are not known ranks by the name's trigram similarity to `q`.
 *
 * `top`: the rows whose names have every word (by a spelling) at a word's start, or whose id is
 * `q`: every other row ranks at most `outside` (some word missing: 10 (n - 1) / n, plus under 1
 * for the length), below any of them (`rankedSliceOf` ranks only these for a common word).
 */
function rankOf(
  words: string[],
  tolerance: Tolerance = 'exact',
  known?: KnownSpellings,
): {
  expression: string;
  parameters: Record<string, unknown>;
  top?: RankTop<ConceptVersionEntity>;
  /** Per word, the spellings it ranks by. */
  spellings: string[][];
} {
  const q = words.join(' ');
  const parameters: Record<string, unknown> = { q, qPrefix: `${likeLiteral(q)}%` };
  const spellings = words.map((word, i) => {
    const list = spellingsOf(word, i, tolerance, known).spellings;
    return list.some(({ spelling }) => spelling === word)
      ? list
      : [{ spelling: word, weight: 1 }, ...list];
  });
  // Per word, each spelling's test of a word's start in the name, and its weight.
  const starts = spellings.map((list, i) =>
    list.map(({ spelling, weight }, j) => {
      parameters[`qWord${i}_${j}`] = `% ${likeLiteral(spelling)}%`;
      return { like: `' ' || cv.display_folded LIKE :qWord${i}_${j}`, weight };
    }),
  );
  const byTrigrams = tolerance === 'similar' && words.some((_, i) => known?.[i] === undefined);
  // A word counts by the likest spelling found at a word's start (the word itself: 1).
  const closeness = byTrigrams
    ? `10 * word_similarity(:q, lower(coalesce(cv.display_name, '')))`
    : `10.0::float8 * (${starts
        .map(
          (likes) =>
            `(CASE ${[...likes]
              .sort((a, b) => b.weight - a.weight)
              .map((s) => `WHEN ${s.like} THEN ${s.weight}::float8`)
              .join(' ')} ELSE 0 END)`,
        )
        .join(' + ')}) / ${words.length}`;
  return {
    expression: `(CASE WHEN lower(cv.mnemonic) = :q THEN 100 ELSE 0 END)
       + (CASE WHEN cv.display_folded LIKE :qPrefix
           THEN (CASE WHEN cv.display_folded = :q THEN 70 ELSE 20 END) ELSE 0 END)
       + ${closeness}
       + 1.0::float8 / (2 + length(coalesce(cv.display_name, '')))`,
    parameters,
    spellings: spellings.map((list) => list.map(({ spelling }) => spelling)),
    ...(byTrigrams
      ? {}
      : {
          top: {
            sql: `${starts.map((likes) => `(${likes.map((s) => s.like).join(' OR ')})`).join(' AND ')}
                  OR lower(cv.mnemonic) = :q`,
            outside: (10 * (words.length - 1)) / words.length + 1,
            // What the rank and the best match's order (`ORDER.bestMatch`) read.
            columns: ['id', 'mnemonic', 'display_folded', 'display_name'],
          },
        }),
  };
}

/**
 * The versions `concept_versions_head_search` holds with the columns a search reads
 * (`RankTop.covered`): its predicate, word for word (migration 1766100000000), but for its
 * `valid_to_seq IS NULL AND NOT retired`, which the search's own conditions give (but with
 * `includeRetired`, when the index is not read).
 */
const SEARCH_COVERED = `octet_length(cv.search_text) + octet_length(coalesce(cv.display_name, ''))
  + octet_length(cv.display_folded) + octet_length(cv.mnemonic) <= 2400`;

/** How long the common words (`commonWordsOf`) are kept: statistics change with `ANALYZE`. */
const COMMON_WORDS_MS = 10 * 60 * 1000;

/** The common words each database's statistics gave, and when (tests run several databases). */
const commonWordsKept = new WeakMap<
  DataSource,
  { share: number; at: number; words: Promise<string[]> }
>();

/**
 * The words held by at least `share` of the concept versions: the most common elements of the
 * statistics of `concept_versions_words` (`to_tsvector('simple', search_text)`), with their
 * shares, as `ANALYZE` sampled them (none before it has run). Kept a while per database.
 */
function commonWordsOf(em: EntityManager, share: number): Promise<string[]> {
  const kept = commonWordsKept.get(em.dataSource);
  if (kept && kept.share === share && Date.now() - kept.at < COMMON_WORDS_MS) return kept.words;
  const words = em
    .query<Array<{ word: string }>>(
      `SELECT e.word FROM pg_stats s,
         unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e(word, share)
       WHERE s.schemaname = current_schema() AND s.tablename = 'concept_versions_words'
         AND e.word IS NOT NULL AND e.share >= $1`,
      [share],
    )
    .then(
      (rows) => rows.map((row) => row.word),
      () => {
        // None this time (every search read as before); read again by the next.
        commonWordsKept.delete(em.dataSource);
        return [];
      },
    );
  commonWordsKept.set(em.dataSource, { share, at: Date.now(), words });
  return words;
}

/** A word the words table holds as one word when some text has it (`spellingsInUse`). */
const WORD_LIKE = /^[a-z0-9]+$/;

/** The most similar words a word of `q` is looked up by when nothing else matched. */
const SIMILAR_WORDS = 8;

/** How much less like it than the likest word a word may be to be looked up too. */
const SIMILAR_MARGIN = 0.15;

/** An expansion's plain pages in id order (`memberSlice`): its members' mnemonic and concept id. */
const MEMBER_KEYS = (desc: boolean): KeyColumn[] => [
  { sql: 'x.mnemonic', type: 'text', desc, nullable: false },
  { sql: 'x.concept_id', type: 'id', desc, nullable: false },
];

/** Concepts (the versioned objects) and their versions, as of HEAD or a frozen change number. */
/** A member concept of an expansion as a value set shows it (`memberCodes`). */
export interface MemberCode {
  repositoryId: string;
  conceptId: string;
  code: string;
  display: string | null;
  names: ConceptName[];
}

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

  /** Inserts many concepts in one statement; their ids by mnemonic. */
  async insertConcepts(
    values: ReadonlyArray<Partial<ConceptEntity>>,
  ): Promise<Map<string, string>> {
    const rows = await insertRows(this.em, ConceptEntity, values, ['id', 'mnemonic']);
    return new Map(rows.map((row) => [row.mnemonic, row.id]));
  }

  /** The ids of concepts named by repository and mnemonic, keyed `repositoryId|mnemonic`. */
  async idsOf(
    keys: ReadonlyArray<{ repositoryId: string; mnemonic: string }>,
  ): Promise<Map<string, string>> {
    if (keys.length === 0) return new Map();
    const rows = await this.em.query<Array<{ key: string; id: string }>>(
      `SELECT c.repository_id || '|' || c.mnemonic AS key, c.id::text AS id
       FROM unnest($1::bigint[], $2::text[]) AS k(repository_id, mnemonic)
       JOIN concepts c ON c.repository_id = k.repository_id AND c.mnemonic = k.mnemonic`,
      [keys.map((k) => k.repositoryId), keys.map((k) => k.mnemonic)],
    );
    return new Map(rows.map((row) => [row.key, row.id]));
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

  /** The display name of each concept's current (HEAD) version, by concept id. */
  async currentNames(conceptIds: readonly string[]): Promise<Map<string, string | null>> {
    const rows = await preparedQuery<{ id: string; name: string | null }>(
      this.em,
      `SELECT concept_id::text AS id, display_name AS name FROM concept_versions
       WHERE concept_id = ANY($1::bigint[]) AND valid_to_seq IS NULL`,
      [conceptIds],
    );
    return new Map(rows.map((r) => [r.id, r.name]));
  }

  findConceptsByIds(ids: readonly string[]): Promise<ConceptEntity[]> {
    return entitiesByIds(this.em, ConceptEntity, ids);
  }

  /**
   * A concept read in one statement (design §6: a read costs what the raw database costs): the
   * owner, source and source version named by the path, the concept and its version there, its
   * version count, and on request its mappings with the sources and current names of their ends.
   * The caller checks what was found, in the order a path is resolved.
   */
  async read(key: ConceptReadKey): Promise<ConceptRead> {
    const params: unknown[] = [];
    const p = (value: unknown): string => `$${params.push(value)}`;
    const path = pathQuery(
      { owner: key.owner, repo: key.source, version: key.version, viewerId: key.viewerId },
      p,
    );
    // At HEAD the current rows (their partial indexes answer); else the interval test (design §4).
    const at = (alias: string): string =>
      key.version === HEAD
        ? `${alias}.valid_to_seq IS NULL`
        : `CASE WHEN (SELECT seq FROM v) IS NULL THEN ${alias}.valid_to_seq IS NULL
             ELSE ${alias}.valid_from_seq <= (SELECT seq FROM v)
               AND (${alias}.valid_to_seq IS NULL OR ${alias}.valid_to_seq > (SELECT seq FROM v)) END`;
    const conceptVersion =
      key.conceptVersion === undefined
        ? at('x')
        : /^\d{1,18}$/.test(key.conceptVersion)
          ? `x.id = ${p(key.conceptVersion)}`
          : 'false';
    const sides = [
      ...(key.mappings ? [['false', 'from']] : []),
      ...(key.inverseMappings ? [['true', 'to']] : []),
    ];
    const mappings = sides.length
      ? `, m AS (${sides
          .map(
            ([inverse, side]) =>
              `SELECT ${inverse} AS inverse, x AS mv FROM mapping_versions x
               WHERE x.${side}_concept_id = (SELECT id FROM c)
                 AND x.repository_id = (SELECT id FROM r) AND NOT x.retired AND ${at('x')}`,
          )
          .join(' UNION ALL ')}),
         ends AS (SELECT (mv).from_repository_id AS repository_id, (mv).from_concept_id AS concept_id
                  FROM m
                  UNION SELECT (mv).to_repository_id, (mv).to_concept_id FROM m),
         er AS (SELECT * FROM repositories
                WHERE id IN (SELECT repository_id FROM ends) AND id <> (SELECT id FROM r))`
      : '';
    const rows = await preparedQuery<ConceptReadRaw>(
      this.em,
      `WITH ${path.ctes},
         c AS (SELECT * FROM concepts
               WHERE repository_id = (SELECT id FROM r) AND mnemonic = ${p(key.concept)}),
         cv AS (SELECT * FROM concept_versions x
                WHERE x.concept_id = (SELECT id FROM c) AND ${conceptVersion} LIMIT 1)
         ${mappings}
       SELECT ${path.columns},
         (SELECT ${jsonColumns(this.em, ConceptEntity, 'c')} FROM c) AS concept,
         (SELECT ${jsonColumns(this.em, ConceptVersionEntity, 'cv')} FROM cv) AS concept_version,
         (SELECT count(*)::int FROM concept_versions WHERE concept_id = (SELECT id FROM c))
           AS version_count,
         (SELECT ${newestVersionHoldingSql('cv.repository_id', 'cv.valid_from_seq', 'cv.valid_to_seq')}
           FROM cv) AS latest_source_version,
         ${
           sides.length
             ? `(SELECT coalesce(json_agg(json_build_object('inverse', m.inverse,
                    'version', ${jsonColumns(this.em, MappingVersionEntity, '(m.mv)')},
                    'mapping', ${jsonColumns(this.em, MappingEntity, 'mp')})
                    ORDER BY (m.mv).map_type, (m.mv).sort_weight, (m.mv).id), '[]')
                 FROM m JOIN mappings mp ON mp.id = (m.mv).mapping_id) AS mappings,
               (SELECT coalesce(json_agg(json_build_object('id', er.id, 'mnemonic', er.mnemonic,
                    'owner_org_id', er.owner_org_id, 'owner_user_id', er.owner_user_id,
                    'public_access', er.public_access, 'is_active', er.is_active)), '[]')
                 FROM er) AS end_sources,
               (SELECT coalesce(json_agg(json_build_object('id', eo.id, 'mnemonic', eo.mnemonic)),
                    '[]')
                 FROM organizations eo WHERE eo.id IN (SELECT owner_org_id FROM er)) AS end_orgs,
               (SELECT coalesce(json_agg(json_build_object('id', eu.id, 'username', eu.username)),
                    '[]')
                 FROM users eu WHERE eu.id IN (SELECT owner_user_id FROM er)) AS end_users,
               (SELECT coalesce(json_object_agg(ev.concept_id, ev.display_name), '{}')
                 FROM concept_versions ev
                 WHERE ev.concept_id IN (SELECT concept_id FROM ends) AND ev.valid_to_seq IS NULL)
                 AS end_names`
             : `'[]'::json AS mappings, '[]'::json AS end_sources, '[]'::json AS end_orgs,
                '[]'::json AS end_users, '{}'::json AS end_names`
         }`,
      params,
    );
    const raw = rows[0];
    const of = <T>(target: EntityTarget<T>, value: Raw): T | null =>
      hydrate(this.em, target, value);
    const mapping = (m: ConceptReadRaw['mappings'][number]): MappingRow => ({
      mapping: of(MappingEntity, m.mapping)!,
      version: of(MappingVersionEntity, m.version)!,
    });
    return {
      ...pathRowOf(this.em, raw),
      concept: of(ConceptEntity, raw.concept),
      conceptVersion: of(ConceptVersionEntity, raw.concept_version),
      versionCount: raw.version_count,
      latestSourceVersion: raw.latest_source_version,
      mappings: raw.mappings.filter((m) => !m.inverse).map(mapping),
      inverseMappings: raw.mappings.filter((m) => m.inverse).map(mapping),
      endSources: raw.end_sources.map((e) => of(RepositoryEntity, e)!),
      endOrgs: raw.end_orgs.map((e) => of(OrganizationEntity, e)!),
      endUsers: raw.end_users.map((e) => of(UserEntity, e)!),
      endNames: new Map(Object.entries(raw.end_names)),
    };
  }

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
    const rank = words.length ? rankOf(words, filter.tolerance, filter.spellings) : undefined;
    orderBy(qb, sort, ORDER, rank);
    const inExpansion = where.scope === 'expansion';
    if (this.byMembers(where, filter, sort))
      return this.memberSlice(where, filter.includeRetired ?? false, sort.desc, window);
    const keys = keyColumns(sort, ORDER, KEY_TYPES, rank);
    const load = (ids: string[]) => entitiesByIds(this.em, ConceptVersionEntity, ids);
    // Ranked, every match is read for its rank; filtered, an expansion resolves every member's
    // version first: either way counted in the same scan (cursor pages too).
    if ((rank && sort.key === 'bestMatch') || inExpansion) {
      // The top's rows are found by index at HEAD (`concept_versions_head_display_starts`).
      const atHead = where.scope === 'public' || (where.scope === 'source' && where.seq === null);
      const top = sort.key === 'bestMatch' && atHead ? rank?.top : undefined;
      const covered = top && (await this.common(rank!.spellings, filter.commonShare));
      return rankedSliceOf(
        this.em,
        qb,
        window,
        keys,
        load,
        covered ? { ...top, covered: SEARCH_COVERED } : top,
      );
    }
    return narrowSliceOf(this.em, qb, window, keys, load);
  }

  /**
   * Whether every word is common by one of its spellings: held by at least `share` of the
   * concept versions, by a word (`to_tsvector('simple', search_text)`, its index's statistics)
   * that holds it. Its matches are then many among a source's rows, and read faster from the
   * index of searched text (an index-only scan: about 0.6 µs a row, against 1.6 µs or more from
   * the table); a rarer word's are faster found through the trigram index, which PostgreSQL
   * does not always see (it costs a `LIKE` on a row far below what it takes). `share` 0: every
   * search; unset: none.
   */
  private async common(spellings: string[][], share: number | undefined): Promise<boolean> {
    if (share === undefined) return false;
    if (share <= 0) return true;
    const words = await commonWordsOf(this.em, share);
    return spellings.every((list) =>
      list.some((spelling) => words.some((word) => word.includes(spelling))),
    );
  }

  /**
   * Per word of `q` (`searchWords`), the spellings a search at this tolerance looks it up by,
   * among the words of every concept's search text (`search_words`, any source or version, kept
   * by a trigger as versions are written): `swaps`, the word and its transpositions
   * (`spellingsOf`), each if it begins a word; `similar`, those and the words most like it
   * (trigram similarity, ordered by word similarity, at most `SIMILAR_WORDS` within
   * `SIMILAR_MARGIN` of the likest), after the swaps (`ORDER BY`), weighted by that word
   * similarity (the word and its swaps: 1). Without them a common word's swaps pass rechecked
   * each of its thousands of candidates against a dozen spellings no text held, and the
   * similarity pass compared every concept's whole text with the word (a scan: 350 ms at CIEL
   * scale). A word the table cannot
   * answer for (other than letters and digits, which its index splits as text search does) is
   * left `undefined`: looked up every way.
   */
  async spellingsInUse(q: string, tolerance: 'swaps' | 'similar'): Promise<KnownSpellings> {
    const words = searchWords(q);
    const known: KnownSpellings = words.map(() => undefined);
    const looked = words.flatMap((word, i) => (WORD_LIKE.test(word) ? [i] : []));
    if (looked.length === 0) return known;
    // The word as written and its swaps, each if it begins a word in use.
    const swaps = looked.flatMap((i) =>
      spellingsOf(words[i], i, 'swaps').spellings.map(({ spelling }) => ({ i, spelling })),
    );
    // Any typo: also the words most like it (a word may need a swap and another a similar word).
    const similar = tolerance === 'similar' ? looked : [];
    const rows = await preparedQuery<{ i: number; spelling: string; weight: number }>(
      this.em,
      `SELECT t.i, t.spelling, 1::float8 AS weight, false AS similar
       FROM unnest($1::int[], $2::text[]) t(i, spelling)
       WHERE EXISTS (SELECT 1 FROM search_words w
                     WHERE w.word ~>=~ t.spelling AND w.word ~<~ (t.spelling || chr(1114111)))
       UNION ALL
       SELECT w.i, s.word, s.close, true FROM unnest($3::int[], $4::text[]) w(i, word)
       CROSS JOIN LATERAL (
         SELECT c.word, c.close FROM (
           SELECT s.word, word_similarity(w.word, s.word)::float8 AS close,
             max(word_similarity(w.word, s.word)) OVER () AS best
           FROM search_words s
           WHERE length(w.word) >= 4 AND s.word % w.word AND s.word <> w.word
           ORDER BY close DESC, similarity(w.word, s.word) DESC, s.word
           LIMIT ${SIMILAR_WORDS}) c
         WHERE c.close >= c.best - ${SIMILAR_MARGIN}) s
       ORDER BY 1, 4, 2`,
      [swaps.map((s) => s.i), swaps.map((s) => s.spelling), similar, similar.map((i) => words[i])],
    );
    for (const i of looked) known[i] = [];
    for (const row of rows) {
      const list = known[row.i]!;
      if (!list.some((other) => other.spelling === row.spelling)) {
        list.push({ spelling: row.spelling, weight: row.weight });
      }
    }
    return known;
  }

  /**
   * The types of the sort keys of a `search` (what its rows' `keys` hold and `window.after`
   * takes): the rank first when best match orders a search with words.
   */
  keyTypes(where: ConceptScope, filter: ConceptSearch, sort: SortSpec<ConceptSortKey>): KeyType[] {
    if (this.byMembers(where, filter, sort)) return MEMBER_KEYS(sort.desc).map((k) => k.type);
    const words = filter.q ? searchWords(filter.q) : [];
    return keyColumns(
      sort,
      ORDER,
      KEY_TYPES,
      words.length ? rankOf(words, filter.tolerance, filter.spellings) : undefined,
    ).map((k) => k.type);
  }

  /** Whether `search` reads an expansion's page in its members' id order (`memberSlice`). */
  private byMembers(
    where: ConceptScope,
    filter: ConceptSearch,
    sort: SortSpec<ConceptSortKey>,
  ): where is Extract<ConceptScope, { scope: 'expansion' }> {
    const plain =
      (filter.q ? searchWords(filter.q) : []).length === 0 &&
      unfiltered({ ...filter, includeRetired: false });
    return where.scope === 'expansion' && plain && (sort.key === 'id' || sort.key === 'bestMatch');
  }

  /**
   * Pages of several sources' plain concept lists (`isPlainSearch`: no `q`, no filter, retired
   * left out) in one statement, each in its list's order: what sibling sources of one GraphQL
   * query read together. Totals are the versions' active counts (the caller's).
   */
  async plainPages(
    pages: readonly PlainPage[],
  ): Promise<
    Array<{ rows: ConceptVersionEntity[]; keys: KeyValues[]; concepts: ConceptEntity[] }>
  > {
    const keys = pages.map((page) => keyColumns(page.sort, ORDER, KEY_TYPES));
    const anchors = await Promise.all(pages.map((page, i) => this.anchorOf(page, keys[i])));
    const partOf = (i: number, anchor: Anchor | null): [string, unknown[]] => {
      const page = pages[i];
      // The window picked on plain columns (an index-only walk for HEAD), each row's JSON built
      // after the offset: built before it, a page far into the list paid for every row skipped.
      const qb = this.plainKeys(page.where, page.sort, keys[i]);
      const after = anchor?.after ?? page.window.after;
      if (after) {
        const parameters: Record<string, unknown> = {};
        qb.andWhere(afterSql(keys[i], after, named('keyset', parameters)), parameters);
      }
      if (anchor) {
        // Read in the anchors' own state only: after another change, no row (read again below).
        qb.andWhere(
          '(SELECT r.head_seq FROM repositories r WHERE r.id = :anchoredSource) = :anchoredSeq',
          { anchoredSource: page.where.repositoryId, anchoredSeq: anchor.seq },
        );
      }
      const [sql, parameters]: [string, unknown[]] = qb.getQueryAndParameters();
      // The window as parameters (no limit: NULL), so that every page shares one text.
      const window = [...parameters, page.window.limit > 0 ? page.window.limit : null];
      const limit = window.length;
      window.push(anchor ? anchor.offset : page.window.offset);
      const inPage = keysOf(keys[i], 'p');
      return [
        `SELECT json_build_array(p.id, ${keysJsonSql(inPage)}) AS key
         FROM (${sql} LIMIT $${limit} OFFSET $${limit + 1}) p ORDER BY ${orderSql(inPage)}`,
        window,
      ];
    };
    const read = (which: number[], anchored: boolean) =>
      keyedRowsOfParts(
        this.em,
        ConceptVersionEntity,
        which.map((i) => partOf(i, anchored ? anchors[i] : null)),
        { target: ConceptEntity, column: 'concept_id' },
      );
    const found = await read(
      pages.map((_, i) => i),
      true,
    );
    // An anchored page that found nothing: the source changed since its anchors were read (or the
    // offset is past the end); read as the list is now.
    const again = anchors.flatMap((anchor, i) => (anchor && found[i].rows.length === 0 ? [i] : []));
    if (again.length > 0) (await read(again, false)).forEach((part, j) => (found[again[j]] = part));
    return found.map((part, i) => ({
      rows: part.rows,
      keys: part.keys.map((raw) => keyValuesOf(keys[i], raw)),
      concepts: part.parents,
    }));
  }

  /**
   * Where a page far into a source's plain list at HEAD starts, found without skipping every row
   * before it: the list's every `ANCHOR_STRIDE`-th row's keys, read once per change of the source
   * (`head_seq`, which every change of its content moves on) and kept by this process, so that
   * `OFFSET 20000` becomes "after the 20,000th row's keys" (an index seek) plus less than a
   * stride. Null when no anchor helps: a version's list, a cursor page, a shallow offset, inside a
   * transaction (which may read what is never committed), or when the caller read the source
   * in another state than the anchors hold.
   */
  private async anchorOf(page: PlainPage, keys: KeyColumn[]): Promise<Anchor | null> {
    const { repositoryId, seq, headSeq } = page.where;
    const { offset, after } = page.window;
    if (seq !== null || headSeq === undefined || after || offset < ANCHOR_STRIDE) return null;
    if (this.em.queryRunner) return null;
    const kept = anchorsOf(this.em);
    const key = `${repositoryId}|${page.sort.key}|${page.sort.desc}`;
    const needed = Math.floor(offset / ANCHOR_STRIDE);
    let known = kept.get(key);
    if (!known || known.seq !== headSeq || (!known.complete && known.anchors.length < needed)) {
      // Twice as deep as asked: a reader paging on finds the next pages anchored too.
      known = await this.readAnchors(
        repositoryId,
        page.sort,
        keys,
        2 * (needed + 1) * ANCHOR_STRIDE,
      );
      kept.set(key, known);
    }
    const k = Math.min(needed, known.anchors.length);
    if (known.seq !== headSeq || k === 0) return null;
    return { seq: known.seq, after: known.anchors[k - 1], offset: offset - k * ANCHOR_STRIDE };
  }

  /** A source version's plain list as ids and sort keys (`k0`, …), in its order. */
  private plainKeys(
    where: { repositoryId: string; seq: string | null },
    sort: SortSpec<ConceptSortKey>,
    keys: KeyColumn[],
  ): SelectQueryBuilder<ConceptVersionEntity> {
    const qb = this.filtered({ scope: 'source', ...where }, {}).select('(cv.id)', 'id');
    selectKeys(qb, keys);
    orderBy(qb, sort, ORDER);
    return qb;
  }

  /**
   * Every `ANCHOR_STRIDE`-th row's keys of a source's plain list at HEAD, among its first `depth`
   * rows, with the source's change number, in one statement (one snapshot).
   */
  private async readAnchors(
    repositoryId: string,
    sort: SortSpec<ConceptSortKey>,
    keys: KeyColumn[],
    depth: number,
  ): Promise<Anchors> {
    const qb = this.plainKeys({ repositoryId, seq: null }, sort, keys);
    const [sql, parameters]: [string, unknown[]] = qb.getQueryAndParameters();
    const inPage = keysOf(keys, 'p');
    const n = parameters.length;
    const [row] = await this.em.query<Array<{ seq: string; scanned: number; anchors: unknown[] }>>(
      `WITH p AS MATERIALIZED (
         SELECT p.*, row_number() OVER (ORDER BY ${orderSql(inPage)}) AS n
         FROM (${sql} LIMIT $${n + 2}) p)
       SELECT (SELECT r.head_seq::text FROM repositories r WHERE r.id = $${n + 1}) AS seq,
         (SELECT count(*)::int FROM p) AS scanned,
         (SELECT coalesce(json_agg(${keysJsonSql(inPage)} ORDER BY p.n), '[]'::json)
          FROM p WHERE p.n % ${ANCHOR_STRIDE} = 0) AS anchors`,
      [...parameters, repositoryId, depth],
    );
    return {
      seq: row.seq,
      complete: row.scanned < depth,
      anchors: row.anchors.map((raw) => keyValuesOf(keys, raw)),
    };
  }

  /**
   * The statement of `search` without a window or `q`, each row as JSON (`rowOf` reads it back):
   * what a cursor walks to list every match in the same order as the pages (exports, sync).
   */
  listing(where: ConceptScope, filter: ConceptSearch, sort: SortSpec<ConceptSortKey>): Listing {
    // The order is found on the narrow keys; each row's JSON is built after, in that order (a
    // lateral join walks the keys in order), so no sort ever carries the wide rows. The lateral's
    // LIMIT keeps it a nested loop over the ordered keys: without it the planner may flatten it
    // into a join (a hash join on a large table), which keeps no order.
    const qb = this.filtered(where, { ...filter, q: undefined }).select('cv.id', 'key');
    orderBy(qb, sort, ORDER);
    const [keys, params] = qb.getQueryAndParameters();
    const sql = `SELECT l.* FROM (${keys}) k CROSS JOIN LATERAL (
        SELECT ${jsonColumns(this.em, ConceptVersionEntity, 'cv')} AS row,
          ${jsonColumns(this.em, ConceptEntity, 'co')} AS object
        FROM concept_versions cv JOIN concepts co ON co.id = cv.concept_id
        WHERE cv.id = k.key LIMIT 1) l`;
    return { sql, params };
  }

  /** A row of `listing`: the version and its concept. */
  /**
   * Which of `codes` have a child (a concept, not retired, naming the code among its parents) in
   * the source as of `seq` (null: HEAD). One probe of the parents index for them all.
   */
  async codesWithChildren(
    repositoryId: string,
    seq: string | null,
    codes: readonly string[],
  ): Promise<Set<string>> {
    if (codes.length === 0) return new Set();
    const params: unknown[] = [repositoryId, codes];
    const rows = await this.em.query<Array<{ code: string }>>(
      `SELECT DISTINCT pc AS code
       FROM concept_versions cv CROSS JOIN LATERAL unnest(cv.parent_codes) AS pc
       WHERE cv.repository_id = $1 AND cv.parent_codes && $2::text[] AND pc = ANY($2::text[])
         AND NOT cv.retired AND ${interval(seq, params, 'cv')}`,
      params,
    );
    return new Set(rows.map((r) => r.code));
  }

  rowOf(raw: { row: Raw; object: Raw }): { version: ConceptVersionEntity; concept: ConceptEntity } {
    return {
      version: hydrate(this.em, ConceptVersionEntity, raw.row)!,
      concept: hydrate(this.em, ConceptEntity, raw.object)!,
    };
  }

  /**
   * A page of an expansion's concepts in id order: the members' own `(expansion_id, mnemonic)`
   * order is walked until the page is full (each member's version read as it comes), and the
   * total is counted without reading every member's version (`activeMembersSql`). One statement.
   */
  private async memberSlice(
    where: Extract<ConceptScope, { scope: 'expansion' }>,
    includeRetired: boolean,
    desc: boolean,
    window: Window,
  ): Promise<Slice<ConceptVersionEntity>> {
    const direction = desc ? 'DESC' : 'ASC';
    const visible = (alias: string): string => `${alias}.id = ANY($2::bigint[])`;
    const total = includeRetired
      ? `(SELECT count(*)::int FROM expansion_concepts x
          WHERE x.expansion_id = $1 AND x.repository_id = ANY($2::bigint[]))`
      : activeMembersSql('c', '$1', visible);
    const params: unknown[] = [
      where.expansionId,
      where.repositoryIds.length ? where.repositoryIds : ['0'],
    ];
    const keys = MEMBER_KEYS(desc);
    const after = window.after
      ? `AND ${afterSql(keys, window.after, (value) => `$${params.push(value)}`)}`
      : '';
    const rows = await preparedQuery<{
      total: number;
      rows: Array<{ row: Raw; keys: unknown }> | null;
    }>(
      this.em,
      `SELECT ${total} AS total, (
         SELECT json_agg(json_build_object('row', p.row, 'keys', p.keys)
           ORDER BY p.key ${direction}, p.id ${direction}) FROM (
           SELECT x.mnemonic AS key, x.concept_id AS id, to_json(cv) AS row,
             ${keysJsonSql(keys)} AS keys
           FROM expansion_concepts x
           CROSS JOIN LATERAL (
             SELECT * FROM concept_versions h WHERE h.id = x.concept_version_id
             UNION ALL
             SELECT * FROM concept_versions h WHERE x.concept_version_id IS NULL
               AND h.concept_id = x.concept_id AND h.valid_to_seq IS NULL) cv
           WHERE x.expansion_id = $1 AND x.repository_id = ANY($2::bigint[])
             ${includeRetired ? '' : 'AND NOT cv.retired'} ${after}
           ORDER BY x.mnemonic ${direction}, x.concept_id ${direction}
           ${window.limit > 0 ? `LIMIT ${window.limit}` : ''} OFFSET ${window.offset}) p
       ) AS rows`,
      params,
    );
    const { total: count, rows: page } = rows[0];
    return {
      total: count,
      rows: (page ?? []).map((p) => hydrate(this.em, ConceptVersionEntity, p.row)!),
      keys: (page ?? []).map((p) => keyValuesOf(keys, p.keys)),
    };
  }

  /**
   * Every active member concept of an expansion from the given repositories, in id order, with
   * only what a value set shows of it: its code, display name and names (one statement; the
   * members' versions as `memberSlice` reads them). Names only when asked for: they are most of
   * the bytes.
   */
  async memberCodes(
    expansionId: string,
    repositoryIds: string[],
    withNames: boolean,
  ): Promise<MemberCode[]> {
    if (repositoryIds.length === 0) return [];
    return preparedQuery<MemberCode>(
      this.em,
      `SELECT x.repository_id::text AS "repositoryId", x.concept_id::text AS "conceptId",
         cv.mnemonic AS code, cv.display_name AS display,
         ${withNames ? 'cv.names' : `'[]'::jsonb AS names`}
       FROM expansion_concepts x
       CROSS JOIN LATERAL (
         SELECT h.mnemonic, h.display_name, h.names, h.retired FROM concept_versions h
         WHERE h.id = x.concept_version_id
         UNION ALL
         SELECT h.mnemonic, h.display_name, h.names, h.retired FROM concept_versions h
         WHERE x.concept_version_id IS NULL AND h.concept_id = x.concept_id
           AND h.valid_to_seq IS NULL) cv
       WHERE x.expansion_id = $1 AND x.repository_id = ANY($2::bigint[]) AND NOT cv.retired
       ORDER BY x.mnemonic, x.concept_id`,
      [expansionId, repositoryIds],
    );
  }

  /** `[value, count]` per facet over the same filtered concepts (spec core §2.1). */
  facets(where: ConceptScope, filter: ConceptSearch): Promise<FacetCounts> {
    const byRepository = (value: string) => repositoryFacet('cv.repository_id', value);
    return facetsOf(this.em, this.filtered(where, filter), {
      conceptClass: { column: 'cv.concept_class' },
      datatype: { column: 'cv.datatype' },
      // The names' locales, each once per concept (`name_locales`).
      locale: { column: 'cv.name_locales', each: true },
      retired: { column: 'cv.retired::text' },
      source: byRepository('fr.mnemonic'),
      owner: byRepository('coalesce(fo.mnemonic, fu.username)'),
    });
  }

  private filtered(
    where: ConceptScope,
    filter: ConceptSearch,
  ): SelectQueryBuilder<ConceptVersionEntity> {
    const qb =
      where.scope === 'expansion'
        ? memberVersionsQuery(this.em, ConceptVersionEntity, 'cv', where, filter)
        : this.versions.createQueryBuilder('cv');
    if (where.scope === 'source') {
      qb.where('cv.repository_id = :repositoryId', { repositoryId: where.repositoryId });
      atChange(qb, 'cv', where.seq);
    } else if (where.scope === 'public') {
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
      if (where.notSources?.length)
        qb.andWhere('r.mnemonic NOT IN (:...notSources)', { notSources: where.notSources });
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
    if (words.length)
      whereWordsMatch(qb, 'cv.search_text', words, filter.tolerance ?? 'exact', filter.spellings);
    if (filter.ids?.length) {
      qb.andWhere('cv.mnemonic IN (:...ids)', { ids: filter.ids });
    }
    if (filter.childOf !== undefined) {
      qb.andWhere('cv.parent_codes @> ARRAY[:childOf]::text[]', { childOf: filter.childOf });
    }
    whereAnyOf(qb, 'cv.concept_class', filter.conceptClass, 'conceptClass');
    whereAnyOf(qb, 'cv.datatype', filter.datatype, 'datatype');
    if (filter.locale?.length) {
      // The locales of the names, kept as a column the list indexes carry.
      qb.andWhere('cv.name_locales && :locales::text[]', { locales: filter.locale });
    }
    // An expansion's changes are its members' (joined, edited or removed since then).
    if (filter.updatedSince && where.scope !== 'expansion')
      qb.andWhere('cv.created_at >= :updatedSince', { updatedSince: filter.updatedSince });
    whereExtras(qb, 'cv.extras', filter.extras);
    return qb;
  }
}

/** Where concepts are listed from: one source at a change, or every public source. */
export type ConceptScope =
  | { scope: 'source'; repositoryId: string; seq: string | null }
  /** The members of a collection's expansion held in these (visible) repositories. */
  | { scope: 'expansion'; expansionId: string; repositoryIds: string[] }
  | {
      scope: 'public';
      sources?: string[];
      /** Not in sources of these ids. */
      notSources?: string[];
      ownerUsers?: string[];
      ownerOrgs?: string[];
      /** Concepts with a current mapping to one of these ends (source URLs and a code). */
      mapsTo?: Array<{ sourceUrls: string[]; code: string }>;
    };

/** A search with neither words nor filters, retired concepts left out: a source's plain list. */
export function isPlainSearch(filter: ConceptSearch): boolean {
  return !filter.q && unfiltered(filter);
}

/** No condition but the scope's (and `q`, checked apart): current, not retired, all of them. */
function unfiltered(filter: ConceptSearch): boolean {
  return (
    !filter.includeRetired &&
    !filter.ids?.length &&
    filter.childOf === undefined &&
    !filter.conceptClass?.length &&
    !filter.datatype?.length &&
    !filter.locale?.length &&
    !filter.updatedSince &&
    !filter.extras?.conditions.length &&
    !filter.extras?.exists.length
  );
}
