import { setImmediate } from 'node:timers/promises';
import { LRUCache } from 'lru-cache';
import {
  HEAD,
  type ConceptEntity,
  type ConceptVersionEntity,
  type MappingEntity,
  type MappingVersionEntity,
  type RepositoryKind,
} from '../../db/entities';
import { AppError } from '../../errors';
import type {
  FhirRepoSearch,
  RepoName,
  Repositories,
  ResolvedSystem,
  VersionChoice,
} from '../../repositories';
import type { TaskView } from '../../jobs';
import { requireUser, viewerOf } from '../shared/access';
import { announceChange } from '../shared/changes';
import type { CollectionService } from '../collections/collection.service';
import type { CollectionExpansions, ReadableMembers } from '../collections/expansions';
import type { CollectionReferences } from '../collections/references';
import { batchesOfSize, counter } from '../transfer/bulk-import.service';
import {
  conceptContentOf,
  type ConceptContent,
  type ConceptService,
} from '../content/concept.service';
import {
  byCode,
  conceptContentFrom,
  fhirConceptsOf,
  fhirMappingsOf,
  listsEveryConcept,
  mappingKey,
  referenceInputs,
  type FhirConcept,
} from './fhir-content';
import type { ServiceContext } from '../shared/context';
import { defaultListParams, type Page } from '../shared/list';
import {
  mappingContentOf,
  mappingVersionRow,
  type MappingContent,
  type MappingService,
} from '../content/mapping.service';
import type { MappingItem } from '../content/mapping-views';
import { mayViewRepo, type Owner, type RepoView } from '../shared/paths';
import { ContentCache } from './content-cache';
import type { TaskService } from '../community/task.service';
import { refOf, type RepositoryService } from '../content/repository.service';
import {
  withConceptReader,
  withStoredMembers,
  withStoredSource,
  type StoredMembers,
  type StoredTerminology,
  type MemberRead,
} from './library';
import {
  isObject,
  type CodeSystemConcept,
  type CodeSystemResource,
  type ConceptSetComponent,
  type ValueSetResource,
} from './fhir';
import {
  childrenAmong,
  codeSystemOf,
  conceptMapOf,
  conceptOf,
  resourceUriOf,
  StoredContent,
  STORED_EXTRA_FIELDS,
  systemOf,
  valueSetOf,
  type ConceptMapEntry,
  type FhirResourceType,
  type RenderContext,
  type StoredConceptMap,
  type StoredResource,
  type ValueSetMember,
} from './stored';
import { parseRepoUrl, repoUrl, type OwnerRef, type RepoRef } from '../shared/urls';

export type { FhirResourceType, StoredResource } from './stored';

/** Concepts (CodeSystem, ValueSet) or mappings (ConceptMap) per page (spec operations §4.7). */
export const CONTENT_PAGE_SIZE = 100;
/** Entries of a search page: `_count` by default, and the most it may ask. */
export const DEFAULT_ENTRIES = 100;
export const MAX_ENTRIES = 1000;

/**
 * Content items (concepts, mappings, value set references) above which a FHIR write runs as a
 * background task (202 and the task) rather than in its request (issue 23: bounded work per
 * request; tasks run at most `JOBS_WORKERS` at a time, so large writes cannot take every
 * connection).
 */
export const FHIR_TASK_THRESHOLD = 1000;

export const FHIR_WRITE_TASK = 'fhir-write';

/** Concepts or mappings drafted between two turns of the event loop (other requests go on). */
const YIELD_EVERY = 50;

/** A queued FHIR write: the request as it came, run again as its caller. */
export type FhirWriteJob =
  | { op: 'create'; type: FhirResourceType; namespace: FhirNamespace; body: unknown }
  | { op: 'update'; type: FhirResourceType; target: FhirTarget; body: unknown };

/** What a queued FHIR write's task records: where the resource is read. */
export interface FhirWriteResult {
  resourceType: FhirResourceType;
  id: string;
  location: string;
}

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

/** A FHIR write too large for its request, queued: the task that runs it. */
export interface FhirQueued {
  task: TaskView;
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
 * (`visibleRepository`): nothing private reaches a caller who may not see it. Writes (create,
 * update, delete) go through the REST services' steps, each request in one transaction.
 */
export class FhirResourceService {
  constructor(
    private readonly repos: Repositories,
    private readonly repositories: RepositoryService,
    private readonly concepts: ConceptService,
    private readonly mappings: MappingService,
    private readonly collections: CollectionService,
    private readonly references: CollectionReferences,
    private readonly expansions: CollectionExpansions,
    private readonly tasks: TaskService,
    /** Concepts, members and mappings the operations keep (`ContentCache`; 0: none). */
    cacheConcepts: number,
  ) {
    this.kept = new ContentCache(cacheConcepts);
  }

  /**
   * Stored code system, value set and concept map versions as the operations read them,
   * rendered once (`renderedKey`, `membersKey`, `mapKey`); concepts of versions read by code, and
   * pages of collection versions' pinned members (which cannot change).
   */
  private readonly kept: ContentCache;
  /**
   * Counts of members (`memberCount`) that cannot change: of a collection version's expansion,
   * from a member repository whose members are all pinned, read at a source version. Numbers
   * only, kept after the caller's access was checked.
   */
  private readonly memberCounts = new LRUCache<string, number>({ max: 10_000 });

