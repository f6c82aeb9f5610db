import type { EntityManager } from 'typeorm';
import { visibleRepository, type Viewer } from './list';

/** `[value, count]` pairs, most frequent first (OCL's distribution lists). */
export type Distribution = Array<[string | null, number]>;

export interface ContentSummary {
  concepts: {
    active: number;
    retired: number;
    conceptClass: Distribution;
    datatype: Distribution;
    locale: Distribution;
    nameType: Distribution;
    /** Names of the custom attributes active concepts carry. */
    extrasKeys: string[];
  };
  mappings: { active: number; retired: number; mapType: Distribution };
}

/** Whose content a summary reads: a source as of a change (null: HEAD), or an expansion. */
export type SummaryScope =
  | { kind: 'source'; repositoryId: string; seq: string | null }
  | { kind: 'expansion'; expansionId: string | null };

/** A repository's versions (HEAD not counted) and how many are released. */
export interface VersionTotals {
  total: number;
  released: number;
}

export interface HolderRow {
  version_id: string;
  /** `Source` or `Collection`. */
  kind: string;
  repository_id: string;
  mnemonic: string;
}

export class SummaryRepository {
  constructor(private readonly em: EntityManager) {}

  /**
   * What a repository version holds, counted by property (OCL's `summary/` with `verbose`). An
   * expansion's members from sources the viewer may not see are not counted.
   */
  async contentSummary(scope: SummaryScope, viewer: Viewer): Promise<ContentSummary> {
    const params: unknown[] = [];
    const concepts = this.members(scope, 'concept', viewer, params);
    const mappings = this.members(scope, 'mapping', viewer, params);
    const [row] = await this.em.query<
      Array<{
        c_active: number;
        c_retired: number;
        m_active: number;
        m_retired: number;
        concept_class: Distribution | null;
        datatype: Distribution | null;
        locale: Distribution | null;
        name_type: Distribution | null;
        map_type: Distribution | null;
        extras_keys: string[] | null;
      }>
    >(
      `WITH c AS (${concepts}), m AS (${mappings})
       SELECT
         (SELECT count(*)::int FROM c WHERE NOT retired) AS c_active,
         (SELECT count(*)::int FROM c WHERE retired) AS c_retired,
         (SELECT count(*)::int FROM m WHERE NOT retired) AS m_active,
         (SELECT count(*)::int FROM m WHERE retired) AS m_retired,
         ${distribution('c', 'concept_class')} AS concept_class,
         ${distribution('c', 'datatype')} AS datatype,
         (SELECT json_agg(json_build_array(v, n) ORDER BY n DESC, v) FROM (
            SELECT l.v, count(DISTINCT c.id)::int AS n FROM c,
              LATERAL (SELECT x->>'locale' AS v FROM jsonb_array_elements(c.names) x) l
            WHERE NOT c.retired GROUP BY l.v) d) AS locale,
         (SELECT json_agg(json_build_array(v, n) ORDER BY n DESC, v) FROM (
            SELECT l.v, count(*)::int AS n FROM c,
              LATERAL (SELECT x->>'name_type' AS v FROM jsonb_array_elements(c.names) x) l
            WHERE NOT c.retired GROUP BY l.v) d) AS name_type,
         ${distribution('m', 'map_type')} AS map_type,
         (SELECT json_agg(DISTINCT k ORDER BY k) FROM c,
            LATERAL jsonb_object_keys(CASE WHEN jsonb_typeof(c.extras) = 'object' THEN c.extras
              ELSE '{}'::jsonb END) k
          WHERE NOT c.retired) AS extras_keys`,
      params,
    );
    return {
      concepts: {
        active: row.c_active,
        retired: row.c_retired,
        conceptClass: row.concept_class ?? [],
        datatype: row.datatype ?? [],
        locale: row.locale ?? [],
        nameType: row.name_type ?? [],
        extrasKeys: row.extras_keys ?? [],
      },
      mappings: { active: row.m_active, retired: row.m_retired, mapType: row.map_type ?? [] },
    };
  }

  /** Versions of a repository: all of them (HEAD excluded) and the released ones. */
  async versionTotals(repositoryIds: readonly string[]): Promise<Map<string, VersionTotals>> {
    const rows = await this.em.query<Array<VersionTotals & { repository_id: string }>>(
      `SELECT repository_id::text, count(*)::int AS total,
         count(*) FILTER (WHERE released)::int AS released
       FROM repository_versions WHERE repository_id = ANY($1::bigint[]) AND seq IS NOT NULL
       GROUP BY repository_id`,
      [repositoryIds],
    );
    return new Map(
      rows.map(({ repository_id, total, released }) => [repository_id, { total, released }]),
    );
  }

