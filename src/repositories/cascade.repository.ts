import { In, type EntityManager, type EntityTarget, type FindOptionsWhere } from 'typeorm';
import {
  ConceptEntity,
  ConceptVersionEntity,
  MappingEntity,
  MappingVersionEntity,
} from '../db/entities';

/**
 * What a cascade walks (spec operations §4.2): a source as of a change number (`seq` null =
 * HEAD), or a collection version's expansion (its members held in `repositoryIds`, each at its
 * pinned or current version).
 */
export type CascadeScope =
  | { kind: 'source'; repositoryId: string; seq: string | null }
  | { kind: 'expansion'; expansionId: string; repositoryIds: string[] };

/** A concept as the walk needs it: where it is, its code and its parents' codes. */
export interface WalkConcept {
  conceptId: string;
  versionId: string;
  repositoryId: string;
  code: string;
  parentCodes: string[];
}

/** A mapping as the walk needs it: its type and its ends. */
export interface WalkMapping {
  versionId: string;
  mappingId: string;
  repositoryId: string;
  mapType: string | null;
  fromConceptId: string | null;
  toConceptId: string | null;
}

export interface CascadeConcept {
  concept: ConceptEntity;
  version: ConceptVersionEntity;
}

export interface CascadeMapping {
  mapping: MappingEntity;
  version: MappingVersionEntity;
}

const CONCEPT = `cv.concept_id::text AS "conceptId", cv.id::text AS "versionId",
  cv.repository_id::text AS "repositoryId", cv.mnemonic AS "code", cv.parent_codes AS "parentCodes"`;
const MAPPING = `mv.id::text AS "versionId", mv.mapping_id::text AS "mappingId",
  mv.repository_id::text AS "repositoryId", mv.map_type AS "mapType",
  mv.from_concept_id::text AS "fromConceptId", mv.to_concept_id::text AS "toConceptId"`;

/**
 * The questions a cascade asks of a scope, each for a whole level at once (one statement per
 * level and kind, whatever the number of concepts cascaded), answering only what the walk needs;
 * then the entities of what an answer shows.
 */
export class CascadeRepository {
  constructor(private readonly em: EntityManager) {}

  /** The concepts of the scope with this code (a collection may hold it from several sources). */
  conceptsByCode(scope: CascadeScope, code: string): Promise<WalkConcept[]> {
    const params: unknown[] = [code];
    return this.em.query(
      `SELECT ${CONCEPT} FROM concept_versions cv
       WHERE cv.mnemonic = $1 AND ${inScope(scope, 'c', params)} ORDER BY cv.repository_id, cv.id`,
      params,
    );
  }

  /** The concepts of the scope among these concept ids. */
  conceptsById(
    scope: CascadeScope,
    conceptIds: readonly string[],
    includeRetired: boolean,
  ): Promise<WalkConcept[]> {
    if (conceptIds.length === 0) return Promise.resolve([]);
    const params: unknown[] = [conceptIds];
    return this.em.query(
      `SELECT ${CONCEPT} FROM concept_versions cv
       WHERE cv.concept_id = ANY($1::bigint[]) ${includeRetired ? '' : 'AND NOT cv.retired'}
         AND ${inScope(scope, 'c', params)}`,
      params,
    );
  }

  /**
   * The mappings of the scope from these concepts (or, `reverse`, to them), in the order concept
   * details list them: map type, sort weight, id.
   */
  mappingsOf(
    scope: CascadeScope,
    conceptIds: readonly string[],
    reverse: boolean,
    includeRetired: boolean,
  ): Promise<WalkMapping[]> {
    if (conceptIds.length === 0) return Promise.resolve([]);
    const params: unknown[] = [conceptIds];
    return this.em.query(
      `SELECT ${MAPPING} FROM mapping_versions mv
       WHERE mv.${reverse ? 'to' : 'from'}_concept_id = ANY($1::bigint[])
         ${includeRetired ? '' : 'AND NOT mv.retired'} AND ${inScope(scope, 'm', params)}
       ORDER BY mv.map_type, mv.sort_weight NULLS LAST, mv.id`,
      params,
    );
  }