  /**
   * How many members of an expansion from one member repository a source version has concepts
   * for (see `FhirRepository.memberConceptCount`), kept (`memberCounts`) when it cannot change.
   * A count of thousands of members reads each member's version, tens of milliseconds or more.
   */
  private async memberCount(
    frozen: boolean,
    { expansionId, evaluated }: { expansionId: string; evaluated: string },
    memberRepositoryId: string,
    source: { repositoryId: string; seq: string | null },
    read: MemberRead,
  ): Promise<number> {
    const key =
      frozen && source.seq !== null
        ? `${evaluated}|${memberRepositoryId}|${source.repositoryId}|${source.seq}|${read.activeOnly === true}`
        : null;
    const kept = key === null ? undefined : this.memberCounts.get(key);
    if (kept !== undefined) return kept;
    const { count, allPinned } = await this.repos.fhir.memberConceptCount(
      expansionId,
      memberRepositoryId,
      source,
      read,
    );
    if (key !== null && allPinned) {
      this.memberCounts.set(key, count);
      this.pinnedMembers.set(pinnedKey(evaluated, memberRepositoryId), true);
    }
    return count;
  }

  /**
   * Member repositories of frozen expansions (`evaluationKey|repositoryId`) whose members are all
   * pinned to a concept version, as `memberCount` found: a page of them read at a source version
   * cannot change (an unpinned member follows its concept's current version).
   */
  private readonly pinnedMembers = new LRUCache<string, true>({ max: 10_000 });

  /**
   * Concepts that cannot change, kept under the key naming everything they depend on (`key`'s
   * parts, in order); each caller gets a list of its own (the concepts are shared, frozen).
   */
  private async keptConcepts(
    key: unknown[],
    read: () => Promise<CodeSystemConcept[]>,
  ): Promise<CodeSystemConcept[]> {
    return [...(await this.kept.get(JSON.stringify(key), read))];
  }

