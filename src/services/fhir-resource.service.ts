import { HEAD, type RepositoryKind } from '../db/entities';
import { AppError, isAppError } from '../errors';
import type { FhirRepoSearch, RepoName, Repositories, VersionChoice } from '../repositories';
import { requireUser, viewerOf } from './access';
import type { CollectionService } from './collection.service';
import type { ConceptService } from './concept.service';
import type { ServiceContext } from './context';
import { defaultListParams } from './list';
import type { MappingService } from './mapping.service';
import type { MappingItem } from './mapping-views';
import type { Owner, RepoView } from './paths';
import { RenderedCache } from './rendered-cache';
import { refOf, type RepositoryService } from './repository.service';
import type { StoredTerminology } from './terminology/library';
import { isObject, type CodeSystemConcept, type CodeSystemResource } from './terminology/fhir';
import {
  childrenAmong,
  codeSystemOf,
  conceptMapOf,
  resourceUriOf,
  StoredContent,
  STORED_EXTRA_FIELDS,
  systemOf,
  valueSetOf,
  type ConceptMapEntry,
  type FhirResourceType,
  type RenderContext,
  type StoredResource,
  type ValueSetMember,
} from './terminology/stored';
import { parseRepoUrl, repoUrl, type OwnerRef, type RepoRef } from './urls';

export type { FhirResourceType, StoredResource } from './terminology/stored';

/** Concepts (CodeSystem, ValueSet) or mappings (ConceptMap) per page (spec operations §4.7). */
export const CONTENT_PAGE_SIZE = 100;
/** Entries of a search page: `_count` by default, and the most it may ask. */
export const DEFAULT_ENTRIES = 100;
export const MAX_ENTRIES = 1000;

/** Where a FHIR-format request reads: the server-wide `/fhir/` or an owner's namespace. */
export type FhirNamespace = { kind: 'global' } | { kind: 'owner'; owner: OwnerRef };

/** A FHIR search (spec operations §4.7), as the edge parsed it. */
export interface FhirSearchInput {
  /** The canonical URL (or the repository's own URL). */
  url?: string;
  /** One version (HEAD included), or `*`: every released version. None: the latest released. */
  version?: string;
  name?: string;
  title?: string;
  status?: string;
  /** `_id`: server-wide ids under /fhir/, repository ids in an owner namespace. */
  ids?: string[];
  /** `_count`: entries per page. */
  count?: number;
  /** From 1: the page of entries of a list, or of the content of a one-resource search. */
  page?: number;
  /** `_summary=count`: the total only. */
  countOnly?: boolean;
  /** `_summary=true` or `_elements` without the content: definitions only. */
  definitionsOnly?: boolean;
}

/** What a FHIR-format read found, for the edge to render (a Bundle or one resource). */
export interface FhirResult {
  resources: StoredResource[];
  /** Entries matching, over every page. */
  total: number;
  /**
   * What `page` pages: the entries of a list (definitions only), or the concepts / mappings of
   * the resources of a one-resource read (`url` or `_id` named, version not `*`).
   */
  pages: 'entries' | 'content';
  page: number;
  /** Whether a next page exists. */
  more: boolean;
}

/** A one-resource read: the resource, and whether its content goes on beyond this page. */
export interface FhirRead {
  resource: StoredResource;
  more: boolean;
}

/** A resource made by a FHIR create: it as read back, and where it is read. */
export interface FhirCreated {
  resource: StoredResource;
  /** The resource URI (spec operations §4.7), for `Location`. */
  location: string;
}

const KIND: Record<FhirResourceType, RepositoryKind> = {
  CodeSystem: 'source',
  ValueSet: 'collection',
  ConceptMap: 'source',
};

/**
 * The server-wide id of a repository (`GET /fhir/X/:id`): `org` or `user`, the length of the
 * owner's id, `-`, the owner's id, `-`, the repository's id: `org4-CIEL-CIEL`. The length makes
 * it unambiguous whatever the ids hold (`-`, `.`), so it always reads back.
 */
export function globalIdOf(owner: Pick<Owner, 'type' | 'id'>, repoId: string): string {
  return `${owner.type === 'Organization' ? 'org' : 'user'}${owner.id.length}-${owner.id}-${repoId}`;
}

/** The repository a server-wide id names; undefined for anything that is not one. */
export function parseGlobalId(id: string): RepoName | undefined {
  const match = /^(org|user)([1-9]\d{0,2})-/.exec(id);
  if (!match) return undefined;
  const length = Number(match[2]);
  const rest = id.slice(match[0].length);
  const owner = rest.slice(0, length);
  if (owner.length !== length || length === 0 || rest[length] !== '-') return undefined;
  const mnemonic = rest.slice(length + 1);
  if (mnemonic.length === 0) return undefined;
  return { ownerType: match[1] as RepoName['ownerType'], owner, mnemonic };
}

