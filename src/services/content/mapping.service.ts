import crypto from 'node:crypto';
import { z } from 'zod';
import { type MappingEntity, type MappingVersionEntity } from '../../db/entities';
import { AppError } from '../../errors';
import {
  isUniqueViolation,
  type FacetCounts,
  type MappingScope,
  type MappingSearch,
  type MappingSortKey,
  type Raw,
  type ReadSnapshot,
  type Repositories,
} from '../../repositories';
import { foldedWords } from '../../repositories/list';
import { authorize, requireUser, viewerOf } from '../shared/access';
import { mayViewRepo } from '../shared/paths';
import { announceChange, contentUrl } from '../shared/changes';
import {
  endsOf,
  type Ends,
  type MappingDetail,
  type MappingItem,
  type MappingView,
  type ResolvedEnd,
} from './mapping-views';

export type { Ends, MappingDetail, MappingItem, MappingView, ResolvedEnd } from './mapping-views';
import { mappingChecksums } from '../shared/checksum';
import type { ConceptView } from './concept.service';
import type { ServiceContext } from '../shared/context';
import { keyedPage, listFilterOf, pageSlice, pagingOf } from '../shared/cursor';
import { conceptMappingsKey, createLoaders, holdingKey } from '../shared/loaders';
import {
  negatable,
  resolveSort,
  windowedListing,
  windowOf,
  WALK_BATCH,
  type ListParams,
  type Page,
} from '../shared/list';
import type { ReferenceResolver } from '../collections/reference-resolver';
import type { RepositoryService, RepoView } from './repository.service';
import { VersionedContent } from './versioned-content';
import { ownerUrl, parseConceptUrl, parseRepoUrl, repoUrl, type RepoRef } from '../shared/urls';
import { extras, mnemonic, parseInput, requiredText } from '../shared/validation';

/** One end of a mapping as stored: as given, plus what it resolved to inside the service. */
export interface End {
  sourceUrl: string | null;
  sourceVersion: string | null;
  code: string | null;
  name: string | null;
  repositoryId: string | null;
  conceptId: string | null;
}

const text = z
  .string({ error: 'Must be a string.' })
  .trim()
  .max(1000)
  .nullish()
  .transform((v) => (v ? v : null));

const endFields = (side: 'from' | 'to') => ({
  [`${side}ConceptUrl`]: text.optional(),
  [`${side}SourceUrl`]: text.optional(),
  [`${side}SourceVersion`]: text.optional(),
  [`${side}ConceptCode`]: text.optional(),
  [`${side}ConceptName`]: text.optional(),
});

const fields = {
  mapType: requiredText.optional(),
  ...endFields('from'),
  ...endFields('to'),
  sortWeight: z.number({ error: 'Must be a number.' }).finite().nullish(),
  externalId: text.optional(),
  extras: extras.optional(),
  retired: z.boolean({ error: 'Must be a boolean.' }).optional(),
  updateComment: text.optional(),
  comment: text.optional(),
};
const createSchema = z.object({ ...fields, id: mnemonic.optional(), mapType: requiredText });
const editSchema = z.object(fields);
/** The schemas the service validates its input with, for the API reference. */
export const mappingInput = { create: createSchema, edit: editSchema };
type MappingInput = z.infer<typeof editSchema>;

const SORTS: Record<string, MappingSortKey> = {
  bestmatch: 'bestMatch',
  lastupdate: 'lastUpdate',
  lastupdated: 'lastUpdate',
  id: 'id',
  maptype: 'mapType',
  sortweight: 'sortWeight',
};

/** The mapping content a version holds. */
export interface MappingContent {
  mapType: string;
  from: End;
  to: End;
  sortWeight: number | null;
  externalId: string | null;
  extras: Record<string, unknown> | null;
  retired: boolean;
}

/** Mappings of sources (spec core §2.7, §4.4): versioned like concepts, ends resolved on write. */
export class MappingService {
  /** The version mechanics mappings share with concepts. */
  private readonly versioned = new VersionedContent<
    MappingEntity,
    MappingVersionEntity,
    MappingContent,
    MappingView
  >(this.repos, {
    label: 'Mapping',
    find: (repos, repositoryId, id) => repos.mappings.findMapping(repositoryId, id),
    versions: (repos) => repos.mappings,
    objectOf: (version) => ({ id: version.mappingId, mnemonic: version.mnemonic }) as MappingEntity,
    contentOf,
    versionRow: mappingVersionRow,
    // The uniqueness rule holds for active mappings (an edit or a reactivation makes no duplicate).
    beforeWrite: async (repos, source, content, mappingId) => {
      if (!content.retired) await assertUnique(repos, source, content, mappingId);
    },
    viewOf: (source, mapping, version) => ({ source, mapping, version }),
  });

  constructor(
    private readonly repos: Repositories,
    private readonly repositories: RepositoryService,
    private readonly resolver: ReferenceResolver,
    /** Lists are counted exactly up to this many mappings (`LIST_COUNT_CAP`); 0: always. */
    private readonly countCap = 0,
  ) {}