  /**
   * The concepts one step along the hierarchy from these: their children (concepts of the scope
   * in the same source naming one of them as a parent), or, `reverse`, their parents; each with
   * the concept it was reached from.
   */
  async hierarchyOf(
    scope: CascadeScope,
    from: readonly WalkConcept[],
    reverse: boolean,
    includeRetired: boolean,
  ): Promise<Array<{ fromConceptId: string; to: WalkConcept }>> {
    return reverse
      ? this.parentsOf(scope, from, includeRetired)
      : this.childrenOf(scope, from, includeRetired);
  }

  /** Children: one probe of the parents index for the whole level (`&&`), then matched here. */
  private async childrenOf(
    scope: CascadeScope,
    from: readonly WalkConcept[],
    includeRetired: boolean,
  ): Promise<Array<{ fromConceptId: string; to: WalkConcept }>> {
    if (from.length === 0) return [];
    const params: unknown[] = [
      [...new Set(from.map((c) => c.repositoryId))],
      [...new Set(from.map((c) => c.code))],
    ];
    const rows = await this.em.query<Array<WalkConcept & { parentCode: string }>>(
      `SELECT ${CONCEPT}, pc AS "parentCode"
       FROM concept_versions cv CROSS JOIN LATERAL unnest(cv.parent_codes) AS pc
       WHERE cv.repository_id = ANY($1::bigint[]) AND cv.parent_codes && $2::text[]
         AND pc = ANY($2::text[]) ${includeRetired ? '' : 'AND NOT cv.retired'}
         AND ${inScope(scope, 'c', params)}
       ORDER BY cv.mnemonic`,
      params,
    );
    const byParent = new Map<string, WalkConcept[]>();
    for (const { parentCode, ...child } of rows) {
      const key = `${child.repositoryId}:${parentCode}`;
      byParent.set(key, [...(byParent.get(key) ?? []), child]);
    }
    return from.flatMap((parent) =>
      (byParent.get(`${parent.repositoryId}:${parent.code}`) ?? []).map((to) => ({
        fromConceptId: parent.conceptId,
        to,
      })),
    );
  }

  /** Parents: the codes each concept names, in its own source. */
  private async parentsOf(
    scope: CascadeScope,
    from: readonly WalkConcept[],
    includeRetired: boolean,
  ): Promise<Array<{ fromConceptId: string; to: WalkConcept }>> {
    const pairs = from.flatMap((c) => c.parentCodes.map((code) => ({ child: c, code })));
    if (pairs.length === 0) return [];
    const params: unknown[] = [pairs.map((p) => p.child.repositoryId), pairs.map((p) => p.code)];
    const rows = await this.em.query<Array<WalkConcept & { via: number }>>(
      `SELECT ${CONCEPT}, w.i::int AS via
       FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS w (repository_id, code, i)
       JOIN concept_versions cv ON cv.repository_id = w.repository_id AND cv.mnemonic = w.code
       WHERE ${includeRetired ? 'true' : 'NOT cv.retired'} AND ${inScope(scope, 'c', params)}
       ORDER BY w.i`,
      params,
    );
    return rows.map(({ via, ...to }) => ({ fromConceptId: pairs[via - 1].child.conceptId, to }));
  }