/**
 * Sources and collections read as FHIR R4 resources (spec operations §2.8, §4.7): searches,
 * reads by owner namespace and by server-wide id, version lists, and the stored content the
 * terminology operations read. Access is the one of every path (`PathResolver`) and of every list
 * (`visibleRepository`): nothing private reaches a caller who may not see it.
 */
export class FhirResourceService {
  constructor(
    private readonly repos: Repositories,
    private readonly repositories: RepositoryService,
    private readonly concepts: ConceptService,
    private readonly mappings: MappingService,
    private readonly collections: CollectionService,
    /** Concepts of stored code systems kept rendered for the operations (0: none). */
    cacheConcepts: number,
  ) {
    this.renderedCodeSystems = new RenderedCache(cacheConcepts);
  }

  /** Stored code system versions as the operations read them, rendered once (`renderedKey`). */
  private readonly renderedCodeSystems: RenderedCache;

  /**
   * `GET /fhir/X/` and `GET {owner}/X/`: the latest released version of each repository, one
   * version, or every released one (`version=*`). With `url` or `_id` and no `*`, the resources
   * found carry their content (a page of it); otherwise definitions only.
   */
  async search(
    ctx: ServiceContext,
    type: FhirResourceType,
    namespace: FhirNamespace,
    input: FhirSearchInput,
  ): Promise<FhirResult> {
    const count = checkCount(input.count);
    const page = checkPage(input.page);
    const filter: FhirRepoSearch = {
      kind: KIND[type],
      versions: versionChoice(input.version),
      name: checkText('name', input.name),
      title: checkText('title', input.title),
      status: checkStatus(input.status),
    };
    if (namespace.kind === 'owner') {
      const owner = await this.repositories.resolveOwner(ctx, namespace.owner);
      filter.owner = owner.org ? { orgId: owner.org.id } : { userId: owner.user!.id };
      if (input.ids) {
        const ownerType = owner.type === 'Organization' ? 'org' : 'user';
        filter.names = input.ids.map((mnemonic) => ({ ownerType, owner: owner.id, mnemonic }));
      }
    } else if (input.ids) {
      filter.names = input.ids.flatMap((id) => parseGlobalId(id) ?? []);
    }
    if (input.url !== undefined) filter.url = this.urlFilter(ctx, KIND[type], input.url);
    const single = (input.url !== undefined || input.ids !== undefined) && input.version !== '*';
    const viewer = viewerOf(ctx.actor);
    if (input.countOnly) {
      const { total } = await this.repos.fhir.search(filter, viewer, { limit: 1, offset: 0 });
      return { resources: [], total, pages: 'entries', page, more: false };
    }
    const slice = await this.repos.fhir.search(filter, viewer, {
      limit: count,
      offset: single ? 0 : (page - 1) * count,
    });
    const views = slice.rows.map(viewOf);
    const r = renderContext(ctx, namespace);
    if (!single || input.definitionsOnly) {
      const resources = await Promise.all(views.map((view) => this.render(ctx, type, view, r)));
      const more = !single && page * count < slice.total;
      return { resources, total: slice.total, pages: single ? 'content' : 'entries', page, more };
    }
    const reads = await Promise.all(
      views.map((view) => this.withContent(ctx, type, view, r, page)),
    );
    return {
      resources: reads.map((read) => read.resource),
      total: slice.total,
      pages: 'content',
      page,
      more: reads.some((read) => read.more),
    };
  }

  /**
   * `GET {owner}/X/:id` (the latest released version; null when none is released) and
   * `GET {owner}/X/:id/version/:version` (that version, HEAD included), with a page of content.
   * A private repository answers 401/403 and a missing one 404, as its REST path does.
   */
  async read(
    ctx: ServiceContext,
    type: FhirResourceType,
    owner: OwnerRef,
    id: string,
    version?: string,
    page?: number,
  ): Promise<FhirRead | null> {
    return this.readIn(ctx, type, { kind: 'owner', owner }, owner, id, version, page);
  }

  /**
   * `GET /fhir/X/:id`: the latest released version of the repository the server-wide id names;
   * 404 when the id names nothing the caller may see or it has no released version.
   */
  async readById(
    ctx: ServiceContext,
    type: FhirResourceType,
    id: string,
    page?: number,
  ): Promise<FhirRead> {
    const name = parseGlobalId(id);
    if (!name) throw AppError.notFound(`${type} '${id}'`);
    const owner: OwnerRef =
      name.ownerType === 'org'
        ? { type: 'org', id: name.owner }
        : { type: 'user', username: name.owner };
    const found = await this.readIn(
      ctx,
      type,
      { kind: 'global' },
      owner,
      name.mnemonic,
      undefined,
      page,
    );
    if (!found) throw AppError.notFound(`A released version of ${type} '${id}'`);
    return found;
  }