  async create(ctx: ServiceContext, sourceRef: RepoRef, input: unknown): Promise<MappingDetail> {
    const actor = requireUser(ctx);
    const source = await this.writableSource(ctx, sourceRef);
    const { id, content, comment } = await this.draft(ctx, source, input);
    if (id !== undefined && (await this.repos.mappings.findMapping(source.repo.id, id)))
      throw mappingTaken();
    try {
      const made = await this.repos.transaction(async (repos) => {
        const seq = await repos.repos.nextChange(source.repo.id);
        const view = await this.insertIn(repos, source, seq, content, {
          id,
          username: actor.username,
          comment,
        });
        await announceChange(
          repos,
          source,
          actor,
          'MAPPING_CREATED',
          contentUrl(source, 'mappings', view.mapping.mnemonic),
        );
        return view;
      });
      return await this.detailOf(ctx, made);
    } catch (error) {
      if (isUniqueViolation(error)) throw mappingTaken();
      throw error;
    }
  }

  /**
   * Inserts a mapping with its first version into a source's HEAD, inside the caller's
   * transaction, which holds the source's change number `seq` (and so its lock, under which the
   * duplicate check runs): ids by the source's schemes where none is given.
   */
  async insertIn(
    repos: Repositories,
    source: RepoView,
    seq: string,
    content: MappingContent,
    options: { id?: string; username: string; comment: string | null },
  ): Promise<MappingView> {
    const settings = source.repo.settings;
    await assertUnique(repos, source, content);
    // Without an id, the source's scheme assigns one; sequential numbers by default.
    const id =
      options.id ??
      (settings.autoidMappingMnemonic === 'uuid'
        ? crypto.randomUUID()
        : await repos.mappings.nextNumericId(
            source.repo.id,
            settings.autoidMappingMnemonicStartFrom ?? 1,
          ));
    const row = { ...content };
    // spec core §4.6: external ids by the source's scheme too, sequential ones from `start_from`.
    if (row.externalId === null && settings.autoidMappingExternalId) {
      row.externalId =
        settings.autoidMappingExternalId === 'uuid'
          ? crypto.randomUUID()
          : await repos.mappings.nextNumericId(
              source.repo.id,
              settings.autoidMappingExternalIdStartFrom ?? 1,
              'external_id',
            );
    }
    const mapping = await repos.mappings.insertMapping({
      repositoryId: source.repo.id,
      mnemonic: id,
      createdBy: options.username,
    });
    const version = await repos.mappings.insertVersion(
      mappingVersionRow(source, mapping, row, seq, options.username, options.comment),
    );
    return { source, mapping, version };
  }

  /**
   * A mapping as a create sends it (OCL fields), validated and its ends resolved by the create's
   * rules: its id (absent when the source assigns one), content and comment. With `cache` (one
   * per batch of a bulk import) each end source is resolved once, and concept ids are left for
   * `resolveEndConcepts` to find set-based.
   */
  async draft(
    ctx: ServiceContext,
    source: Pick<RepoView, 'owner'>,
    input: unknown,
    cache?: EndCache,
  ): Promise<{ id: string | undefined; content: MappingContent; comment: string | null }> {
    const data = parseInput(createSchema, input);
    const namespace = ownerUrl(source.owner);
    return {
      id: data.id,
      content: {
        mapType: data.mapType,
        from: await this.end(ctx, 'from', data, null, namespace, cache),
        to: await this.end(ctx, 'to', data, null, namespace, cache),
        sortWeight: data.sortWeight ?? null,
        externalId: data.externalId ?? null,
        extras: data.extras ?? null,
        retired: data.retired ?? false,
      },
      comment: data.updateComment ?? data.comment ?? null,
    };
  }

  /** Fills the concept ids of drafted ends (resolved sources, codes) in one statement. */
  async resolveEndConcepts(repos: Repositories, contents: MappingContent[]): Promise<void> {
    const ends = contents.flatMap((c) => [c.from, c.to]).filter((e) => e.repositoryId && e.code);
    const ids = await repos.concepts.idsOf(
      ends.map((e) => ({ repositoryId: e.repositoryId!, mnemonic: e.code! })),
    );
    for (const end of ends) end.conceptId = ids.get(`${end.repositoryId}|${end.code}`) ?? null;
  }

  /**
   * The content of a new mapping of `source` from OCL mapping fields (its ends resolved as a
   * create resolves them, as the caller), before any transaction.
   */
  async contentOf(
    ctx: ServiceContext,
    source: Pick<RepoView, 'owner'>,
    input: unknown,
  ): Promise<MappingContent> {
    return (await this.draft(ctx, source, input)).content;
  }

  /**
   * A new version of a mapping with `content`, inside the caller's transaction, which holds the
   * source's change number `seq`; false (nothing written) when its standard checksum is equal.
   */
  async reviseIn(
    repos: Repositories,
    source: RepoView,
    current: MappingVersionEntity,
    content: MappingContent,
    seq: string,
    options: { username: string; comment: string | null },
  ): Promise<boolean> {
    return this.versioned.reviseIn(repos, source, current, content, seq, options);
  }

