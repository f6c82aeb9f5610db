import type { CollectionService, ReferenceView } from './collection.service';
import type { ConceptService, ConceptView } from './concept.service';
import type { ServiceContext } from './context';
import type { ListParams } from './list';
import type { MappingItem, MappingService } from './mapping.service';
import type { RepoDetail, RepositoryService } from './repository.service';
import type { RepoRef } from './urls';

/** What a repository detail may hold besides itself (spec core §4.5/§4.6 get parameters). */
export interface RepoDetailInclude {
  concepts?: boolean;
  mappings?: boolean;
  /** Collections only. */
  references?: boolean;
  /** The window (and filters such as `includeRetired`) of the lists included. */
  params: ListParams;
}

/** A repository detail with the first concepts, mappings and references of the version read. */
export interface RepoDetailWithContent extends RepoDetail {
  concepts?: ConceptView[];
  mappings?: MappingItem[];
  references?: ReferenceView[];
  /** A collection version's default expansion (OCL `expansion_url`). */
  expansionUrl?: string | null;
}

/**
 * The repository detail as a REST get with `includeConcepts`/`includeMappings`/
 * `includeReferences` answers it: one service call. The path is resolved once and the lists read
 * the version it resolved to (a source's content, or a collection's default expansion).
 */
export class RepositoryDetailService {
  constructor(
    private readonly repositories: RepositoryService,
    private readonly concepts: ConceptService,
    private readonly mappings: MappingService,
    private readonly collections: CollectionService,
  ) {}

  async detail(
    ctx: ServiceContext,
    ref: RepoRef,
    include: RepoDetailInclude,
  ): Promise<RepoDetailWithContent> {
    const detail: RepoDetailWithContent = await this.repositories.detail(ctx, ref);
    const { view } = detail;
    const { params } = include;
    const collection = view.repo.kind === 'collection';
    if (include.concepts) {
      const page = collection
        ? await this.collections.listConcepts(ctx, view, params)
        : await this.concepts.list(ctx, view, params);
      detail.concepts = page.items;
    }
    if (include.mappings) {
      const page = collection
        ? await this.collections.listMappings(ctx, view, params)
        : await this.mappings.list(ctx, view, params);
      detail.mappings = page.items;
    }
    if (collection) detail.expansionUrl = await this.collections.defaultExpansionUrl(view);
    if (collection && include.references) {
      detail.references = (await this.collections.listReferences(ctx, view, params)).items;
    }
    return detail;
  }
}
