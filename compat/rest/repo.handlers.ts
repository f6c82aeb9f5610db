import type { Request } from 'express';
import type { RepositoryKind } from '../../src/db/entities';
import {
  type ListParams,
  type Page,
  type RepoRef,
  type RepoScope,
  type RepoDetail,
  type RepoView,
  type ServiceContext,
  type Services,
} from '../../src/services';
import { bodyOf, created, flag, list, listParams, noContent, ok, param, type Reply } from '../http';
import { documentReply } from './repo-document';
import {
  repoDetail,
  repoDetailBody,
  repoSummary,
  summaryOf,
  versionDetail,
  versionSummary,
} from './repo.mapper';
import { ownerOf, repoOf } from './owners';
import { handlers } from './table';

/** List filters of spec core §4.5–4.7 (`collection_type` is also accepted as `collectionType`). */
const FILTERS = [
  'sourceType',
  'collectionType',
  'collection_type',
  'locale',
  'customValidationSchema',
  'canonicalUrl',
  'contains',
  'ownerType',
  'repoType',
];

/**
 * spec core §4.5–4.7 and §9: sources, collections, their versions and the combined listing. The
 * list and create paths (`/orgs/:org/sources/`) name the kind by a literal segment, so each kind
 * has its own handlers; below a repository, `:source` or `:collection` names it.
 */
export function repoHandlers(services: Services) {
  const { repositories } = services;

  /**
   * spec core §4.5/§4.6 get parameters, operations §4.10: the detail, with the children it asks
   * for streamed (`limit`/`offset` window each list; `Compress: true` zips all of them).
   */
  const detailReply = async (req: Request, ctx: ServiceContext, at: RepoRef): Promise<Reply> => {
    const include = {
      concepts: flag(req.query.includeConcepts),
      mappings: flag(req.query.includeMappings),
      references: flag(req.query.includeReferences),
    };
    const summary = flag(req.query.includeSummary);
    if (!include.concepts && !include.mappings && !include.references) {
      return ok(repoDetailBody(await services.repositoryDetails.detail(ctx, at), summary));
    }
    const compress = flag(req.get('compress'));
    const params = listParams(req, ['includeRetired']);
    // Paging is off for a compressed answer (spec operations §4.10 step 4).
    if (compress) Object.assign(params, { limit: 0, offset: 0 });
    const view = await repositories.get(ctx, at);
    return documentReply(services, ctx, view, { ...include, params }, compress, summary);
  };

  const listReply = async (req: Request, ctx: ServiceContext, scope: RepoScope): Promise<Reply> =>
    repoListReply(req, await repositories.list(ctx, countedListParams(req), scope));

  const ofKind = (kind: RepositoryKind) =>
    handlers({
      // spec core §4.5, §4.6: the global lists show public repositories only.
      listPublic: async (req, ctx) => listReply(req, ctx, { kind, publicOnly: true }),
      /** `/users/:user/orgs/sources/`, `/user/orgs/sources/`: of all the user's orgs. */
      ofUserOrgs: async (req, ctx) =>
        listReply(req, ctx, {
          kind,
          ofOrgsOf:
            req.params.user === undefined
              ? { type: 'self' }
              : { type: 'user', username: param(req, 'user') },
        }),
      list: async (req, ctx) => listReply(req, ctx, { kind, owner: ownerOf(req) }),
      create: async (req, ctx) => {
        const made = await repositories.create(ctx, ownerOf(req), kind, bodyOf(req));
        return created(repoDetailOf(made), urlOf(made.view));
      },
    });

  return {
    all: handlers({
      listPublic: async (req, ctx) => listReply(req, ctx, {}),
      list: async (req, ctx) => listReply(req, ctx, { owner: ownerOf(req) }),
    }),
    source: ofKind('source'),
    collection: ofKind('collection'),
    /** One source or collection (`:source`/`:collection`), at HEAD or at `:version`. */
    repo: handlers({
      get: async (req, ctx) => detailReply(req, ctx, repoOf(req)),
      update: async (req, ctx) =>
        ok(repoDetailOf(await repositories.update(ctx, repoOf(req), bodyOf(req)))),
      remove: async (req, ctx) => {
        await repositories.delete(ctx, repoOf(req));
        return noContent();
      },
      versions: async (req, ctx) => {
        const page = await repositories.listVersions(ctx, repoOf(req), countedListParams(req));
        const render = flag(req.query.verbose)
          ? (view: RepoView) => versionDetail(view, view.counts!)
          : versionSummary;
        return list(page, withSummary(req, render), req);
      },
      createVersion: async (req, ctx) => {
        const made = await repositories.createVersion(ctx, repoOf(req), bodyOf(req));
        return created(repoDetailOf(made), urlOf(made.view));
      },
      getVersion: async (req, ctx) => detailReply(req, ctx, repoOf(req)),
      updateVersion: async (req, ctx) =>
        ok(repoDetailOf(await repositories.updateVersion(ctx, repoOf(req), bodyOf(req)))),
      removeVersion: async (req, ctx) => {
        await repositories.deleteVersion(ctx, repoOf(req));
        return noContent();
      },
    }),
  };
}

function repoListParams(req: Request): ListParams {
  const params = listParams(req, FILTERS);
  const { collection_type: snake, collectionType } = params.filters;
  if (snake) params.filters.collectionType = [...(collectionType ?? []), ...snake];
  return params;
}

function urlOf(view: RepoView): string {
  return (repoSummary(view) as { url: string }).url;
}

/** List parameters that read each item's counts when the list shows them (`includeSummary`). */
function countedListParams(req: Request): ListParams {
  const params = repoListParams(req);
  return flag(req.query.includeSummary) ? { ...params, withCounts: true } : params;
}

/** A list item renderer that adds `summary` with `includeSummary=true`. */
function withSummary(req: Request, render: (view: RepoView) => object) {
  if (!flag(req.query.includeSummary)) return render;
  return (view: RepoView): object => ({ ...render(view), summary: summaryOf(view.counts!) });
}

/** Summaries, or details with `verbose=true` (the list read their counts). */
function repoListReply(req: Request, page: Page<RepoView>): Reply {
  if (!flag(req.query.verbose)) return list(page, withSummary(req, repoSummary), req);
  return detailList(req, page);
}

function detailList(req: Request, page: Page<RepoView>): Reply {
  return list(
    page,
    withSummary(req, (view: RepoView) => repoDetail(view, view.counts!)),
    req,
  );
}

function repoDetailOf({ view, counts }: RepoDetail): object {
  return repoDetail(view, counts);
}