  async get(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    mappingVersion?: string,
  ): Promise<MappingView> {
    const source = await this.repositories.get(ctx, sourceRef);
    // spec core §9.3: reading a mapping version by its id is an administrative function.
    if (mappingVersion !== undefined)
      await authorize(ctx, { action: 'repo.edit', repo: source.repo });
    const mapping = await this.repos.mappings.findMapping(source.repo.id, id);
    if (!mapping) throw AppError.notFound(`Mapping '${id}'`);
    const version =
      mappingVersion === undefined
        ? await this.repos.mappings.findVersionAt(mapping.id, source.version.seq)
        : await this.repos.mappings.findVersionById(mapping.id, mappingVersion);
    if (!version)
      throw AppError.notFound(
        `Mapping '${id}'${mappingVersion ? ` version '${mappingVersion}'` : ''}`,
      );
    return { source, mapping, version };
  }

  /** A new version with what is sent changed; 208 (`UNCHANGED`) when the standard checksum is equal. */
  async update(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    input: unknown,
  ): Promise<MappingDetail> {
    this.versioned.assertHeadPath(sourceRef);
    const data = parseInput(editSchema, input);
    const source = await this.writableSource(ctx, sourceRef);
    const current = await this.get(ctx, { ...sourceRef, version: undefined }, id);
    const v = current.version;
    const content: MappingContent = {
      mapType: data.mapType ?? v.mapType ?? '',
      from: await this.end(ctx, 'from', data, endOf(v, 'from'), ownerUrl(source.owner)),
      to: await this.end(ctx, 'to', data, endOf(v, 'to'), ownerUrl(source.owner)),
      sortWeight: data.sortWeight !== undefined ? data.sortWeight : v.sortWeight,
      externalId: data.externalId !== undefined ? data.externalId : v.externalId,
      extras: data.extras !== undefined ? data.extras : v.extras,
      retired: data.retired ?? v.retired,
    };
    const comment = data.updateComment ?? data.comment ?? null;
    return this.detailOf(ctx, await this.versioned.change(ctx, source, id, comment, () => content));
  }

  /** One custom attribute set in a new mapping version; 208 when it already has that value. */
  async setExtra(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    name: string,
    input: unknown,
  ): Promise<MappingView> {
    return this.versioned.setExtra(ctx, await this.writableSource(ctx, sourceRef), id, name, input);
  }

  /** One custom attribute removed in a new mapping version; 404 when it has none such. */
  async removeExtra(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    name: string,
  ): Promise<MappingView> {
    return this.versioned.removeExtra(ctx, await this.writableSource(ctx, sourceRef), id, name);
  }

  async retire(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    comment?: unknown,
  ): Promise<MappingView> {
    return this.versioned.retire(ctx, await this.writableSource(ctx, sourceRef), id, comment);
  }

  async reactivate(ctx: ServiceContext, sourceRef: RepoRef, id: string): Promise<MappingView> {
    return this.versioned.reactivate(ctx, await this.writableSource(ctx, sourceRef), id);
  }

  async listVersions(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    params: ListParams,
  ): Promise<Page<MappingItem>> {
    const { source, mapping } = await this.get(ctx, { ...sourceRef, version: undefined }, id);
    const paging = pagingOf(params, { list: 'mappingVersions', mapping: mapping.id }, ['id']);
    const slice = pageSlice(
      await this.repos.mappings.listVersions(mapping.id, paging.window),
      paging,
      params,
    );
    const views = slice.rows.map((version) => ({ source, mapping, version }));
    return keyedPage(await this.items(ctx, views, params), slice, params, paging);
  }

  /**
   * `/mappings/`: current mappings of every public source (spec core §4.4), with `owner` and
   * `ownerType` narrowing the source that holds them.
   */
  async listPublic(ctx: ServiceContext, params: ListParams): Promise<Page<MappingItem>> {
    const ownerType = params.filters.ownerType?.[0]?.toLowerCase();
    if (ownerType !== undefined && ownerType !== 'organization' && ownerType !== 'user') {
      throw AppError.field('ownerType', 'Must be Organization or User.');
    }
    const sources = negatable(params.filters.source);
    const scope: MappingScope = {
      scope: 'public',
      owners: params.filters.owner,
      sources: sources.only,
      notSources: sources.not,
      ownerType:
        ownerType === undefined ? undefined : ownerType === 'user' ? 'User' : 'Organization',
    };
    return this.page(ctx, null, scope, params, (ids) => this.repositories.headViews(ctx, ids));
  }

  /**
   * The members of a collection expansion held in `repositoryIds` (those the caller may see),
   * with the mapping list parameters.
   */
  async listMembers(
    ctx: ServiceContext,
    expansionId: string,
    repositoryIds: string[],
    params: ListParams,
  ): Promise<Page<MappingItem>> {
    return this.page(ctx, null, { scope: 'expansion', expansionId, repositoryIds }, params, (ids) =>
      this.repositories.headViews(ctx, ids),
    );
  }

