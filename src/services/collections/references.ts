import { HEAD } from '../../db/entities';
import { AppError } from '../../errors';
import {
  referenceKey,
  type NewReference,
  type ReferenceFilter,
  type ReferenceRow,
  type Repositories,
} from '../../repositories';
import { authorize, requireUser } from '../shared/access';
import { announceChange } from '../shared/changes';
import type { ServiceContext } from '../shared/context';
import { keyedPage, pageSlice, pagingOf } from '../shared/cursor';
import type { ListParams, Page } from '../shared/list';
import type { ReferenceResolver } from './reference-resolver';
import { referencesOfBody, removalOf, type ReferenceItem } from './reference-input';
import type { RepositoryService, RepoView } from '../content/repository.service';
import type { TaskService } from '../community/task.service';
import type { OwnerRef, RepoRef } from '../shared/urls';
import type { TaskView } from '../../jobs';
import {
  collectionAt,
  evaluate,
  headExpansionId,
  resolutionOf,
  resolveFor,
  systemLabel,
} from './evaluation';

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

/**
 * The references of collections (spec operations §1.1, §4.1): added to and removed from HEAD,
 * each change a new collection change number (so versions keep theirs), and evaluated into the
 * HEAD auto-expansion incrementally, in the same transaction.
 */
export class CollectionReferences {
  constructor(
    private readonly repos: Repositories,
    private readonly repositories: RepositoryService,
    private readonly resolver: ReferenceResolver,
    private readonly tasks: TaskService,
  ) {}

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
        const resolved = await resolveFor(
          this.resolver,
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
        const expansionId = await headExpansionId(r, collection);
        await evaluate(r, { expansionId, parameters: {}, resolved, pinAll: false }, rows);
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
        if (rows.length > empty.size) {
          await announceChange(r, collection, actor, 'REFERENCES_ADDED');
        }
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
    const collection = await collectionAt(this.repositories, ctx, ref);
    const include = params.filters.include?.[0];
    const resourceType = params.filters.resourceType?.[0];
    if (resourceType !== undefined && resourceType !== 'Concept' && resourceType !== 'Mapping') {
      throw AppError.field('resourceType', 'Must be Concept or Mapping.');
    }
    const filter: ReferenceFilter = {
      q: params.q,
      include: include === undefined ? undefined : include === 'true',
      resourceType,
    };
    const paging = pagingOf(
      params,
      {
        list: 'references',
        collection: collection.repo.id,
        seq: collection.version.seq,
        filter: { ...filter, q: params.q ?? null },
      },
      this.repos.collections.referenceKeyTypes(),
    );
    const slice = pageSlice(
      await this.repos.collections.listReferences(
        collection.repo.id,
        collection.version.seq,
        filter,
        paging.window,
      ),
      paging,
      params,
    );
    return keyedPage(await this.withResults(collection, slice.rows), slice, params, paging);
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
    const collection = await collectionAt(this.repositories, ctx, ref);
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
    if (removed.length === 0) throw AppError.notFound(`Reference '${id}'`);
  }

  /**
   * Removes references from HEAD (`{expressions: [...] | "*"}` or `{ids: [...]}`); versions keep
   * theirs. The auto-expansion drops what only they held. Answers how many were removed.
   */
  async removeReferences(ctx: ServiceContext, ref: RepoRef, body: unknown): Promise<number> {
    return (await this.remove(ctx, ref, removalOf(body))).length;
  }

  /**
   * `removeReferences`, answering the references removed (their ids and expressions), so an edge
   * can say which of those named matched none.
   */
  async removeReferencesListed(
    ctx: ServiceContext,
    ref: RepoRef,
    body: unknown,
  ): Promise<Array<{ id: string; expression: string }>> {
    return this.remove(ctx, ref, removalOf(body));
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
      const resolved = await resolveFor(this.resolver, ctx, owner, {}, references, r);
      for (const reference of references) {
        if (!resolutionOf(resolved, reference).resolved) {
          throw AppError.field(
            'compose',
            `'${systemLabel(reference)}' does not resolve to a source or collection you can see.`,
          );
        }
      }
      const seq = await r.repos.nextChange(collection.repo.id);
      const expansionId = await headExpansionId(r, collection);
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
        await evaluate(r, { expansionId, parameters: {}, resolved, pinAll: false }, rows);
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
      await announceChange(r, collection, actor, 'CONTENT_CHANGED');
    };
    return { references, apply };
  }

  private async remove(
    ctx: ServiceContext,
    ref: RepoRef,
    which: { all: true } | { expressions: string[] } | { ids: string[] },
  ): Promise<Array<{ id: string; expression: string }>> {
    const collection = await this.writableCollection(ctx, ref);
    const actor = requireUser(ctx);
    return this.repos.transaction(async (r) => {
      // Locked first, numbered only when something is removed: a removal of nothing writes nothing.
      await r.repos.lockHead(collection.repo.id);
      const current = await r.collections.referencesAt(
        collection.repo.id,
        null,
        'all' in which ? undefined : which,
      );
      if (current.length === 0) return [];
      const seq = await r.repos.nextChange(collection.repo.id);
      const ids = await r.collections.endReferences(
        collection.repo.id,
        current.map((c) => c.id),
        seq,
      );
      const expansionId = await headExpansionId(r, collection);
      const touched = await r.collections.deleteRowsOf(expansionId, ids);
      await r.collections.recomputeMembers(expansionId, 'c', touched.c);
      await r.collections.recomputeMembers(expansionId, 'm', touched.m);
      await r.collections.touchExpansion(expansionId);
      await announceChange(r, collection, actor, 'REFERENCES_REMOVED');
      const removed = new Set(ids);
      return current
        .filter((c) => removed.has(c.id))
        .map((c) => ({ id: c.id, expression: c.expression }));
    });
  }

  /** HEAD of a collection the caller may change the references of. */
  private async writableCollection(ctx: ServiceContext, ref: RepoRef): Promise<RepoView> {
    if (ref.version !== undefined && ref.version !== HEAD) {
      throw new AppError(
        'NOT_ALLOWED',
        `Version '${ref.version}' is frozen; references are added to and removed from HEAD.`,
      );
    }
    const collection = await collectionAt(this.repositories, ctx, { ...ref, version: undefined });
    await authorize(ctx, { action: 'repo.editContent', repo: collection.repo });
    return collection;
  }
}

function refused(reference: NewReference, message: string): AddedReference {
  return { added: false, expression: reference.expression, message };
}

/** The owner of a collection as a path names it (a `/user/` path becomes the user's own). */
function ownerRefOf(view: RepoView): OwnerRef {
  return view.owner.type === 'Organization'
    ? { type: 'org', id: view.owner.id }
    : { type: 'user', username: view.owner.id };
}