  /**
   * The repositories a source version's mappings end in, by `renderedKey`: the same while the
   * version's content is, so a concept map's key costs no scan of its mappings.
   */
  private readonly mapEnds = new LRUCache<string, string[]>({ max: 1_000 });

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
      codeSystemDefinitions: (url) => this.codeSystemDefinitions(ctx, url),
      valueSetDefinitions: (url) => this.valueSetDefinitions(ctx, url),
    });
  }

  /**
   * The code system versions known by `url` that the operations read (as `storedVersions`), as
   * definitions: their concepts are read by code, when an operation asks for them
   * (`withConceptReader`), one concept's rows at a time; nothing is rendered whole or kept.
   */
  async codeSystemDefinitions(ctx: ServiceContext, url: string): Promise<CodeSystemResource[]> {
    const filter: FhirRepoSearch = {
      kind: 'source',
      versions: { kind: 'stored' },
      url: this.urlFilter(ctx, 'source', url),
    };
    const slice = await this.repos.fhir.search(filter, viewerOf(ctx.actor), {
      limit: 0,
      offset: 0,
    });
    const r = renderContext(ctx, { kind: 'global' });
    return Promise.all(
      slice.rows.map(async (row) => {
        const view = viewOf(row);
        // `count` is left out: no operation on a few codes reads it, and it costs a statement.
        const definition = withStoredSource(codeSystemOf(view, r, undefined), {
          repositoryId: view.repo.id,
          seq: view.version.seq,
        });
        return withConceptReader(definition, async (codes, options) => {
          const read = async () => {
            const { concepts, children } = await this.repos.fhir.conceptsByCode(
              view.repo.id,
              view.version.seq,
              codes,
              options,
            );
            return concepts.map((concept) => conceptOf(concept, children));
          };
          // One code of a version (HEAD changes; a version's content never does): its concept,
          // as read, is kept for the next caller who may see the version.
          if (view.version.seq === null || codes.length !== 1 || options.ancestors) return read();
          return this.keptConcepts(
            [
              'concept',
              view.repo.id,
              view.version.seq,
              options.caseless,
              options.children,
              codes[0],
            ],
            read,
          );
        });
      }),
    );
  }

  /**
   * The value set versions known by `url` that the operations read (as `storedVersions`), as
   * definitions without compose: their members are read a page at a time (`withStoredMembers`),
   * the members the caller may see, as `valueSetWithMembers` reads them; nothing is kept.
   */
  async valueSetDefinitions(ctx: ServiceContext, url: string): Promise<ValueSetResource[]> {
    const filter: FhirRepoSearch = {
      kind: 'collection',
      versions: { kind: 'stored' },
      url: this.urlFilter(ctx, 'collection', url),
    };
    const slice = await this.repos.fhir.search(filter, viewerOf(ctx.actor), {
      limit: 0,
      offset: 0,
    });
    const r = renderContext(ctx, { kind: 'global' });
    return slice.rows.map((row) => {
      const view = viewOf(row);
      return withStoredMembers(valueSetOf(view, r), this.storedMembers(ctx, view));
    });
  }

  /** The members of a collection version the caller may see, read a page at a time. */
  private storedMembers(ctx: ServiceContext, view: RepoView): StoredMembers {
    let readable: Promise<ReadableMembers> | undefined;
    const members = () => (readable ??= this.expansions.readableExpansion(ctx, view));
    /** Each member repository's include, by its id; none unless every one has a view. */
    const includes = async (): Promise<Map<string, ConceptSetComponent>> => {
      const { expansion, repositoryIds } = await members();
      if (!expansion || repositoryIds.length === 0) return new Map();
      const views = await this.repositories.headViews(ctx, repositoryIds);
      // The version's default expansion, read once with its members.
      const versions = versionsNamedIn(expansion.resolved);
      // A member repository without a view has no members shown: not a page read here.
      if (views.size !== repositoryIds.length) return new Map();
      // As `membersOf` names each member's system and version.
      return new Map(
        [...views.entries()].map(([id, source]) => {
          const version = versions.get(
            memberKey(
              source.owner.type === 'Organization' ? 'org' : 'user',
              source.owner.id,
              source.repo.kind,
              source.repo.mnemonic,
            ),
          );
          return [
            id,
            {
              system: systemOf(source, ctx.baseUrl),
              ...(version !== undefined ? { version } : {}),
            },
          ];
        }),
      );
    };
    return {
      sources: async () => {
        const [{ expansion, repositoryIds }, byId] = await Promise.all([members(), includes()]);
        if (!expansion || byId.size === 0) return [];
        const expansionId = expansion.id;
        // A collection version's expansion changes only when re-evaluated (HEAD's also as its
        // references change): what is kept of it is kept under its last evaluation.
        const frozen = view.version.seq !== null;
        const evaluated = evaluationKey(expansion);
        const order = await this.repos.fhir.memberRepositoryOrder(expansionId, repositoryIds);
        return order.map((id) => ({
          include: byId.get(id)!,
          count: (source, read) =>
            this.memberCount(frozen, { expansionId, evaluated }, id, source, read),
          page: async (source, read, offset, limit) => {
            const readPage = async () => {
              const { concepts, children } = await this.repos.fhir.memberConcepts(
                expansionId,
                id,
                source,
                { offset, limit },
                read,
              );
              // A page's concepts as the code system shows them (their children only when read).
              return concepts.map((concept) => conceptOf(concept, children));
            };
            // Pinned members of a frozen expansion, read at a source version: the page cannot
            // change, and is kept (the caller's access to the member repository was checked).
            const unchanging =
              frozen && source.seq !== null && this.pinnedMembers.has(pinnedKey(evaluated, id));
            if (!unchanging) return readPage();
            return this.keptConcepts(
              [
                'members',
                evaluated,
                id,
                source.repositoryId,
                source.seq,
                read.activeOnly === true,
                read.children === true,
                read.texts === true,
                offset,
                limit ?? null,
              ],
              readPage,
            );
          },
          texts: async (source, read, needles) => {
            const texts = await this.repos.fhir.memberConceptTexts(
              expansionId,
              id,
              source,
              read,
              needles,
            );
            return texts.map(({ display, ...rest }) => ({
              ...rest,
              ...(display !== null ? { display } : {}),
            }));
          },
          byIds: async (source, read, ids) => {
            const { concepts, children } = await this.repos.fhir.conceptVersionsById(
              source,
              ids,
              read,
            );
            return concepts.map((concept) => conceptOf(concept, children));
          },
        }));
      },
      includesAmong: async (codes) => {
        const [{ expansion, repositoryIds }, byId] = await Promise.all([members(), includes()]);
        if (!expansion || byId.size === 0) return [];
        const found = await this.repos.fhir.memberCodesAmong(expansion.id, repositoryIds, codes);
        return [...byId.entries()].flatMap(([id, include]) => {
          const listed = found.get(id);
          if (!listed) return [];
          const listing = listed.other !== undefined ? [listed.other] : listed.among;
          return [{ ...include, concept: listing.map((code) => ({ code })) }];
        });
      },
    };
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
        // A code system's content is the same for every caller who may see it (who may is
        // decided above, afresh for each request); a value set's depends on the member
        // repositories the caller may see, so they are part of its key; a map is not kept.
        switch (type) {
          case 'CodeSystem':
            return this.kept.get(
              renderedKey(ctx, view),
              async () =>
                (await this.withContent(ctx, type, view, r, 'all')).resource as CodeSystemResource,
            );
          case 'ValueSet': {
            const members = await this.expansions.readableExpansion(ctx, view);
            return this.kept.get(membersKey(ctx, view, members), () =>
              this.valueSetWithMembers(ctx, view, r, members),
            );
          }
          case 'ConceptMap':
            return this.kept.get(
              await this.mapKey(ctx, view),
              async () =>
                (await this.withContent(ctx, type, view, r, 'all')).resource as StoredConceptMap,
            );
        }
      }),
    );
  }

  /**
   * `POST /fhir/X/` and `POST {owner}/X/` (spec operations §4.7 create rules 1–5): a source with
   * its concepts (CodeSystem), a collection with its references (ValueSet), or a source with its
   * mappings (ConceptMap), and the version the resource names, in one transaction: a create that
   * fails makes nothing. Access, fields and ids follow the REST creates (the same service steps).
   * Content above `FHIR_TASK_THRESHOLD` items is queued once access, fields and the id have
   * been checked.
   */
  async create(
    ctx: ServiceContext,
    type: FhirResourceType,
    namespace: FhirNamespace,
    body: unknown,
  ): Promise<FhirCreated | FhirQueued> {
    requireUser(ctx);
    const input = parseCreate(type, namespace, body);
    if (contentSize(type, input.resource) > FHIR_TASK_THRESHOLD) {
      await this.repositories.prepareCreate(ctx, input.owner, KIND[type], input.fields);
      const job: FhirWriteJob = { op: 'create', type, namespace, body };
      const task = await this.tasks.enqueue(ctx, FHIR_WRITE_TASK, job, {
        summary: `Create ${type} ${input.id}`,
      });
      return { task };
    }
    return this.createNow(ctx, type, namespace, input);
  }

  private async createNow(
    ctx: ServiceContext,
    type: FhirResourceType,
    namespace: FhirNamespace,
    input: CreateInput,
  ): Promise<FhirCreated> {
    const kind = KIND[type];
    const made = await this.repositories.prepareCreate(ctx, input.owner, kind, input.fields);
    const content = await this.prepareContent(ctx, type, made.owner, input);
    const version = await this.repositories.prepareVersion(
      ctx,
      { owner: made.owner, kind },
      versionInput(input),
    );
    const frozen = await this.repos.transaction(async (r) => {
      const head = await made.apply(r);
      await content.apply(r, head);
      return { ...head, version: await version.apply(r, head) };
    });
    await this.repositories.versionMade(ctx, frozen);
    const read = await this.readIn(ctx, type, namespace, input.owner, input.id, input.version, 1);
    const location = resourceUriOf(made.owner, type, input.id, input.version);
    return { resource: read!.resource, location };
  }

  /**
   * `PUT {owner}/X/:id` and `PUT /fhir/X/:id`: the repository made to match the resource, in one
   * transaction. Its definition is updated; with content (`concept`, `compose`, `group`) its
   * concepts are created, edited and (when `content` is complete) retired, its references
   * replaced, or its mappings created, edited and retired. Then the version the resource names:
   * a new one is made from HEAD; an existing draft is made again from HEAD; a released or retired
   * one is frozen (409). Without a version, only HEAD changes. Answers the resource as stored;
   * content above `FHIR_TASK_THRESHOLD` items is queued once access and fields have been checked.
   */
  async update(
    ctx: ServiceContext,
    type: FhirResourceType,
    target: FhirTarget,
    body: unknown,
  ): Promise<FhirRead | FhirQueued> {
    requireUser(ctx);
    const { owner, id } = targetOf(type, target);
    const input = parseUpdate(type, target, owner, id, body);
    if (contentSize(type, input.resource) > FHIR_TASK_THRESHOLD) {
      await this.repositories.prepareUpdate(ctx, { owner, kind: KIND[type], id }, input.fields);
      const job: FhirWriteJob = { op: 'update', type, target, body };
      const task = await this.tasks.enqueue(ctx, FHIR_WRITE_TASK, job, {
        summary: `Update ${type} ${id}`,
      });
      return { task };
    }
    return this.updateNow(ctx, type, target, input);
  }

  /** A queued write (the task's handler), as its caller. */
  async runWriteJob(ctx: ServiceContext, job: FhirWriteJob): Promise<FhirWriteResult> {
    if (job.op === 'create') {
      const input = parseCreate(job.type, job.namespace, job.body);
      const made = await this.createNow(ctx, job.type, job.namespace, input);
      return { resourceType: job.type, id: input.id, location: made.location };
    }
    const { owner, id } = targetOf(job.type, job.target);
    const input = parseUpdate(job.type, job.target, owner, id, job.body);
    await this.updateNow(ctx, job.type, job.target, input);
    const view = await this.repositories.get(ctx, { owner, kind: KIND[job.type], id });
    const version = input.version ?? HEAD;
    return {
      resourceType: job.type,
      id,
      location: resourceUriOf(view.owner, job.type, id, version),
    };
  }

  private async updateNow(
    ctx: ServiceContext,
    type: FhirResourceType,
    target: FhirTarget,
    input: ParsedResource,
  ): Promise<FhirRead> {
    const { owner, id, namespace } = targetOf(type, target);
    const kind = KIND[type];
    // The FHIR fields kept in extras are replaced; the repository's other extras stay.
    const before = await this.repositories.get(ctx, { owner, kind, id });
    const kept = Object.entries(before.repo.extras ?? {}).filter(
      ([name]) => !STORED_EXTRA_FIELDS.includes(name),
    );
    input.fields.extras = {
      ...Object.fromEntries(kept),
      ...(input.fields.extras ?? {}),
    };
    const prepared = await this.repositories.prepareUpdate(ctx, { owner, kind, id }, input.fields);
    const head = prepared.view;
    const content = await this.prepareContent(ctx, type, head.owner, input);
    let version: Awaited<ReturnType<RepositoryService['prepareVersion']>> | null = null;
    if (input.version !== undefined && input.version !== HEAD) {
      const existing = await this.repos.repos.findVersion(head.repo.id, input.version);
      if (existing && (existing.released || existing.retired)) {
        throw new AppError(
          'CONFLICT',
          `Version '${existing.mnemonic}' is ${existing.retired ? 'retired' : 'released'}: its content cannot change. Name a new version.`,
        );
      }
      version = await this.repositories.prepareVersion(ctx, head, versionInput(input), {
        replacing: existing ?? undefined,
      });
    }
    const frozen = await this.repos.transaction(async (r) => {
      const repo = await prepared.apply(r);
      const current: RepoView = { ...head, repo };
      await content.apply(r, current);
      return version ? { ...current, version: await version.apply(r, current) } : null;
    });
    if (frozen) await this.repositories.versionMade(ctx, frozen);
    const read = await this.readIn(ctx, type, namespace, owner, id, input.version ?? HEAD, 1);
    return read!;
  }

  /**
   * `DELETE {owner}/X/:id` and `DELETE /fhir/X/:id`: the repository removed as its REST delete
   * removes it (a source with everything in it; a collection deactivated), with the same access.
   */
  async remove(ctx: ServiceContext, type: FhirResourceType, target: FhirTarget): Promise<void> {
    const { owner, id } = targetOf(type, target);
    await this.repositories.delete(ctx, { owner, kind: KIND[type], id });
  }

  /**
   * The content of a write checked and resolved as the caller, before the transaction; `apply`
   * writes it there, into the repository the transaction made or locked. Nothing to do when the
   * resource carries no content element.
   */
  private async prepareContent(
    ctx: ServiceContext,
    type: FhirResourceType,
    owner: Owner,
    input: ParsedResource,
  ): Promise<PreparedContent> {
    const resource = input.resource;
    const username = requireUser(ctx).username;
    switch (type) {
      case 'CodeSystem': {
        if (resource.concept === undefined) return NO_CONTENT;
        const concepts = fhirConceptsOf(resource, input.language);
        const complete = listsEveryConcept(resource);
        return {
          apply: (r, source) =>
            this.syncConcepts(r, source, concepts, input.language, complete, username),
        };
      }
      case 'ValueSet': {
        if (resource.compose === undefined) return NO_CONTENT;
        const replace = await this.references.prepareReplaceReferences(
          ctx,
          { owner },
          { data: referenceInputs(resource) },
        );
        return { apply: replace.apply };
      }
      case 'ConceptMap': {
        if (resource.group === undefined) return NO_CONTENT;
        const mappings = fhirMappingsOf(resource, ctx.baseUrl);
        const contents = await Promise.all(
          mappings.map((m) => this.mappings.contentOf(ctx, { owner }, m)),
        );
        return { apply: (r, source) => this.syncMappings(r, source, contents, username) };
      }
    }
  }

  /**
   * Makes a source's HEAD hold the concepts of a CodeSystem: new codes created, changed ones a
   * new version (unchanged ones untouched), and — when the body lists every concept — those it
   * leaves out retired. One change number for all of it, written set-based as a bulk import
   * writes its batches (issue 23: row by row, a 5,000-concept create held its connection and
   * the owner's row for tens of seconds).
   */
  private async syncConcepts(
    r: Repositories,
    source: RepoView,
    concepts: FhirConcept[],
    language: string,
    complete: boolean,
    username: string,
  ): Promise<void> {
    const current = byCode(await r.concepts.currentOfRepository(source.repo.id));
    const row = (
      found: ConceptVersionEntity,
      content: ConceptContent,
      comment: string | null,
    ): Partial<ConceptVersionEntity> | null => {
      const object = { id: found.conceptId, mnemonic: found.mnemonic } as ConceptEntity;
      const next = this.concepts.versionRow(source, object, content, '', username, comment);
      return next.checksumStandard === found.checksumStandard ? null : next;
    };
    const fresh: Array<{ code: string; content: ConceptContent }> = [];
    const changed: Array<[string, Partial<ConceptVersionEntity>]> = [];
    for (const [index, concept] of concepts.entries()) {
      if (index % YIELD_EVERY === 0) await setImmediate();
      const found = current.get(concept.code);
      if (!found) {
        fresh.push({ code: concept.code, content: conceptContentFrom(concept, language, null) });
        continue;
      }
      const next = row(found, conceptContentFrom(concept, language, conceptContentOf(found)), null);
      if (next) changed.push([found.conceptId, next]);
    }
    if (complete) {
      const listed = new Set(concepts.map((c) => c.code));
      for (const [code, found] of current) {
        if (listed.has(code) || found.retired) continue;
        const next = row(
          found,
          { ...conceptContentOf(found), retired: true },
          'Concept was retired',
        );
        if (next) changed.push([found.conceptId, next]);
      }
    }
    if (fresh.length === 0 && changed.length === 0) return;
    const seq = await r.repos.nextChange(source.repo.id);
    await announceChange(r, source, { username }, 'CONTENT_CHANGED');
    const settings = source.repo.settings;
    const nextExternal = await counter(
      settings.autoidConceptExternalId,
      settings.autoidConceptExternalIdStartFrom,
      fresh.some((f) => f.content.externalId === null),
      (from) => r.concepts.nextNumericId(source.repo.id, 'external_id', from),
    );
    const versions: Array<Partial<ConceptVersionEntity>> = changed.map(([, next]) =>
      Object.assign(next, { validFromSeq: seq }),
    );
    for (const batch of batchesOfSize(fresh)) {
      const ids = await r.concepts.insertConcepts(
        batch.map((f) => ({ repositoryId: source.repo.id, mnemonic: f.code, createdBy: username })),
      );
      for (const [index, { code, content }] of batch.entries()) {
        if (index % YIELD_EVERY === 0) await setImmediate();
        const object = { id: ids.get(code)!, mnemonic: code } as ConceptEntity;
        const withId =
          content.externalId === null && nextExternal
            ? { ...content, externalId: nextExternal() }
            : content;
        versions.push(this.concepts.versionRow(source, object, withId, seq, username, null));
      }
    }
    for (const batch of batchesOfSize(changed)) {
      await r.concepts.endCurrentOf(
        batch.map(([id]) => id),
        seq,
      );
    }
    for (const batch of batchesOfSize(versions)) await r.concepts.insertVersions(batch);
  }

  /**
   * Makes a source's HEAD hold the mappings of a ConceptMap: each found by map type and ends
   * (spec core §2.7) is kept (a new version when its names changed, reactivated when retired),
   * the others created; those the body leaves out are retired. Set-based, as `syncConcepts`.
   */
  private async syncMappings(
    r: Repositories,
    source: RepoView,
    contents: MappingContent[],
    username: string,
  ): Promise<void> {
    const keyOf = (c: MappingContent) =>
      mappingKey({
        mapType: c.mapType,
        fromSourceUrl: c.from.sourceUrl,
        fromConceptCode: c.from.code,
        toSourceUrl: c.to.sourceUrl,
        toConceptCode: c.to.code,
      });
    const listed = new Set<string>();
    for (const content of contents) {
      const key = keyOf(content);
      // spec core §2.7: one mapping per map type and ends, in the body as in the source.
      if (listed.has(key)) {
        throw AppError.invalid(
          `Two mappings of the ConceptMap map the same ends with map type '${content.mapType}'; map_type, from concept, to source and to concept code must be unique.`,
        );
      }
      listed.add(key);
    }
    const current = new Map<string, MappingVersionEntity>();
    for (const version of await r.mappings.currentOfRepository(source.repo.id)) {
      const key = keyOf(mappingContentOf(version));
      // Of two with the same key (one retired), the current one speaks for both.
      if (!current.has(key) || current.get(key)!.retired) current.set(key, version);
    }
    const row = (
      found: MappingVersionEntity,
      content: MappingContent,
      comment: string | null,
    ): Partial<MappingVersionEntity> | null => {
      const object = { id: found.mappingId, mnemonic: found.mnemonic } as MappingEntity;
      const next = mappingVersionRow(source, object, content, '', username, comment);
      return next.checksumStandard === found.checksumStandard ? null : next;
    };
    const changed: Array<[string, Partial<MappingVersionEntity>]> = [];
    for (const [key, found] of current) {
      if (listed.has(key) || found.retired) continue;
      const next = row(found, { ...mappingContentOf(found), retired: true }, 'Mapping was retired');
      if (next) changed.push([found.mappingId, next]);
    }
    const fresh: MappingContent[] = [];
    for (const [index, content] of contents.entries()) {
      if (index % YIELD_EVERY === 0) await setImmediate();
      const found = current.get(keyOf(content));
      if (!found) {
        fresh.push(content);
        continue;
      }
      const kept = mappingContentOf(found);
      const next = row(
        found,
        {
          ...kept,
          from: { ...content.from, name: content.from.name ?? kept.from.name },
          to: { ...content.to, name: content.to.name ?? kept.to.name },
          retired: false,
        },
        null,
      );
      if (next) changed.push([found.mappingId, next]);
    }
    if (fresh.length === 0 && changed.length === 0) return;
    const seq = await r.repos.nextChange(source.repo.id);
    await announceChange(r, source, { username }, 'CONTENT_CHANGED');
    const settings = source.repo.settings;
    // Without an id, the source's scheme assigns one; sequential numbers by default.
    const nextId = (await counter(
      settings.autoidMappingMnemonic ?? 'sequential',
      settings.autoidMappingMnemonicStartFrom,
      fresh.length > 0,
      (from) => r.mappings.nextNumericId(source.repo.id, from),
    ))!;
    const nextExternal = await counter(
      settings.autoidMappingExternalId,
      settings.autoidMappingExternalIdStartFrom,
      fresh.some((c) => c.externalId === null),
      (from) => r.mappings.nextNumericId(source.repo.id, from, 'external_id'),
    );
    const versions: Array<Partial<MappingVersionEntity>> = changed.map(([, next]) =>
      Object.assign(next, { validFromSeq: seq }),
    );
    for (const batch of batchesOfSize(fresh)) {
      const named = batch.map((content) => ({
        id: nextId(),
        content:
          content.externalId === null && nextExternal
            ? { ...content, externalId: nextExternal() }
            : content,
      }));
      const ids = await r.mappings.insertMappings(
        named.map((m) => ({ repositoryId: source.repo.id, mnemonic: m.id, createdBy: username })),
      );
      for (const [index, { id, content }] of named.entries()) {
        if (index % YIELD_EVERY === 0) await setImmediate();
        const object = { id: ids.get(id)!, mnemonic: id } as MappingEntity;
        versions.push(mappingVersionRow(source, object, content, seq, username, null));
      }
    }
    for (const batch of batchesOfSize(changed)) {
      await r.mappings.endCurrentOf(
        batch.map(([id]) => id),
        seq,
      );
    }
    for (const batch of batchesOfSize(versions)) await r.mappings.insertVersions(batch);
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
    // spec operations §2.8: version-less reads answer the latest released version.
    const view =
      version === undefined
        ? await this.repositories.latestReleased(ctx, ref)
        : await this.repositories.get(ctx, ref);
    if (!view) return null;
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
    // Past a list's count cap only the page knows whether more follow.
    const more = (page: Page<unknown>) =>
      page.hasNextPage ?? params.offset + page.items.length < page.total;
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
        return { resource, more: more(found) };
      }
      case 'ValueSet': {
        if (page === 'all') {
          const members = await this.expansions.readableExpansion(ctx, view);
          return { resource: await this.valueSetWithMembers(ctx, view, r, members), more: false };
        }
        const listed = await this.collections.listConcepts(ctx, ref, params);
        const found = listed.items.map((item) => ({
          source: item.source,
          code: item.version.mnemonic,
          display: item.version.displayName,
        }));
        const resource = valueSetOf(view, r, await this.membersOf(ctx, view, found));
        return { resource, more: more(listed) };
      }
      case 'ConceptMap': {
        const found = await this.mappings.list(ctx, ref, params);
        const entries = await Promise.all(found.items.map((item) => this.entryOf(ctx, view, item)));
        const resource = conceptMapOf(view, r, entries);
        return { resource, more: more(found) };
      }
    }
  }

  /**
   * What a stored concept map's rendering depends on: the source version (as `renderedKey`) and
   * each repository its mappings' ends are in, whether the caller may see it (ends in sources
   * the caller may not see are shown by the URL the mapping stores), with its last edit and
   * change number (an end shows its concept's current name).
   */
  private async mapKey(ctx: ServiceContext, view: RepoView): Promise<string> {
    const content = renderedKey(ctx, view);
    let ids = this.mapEnds.get(content);
    if (!ids) {
      ids = await this.repos.fhir.mappingEndRepositoryIds(view.repo.id, view.version.seq);
      this.mapEnds.set(content, ids);
    }
    const ends = await Promise.all(
      ids.map(async (id) => {
        const repo = await ctx.loaders.repositoryById.load(id);
        return repo && [id, await mayViewRepo(ctx, repo), repo.updatedAt.getTime(), repo.headSeq];
      }),
    );
    return JSON.stringify(['ConceptMap', content, ends]);
  }

  /** A value set with all its members: their codes only, in one lean read. */
  private async valueSetWithMembers(
    ctx: ServiceContext,
    view: RepoView,
    r: RenderContext,
    readable: ReadableMembers,
  ): Promise<ValueSetResource> {
    const found = await this.collections.memberCodes(ctx, readable);
    return valueSetOf(view, r, await this.membersOf(ctx, view, found));
  }

  /** Member concepts as a value set's members: systems, with the version each was taken at. */
  private async membersOf(
    ctx: ServiceContext,
    view: RepoView,
    found: Array<{ source: RepoView; code: string; display: string | null }>,
  ): Promise<ValueSetMember[]> {
    const versions = await this.memberVersions(view);
    return found.map((item) => ({
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
    if (!view.version.expansionId) return new Map();
    const expansion = await this.repos.collections.findExpansionById(view.version.expansionId);
    return versionsNamedIn(expansion?.resolved ?? []);
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

/**
 * What a stored value set's rendering depends on: the collection version (as `renderedKey`), its
 * default expansion as last evaluated, and each member repository the caller may see, with its
 * last edit and change number (members that follow a source's HEAD show its current content).
 */
function membersKey(ctx: ServiceContext, view: RepoView, members: ReadableMembers): string {
  const { expansion, repositories } = members;
  return JSON.stringify([
    'ValueSet',
    renderedKey(ctx, view),
    expansion ? [expansion.id, expansion.updatedAt.getTime()] : null,
    repositories.map((repo) => [repo.id, repo.updatedAt.getTime(), repo.headSeq]),
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

/** The key of a member repository of an expansion in `pinnedMembers`. */
/** An expansion as last evaluated (a re-evaluation changes its members and its `updatedAt`). */
function evaluationKey(expansion: { id: string; updatedAt: Date }): string {
  return `${expansion.id}@${expansion.updatedAt.getTime()}`;
}

function pinnedKey(evaluated: string, repositoryId: string): string {
  return `${evaluated}|${repositoryId}`;
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

/** What a write names, checked: where the repository goes, its fields, and its version. */
interface ParsedResource {
  owner: OwnerRef;
  id: string;
  /** None: an update of HEAD only. */
  version?: string;
  status: 'draft' | 'active' | 'retired';
  language: string;
  fields: Record<string, unknown>;
  resource: Record<string, unknown>;
}

/**
 * About how many concepts, mappings or codes a write's content holds, counted without parsing it:
 * a large write is parsed and checked by its task (a 5,000-concept parse held the event loop
 * ~0.3 s, which parallel requests add up), whose error names what was refused.
 */
function contentSize(type: FhirResourceType, resource: Record<string, unknown>): number {
  const records = (value: unknown): Array<Record<string, unknown>> =>
    Array.isArray(value) ? value.filter(isObject) : [];
  const items = (value: unknown): number => Math.max(1, records(value).length);
  switch (type) {
    case 'CodeSystem': {
      const count = (concepts: unknown): number =>
        records(concepts).reduce((n, concept) => n + 1 + count(concept.concept), 0);
      return count(resource.concept);
    }
    case 'ValueSet': {
      const compose = isObject(resource.compose) ? resource.compose : {};
      return [...records(compose.include), ...records(compose.exclude)].reduce(
        (n, part) => n + items(part.concept),
        0,
      );
    }
    case 'ConceptMap':
      return records(resource.group).reduce(
        (n, group) =>
          n + records(group.element).reduce((m, element) => m + items(element.target), 0),
        0,
      );
  }
}

/** A create always names its version (rule 2: 0.1 by default). */
interface CreateInput extends ParsedResource {
  version: string;
}

/** Where an update or delete goes: a repository by owner and id, or by server-wide id. */
export type FhirTarget =
  { kind: 'owner'; owner: OwnerRef; id: string } | { kind: 'global'; id: string };

/** Content checked before a write's transaction, and the work to do inside it. */
interface PreparedContent {
  apply: (r: Repositories, head: RepoView) => Promise<void>;
}

const NO_CONTENT: PreparedContent = { apply: async () => undefined };

/** `/orgs/:org/X/:id/[version/:version/]` */
const RESOURCE_URI =
  /^\/(orgs|users)\/([^/]+)\/(CodeSystem|ValueSet|ConceptMap)\/([^/]+)\/(?:version\/([^/]+)\/?)?$/;
const STATUSES = ['draft', 'active', 'retired'];

function parseCreate(type: FhirResourceType, namespace: FhirNamespace, body: unknown): CreateInput {
  const resource = resourceOf(type, body);
  const accession = accessionOf(resource.identifier, type);
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
    const given = accession?.id ?? optionalText(resource, 'id');
    if (given === undefined) {
      throw AppError.field('id', 'Give the id, or an accession identifier.');
    }
    id = given;
  }
  // Rule 2: the accession identifier's version wins, then `version`, else 0.1.
  const version = accession?.version ?? optionalText(resource, 'version') ?? '0.1';
  return { owner, id, version, ...definitionOf(resource, id) };
}

/**
 * An update names the repository by its path; the body's `id` and accession identifier, when
 * given, must name the same one. Its version is the accession identifier's, else `version`.
 */
function parseUpdate(
  type: FhirResourceType,
  target: FhirTarget,
  owner: OwnerRef,
  id: string,
  body: unknown,
): ParsedResource {
  const resource = resourceOf(type, body);
  const given = optionalText(resource, 'id');
  if (given !== undefined && given !== target.id && given !== id) {
    throw AppError.field('id', `The id in the body ('${given}') is not the one in the path.`);
  }
  const accession = accessionOf(resource.identifier, type);
  if (accession && (!sameOwner(accession.owner, owner) || accession.id !== id)) {
    throw AppError.field('identifier', 'The accession identifier names another resource.');
  }
  const version = accession?.version ?? optionalText(resource, 'version');
  return { owner, id, version, ...definitionOf(resource, id) };
}

function resourceOf(type: FhirResourceType, body: unknown): Record<string, unknown> {
  if (!isObject(body) || body.resourceType !== type) {
    throw AppError.field('resourceType', `The body must be a ${type} resource.`);
  }
  return body;
}

/** The repository fields a resource gives (rules 1 and 3), and its status and language. */
function definitionOf(
  resource: Record<string, unknown>,
  id: string,
): Pick<ParsedResource, 'status' | 'language' | 'fields' | 'resource'> {
  // Rule 1: the canonical URL is mandatory.
  const url = optionalText(resource, 'url');
  if (url === undefined) throw AppError.field('url', 'url is required.');
  // Rule 3: empty language is en, empty status draft.
  const language = optionalText(resource, 'language') ?? 'en';
  const status = optionalText(resource, 'status') ?? 'draft';
  if (!STATUSES.includes(status)) {
    throw AppError.field('status', `Must be one of ${STATUSES.join(', ')}.`);
  }
  const extras: Record<string, unknown> = {};
  for (const field of STORED_EXTRA_FIELDS) {
    if (resource[field] !== undefined) extras[field] = resource[field];
  }
  const name = optionalText(resource, 'name');
  const title = optionalText(resource, 'title');
  return {
    status: status as ParsedResource['status'],
    language,
    resource,
    fields: {
      id,
      name: name ?? title ?? id,
      fullName: title ?? null,
      description: optionalText(resource, 'description') ?? null,
      canonicalUrl: url,
      defaultLocale: language,
      ...(Object.keys(extras).length > 0 ? { extras } : {}),
    },
  };
}

/** The repository version a resource names: released when active, retired when retired. */
function versionInput(input: ParsedResource): Record<string, unknown> {
  return {
    id: input.version,
    released: input.status === 'active',
    retired: input.status === 'retired',
  };
}

/** The repository a target names, and the namespace its answer is read through. */
function targetOf(
  type: FhirResourceType,
  target: FhirTarget,
): { owner: OwnerRef; id: string; namespace: FhirNamespace } {
  if (target.kind === 'owner') {
    return { owner: target.owner, id: target.id, namespace: target };
  }
  const name = parseGlobalId(target.id);
  if (!name) throw AppError.notFound(`${type} '${target.id}'`);
  const owner: OwnerRef =
    name.ownerType === 'org'
      ? { type: 'org', id: name.owner }
      : { type: 'user', username: name.owner };
  return { owner, id: name.mnemonic, namespace: { kind: 'global' } };
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

/** The version each member repository was taken at, by `memberKey`, as an expansion resolved it. */
function versionsNamedIn(resolvedSystems: readonly ResolvedSystem[]): Map<string, string> {
  const versions = new Map<string, string>();
  for (const resolved of resolvedSystems) {
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