  /** The mappings of a source at HEAD or a version (spec core §4.4 filters). */
  async list(
    ctx: ServiceContext,
    sourceRef: RepoRef | RepoView,
    params: ListParams,
  ): Promise<Page<MappingItem>> {
    const source = await this.repositories.at(ctx, sourceRef);
    return this.page(
      ctx,
      source,
      { scope: 'source', repositoryId: source.repo.id, seq: source.version.seq },
      params,
    );
  }

  /**
   * The mappings held in the concept's source (at HEAD or a version) that start at the concept,
   * followed, with `inverse`, by a page of those that end at it (spec core §4.4,
   * `includeInverseMappings`).
   */
  async listForConcept(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    conceptId: string,
    inverse: boolean,
    params: ListParams,
  ): Promise<Page<MappingItem>> {
    const source = await this.repositories.get(ctx, sourceRef);
    const concept = await this.repos.concepts.findConcept(source.repo.id, conceptId);
    if (!concept) throw AppError.notFound(`Concept '${conceptId}'`);
    const side = (to: boolean): Promise<Page<MappingItem>> =>
      this.page(
        ctx,
        source,
        {
          scope: 'concept',
          repositoryId: source.repo.id,
          conceptId: concept.id,
          inverse: to,
          seq: source.version.seq,
        },
        params,
      );
    const direct = await side(false);
    if (!inverse) return direct;
    const reverse = await side(true);
    return {
      ...direct,
      items: [...direct.items, ...reverse.items],
      total: direct.total + reverse.total,
      // Two lists in one: no cursors (REST pages it by offset only).
      cursors: undefined,
      hasNextPage: undefined,
      hasPreviousPage: undefined,
    };
  }

  /**
   * What each end of these mappings resolved to: its source (if the caller may see it) and, unless
   * `withNames` is false, its concept's current name (`endName` reads one when asked).
   */
  async resolveEnds(
    ctx: ServiceContext,
    views: MappingView[],
    withNames = true,
  ): Promise<Map<string, Ends>> {
    const repositoryIds = new Set<string>();
    const conceptIds = new Set<string>();
    for (const { version } of views) {
      for (const side of ['from', 'to'] as const) {
        const repositoryId = version[`${side}RepositoryId`];
        const conceptId = version[`${side}ConceptId`];
        if (repositoryId) repositoryIds.add(repositoryId);
        if (repositoryId && conceptId && withNames) conceptIds.add(conceptId);
      }
    }
    const [sources, names] = await Promise.all([
      Promise.all(
        [...repositoryIds].map(async (id) => [id, await this.visibleSource(ctx, id)] as const),
      ),
      Promise.all(
        [...conceptIds].map(
          async (id) => [id, await ctx.loaders.currentConceptName.load(id)] as const,
        ),
      ),
    ]);
    const found = new Map(sources);
    const named = new Map(names);
    return new Map(views.map((view) => [view.version.id, endsOf(view.version, found, named)]));
  }

  /**
   * The current name of the concept at one end resolved without names (`resolveEnds`): null when
   * its source is out of sight or outside the service, as there.
   */
  async endName(
    ctx: ServiceContext,
    view: MappingView,
    side: 'from' | 'to',
    end: ResolvedEnd,
  ): Promise<string | null> {
    const conceptId = view.version[`${side}ConceptId`];
    return end.source && conceptId ? ctx.loaders.currentConceptName.load(conceptId) : null;
  }

  /** A mapping's detail (spec core §2.7): the mapping, its resolved ends and its version count. */
  async detail(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    mappingVersion?: string,
  ): Promise<MappingDetail> {
    return this.detailOf(ctx, await this.get(ctx, sourceRef, id, mappingVersion));
  }

  /** The detail of a mapping just read or written. */
  async detailOf(ctx: ServiceContext, view: MappingView): Promise<MappingDetail> {
    const [ends, versionCount, latestSourceVersion] = await Promise.all([
      this.resolveEnds(ctx, [view]),
      ctx.loaders.mappingVersionCounts.load(view.mapping.id),
      ctx.loaders.latestSourceVersion.load(holdingKey(view.version)),
    ]);
    return { view, ends: ends.get(view.version.id)!, versionCount, latestSourceVersion };
  }

  /**
   * The concept an end points to, as its source's HEAD sees it; null outside the service or when
   * the caller may not see that source (spec core §2.7; GraphQL `Mapping.fromConcept/toConcept`).
   */
  async endConcept(
    ctx: ServiceContext,
    view: MappingView,
    side: 'from' | 'to',
  ): Promise<ConceptView | null> {
    const repositoryId = view.version[`${side}RepositoryId`];
    const conceptId = view.version[`${side}ConceptId`];
    if (!repositoryId || !conceptId) return null;
    const source = await this.visibleSource(ctx, repositoryId);
    const [concept, version] = await Promise.all([
      ctx.loaders.conceptById.load(conceptId),
      ctx.loaders.currentConceptVersion.load(conceptId),
    ]);
    return source && concept && version ? { source, concept, version } : null;
  }