  /**
   * `GET {owner}/X/:id/version/` (and `…/version/*`): the released versions of one repository,
   * newest first, definitions only.
   */
  async versions(
    ctx: ServiceContext,
    type: FhirResourceType,
    owner: OwnerRef,
    id: string,
    input: Pick<FhirSearchInput, 'count' | 'page' | 'countOnly'> = {},
  ): Promise<FhirResult> {
    const count = checkCount(input.count);
    const page = checkPage(input.page);
    const head = await this.repositories.get(ctx, { owner, kind: KIND[type], id });
    const filter: FhirRepoSearch = {
      kind: KIND[type],
      versions: { kind: 'released' },
      owner: head.owner.org ? { orgId: head.owner.org.id } : { userId: head.owner.user!.id },
      names: [nameOf(head)],
    };
    const window = input.countOnly
      ? { limit: 1, offset: 0 }
      : { limit: count, offset: (page - 1) * count };
    const slice = await this.repos.fhir.search(filter, viewerOf(ctx.actor), window);
    const r = renderContext(ctx, { kind: 'owner', owner });
    const resources = input.countOnly
      ? []
      : await Promise.all(slice.rows.map((row) => this.render(ctx, type, viewOf(row), r)));
    return {
      resources,
      total: slice.total,
      pages: 'entries',
      page,
      more: !input.countOnly && page * count < slice.total,
    };
  }

  /** The stored content the terminology operations read, as the caller may see it. */
  stored(ctx: ServiceContext): StoredTerminology {
    return new StoredContent({
      storedVersions: (type, url) => this.storedVersions(ctx, type, url),
    });
  }

  /**
   * Every version of the repositories known by `url` that the operations read (see
   * `StoredContent`), with all their content; ids are server-wide.
   */
  async storedVersions(
    ctx: ServiceContext,
    type: FhirResourceType,
    url: string,
  ): Promise<StoredResource[]> {
    const filter: FhirRepoSearch = {
      kind: KIND[type],
      versions: { kind: 'stored' },
      url: this.urlFilter(ctx, KIND[type], url),
    };
    const slice = await this.repos.fhir.search(filter, viewerOf(ctx.actor), {
      limit: 0,
      offset: 0,
    });
    const r = renderContext(ctx, { kind: 'global' });
    return Promise.all(
      slice.rows.map(async (row) => {
        const view = viewOf(row);
        const render = async () => (await this.withContent(ctx, type, view, r, 'all')).resource;
        // A code system's content is the same for every caller who may see it (who may is
        // decided above, afresh for each request); a value set's or a map's may not be.
        return type === 'CodeSystem'
          ? this.renderedCodeSystems.get(
              renderedKey(ctx, view),
              async () => (await render()) as CodeSystemResource,
            )
          : render();
      }),
    );
  }

  /**
   * `POST /fhir/X/` and `POST {owner}/X/` for CodeSystem and ValueSet (spec operations §4.7
   * create rules 1–5): a source with its concepts, or a collection with its references, and the
   * version the resource names, made through the repository, concept and collection services
   * (their validation and access rules). Those write paths each commit on their own, so a create
   * that fails part-way removes the repository it made: nothing of it is left.
   */
  async create(
    ctx: ServiceContext,
    type: FhirResourceType,
    namespace: FhirNamespace,
    body: unknown,
  ): Promise<FhirCreated> {
    requireUser(ctx);
    if (type === 'ConceptMap') {
      throw new AppError(
        'NOT_ALLOWED',
        'ConceptMap cannot be created; its mappings belong to a source.',
      );
    }
    const input = parseCreate(type, namespace, body);
    const kind = KIND[type];
    const ref: RepoRef = { owner: input.owner, kind, id: input.id };
    // Checked before anything is written: a body naming content it cannot hold makes nothing.
    const concepts = type === 'CodeSystem' ? conceptInputs(input.resource, input.language) : [];
    const references = type === 'ValueSet' ? referenceInputs(input.resource) : [];
    const made = await this.repositories.create(ctx, input.owner, kind, input.fields);
    try {
      if (type === 'CodeSystem') await this.createConcepts(ctx, ref, concepts);
      else await this.addReferences(ctx, ref, references);
      await this.repositories.createVersion(ctx, ref, {
        id: input.version,
        released: input.status === 'active',
        retired: input.status === 'retired',
      });
    } catch (error) {
      // Undone, not deleted as a user deletes (a collection would only be deactivated, its id
      // kept): the repository goes with everything made in it.
      await this.repos.repos.delete(made.view.repo.id);
      throw error;
    }
    const read = await this.readIn(ctx, type, namespace, input.owner, input.id, input.version, 1);
    const location = resourceUriOf(ownerOfRef(ref), type, input.id, input.version);
    return { resource: read!.resource, location };
  }

