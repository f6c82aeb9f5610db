import type { EntityManager } from 'typeorm';
import type { ConceptDescription, ConceptName } from '../db/entities';
import { interval } from './versioned.repository';

/** Concepts (`c`) or mappings (`m`). */
export type DiffKind = 'c' | 'm';

const TABLES: Record<DiffKind, { table: string; key: string }> = {
  c: { table: 'concept_versions', key: 'concept_id' },
  m: { table: 'mapping_versions', key: 'mapping_id' },
};

/** One side of a changed object: the version a source version holds of it. */
export interface DiffSide {
  versionId: string;
  retired: boolean;
  smart: string | null;
  standard: string | null;
}

/**
 * An object whose version differs between two source versions: the one the older holds (null:
 * none) and the one the newer holds (null: none).
 */
export interface DiffRow {
  code: string;
  objectId: string;
  before: DiffSide | null;
  after: DiffSide | null;
}

/** The two change numbers compared: `from` (the older, frozen) and `to` (null: HEAD). */
export interface DiffSpan {
  repositoryId: string;
  from: string;
  to: string | null;
}

/** What a changelog shows of a concept version. */
export interface ConceptDiffDetail {
  versionId: string;
  conceptId: string;
  code: string;
  displayName: string | null;
  conceptClass: string | null;
  datatype: string | null;
  names: ConceptName[];
  descriptions: ConceptDescription[];
}

/** What a changelog shows of a mapping version. */
export interface MappingDiffDetail {
  versionId: string;
  code: string;
  mapType: string | null;
  fromConceptId: string | null;
  fromConceptCode: string | null;
  fromSourceUrl: string | null;
  toConceptCode: string | null;
  toSourceUrl: string | null;
  externalId: string | null;
}

interface RawDiff {
  code: string;
  objectId: string;
  beforeId: string | null;
  beforeRetired: boolean | null;
  beforeSmart: string | null;
  beforeStandard: string | null;
  afterId: string | null;
  afterRetired: boolean | null;
  afterSmart: string | null;
  afterStandard: string | null;
}

/**
 * Two versions of one source compared by their change numbers (design §4: a version row is
 * current for the changes `valid_from_seq <= s < valid_to_seq`): what differs is the rows that
 * ended or began between them, found by index, whatever the source's size. What spans both is
 * only counted (or listed by code).
 */
export class VersionDiffRepository {
  constructor(private readonly em: EntityManager) {}

  /** Every object whose version differs between the two change numbers, by code. */
  async changed(kind: DiffKind, span: DiffSpan): Promise<DiffRow[]> {
    const { table, key } = TABLES[kind];
    const params: unknown[] = [span.repositoryId, span.from];
    // Current at `to` (it begins after `from`); ended after `from` and by `to`.
    const atTo = interval(span.to, params);
    const endedBy = span.to === null ? '' : `AND valid_to_seq <= $${params.length}`;
    const rows = await this.em.query<RawDiff[]>(
      `WITH before AS (
         SELECT ${key} AS object_id, id, mnemonic, retired, checksum_smart, checksum_standard
         FROM ${table}
         WHERE repository_id = $1 AND valid_to_seq IS NOT NULL AND valid_to_seq > $2
           ${endedBy} AND valid_from_seq <= $2
       ), after AS (
         SELECT ${key} AS object_id, id, mnemonic, retired, checksum_smart, checksum_standard
         FROM ${table}
         WHERE repository_id = $1 AND valid_from_seq > $2 AND ${atTo}
       )
       SELECT coalesce(a.mnemonic, b.mnemonic) AS code,
         coalesce(a.object_id, b.object_id)::text AS "objectId",
         b.id::text AS "beforeId", b.retired AS "beforeRetired",
         b.checksum_smart AS "beforeSmart", b.checksum_standard AS "beforeStandard",
         a.id::text AS "afterId", a.retired AS "afterRetired",
         a.checksum_smart AS "afterSmart", a.checksum_standard AS "afterStandard"
       FROM before b FULL JOIN after a ON a.object_id = b.object_id
       ORDER BY 1`,
      params,
    );
    return rows.map((r) => ({
      code: r.code,
      objectId: r.objectId,
      before: sideOf(r.beforeId, r.beforeRetired, r.beforeSmart, r.beforeStandard),
      after: sideOf(r.afterId, r.afterRetired, r.afterSmart, r.afterStandard),
    }));
  }

