import { z } from 'zod';
import { HEAD, type ConceptName, type RepositoryEntity } from '../../db/entities';
import { AppError } from '../../errors';
import {
  AUTO_EXPANSION,
  isUniqueViolation,
  referenceKey,
  type ExpansionCounts,
  type ExpansionRow,
  type NewReference,
  type ReferenceRow,
  type ReadSnapshot,
  type Repositories,
  type ResolvedSystem,
  type Selection,
} from '../../repositories';
import { authorize, requireUser, viewerOf } from '../shared/access';
import { mayViewRepo } from '../shared/paths';
import type { ConceptService, ConceptView } from '../content/concept.service';
import type { ServiceContext } from '../shared/context';
import {
  parseExpansionParameters,
  type ExpansionParameters,
  type SystemVersion,
} from './expansion-parameters';
import { pageOf, windowOf, type ListParams, type Page } from '../shared/list';
import type { MappingItem, MappingService } from '../content/mapping.service';
import type { ReferenceResolver, Resolution } from './reference-resolver';
import { walkCascade } from './cascade-walk';
import {
  cascadeParametersOf,
  referencesOfBody,
  removalOf,
  type ReferenceItem,
} from './reference-input';
import { isRepoView, type RepositoryService, type RepoView } from '../content/repository.service';
import type { TaskService } from '../community/task.service';
import { ownerUrl, repoUrl, type OwnerRef, type RepoRef } from '../shared/urls';
import type { TaskView } from '../../jobs';
import { mnemonic, parseInput } from '../shared/validation';

/** A reference of a collection version. */
export interface ReferenceView {
  collection: RepoView;
  reference: ReferenceRow;
  /** What it selected when the version's default expansion last evaluated it. */
  result?: ReferenceResult;
}

/** A reference's results (OCL `last_resolved_at`, `concepts`, `mappings`); null: never evaluated. */
export interface ReferenceResult {
  lastResolvedAt: Date | null;
  concepts: number | null;
  mappings: number | null;
}

/** The answer for one reference of an add (OCL `{added, expression, message}`). */
export interface AddedReference {
  added: boolean;
  expression: string;
  message: string;
  reference?: ReferenceRow;
}

export interface ExpansionView {
  collection: RepoView;
  expansion: ExpansionRow;
}

/** An expansion as a detail (or a list with summaries) shows it: with its `summary` when asked. */
export interface ExpansionDetail extends ExpansionView {
  /** Active concepts and mappings the caller may see (spec operations §2.1). */
  summary?: ExpansionCounts;
}

/** A collection version's default expansion and the member repositories a caller may see. */
export interface ReadableMembers {
  expansion: ExpansionRow | null;
  repositoryIds: string[];
  repositories: RepositoryEntity[];
}

/** The task kind of a background reference add. */
export const ADD_REFERENCES_TASK = 'collection.references.add';
/** Adds of more references than this run as a background task. */
export const BACKGROUND_THRESHOLD = 2_000;

/** How long an add that runs as a task is waited for before the task itself is the answer. */
export const ADD_WAIT_MS = 25_000;

/** A background add: the references as parsed when it was asked for, and its collection. */
export interface AddReferencesJob {
  /** The collection by id: one deleted and made again under the same name is not this one. */
  collectionId: string;
  ref: RepoRef;
  items: ReferenceItem[];
}

/** One reference's answer as a background add records it in its task's result. */
interface RecordedResult {
  added: boolean;
  expression: string;
  message: string;
  referenceId: string | null;
}

/** What an add answers: every reference's result, or the task still running (or failed). */
export type AddOutcome = { collection: RepoView } & (
  { results: AddedReference[] } | { task: TaskView }
);

/** How an expansion is evaluated. */
interface Evaluation {
  expansionId: string;
  parameters: ExpansionParameters;
  /** The repositories its references name, resolved once in its transaction before it. */
  resolved: ResolvedRepositories;
  /**
   * Store the version of every member read (a frozen collection version, an expansion made
   * once); otherwise references without a version follow their target (the HEAD auto-expansion).
   */
  pinAll: boolean;
}

const expansionCreateSchema = z.object({
  mnemonic,
  // Required, as in the reference implementation; `{}` asks for the defaults (spec operations §4.1).
  parameters: z.record(z.string(), z.unknown(), {
    error: (issue) =>
      issue.input === undefined || issue.input === null
        ? 'This field is required; send {} for the default parameters.'
        : 'Must be an object of expansion parameters.',
  }),
  canonicalUrl: z
    .string({ error: 'Must be a string.' })
    .trim()
    .max(1000)
    .nullish()
    .transform((v) => v || null),
});

/**
 * Collections at work (spec operations §1.1, §2.1, §2.4, §4.1): references added and removed in
 * HEAD (each change a new collection change number, so versions keep theirs), and expansions
 * that evaluate a version's references into concepts and mappings. The HEAD auto-expansion
 * follows every reference change incrementally; a new version evaluates its own.
 */
export class CollectionService {
  constructor(
    private readonly repos: Repositories,
    private readonly repositories: RepositoryService,
    private readonly resolver: ReferenceResolver,
    private readonly concepts: ConceptService,
    private readonly mappings: MappingService,
    private readonly tasks: TaskService,
  ) {}

  // ------------------------------------------------------------------------------------------
  // References

  /**
   * Adds references to HEAD and evaluates them into its auto-expansion, in one transaction. Each
   * reference answers on its own: a duplicate, a malformed one, one that resolves to nothing the
   * caller can see, or one naming a concept or mapping its repository lacks is not added.
   */
  async addReferences(
    ctx: ServiceContext,
    ref: RepoRef,
    body: unknown,
    options: {
      cascade?: string | null;
      progress?: (done: number, total: number | null, message?: string) => Promise<void>;
    } = {},
  ): Promise<AddedReference[]> {
    const collection = await this.writableCollection(ctx, ref);
    const items = referencesOfBody(body, options.cascade?.toLowerCase() ?? null);
    return this.addItems(ctx, collection, items, options.progress);
  }