  /** Concepts in an order that makes each parent before its children (cycles: parents after). */
  private async createConcepts(
    ctx: ServiceContext,
    ref: RepoRef,
    concepts: ConceptInput[],
  ): Promise<void> {
    const byCode = new Map(concepts.map((c) => [c.code, c]));
    const made = new Set<string>();
    const later: ConceptInput[] = [];
    const urlOf = (code: string) =>
      `${repoUrl(ownerOfRef(ref), 'source', ref.id)}concepts/${encodeURIComponent(code)}/`;
    const visiting = new Set<string>();
    const make = async (concept: ConceptInput): Promise<void> => {
      if (made.has(concept.code) || visiting.has(concept.code)) return;
      visiting.add(concept.code);
      for (const parent of concept.parents) {
        const found = byCode.get(parent);
        if (found) await make(found);
      }
      const ready = concept.parents.filter((p) => made.has(p));
      if (ready.length < concept.parents.length) later.push(concept);
      await conceptStep(concept.code, () =>
        this.concepts.create(ctx, ref, { ...concept.body, parentConceptUrls: ready.map(urlOf) }),
      );
      made.add(concept.code);
    };
    for (const concept of concepts) await make(concept);
    for (const concept of later) {
      await conceptStep(concept.code, () =>
        this.concepts.update(
          ctx,
          ref,
          concept.code,
          { parentConceptUrls: concept.parents.map(urlOf) },
          'partial',
        ),
      );
    }
  }

  /** A ValueSet's includes and excludes as collection references; each must be added. */
  private async addReferences(
    ctx: ServiceContext,
    ref: RepoRef,
    references: Array<Record<string, unknown>>,
  ): Promise<void> {
    if (references.length === 0) return;
    const results = await this.collections.addReferences(ctx, ref, { data: references });
    const refused = results.filter((r) => !r.added);
    if (refused.length > 0) {
      throw AppError.field(
        'compose',
        `References could not be added: ${refused.map((r) => `${String(r.expression)}: ${String(r.message)}`).join('; ')}`,
      );
    }
  }

  // ------------------------------------------------------------------------------------------

  private async readIn(
    ctx: ServiceContext,
    type: FhirResourceType,
    namespace: FhirNamespace,
    owner: OwnerRef,
    id: string,
    version: string | undefined,
    page: number | undefined,
  ): Promise<FhirRead | null> {
    const ref: RepoRef = { owner, kind: KIND[type], id, version };
    let view = await this.repositories.get(ctx, ref);
    if (version === undefined) {
      // spec operations §2.8: version-less reads answer the latest released version.
      const latest = await this.repos.repos.latestReleased(view.repo.id);
      if (!latest) return null;
      view = { ...view, version: latest };
    }
    return this.withContent(ctx, type, view, renderContext(ctx, namespace), checkPage(page));
  }

  /** A resource's definition only. */
  private async render(
    ctx: ServiceContext,
    type: FhirResourceType,
    view: RepoView,
    r: RenderContext,
  ): Promise<StoredResource> {
    switch (type) {
      case 'CodeSystem':
        return codeSystemOf(view, r, await this.conceptCount(ctx, view));
      case 'ValueSet':
        return valueSetOf(view, r);
      case 'ConceptMap':
        return conceptMapOf(view, r);
    }
  }

