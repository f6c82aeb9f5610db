import type { ConceptName } from '../../db/entities';
import { AppError } from '../../errors';
import type { ReadSnapshot, Repositories } from '../../repositories';
import type { ConceptService, ConceptView } from '../content/concept.service';
import type { ServiceContext } from '../shared/context';
import { parseExpansionParameters, type ExpansionParameters } from './expansion-parameters';
import { pageOf, type ListParams, type Page } from '../shared/list';
import type { MappingItem, MappingService } from '../content/mapping.service';
import type { RepositoryService, RepoView } from '../content/repository.service';
import type { RepoRef } from '../shared/urls';
import { collectionAt } from './evaluation';
import type { CollectionExpansions, ReadableMembers } from './expansions';
import type { ReferenceView } from './references';

/**
 * The members a collection version's expansion holds, as the caller may read them (spec
 * operations §2.1, §2.4). References (`CollectionReferences`, references.ts) and expansions
 * (`CollectionExpansions`, expansions.ts) are services of their own, both evaluated by
 * evaluation.ts.
 */
export class CollectionService {
  constructor(
    private readonly repos: Repositories,
    private readonly repositories: RepositoryService,
    private readonly concepts: ConceptService,
    private readonly mappings: MappingService,
    private readonly expansions: CollectionExpansions,
  ) {}

  /**
   * The concepts of a collection version (its default expansion) or of one of its expansions,
   * with the concept list parameters; only members from repositories the caller may see.
   */
  async listConcepts(
    ctx: ServiceContext,
    ref: RepoRef | RepoView,
    params: ListParams,
    expansionMnemonic?: string,
  ): Promise<Page<ConceptView>> {
    const { expansion, repositoryIds } = await this.expansions.readableExpansion(
      ctx,
      ref,
      expansionMnemonic,
    );
    if (!expansion) return pageOf([], 0, params);
    const p = parseExpansionParameters(expansion.parameters).parsed;
    const page = await windowed(params, p, (window) =>
      this.concepts.listMembers(ctx, expansion.id, repositoryIds, window),
    );
    return { ...page, items: await this.shownConcepts(expansion.id, p, page.items, params) };
  }

  /**
   * A concept of a collection version by its id (OCL `{collection}[/:version]/concepts/:id/`):
   * the version its default expansion (or `expansionMnemonic`) holds, retired or not, and the
   * references that brought it in. 404 when it holds none; 409 when it holds concepts of that id
   * from several sources (read one through its source).
   */
  async memberConcept(
    ctx: ServiceContext,
    ref: RepoRef,
    id: string,
    expansionMnemonic?: string,
  ): Promise<{ view: ConceptView; references: ReferenceView[] }> {
    const collection = await collectionAt(this.repositories, ctx, ref);
    const page = await this.listConcepts(ctx, collection, memberParams(id), expansionMnemonic);
    const view = onlyMember(page, 'Concept', id);
    return {
      view,
      references: await this.selecting(ctx, collection, expansionMnemonic, 'c', view.concept.id),
    };
  }

  /** A mapping of a collection version by its id, as `memberConcept`. */
  async memberMapping(
    ctx: ServiceContext,
    ref: RepoRef,
    id: string,
    expansionMnemonic?: string,
  ): Promise<{ item: MappingItem; references: ReferenceView[] }> {
    const collection = await collectionAt(this.repositories, ctx, ref);
    const page = await this.listMappings(ctx, collection, memberParams(id), expansionMnemonic);
    const item = onlyMember(page, 'Mapping', id);
    return {
      item,
      references: await this.selecting(
        ctx,
        collection,
        expansionMnemonic,
        'm',
        item.view.mapping.id,
      ),
    };
  }

  /** The references of a collection version whose rows put one member into its expansion. */
  private async selecting(
    ctx: ServiceContext,
    collection: RepoView,
    expansionMnemonic: string | undefined,
    resource: 'c' | 'm',
    objectId: string,
  ): Promise<ReferenceView[]> {
    const { expansion } = await this.expansions.readableExpansion(
      ctx,
      collection,
      expansionMnemonic,
    );
    if (!expansion) return [];
    const ids = await this.repos.collections.referencesSelecting(expansion.id, resource, objectId);
    if (ids.length === 0) return [];
    const rows = await this.repos.collections.referencesAt(
      collection.repo.id,
      collection.version.seq,
      { ids },
    );
    return rows.map((reference) => ({ collection, reference }));
  }

