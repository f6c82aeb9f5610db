import { z } from 'zod';
import { HEAD, type RepositoryEntity } from '../../db/entities';
import { AppError } from '../../errors';
import {
  AUTO_EXPANSION,
  isUniqueViolation,
  type ExpansionCounts,
  type ExpansionRow,
  type Repositories,
} from '../../repositories';
import { authorize, requireUser, viewerOf } from '../shared/access';
import { mayViewRepo } from '../shared/paths';
import type { ServiceContext } from '../shared/context';
import { parseExpansionParameters } from './expansion-parameters';
import { pageOf, windowOf, type ListParams, type Page } from '../shared/list';
import type { ReferenceResolver } from './reference-resolver';
import type { RepositoryService, RepoView } from '../content/repository.service';
import { repoUrl, type RepoRef } from '../shared/urls';
import { mnemonic, parseInput } from '../shared/validation';
import {
  collectionAt,
  evaluateVersion,
  resolutionChanges,
  resolveFor,
  type ResolutionChange,
} from './evaluation';

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

/** The schemas the service validates its input with, for the API reference. */
export const expansionInput = { create: expansionCreateSchema };

/**
 * What re-evaluating a collection version's default expansion tells what was made from it (the
 * version's export); the composition root (src/services/index.ts) passes the listener in.
 */
export interface ExpansionEvents {
  /**
   * Inside the re-evaluation's transaction, on its repositories: refuses while a file of the
   * version is being written, withdraws a written one, and answers what to do once committed.
   */
  defaultReevaluated(r: Repositories, versionId: string): Promise<() => Promise<void>>;
}

/**
 * Expansions of collection versions (spec operations §2.1, §4.1): made with their parameters,
 * listed with their summaries and deleted; a new version evaluates its own default one.
 */
export class CollectionExpansions {
  constructor(
    private readonly repos: Repositories,
    private readonly repositories: RepositoryService,
    private readonly resolver: ReferenceResolver,
    private readonly events: ExpansionEvents,
  ) {}