  /** A resource with a page of its content (`all`: the whole of it). */
  private async withContent(
    ctx: ServiceContext,
    type: FhirResourceType,
    view: RepoView,
    r: RenderContext,
    page: number | 'all',
  ): Promise<FhirRead> {
    const params = defaultListParams(
      page === 'all'
        ? { limit: 0 }
        : { limit: CONTENT_PAGE_SIZE, offset: (page - 1) * CONTENT_PAGE_SIZE },
    );
    const ref: RepoRef = { ...refOf(view), version: view.version.mnemonic };
    const more = (total: number, returned: number) => params.offset + returned < total;
    switch (type) {
      case 'CodeSystem': {
        // Retired concepts too, with `inactive` true; in code order, so that pages are stable.
        const found = await this.concepts.list(ctx, ref, {
          ...params,
          sortField: 'id',
          filters: { includeRetired: ['true'] },
        });
        const concepts = found.items.map((item) => item.version);
        const children =
          page === 'all'
            ? childrenAmong(concepts)
            : await this.repos.fhir.childCodes(
                view.repo.id,
                view.version.seq,
                concepts.map((c) => c.mnemonic),
              );
        const resource = codeSystemOf(view, r, await this.conceptCount(ctx, view), {
          concepts,
          children,
        });
        return { resource, more: more(found.total, found.items.length) };
      }
      case 'ValueSet': {
        // All of it (the operations): the members' codes only, in one lean read.
        const listed =
          page === 'all' ? null : await this.collections.listConcepts(ctx, ref, params);
        const found = listed
          ? listed.items.map((item) => ({
              source: item.source,
              code: item.version.mnemonic,
              display: item.version.displayName,
            }))
          : await this.collections.memberCodes(ctx, ref);
        const versions = await this.memberVersions(view);
        const members: ValueSetMember[] = found.map((item) => ({
          system: systemOf(item.source, ctx.baseUrl),
          version: versions.get(
            memberKey(
              item.source.owner.type === 'Organization' ? 'org' : 'user',
              item.source.owner.id,
              item.source.repo.kind,
              item.source.repo.mnemonic,
            ),
          ),
          code: item.code,
          display: item.display ?? undefined,
        }));
        const resource = valueSetOf(view, r, members);
        return { resource, more: listed !== null && more(listed.total, found.length) };
      }
      case 'ConceptMap': {
        const found = await this.mappings.list(ctx, ref, params);
        const entries = await Promise.all(found.items.map((item) => this.entryOf(ctx, view, item)));
        const resource = conceptMapOf(view, r, entries);
        return { resource, more: more(found.total, found.items.length) };
      }
    }
  }

  /** `count`: the active concepts of the version, as its REST detail counts them. */
  private async conceptCount(ctx: ServiceContext, view: RepoView): Promise<number> {
    return (await ctx.loaders.contentCounts.load(view.version.id)).activeConcepts;
  }

  /**
   * The source version each member source of a collection version was evaluated at (its default
   * expansion's resolved repository versions), keyed by `memberKey`; none at HEAD.
   */
  private async memberVersions(view: RepoView): Promise<Map<string, string>> {
    const versions = new Map<string, string>();
    if (!view.version.expansionId) return versions;
    const expansion = await this.repos.collections.findExpansionById(view.version.expansionId);
    for (const resolved of expansion?.resolved ?? []) {
      if (!resolved.url) continue;
      try {
        const ref = parseRepoUrl(resolved.url);
        if (ref.version && ref.version !== HEAD && ref.owner.type !== 'self') {
          const owner = ref.owner.type === 'org' ? ref.owner.id : ref.owner.username;
          versions.set(memberKey(ref.owner.type, owner, ref.kind, ref.id), ref.version);
        }
      } catch {
        // not a repository URL: no version to name
      }
    }
    return versions;
  }

  /** One mapping as a ConceptMap entry: its ends as systems (canonical URLs where known). */
  private async entryOf(
    ctx: ServiceContext,
    view: RepoView,
    item: MappingItem,
  ): Promise<ConceptMapEntry> {
    const { version } = item.view;
    const end = async (side: 'from' | 'to') => {
      const source = item.ends[side].source;
      const repo = source ? await ctx.loaders.repositoryById.load(source.repo.id) : null;
      const url = version[`${side}SourceUrl`];
      // The source itself as the version read froze it; another one as it is now.
      const system =
        repo?.id === view.repo.id
          ? systemOf(view, ctx.baseUrl)
          : repo
            ? (repo.canonicalUrl ??
              `${ctx.baseUrl}${repoUrl(source!.owner, 'source', repo.mnemonic)}`)
            : url && /^[a-z][a-z0-9+.-]*:/i.test(url)
              ? url
              : url
                ? `${ctx.baseUrl}${url}`
                : systemOf(view, ctx.baseUrl);
      return {
        system,
        version: version[`${side}SourceVersion`] ?? undefined,
        code: version[`${side}ConceptCode`] ?? '',
        display: version[`${side}ConceptName`] ?? item.ends[side].conceptName ?? undefined,
      };
    };
    const [from, to] = await Promise.all([end('from'), end('to')]);
    return {
      source: from.system,
      sourceVersion: from.version,
      target: to.system,
      targetVersion: to.version,
      fromCode: from.code,
      fromDisplay: from.display,
      toCode: to.code,
      toDisplay: to.display,
      mapType: version.mapType ?? '',
    };
  }

