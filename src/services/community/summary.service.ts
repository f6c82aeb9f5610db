import { AppError } from '../../errors';
import { authorize } from '../shared/access';
import type { ContentSummary, Repositories } from '../../repositories';
import { viewerOf } from '../shared/actor';
import type { ServiceContext } from '../shared/context';
import type { ConceptService, ConceptView } from '../content/concept.service';
import type { ListParams, Page } from '../shared/list';
import type { MappingItem } from '../content/mapping-views';
import type { MappingService } from '../content/mapping.service';
import type { RepoView } from '../shared/paths';
import type { RepositoryService } from '../content/repository.service';
import type { RepoRef } from '../shared/urls';
import { repoUrl } from '../shared/urls';

/** A repository version's summary (OCL `{repo}[/:version]/summary/`). */
export interface RepoSummary {
  view: RepoView;
  activeConcepts: number;
  activeMappings: number;
  versions: { total: number; released: number };
  /** With `verbose`: counts by property. */
  content?: ContentSummary;
}

/** The distributions `summary/?verbose=true&distribution=…` may ask for (OCL's names). */
export const DISTRIBUTIONS = [
  'concept_class',
  'datatype',
  'name_type',
  'name_locale',
  'map_type',
  'concepts_extras',
] as const;

export type DistributionName = (typeof DISTRIBUTIONS)[number];

/** The repository versions that hold one concept or mapping version (as URLs). */
export interface VersionHolders {
  sourceVersions: string[];
  collectionVersions: string[];
}

/** Summaries the web client shows beside content: repository totals, version membership. */
export class SummaryService {
  constructor(
    private readonly repos: Repositories,
    private readonly repositories: RepositoryService,
    private readonly concepts: ConceptService,
    private readonly mappings: MappingService,
  ) {}

  /**
   * OCL's summary refresh (`PUT …/summary/`): its editors may ask; summaries here are computed
   * on every read, so there is nothing to redo.
   */
  async refresh(ctx: ServiceContext, ref: RepoRef): Promise<void> {
    const view = await this.repositories.get(ctx, ref);
    await authorize(ctx, { action: 'repo.edit', repo: view.repo });
  }

  /**
   * A concept's versions, newest first, each with the repository versions that hold it when
   * `holders` (OCL's `includeSourceVersions` / `includeCollectionVersions`).
   */
  async conceptHistory(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    params: ListParams,
    holders: boolean,
  ): Promise<Page<ConceptView & { holders?: VersionHolders }>> {
    const page = await this.concepts.listVersions(ctx, sourceRef, id, params);
    if (!holders) return page;
    const items = await Promise.all(
      page.items.map(async (v) => ({
        ...v,
        holders: await this.versionHolders(ctx, 'concept', v.version.id),
      })),
    );
    return { ...page, items };
  }

  /** A mapping's versions, as `conceptHistory`. */
  async mappingHistory(
    ctx: ServiceContext,
    sourceRef: RepoRef,
    id: string,
    params: ListParams,
    holders: boolean,
  ): Promise<Page<MappingItem & { holders?: VersionHolders }>> {
    const page = await this.mappings.listVersions(ctx, sourceRef, id, params);
    if (!holders) return page;
    const items = await Promise.all(
      page.items.map(async (v) => ({
        ...v,
        holders: await this.versionHolders(ctx, 'mapping', v.view.version.id),
      })),
    );
    return { ...page, items };
  }

  /**
   * The summary of a repository at HEAD or a version: its active content and versions, and with
   * `verbose` the content counted by class, datatype, locale, name type and map type (a
   * collection's from its version's default expansion).
   */
  async repoSummary(
    ctx: ServiceContext,
    ref: RepoRef,
    options: { verbose: boolean; distribution?: string[] },
  ): Promise<RepoSummary> {
    const unknown = (options.distribution ?? []).find(
      (d) => !(DISTRIBUTIONS as readonly string[]).includes(d),
    );
    if (unknown !== undefined) {
      throw AppError.field(
        'distribution',
        `Unknown distribution '${unknown}'; use ${DISTRIBUTIONS.join(', ')}.`,
      );
    }
    return this.summarize(ctx, await this.repositories.get(ctx, ref), options.verbose);
  }

  /**
   * The summary of a repository version the caller has read (`repoSummary`); the version totals
   * and counts of many (a versions list) are read together.
   */
  async summarize(ctx: ServiceContext, view: RepoView, verbose: boolean): Promise<RepoSummary> {
    const [counts, versions, content] = await Promise.all([
      this.repositories.counts(ctx, view),
      ctx.loaders.versionTotals.load(view.repo.id),
      verbose
        ? this.repos.summaries.contentSummary(
            view.repo.kind === 'source'
              ? { kind: 'source', repositoryId: view.repo.id, seq: view.version.seq }
              : { kind: 'expansion', expansionId: view.version.expansionId },
            viewerOf(ctx.actor),
          )
        : Promise.resolve(undefined),
    ]);
    return {
      view,
      activeConcepts: counts.activeConcepts,
      activeMappings: counts.activeMappings,
      versions,
      content,
    };
  }

  /**
   * The source versions that froze a concept or mapping version and the collection versions
   * that hold it (those the caller may see), as URLs; for versions the caller has read. The
   * versions of one request are looked up together.
   */
  async versionHolders(
    ctx: ServiceContext,
    object: 'concept' | 'mapping',
    versionId: string,
  ): Promise<VersionHolders> {
    const rows = await ctx.loaders.versionHolders.load(`${object}|${versionId}`);
    const views = await this.repositories.headViews(ctx, [
      ...new Set(rows.map((r) => r.repository_id)),
    ]);
    const holders: VersionHolders = { sourceVersions: [], collectionVersions: [] };
    for (const row of rows) {
      const view = views.get(row.repository_id);
      if (!view) continue;
      const url = repoUrl(view.owner, view.repo.kind, view.repo.mnemonic, row.mnemonic);
      (row.kind === 'Source' ? holders.sourceVersions : holders.collectionVersions).push(url);
    }
    return holders;
  }
}