  /** The add itself, once the collection is found writable and the body taken apart. */
  private async addItems(
    ctx: ServiceContext,
    collection: RepoView,
    items: ReferenceItem[],
    report?: (done: number, total: number | null, message?: string) => Promise<void>,
  ): Promise<AddedReference[]> {
    const actor = requireUser(ctx);
    const progress = report ?? (async () => undefined);
    await progress(0, items.length, 'Checking the references');
    const results: AddedReference[] = new Array<AddedReference>(items.length);
    const candidates: Array<{ index: number; reference: NewReference }> = [];
    const seen = new Set<string>();
    items.forEach((item, index) => {
      if (!item.ok) {
        results[index] = { added: false, expression: item.expression, message: item.message };
        return;
      }
      const key = referenceKey(item.reference.expression, item.reference.include);
      if (seen.has(key)) {
        results[index] = refused(item.reference, 'The same reference is given twice.');
        return;
      }
      seen.add(key);
      candidates.push({ index, reference: item.reference });
    });

    const existing = await this.repos.collections.currentByExpression(
      collection.repo.id,
      candidates.map((c) => c.reference.expression),
    );
    const fresh = candidates.filter(({ index, reference }) => {
      const id = existing.get(referenceKey(reference.expression, reference.include));
      if (id === undefined) return true;
      results[index] = refused(reference, `Already in the collection (reference ${id}).`);
      return false;
    });

    await progress(0, items.length, 'Evaluating the references');
    if (fresh.length > 0) {
      await this.repos.transaction(async (r) => {
        // Locked first, numbered only when something is added: an add of nothing writes nothing.
        await r.repos.lockHead(collection.repo.id);
        // Asked again under the collection's lock: a parallel add of the same reference that
        // committed meanwhile makes this one a duplicate, as if the two had come in turn.
        const added = await r.collections.currentByExpression(
          collection.repo.id,
          fresh.map((c) => c.reference.expression),
        );
        const unseen = fresh.filter(({ index, reference }) => {
          const id = added.get(referenceKey(reference.expression, reference.include));
          if (id === undefined) return true;
          results[index] = refused(reference, `Already in the collection (reference ${id}).`);
          return false;
        });
        // Resolved once, here: as the caller, on this transaction's connection, under its lock.
        const resolved = await this.resolveFor(
          ctx,
          collection,
          {},
          unseen.map((c) => c.reference),
          r,
        );
        const resolvable = unseen.filter(({ index, reference }) => {
          if (resolutionOf(resolved, reference).resolved) return true;
          results[index] = refused(
            reference,
            `'${systemLabel(reference)}' does not resolve to a source or collection you can see.`,
          );
          return false;
        });
        if (resolvable.length === 0) return;
        const seq = await r.repos.nextChange(collection.repo.id);
        const rows = await r.collections.insertReferences(
          collection.repo.id,
          seq,
          actor.username,
          resolvable.map((c) => c.reference),
        );
        const byKey = new Map(rows.map((row) => [referenceKey(row.expression, row.include), row]));
        const expansionId = await this.headExpansionId(r, collection);
        await this.evaluate(r, { expansionId, parameters: {}, resolved, pinAll: false }, rows);
        // A reference naming one concept or mapping that its repository lacks adds nothing.
        const counts = await r.collections.rowCounts(
          expansionId,
          rows.map((row) => row.id),
        );
        const empty = new Set(
          rows.filter((row) => row.code !== null && !counts.get(row.id)).map((row) => row.id),
        );
        if (empty.size > 0) await r.collections.deleteReferences([...empty]);
        const touched = await r.collections.objectsOf(
          expansionId,
          rows.filter((row) => !empty.has(row.id)).map((row) => row.id),
        );
        await r.collections.recomputeMembers(expansionId, 'c', touched.c);
        await r.collections.recomputeMembers(expansionId, 'm', touched.m);
        await r.collections.touchExpansion(expansionId);
        for (const { index, reference } of resolvable) {
          const row = byKey.get(referenceKey(reference.expression, reference.include))!;
          results[index] = empty.has(row.id)
            ? refused(
                reference,
                `${reference.resourceType} '${reference.code}' is not in '${systemLabel(reference)}'.`,
              )
            : {
                added: true,
                expression: reference.expression,
                message: `Added (reference ${row.id}).`,
                reference: row,
              };
        }
      });
    }
    await progress(items.length, items.length, 'Done');
    return results;
  }

  /**
   * An add as every edge asks for it: at once, or — when `background` is asked or the request
   * holds more than `BACKGROUND_THRESHOLD` references — as a task (spec: large adds must not
   * time out). The body is taken apart before it is queued; the task carries what it became.
   * Unless `background` is asked, the call waits up to `ADD_WAIT_MS` for the task and answers
   * its results when it has finished, as OCL does; otherwise the task is the answer.
   */
  async addReferencesOrQueue(
    ctx: ServiceContext,
    ref: RepoRef,
    body: unknown,
    options: { cascade?: string | null; background?: boolean },
  ): Promise<AddOutcome> {
    const collection = await this.writableCollection(ctx, ref);
    const items = referencesOfBody(body, options.cascade?.toLowerCase() ?? null);
    const count = items.length;
    if (!options.background && count <= BACKGROUND_THRESHOLD) {
      return { collection, results: await this.addItems(ctx, collection, items) };
    }
    const payload: AddReferencesJob = {
      collectionId: collection.repo.id,
      ref: { ...ref, owner: ownerRefOf(collection), version: undefined },
      items,
    };
    const queued = await this.tasks.enqueue(ctx, ADD_REFERENCES_TASK, payload, {
      summary: `Add ${count} reference${count === 1 ? '' : 's'} to ${collection.repo.mnemonic}`,
    });
    if (options.background) return { collection, task: queued };
    const task = await this.tasks.waitFor(ctx, queued.id, ADD_WAIT_MS);
    if (task.state !== 'SUCCESS') return { collection, task };
    return { collection, results: await this.recordedResults(collection, task.result) };
  }

