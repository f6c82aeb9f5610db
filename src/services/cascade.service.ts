import { AppError } from '../errors';
import type { CascadeConcept, CascadeMapping, CascadeScope, Repositories } from '../repositories';
import type { ConceptView } from './concept.service';
import type { ServiceContext } from './context';
import type { MappingItem } from './mapping-views';
import type { MappingService } from './mapping.service';
import type { RepoView } from './paths';
import type { RepositoryService } from './repository.service';
import { parseRepoUrl, type RepoRef } from './urls';

/** The default hard limit on what one cascade answers (spec operations §4.2: "e.g. 1,000"). */
export const DEFAULT_CASCADE_MAX_RESOURCES = 1_000;

/** A map-type filter: every type, none, or these (compared case-insensitively). */
export type MapTypeFilter = '*' | 'none' | string[];

/** The parameters of spec operations §4.2, parsed. */
export interface CascadeParameters {
  /** Map types to cascade through: null = all but `excludeMapTypes`. */
  mapTypes: MapTypeFilter | null;
  excludeMapTypes: string[];
  /** Map types of the mappings listed: null = those cascaded through. */
  returnMapTypes: MapTypeFilter | null;
  method: 'sourcemappings' | 'sourcetoconcepts';
  cascadeHierarchy: boolean;
  cascadeMappings: boolean;
  /** How many levels below the starting concept are cascaded: `*` until nothing further. */
  cascadeLevels: number | '*';
  reverse: boolean;
  view: 'flat' | 'hierarchy';
  /** A repository (version) URL: concepts it already holds end their branch, omitted. */
  omitIfExistsIn: string | null;
  equivalencyMapTypes: string[];
  includeRetired: boolean;
}

/** The parameters as a caller names them (query parameters, GraphQL arguments): text. */
export type CascadeInput = Partial<Record<string, string | undefined>>;

/** What cascading one concept found, in order: a mapping listed, a concept reached, or both. */
export interface CascadeStep {
  /** The mapping, when its map type is one listed. */
  mapping?: MappingItem;
  /** The concept reached (through the mapping, or the hierarchy), when the walk went there. */
  conceptId?: string;
}

/** A concept the walk reached. */
export interface CascadeNode {
  view: ConceptView;
  /** true: cascaded, nothing further; false: cascaded, with results; null: not cascaded. */
  terminal: boolean | null;
  steps: CascadeStep[];
}

/** A cascade's answer: the graph from the starting concept, for either view to render. */
export interface CascadeResult {
  /** The repository version walked. */
  repo: RepoView;
  parameters: CascadeParameters;
  rootId: string;
  /** Every concept reached, in the order reached (the start first), by concept id. */
  nodes: Map<string, CascadeNode>;
  /** The walk stopped at `maxResources` concepts and mappings. */
  limitReached: boolean;
  maxResources: number;
}

const TRUE = ['true', '1', 'yes'];
const FALSE = ['false', '0', 'no'];