  /**
   * For each concept (or mapping) version, the source versions that froze it and the collection
   * versions whose default expansion holds it (collections the viewer may not see left out).
   */
  async holders(
    object: 'concept' | 'mapping',
    versionIds: readonly string[],
    viewer: Viewer,
  ): Promise<Map<string, HolderRow[]>> {
    const params: unknown[] = [versionIds];
    const visible = visibleRepository('r', viewer, params);
    const rows = await this.em.query<Array<HolderRow & { object_version_id: string }>>(
      `SELECT ov.id::text AS object_version_id, rv.id::text AS version_id, 'Source' AS kind,
         rv.repository_id::text AS repository_id, rv.mnemonic
       FROM ${object}_versions ov JOIN repository_versions rv ON rv.repository_id = ov.repository_id
         AND rv.seq IS NOT NULL AND rv.seq >= ov.valid_from_seq
         AND (ov.valid_to_seq IS NULL OR rv.seq < ov.valid_to_seq)
       WHERE ov.id = ANY($1::bigint[])
       UNION ALL
       SELECT x.${object}_version_id::text, rv.id::text, 'Collection', rv.repository_id::text, rv.mnemonic
       FROM expansion_${object}s x JOIN repository_versions rv ON rv.expansion_id = x.expansion_id
         AND rv.seq IS NOT NULL
       JOIN repositories r ON r.id = rv.repository_id
       WHERE x.${object}_version_id = ANY($1::bigint[]) AND ${visible}
       ORDER BY 1, 4, 5`,
      params,
    );
    const byVersion = new Map<string, HolderRow[]>();
    for (const row of rows) {
      byVersion.set(row.object_version_id, [...(byVersion.get(row.object_version_id) ?? []), row]);
    }
    return byVersion;
  }

  /**
   * What each reference selected in an expansion (its rows, concepts and mappings apart) and when
   * the expansion last evaluated references; null when there is no such expansion.
   */
  async referenceResults(
    expansionId: string,
    referenceIds: readonly string[],
  ): Promise<{
    resolvedAt: Date;
    counts: Map<string, { concepts: number; mappings: number }>;
  } | null> {
    const [expansion] = await this.em.query<Array<{ updated_at: Date }>>(
      `SELECT updated_at FROM expansions WHERE id = $1`,
      [expansionId],
    );
    if (!expansion) return null;
    const rows = await this.em.query<
      Array<{ reference_id: string; concepts: number; mappings: number }>
    >(
      `SELECT reference_id::text AS reference_id,
         count(*) FILTER (WHERE resource = 'c')::int AS concepts,
         count(*) FILTER (WHERE resource = 'm')::int AS mappings
       FROM expansion_reference_rows WHERE expansion_id = $1 AND reference_id = ANY($2::bigint[])
       GROUP BY reference_id`,
      [expansionId, referenceIds],
    );
    return {
      resolvedAt: expansion.updated_at,
      counts: new Map(
        rows.map((r) => [r.reference_id, { concepts: r.concepts, mappings: r.mappings }]),
      ),
    };
  }

  /** The concept or mapping versions of a source version or an expansion, as SQL. */
  private members(
    scope: SummaryScope,
    object: 'concept' | 'mapping',
    viewer: Viewer,
    params: unknown[],
  ): string {
    const table = `${object}_versions`;
    if (scope.kind === 'source') {
      params.push(scope.repositoryId);
      const repo = `$${params.length}`;
      if (scope.seq === null) {
        return `SELECT v.* FROM ${table} v WHERE v.repository_id = ${repo} AND v.valid_to_seq IS NULL`;
      }
      params.push(scope.seq);
      const seq = `$${params.length}`;
      return `SELECT v.* FROM ${table} v WHERE v.repository_id = ${repo}
        AND v.valid_from_seq <= ${seq} AND (v.valid_to_seq IS NULL OR v.valid_to_seq > ${seq})`;
    }
    params.push(scope.expansionId ?? '0');
    const expansion = `$${params.length}`;
    const visible = visibleRepository('r', viewer, params);
    // A member without a pinned version follows its object's current version.
    return `SELECT v.* FROM expansion_${object}s x
      JOIN ${table} v ON v.id = coalesce(x.${object}_version_id,
        (SELECT h.id FROM ${table} h WHERE h.${object}_id = x.${object}_id AND h.valid_to_seq IS NULL))
      JOIN repositories r ON r.id = v.repository_id
      WHERE x.expansion_id = ${expansion} AND ${visible}`;
  }
}

function distribution(from: string, column: string): string {
  return `(SELECT json_agg(json_build_array(v, n) ORDER BY n DESC, v) FROM (
    SELECT ${column} AS v, count(*)::int AS n FROM ${from} WHERE NOT retired GROUP BY ${column}) d)`;
}