  /**
   * The objects both change numbers hold in the same version, not retired: unchanged. Counted,
   * or (`codes`) listed by code.
   */
  async unchanged(kind: DiffKind, span: DiffSpan, codes: false): Promise<number>;
  async unchanged(kind: DiffKind, span: DiffSpan, codes: true): Promise<string[]>;
  async unchanged(kind: DiffKind, span: DiffSpan, codes: boolean): Promise<number | string[]> {
    const { table } = TABLES[kind];
    const params: unknown[] = [span.repositoryId, span.from];
    // Current at `from` and still at `to`.
    const where = `repository_id = $1 AND valid_from_seq <= $2 AND NOT retired
      AND ${interval(span.to, params)}`;
    if (!codes) {
      const [row] = await this.em.query<Array<{ n: number }>>(
        `SELECT count(*)::int AS n FROM ${table} WHERE ${where}`,
        params,
      );
      return row.n;
    }
    const rows = await this.em.query<Array<{ code: string }>>(
      `SELECT mnemonic AS code FROM ${table} WHERE ${where} ORDER BY mnemonic`,
      params,
    );
    return rows.map((r) => r.code);
  }

  /** Concept versions by id, with what a changelog shows of them. */
  async conceptDetails(versionIds: readonly string[]): Promise<Map<string, ConceptDiffDetail>> {
    if (versionIds.length === 0) return new Map();
    const rows = await this.em.query<ConceptDiffDetail[]>(
      `SELECT id::text AS "versionId", concept_id::text AS "conceptId", mnemonic AS code,
         display_name AS "displayName", concept_class AS "conceptClass", datatype, names, descriptions
       FROM concept_versions WHERE id = ANY($1::bigint[])`,
      [versionIds],
    );
    return new Map(rows.map((r) => [r.versionId, r]));
  }

  /** Mapping versions by id, with what a changelog shows of them. */
  async mappingDetails(versionIds: readonly string[]): Promise<Map<string, MappingDiffDetail>> {
    if (versionIds.length === 0) return new Map();
    const rows = await this.em.query<MappingDiffDetail[]>(
      `SELECT id::text AS "versionId", mnemonic AS code, map_type AS "mapType",
         from_concept_id::text AS "fromConceptId", from_concept_code AS "fromConceptCode",
         from_source_url AS "fromSourceUrl", to_concept_code AS "toConceptCode",
         to_source_url AS "toSourceUrl", external_id AS "externalId"
       FROM mapping_versions WHERE id = ANY($1::bigint[])`,
      [versionIds],
    );
    return new Map(rows.map((r) => [r.versionId, r]));
  }

  /** The display names of these concepts as change number `seq` holds them (null: HEAD). */
  async displayNamesAt(
    conceptIds: readonly string[],
    seq: string | null,
  ): Promise<Map<string, { code: string; displayName: string | null }>> {
    if (conceptIds.length === 0) return new Map();
    const params: unknown[] = [conceptIds];
    const at = interval(seq, params);
    const rows = await this.em.query<
      Array<{ conceptId: string; code: string; displayName: string | null }>
    >(
      `SELECT concept_id::text AS "conceptId", mnemonic AS code, display_name AS "displayName"
       FROM concept_versions WHERE concept_id = ANY($1::bigint[]) AND ${at}`,
      params,
    );
    return new Map(rows.map((r) => [r.conceptId, { code: r.code, displayName: r.displayName }]));
  }
}

function sideOf(
  versionId: string | null,
  retired: boolean | null,
  smart: string | null,
  standard: string | null,
): DiffSide | null {
  return versionId === null ? null : { versionId, retired: retired === true, smart, standard };
}