  /**
   * Every active member concept of a collection version the caller may see, with only what a
   * FHIR value set shows (spec operations §2.8): its source, code and display (shown as
   * `listConcepts` shows it). One lean statement for the members, whatever their number.
   */
  async memberCodes(
    ctx: ServiceContext,
    { expansion, repositoryIds }: ReadableMembers,
  ): Promise<Array<{ source: RepoView; code: string; display: string | null }>> {
    if (!expansion) return [];
    const p = parseExpansionParameters(expansion.parameters).parsed;
    const rows = await this.repos.concepts.memberCodes(
      expansion.id,
      repositoryIds,
      p.displayLanguage !== undefined,
    );
    const displays = await this.repos.collections.displays(
      expansion.id,
      rows.map((row) => row.conceptId),
    );
    const sources = await this.repositories.headViews(ctx, repositoryIds);
    return rows.flatMap((row) => {
      const source = sources.get(row.repositoryId);
      if (!source) return [];
      const shown = shownName(row.names, displays.get(row.conceptId), p);
      return [{ source, code: row.code, display: shown ? shown.displayName : row.display }];
    });
  }

  async listMappings(
    ctx: ServiceContext,
    ref: RepoRef | RepoView,
    params: ListParams,
    expansionMnemonic?: string,
  ): Promise<Page<MappingItem>> {
    const { expansion, repositoryIds } = await this.expansions.readableExpansion(
      ctx,
      ref,
      expansionMnemonic,
    );
    if (!expansion) return pageOf([], 0, params);
    const p = parseExpansionParameters(expansion.parameters).parsed;
    const page = await windowed(params, p, (window) =>
      this.mappings.listMembers(ctx, expansion.id, repositoryIds, window),
    );
    return { ...page, items: await this.markRemoved(expansion.id, page.items, params) };
  }

  /**
   * Every member concept of a collection version's default expansion the caller may see, as
   * `listConcepts` shows them (displays and designations), a batch at a time through a cursor
   * of `snapshot` (exports, whole synchronization answers).
   */
  async walkConcepts(
    ctx: ServiceContext,
    view: RepoView,
    params: ListParams,
    snapshot: ReadSnapshot,
    each: (batch: ConceptView[]) => Promise<void>,
  ): Promise<void> {
    const { expansion, repositoryIds } = await this.expansions.readableExpansion(ctx, view);
    if (!expansion) return;
    const p = parseExpansionParameters(expansion.parameters).parsed;
    await this.concepts.walkMembers(
      ctx,
      expansion.id,
      repositoryIds,
      params,
      snapshot,
      async (batch) => each(await this.shownConcepts(expansion.id, p, batch, params)),
    );
  }

  /**
   * Member concepts as the expansion says they are shown (spec operations §2.2, §2.4): a
   * reference's `display`, else the name in `displayLanguage`; names and descriptions; those a
   * read of changes found gone from it, retired.
   */
  private async shownConcepts(
    expansionId: string,
    p: ExpansionParameters,
    views: ConceptView[],
    params: ListParams,
  ): Promise<ConceptView[]> {
    const ids = views.map((v) => v.concept.id);
    const [displays, removed] = await Promise.all([
      this.repos.collections.displays(expansionId, ids),
      this.removedAmong(expansionId, 'c', ids, params),
    ]);
    const designations = p.includeDesignations ?? false;
    const definition = p.includeDefinition ?? false;
    return views.map((view) => {
      const shown = shownName(view.version.names, displays.get(view.concept.id), p);
      const version = {
        ...view.version,
        ...shown,
        ...(removed.has(view.concept.id) ? { retired: true } : {}),
      };
      return {
        ...view,
        version,
        ...(designations || definition ? { expansion: { designations, definition } } : {}),
      };
    });
  }

  /** `walkConcepts` for the member mappings. */
  async walkMappings(
    ctx: ServiceContext,
    view: RepoView,
    params: ListParams,
    snapshot: ReadSnapshot,
    each: (batch: MappingItem[]) => Promise<void>,
  ): Promise<void> {
    const { expansion, repositoryIds } = await this.expansions.readableExpansion(ctx, view);
    if (!expansion) return;
    await this.mappings.walkMembers(
      ctx,
      expansion.id,
      repositoryIds,
      params,
      snapshot,
      async (batch) => each(await this.markRemoved(expansion.id, batch, params)),
    );
  }