  /**
   * `url`: a canonical URL, or the repository's own URL (absolute on this server, or relative),
   * which names it whatever its canonical URL.
   */
  private urlFilter(
    ctx: ServiceContext,
    kind: RepositoryKind,
    url: string,
  ): NonNullable<FhirRepoSearch['url']> {
    const path = url.startsWith(`${ctx.baseUrl}/`)
      ? url.slice(ctx.baseUrl.length)
      : url.startsWith('/')
        ? url
        : null;
    const repos: RepoName[] = [];
    if (path !== null) {
      try {
        const ref = parseRepoUrl(path, kind);
        if (ref.owner.type !== 'self' && ref.version === undefined) {
          repos.push({
            ownerType: ref.owner.type,
            owner: ref.owner.type === 'org' ? ref.owner.id : ref.owner.username,
            mnemonic: ref.id,
          });
        }
      } catch {
        // not a repository URL: a canonical URL only
      }
    }
    return { canonical: [url], repos };
  }
}

/**
 * What a stored code system's rendering depends on. A version's content is frozen with its change
 * number, so the version row (its id and last edit) names it, with the names in its URLs; HEAD,
 * and a version without a metadata snapshot, also show the repository's live row and content (its
 * last edit and change number). An edit of any of these makes another key: a rendering is never
 * read after what it shows has changed.
 */
function renderedKey(ctx: ServiceContext, view: RepoView): string {
  const { repo, version, owner } = view;
  const live = version.mnemonic === HEAD || !version.metadata;
  return JSON.stringify([
    ctx.baseUrl,
    owner.type,
    owner.id,
    repo.id,
    repo.mnemonic,
    version.id,
    version.mnemonic,
    version.updatedAt.getTime(),
    live ? [repo.updatedAt.getTime(), repo.headSeq] : null,
  ]);
}

function viewOf(row: {
  repo: RepoView['repo'];
  version: RepoView['version'];
  ownerType: Owner['type'];
  ownerId: string;
}): RepoView {
  return { repo: row.repo, version: row.version, owner: { type: row.ownerType, id: row.ownerId } };
}

function nameOf(view: RepoView): RepoName {
  return {
    ownerType: view.owner.type === 'Organization' ? 'org' : 'user',
    owner: view.owner.id,
    mnemonic: view.repo.mnemonic,
  };
}

function memberKey(ownerType: string, owner: string, kind: string, id: string): string {
  return JSON.stringify([ownerType, owner, kind, id]);
}

function renderContext(ctx: ServiceContext, namespace: FhirNamespace): RenderContext {
  return {
    baseUrl: ctx.baseUrl,
    idOf:
      namespace.kind === 'global'
        ? (view) => globalIdOf(view.owner, view.repo.mnemonic)
        : (view) => view.repo.mnemonic,
  };
}

function versionChoice(version: string | undefined): VersionChoice {
  if (version === undefined) return { kind: 'latest' };
  if (version === '*') return { kind: 'released' };
  return { kind: 'named', version: checkText('version', version)! };
}

function checkCount(count: number | undefined): number {
  if (count === undefined) return DEFAULT_ENTRIES;
  if (!Number.isInteger(count) || count < 1 || count > MAX_ENTRIES) {
    throw AppError.field('_count', `Must be a whole number from 1 to ${MAX_ENTRIES}.`);
  }
  return count;
}

function checkPage(page: number | undefined): number {
  if (page === undefined) return 1;
  if (!Number.isInteger(page) || page < 1 || page > 1_000_000) {
    throw AppError.field('page', 'Must be a whole number of at least 1.');
  }
  return page;
}

function checkText(field: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.length > 500) throw AppError.field(field, 'At most 500 characters.');
  return value;
}

function checkStatus(status: string | undefined): FhirRepoSearch['status'] {
  if (status === undefined) return undefined;
  if (status === 'active' || status === 'draft' || status === 'retired') return status;
  throw AppError.field('status', 'Must be active, draft or retired.');
}

// ---------------------------------------------------------------------------------------------
// FHIR create (spec operations §4.7)

/** What a create names, checked: where the repository goes, its fields, and its version. */
interface CreateInput {
  owner: OwnerRef;
  id: string;
  version: string;
  status: 'draft' | 'active' | 'retired';
  language: string;
  fields: Record<string, unknown>;
  resource: Record<string, unknown>;
}

/** `/orgs/:org/X/:id/[version/:version/]` */
const RESOURCE_URI =
  /^\/(orgs|users)\/([^/]+)\/(CodeSystem|ValueSet|ConceptMap)\/([^/]+)\/(?:version\/([^/]+)\/?)?$/;