  /** spec operations §4.1: an expansion of a collection version with its parameters. */
  async createExpansion(ctx: ServiceContext, ref: RepoRef, input: unknown): Promise<ExpansionView> {
    const actor = requireUser(ctx);
    const collection = await collectionAt(this.repositories, ctx, ref);
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
        const resolved = await resolveFor(this.resolver, ctx, collection, parsed, references, r);
        const id = await r.collections.insertExpansion({
          collectionId: collection.repo.id,
          versionId: collection.version.id,
          mnemonic: data.mnemonic,
          parameters: stored,
          canonicalUrl: data.canonicalUrl ?? collection.repo.canonicalUrl,
          createdBy: actor.username,
        });
        await evaluateVersion(
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
    const collection = await collectionAt(this.repositories, ctx, ref);
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
    const collection = await collectionAt(this.repositories, ctx, ref);
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

  /**
   * OCL's `processing/`: whether the expansion is being evaluated. Ours are evaluated before
   * they are answered (a create, a re-evaluation), so a reader sees one only once evaluated.
   */
  async processing(ctx: ServiceContext, ref: RepoRef, mnemonic: string): Promise<boolean> {
    return (await this.getExpansion(ctx, ref, mnemonic)).expansion.isProcessing;
  }

  /**
   * OCL's `resolved-repo-updates/`: each repository version the expansion resolved whose
   * reference now resolves (as the caller, as re-evaluating would) to another version: a
   * canonical URL without a version to a newer release. Empty when re-evaluating would read the
   * same versions. (OCL compares with each repository's newest release; ours tells what
   * `re-evaluate/` would change, so that the two agree.)
   */
  async repoUpdates(
    ctx: ServiceContext,
    ref: RepoRef,
    mnemonic: string,
  ): Promise<ResolutionChange[]> {
    const { collection, expansion } = await this.getExpansion(ctx, ref, mnemonic);
    const { parsed } = parseExpansionParameters(expansion.parameters);
    const references = await this.repos.collections.referencesAt(
      collection.repo.id,
      collection.version.seq,
    );
    return resolutionChanges(
      this.resolver,
      ctx,
      collection,
      parsed,
      references,
      expansion.resolved,
      this.repos,
    );
  }

  /**
   * OCL's `re-evaluate/`: evaluates the expansion's references again with its parameters, in
   * place, as the caller (an editor of the collection): references without a version now read
   * what their repositories resolve to. Members that leave or join are recorded as changes (a
   * subscriber's `updatedSince` sees them); under the collection's lock, as reference edits are.
   * A version's default expansion re-evaluated withdraws the version's export (it showed the old
   * members); refused (409) while that export is being written.
   */
  async reevaluate(ctx: ServiceContext, ref: RepoRef, mnemonic: string): Promise<ExpansionView> {
    requireUser(ctx);
    const collection = await collectionAt(this.repositories, ctx, ref);
    await authorize(ctx, { action: 'repo.edit', repo: collection.repo });
    const found = await this.findExpansion(collection, mnemonic);
    const { parsed } = parseExpansionParameters(found.parameters);
    // HEAD's auto-expansion follows its references' targets; every other one pins its members.
    const follows = collection.version.mnemonic === HEAD && found.mnemonic === AUTO_EXPANSION;
    const after = await this.repos.transaction(async (r) => {
      await r.repos.lockHead(collection.repo.id);
      // Read again under the lock: a parallel delete or re-evaluation committed first.
      const expansion = await r.collections.findExpansion(collection.version.id, mnemonic);
      if (!expansion) throw expansionNotFound(collection, mnemonic);
      const version = await r.repos.findVersion(collection.repo.id, collection.version.mnemonic);
      const done =
        version?.expansionId === expansion.id
          ? await this.events.defaultReevaluated(r, collection.version.id)
          : null;
      const references = await r.collections.referencesAt(
        collection.repo.id,
        collection.version.seq,
      );
      const resolved = await resolveFor(this.resolver, ctx, collection, parsed, references, r);
      await r.collections.clearReferenceRows(expansion.id);
      await evaluateVersion(
        r,
        { expansionId: expansion.id, parameters: parsed, resolved, pinAll: !follows },
        references,
      );
      return { id: expansion.id, done };
    });
    await after.done?.();
    return { collection, expansion: (await this.repos.collections.findExpansionById(after.id))! };
  }

  /** Deletes an expansion; never the auto-expansion HEAD keeps following its references. */
  async deleteExpansion(ctx: ServiceContext, ref: RepoRef, mnemonic: string): Promise<void> {
    const collection = await collectionAt(this.repositories, ctx, ref);
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
      const resolved = await resolveFor(this.resolver, ctx, head, {}, references, r);
      const expansionId = await r.collections.insertExpansion({
        collectionId: collection.repo.id,
        versionId: collection.version.id,
        mnemonic: `autoexpand-${collection.version.mnemonic}`,
        parameters: {},
        canonicalUrl: collection.repo.canonicalUrl,
        createdBy: collection.version.createdBy,
      });
      await evaluateVersion(r, { expansionId, parameters: {}, resolved, pinAll: true }, references);
      await r.collections.setDefaultExpansion(collection.version.id, expansionId);
      collection.version.expansionId = expansionId;
    };
  }

  /**
   * A collection version's default expansion (or the one named) and the member repositories the
   * caller may see (their rows tell when their content last changed).
   */
  async readableExpansion(
    ctx: ServiceContext,
    ref: RepoRef | RepoView,
    expansionMnemonic?: string,
  ): Promise<ReadableMembers> {
    const collection = await collectionAt(this.repositories, ctx, ref);
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
}

function expansionTaken(collection: RepoView, mnemonic: string): AppError {
  return new AppError(
    'CONFLICT',
    `Version '${collection.version.mnemonic}' already has an expansion '${mnemonic}'.`,
  );
}

function expansionNotFound(collection: RepoView, mnemonic: string): AppError {
  return AppError.notFound(`Expansion '${mnemonic}' of version '${collection.version.mnemonic}'`);
}