  /** Mappings read as changes: those that left the expansion shown retired (`removedAmong`). */
  private async markRemoved(
    expansionId: string,
    items: MappingItem[],
    params: ListParams,
  ): Promise<MappingItem[]> {
    const ids = items.map((item) => item.view.mapping.id);
    const removed = await this.removedAmong(expansionId, 'm', ids, params);
    return items.map((item) =>
      removed.has(item.view.mapping.id)
        ? { ...item, view: { ...item.view, version: { ...item.view.version, retired: true } } }
        : item,
    );
  }

  /**
   * Of the objects a read of changes found, those that left the expansion (spec ops §4.10): a
   * read with `updatedSince` and `includeRetired` shows them as retired. None otherwise.
   */
  private async removedAmong(
    expansionId: string,
    resource: 'c' | 'm',
    ids: string[],
    params: ListParams,
  ): Promise<Set<string>> {
    const retired = params.filters.includeRetired?.[0];
    if (!params.updatedSince || (retired !== 'true' && retired !== '1') || ids.length === 0) {
      return new Set();
    }
    const members = await this.repos.collections.membersAmong(expansionId, resource, ids);
    return new Set(ids.filter((id) => !members.has(id)));
  }
}

/**
 * A list read through an expansion whose `offset`/`count` parameters (spec operations §2.2) make
 * it a window of its members: the request pages inside that window.
 */
async function windowed<T>(
  params: ListParams,
  p: ExpansionParameters,
  read: (params: ListParams) => Promise<Page<T>>,
): Promise<Page<T>> {
  if (p.offset === undefined && p.count === undefined) return read(params);
  if (params.first !== undefined || params.after !== undefined) {
    // A window by position has no keyset: where it ends moves with every member added before it.
    throw AppError.field(
      params.after !== undefined ? 'after' : 'first',
      'This expansion is a window of its members (its offset/count parameters): page it with limit/offset.',
    );
  }
  const start = p.offset ?? 0;
  const room = p.count === undefined ? Infinity : Math.max(0, p.count - params.offset);
  if (room === 0) {
    const all = await read({ ...params, offset: start, limit: 1 });
    return pageOf([], Math.min(Math.max(all.total - start, 0), p.count ?? Infinity), params);
  }
  const limit = params.limit === 0 ? room : Math.min(params.limit, room);
  const page = await read({
    ...params,
    offset: start + params.offset,
    limit: Number.isFinite(limit) ? limit : 0,
  });
  const total = Math.min(Math.max(page.total - start, 0), p.count ?? Infinity);
  return {
    ...page,
    total,
    offset: params.offset,
    limit: params.limit,
    hasNextPage: params.limit > 0 && params.offset + page.items.length < total,
    hasPreviousPage: params.offset > 0,
  };
}

/**
 * How an expansion shows a member concept instead of its own display name: a reference's
 * `display`, else its name in the expansion's `displayLanguage` (spec operations §2.2, §2.4);
 * undefined when neither applies.
 */
function shownName(
  names: ConceptName[],
  display: string | undefined,
  p: ExpansionParameters,
): { displayName: string; displayLocale: string | null } | undefined {
  if (display !== undefined) return { displayName: display, displayLocale: null };
  const name = p.displayLanguage ? nameIn(names, p.displayLanguage) : undefined;
  return name ? { displayName: name.name, displayLocale: name.locale } : undefined;
}

/** The preferred name in a language (`en` matches `en-GB` too), else any name in it. */
function nameIn(names: ConceptName[], language: string): ConceptName | undefined {
  const lang = language.toLowerCase();
  const inLanguage = names.filter(
    (n) => n.locale.toLowerCase() === lang || n.locale.toLowerCase().startsWith(`${lang}-`),
  );
  return inLanguage.find((n) => n.locale_preferred) ?? inLanguage[0];
}

/** List parameters that find one member by its id, retired or not (at most two, to tell). */
function memberParams(id: string): ListParams {
  return { limit: 2, offset: 0, verbose: true, filters: { id: [id], includeRetired: ['true'] } };
}

/** The one member a page found: 404 none, 409 several of that id from different sources. */
function onlyMember<T>(page: Page<T>, kind: 'Concept' | 'Mapping', id: string): T {
  if (page.total === 0) throw AppError.notFound(`${kind} '${id}'`);
  if (page.total > 1) {
    throw new AppError(
      'CONFLICT',
      `The collection holds ${page.total} ${kind.toLowerCase()}s with id '${id}', from different sources; read one through its source.`,
    );
  }
  return page.items[0];
}
