import type { EntityManager } from 'typeorm';
import { ConceptVersionEntity } from '../db/entities';
import { hydrate, type Raw } from './hydrate';

/** One row of a `$match` batch, its text already folded (accents stripped, lower case). */
export interface MatchQuery {
  /** Position in the request (`__index`). */
  index: number;
  /** Folded `name`: scored against the display name (and every name). */
  name: string | null;
  /** Folded `name` and `synonyms`: scored against every name. */
  terms: string[];
  /** Folded `description`. */
  description: string | null;
  /** `id`: an exact concept id. */
  code: string | null;
  /** Exact codes: concept ids, or codes the concept maps to (in `sourceUrl` when given). */
  mappingCodes: Array<{ code: string; sourceUrl: string | null }>;
  /** Filters (case-insensitive equality); `property:<name>` is read from extras. */
  conceptClass: string | null;
  datatype: string | null;
  properties: Record<string, string>;
}

/** Where and how a batch is matched. */
export interface MatchTarget {
  repositoryId: string;
  /** The change the target version is at; null: HEAD. */
  seq: string | null;
  includeRetired: boolean;
  /** Drop candidates no field highlights. */
  bestMatch: boolean;
  limit: number;
  offset: number;
  /**
   * `filter.target_repo` and `target_repo_map_type`: only concepts with a current mapping to this
   * source (by its id when it resolves here, else by its URL; any source when null), of these map
   * types (upper case; any when null).
   */
  mappedTo: { repositoryId: string | null; url: string | null; mapTypes: string[] | null } | null;
  /**
   * The bridge (`ocl-ciel-bridge`): the target is the bridging source, and each row is answered
   * with the concepts of this source version its matches map to (`mappedTo` names the source).
   */
  bridgeTo: { repositoryId: string; seq: string | null } | null;
}

/** One scored concept of a row. */
export interface MatchHit {
  index: number;
  version: ConceptVersionEntity;
  /** Raw score: 10 × (exact code + best text similarity). */
  score: number;
  /** 0–100: the strongest single signal (an exact code is 100). */
  normalized: number;
  /** The token tier (`very_high` … `low`), before the `limit=1` rule. */
  tier: 'very_high' | 'high' | 'medium' | 'low';
  highlight: Record<string, string[]>;
  /** Hits of the row before paging. */
  total: number;
  /** With a bridge: the bridging concept matched, and the map type that reached `version`. */
  bridge: { version: ConceptVersionEntity; mapType: string | null } | null;
}

/** How far a text must be from a name (0–1 blend of trigram similarities) to highlight it. */
const NAME_HIGHLIGHT = 0.6;
const ANY_HIGHLIGHT = 0.35;
const DESCRIPTION_HIGHLIGHT = 0.5;
/** Candidates a row's word search may find, and of them those scored (nearest in length). */
const CANDIDATES_PER_ROW = 300;
const SCORED_PER_ROW = 12;
/** Dictionary words a word the dictionary lacks may stand for (each way: similar, prefix). */
const SIMILAR_WORDS = 4;

/** Words of a row's text that narrow its search at most (the scoring reads all). */
const MAX_WORDS = 10;

/** Words too common to narrow a search (their trigrams are in most rows). */
const STOP_WORDS = new Set([
  'of', 'the', 'and', 'with', 'without', 'for', 'in', 'on', 'to', 'by', 'or', 'de', 'du', 'des',
  'la', 'le', 'les', 'et', 'del', 'el', 'los', 'las', 'y', 'en', 'con', 'sin', 'nos',
]); // prettier-ignore

/**
 * Lexical `$match` (spec operations §4.5) of a batch of rows in one statement: each row's
 * candidates come from the trigram index on `search_text` (the index `q` searches), every word
 * required but each allowed one typo (either half of a long word, or its middle letters swapped
 * back, suffices), or by exact id or mapping code; the candidates are then scored against their
 * names with trigram similarity (order-, accent- and case-insensitive), ranked and paged per row.
 */
export class MatchRepository {
  constructor(private readonly em: EntityManager) {}

