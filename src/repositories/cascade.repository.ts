import { In, type EntityManager, type Repository, type SelectQueryBuilder } from 'typeorm';
import {
  ConceptEntity,
  ConceptVersionEntity,
  MappingEntity,
  MappingVersionEntity,
} from '../db/entities';
import { atChange } from './versioned.repository';

/**
 * What a cascade walks (spec operations §4.2): a source as of a change number (`seq` null =
 * HEAD), or a collection version's expansion (its members, each at its pinned or current version).
 */
export type CascadeScope =
  | { kind: 'source'; repositoryId: string; seq: string | null }
  | { kind: 'expansion'; expansionId: string; repositoryIds: string[] };

export interface CascadeConcept {
  concept: ConceptEntity;
  version: ConceptVersionEntity;
}

export interface CascadeMapping {
  mapping: MappingEntity;
  version: MappingVersionEntity;
}

/** A concept reached through the hierarchy, and the concept it was reached from. */
export interface HierarchyStep {
  fromConceptId: string;
  to: CascadeConcept;
}

/**
 * The questions a cascade asks of one scope, each for a whole level at once (one statement per
 * level and kind, whatever the number of concepts being cascaded).
 */
export class CascadeRepository {
  private readonly concepts: Repository<ConceptEntity>;
  private readonly conceptVersions: Repository<ConceptVersionEntity>;
  private readonly mappings: Repository<MappingEntity>;
  private readonly mappingVersions: Repository<MappingVersionEntity>;

  constructor(em: EntityManager) {
    this.concepts = em.getRepository(ConceptEntity);
    this.conceptVersions = em.getRepository(ConceptVersionEntity);
    this.mappings = em.getRepository(MappingEntity);
    this.mappingVersions = em.getRepository(MappingVersionEntity);
  }

  /** The concepts of the scope with this id (a collection may hold one id from several sources). */
  async conceptsByCode(scope: CascadeScope, code: string): Promise<CascadeConcept[]> {
    const qb = this.conceptVersions.createQueryBuilder('cv').where('cv.mnemonic = :code', { code });
    return this.withConcepts(await this.inScope(qb, scope, 'c').orderBy('cv.id').getMany());
  }

  /** The concepts of the scope among these concept ids. */
  async conceptsById(
    scope: CascadeScope,
    conceptIds: readonly string[],
    includeRetired: boolean,
  ): Promise<CascadeConcept[]> {
    if (conceptIds.length === 0) return [];
    const qb = this.conceptVersions
      .createQueryBuilder('cv')
      .where('cv.concept_id IN (:...conceptIds)', { conceptIds: [...conceptIds] });
    if (!includeRetired) qb.andWhere('NOT cv.retired');
    return this.withConcepts(await this.inScope(qb, scope, 'c').getMany());
  }

  /**
   * The mappings of the scope from these concepts (or, `reverse`, to them), in the order concept
   * details list them: map type, sort weight, id.
   */
  async mappingsOf(
    scope: CascadeScope,
    conceptIds: readonly string[],
    reverse: boolean,
    includeRetired: boolean,
  ): Promise<CascadeMapping[]> {
    if (conceptIds.length === 0) return [];
    const qb = this.mappingVersions
      .createQueryBuilder('mv')
      .where(`mv.${reverse ? 'to' : 'from'}_concept_id IN (:...conceptIds)`, {
        conceptIds: [...conceptIds],
      });
    if (!includeRetired) qb.andWhere('NOT mv.retired');
    const versions = await this.inScope(qb, scope, 'm')
      .orderBy('mv.map_type', 'ASC')
      .addOrderBy('mv.sort_weight', 'ASC', 'NULLS LAST')
      .addOrderBy('mv.id', 'ASC')
      .getMany();
    if (versions.length === 0) return [];
    const objects = await this.mappings.findBy({ id: In(versions.map((v) => v.mappingId)) });
    const byId = new Map(objects.map((m) => [m.id, m]));
    return versions.map((version) => ({ mapping: byId.get(version.mappingId)!, version }));
  }