  /** The mappings held in a concept's source from it (or, inverse, to it), as that source version sees them. */
  async ofConcept(
    ctx: ServiceContext,
    concept: ConceptView,
    inverse: boolean,
  ): Promise<MappingView[]> {
    const { source } = concept;
    const rows = await ctx.loaders.conceptMappings.load(
      conceptMappingsKey(source.repo.id, source.version.seq, concept.concept.id, inverse),
    );
    const mappings = await Promise.all(
      rows.map((row) => ctx.loaders.mappingById.load(row.mappingId)),
    );
    return rows.map((version, i) => ({ source, mapping: mappings[i]!, version }));
  }

  /**
   * The mappings each concept's source holds from it (or, `inverse`, to it), ends resolved, in the
   * order of `concepts`: a concept list's `includeMappings` (spec core §4.3), batched across the
   * page (one read of the mappings, one of their ends).
   */
  async itemsOfConcepts(
    ctx: ServiceContext,
    concepts: ConceptView[],
    inverse: boolean,
  ): Promise<MappingItem[][]> {
    const views = await Promise.all(concepts.map((c) => this.ofConcept(ctx, c, inverse)));
    const ends = await this.resolveEnds(ctx, views.flat());
    return views.map((list) => list.map((view) => ({ view, ends: ends.get(view.version.id)! })));
  }

  private async visibleSource(ctx: ServiceContext, repositoryId: string): Promise<RepoView | null> {
    const source = await this.repositories.headView(ctx, repositoryId);
    return source && (await mayViewRepo(ctx, source.repo)) ? source : null;
  }

  /** How many versions the mapping has, batched per request. */
  async versionCount(ctx: ServiceContext, view: MappingView): Promise<number> {
    return ctx.loaders.mappingVersionCounts.load(view.mapping.id);
  }

  /**
   * Every mapping of a source (at HEAD or a version) matching the list parameters, in the order
   * of its pages, `WALK_BATCH` at a time through a cursor of `snapshot`, ends resolved per batch
   * (with loaders of their own: memory holds one batch); `limit`/`offset` window the walk.
   */
  async walkSource(
    ctx: ServiceContext,
    source: RepoView,
    params: ListParams,
    snapshot: ReadSnapshot,
    each: (batch: MappingItem[]) => Promise<void>,
  ): Promise<void> {
    await this.walk(
      ctx,
      { scope: 'source', repositoryId: source.repo.id, seq: source.version.seq },
      params,
      snapshot,
      async () => new Map([[source.repo.id, source]]),
      each,
    );
  }

  /** Refuses list parameters a walk would refuse, before anything is read or written. */
  checkWalk(params: ListParams): void {
    resolveSort(params, SORTS, { key: 'bestMatch', desc: false });
    windowOf(params);
  }

  /** `walkSource` over the members of a collection expansion held in `repositoryIds`. */
  async walkMembers(
    ctx: ServiceContext,
    expansionId: string,
    repositoryIds: string[],
    params: ListParams,
    snapshot: ReadSnapshot,
    each: (batch: MappingItem[]) => Promise<void>,
  ): Promise<void> {
    await this.walk(
      ctx,
      { scope: 'expansion', expansionId, repositoryIds },
      params,
      snapshot,
      (ids) => this.repositories.headViews(ctx, ids),
      each,
    );
  }

  private async walk(
    ctx: ServiceContext,
    scope: MappingScope,
    params: ListParams,
    snapshot: ReadSnapshot,
    sourcesOf: (repositoryIds: string[]) => Promise<Map<string, RepoView>>,
    each: (batch: MappingItem[]) => Promise<void>,
  ): Promise<void> {
    const sort = resolveSort(params, SORTS, { key: 'bestMatch', desc: false });
    const listing = windowedListing(
      this.repos.mappings.listing(scope, { ...searchOf(ctx, params), q: undefined }, sort),
      windowOf(params),
    );
    // Loaders of the walk's own: repositories stay known from batch to batch (they are few);
    // the end names come with the rows and are dropped after each batch.
    const walkCtx: ServiceContext = { ...ctx, loaders: createLoaders(this.repos, ctx.actor) };
    type Row = { row: Raw; object: Raw; from_name: string | null; to_name: string | null };
    for await (const rows of snapshot.rows<Row>(listing, WALK_BATCH)) {
      const read = rows.map((r) => this.repos.mappings.rowOf(r));
      const names = walkCtx.loaders.currentConceptName.clearAll();
      for (const { version, names: ends } of read) {
        if (version.fromConceptId) names.prime(version.fromConceptId, ends.from);
        if (version.toConceptId) names.prime(version.toConceptId, ends.to);
      }
      const sources = await sourcesOf([...new Set(read.map((r) => r.version.repositoryId))]);
      const views = read.map(({ version, mapping }) => ({
        source: sources.get(version.repositoryId)!,
        mapping,
        version,
      }));
      await each(await this.items(walkCtx, views, { ...params, verbose: false }));
    }
  }

