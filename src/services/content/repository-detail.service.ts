import type { Repositories } from '../../repositories';
import type { CollectionService } from '../collections/collection.service';
import type { CollectionExpansions } from '../collections/expansions';
import type { CollectionReferences, ReferenceView } from '../collections/references';
import type { ConceptService, ConceptView } from './concept.service';
import type { ServiceContext } from '../shared/context';
import type { ListParams } from '../shared/list';
import type { MappingItem, MappingService } from './mapping.service';
import type { RepoDetail, RepositoryService, RepoView } from './repository.service';
import type { RepoRef } from '../shared/urls';

/** What a repository detail may hold besides itself (spec core §4.5/§4.6 get parameters). */
export interface RepoDetailInclude {
  concepts?: boolean;
  mappings?: boolean;
  /** Collections only. */
  references?: boolean;
  /** The window (and filters such as `includeRetired`) of the lists included. */
  params: ListParams;
}

/**
 * What a walk over a repository detail and its content hands out, in order: the detail, then
 * each list asked for (`section` first, then its items a batch at a time).
 */
export interface RepoContentVisitor {
  detail(detail: RepoDetail): Promise<void>;
  section(name: 'concepts' | 'mappings' | 'references'): Promise<void>;
  concepts(batch: ConceptView[]): Promise<void>;
  mappings(batch: MappingItem[]): Promise<void>;
  references(batch: ReferenceView[]): Promise<void>;
}

/**
 * The repository detail as a REST get with `includeConcepts`/`includeMappings`/
 * `includeReferences` answers it: one service call. The path is resolved once and the lists read
 * the version it resolved to (a source's content, or a collection's default expansion).
 */
export class RepositoryDetailService {
  constructor(
    private readonly repos: Repositories,
    private readonly repositories: RepositoryService,
    private readonly concepts: ConceptService,
    private readonly mappings: MappingService,
    private readonly collections: CollectionService,
    private readonly references: CollectionReferences,
    private readonly expansions: CollectionExpansions,
  ) {}

  /** A repository's detail; a collection's with its default expansion's URL. */
  async detail(ctx: ServiceContext, at: RepoRef): Promise<RepoDetail> {
    return this.detailOf(ctx, await this.repositories.at(ctx, at));
  }

  private async detailOf(ctx: ServiceContext, view: RepoView): Promise<RepoDetail> {
    const [counts, expansionUrl] = await Promise.all([
      this.repositories.counts(ctx, view),
      view.repo.kind === 'collection' ? this.expansions.defaultExpansionUrl(view) : undefined,
    ]);
    return { view, counts, ...(expansionUrl !== undefined ? { expansionUrl } : {}) };
  }

  /**
   * The detail with its content, item by item (spec operations §4.8, §4.10): what a get with
   * `includeConcepts`/`includeMappings` answers, read through cursors of one snapshot so that a
   * whole dictionary passes in batches (memory holds one), every list seeing the same moment.
   * `limit`/`offset` of `include.params` window each list (0: all of it).
   */
  async walk(
    ctx: ServiceContext,
    at: RepoRef | RepoView,
    include: RepoDetailInclude,
    visit: RepoContentVisitor,
  ): Promise<void> {
    const view = await this.repositories.at(ctx, at);
    const { params } = include;
    // Refused before the first byte: once the detail is written an answer cannot become a 400.
    if (include.concepts) this.concepts.checkWalk(params);
    if (include.mappings) this.mappings.checkWalk(params);
    await visit.detail(await this.detailOf(ctx, view));
    const collection = view.repo.kind === 'collection';
    const snapshot = await this.repos.snapshot();
    try {
      if (include.concepts) {
        await visit.section('concepts');
        const each = (batch: ConceptView[]) => visit.concepts(batch);
        if (collection) await this.collections.walkConcepts(ctx, view, params, snapshot, each);
        else await this.concepts.walkSource(view, params, snapshot, each);
      }
      if (include.mappings) {
        await visit.section('mappings');
        const each = (batch: MappingItem[]) => visit.mappings(batch);
        if (collection) await this.collections.walkMappings(ctx, view, params, snapshot, each);
        else await this.mappings.walkSource(ctx, view, params, snapshot, each);
      }
    } finally {
      await snapshot.close();
    }
    if (collection && include.references) {
      await visit.section('references');
      await visit.references((await this.references.listReferences(ctx, view, params)).items);
    }
  }
}