const STATUSES = ['draft', 'active', 'retired'];
function parseCreate(type: FhirResourceType, namespace: FhirNamespace, body: unknown): CreateInput {
  if (!isObject(body) || body.resourceType !== type) {
    throw AppError.field('resourceType', `The body must be a ${type} resource.`);
  }
  // Rule 1: the canonical URL is mandatory.
  const url = optionalText(body, 'url');
  if (url === undefined) throw AppError.field('url', 'url is required.');
  const accession = accessionOf(body.identifier, type);
  let owner: OwnerRef;
  let id: string;
  if (namespace.kind === 'global') {
    // Rule 4: the global namespace takes the owner and id from the accession identifier only.
    if (!accession) {
      throw AppError.field(
        'identifier',
        `An accession identifier (value /orgs/:org/${type}/:id/) is required here.`,
      );
    }
    owner = accession.owner;
    id = accession.id;
  } else {
    owner = namespace.owner;
    if (accession && !sameOwner(accession.owner, owner)) {
      throw AppError.field('identifier', 'The accession identifier names another owner.');
    }
    const given = accession?.id ?? optionalText(body, 'id');
    if (given === undefined) {
      throw AppError.field('id', 'Give the id, or an accession identifier.');
    }
    id = given;
  }
  // Rule 2: the accession identifier's version wins, then `version`, else 0.1.
  const version = accession?.version ?? optionalText(body, 'version') ?? '0.1';
  // Rule 3: empty language is en, empty status draft.
  const language = optionalText(body, 'language') ?? 'en';
  const status = optionalText(body, 'status') ?? 'draft';
  if (!STATUSES.includes(status)) {
    throw AppError.field('status', `Must be one of ${STATUSES.join(', ')}.`);
  }
  const extras: Record<string, unknown> = {};
  for (const field of STORED_EXTRA_FIELDS)
    if (body[field] !== undefined) extras[field] = body[field];
  const name = optionalText(body, 'name');
  const title = optionalText(body, 'title');
  return {
    owner,
    id,
    version,
    status: status as CreateInput['status'],
    language,
    resource: body,
    fields: {
      id,
      name: name ?? title ?? id,
      fullName: title ?? null,
      description: optionalText(body, 'description') ?? null,
      canonicalUrl: url,
      defaultLocale: language,
      ...(Object.keys(extras).length > 0 ? { extras } : {}),
    },
  };
}

function optionalText(record: Record<string, unknown>, field: string): string | undefined {
  const value = record[field];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw AppError.field(field, 'Must be a string.');
  return value.trim() === '' ? undefined : value.trim();
}

/** The accession identifier among a resource's identifiers (one, or a list), parsed. */
function accessionOf(
  identifier: unknown,
  type: FhirResourceType,
): { owner: OwnerRef; id: string; version?: string } | undefined {
  const candidates = Array.isArray(identifier) ? (identifier as unknown[]) : [identifier];
  const found = candidates.filter(isObject).find((i) => {
    const coding = isObject(i.type) && Array.isArray(i.type.coding) ? i.type.coding : [];
    return (
      coding.some((c) => isObject(c) && c.code === 'ACSN') ||
      (typeof i.value === 'string' && RESOURCE_URI.test(i.value))
    );
  });
  if (!found) return undefined;
  const value = typeof found.value === 'string' ? found.value.trim() : '';
  const match = RESOURCE_URI.exec(value.endsWith('/') ? value : `${value}/`);
  if (!match || match[3] !== type) {
    throw AppError.field(
      'identifier',
      `The accession identifier's value must read /orgs/:org/${type}/:id/[version/:version/].`,
    );
  }
  const decode = (text: string) => {
    try {
      return decodeURIComponent(text);
    } catch {
      throw AppError.field('identifier', 'The accession identifier holds a malformed escape.');
    }
  };
  const owner = decode(match[2]);
  return {
    owner: match[1] === 'orgs' ? { type: 'org', id: owner } : { type: 'user', username: owner },
    id: decode(match[4]),
    version: match[5] === undefined ? undefined : decode(match[5]),
  };
}

function sameOwner(a: OwnerRef, b: OwnerRef): boolean {
  if (a.type === 'org' && b.type === 'org') return a.id === b.id;
  if (a.type === 'user' && b.type === 'user') return a.username === b.username;
  return false;
}

function ownerOfRef(ref: RepoRef): Pick<Owner, 'type' | 'id'> {
  const { owner } = ref;
  if (owner.type === 'org') return { type: 'Organization', id: owner.id };
  if (owner.type === 'user') return { type: 'User', id: owner.username };
  throw new Error('a FHIR create names its owner');
}

/** A concept of a CodeSystem create, as the concept service takes it, and its parents' codes. */
interface ConceptInput {
  code: string;
  body: Record<string, unknown>;
  parents: string[];
}