  /** One page of mappings; `source` holds them all, or `sourcesOf` finds each one's source. */
  private async page(
    ctx: ServiceContext,
    source: RepoView | null,
    scope: MappingScope,
    params: ListParams,
    sourcesOf?: (repositoryIds: string[]) => Promise<Map<string, RepoView>>,
  ): Promise<Page<MappingItem>> {
    const sort = resolveSort(params, SORTS, { key: 'bestMatch', desc: false });
    const filter = searchOf(ctx, params);
    const paging = pagingOf(
      params,
      {
        list: 'mappings',
        // An expansion's members are its list whoever reads them (each sees those visible).
        scope: scope.scope === 'expansion' ? { expansionId: scope.expansionId } : scope,
        sort,
        filter: listFilterOf(params),
      },
      this.repos.mappings.keyTypes(filter, sort),
      this.countCap,
    );
    const slice = pageSlice(
      await this.repos.mappings.search(scope, filter, sort, paging.window),
      paging,
      params,
    );
    const facets = params.includeFacets
      ? await this.visibleFacets(ctx, await this.repos.mappings.facets(scope, filter))
      : undefined;
    const mappings = new Map(
      (
        await this.repos.mappings.findMappingsByIds([
          ...new Set(slice.rows.map((v) => v.mappingId)),
        ])
      ).map((m) => [m.id, m]),
    );
    const sources = sourcesOf
      ? await sourcesOf([...new Set(slice.rows.map((v) => v.repositoryId))])
      : new Map<string, RepoView>();
    const views = slice.rows.map((version) => ({
      source: source ?? sources.get(version.repositoryId)!,
      mapping: mappings.get(version.mappingId)!,
      version,
    }));
    return keyedPage(await this.items(ctx, views, params), slice, params, paging, facets);
  }

  /**
   * The end sources' facets by name, of the sources the caller may see only: an end in a private
   * source counts under no name (its name is not shown in the mapping either).
   */
  private async visibleFacets(ctx: ServiceContext, facets: FacetCounts): Promise<FacetCounts> {
    for (const name of ['fromConceptSource', 'toConceptSource']) {
      const entries = facets[name] ?? [];
      const visible = await Promise.all(
        entries.map(async ([id]) => {
          const repo = await ctx.loaders.repositoryById.load(id);
          return repo && (await mayViewRepo(ctx, repo)) ? repo.mnemonic : null;
        }),
      );
      const counts = new Map<string, number>();
      entries.forEach(([, count], i) => {
        const mnemonic = visible[i];
        if (mnemonic !== null) counts.set(mnemonic, (counts.get(mnemonic) ?? 0) + count);
      });
      facets[name] = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    }
    return facets;
  }

  /** A page's mappings as lists show them: ends resolved, version counts when verbose. */
  private async items(
    ctx: ServiceContext,
    views: MappingView[],
    params: ListParams,
  ): Promise<MappingItem[]> {
    const [ends, counts] = await Promise.all([
      this.resolveEnds(ctx, views),
      params.verbose
        ? Promise.all(views.map((v) => ctx.loaders.mappingVersionCounts.load(v.mapping.id)))
        : undefined,
    ]);
    return views.map((view, i) => ({
      view,
      ends: ends.get(view.version.id)!,
      versionCount: counts?.[i],
    }));
  }

  private async writableSource(ctx: ServiceContext, sourceRef: RepoRef): Promise<RepoView> {
    this.versioned.assertHeadPath(sourceRef);
    const source = await this.repositories.get(ctx, { ...sourceRef, version: undefined });
    await authorize(ctx, { action: 'repo.editContent', repo: source.repo });
    return source;
  }

  /**
   * One end from its three forms (spec core §2.7): a relative concept URL (`*_concept_url`), or a
   * source URL — relative or canonical — with a code. An edit that sends nothing of an end keeps it.
   */
  private async end(
    ctx: ServiceContext,
    side: 'from' | 'to',
    data: MappingInput,
    kept: End | null,
    // The owner of the mapping's source: canonical ends resolve in its namespace (spec operations §4.4).
    namespace: string | null = null,
    cache?: EndCache,
  ): Promise<End> {
    const get = (field: string): string | null | undefined =>
      (data as Record<string, string | null | undefined>)[`${side}${field}`];
    const conceptUrl = get('ConceptUrl');
    const sourceUrl = get('SourceUrl');
    const code = get('ConceptCode');
    const label = `${side}_`;
    if (!conceptUrl && !sourceUrl && !code && kept) {
      const name = get('ConceptName');
      const version = get('SourceVersion');
      return {
        ...kept,
        name: name !== undefined ? name : kept.name,
        sourceVersion: version !== undefined ? version : kept.sourceVersion,
      };
    }
    let end: End;
    if (conceptUrl) {
      if (!conceptUrl.startsWith('/')) {
        throw AppError.field(
          `${side}ConceptUrl`,
          `${label}concept_url is a relative URL; for a canonical URL send ${label}source_url and ${label}concept_code.`,
        );
      }
      const ref = parseConceptUrl(conceptUrl);
      end = await this.resolve(ctx, ref.source, ref.id, cache);
      end.sourceVersion = ref.source.version ?? get('SourceVersion') ?? null;
    } else {
      if (!sourceUrl || !code) {
        throw AppError.field(
          `${side}ConceptUrl`,
          `Give ${label}concept_url, or ${label}source_url with ${label}concept_code.`,
        );
      }
      if (sourceUrl.includes('|')) {
        throw AppError.field(
          `${side}SourceUrl`,
          `The piped form url|version is not supported; send ${label}source_version.`,
        );
      }
      if (sourceUrl.startsWith('/')) {
        const ref = parseRepoUrl(sourceUrl, 'source');
        end = await this.resolve(ctx, ref, code, cache);
        end.sourceVersion = ref.version ?? get('SourceVersion') ?? null;
      } else {
        end = await this.resolveCanonical(ctx, sourceUrl, code, namespace, cache);
        end.sourceVersion = get('SourceVersion') ?? null;
      }
    }
    end.name = get('ConceptName') ?? null;
    return end;
  }

