import { Router, type Request } from 'express';
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
import {
  bodyOf,
  created,
  flag,
  list,
  listParams,
  noContent,
  ok,
  onlyMethods,
  param,
  route,
  type Reply,
} from '../http';
import { documentReply } from './repo-document';
import {
  repoDetail,
  repoDetailBody,
  repoSummary,
  summaryOf,
  versionDetail,
  versionSummary,
} from './repo.mapper';
import { OWNER_PREFIXES } from './owners';

const KINDS: Array<{ segment: string; kind: RepositoryKind }> = [
  { segment: 'sources', kind: 'source' },
  { segment: 'collections', kind: 'collection' },
];

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

/** spec core §4.5–4.7 and §9: sources, collections, their versions and the combined listing. */
export function repoRouter(services: Services): Router {
  const { repositories } = services;
  const router = Router();

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

  router.get(
    '/repos/',
    route(async (req, ctx) => listReply(req, ctx, {})),
  );
  for (const { segment, kind } of KINDS) {
    // spec core §4.5, §4.6: the global lists show public repositories only.
    router.get(
      `/${segment}/`,
      route(async (req, ctx) => listReply(req, ctx, { kind, publicOnly: true })),
    );
    router.get(
      `/users/:user/orgs/${segment}/`,
      route(async (req, ctx) =>
        listReply(req, ctx, { kind, ofOrgsOf: { type: 'user', username: param(req, 'user') } }),
      ),
    );
    router.get(
      `/user/orgs/${segment}/`,
      route(async (req, ctx) => listReply(req, ctx, { kind, ofOrgsOf: { type: 'self' } })),
    );
  }

  for (const owner of OWNER_PREFIXES) {
    router.get(
      `${owner.prefix}/repos/`,
      route(async (req, ctx) => listReply(req, ctx, { owner: owner.ref(req) })),
    );

    for (const { segment, kind } of KINDS) {
      const collectionPath = `${owner.prefix}/${segment}/`;
      const repoPath = `${collectionPath}:repo/`;
      const ref = (req: Request, version?: string): RepoRef => ({
        owner: owner.ref(req),
        kind,
        id: param(req, 'repo'),
        version,
      });

      router.get(
        collectionPath,
        route(async (req, ctx) => listReply(req, ctx, { kind, owner: owner.ref(req) })),
      );
      router.post(
        collectionPath,
        route(async (req, ctx) => {
          const made = await repositories.create(ctx, owner.ref(req), kind, bodyOf(req));
          return created(repoDetailOf(made), urlOf(made.view));
        }),
      );

      router
        .route(`${repoPath}versions/`)
        .get(
          route(async (req, ctx) => {
            const page = await repositories.listVersions(ctx, ref(req), countedListParams(req));
            const render = flag(req.query.verbose)
              ? (view: RepoView) => versionDetail(view, view.counts!)
              : versionSummary;
            return list(page, withSummary(req, render), req);
          }),
        )
        .post(
          route(async (req, ctx) => {
            const made = await repositories.createVersion(ctx, ref(req), bodyOf(req));
            return created(repoDetailOf(made), urlOf(made.view));
          }),
        )
        .all(onlyMethods('GET', 'POST'));

      router.get(
        repoPath,
        route(async (req, ctx) => detailReply(req, ctx, ref(req))),
      );
      const update = route(async (req, ctx) =>
        ok(repoDetailOf(await repositories.update(ctx, ref(req), bodyOf(req)))),
      );
      router.route(repoPath).post(update).put(update).patch(update);
      router.delete(
        repoPath,
        route(async (req, ctx) => {
          await repositories.delete(ctx, ref(req));
          return noContent();
        }),
      );

      const versionPath = `${repoPath}:version/`;
      router.get(
        versionPath,
        route(async (req, ctx) => detailReply(req, ctx, ref(req, param(req, 'version')))),
      );
      const updateVersion = route(async (req, ctx) =>
        ok(
          repoDetailOf(
            await repositories.updateVersion(ctx, ref(req, param(req, 'version')), bodyOf(req)),
          ),
        ),
      );
      router.route(versionPath).post(updateVersion).put(updateVersion).patch(updateVersion);
      router.delete(
        versionPath,
        route(async (req, ctx) => {
          await repositories.deleteVersion(ctx, ref(req, param(req, 'version')));
          return noContent();
        }),
      );
    }
  }
  return router;
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