/** spec operations §4.2, with the singular spellings of its examples and `includeMappings`. */
export function parseCascadeParameters(input: CascadeInput): CascadeParameters {
  const text = (name: string): string | undefined => {
    const value = input[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const value = text(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if (TRUE.includes(value)) return true;
    if (FALSE.includes(value)) return false;
    throw AppError.field(name, `${name} must be true or false.`);
  };
  const list = (value: string | undefined): string[] =>
    (value ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
  const filter = (name: string, value: string | undefined): MapTypeFilter | null => {
    if (value === undefined) return null;
    if (value === '*') return '*';
    if (FALSE.includes(value.toLowerCase())) return 'none';
    const types = list(value);
    if (types.length === 0) throw AppError.field(name, `${name} names no map type.`);
    return types;
  };
  const method = (text('method') ?? 'sourcetoconcepts').toLowerCase();
  if (method !== 'sourcemappings' && method !== 'sourcetoconcepts') {
    throw AppError.field('method', "method must be 'sourceMappings' or 'sourceToConcepts'.");
  }
  const levels = text('cascadeLevels') ?? '*';
  if (levels !== '*' && !/^\d{1,6}$/.test(levels)) {
    throw AppError.field('cascadeLevels', "cascadeLevels must be a whole number or '*'.");
  }
  const view = (text('view') ?? 'flat').toLowerCase();
  if (view !== 'flat' && view !== 'hierarchy') {
    throw AppError.field('view', "view must be 'flat' or 'hierarchy'.");
  }
  const mapTypes = filter('mapTypes', text('mapTypes') ?? text('mapType'));
  let returnMapTypes = filter('returnMapTypes', text('returnMapTypes') ?? text('returnMapType'));
  // Deprecated (spec operations §4.2): includeMappings=false lists no mappings.
  if (returnMapTypes === null && !bool('includeMappings', true)) returnMapTypes = 'none';
  return {
    mapTypes: mapTypes === '*' ? null : mapTypes,
    excludeMapTypes: list(text('excludeMapTypes') ?? text('excludeMapType')),
    returnMapTypes,
    method,
    cascadeHierarchy: bool('cascadeHierarchy', true),
    cascadeMappings: bool('cascadeMappings', true),
    cascadeLevels: levels === '*' ? '*' : Number(levels),
    reverse: bool('reverse', false),
    view,
    omitIfExistsIn: text('omitIfExistsIn') ?? null,
    equivalencyMapTypes: list(text('equivalencyMapType') ?? text('equivalencyMapTypes')),
    includeRetired: bool('includeRetired', false),
  };
}

function allows(filter: MapTypeFilter, mapType: string | null): boolean {
  if (filter === '*') return true;
  if (filter === 'none') return false;
  const type = (mapType ?? '').toLowerCase();
  return filter.some((t) => t.toLowerCase() === type);
}

/**
 * `$cascade` (spec operations §4.2): from one concept of a repository version, level by level,
 * through its mappings (to target concepts of the same repository version) and its hierarchy,
 * never cascading a concept twice, up to a hard limit on resources.
 */
export class CascadeService {
  constructor(
    private readonly repos: Repositories,
    private readonly repositories: RepositoryService,
    private readonly mappings: MappingService,
    private readonly maxResources: number,
  ) {}

  /**
   * Cascades concept `code` of a source or collection. Without a version the latest released
   * one (404 when there is none); `HEAD` only when named.
   */
  async cascade(
    ctx: ServiceContext,
    ref: RepoRef,
    code: string,
    input: CascadeInput,
  ): Promise<CascadeResult> {
    const parameters = parseCascadeParameters(input);
    const repo = await this.releasedOrNamed(ctx, ref);
    const scope = await this.scopeOf(ctx, repo);
    const roots = await this.repos.cascade.conceptsByCode(scope, code);
    if (roots.length === 0) {
      throw AppError.notFound(`Concept '${code}' in ${repo.version.mnemonic}`);
    }
    const omit = parameters.omitIfExistsIn
      ? await this.omissionScope(ctx, parameters.omitIfExistsIn)
      : null;
    return this.walk(ctx, repo, scope, roots[0], parameters, omit);
  }

  /** The repository version a cascade walks; see `cascade`. */
  private async releasedOrNamed(ctx: ServiceContext, ref: RepoRef): Promise<RepoView> {
    if (ref.version !== undefined) return this.repositories.get(ctx, ref);
    try {
      return await this.repositories.get(ctx, { ...ref, version: 'latest' });
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'NOT_FOUND') throw error;
      // Which is missing: the repository (its own 404 or 401/403), or a released version.
      const head = await this.repositories.get(ctx, { ...ref, version: 'HEAD' });
      const label = ref.kind === 'source' ? 'Source' : 'Collection';
      throw new AppError(
        'NOT_FOUND',
        `${label} '${head.repo.mnemonic}' has no released version to cascade; name HEAD in ` +
          'the path (…/HEAD/concepts/:concept/$cascade/) to cascade its current content.',
      );
    }
  }

  /** A source at its version, or a collection version's default expansion (what it contains). */
  private async scopeOf(ctx: ServiceContext, repo: RepoView): Promise<CascadeScope> {
    if (repo.repo.kind === 'source') {
      return { kind: 'source', repositoryId: repo.repo.id, seq: repo.version.seq };
    }
    const expansionId = repo.version.expansionId;
    if (!expansionId) return { kind: 'expansion', expansionId: '0', repositoryIds: [] };
    const ids = await this.repos.collections.memberRepositoryIds(expansionId);
    const visible = await this.repositories.headViews(ctx, ids);
    return { kind: 'expansion', expansionId, repositoryIds: [...visible.keys()] };
  }

  /** `omitIfExistsIn`: a repository (version) URL the caller may read. */
  private async omissionScope(ctx: ServiceContext, url: string): Promise<CascadeScope> {
    let ref: RepoRef;
    try {
      ref = parseRepoUrl(url);
    } catch {
      throw AppError.field('omitIfExistsIn', `'${url}' is not a source or collection URL.`);
    }
    return this.scopeOf(ctx, await this.repositories.get(ctx, ref));
  }

  private async walk(
    ctx: ServiceContext,
    repo: RepoView,
    scope: CascadeScope,
    root: CascadeConcept,
    p: CascadeParameters,
    omit: CascadeScope | null,
  ): Promise<CascadeResult> {
    const sources = await this.sourceViews(ctx, repo, scope);
    const nodes = new Map<string, CascadeNode>();
    let resources = 0;
    let limitReached = false;
    const take = (): boolean => {
      if (resources >= this.maxResources) {
        limitReached = true;
        return false;
      }
      resources += 1;
      return true;
    };
    const add = (found: CascadeConcept): boolean => {
      if (nodes.has(found.concept.id)) return true;
      const source = sources.get(found.version.repositoryId);
      if (!source || !take()) return false;
      nodes.set(found.concept.id, {
        view: { source, concept: found.concept, version: found.version },
        terminal: null,
        steps: [],
      });
      return true;
    };
    add(root);
    const follows = (mapType: string | null): boolean =>
      p.mapTypes === null
        ? !p.excludeMapTypes.some((t) => t.toLowerCase() === (mapType ?? '').toLowerCase())
        : allows(p.mapTypes, mapType);
    const lists = (mapType: string | null): boolean =>
      p.returnMapTypes === null ? follows(mapType) : allows(p.returnMapTypes, mapType);
    const toConcepts = p.method === 'sourcetoconcepts';

    let level: CascadeConcept[] = [root];
    for (let depth = 0; level.length > 0 && !limitReached; depth += 1) {
      if (p.cascadeLevels !== '*' && depth > p.cascadeLevels) break;
      const ids = level.map((c) => c.concept.id);
      const found = p.cascadeMappings
        ? await this.repos.cascade.mappingsOf(scope, ids, p.reverse, p.includeRetired)
        : [];
      const listed = found.filter((m) => lists(m.version.mapType));
      const followed = toConcepts ? found.filter((m) => follows(m.version.mapType)) : [];
      const targetIds = followed
        .map((m) => (p.reverse ? m.version.fromConceptId : m.version.toConceptId))
        .filter((id): id is string => id !== null);
      const [targets, hierarchy, items] = await Promise.all([
        this.repos.cascade.conceptsById(scope, [...new Set(targetIds)], p.includeRetired),
        p.cascadeHierarchy && toConcepts
          ? this.repos.cascade.hierarchyOf(scope, level, p.reverse, p.includeRetired)
          : Promise.resolve([]),
        this.mappingItems(ctx, sources, listed),
      ]);
      const reached = [...targets, ...hierarchy.map((h) => h.to)];
      const omitted = omit
        ? await this.repos.cascade.alreadyIn(
            omit,
            reached.map((c) => c.concept.id).filter((id) => !nodes.has(id)),
            p.equivalencyMapTypes,
          )
        : new Set<string>();
      const targetOf = new Map(targets.map((c) => [c.concept.id, c]));
      const next: CascadeConcept[] = [];
      const reach = (concept: CascadeConcept | undefined): string | undefined => {
        if (!concept || omitted.has(concept.concept.id)) return undefined;
        const isNew = !nodes.has(concept.concept.id);
        if (!add(concept)) return undefined;
        if (isNew) next.push(concept);
        return concept.concept.id;
      };
      for (const concept of level) {
        const node = nodes.get(concept.concept.id)!;
        const side = p.reverse ? 'toConceptId' : 'fromConceptId';
        for (const m of found) {
          if (m.version[side] !== concept.concept.id || limitReached) continue;
          const item = items.get(m.version.id);
          const step: CascadeStep = {};
          if (item && take()) step.mapping = item;
          if (followed.includes(m)) {
            const targetId = p.reverse ? m.version.fromConceptId : m.version.toConceptId;
            step.conceptId = reach(targetId ? targetOf.get(targetId) : undefined);
          }
          if (step.mapping || step.conceptId) node.steps.push(step);
        }
        for (const h of hierarchy) {
          if (h.fromConceptId !== concept.concept.id || limitReached) continue;
          const conceptId = reach(h.to);
          if (conceptId) node.steps.push({ conceptId });
        }
        node.terminal = limitReached ? null : node.steps.length === 0;
      }
      level = next;
    }
    return {
      repo,
      parameters: p,
      rootId: root.concept.id,
      nodes,
      limitReached,
      maxResources: this.maxResources,
    };
  }

  /**
   * The sources whose concepts the walk may show, by repository id: the source walked, or the
   * sources of a collection's members the caller may see (each at HEAD, as member URLs show).
   */
  private async sourceViews(
    ctx: ServiceContext,
    repo: RepoView,
    scope: CascadeScope,
  ): Promise<Map<string, RepoView>> {
    if (scope.kind === 'source') return new Map([[repo.repo.id, repo]]);
    return this.repositories.headViews(ctx, scope.repositoryIds);
  }

  /** Mappings as lists show them, with their resolved ends, by mapping version id. */
  private async mappingItems(
    ctx: ServiceContext,
    sources: Map<string, RepoView>,
    found: CascadeMapping[],
  ): Promise<Map<string, MappingItem>> {
    const views = found.flatMap(({ mapping, version }) => {
      const source = sources.get(version.repositoryId);
      return source ? [{ source, mapping, version }] : [];
    });
    const ends = await this.mappings.resolveEnds(ctx, views);
    return new Map(
      views.map((view) => [view.version.id, { view, ends: ends.get(view.version.id)! }]),
    );
  }
}