  /**
   * A relative end, resolved as `$resolveReference` resolves the source's URL (at HEAD); stored
   * under the source's relative URL. A source the caller cannot see (or that does not exist)
   * stays an unresolved, external end.
   */
  private async resolve(
    ctx: ServiceContext,
    ref: RepoRef,
    code: string,
    cache?: EndCache,
  ): Promise<End> {
    const owner =
      ref.owner.type === 'org'
        ? `/orgs/${ref.owner.id}/`
        : ref.owner.type === 'user'
          ? `/users/${ref.owner.username}/`
          : '/user/';
    const url = `${owner}sources/${ref.id}/`;
    const resolution = await cached(cache, url, () => this.resolver.resolve(ctx, url));
    const source = resolution.repo?.repo.kind === 'source' ? resolution.repo : null;
    if (source) {
      const concept = cache ? null : await this.repos.concepts.findConcept(source.repo.id, code);
      return {
        sourceUrl: repoUrl(source.owner, 'source', source.repo.mnemonic),
        sourceVersion: null,
        code,
        name: null,
        repositoryId: source.repo.id,
        conceptId: concept?.id ?? null,
      };
    }
    return {
      sourceUrl: ref.owner.type === 'self' ? null : `${owner}sources/${ref.id}/`,
      sourceVersion: null,
      code,
      name: null,
      repositoryId: null,
      conceptId: null,
    };
  }

  /**
   * A canonical end, stored as given. It resolves through the registries in the namespace of the
   * mapping's source (spec operations §4.4). When no registry entry speaks for the URL and the
   * namespace holds no source under it, a source elsewhere that the caller may see and that
   * carries the URL still resolves it (a mapping end only describes its target; see README).
   */
  private async resolveCanonical(
    ctx: ServiceContext,
    url: string,
    code: string,
    namespace: string | null,
    cache?: EndCache,
  ): Promise<End> {
    const repositoryId = await cached(cache, `${namespace ?? ''} ${url}`, () =>
      this.canonicalSource(ctx, url, namespace),
    );
    const concept =
      repositoryId && !cache ? await this.repos.concepts.findConcept(repositoryId, code) : null;
    return {
      sourceUrl: url,
      sourceVersion: null,
      code,
      name: null,
      repositoryId,
      conceptId: concept?.id ?? null,
    };
  }

  /** The source a canonical end resolves to (see `resolveCanonical`), by id. */
  private async canonicalSource(
    ctx: ServiceContext,
    url: string,
    namespace: string | null,
  ): Promise<string | null> {
    const resolution = await this.resolver.resolve(ctx, url, namespace);
    if (resolution.repo?.repo.kind === 'source') return resolution.repo.repo.id;
    if (resolution.registryEntryUrl !== null) return null;
    for (const repo of await this.repos.repos.findByCanonicalUrl(url)) {
      if (repo.kind === 'source' && (await this.visibleSource(ctx, repo.id))) return repo.id;
    }
    return null;
  }
}

/** End sources resolved for one batch of drafts (see `MappingService.draft`). */
export type EndCache = Map<string, Promise<unknown>>;

function cached<T>(cache: EndCache | undefined, key: string, work: () => Promise<T>): Promise<T> {
  if (!cache) return work();
  let hit = cache.get(key) as Promise<T> | undefined;
  if (!hit) {
    hit = work();
    cache.set(key, hit);
  }
  return hit;
}

