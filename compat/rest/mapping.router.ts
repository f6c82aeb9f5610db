import { Router, type Request } from 'express';
import type { MappingView, Page, RepoRef, ServiceContext, Services } from '../../src/services';
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
import { mappingDetail, mappingDetailOf, mappingSummary } from './mapping.mapper';
import { OWNER_PREFIXES } from './owners';

/** spec core §4.4 list filters. */
const FILTERS = [
  'mapType',
  'includeRetired',
  'updatedBy',
  'concept',
  'fromConcept',
  'toConcept',
  'conceptSource',
  'fromConceptSource',
  'toConceptSource',
];

/**
 * spec core §4.4: mappings of a source (HEAD or a version), and of one concept. Mounted before
 * the concept and repository routes, whose version segments would otherwise take these paths.
 */
export function mappingRouter(services: Services): Router {
  const { mappings } = services;
  const router = Router();

  router
    .route('/mappings/')
    .get(
      route(async (req, ctx) =>
        mappingListReply(
          services,
          req,
          ctx,
          await mappings.listPublic(ctx, listParams(req, [...FILTERS, 'owner', 'ownerType'])),
        ),
      ),
    )
    .all(onlyMethods('GET'));

  for (const owner of OWNER_PREFIXES) {
    for (const base of [
      `${owner.prefix}/sources/:source`,
      `${owner.prefix}/sources/:source/:version`,
    ]) {
      const at = (req: Request): RepoRef => ({
        owner: owner.ref(req),
        kind: 'source',
        id: param(req, 'source'),
        version: req.params.version === undefined ? undefined : param(req, 'version'),
      });
      const listPath = `${base}/mappings/`;
      const mappingPath = `${listPath}:mapping/`;

      router
        .route(listPath)
        .get(
          route(async (req, ctx) =>
            mappingListReply(
              services,
              req,
              ctx,
              await mappings.list(ctx, at(req), listParams(req, FILTERS)),
            ),
          ),
        )
        .post(
          route(async (req, ctx) => {
            const body = mappingDetailOf(await mappings.create(ctx, at(req), bodyOf(req)));
            return created(body, (body as { url: string }).url);
          }),
        )
        .all(onlyMethods('GET', 'POST'));

      router
        .route(`${base}/concepts/:concept/mappings/`)
        .get(
          route(async (req, ctx) => {
            const params = listParams(req, FILTERS);
            const direct = await mappings.listForConcept(
              ctx,
              at(req),
              param(req, 'concept'),
              false,
              params,
            );
            if (!flag(req.query.includeInverseMappings))
              return mappingListReply(services, req, ctx, direct);
            const inverse = await mappings.listForConcept(
              ctx,
              at(req),
              param(req, 'concept'),
              true,
              params,
            );
            const both: Page<MappingView> = {
              ...direct,
              items: [...direct.items, ...inverse.items],
              total: direct.total + inverse.total,
            };
            return mappingListReply(services, req, ctx, both);
          }),
        )
        .all(onlyMethods('GET'));

      router
        .route(`${mappingPath}versions/`)
        .get(
          route(async (req, ctx) =>
            mappingListReply(
              services,
              req,
              ctx,
              await mappings.listVersions(ctx, at(req), param(req, 'mapping'), listParams(req)),
            ),
          ),
        )
        .all(onlyMethods('GET'));
      router
        .route(`${mappingPath}reactivate/`)
        .put(
          route(async (req, ctx) => {
            await mappings.reactivate(ctx, at(req), param(req, 'mapping'));
            return noContent();
          }),
        )
        .all(onlyMethods('PUT'));

      const edit = route(async (req, ctx) =>
        ok(
          mappingDetailOf(await mappings.update(ctx, at(req), param(req, 'mapping'), bodyOf(req))),
        ),
      );
      router
        .route(mappingPath)
        .get(
          route(async (req, ctx) =>
            ok(mappingDetailOf(await mappings.detail(ctx, at(req), param(req, 'mapping')))),
          ),
        )
        .post(edit)
        .put(edit)
        .patch(edit)
        .delete(
          route(async (req, ctx) => {
            const body = bodyOf(req);
            await mappings.retire(
              ctx,
              at(req),
              param(req, 'mapping'),
              body.updateComment ?? body.comment,
            );
            return noContent();
          }),
        );
      router
        .route(`${mappingPath}:mappingVersion/`)
        .get(
          route(async (req, ctx) =>
            ok(
              mappingDetailOf(
                await mappings.detail(
                  ctx,
                  at(req),
                  param(req, 'mapping'),
                  param(req, 'mappingVersion'),
                ),
              ),
            ),
          ),
        )
        .all(onlyMethods('GET'));
    }
  }
  return router;
}

/** Summaries (or details with `verbose=true`), with every end resolved in one batch per page. */
export async function mappingListReply(
  services: Services,
  req: Request,
  ctx: ServiceContext,
  page: Page<MappingView>,
): Promise<Reply> {
  const ends = await services.mappings.resolveEnds(ctx, page.items);
  if (!flag(req.query.verbose)) {
    return list(page, (view: MappingView) => mappingSummary(view, ends.get(view.version.id)!), req);
  }
  const counts = await Promise.all(
    page.items.map((view) => services.mappings.versionCount(ctx, view)),
  );
  return list(
    page,
    (view: MappingView) =>
      mappingDetail(view, ends.get(view.version.id)!, counts[page.items.indexOf(view)]),
    req,
  );
}