  async match(target: MatchTarget, queries: MatchQuery[]): Promise<MatchHit[]> {
    if (queries.length === 0) return [];
    const params: unknown[] = [
      JSON.stringify(queries.map(inputOf)),
      target.repositoryId,
      target.seq,
      target.includeRetired,
      target.limit,
      target.offset,
      target.bestMatch,
      [...STOP_WORDS],
      target.mappedTo?.repositoryId ?? null,
      target.mappedTo?.url ?? null,
      target.mappedTo?.mapTypes ?? null,
    ];
    // Rows of a repository ($repo) at a change ($seq, null: HEAD), one statement shape for both.
    const at = (alias: string, repo: string, seq: string): string =>
      `${alias}.repository_id = ${repo}::bigint
       AND (${seq}::bigint IS NULL AND ${alias}.valid_to_seq IS NULL
         OR ${seq}::bigint IS NOT NULL AND ${alias}.valid_from_seq <= ${seq}::bigint
           AND (${alias}.valid_to_seq IS NULL OR ${alias}.valid_to_seq > ${seq}::bigint))`;
    const scope = (alias: string): string => at(alias, '$2', '$3');
    // The current mappings of a target concept to the source `filter.target_repo` names.
    const mappedTo = (mv: string): string =>
      `${scope(mv)} AND NOT ${mv}.retired
       AND ($10::text IS NULL OR ${mv}.to_repository_id = $9::bigint
         OR ${mv}.to_source_url = $10::text)
       AND ($11::text[] IS NULL OR upper(${mv}.map_type) = ANY($11::text[]))`;
    const mapped = (cv: string): string =>
      `($10::text IS NULL AND $11::text[] IS NULL OR EXISTS (SELECT 1 FROM mapping_versions mt
         WHERE mt.from_concept_id = ${cv}.concept_id AND ${mappedTo('mt')}))`;
    // `+ 0`: a word search reads the word index alone; AND-ed with the head index it would read
    // every current concept's entry of the target too.
    const wordScope = scope('cv').replace('cv.repository_id =', 'cv.repository_id + 0 =');
    const needed = target.limit + target.offset;
    const matched = `
       SELECT k.i, k.score, k.tier, k.total, k.name_score, k.name_text, k.syn_score, k.syn_text,
         k.desc_score, k.desc_text, k.id_hit, k.map_hit, k.exact, k.text, to_json(cv) AS version
       FROM kept k JOIN concept_versions cv ON cv.id = k.id
       WHERE k.rank > $6 AND ($5 = 0 OR k.rank <= $6 + $5)
       ORDER BY k.i, k.rank`;
    // The bridge: each matched concept's mappings to the other source, followed to that source's
    // concepts at its version; a concept reached twice keeps its best match (then SAME-AS).
    // Ranked and paged as the concepts reached, by the rank of the match that reached them.
    const bridged = (): string => {
      params.push(target.bridgeTo!.repositoryId, target.bridgeTo!.seq);
      return `, reached AS (
         SELECT k.*, mv.map_type, tv.id AS target_id, tc.mnemonic AS target_code,
           row_number() OVER (PARTITION BY k.i, tv.id
             ORDER BY k.rank, upper(mv.map_type) = 'SAME-AS' DESC, mv.id) AS nth
         FROM kept k
         JOIN concept_versions bv ON bv.id = k.id
         JOIN mapping_versions mv ON mv.from_concept_id = bv.concept_id AND ${mappedTo('mv')}
         JOIN concepts tc ON tc.repository_id = $12::bigint AND tc.mnemonic = mv.to_concept_code
         JOIN concept_versions tv ON tv.concept_id = tc.id AND ${at('tv', '$12', '$13')}
           AND ($4 OR NOT tv.retired)
       ), ranked AS (
         SELECT r.*, count(*) OVER (PARTITION BY r.i)::int AS reached,
           row_number() OVER (PARTITION BY r.i
             ORDER BY r.rank, upper(r.map_type) = 'SAME-AS' DESC, r.target_code) AS target_rank
         FROM reached r WHERE r.nth = 1
       )
       SELECT r.i, r.score, r.tier, r.reached AS total, r.name_score, r.name_text, r.syn_score,
         r.syn_text, r.desc_score, r.desc_text, r.id_hit, r.map_hit, r.exact, r.text, r.map_type,
         to_json(tv) AS version, to_json(bv) AS bridge
       FROM ranked r
       JOIN concept_versions tv ON tv.id = r.target_id
       JOIN concept_versions bv ON bv.id = r.id
       WHERE r.target_rank > $6 AND ($5 = 0 OR r.target_rank <= $6 + $5)
       ORDER BY r.i, r.target_rank`;
    };
    const answer = target.bridgeTo ? bridged() : matched;
    const rows = await this.em.query<Array<MatchRaw>>(
      `WITH input AS (
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(i int, text text, name text,
           terms text[], description text, code text, codes jsonb, concept_class text,
           datatype text, properties jsonb)
       ), words AS (
         -- Each word of a row's text as the index tokenizes it (stop words left to the scoring),
         -- with the dictionary's words it may stand for: itself; and only when the dictionary
         -- lacks it (a typo, an abbreviation) itself with two neighbouring letters swapped back,
         -- the most similar words and those it begins.
         SELECT r.i, w.n, '(' || concat_ws(' | ',
             string_agg(DISTINCT '''' || v.word || '''', ' | '),
             -- A word the dictionary lacks may begin one (an abbreviation): a prefix search.
             CASE WHEN w.unknown AND length(w.word) >= 3 AND w.word ~ '^[[:alnum:]]+$'
               THEN '''' || w.word || ''':*' END) || ')' AS alternatives
         FROM input r
         CROSS JOIN LATERAL (
           -- A lookup per word (not a hash of the whole dictionary).
           SELECT t.word, t.n, (SELECT 1 FROM search_words e WHERE e.word = t.word LIMIT 1) IS NULL
               AS unknown
           FROM unnest(tsvector_to_array(to_tsvector('simple', r.text))) WITH ORDINALITY AS t(word, n)
           -- At most ${MAX_WORDS} words (in the word index's order) narrow a row, as q takes 10.
           WHERE t.word <> ALL($8::text[]) AND t.n <= ${MAX_WORDS}
         ) w
         LEFT JOIN LATERAL (
           SELECT s.word FROM search_words s
           WHERE s.word = ANY(ARRAY(
             SELECT w.word
             UNION ALL
             SELECT substr(w.word, 1, k - 1) || substr(w.word, k + 1, 1) || substr(w.word, k, 1)
               || substr(w.word, k + 2)
             FROM generate_series(1, length(w.word) - 1) AS k WHERE w.unknown AND length(w.word) >= 4))
           UNION ALL
           (SELECT s.word FROM search_words s
            WHERE length(w.word) >= 3 AND s.word % w.word
            ORDER BY similarity(s.word, w.word) DESC
            -- Only for words the dictionary lacks (a LIMIT of 0 runs nothing).
            LIMIT CASE WHEN w.unknown THEN ${SIMILAR_WORDS} ELSE 0 END)
         ) v ON v.word ~ '^[[:alnum:]._/-]+$'
         GROUP BY r.i, w.n, w.word, w.unknown
         HAVING count(v.word) > 0 OR w.unknown AND length(w.word) >= 3 AND w.word ~ '^[[:alnum:]]+$'
       ), groups AS (
         SELECT i, array_agg(alternatives ORDER BY n) AS g FROM words GROUP BY i
       ), queries AS (
         -- Every word (as one of its alternatives); and every word but one, for rows where that
         -- finds fewer than the page needs.
         SELECT i, to_tsquery('simple', array_to_string(g, ' & ')) AS strict,
           CASE WHEN cardinality(g) > 1 THEN to_tsquery('simple', (
             SELECT string_agg('(' || array_to_string(g[:k - 1] || g[k + 1:], ' & ') || ')', ' | ')
             FROM generate_series(1, cardinality(g)) AS k)) END AS relaxed
         FROM groups
       ), candidates AS (
         ${[
           `SELECT q.i, c.id FROM queries q JOIN input r ON r.i = q.i CROSS JOIN LATERAL (
              WITH strict AS (
                SELECT cv.id, cv.names FROM concept_versions cv
                WHERE to_tsvector('simple', cv.search_text) @@ q.strict AND ${wordScope}
                  AND ${mapped('cv')}
                LIMIT ${CANDIDATES_PER_ROW})
              SELECT x.id FROM (
                SELECT id, names, 0 AS pass FROM strict
                UNION ALL
                (SELECT cv.id, cv.names, 1 FROM concept_versions cv
                 WHERE q.relaxed IS NOT NULL AND (SELECT count(*) FROM strict) < ${needed}
                   AND to_tsvector('simple', cv.search_text) @@ q.relaxed AND ${wordScope}
                   AND ${mapped('cv')}
                 LIMIT ${CANDIDATES_PER_ROW})
              ) x
              -- Every word's matches first, then those nearest the text in length: what the
              -- scoring ranks highest.
              ORDER BY x.pass, (SELECT min(abs(length(n.name) - length(r.text)))
                FROM jsonb_to_recordset(x.names) AS n(name text))
              LIMIT ${SCORED_PER_ROW + needed}
            ) c`,
           `SELECT r.i, cv.id FROM input r JOIN concept_versions cv
              ON ${scope('cv')} AND cv.mnemonic = r.code`,
           `SELECT r.i, cv.id FROM input r
              CROSS JOIN LATERAL jsonb_to_recordset(r.codes) AS m(code text, url text)
              JOIN concept_versions cv ON ${scope('cv')} AND cv.mnemonic = m.code AND m.url IS NULL`,
           `SELECT r.i, cv.id FROM input r
              CROSS JOIN LATERAL jsonb_to_recordset(r.codes) AS m(code text, url text)
              JOIN mapping_versions mv ON ${scope('mv')} AND NOT mv.retired
                AND mv.search_text LIKE '%' || registry_fold(m.code) || '%'
                AND lower(mv.to_concept_code) = lower(m.code)
                AND (m.url IS NULL OR mv.to_source_url = m.url)
              JOIN concept_versions cv ON cv.concept_id = mv.from_concept_id AND ${scope('cv')}`,
         ].join('\n UNION ')}
       ), scored AS (
         SELECT c.i, cv.id, s.*,
           (CASE WHEN s.exact THEN 1 ELSE 0 END + s.text) * 10 AS score
         FROM candidates c
         JOIN input r ON r.i = c.i
         JOIN concept_versions cv ON cv.id = c.id
         CROSS JOIN LATERAL (
           SELECT n.name_score, n.name_text, n.syn_score, n.syn_text, d.desc_score, d.desc_text,
             lower(cv.mnemonic) = lower(r.code) AS id_hit,
             k.code AS map_hit,
             (lower(cv.mnemonic) = lower(r.code) OR k.code IS NOT NULL) AS exact,
             greatest(n.name_score, 0.95 * n.syn_score, 0.6 * d.desc_score) AS text
           FROM (
             SELECT
               coalesce(max(x.score) FILTER (WHERE x.display), 0) AS name_score,
               (array_agg(x.name ORDER BY x.score DESC) FILTER (WHERE x.display))[1] AS name_text,
               coalesce(max(x.score) FILTER (WHERE x.synonym), 0) AS syn_score,
               (array_agg(x.name ORDER BY x.score DESC) FILTER (WHERE x.synonym))[1] AS syn_text
             FROM (
               SELECT nm.name, NOT coalesce(t.term = r.name AND nm.name = cv.display_name, false) AS synonym,
                 coalesce(t.term = r.name AND nm.name = cv.display_name, false) AS display,
                 0.6 * similarity(t.term, f.name) + 0.4 * word_similarity(t.term, f.name) AS score
               FROM jsonb_to_recordset(cv.names) AS nm(name text)
               CROSS JOIN LATERAL (SELECT registry_fold(nm.name) AS name) f
               CROSS JOIN unnest(r.terms) AS t(term)
             ) x
           ) n
           CROSS JOIN LATERAL (
             SELECT coalesce(max(word_similarity(r.description, registry_fold(dd.description))), 0)
                 AS desc_score,
               (array_agg(dd.description ORDER BY word_similarity(r.description,
                  registry_fold(dd.description)) DESC))[1] AS desc_text
             FROM jsonb_to_recordset(CASE WHEN r.description IS NULL THEN '[]'::jsonb
                    ELSE cv.descriptions END) AS dd(description text)
           ) d
           LEFT JOIN LATERAL (
             SELECT m.code FROM jsonb_to_recordset(r.codes) AS m(code text, url text)
             WHERE (m.url IS NULL AND lower(cv.mnemonic) = lower(m.code))
               OR EXISTS (SELECT 1 FROM mapping_versions mv
                 WHERE mv.from_concept_id = cv.concept_id AND ${scope('mv')} AND NOT mv.retired
                   AND lower(mv.to_concept_code) = lower(m.code)
                   AND (m.url IS NULL OR mv.to_source_url = m.url))
             LIMIT 1
           ) k ON true
         ) s
         WHERE ($4 OR NOT cv.retired) AND ${mapped('cv')}
           AND (r.concept_class IS NULL OR lower(cv.concept_class) = lower(r.concept_class))
           AND (r.datatype IS NULL OR lower(cv.datatype) = lower(r.datatype))
           AND (r.properties IS NULL OR NOT EXISTS (
             SELECT 1 FROM jsonb_each_text(r.properties) p
             WHERE lower(coalesce(cv.extras ->> p.key, '')) <> lower(p.value)))
       ), tiered AS (
         SELECT s.*,
           CASE
             WHEN s.name_score >= ${NAME_HIGHLIGHT} THEN 'very_high'
             WHEN s.syn_score >= ${NAME_HIGHLIGHT} THEN 'high'
             WHEN s.exact OR s.name_score >= ${ANY_HIGHLIGHT} OR s.syn_score >= ${ANY_HIGHLIGHT}
               OR s.desc_score >= ${DESCRIPTION_HIGHLIGHT} THEN 'medium'
             ELSE 'low'
           END AS tier
         FROM scored s
       ), kept AS (
         SELECT t.*, count(*) OVER (PARTITION BY t.i)::int AS total,
           row_number() OVER (PARTITION BY t.i ORDER BY t.score DESC, t.id) AS rank
         FROM tiered t
         WHERE NOT $7 OR t.tier <> 'low'
       )
       ${answer}`,
      params,
    );
    return rows.map((raw) => hitOf(this.em, raw));
  }
}