/** The concepts of a CodeSystem (nested ones too, with their nesting as parents). */
function conceptInputs(resource: Record<string, unknown>, language: string): ConceptInput[] {
  const found: ConceptInput[] = [];
  const seen = new Set<string>();
  const visit = (concepts: unknown, parent: string | undefined, path: string) => {
    if (concepts === undefined) return;
    if (!Array.isArray(concepts)) throw AppError.field(path, 'Must be a list of concepts.');
    concepts.forEach((raw: unknown, i) => {
      const at = `${path}[${i}]`;
      if (!isObject(raw) || typeof raw.code !== 'string' || raw.code.trim() === '') {
        throw AppError.field(at, 'A concept needs a code.');
      }
      const concept = raw as unknown as CodeSystemConcept;
      if (seen.has(concept.code))
        throw AppError.field(at, `The code '${concept.code}' is given twice.`);
      seen.add(concept.code);
      const properties = Array.isArray(concept.property) ? concept.property.filter(isObject) : [];
      const value = (code: string) => {
        const p = properties.find((x) => x.code === code);
        return p === undefined ? undefined : (p.valueString ?? p.valueCode ?? p.valueBoolean);
      };
      const status = value('status');
      const parents = [
        ...(parent !== undefined ? [parent] : []),
        ...properties
          .filter((p) => p.code === 'parent')
          .map((p) => p.valueCode ?? p.valueString ?? p.valueCoding?.code)
          .filter((v): v is string => typeof v === 'string'),
      ];
      const designations = Array.isArray(concept.designation)
        ? concept.designation.filter(isObject)
        : [];
      const names = [
        ...(typeof concept.display === 'string' && concept.display.trim() !== ''
          ? [{ name: concept.display, locale: language, locale_preferred: true }]
          : []),
        ...designations
          .filter((d) => typeof d.value === 'string' && d.value.trim() !== '')
          .filter((d) => !(d.value === concept.display && (d.language ?? language) === language))
          .map((d) => ({
            name: d.value,
            locale: d.language ?? language,
            locale_preferred: false,
            name_type: d.use?.code ?? null,
          })),
      ];
      found.push({
        code: concept.code,
        parents: [...new Set(parents)],
        body: {
          id: concept.code,
          conceptClass: typeof value('conceptclass') === 'string' ? value('conceptclass') : 'Misc',
          datatype: typeof value('datatype') === 'string' ? value('datatype') : 'N/A',
          names:
            names.length > 0
              ? names
              : [{ name: concept.code, locale: language, locale_preferred: true }],
          descriptions:
            typeof concept.definition === 'string' && concept.definition.trim() !== ''
              ? [{ description: concept.definition, locale: language, locale_preferred: true }]
              : [],
          retired: value('inactive') === true || status === 'retired' || status === 'inactive',
        },
      });
      visit(concept.concept, concept.code, `${at}.concept`);
    });
  };
  visit(resource.concept, undefined, 'concept');
  return found;
}

/** Rule 5: a ValueSet's includes (each naming its system) and excludes, as references. */
function referenceInputs(resource: Record<string, unknown>): Array<Record<string, unknown>> {
  const compose = resource.compose;
  if (compose === undefined) return [];
  if (!isObject(compose)) throw AppError.field('compose', 'Must be an object.');
  const components = (field: 'include' | 'exclude') => {
    const list = compose[field];
    if (list === undefined) return [];
    if (!Array.isArray(list)) throw AppError.field(`compose.${field}`, 'Must be a list.');
    return list.map((item: unknown, i) => {
      const at = `compose.${field}[${i}]`;
      if (!isObject(item)) throw AppError.field(at, 'Must be an object.');
      if (typeof item.system !== 'string' || item.system.trim() === '') {
        throw AppError.field(`${at}.system`, 'system is required.');
      }
      if (item.valueSet !== undefined) {
        throw AppError.field(`${at}.valueSet`, 'Including other value sets is not supported here.');
      }
      return {
        system: item.system,
        ...(typeof item.version === 'string' ? { version: item.version } : {}),
        ...(item.concept !== undefined ? { concept: item.concept } : {}),
        ...(item.filter !== undefined ? { filter: item.filter } : {}),
        ...(field === 'exclude' ? { exclude: true } : {}),
      };
    });
  };
  return [...components('include'), ...components('exclude')];
}

/** A concept's step of a create; its errors name the concept. */
async function conceptStep(code: string, step: () => Promise<unknown>): Promise<void> {
  try {
    await step();
  } catch (error) {
    if (isAppError(error) && error.code === 'INVALID') {
      throw AppError.invalid(`Concept '${code}': ${error.message}`, error.fieldErrors);
    }
    throw error;
  }
}
