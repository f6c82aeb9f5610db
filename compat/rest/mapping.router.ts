import { Router, type Request } from 'express';
import type { MappingItem, Page, RepoRef, Services } from '../../src/services';
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
  holdersAsked,
} from '../http';
import {
  mappingDetail,
  mappingDetailOf,
  mappingSummary,
  mappingVersionEntry,
} from './mapping.mapper';
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
  'fromConceptOwner',
  'toConceptOwner',
  'fromConceptOwnerType',
  'toConceptOwnerType',
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
          req,
          await mappings.listPublic(
            ctx,
            listParams(req, [...FILTERS, 'owner', 'ownerType', 'source']),
          ),
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
            mappingListReply(req, await mappings.list(ctx, at(req), listParams(req, FILTERS))),
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
            return mappingListReply(
              req,
              await mappings.listForConcept(
                ctx,
                at(req),
                param(req, 'concept'),
                flag(req.query.includeInverseMappings),
                listParams(req, FILTERS),
              ),
            );
          }),
        )
        .all(onlyMethods('GET'));

      router
        .route(`${mappingPath}versions/`)
        .get(
          route(async (req, ctx) =>
            list(
              await services.summaries.mappingHistory(
                ctx,
                at(req),
                param(req, 'mapping'),
                listParams(req),
                holdersAsked(req),
              ),
              mappingVersionEntry,
              req,
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

/** Summaries, or details with `verbose=true` (the list resolved ends and counted versions). */
export function mappingListReply(req: Request, page: Page<MappingItem>): Reply {
  if (!flag(req.query.verbose)) {
    return list(page, ({ view, ends }: MappingItem) => mappingSummary(view, ends), req);
  }
  return list(
    page,
    ({ view, ends, versionCount }: MappingItem) => mappingDetail(view, ends, versionCount ?? 0),
    req,
  );
}