interface MatchRaw {
  i: number;
  score: number;
  tier: MatchHit['tier'];
  total: number;
  name_score: number;
  name_text: string | null;
  syn_score: number;
  syn_text: string | null;
  desc_score: number;
  desc_text: string | null;
  id_hit: boolean | null;
  map_hit: string | null;
  exact: boolean | null;
  text: number;
  version: Raw;
  map_type?: string | null;
  bridge?: Raw;
}

function hitOf(em: EntityManager, raw: MatchRaw): MatchHit {
  const highlight: Record<string, string[]> = {};
  const version = hydrate(em, ConceptVersionEntity, raw.version)!;
  if (raw.id_hit) highlight.id = [version.mnemonic];
  if (raw.map_hit) highlight.mapping_code = [raw.map_hit];
  if (raw.name_text && raw.name_score >= ANY_HIGHLIGHT) highlight.name = [raw.name_text];
  if (raw.syn_text && raw.syn_score >= ANY_HIGHLIGHT) highlight.synonyms = [raw.syn_text];
  if (raw.desc_text && raw.desc_score >= DESCRIPTION_HIGHLIGHT)
    highlight.description = [raw.desc_text];
  return {
    index: raw.i,
    version,
    score: round(Number(raw.score), 4),
    normalized: raw.exact ? 100 : Math.round(100 * Math.min(1, Number(raw.text))),
    tier: raw.tier,
    highlight,
    total: raw.total,
    bridge: raw.bridge
      ? { version: hydrate(em, ConceptVersionEntity, raw.bridge)!, mapType: raw.map_type ?? null }
      : null,
  };
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

function inputOf(query: MatchQuery): Record<string, unknown> {
  const properties = Object.keys(query.properties).length ? query.properties : null;
  return {
    i: query.index,
    text: query.name ?? query.terms[0] ?? query.description ?? '',
    name: query.name,
    terms: query.terms,
    description: query.description,
    code: query.code,
    codes: query.mappingCodes.map((m) => ({ code: m.code, url: m.sourceUrl })),
    concept_class: query.conceptClass,
    datatype: query.datatype,
    properties,
  };
}