  /** The background side of `addReferencesOrQueue`. */
  async runAddReferencesJob(
    ctx: ServiceContext,
    job: AddReferencesJob,
    progress: (done: number, total: number | null, message?: string) => Promise<void>,
  ): Promise<RecordedResult[]> {
    const collection = await this.writableCollection(ctx, job.ref);
    if (collection.repo.id !== job.collectionId) {
      throw AppError.notFound(
        `Collection '${job.ref.id}' (it was deleted after the add was asked)`,
      );
    }
    const results = await this.addItems(ctx, collection, job.items, progress);
    return results.map((r) => ({
      added: r.added,
      expression: r.expression,
      message: r.message,
      referenceId: r.reference?.id ?? null,
    }));
  }

  /** A finished background add's results, with the references it added as they are now. */
  private async recordedResults(collection: RepoView, result: unknown): Promise<AddedReference[]> {
    const recorded = (Array.isArray(result) ? result : []) as RecordedResult[];
    const ids = recorded.flatMap((r) => (r.referenceId ? [r.referenceId] : []));
    const rows =
      ids.length > 0
        ? await this.repos.collections.referencesAt(collection.repo.id, null, { ids })
        : [];
    const byId = new Map(rows.map((row) => [row.id, row]));
    return recorded.map((r) => ({
      added: r.added,
      expression: r.expression,
      message: r.message,
      reference: r.referenceId ? byId.get(r.referenceId) : undefined,
    }));
  }

  /** References of a collection version (HEAD when none is named), `q` over the expressions. */
  async listReferences(
    ctx: ServiceContext,
    ref: RepoRef | RepoView,
    params: ListParams,
  ): Promise<Page<ReferenceView>> {
    const collection = await this.collection(ctx, ref);
    const include = params.filters.include?.[0];
    const resourceType = params.filters.resourceType?.[0];
    if (resourceType !== undefined && resourceType !== 'Concept' && resourceType !== 'Mapping') {
      throw AppError.field('resourceType', 'Must be Concept or Mapping.');
    }
    const slice = await this.repos.collections.listReferences(
      collection.repo.id,
      collection.version.seq,
      {
        q: params.q,
        include: include === undefined ? undefined : include === 'true',
        resourceType,
      },
      windowOf(params),
    );
    return pageOf(await this.withResults(collection, slice.rows), slice.total, params);
  }

  /** The URL of a collection version's default expansion (OCL `expansion_url`); null: none. */
  async defaultExpansionUrl(collection: RepoView): Promise<string | null> {
    if (collection.repo.kind !== 'collection' || !collection.version.expansionId) return null;
    const expansion = await this.repos.collections.findExpansionById(
      collection.version.expansionId,
    );
    if (!expansion) return null;
    const { owner, repo, version } = collection;
    return `${repoUrl(owner, 'collection', repo.mnemonic, version.mnemonic)}expansions/${encodeURIComponent(expansion.mnemonic)}/`;
  }

  /** References with what each selected in the version's default expansion. */
  private async withResults(
    collection: RepoView,
    references: ReferenceRow[],
  ): Promise<ReferenceView[]> {
    const expansionId = collection.version.expansionId;
    const found =
      expansionId && references.length > 0
        ? await this.repos.summaries.referenceResults(
            expansionId,
            references.map((r) => r.id),
          )
        : null;
    return references.map((reference) => {
      const counts = found?.counts.get(reference.id);
      const result: ReferenceResult = {
        lastResolvedAt: found?.resolvedAt ?? null,
        concepts: found ? (counts?.concepts ?? 0) : null,
        mappings: found ? (counts?.mappings ?? 0) : null,
      };
      return { collection, reference, result };
    });
  }

  async getReference(ctx: ServiceContext, ref: RepoRef, id: string): Promise<ReferenceView> {
    const collection = await this.collection(ctx, ref);
    const [reference] = await this.repos.collections.referencesAt(
      collection.repo.id,
      collection.version.seq,
      { ids: [id] },
    );
    if (!reference) throw AppError.notFound(`Reference '${id}'`);
    return (await this.withResults(collection, [reference]))[0];
  }

  async removeReference(ctx: ServiceContext, ref: RepoRef, id: string): Promise<void> {
    const removed = await this.remove(ctx, ref, { ids: [id] });
    if (removed === 0) throw AppError.notFound(`Reference '${id}'`);
  }

  /**
   * Removes references from HEAD (`{expressions: [...] | "*"}` or `{ids: [...]}`); versions keep
   * theirs. The auto-expansion drops what only they held. Answers how many were removed.
   */
  async removeReferences(ctx: ServiceContext, ref: RepoRef, body: unknown): Promise<number> {
    return this.remove(ctx, ref, removalOf(body));
  }

  // ------------------------------------------------------------------------------------------
  // Expansions