  /**
   * The hierarchy one step on from these concepts: their children (concepts of the scope in the
   * same source naming one of them as a parent), or, `reverse`, their parents.
   */
  async hierarchyOf(
    scope: CascadeScope,
    from: readonly CascadeConcept[],
    reverse: boolean,
    includeRetired: boolean,
  ): Promise<HierarchyStep[]> {
    if (from.length === 0) return [];
    const steps: HierarchyStep[] = [];
    if (reverse) {
      // Parents: the codes each concept names, in its own source.
      const wanted = from.flatMap(({ version }) =>
        version.parentCodes.map((code) => ({
          fromId: version.conceptId,
          code,
          repo: version.repositoryId,
        })),
      );
      if (wanted.length === 0) return [];
      const qb = this.conceptVersions
        .createQueryBuilder('cv')
        .where(
          '(cv.repository_id, cv.mnemonic) IN (SELECT * FROM unnest(:repos::bigint[], :codes::text[]))',
          {
            repos: wanted.map((w) => w.repo),
            codes: wanted.map((w) => w.code),
          },
        );
      if (!includeRetired) qb.andWhere('NOT cv.retired');
      const found = await this.withConcepts(await this.inScope(qb, scope, 'c').getMany());
      const byCode = new Map(
        found.map((c) => [`${c.version.repositoryId}:${c.version.mnemonic}`, c]),
      );
      for (const w of wanted) {
        const parent = byCode.get(`${w.repo}:${w.code}`);
        if (parent) steps.push({ fromConceptId: w.fromId, to: parent });
      }
      return steps;
    }
    const qb = this.conceptVersions
      .createQueryBuilder('cv')
      .where('cv.repository_id IN (:...repos) AND cv.parent_codes && :codes::text[]', {
        repos: [...new Set(from.map((c) => c.version.repositoryId))],
        codes: [...new Set(from.map((c) => c.version.mnemonic))],
      });
    if (!includeRetired) qb.andWhere('NOT cv.retired');
    const children = await this.withConcepts(
      await this.inScope(qb, scope, 'c').orderBy('cv.mnemonic').getMany(),
    );
    for (const parent of from) {
      for (const child of children) {
        if (
          child.version.repositoryId === parent.version.repositoryId &&
          child.version.parentCodes.includes(parent.version.mnemonic)
        ) {
          steps.push({ fromConceptId: parent.concept.id, to: child });
        }
      }
    }
    return steps;
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
    const ids = [...conceptIds];
    const same = this.conceptVersions
      .createQueryBuilder('cv')
      .select('cv.concept_id', 'id')
      .where('cv.concept_id IN (:...ids)', { ids });
    const rows: Array<{ id: string }> = await this.inScope(same, scope, 'c').getRawMany();
    if (equivalencyMapTypes.length > 0) {
      const equivalent = this.mappingVersions
        .createQueryBuilder('mv')
        .select('mv.to_concept_id', 'id')
        .where('mv.to_concept_id IN (:...ids) AND mv.map_type IN (:...types) AND NOT mv.retired', {
          ids,
          types: [...equivalencyMapTypes],
        });
      rows.push(...(await this.inScope(equivalent, scope, 'm').getRawMany<{ id: string }>()));
    }
    return new Set(rows.map((r) => String(r.id)));
  }

  /** Narrows a query of concept (`c`, alias `cv`) or mapping (`m`, alias `mv`) versions to a scope. */
  private inScope<T extends ConceptVersionEntity | MappingVersionEntity>(
    qb: SelectQueryBuilder<T>,
    scope: CascadeScope,
    resource: 'c' | 'm',
  ): SelectQueryBuilder<T> {
    const alias = resource === 'c' ? 'cv' : 'mv';
    if (scope.kind === 'source') {
      qb.andWhere(`${alias}.repository_id = :scopeRepositoryId`, {
        scopeRepositoryId: scope.repositoryId,
      });
      atChange(qb, alias, scope.seq);
      return qb;
    }
    const [members, key, version] =
      resource === 'c'
        ? ['expansion_concepts', 'concept_id', 'concept_version_id']
        : ['expansion_mappings', 'mapping_id', 'mapping_version_id'];
    if (scope.repositoryIds.length === 0) return qb.andWhere('false');
    return qb.andWhere(
      `EXISTS (SELECT 1 FROM ${members} x WHERE x.expansion_id = :scopeExpansionId
         AND x.${key} = ${alias}.${key} AND x.repository_id IN (:...scopeRepositoryIds)
         AND (x.${version} = ${alias}.id OR (x.${version} IS NULL AND ${alias}.valid_to_seq IS NULL)))`,
      { scopeExpansionId: scope.expansionId, scopeRepositoryIds: scope.repositoryIds },
    );
  }

  private async withConcepts(versions: ConceptVersionEntity[]): Promise<CascadeConcept[]> {
    if (versions.length === 0) return [];
    const objects = await this.concepts.findBy({ id: In(versions.map((v) => v.conceptId)) });
    const byId = new Map(objects.map((c) => [c.id, c]));
    return versions.map((version) => ({ concept: byId.get(version.conceptId)!, version }));
  }
}
