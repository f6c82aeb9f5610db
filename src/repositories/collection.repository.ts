import type { EntityManager, EntityTarget, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { preparedQuery } from './prepared';
import { interval } from './versioned.repository';
import {
  afterSql,
  keysJsonSql,
  keyValuesOf,
  likeLiteral,
  searchWords,
  visibleRepository,
  type Counted,
  type KeyColumn,
  type KeyType,
  type Slice,
  type Viewer,
  type Window,
} from './list';

export type ResourceType = 'Concept' | 'Mapping';

/** One `{property, op, value}` of a reference filter (spec operations §2.4), already checked. */
export interface PropertyFilter {
  property: string;
  op: FilterOp;
  value: string;
}

export type FilterOp =
  | '='
  | 'in'
  | 'not-in'
  | 'regex'
  | 'exists'
  | 'is-a'
  | 'descendent-of'
  | 'is-not-a'
  | 'generalizes';

/** A collection reference as stored (spec operations §2.4), current for its interval of changes. */
export interface ReferenceRow {
  id: string;
  collectionId: string;
  expression: string;
  include: boolean;
  resourceType: ResourceType;
  system: string | null;
  version: string | null;
  code: string | null;
  resourceVersion: string | null;
  filter: PropertyFilter[] | null;
  cascade: string | Record<string, unknown> | null;
  namespace: string | null;
  display: string | null;
  validFromSeq: string;
  validToSeq: string | null;
  createdAt: Date;
  createdBy: string | null;
}

export type NewReference = Omit<
  ReferenceRow,
  'id' | 'collectionId' | 'validFromSeq' | 'validToSeq' | 'createdAt' | 'createdBy'
>;

export interface ExpansionRow {
  id: string;
  collectionId: string;
  versionId: string;
  /** The collection version it belongs to (`HEAD` or a version id). */
  versionMnemonic: string;
  mnemonic: string;
  parameters: Record<string, unknown>;
  canonicalUrl: string | null;
  isProcessing: boolean;
  resolved: ResolvedSystem[];
  createdAt: Date;
  updatedAt: Date;
  createdBy: string | null;
}

/** A repository version an expansion evaluated references against (or failed to). */
export interface ResolvedSystem {
  system: string;
  version: string | null;
  url: string | null;
  resolved: boolean;
}

export interface ExpansionCounts {
  activeConcepts: number;
  activeMappings: number;
}

/**
 * Which rows of a source (or of another collection's expansion) a reference selects: the
 * members of an expansion are computed from these, set-based.
 */
export interface Selection {
  referenceId: string;
  include: boolean;
  resource: 'c' | 'm';
  repositoryId: string;
  /** The change the repository is read at; null = HEAD. */
  seq: string | null;
  /** Store the version read (a static reference, or any reference of a frozen version). */
  pin: boolean;
  /** Ids of concepts or mappings; absent = every one the repository holds. */
  codes?: string[];
  /** One concept or mapping version, by id (a static reference). */
  versionId?: string;
  filters?: PropertyFilter[];
  /** Expansion parameters that narrow every selection. */
  activeOnly: boolean;
  text?: string;
}

const REFERENCE_COLUMNS = `
  id::text AS "id", collection_id::text AS "collectionId", expression, include,
  resource_type AS "resourceType", system, version, code, resource_version AS "resourceVersion",
  filter, cascade, namespace, display, valid_from_seq::text AS "validFromSeq",
  valid_to_seq::text AS "validToSeq", created_at AS "createdAt", created_by AS "createdBy"`;

/** What a reference list narrows to: `q` over the expressions, inclusions or exclusions, a kind. */
export interface ReferenceFilter {
  q?: string;
  include?: boolean;
  resourceType?: ResourceType;
}

/** The order of `listReferences` (the id), as keyset paging compares it. */
const REFERENCE_KEYS: KeyColumn[] = [
  { sql: 'collection_references.id', type: 'id', desc: false, nullable: false },
];

const EXPANSION_COLUMNS = `
  e.id::text AS "id", e.collection_id::text AS "collectionId", e.version_id::text AS "versionId",
  v.mnemonic AS "versionMnemonic", e.mnemonic, e.parameters, e.canonical_url AS "canonicalUrl",
  e.is_processing AS "isProcessing", e.resolved, e.created_at AS "createdAt",
  e.updated_at AS "updatedAt", e.created_by AS "createdBy"`;

/** The tables behind each resource. */
const TABLES = {
  c: {
    objects: 'concepts',
    versions: 'concept_versions',
    key: 'concept_id',
    members: 'expansion_concepts',
    memberVersion: 'concept_version_id',
  },
  m: {
    objects: 'mappings',
    versions: 'mapping_versions',
    key: 'mapping_id',
    members: 'expansion_mappings',
    memberVersion: 'mapping_version_id',
  },
} as const;

/** Concept properties a reference filter may name, as columns of `concept_versions v`. */
const CONCEPT_PROPERTIES: Record<string, string> = {
  concept_class: 'v.concept_class',
  conceptclass: 'v.concept_class',
  class: 'v.concept_class',
  datatype: 'v.datatype',
  retired: 'v.retired::text',
  inactive: 'v.retired::text',
  code: 'v.mnemonic',
  id: 'v.mnemonic',
  display: 'v.display_name',
  display_name: 'v.display_name',
  external_id: 'v.external_id',
  locale: 'v.display_locale',
};

/** Mapping properties a reference filter may name, as columns of `mapping_versions v`. */
const MAPPING_PROPERTIES: Record<string, string> = {
  map_type: 'v.map_type',
  maptype: 'v.map_type',
  retired: 'v.retired::text',
  inactive: 'v.retired::text',
  id: 'v.mnemonic',
  from_concept_code: 'v.from_concept_code',
  to_concept_code: 'v.to_concept_code',
  from_source_url: 'v.from_source_url',
  to_source_url: 'v.to_source_url',
  external_id: 'v.external_id',
};

/** The properties each resource's filters accept (extras by `extras.<name>` as well). */
export const FILTER_PROPERTIES = {
  Concept: Object.keys(CONCEPT_PROPERTIES),
  Mapping: Object.keys(MAPPING_PROPERTIES),
};

/** Collection references and expansions; evaluation is set-based SQL, never a query per row. */
export class CollectionRepository {
  constructor(private readonly em: EntityManager) {}

  // ------------------------------------------------------------------------------------------
  // References

  /** Stores references current from change `seq`, in one statement whatever their number. */
  async insertReferences(
    collectionId: string,
    seq: string,
    createdBy: string,
    references: NewReference[],
  ): Promise<ReferenceRow[]> {
    if (references.length === 0) return [];
    const records = references.map((r) => ({
      expression: r.expression,
      include: r.include,
      resource_type: r.resourceType,
      system: r.system,
      version: r.version,
      code: r.code,
      resource_version: r.resourceVersion,
      filter: r.filter,
      cascade: r.cascade,
      namespace: r.namespace,
      display: r.display,
      search_text: searchWords(r.expression).join(' '),
    }));
    return this.em.query<ReferenceRow[]>(
      `INSERT INTO collection_references (collection_id, valid_from_seq, created_by, expression,
         include, resource_type, system, version, code, resource_version, filter, cascade,
         namespace, display, search_text)
       SELECT $1, $2, $3, r.expression, r.include, r.resource_type, r.system, r.version, r.code,
         r.resource_version, r.filter, r.cascade, r.namespace, r.display, r.search_text
       FROM jsonb_to_recordset($4::jsonb) AS r (expression text, include boolean,
         resource_type text, system text, version text, code text, resource_version text,
         filter jsonb, cascade jsonb, namespace text, display text, search_text text)
       RETURNING ${REFERENCE_COLUMNS}`,
      [collectionId, seq, createdBy, JSON.stringify(records)],
    );
  }

  /** Current references with these expressions, as `include|expression` → id. */
  async currentByExpression(
    collectionId: string,
    expressions: string[],
  ): Promise<Map<string, string>> {
    if (expressions.length === 0) return new Map();
    const rows = await this.em.query<Array<{ id: string; expression: string; include: boolean }>>(
      `SELECT id::text AS id, expression, include FROM collection_references
       WHERE collection_id = $1 AND valid_to_seq IS NULL AND expression = ANY($2::text[])`,
      [collectionId, expressions],
    );
    return new Map(rows.map((r) => [referenceKey(r.expression, r.include), r.id]));
  }

  /** References as of a change (null = HEAD), optionally only some. */
  referencesAt(
    collectionId: string,
    seq: string | null,
    only?: { ids?: string[]; expressions?: string[] },
  ): Promise<ReferenceRow[]> {
    const params: unknown[] = [collectionId];
    let where = `collection_id = $1 AND ${interval(seq, params)}`;
    if (only?.ids) {
      params.push(only.ids.filter((id) => /^\d{1,18}$/.test(id)));
      where += ` AND id = ANY($${params.length}::bigint[])`;
    }
    if (only?.expressions) {
      params.push(only.expressions);
      where += ` AND expression = ANY($${params.length}::text[])`;
    }
    return this.em.query<ReferenceRow[]>(
      `SELECT ${REFERENCE_COLUMNS} FROM collection_references WHERE ${where} ORDER BY collection_references.id`,
      params,
    );
  }

  /** One page of references as of a change, filtered by `q` over the expression. */
  async listReferences(
    collectionId: string,
    seq: string | null,
    filter: ReferenceFilter,
    window: Window,
  ): Promise<Slice<ReferenceRow>> {
    const params: unknown[] = [collectionId];
    let where = `collection_id = $1 AND ${interval(seq, params)}`;
    for (const word of filter.q ? searchWords(filter.q) : []) {
      params.push(`%${likeLiteral(word)}%`);
      where += ` AND search_text LIKE $${params.length}`;
    }
    if (filter.include !== undefined) {
      params.push(filter.include);
      where += ` AND include = $${params.length}`;
    }
    if (filter.resourceType) {
      params.push(filter.resourceType);
      where += ` AND resource_type = $${params.length}`;
    }
    // The whole list's conditions, before the keyset's are added below.
    const countSql = `SELECT count(*)::int AS n FROM collection_references WHERE ${where}`;
    const countParams = [...params];
    const countAll = async (): Promise<number> => {
      const count = await this.em.query<Array<{ n: number }>>(countSql, countParams);
      return count[0].n;
    };
    let counted: Promise<number> | undefined;
    const countNow = (): Promise<number> => (counted ??= countAll());
    const count = async (): Promise<Counted> => ({ total: await countNow(), exact: true });
    // A cursor page counts the whole list only when asked (`Window.countLazily`).
    const total = window.countLazily ? Number.NaN : await countNow();
    const keys = REFERENCE_KEYS;
    if (window.after) where += ` AND ${afterSql(keys, window.after, (v) => `$${params.push(v)}`)}`;
    const rows = await this.em.query<Array<ReferenceRow & { cursorKeys?: unknown }>>(
      `SELECT ${REFERENCE_COLUMNS}, ${keysJsonSql(keys)} AS "cursorKeys"
       FROM collection_references WHERE ${where} ORDER BY collection_references.id
       ${window.limit > 0 ? `LIMIT ${window.limit}` : ''} OFFSET ${window.offset}`,
      params,
    );
    return {
      rows: rows.map(({ cursorKeys: _, ...row }) => row),
      total,
      keys: rows.map((row) => keyValuesOf(keys, row.cursorKeys)),
      ...(window.countLazily ? { count } : {}),
    };
  }

  /** The types of the sort keys of `listReferences` (its rows' `keys`, `window.after`). */
  referenceKeyTypes(): KeyType[] {
    return REFERENCE_KEYS.map((key) => key.type);
  }

  /** Ends references at change `seq` (earlier versions keep them); answers those ended. */
  async endReferences(collectionId: string, ids: string[], seq: string): Promise<string[]> {
    const rows = await this.em.query<Array<{ id: string }>>(
      `WITH ended AS (
         UPDATE collection_references SET valid_to_seq = $3
         WHERE collection_id = $1 AND valid_to_seq IS NULL AND id = ANY($2::bigint[])
         RETURNING id)
       SELECT id::text AS id FROM ended`,
      [collectionId, ids, seq],
    );
    return rows.map((r) => r.id);
  }

  /** Deletes references outright (ones never committed: an add that selected nothing). */
  async deleteReferences(ids: string[]): Promise<void> {
    await this.em.query(`DELETE FROM collection_references WHERE id = ANY($1::bigint[])`, [ids]);
  }

  // ------------------------------------------------------------------------------------------
  // Expansions

  async insertExpansion(values: {
    collectionId: string;
    versionId: string;
    mnemonic: string;
    parameters: Record<string, unknown>;
    canonicalUrl: string | null;
    createdBy: string | null;
  }): Promise<string> {
    const rows = await this.em.query<Array<{ id: string }>>(
      `INSERT INTO expansions (collection_id, version_id, mnemonic, parameters, canonical_url, created_by)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id::text AS id`,
      [
        values.collectionId,
        values.versionId,
        values.mnemonic,
        JSON.stringify(values.parameters),
        values.canonicalUrl,
        values.createdBy,
      ],
    );
    return rows[0].id;
  }

  async mnemonicTaken(versionId: string, mnemonic: string): Promise<boolean> {
    const rows = await this.em.query<unknown[]>(
      `SELECT 1 FROM expansions WHERE version_id = $1 AND lower(mnemonic) = lower($2)`,
      [versionId, mnemonic],
    );
    return rows.length > 0;
  }

  /** Makes an expansion the one a version's concept and mapping lists read. */
  async setDefaultExpansion(versionId: string, expansionId: string | null): Promise<void> {
    await this.em.query(`UPDATE repository_versions SET expansion_id = $2 WHERE id = $1`, [
      versionId,
      expansionId,
    ]);
  }

  async finishExpansion(expansionId: string, resolved: ResolvedSystem[]): Promise<void> {
    await this.em.query(
      `UPDATE expansions SET is_processing = false, resolved = $2, updated_at = now() WHERE id = $1`,
      [expansionId, JSON.stringify(resolved)],
    );
  }

  async touchExpansion(expansionId: string): Promise<void> {
    await this.em.query(`UPDATE expansions SET updated_at = now() WHERE id = $1`, [expansionId]);
  }

  async findExpansion(versionId: string, mnemonic: string): Promise<ExpansionRow | null> {
    const rows = await this.em.query<ExpansionRow[]>(
      `SELECT ${EXPANSION_COLUMNS} FROM expansions e JOIN repository_versions v ON v.id = e.version_id
       WHERE e.version_id = $1 AND (e.mnemonic = $2 OR e.id::text = $2)
       ORDER BY (e.mnemonic = $2) DESC LIMIT 1`,
      [versionId, mnemonic],
    );
    return rows[0] ?? null;
  }

  async findExpansionById(expansionId: string): Promise<ExpansionRow | null> {
    const rows = await this.em.query<ExpansionRow[]>(
      `SELECT ${EXPANSION_COLUMNS} FROM expansions e JOIN repository_versions v ON v.id = e.version_id
       WHERE e.id = $1`,
      [expansionId],
    );
    return rows[0] ?? null;
  }

  /**
   * An expansion, by id or by its version and mnemonic (or id), with the repositories its members
   * come from; one statement.
   */
  async findExpansionWithMembers(
    where: { id: string } | { versionId: string; mnemonic: string },
  ): Promise<{ expansion: ExpansionRow; repositoryIds: string[] } | null> {
    const [condition, params] =
      'id' in where
        ? ['e.id = $1', [where.id]]
        : [
            'e.version_id = $1 AND (e.mnemonic = $2 OR e.id::text = $2)',
            [where.versionId, where.mnemonic],
          ];
    const rows = await preparedQuery<ExpansionRow & { repositoryIds: string[] }>(
      this.em,
      `SELECT ${EXPANSION_COLUMNS}, ARRAY(SELECT DISTINCT t.repository_id::text
           FROM expansion_member_totals t WHERE t.expansion_id = e.id AND t.members > 0
         ) AS "repositoryIds"
       FROM expansions e JOIN repository_versions v ON v.id = e.version_id
       WHERE ${condition} ORDER BY ${'id' in where ? 'e.id' : '(e.mnemonic = $2) DESC'} LIMIT 1`,
      params,
    );
    if (!rows[0]) return null;
    const { repositoryIds, ...expansion } = rows[0];
    return { expansion, repositoryIds };
  }

  /** Expansions of one collection version, or of every version of a collection. */
  async listExpansions(
    where: { versionId: string } | { collectionId: string },
    window: Window,
  ): Promise<Slice<ExpansionRow>> {
    const [column, value] =
      'versionId' in where
        ? ['e.version_id', where.versionId]
        : ['e.collection_id', where.collectionId];
    const count = await this.em.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM expansions e WHERE ${column} = $1`,
      [value],
    );
    const rows = await this.em.query<ExpansionRow[]>(
      `SELECT ${EXPANSION_COLUMNS} FROM expansions e JOIN repository_versions v ON v.id = e.version_id
       WHERE ${column} = $1 ORDER BY e.id DESC
       ${window.limit > 0 ? `LIMIT ${window.limit}` : ''} OFFSET ${window.offset}`,
      [value],
    );
    return { rows, total: count[0].n };
  }

  /**
   * Forgets what an expansion's references selected (before they are evaluated again); its
   * members stay until `recomputeMembers` compares them with what the new rows hold.
   */
  async clearReferenceRows(expansionId: string): Promise<void> {
    await this.em.query(`DELETE FROM expansion_reference_rows WHERE expansion_id = $1`, [
      expansionId,
    ]);
  }

  async deleteExpansion(expansionId: string): Promise<void> {
    await this.em.query(`DELETE FROM expansions WHERE id = $1`, [expansionId]);
  }

  /** Active (not retired) members of each expansion, reading followed members at HEAD. */
  async expansionCounts(
    expansionIds: readonly string[],
    viewer: Viewer,
  ): Promise<Map<string, ExpansionCounts>> {
    const counts = new Map<string, ExpansionCounts>(
      expansionIds.map((id) => [id, { activeConcepts: 0, activeMappings: 0 }]),
    );
    if (expansionIds.length === 0) return counts;
    const params: unknown[] = [expansionIds];
    const visible = (alias: string): string => visibleRepository(alias, viewer, params);
    const rows = await this.em.query<Array<{ id: string; concepts: number; mappings: number }>>(
      `SELECT e.id::text AS id, ${activeMembersSql('c', 'e.id', visible)} AS concepts,
         ${activeMembersSql('m', 'e.id', visible)} AS mappings
       FROM unnest($1::bigint[]) AS e(id)`,
      params,
    );
    for (const row of rows) {
      counts.set(row.id, { activeConcepts: row.concepts, activeMappings: row.mappings });
    }
    return counts;
  }

  // ------------------------------------------------------------------------------------------
  // Evaluation

  /**
   * Rows of one source for many single-code references at once (the common case: a list of
   * concept or mapping URLs), in one statement.
   */
  async selectCodes(
    expansionId: string,
    group: Omit<Selection, 'referenceId' | 'include' | 'codes' | 'versionId' | 'filters'>,
    items: Array<{ referenceId: string; code: string; include: boolean }>,
  ): Promise<void> {
    if (items.length === 0) return;
    const t = TABLES[group.resource];
    const params: unknown[] = [
      expansionId,
      group.repositoryId,
      items.map((i) => i.referenceId),
      items.map((i) => i.code),
      items.map((i) => i.include),
    ];
    const conditions = [versionAt(group.seq, params)];
    if (group.activeOnly) conditions.push('NOT v.retired');
    if (group.text) conditions.push(textCondition(group.text, params));
    await this.em.query(
      `INSERT INTO expansion_reference_rows (expansion_id, reference_id, resource, object_id, version_id, include)
       SELECT $1, t.reference_id, '${group.resource}', o.id, ${group.pin ? 'v.id' : 'NULL'}, t.include
       FROM unnest($3::bigint[], $4::text[], $5::boolean[]) AS t (reference_id, code, include)
       JOIN ${t.objects} o ON o.repository_id = $2 AND o.mnemonic = t.code
       JOIN ${t.versions} v ON v.${t.key} = o.id AND ${conditions.join(' AND ')}`,
      params,
    );
  }

  /** Rows of one selection: a whole repository (optionally filtered) or one pinned version. */
  async select(expansionId: string, s: Selection): Promise<void> {
    const t = TABLES[s.resource];
    const params: unknown[] = [expansionId, s.referenceId, s.include, s.repositoryId];
    const conditions = ['v.repository_id = $4'];
    if (s.versionId !== undefined) {
      params.push(/^\d{1,18}$/.test(s.versionId) ? s.versionId : '0');
      conditions.push(`v.id = $${params.length}`);
    } else {
      conditions.push(versionAt(s.seq, params));
    }
    if (s.codes) {
      params.push(s.codes);
      conditions.push(`v.mnemonic = ANY($${params.length}::text[])`);
    }
    if (s.activeOnly) conditions.push('NOT v.retired');
    if (s.text) conditions.push(textCondition(s.text, params));
    for (const f of s.filters ?? []) conditions.push(filterCondition(s.resource, f, params, '$4'));
    const pinned = s.pin || s.versionId !== undefined;
    await this.em.query(
      `INSERT INTO expansion_reference_rows (expansion_id, reference_id, resource, object_id, version_id, include)
       SELECT $1, $2, '${s.resource}', v.${t.key}, ${pinned ? 'v.id' : 'NULL'}, $3
       FROM ${t.versions} v WHERE ${conditions.join(' AND ')}`,
      params,
    );
  }

  /** The members of another collection's expansion (a reference to a value set). */
  async selectMembers(
    expansionId: string,
    s: Pick<Selection, 'referenceId' | 'include' | 'resource' | 'codes' | 'activeOnly' | 'pin'>,
    fromExpansionId: string,
  ): Promise<void> {
    const t = TABLES[s.resource];
    const params: unknown[] = [expansionId, s.referenceId, s.include, fromExpansionId];
    const conditions = ['x.expansion_id = $4'];
    if (s.codes) {
      params.push(s.codes);
      conditions.push(`v.mnemonic = ANY($${params.length}::text[])`);
    }
    if (s.activeOnly) conditions.push('NOT v.retired');
    await this.em.query(
      `INSERT INTO expansion_reference_rows (expansion_id, reference_id, resource, object_id, version_id, include)
       SELECT $1, $2, '${s.resource}', x.${t.key}, ${s.pin ? 'v.id' : `x.${t.memberVersion}`}, $3
       FROM ${t.members} x JOIN ${t.versions} v ON v.id = ${memberVersion(s.resource, 'x')}
       WHERE ${conditions.join(' AND ')}`,
      params,
    );
  }

  /** Rows a reference brings in besides its selection (what its cascade reached). */
  async insertRows(
    expansionId: string,
    referenceId: string,
    include: boolean,
    rows: Array<{ resource: 'c' | 'm'; objectId: string; versionId: string | null }>,
  ): Promise<void> {
    if (rows.length === 0) return;
    await this.em.query(
      `INSERT INTO expansion_reference_rows (expansion_id, reference_id, resource, object_id, version_id, include)
       SELECT $1, $2, r.resource, r.object_id, r.version_id, $3
       FROM unnest($4::text[], $5::bigint[], $6::bigint[]) AS r (resource, object_id, version_id)`,
      [
        expansionId,
        referenceId,
        include,
        rows.map((r) => r.resource),
        rows.map((r) => r.objectId),
        rows.map((r) => r.versionId),
      ],
    );
  }

  /**
   * Recomputes members from the reference rows: an object is a member when an include holds it
   * and no exclude removes it (an exclude without a version removes every version); of several
   * versions included, the newest wins (followed = current = newest). Only `objectIds` when
   * given (an incremental change), otherwise all. Members that leave are recorded in
   * `expansion_removals`; members that join (or move to another pinned version) are dated now,
   * the others keep their date (what a subscriber's `updatedSince` reads, spec ops §4.10).
   */
  async recomputeMembers(
    expansionId: string,
    resource: 'c' | 'm',
    objectIds?: string[],
  ): Promise<void> {
    const t = TABLES[resource];
    const params: unknown[] = [expansionId];
    if (objectIds) {
      if (objectIds.length === 0) return;
      params.push(objectIds);
    }
    const only = (column: string): string => (objectIds ? `AND ${column} = ANY($2::bigint[])` : '');
    // An include row of the object that no exclude removes.
    const held = (row: string): string => `
      ${row}.expansion_id = $1 AND ${row}.resource = '${resource}' AND ${row}.include
        AND NOT EXISTS (
          SELECT 1 FROM expansion_reference_rows x
          WHERE x.expansion_id = $1 AND x.resource = '${resource}' AND NOT x.include
            AND x.object_id = ${row}.object_id
            AND (x.version_id IS NULL OR x.version_id = ${row}.version_id))`;
    await this.em.query(
      `WITH gone AS (
         DELETE FROM ${t.members} m WHERE m.expansion_id = $1 ${only(`m.${t.key}`)}
           AND NOT EXISTS (SELECT 1 FROM expansion_reference_rows r
                           WHERE r.object_id = m.${t.key} AND ${held('r')})
         RETURNING m.${t.key} AS object_id, m.${t.memberVersion} AS version_id)
       INSERT INTO expansion_removals (expansion_id, resource, object_id, version_id)
       SELECT $1, '${resource}', object_id, version_id FROM gone
       ON CONFLICT (expansion_id, resource, object_id)
       DO UPDATE SET version_id = EXCLUDED.version_id, removed_at = now()`,
      params,
    );
    await this.em.query(
      `INSERT INTO ${t.members} (expansion_id, ${t.key}, ${t.memberVersion}, repository_id, mnemonic)
       SELECT DISTINCT ON (r.object_id) $1, r.object_id, r.version_id, o.repository_id, o.mnemonic
       FROM expansion_reference_rows r JOIN ${t.objects} o ON o.id = r.object_id
       WHERE ${held('r')} ${only('r.object_id')}
       ORDER BY r.object_id, r.version_id DESC NULLS FIRST
       ON CONFLICT (expansion_id, ${t.key}) DO UPDATE
         SET ${t.memberVersion} = EXCLUDED.${t.memberVersion}, added_at = now()
         WHERE ${t.members}.${t.memberVersion} IS DISTINCT FROM EXCLUDED.${t.memberVersion}`,
      params,
    );
    // What joins again is no longer removed.
    await this.em.query(
      `DELETE FROM expansion_removals g WHERE g.expansion_id = $1 AND g.resource = '${resource}'
         ${only('g.object_id')}
         AND EXISTS (SELECT 1 FROM ${t.members} m WHERE m.expansion_id = $1 AND m.${t.key} = g.object_id)`,
      params,
    );
  }

  /** Which of these objects are members of an expansion now. */
  async membersAmong(
    expansionId: string,
    resource: 'c' | 'm',
    objectIds: string[],
  ): Promise<Set<string>> {
    const t = TABLES[resource];
    const rows = await this.em.query<Array<{ id: string }>>(
      `SELECT ${t.key}::text AS id FROM ${t.members}
       WHERE expansion_id = $1 AND ${t.key} = ANY($2::bigint[])`,
      [expansionId, objectIds],
    );
    return new Set(rows.map((r) => r.id));
  }

  /** Forgets what these references selected; answers the objects whose membership may change. */
  async deleteRowsOf(
    expansionId: string,
    referenceIds: string[],
  ): Promise<{ c: string[]; m: string[] }> {
    const rows = await this.em.query<Array<{ resource: 'c' | 'm'; ids: string[] }>>(
      `WITH gone AS (
         DELETE FROM expansion_reference_rows
         WHERE expansion_id = $1 AND reference_id = ANY($2::bigint[])
         RETURNING resource, object_id)
       SELECT resource, array_agg(DISTINCT object_id::text) AS ids FROM gone GROUP BY resource`,
      [expansionId, referenceIds],
    );
    return {
      c: rows.find((r) => r.resource === 'c')?.ids ?? [],
      m: rows.find((r) => r.resource === 'm')?.ids ?? [],
    };
  }

  /** The objects some references selected, per resource. */
  async objectsOf(
    expansionId: string,
    referenceIds: string[],
  ): Promise<{ c: string[]; m: string[] }> {
    const rows = await this.em.query<Array<{ resource: 'c' | 'm'; ids: string[] }>>(
      `SELECT resource, array_agg(DISTINCT object_id::text) AS ids FROM expansion_reference_rows
       WHERE expansion_id = $1 AND reference_id = ANY($2::bigint[]) GROUP BY resource`,
      [expansionId, referenceIds],
    );
    return {
      c: rows.find((r) => r.resource === 'c')?.ids ?? [],
      m: rows.find((r) => r.resource === 'm')?.ids ?? [],
    };
  }

  /** How many rows each reference selected (the reference list shows it). */
  async rowCounts(expansionId: string, referenceIds: string[]): Promise<Map<string, number>> {
    if (referenceIds.length === 0) return new Map();
    const rows = await this.em.query<Array<{ id: string; n: number }>>(
      `SELECT reference_id::text AS id, count(*)::int AS n FROM expansion_reference_rows
       WHERE expansion_id = $1 AND reference_id = ANY($2::bigint[]) GROUP BY reference_id`,
      [expansionId, referenceIds],
    );
    return new Map(rows.map((r) => [r.id, r.n]));
  }

  /** Display names the expansion's include references give to these concepts (spec ops §2.4). */
  async displays(expansionId: string, conceptIds: string[]): Promise<Map<string, string>> {
    if (conceptIds.length === 0) return new Map();
    const rows = await this.em.query<Array<{ id: string; display: string }>>(
      `SELECT DISTINCT ON (x.object_id) x.object_id::text AS id, r.display
       FROM expansion_reference_rows x JOIN collection_references r ON r.id = x.reference_id
       WHERE x.expansion_id = $1 AND x.resource = 'c' AND x.include
         AND x.object_id = ANY($2::bigint[]) AND r.display IS NOT NULL
       ORDER BY x.object_id, r.id DESC`,
      [expansionId, conceptIds],
    );
    return new Map(rows.map((r) => [r.id, r.display]));
  }

  /** The references whose include rows put a concept (`c`) or mapping (`m`) into an expansion. */
  async referencesSelecting(
    expansionId: string,
    resource: 'c' | 'm',
    objectId: string,
  ): Promise<string[]> {
    const rows = await this.em.query<Array<{ id: string }>>(
      `SELECT DISTINCT reference_id::text AS id FROM expansion_reference_rows
       WHERE expansion_id = $1 AND resource = $2 AND object_id = $3 AND include`,
      [expansionId, resource, objectId],
    );
    return rows.map((r) => r.id);
  }

  /** The repositories an expansion's members come from. */
  async memberRepositoryIds(expansionId: string): Promise<string[]> {
    const rows = await this.em.query<Array<{ id: string }>>(
      `${memberRepositoriesSql('c', '$1')} UNION ${memberRepositoriesSql('m', '$1')}`,
      [expansionId],
    );
    return rows.map((r) => r.id);
  }

  /** The newest change of a repository made on or before `date`; null when none was. */
  async changeAt(repositoryId: string, date: Date): Promise<string | null> {
    const rows = await this.em.query<Array<{ seq: string | null }>>(
      `SELECT greatest(
         (SELECT max(valid_from_seq) FROM concept_versions WHERE repository_id = $1 AND created_at <= $2),
         (SELECT max(valid_from_seq) FROM mapping_versions WHERE repository_id = $1 AND created_at <= $2)
       )::text AS seq`,
      [repositoryId, date],
    );
    return rows[0].seq;
  }

  /** Whether Postgres accepts a regular expression (reference filters with `regex`). */
  async isValidRegex(pattern: string): Promise<boolean> {
    try {
      await this.em.query(`SELECT '' ~ $1`, [pattern]);
      return true;
    } catch {
      return false;
    }
  }
}

export function referenceKey(expression: string, include: boolean): string {
  return `${include ? '+' : '-'}${expression}`;
}

function versionAt(seq: string | null, params: unknown[], alias = 'v'): string {
  return `(${interval(seq, params, alias)})`;
}

/** The repositories an expansion's members of one resource come from (their kept totals). */
function memberRepositoriesSql(resource: 'c' | 'm', expansion: string): string {
  return `(SELECT repository_id::text AS id FROM expansion_member_totals
    WHERE expansion_id = ${expansion} AND resource = '${resource}' AND members > 0)`;
}

/**
 * How many members of an expansion are active (not retired, followed ones read at HEAD), among
 * those in the repositories `visible` admits (a condition on a `repositories` alias), as a
 * scalar SQL expression: the kept totals per repository (`expansion_member_totals`: every member
 * less those pinned to a retired version) less the followed members whose current version is
 * retired, found from the few retired current versions of those repositories. No pass over every
 * member. Joined on the members' key (one member at most per version), not `EXISTS`: a new
 * expansion has no statistics yet, and PostgreSQL, taking it for a handful of members, walked
 * every member against every retired version (35 ms for 9,000 members, 5 ms joined).
 */
export function activeMembersSql(
  resource: 'c' | 'm',
  expansion: string,
  visible: (alias: string) => string,
): string {
  const t = TABLES[resource];
  return `((SELECT coalesce(sum(g.members - g.retired_pinned), 0) FROM expansion_member_totals g
      JOIN repositories ar ON ar.id = g.repository_id
      WHERE g.expansion_id = ${expansion} AND g.resource = '${resource}' AND ${visible('ar')})
    - (SELECT count(*) FROM ${t.versions} h JOIN repositories hr ON hr.id = h.repository_id
         JOIN ${t.members} fx ON fx.expansion_id = ${expansion} AND fx.${t.key} = h.${t.key}
       WHERE h.repository_id IN (SELECT id::bigint FROM ${memberRepositoriesSql(resource, expansion)} mr)
         AND h.valid_to_seq IS NULL AND h.retired AND ${visible('hr')}
         AND fx.${t.memberVersion} IS NULL))::int`;
}

/**
 * The versions of an expansion's members that changed at or after `:updatedSince`, as a SQL array
 * of ids (`:expansionId`): members joined then (`added_at`) or following a current version
 * written then (found by the repositories' `…_head_created` index, not by reading every member)
 * — and, with `removals`, the objects removed from the expansion since then (at their pinned or
 * current version). Visible repositories are `:...visibleRepositoryIds`.
 */
export function memberVersionsSql(resource: 'c' | 'm', since: { removals: boolean }): string {
  const t = TABLES[resource];
  const removed = `UNION SELECT coalesce(g.version_id, (SELECT h.id FROM ${t.versions} h
        WHERE h.${t.key} = g.object_id AND h.valid_to_seq IS NULL))
      FROM expansion_removals g WHERE g.expansion_id = :expansionId AND g.resource = '${resource}'
        AND g.removed_at >= :updatedSince`;
  return `ARRAY(SELECT ${memberVersion(resource, 'x')} FROM ${t.members} x
      WHERE x.expansion_id = :expansionId AND x.added_at >= :updatedSince
    UNION SELECT h.id FROM ${t.versions} h JOIN ${t.members} x
        ON x.expansion_id = :expansionId AND x.${t.key} = h.${t.key} AND x.${t.memberVersion} IS NULL
      WHERE h.repository_id IN (:...visibleRepositoryIds) AND h.valid_to_seq IS NULL
        AND h.created_at >= :updatedSince
    ${since.removals ? removed : ''})`;
}

/**
 * The versions an expansion's members show (`:expansionId`), as a row source of the resource's
 * version rows to select from: the current versions of the members that follow their object, then
 * the pinned versions. A followed member is matched to its current version by repository and id
 * (`repository_id`, `mnemonic`: they never change, and objects are deleted only with their
 * repository), so that PostgreSQL may walk a source's own list indexes (class, datatype, the
 * active list) beside the members' `(expansion_id, mnemonic)` order and merge the two, instead of
 * looking up every member's version (twice: for its id, then its row). A filtered page of 8,929
 * members: 31 → 13 ms.
 */
export function memberVersionRowsSql(resource: 'c' | 'm'): string {
  const t = TABLES[resource];
  return `(SELECT v.* FROM ${t.versions} v WHERE v.valid_to_seq IS NULL
      AND EXISTS (SELECT 1 FROM ${t.members} x WHERE x.expansion_id = :expansionId
        AND x.${t.memberVersion} IS NULL AND x.repository_id = v.repository_id
        AND x.mnemonic = v.mnemonic)
    UNION ALL
    SELECT v.* FROM ${t.members} x JOIN ${t.versions} v ON v.id = x.${t.memberVersion}
    WHERE x.expansion_id = :expansionId AND x.${t.memberVersion} IS NOT NULL)`;
}

/**
 * A query of the versions an expansion's members show (as `alias`), from the repositories the
 * caller may see (design §2): all of them (`memberVersionRowsSql`), or with `updatedSince` those
 * that changed since (`memberVersionsSql`: found first, then their rows by primary key; with
 * `includeRetired`, also the members removed since).
 */
export function memberVersionsQuery<T extends ObjectLiteral>(
  em: EntityManager,
  entity: EntityTarget<T>,
  alias: 'cv' | 'mv',
  members: { expansionId: string; repositoryIds: string[] },
  filter: { updatedSince?: Date; includeRetired?: boolean },
): SelectQueryBuilder<T> {
  const resource = alias === 'cv' ? 'c' : 'm';
  const { updatedSince } = filter;
  const qb = updatedSince
    ? em
        .createQueryBuilder(entity, alias)
        .where(
          `${alias}.id = ANY(${memberVersionsSql(resource, { removals: !!filter.includeRetired })})`,
          { expansionId: members.expansionId, updatedSince },
        )
    : (em
        .createQueryBuilder()
        .from(memberVersionRowsSql(resource), alias)
        .setParameters({ expansionId: members.expansionId }) as SelectQueryBuilder<T>);
  return qb.andWhere(`${alias}.repository_id IN (:...visibleRepositoryIds)`, {
    visibleRepositoryIds: members.repositoryIds.length ? members.repositoryIds : ['0'],
  });
}

/** A member's version: the pinned one, or the current version of the object it follows. */
function memberVersion(resource: 'c' | 'm', alias: string): string {
  const t = TABLES[resource];
  return `coalesce(${alias}.${t.memberVersion}, (SELECT h.id FROM ${t.versions} h
    WHERE h.${t.key} = ${alias}.${t.key} AND h.valid_to_seq IS NULL))`;
}

function textCondition(text: string, params: unknown[]): string {
  return searchWords(text)
    .map((word) => {
      params.push(`%${likeLiteral(word)}%`);
      return `v.search_text LIKE $${params.length}`;
    })
    .join(' AND ');
}

/** One reference filter as SQL over `v` (the version rows of the resource). */
function filterCondition(
  resource: 'c' | 'm',
  f: PropertyFilter,
  params: unknown[],
  repository: string,
): string {
  const properties = resource === 'c' ? CONCEPT_PROPERTIES : MAPPING_PROPERTIES;
  const property = f.property.toLowerCase();
  // `q`: the words of a concept list search, over ids, names and descriptions.
  if (property === 'q') return `(${textCondition(f.value, params) || 'true'})`;
  if (
    f.op === 'is-a' ||
    f.op === 'descendent-of' ||
    f.op === 'is-not-a' ||
    f.op === 'generalizes'
  ) {
    return hierarchyCondition({ ...f, op: f.op }, params, repository);
  }
  let column = properties[property];
  if (!column) {
    // Anything else names an extra (`extras.<name>` or the bare name).
    params.push(f.property.replace(/^extras\./, ''));
    column = `(v.extras ->> $${params.length})`;
  }
  if (property === 'locale' && resource === 'c' && (f.op === '=' || f.op === 'in')) {
    // A concept is in a locale when one of its names is.
    const tests = splitValues(f.value).map((locale) => {
      params.push(JSON.stringify([{ locale }]));
      return `v.names @> $${params.length}::jsonb`;
    });
    return `(${tests.join(' OR ') || 'false'})`;
  }
  switch (f.op) {
    case '=':
      params.push(f.value);
      return `${column} = $${params.length}`;
    case 'in':
    case 'not-in': {
      params.push(splitValues(f.value));
      const test = `${column} = ANY($${params.length}::text[])`;
      return f.op === 'in' ? test : `(${column} IS NULL OR NOT ${test})`;
    }
    case 'regex':
      params.push(f.value);
      return `${column} ~ $${params.length}`;
    case 'exists':
      return ['false', '0', 'no'].includes(f.value.toLowerCase())
        ? `${column} IS NULL`
        : `${column} IS NOT NULL`;
  }
}

function splitValues(value: string): string[] {
  return value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v.length > 0);
}

/**
 * Hierarchy filters over the parent links of the current concept versions of one source (the
 * `parent_concept_urls` of its concepts): is-a = the concept and its descendants,
 * descendent-of = its descendants, is-not-a = neither, generalizes = the concept and its
 * ancestors. `repository` is the parameter naming the source, so the walk runs once.
 */
function hierarchyCondition(
  f: PropertyFilter & { op: 'is-a' | 'descendent-of' | 'is-not-a' | 'generalizes' },
  params: unknown[],
  repository: string,
): string {
  params.push(f.value);
  const code = `$${params.length}`;
  const descendants = `WITH RECURSIVE down (code) AS (
      SELECT ${code}::text
      UNION
      SELECT k.mnemonic FROM down d JOIN concept_versions k
        ON k.repository_id = ${repository} AND k.valid_to_seq IS NULL AND k.parent_codes @> ARRAY[d.code])
    SELECT code FROM down`;
  const ancestors = `WITH RECURSIVE up (code) AS (
      SELECT ${code}::text
      UNION
      SELECT unnest(k.parent_codes) FROM up u JOIN concept_versions k
        ON k.repository_id = ${repository} AND k.mnemonic = u.code AND k.valid_to_seq IS NULL)
    SELECT code FROM up`;
  switch (f.op) {
    case 'is-a':
      return `v.mnemonic IN (${descendants})`;
    case 'descendent-of':
      return `v.mnemonic IN (${descendants}) AND v.mnemonic <> ${code}`;
    case 'is-not-a':
      return `v.mnemonic NOT IN (${descendants})`;
    case 'generalizes':
      return `v.mnemonic IN (${ancestors})`;
  }
}