  /** spec operations §4.1: an expansion of a collection version with its parameters. */
  async createExpansion(ctx: ServiceContext, ref: RepoRef, input: unknown): Promise<ExpansionView> {
    const actor = requireUser(ctx);
    const collection = await this.collection(ctx, ref);
    await authorize(ctx, { action: 'repo.edit', repo: collection.repo });
    const data = parseInput(expansionCreateSchema, input);
    const { parsed, stored } = parseExpansionParameters(data.parameters);
    if (await this.repos.collections.mnemonicTaken(collection.version.id, data.mnemonic)) {
      throw expansionTaken(collection, data.mnemonic);
    }
    const expansionId = await this.repos
      .transaction(async (r) => {
        const references = await r.collections.referencesAt(
          collection.repo.id,
          collection.version.seq,
        );
        const resolved = await this.resolveFor(ctx, collection, parsed, references, r);
        const id = await r.collections.insertExpansion({
          collectionId: collection.repo.id,
          versionId: collection.version.id,
          mnemonic: data.mnemonic,
          parameters: stored,
          canonicalUrl: data.canonicalUrl ?? collection.repo.canonicalUrl,
          createdBy: actor.username,
        });
        await this.evaluateVersion(
          r,
          { expansionId: id, parameters: parsed, resolved, pinAll: true },
          references,
        );
        if (collection.version.expansionId === null)
          await r.collections.setDefaultExpansion(collection.version.id, id);
        return id;
      })
      .catch((error: unknown) => {
        // A parallel create of the same mnemonic committed first.
        if (isUniqueViolation(error)) throw expansionTaken(collection, data.mnemonic);
        throw error;
      });
    return {
      collection,
      expansion: (await this.repos.collections.findExpansionById(expansionId))!,
    };
  }

  /** Expansions of one version, or (no version named) of every version of the collection. */
  async listExpansions(
    ctx: ServiceContext,
    ref: RepoRef,
    params: ListParams,
    options: { summaries?: boolean } = {},
  ): Promise<Page<ExpansionDetail>> {
    const collection = await this.collection(ctx, ref);
    const slice = await this.repos.collections.listExpansions(
      ref.version === undefined
        ? { collectionId: collection.repo.id }
        : { versionId: collection.version.id },
      windowOf(params),
    );
    const views = slice.rows.map((expansion) => ({ collection, expansion }));
    return pageOf(
      options.summaries ? await this.withSummaries(ctx, views) : views,
      slice.total,
      params,
    );
  }

  async getExpansion(ctx: ServiceContext, ref: RepoRef, mnemonic: string): Promise<ExpansionView> {
    const collection = await this.collection(ctx, ref);
    return { collection, expansion: await this.findExpansion(collection, mnemonic) };
  }

  /** An expansion's detail: the expansion and its summary, in one call. */
  async expansionDetail(
    ctx: ServiceContext,
    ref: RepoRef,
    mnemonic: string,
  ): Promise<ExpansionDetail> {
    const [detail] = await this.withSummaries(ctx, [await this.getExpansion(ctx, ref, mnemonic)]);
    return detail;
  }

  /** Expansions with their summaries, read in one statement. */
  private async withSummaries(
    ctx: ServiceContext,
    views: ExpansionView[],
  ): Promise<ExpansionDetail[]> {
    if (views.length === 0) return [];
    const counts = await this.summaries(ctx, views);
    return views.map((view) => ({ ...view, summary: counts.get(view.expansion.id) }));
  }

  /** Deletes an expansion; never the auto-expansion HEAD keeps following its references. */
  async deleteExpansion(ctx: ServiceContext, ref: RepoRef, mnemonic: string): Promise<void> {
    const collection = await this.collection(ctx, ref);
    await authorize(ctx, { action: 'repo.edit', repo: collection.repo });
    const expansion = await this.findExpansion(collection, mnemonic);
    if (collection.version.mnemonic === HEAD && expansion.mnemonic === AUTO_EXPANSION) {
      throw new AppError(
        'NOT_ALLOWED',
        `'${AUTO_EXPANSION}' follows the references of HEAD and cannot be deleted.`,
      );
    }
    await this.repos.collections.deleteExpansion(expansion.id);
  }

  /** Active concepts and mappings of each expansion (the `summary` of spec operations §2.1). */
  async summaries(
    ctx: ServiceContext,
    expansions: ExpansionView[],
  ): Promise<Map<string, ExpansionCounts>> {
    return this.repos.collections.expansionCounts(
      expansions.map((e) => e.expansion.id),
      viewerOf(ctx.actor),
    );
  }

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
    const { expansion, repositoryIds } = await this.readableExpansion(ctx, ref, expansionMnemonic);
    if (!expansion) return pageOf([], 0, params);
    const p = parseExpansionParameters(expansion.parameters).parsed;
    const page = await windowed(params, p, (window) =>
      this.concepts.listMembers(ctx, expansion.id, repositoryIds, window),
    );
    // What the expansion says about how its concepts are shown (spec operations §2.2, §2.4):
    // a reference's `display`, else the name in `displayLanguage`; names and descriptions.
    const ids = page.items.map((v) => v.concept.id);
    const [displays, removed] = await Promise.all([
      this.repos.collections.displays(expansion.id, ids),
      this.removedAmong(expansion.id, 'c', ids, params),
    ]);
    const designations = p.includeDesignations ?? false;
    const definition = p.includeDefinition ?? false;
    return {
      ...page,
      items: page.items.map((view) => {
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
      }),
    };
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
    const collection = await this.collection(ctx, ref);
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
    const collection = await this.collection(ctx, ref);
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
    const { expansion } = await this.readableExpansion(ctx, collection, expansionMnemonic);
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
   * The default expansion of a collection version and the member repositories the caller may see
   * (their rows tell when their content last changed).
   */
  async readableMembers(ctx: ServiceContext, ref: RepoRef | RepoView): Promise<ReadableMembers> {
    return this.readableExpansion(ctx, ref);
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
    const { expansion, repositoryIds } = await this.readableExpansion(ctx, ref, expansionMnemonic);
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
    const { expansion, repositoryIds } = await this.readableExpansion(ctx, view);
    if (!expansion) return;
    const p = parseExpansionParameters(expansion.parameters).parsed;
    const designations = p.includeDesignations ?? false;
    const definition = p.includeDefinition ?? false;
    await this.concepts.walkMembers(
      ctx,
      expansion.id,
      repositoryIds,
      params,
      snapshot,
      async (batch) => {
        const ids = batch.map((v) => v.concept.id);
        const [displays, removed] = await Promise.all([
          this.repos.collections.displays(expansion.id, ids),
          this.removedAmong(expansion.id, 'c', ids, params),
        ]);
        await each(
          batch.map((item) => {
            const shown = shownName(item.version.names, displays.get(item.concept.id), p);
            const version = {
              ...item.version,
              ...shown,
              ...(removed.has(item.concept.id) ? { retired: true } : {}),
            };
            return {
              ...item,
              version,
              ...(designations || definition ? { expansion: { designations, definition } } : {}),
            };
          }),
        );
      },
    );
  }

