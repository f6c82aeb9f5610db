import { AppError } from '../../errors';
import type { CascadeScope, Repositories } from '../../repositories';
import {
  parseCascadeParameters,
  type CascadeInput,
  type CascadeParameters,
} from './cascade-parameters';
import { walkCascade, type Walk } from './cascade-walk';
import type { ConceptView } from '../content/concept.service';
import type { ServiceContext } from '../shared/context';
import type { MappingItem, MappingView } from '../content/mapping-views';
import type { MappingService } from '../content/mapping.service';
import { mayViewRepo, type RepoView } from '../shared/paths';
import type { RepositoryService } from '../content/repository.service';
import { parseRepoUrl, type RepoRef } from '../shared/urls';

/** The default hard limit on what one cascade answers (spec operations §4.2: "e.g. 1,000"). */
export const DEFAULT_CASCADE_MAX_RESOURCES = 1_000;

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

/**
 * `$cascade` (spec operations §4.2): the walk of `walkCascade` from one concept of a repository
 * version the caller may read, with what its answer shows.
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
    const [root] = await this.repos.cascade.conceptsByCode(scope, code);
    if (!root) throw AppError.notFound(`Concept '${code}' in ${repo.version.mnemonic}`);
    const omit = parameters.omitIfExistsIn
      ? [await this.omissionScope(ctx, parameters.omitIfExistsIn)]
      : [];
    const walk = await walkCascade(
      this.repos.cascade,
      scope,
      [root],
      parameters,
      omit,
      this.maxResources,
    );
    return {
      repo,
      parameters,
      rootId: root.conceptId,
      nodes: await this.nodesOf(ctx, repo, scope, walk),
      limitReached: walk.limitReached,
      maxResources: this.maxResources,
    };
  }

  /** The repository version a cascade walks; see `cascade`. */
  private async releasedOrNamed(ctx: ServiceContext, ref: RepoRef): Promise<RepoView> {
    if (ref.version !== undefined) return this.repositories.get(ctx, ref);
    try {
      return await this.repositories.get(ctx, { ...ref, version: 'latest' });
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'NOT_FOUND') throw error;
      // Which is missing: the repository (its own 404, or 401/403), or a released version.
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
    // Only members of sources the caller may see are walked (and so shown): a public
    // collection may hold concepts of a private source.
    const ids = await this.repos.collections.memberRepositoryIds(expansionId);
    const heads = await this.repositories.headViews(ctx, ids);
    const visible = await Promise.all(
      [...heads.values()].map(async (view) => ((await mayViewRepo(ctx, view.repo)) ? view : null)),
    );
    return {
      kind: 'expansion',
      expansionId,
      repositoryIds: visible.filter((v): v is RepoView => v !== null).map((v) => v.repo.id),
    };
  }

  /**
   * `omitIfExistsIn`: a repository (version) URL the caller may read; a repository the caller
   * may not read answers as reading it would (401, 403, 404), as every path naming one does.
   */
  async omissionScope(ctx: ServiceContext, url: string): Promise<CascadeScope> {
    let ref: RepoRef;
    try {
      ref = parseRepoUrl(url);
    } catch {
      throw AppError.field('omitIfExistsIn', `'${url}' is not a source or collection URL.`);
    }
    return this.scopeOf(ctx, await this.repositories.get(ctx, ref));
  }

  /**
   * The walk's concepts and mappings as an answer shows them: their entities (two statements
   * each), in the source walked or, in a collection, each member's source at HEAD, and the
   * mappings' ends as the caller may see them.
   */
  private async nodesOf(
    ctx: ServiceContext,
    repo: RepoView,
    scope: CascadeScope,
    walk: Walk,
  ): Promise<Map<string, CascadeNode>> {
    const [sources, concepts, mappings] = await Promise.all([
      scope.kind === 'source'
        ? new Map([[repo.repo.id, repo]])
        : this.repositories.headViews(ctx, scope.repositoryIds),
      this.repos.cascade.concepts([...walk.nodes.values()].map((n) => n.concept.versionId)),
      this.repos.cascade.mappings([...walk.mappings.keys()]),
    ]);
    const views: MappingView[] = [];
    for (const { mapping, version } of mappings.values()) {
      const source = sources.get(version.repositoryId);
      if (source) views.push({ source, mapping, version });
    }
    const ends = await this.mappings.resolveEnds(ctx, views);
    const items = new Map<string, MappingItem>(
      views.map((view) => [view.version.id, { view, ends: ends.get(view.version.id)! }]),
    );
    const nodes = new Map<string, CascadeNode>();
    for (const [id, node] of walk.nodes) {
      const found = concepts.get(node.concept.versionId);
      const source = sources.get(node.concept.repositoryId);
      if (!found || !source) continue;
      nodes.set(id, {
        view: { source, concept: found.concept, version: found.version },
        terminal: node.terminal,
        steps: node.steps.map((step) => ({
          mapping: step.mapping ? items.get(step.mapping.versionId) : undefined,
          conceptId: step.conceptId,
        })),
      });
    }
    return nodes;
  }
}