  /**
   * Of these concepts, those a scope already holds (spec operations §4.2 `omitIfExistsIn`): the
   * concept itself, or a concept of the scope with a mapping of one of `equivalencyMapTypes` to it.
   */
  async alreadyIn(
    scope: CascadeScope,
    conceptIds: readonly string[],
    equivalencyMapTypes: readonly string[],
  ): Promise<Set<string>> {
    if (conceptIds.length === 0) return new Set();
    const params: unknown[] = [conceptIds, equivalencyMapTypes.map((t) => t.toLowerCase())];
    const rows = await this.em.query<Array<{ id: string }>>(
      `SELECT cv.concept_id::text AS id FROM concept_versions cv
       WHERE cv.concept_id = ANY($1::bigint[]) AND ${inScope(scope, 'c', params)}
       UNION
       SELECT mv.to_concept_id::text FROM mapping_versions mv
       WHERE mv.to_concept_id = ANY($1::bigint[]) AND lower(mv.map_type) = ANY($2::text[])
         AND NOT mv.retired AND ${inScope(scope, 'm', params)}`,
      params,
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * For each of these concepts, a concept of the scope that names it equivalent: the from-concept
   * of a mapping of one of `equivalencyMapTypes` (tried in order) to it. By concept id.
   */
  async equivalents(
    scope: CascadeScope,
    conceptIds: readonly string[],
    equivalencyMapTypes: readonly string[],
  ): Promise<Map<string, WalkConcept>> {
    if (conceptIds.length === 0 || equivalencyMapTypes.length === 0) return new Map();
    const params: unknown[] = [conceptIds, equivalencyMapTypes.map((t) => t.toLowerCase())];
    const rows = await this.em.query<Array<WalkConcept & { of: string }>>(
      `SELECT DISTINCT ON (mv.to_concept_id) mv.to_concept_id::text AS "of", ${CONCEPT}
       FROM mapping_versions mv
       JOIN concept_versions cv ON cv.concept_id = mv.from_concept_id AND cv.valid_to_seq IS NULL
       WHERE mv.to_concept_id = ANY($1::bigint[]) AND lower(mv.map_type) = ANY($2::text[])
         AND NOT mv.retired AND ${inScope(scope, 'm', params)}
       ORDER BY mv.to_concept_id, array_position($2::text[], lower(mv.map_type)), mv.id`,
      params,
    );
    return new Map(rows.map(({ of, ...concept }) => [of, concept]));
  }

  /** Concept versions with their concepts, for an answer to show. */
  async concepts(versionIds: readonly string[]): Promise<Map<string, CascadeConcept>> {
    const found = await this.withObjects(
      ConceptVersionEntity,
      ConceptEntity,
      versionIds,
      'conceptId',
    );
    return new Map(found.map(([version, concept]) => [version.id, { concept, version }]));
  }

  /** Mapping versions with their mappings, for an answer to show. */
  async mappings(versionIds: readonly string[]): Promise<Map<string, CascadeMapping>> {
    const found = await this.withObjects(
      MappingVersionEntity,
      MappingEntity,
      versionIds,
      'mappingId',
    );
    return new Map(found.map(([version, mapping]) => [version.id, { mapping, version }]));
  }

  /** Versions by id, each with its versioned object: two statements whatever their number. */
  private async withObjects<V extends { id: string }, O extends { id: string }>(
    versionTarget: EntityTarget<V>,
    objectTarget: EntityTarget<O>,
    versionIds: readonly string[],
    key: keyof V & string,
  ): Promise<Array<[V, O]>> {
    if (versionIds.length === 0) return [];
    const versions = await this.em
      .getRepository(versionTarget)
      .findBy({ id: In([...versionIds]) } as FindOptionsWhere<V>);
    const objectIds = [...new Set(versions.map((v) => String(v[key])))];
    const objects = await this.em
      .getRepository(objectTarget)
      .findBy({ id: In(objectIds) } as FindOptionsWhere<O>);
    const byId = new Map(objects.map((o) => [o.id, o]));
    return versions.map((v) => [v, byId.get(String(v[key]))!]);
  }
}

/** The condition narrowing concept (`c`, alias `cv`) or mapping (`m`, alias `mv`) versions to a scope. */
function inScope(scope: CascadeScope, resource: 'c' | 'm', params: unknown[]): string {
  const alias = resource === 'c' ? 'cv' : 'mv';
  const p = (value: unknown): string => `$${params.push(value)}`;
  if (scope.kind === 'source') {
    const repo = `${alias}.repository_id = ${p(scope.repositoryId)}`;
    if (scope.seq === null) return `${repo} AND ${alias}.valid_to_seq IS NULL`;
    const seq = p(scope.seq);
    return `${repo} AND ${alias}.valid_from_seq <= ${seq}
      AND (${alias}.valid_to_seq IS NULL OR ${alias}.valid_to_seq > ${seq})`;
  }
  if (scope.repositoryIds.length === 0) return 'false';
  const [members, key, version] =
    resource === 'c'
      ? ['expansion_concepts', 'concept_id', 'concept_version_id']
      : ['expansion_mappings', 'mapping_id', 'mapping_version_id'];
  return `EXISTS (SELECT 1 FROM ${members} x WHERE x.expansion_id = ${p(scope.expansionId)}
      AND x.${key} = ${alias}.${key} AND x.repository_id = ANY(${p(scope.repositoryIds)}::bigint[])
      AND (x.${version} = ${alias}.id OR (x.${version} IS NULL AND ${alias}.valid_to_seq IS NULL)))`;
}