  /** `walkConcepts` for the member mappings. */
  async walkMappings(
    ctx: ServiceContext,
    view: RepoView,
    params: ListParams,
    snapshot: ReadSnapshot,
    each: (batch: MappingItem[]) => Promise<void>,
  ): Promise<void> {
    const { expansion, repositoryIds } = await this.readableExpansion(ctx, view);
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

  /**
   * Called when a collection version is about to be made: answers the work to do inside its
   * transaction once the version is made — resolving the repositories the version's references
   * name (as the caller, on the transaction's connection) and evaluating them into its own
   * expansion, its default. Nothing to do when `autoexpand` is false.
   */
  async prepareVersionExpansion(
    ctx: ServiceContext,
    head: Pick<RepoView, 'owner'> & { repo: RepoView['repo'] | null },
    autoexpand: boolean,
  ): Promise<((r: Repositories, made: RepoView) => Promise<void>) | null> {
    if (!autoexpand) return null;
    return async (r, collection) => {
      const references = await r.collections.referencesAt(
        collection.repo.id,
        collection.version.seq,
      );
      const resolved = await this.resolveFor(ctx, head, {}, references, r);
      const expansionId = await r.collections.insertExpansion({
        collectionId: collection.repo.id,
        versionId: collection.version.id,
        mnemonic: `autoexpand-${collection.version.mnemonic}`,
        parameters: {},
        canonicalUrl: collection.repo.canonicalUrl,
        createdBy: collection.version.createdBy,
      });
      await this.evaluateVersion(
        r,
        { expansionId, parameters: {}, resolved, pinAll: true },
        references,
      );
      await r.collections.setDefaultExpansion(collection.version.id, expansionId);
      collection.version.expansionId = expansionId;
    };
  }

  /**
   * Replacing every reference of a collection's HEAD by `body`'s (as an add takes them),
   * checked as the caller before any transaction: a malformed reference or one given twice is a
   * 400 naming it. `apply` runs inside the caller's transaction, on the collection it made or
   * locked there: the references are resolved once, as the caller on the transaction's
   * connection (one resolving to nothing the caller may see is a 400 naming it), the current ones
   * ended and the new ones added and evaluated into the auto-expansion; a reference naming a
   * concept or mapping its repository lacks is a 400 there, and nothing of the transaction stays.
   */
  async prepareReplaceReferences(
    ctx: ServiceContext,
    owner: Pick<RepoView, 'owner'>,
    body: unknown,
  ): Promise<{
    references: NewReference[];
    apply: (r: Repositories, collection: RepoView) => Promise<void>;
  }> {
    const actor = requireUser(ctx);
    const items = referencesOfBody(body);
    const references: NewReference[] = [];
    const seen = new Set<string>();
    for (const item of items) {
      if (!item.ok) throw AppError.field('compose', `${item.expression}: ${item.message}`);
      const key = referenceKey(item.reference.expression, item.reference.include);
      if (seen.has(key)) {
        throw AppError.field('compose', `${item.reference.expression}: given twice.`);
      }
      seen.add(key);
      references.push(item.reference);
    }
    const apply = async (r: Repositories, collection: RepoView): Promise<void> => {
      const resolved = await this.resolveFor(ctx, owner, {}, references, r);
      for (const reference of references) {
        if (!resolutionOf(resolved, reference).resolved) {
          throw AppError.field(
            'compose',
            `'${systemLabel(reference)}' does not resolve to a source or collection you can see.`,
          );
        }
      }
      const seq = await r.repos.nextChange(collection.repo.id);
      const expansionId = await this.headExpansionId(r, collection);
      const current = await r.collections.referencesAt(collection.repo.id, null);
      if (current.length > 0) {
        const ended = await r.collections.endReferences(
          collection.repo.id,
          current.map((c) => c.id),
          seq,
        );
        const touched = await r.collections.deleteRowsOf(expansionId, ended);
        await r.collections.recomputeMembers(expansionId, 'c', touched.c);
        await r.collections.recomputeMembers(expansionId, 'm', touched.m);
      }
      if (references.length > 0) {
        const rows = await r.collections.insertReferences(
          collection.repo.id,
          seq,
          actor.username,
          references,
        );
        await this.evaluate(r, { expansionId, parameters: {}, resolved, pinAll: false }, rows);
        const counts = await r.collections.rowCounts(
          expansionId,
          rows.map((row) => row.id),
        );
        const empty = rows.find((row) => row.code !== null && !counts.get(row.id));
        if (empty) {
          throw AppError.field(
            'compose',
            `${empty.resourceType} '${empty.code}' is not in '${systemLabel(empty)}'.`,
          );
        }
        const touched = await r.collections.objectsOf(
          expansionId,
          rows.map((row) => row.id),
        );
        await r.collections.recomputeMembers(expansionId, 'c', touched.c);
        await r.collections.recomputeMembers(expansionId, 'm', touched.m);
      }
      await r.collections.touchExpansion(expansionId);
    };
    return { references, apply };
  }

  // ------------------------------------------------------------------------------------------

  private async remove(
    ctx: ServiceContext,
    ref: RepoRef,
    which: { all: true } | { expressions: string[] } | { ids: string[] },
  ): Promise<number> {
    const collection = await this.writableCollection(ctx, ref);
    return this.repos.transaction(async (r) => {
      // Locked first, numbered only when something is removed: a removal of nothing writes nothing.
      await r.repos.lockHead(collection.repo.id);
      const current = await r.collections.referencesAt(
        collection.repo.id,
        null,
        'all' in which ? undefined : which,
      );
      if (current.length === 0) return 0;
      const seq = await r.repos.nextChange(collection.repo.id);
      const ids = await r.collections.endReferences(
        collection.repo.id,
        current.map((c) => c.id),
        seq,
      );
      const expansionId = await this.headExpansionId(r, collection);
      const touched = await r.collections.deleteRowsOf(expansionId, ids);
      await r.collections.recomputeMembers(expansionId, 'c', touched.c);
      await r.collections.recomputeMembers(expansionId, 'm', touched.m);
      await r.collections.touchExpansion(expansionId);
      return ids.length;
    });
  }

  /** Evaluates every reference of a collection version into an (empty) expansion. */
  private async evaluateVersion(
    r: Repositories,
    evaluation: Evaluation,
    references: ReferenceRow[],
  ): Promise<void> {
    const resolved = await this.evaluate(r, evaluation, references);
    await r.collections.recomputeMembers(evaluation.expansionId, 'c');
    await r.collections.recomputeMembers(evaluation.expansionId, 'm');
    await r.collections.finishExpansion(evaluation.expansionId, resolved);
  }

  /**
   * Evaluates references into an expansion's reference rows, set-based: references naming one
   * concept or mapping of the same repository version go in one statement per repository; the
   * rest (whole repositories, filters, cascades, other collections) one statement each.
   * Answers the systems it resolved (or could not).
   */
  private async evaluate(
    r: Repositories,
    evaluation: Evaluation,
    references: ReferenceRow[],
  ): Promise<ResolvedSystem[]> {
    const p = evaluation.parameters;
    // Every repository was resolved once, before this evaluation, in the same transaction.
    const targets = await targetsOf(references, p, async (asked) =>
      asked.map((reference) => resolutionOf(evaluation.resolved, reference)),
    );
    const systems = new Map<string, ResolvedSystem>();
    const groups = new Map<
      string,
      {
        group: Omit<Selection, 'referenceId' | 'include' | 'codes' | 'versionId' | 'filters'>;
        items: Array<{ referenceId: string; code: string; include: boolean }>;
      }
    >();
    const changeAt = new Map<string, string>();
    for (const { reference, system, resolution } of targets) {
      const label = `${system.system}${system.version ? `|${system.version}` : ''}`;
      systems.set(label, {
        system: system.system,
        version: system.version,
        url: resolution.repo ? versionUrlOf(resolution.repo) : null,
        resolved: resolution.resolved,
      });
      if (!resolution.repo) continue;
      const view = resolution.repo;
      const resource = reference.resourceType === 'Mapping' ? 'm' : 'c';
      let seq = view.version.seq;
      if (p.date) {
        const key = view.repo.id;
        if (!changeAt.has(key)) {
          const at = await r.collections.changeAt(view.repo.id, p.date);
          if (at === null) {
            throw AppError.field(
              'date',
              `'${view.repo.mnemonic}' had no content on ${p.date.toISOString()}.`,
            );
          }
          changeAt.set(key, at);
        }
        const at = changeAt.get(key)!;
        seq = seq === null || BigInt(at) < BigInt(seq) ? at : seq;
      }
      const pin = evaluation.pinAll || seq !== null;
      if (view.repo.kind === 'collection') {
        if (view.version.expansionId === null) continue;
        await r.collections.selectMembers(
          evaluation.expansionId,
          {
            referenceId: reference.id,
            include: reference.include,
            resource,
            codes: reference.code === null ? undefined : [reference.code],
            activeOnly: p.activeOnly ?? false,
            pin: evaluation.pinAll,
          },
          view.version.expansionId,
        );
        continue;
      }
      const cascade = resource === 'c' ? cascadeParametersOf(reference.cascade) : null;
      if (
        reference.code !== null &&
        reference.resourceVersion === null &&
        !reference.filter &&
        !cascade
      ) {
        const key = `${resource}:${view.repo.id}:${seq}:${pin}`;
        const entry = groups.get(key) ?? {
          group: {
            resource,
            repositoryId: view.repo.id,
            seq,
            pin,
            activeOnly: p.activeOnly ?? false,
            text: p.filter,
          },
          items: [],
        };
        entry.items.push({
          referenceId: reference.id,
          code: reference.code,
          include: reference.include,
        });
        groups.set(key, entry);
        continue;
      }
      if (reference.filter?.some((f) => f.op === 'regex')) {
        for (const f of reference.filter.filter((x) => x.op === 'regex')) {
          if (!(await r.collections.isValidRegex(f.value))) {
            throw AppError.invalid(`'${f.value}' is not a valid regular expression.`);
          }
        }
      }
      const selection: Selection = {
        referenceId: reference.id,
        include: reference.include,
        resource,
        repositoryId: view.repo.id,
        seq,
        pin,
        codes: reference.code === null ? undefined : [reference.code],
        versionId: reference.resourceVersion ?? undefined,
        filters: reference.filter ?? undefined,
        activeOnly: p.activeOnly ?? false,
        text: p.filter,
      };
      await r.collections.select(evaluation.expansionId, selection);
      if (cascade) {
        // The one cascade walk ($cascade's), from every concept the reference selected, in the
        // source and version it names; what it reaches joins the reference's rows.
        const scope = { kind: 'source' as const, repositoryId: view.repo.id, seq };
        const selected = await r.collections.objectsOf(evaluation.expansionId, [reference.id]);
        const starts = await r.cascade.conceptsById(scope, selected.c, true);
        const walk = await walkCascade(
          r.cascade,
          scope,
          starts,
          { ...cascade, includeRetired: cascade.includeRetired && !selection.activeOnly },
          [],
          null,
        );
        const startIds = new Set(starts.map((c) => c.conceptId));
        await r.collections.insertRows(evaluation.expansionId, reference.id, reference.include, [
          ...[...walk.nodes.values()]
            .filter((n) => !startIds.has(n.concept.conceptId))
            .map((n) => ({
              resource: 'c' as const,
              objectId: n.concept.conceptId,
              versionId: pin ? n.concept.versionId : null,
            })),
          ...[...walk.mappings.values()].map((m) => ({
            resource: 'm' as const,
            objectId: m.mappingId,
            versionId: pin ? m.versionId : null,
          })),
        ]);
      }
    }
    for (const { group, items } of groups.values()) {
      await r.collections.selectCodes(evaluation.expansionId, group, items);
    }
    return [...systems.values()];
  }

  /**
   * Resolves, as the caller, every repository that evaluating `references` under the parameters
   * `p` reads (see `targetsOf`), once, inside the transaction that evaluates them: `within` is
   * the repositories its work received, so every statement runs on its connection.
   */
  private async resolveFor(
    ctx: ServiceContext,
    collection: Pick<RepoView, 'owner'>,
    p: ExpansionParameters,
    references: SystemReference[],
    within: Repositories,
  ): Promise<ResolvedRepositories> {
    const resolved: ResolvedRepositories = new Map();
    if (references.length === 0) return resolved;
    await targetsOf(references, p, async (asked) => {
      const resolutions = await this.resolveAll(ctx, asked, collection, within);
      asked.forEach((reference, i) => resolved.set(resolutionKey(reference), resolutions[i]));
      return resolutions;
    });
    return resolved;
  }

  /**
   * Resolves each reference's repository (distinct ones once) as the caller, in the namespace
   * of the collection's owner unless the reference names another (spec operations §4.4).
   */
  private resolveAll(
    ctx: ServiceContext,
    references: SystemReference[],
    collection: Pick<RepoView, 'owner'>,
    within: Repositories,
  ): Promise<Resolution[]> {
    return this.resolver.resolveMany(
      ctx,
      references.map((reference) => ({
        url: reference.system!,
        version: reference.version,
        namespace: reference.namespace,
      })),
      ownerUrl(collection.owner),
      within,
    );
  }

  /** The HEAD auto-expansion, made when a collection predates it. */
  private async headExpansionId(r: Repositories, collection: RepoView): Promise<string> {
    const head =
      collection.version.mnemonic === HEAD
        ? collection.version
        : await r.repos.findVersion(collection.repo.id, HEAD);
    if (head?.expansionId) return head.expansionId;
    const id = await r.collections.insertExpansion({
      collectionId: collection.repo.id,
      versionId: head!.id,
      mnemonic: AUTO_EXPANSION,
      parameters: {},
      canonicalUrl: collection.repo.canonicalUrl,
      createdBy: head!.createdBy,
    });
    await r.collections.setDefaultExpansion(head!.id, id);
    return id;
  }

  private async readableExpansion(
    ctx: ServiceContext,
    ref: RepoRef | RepoView,
    expansionMnemonic?: string,
  ): Promise<ReadableMembers> {
    const collection = await this.collection(ctx, ref);
    const found =
      expansionMnemonic !== undefined
        ? await this.repos.collections.findExpansionWithMembers({
            versionId: collection.version.id,
            mnemonic: expansionMnemonic,
          })
        : collection.version.expansionId
          ? await this.repos.collections.findExpansionWithMembers({
              id: collection.version.expansionId,
            })
          : null;
    if (!found) {
      if (expansionMnemonic === undefined) {
        return { expansion: null, repositoryIds: [], repositories: [] };
      }
      throw expansionNotFound(collection, expansionMnemonic);
    }
    // The member repositories' HEAD views: what the member pages show them by, read with them.
    const views = await this.repositories.headViews(ctx, found.repositoryIds);
    const visible = await Promise.all(
      [...views.values()].map(async ({ repo }) => ((await mayViewRepo(ctx, repo)) ? repo : null)),
    );
    const repositories = visible.filter((repo): repo is RepositoryEntity => repo !== null);
    return {
      expansion: found.expansion,
      repositoryIds: repositories.map((r) => r.id),
      repositories,
    };
  }

  private async findExpansion(collection: RepoView, mnemonic: string): Promise<ExpansionRow> {
    const expansion = await this.repos.collections.findExpansion(collection.version.id, mnemonic);
    if (!expansion) throw expansionNotFound(collection, mnemonic);
    return expansion;
  }

  /** A collection by its path, or as a service already resolved it. */
  private async collection(ctx: ServiceContext, ref: RepoRef | RepoView): Promise<RepoView> {
    return this.repositories.at(ctx, isRepoView(ref) ? ref : { ...ref, kind: 'collection' });
  }

  /** HEAD of a collection the caller may change the references of. */
  private async writableCollection(ctx: ServiceContext, ref: RepoRef): Promise<RepoView> {
    if (ref.version !== undefined && ref.version !== HEAD) {
      throw new AppError(
        'NOT_ALLOWED',
        `Version '${ref.version}' is frozen; references are added to and removed from HEAD.`,
      );
    }
    const collection = await this.collection(ctx, { ...ref, version: undefined });
    await authorize(ctx, { action: 'repo.editContent', repo: collection.repo });
    return collection;
  }
}

/** What resolving a reference's repository depends on. */
type SystemReference = Pick<NewReference, 'system' | 'version' | 'namespace'>;

/** Resolutions by `resolutionKey`, made in the transaction before the evaluation reads them. */
type ResolvedRepositories = Map<string, Resolution>;

function resolutionKey(reference: SystemReference): string {
  return `${reference.system}\u0000${reference.version ?? ''}\u0000${reference.namespace ?? ''}`;
}

function resolutionOf(resolved: ResolvedRepositories, reference: SystemReference): Resolution {
  const resolution = resolved.get(resolutionKey(reference));
  if (!resolution) throw new Error(`'${reference.system}' was not resolved before the evaluation`);
  return resolution;
}

/**
 * The repository each reference is evaluated against under the parameters `p`, with its
 * resolution from `resolve`: first as the reference names it, then — when a system parameter
 * applies — again as the parameters name it. The same steps serve resolving and then reading
 * those resolutions in the evaluation, so the two cannot differ.
 */
async function targetsOf<R extends SystemReference>(
  references: R[],
  p: ExpansionParameters,
  resolve: (asked: SystemReference[]) => Promise<Resolution[]>,
): Promise<Array<{ reference: R; system: SystemVersion; resolution: Resolution }>> {
  const named = references
    .map((reference) => ({ reference, system: systemOf(reference, p, [reference.system!]) }))
    .filter((t): t is { reference: R; system: SystemVersion } => t.system !== null);
  const resolutions = await resolve(named.map((t) => ({ ...t.reference, ...t.system })));
  const targets = named.map((t, i) => ({ ...t, resolution: resolutions[i] }));
  if (!(p.excludeSystem || p.systemVersion || p.checkSystemVersion || p.forceSystemVersion)) {
    return targets;
  }
  // A repository also answers to its canonical URL and its own relative URL, whichever form
  // the reference used: the system parameters are applied again on all of them.
  const again = targets.map((t) => {
    const view = t.resolution.repo;
    if (!view) return { ...t, changed: false };
    const names = [
      t.reference.system!,
      repoUrl(view.owner, view.repo.kind, view.repo.mnemonic),
      ...(view.repo.canonicalUrl ? [view.repo.canonicalUrl] : []),
    ];
    const renamed = systemOf(t.reference, p, names);
    return {
      ...t,
      system: renamed ? { system: t.system.system, version: renamed.version } : null,
      changed: renamed === null || renamed.version !== t.system.version,
    };
  });
  const changed = again.filter((t) => t.system !== null && t.changed);
  const redone = await resolve(changed.map((t) => ({ ...t.reference, ...t.system! })));
  changed.forEach((t, i) => (t.resolution = redone[i]));
  return again
    .filter((t) => t.system !== null)
    .map((t) => ({ reference: t.reference, system: t.system!, resolution: t.resolution }));
}

function expansionTaken(collection: RepoView, mnemonic: string): AppError {
  return new AppError(
    'CONFLICT',
    `Version '${collection.version.mnemonic}' already has an expansion '${mnemonic}'.`,
  );
}

function refused(reference: NewReference, message: string): AddedReference {
  return { added: false, expression: reference.expression, message };
}

function systemLabel(reference: NewReference): string {
  return `${reference.system}${reference.version ? (reference.system!.startsWith('/') ? `${reference.version}/` : `|${reference.version}`) : ''}`;
}

/** The owner of a collection as a path names it (a `/user/` path becomes the user's own). */
function ownerRefOf(view: RepoView): OwnerRef {
  return view.owner.type === 'Organization'
    ? { type: 'org', id: view.owner.id }
    : { type: 'user', username: view.owner.id };
}

function versionUrlOf(view: RepoView): string {
  const owner = view.owner.type === 'Organization' ? 'orgs' : 'users';
  const kind = view.repo.kind === 'source' ? 'sources' : 'collections';
  const base = `/${owner}/${view.owner.id}/${kind}/${view.repo.mnemonic}/`;
  return view.version.mnemonic === HEAD ? base : `${base}${view.version.mnemonic}/`;
}

/**
 * The system and version a reference is evaluated against under the expansion parameters
 * (spec operations §2.2), the repository answering to any of `names`; null when
 * `exclude-system` leaves it out.
 */
function systemOf(
  reference: Pick<NewReference, 'system' | 'version'>,
  p: ExpansionParameters,
  names: string[],
): SystemVersion | null {
  const system = reference.system!;
  const matches = (s: SystemVersion): boolean => names.includes(s.system);
  if (
    p.excludeSystem?.some(
      (s) => matches(s) && (s.version === null || s.version === reference.version),
    )
  ) {
    return null;
  }
  const forced = p.forceSystemVersion?.find(matches);
  if (forced) return { system, version: forced.version };
  const checked = p.checkSystemVersion?.find(matches);
  if (checked && reference.version !== null && reference.version !== checked.version) {
    throw AppError.field(
      'check-system-version',
      `The collection names version '${reference.version}' of ${system}, not '${checked.version}'.`,
    );
  }
  if (reference.version !== null) return { system, version: reference.version };
  const fallback = checked ?? p.systemVersion?.find(matches);
  return { system, version: fallback?.version ?? null };
}

/**
 * A list read through an expansion whose `offset`/`count` parameters (spec operations §2.2) make
 * it a window of its members: the request pages inside that window.
 */
function expansionNotFound(collection: RepoView, mnemonic: string): AppError {
  return AppError.notFound(`Expansion '${mnemonic}' of version '${collection.version.mnemonic}'`);
}

async function windowed<T>(
  params: ListParams,
  p: ExpansionParameters,
  read: (params: ListParams) => Promise<Page<T>>,
): Promise<Page<T>> {
  if (p.offset === undefined && p.count === undefined) return read(params);
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
  return { ...page, total, offset: params.offset, limit: params.limit };
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