/** The version row `content` makes (checksums, search text), for every write. */
export function mappingVersionRow(
  source: RepoView,
  mapping: MappingEntity,
  content: MappingContent,
  seq: string,
  username: string,
  comment: string | null,
): Partial<MappingVersionEntity> {
  const { from, to } = content;
  const checksums = mappingChecksums({
    map_type: content.mapType,
    from_concept_code: from.code,
    from_concept_name: from.name,
    from_source_url: from.sourceUrl,
    from_source_version: from.sourceVersion,
    to_concept_code: to.code,
    to_concept_name: to.name,
    to_source_url: to.sourceUrl,
    to_source_version: to.sourceVersion,
    retired: content.retired,
    sort_weight: content.sortWeight,
    extras: content.extras,
    external_id: content.externalId,
  });
  return {
    mappingId: mapping.id,
    repositoryId: source.repo.id,
    mnemonic: mapping.mnemonic,
    validFromSeq: seq,
    validToSeq: null,
    retired: content.retired,
    mapType: content.mapType,
    fromSourceUrl: from.sourceUrl,
    fromSourceVersion: from.sourceVersion,
    fromConceptCode: from.code,
    fromConceptName: from.name,
    fromRepositoryId: from.repositoryId,
    fromConceptId: from.conceptId,
    toSourceUrl: to.sourceUrl,
    toSourceVersion: to.sourceVersion,
    toConceptCode: to.code,
    toConceptName: to.name,
    toRepositoryId: to.repositoryId,
    toConceptId: to.conceptId,
    sortWeight: content.sortWeight,
    externalId: content.externalId,
    extras: content.extras,
    checksumStandard: checksums.standard,
    checksumSmart: checksums.smart,
    updateComment: comment,
    searchText: foldedWords(
      [mapping.mnemonic, content.mapType, from.code, from.name, to.code, to.name]
        .filter(Boolean)
        .join(' '),
    ).join(' '),
    createdBy: username,
  };
}

function endOf(version: MappingVersionEntity, side: 'from' | 'to'): End {
  return {
    sourceUrl: version[`${side}SourceUrl`],
    sourceVersion: version[`${side}SourceVersion`],
    code: version[`${side}ConceptCode`],
    name: version[`${side}ConceptName`],
    repositoryId: version[`${side}RepositoryId`],
    conceptId: version[`${side}ConceptId`],
  };
}

/** What a mapping version holds, as an edit starts from it. */
export function mappingContentOf(version: MappingVersionEntity): MappingContent {
  return contentOf(version);
}

function contentOf(version: MappingVersionEntity): MappingContent {
  return {
    mapType: version.mapType ?? '',
    from: endOf(version, 'from'),
    to: endOf(version, 'to'),
    sortWeight: version.sortWeight,
    externalId: version.externalId,
    extras: version.extras,
    retired: version.retired,
  };
}

function mappingTaken(): AppError {
  return AppError.field('id', 'Mapping ID must be unique within a source.');
}

/** The uniqueness rule of spec core §2.7: one mapping per map type, from concept and to concept. */
async function assertUnique(
  repos: Repositories,
  source: RepoView,
  content: MappingContent,
  exceptMappingId?: string,
): Promise<void> {
  const duplicate = await repos.mappings.duplicateOf(
    source.repo.id,
    {
      mapType: content.mapType,
      fromCode: content.from.code,
      fromSourceUrl: content.from.sourceUrl,
      toCode: content.to.code,
      toSourceUrl: content.to.sourceUrl,
    },
    exceptMappingId,
  );
  if (duplicate !== null) {
    throw AppError.invalid(
      `Mapping '${duplicate}' already maps these ends with this map type; map_type, from concept, to source and to concept code must be unique.`,
    );
  }
}

/** `fromConceptOwnerType`/`toConceptOwnerType` (spec core §4.4): `Organization` or `User`. */
function ownerTypesOf(
  params: ListParams,
  name: string,
): Array<'Organization' | 'User'> | undefined {
  const values = params.filters[name];
  if (!values?.length) return undefined;
  return values.map((value) => {
    const type = value.toLowerCase();
    if (type === 'organization') return 'Organization';
    if (type === 'user') return 'User';
    throw AppError.field(name, 'Must be Organization or User.');
  });
}

/** The mapping list filters of a request (spec core §4.4); `q` searched as the caller sees. */
function searchOf(ctx: ServiceContext, params: ListParams): MappingSearch {
  return {
    q: params.q ? { text: params.q, viewer: viewerOf(ctx.actor) } : undefined,
    includeRetired: ['true', '1'].includes(params.filters.includeRetired?.[0] ?? ''),
    mapType: params.filters.mapType,
    updatedSince: params.updatedSince,
    updatedBy: params.filters.updatedBy,
    concept: params.filters.concept,
    fromConcept: params.filters.fromConcept,
    toConcept: params.filters.toConcept,
    conceptSource: params.filters.conceptSource,
    fromConceptSource: params.filters.fromConceptSource,
    toConceptSource: params.filters.toConceptSource,
    fromConceptOwner: params.filters.fromConceptOwner,
    toConceptOwner: params.filters.toConceptOwner,
    fromConceptOwnerType: ownerTypesOf(params, 'fromConceptOwnerType'),
    toConceptOwnerType: ownerTypesOf(params, 'toConceptOwnerType'),
    extras: params.extras,
    ids: params.filters.id,
  };
}
