import { Router, type Request } from 'express';
import { type ConceptView, type Page, type RepoRef, type Services } from '../../src/services';
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
  conceptDetail,
  conceptDetailOf,
  conceptItem,
  conceptItemUrl,
  conceptSummary,
  conceptVersionEntry,
} from './concept.mapper';
import { OWNER_PREFIXES } from './owners';

const FILTERS = ['conceptClass', 'datatype', 'locale', 'includeRetired'];
/** `/concepts/` also narrows by source id, owner username or org id (spec core §4.3). */
const GLOBAL_FILTERS = [...FILTERS, 'source', 'user', 'org', 'mapcode'];

/**
 * spec core §4.3: concepts of a source, at HEAD or as of a source version; edits go to HEAD and
 * are refused (405) through a version path. Mounted before the repository routes, whose
 * `:version` segment would otherwise take `concepts`.
 */
export function conceptRouter(services: Services): Router {
  const { concepts } = services;
  // The detail reads come first: the most frequent request need not walk past every other
  // concept route (no other route here takes their paths).
  const reads = Router();
  const router = Router();

  router
    .route('/concepts/')
    .get(
      route(async (req, ctx) =>
        conceptListReply(req, await concepts.listPublic(ctx, listParams(req, GLOBAL_FILTERS))),
      ),
    )
    .all(onlyMethods('GET'));

  for (const owner of OWNER_PREFIXES) {
    const source = (req: Request, version?: string): RepoRef => ({
      owner: owner.ref(req),
      kind: 'source',
      id: param(req, 'source'),
      version,
    });
    for (const base of [
      `${owner.prefix}/sources/:source`,
      `${owner.prefix}/sources/:source/:version`,
    ]) {
      const at = (req: Request): RepoRef =>
        source(req, req.params.version === undefined ? undefined : param(req, 'version'));
      const listPath = `${base}/concepts/`;
      const conceptPath = `${listPath}:concept/`;

      router
        .route(listPath)
        .get(
          route(async (req, ctx) =>
            conceptListReply(req, await concepts.list(ctx, at(req), listParams(req, FILTERS))),
          ),
        )
        .post(
          route(async (req, ctx) => {
            const made = await concepts.create(ctx, at(req), bodyOf(req));
            return created(
              conceptDetailOf(made),
              (conceptSummary(made.view) as { url: string }).url,
            );
          }),
        )
        .all(onlyMethods('GET', 'POST'));

      router
        .route(`${conceptPath}versions/`)
        .get(
          route(async (req, ctx) =>
            list(
              await services.summaries.conceptHistory(
                ctx,
                at(req),
                param(req, 'concept'),
                listParams(req),
                holdersAsked(req),
              ),
              conceptVersionEntry,
              req,
            ),
          ),
        )
        .all(onlyMethods('GET'));
      router
        .route(`${conceptPath}reactivate/`)
        .put(
          route(async (req, ctx) => {
            await concepts.reactivate(ctx, at(req), param(req, 'concept'));
            return { kind: 'empty', status: 204 };
          }),
        )
        .all(onlyMethods('PUT'));

      // Names, descriptions and extras (spec core §2.6, operations §4.9): read at the concept's
      // latest version or at one of its versions; written only at the latest (405 otherwise).
      // Before `:conceptVersion/`, which would otherwise take `names` for a version id.
      const conceptVersion = (req: Request): string | undefined =>
        req.params.conceptVersion === undefined ? undefined : param(req, 'conceptVersion');
      for (const [conceptAt, writable] of [
        [conceptPath, true],
        [`${conceptPath}:conceptVersion/`, false],
      ] as const) {
        const reads = (...writes: string[]) => onlyMethods('GET', ...(writable ? writes : []));
        for (const part of ['names', 'descriptions'] as const) {
          const listRoute = router.route(`${conceptAt}${part}/`).get(
            route(async (req, ctx) => {
              const view = await concepts.get(
                ctx,
                at(req),
                param(req, 'concept'),
                conceptVersion(req),
              );
              return ok(view.version[part].map((item) => conceptItem(part, item)));
            }),
          );
          const itemRoute = router.route(`${conceptAt}${part}/:uuid/`).get(
            route(async (req, ctx) => {
              const { item } = await concepts.getItem(
                ctx,
                at(req),
                param(req, 'concept'),
                part,
                param(req, 'uuid'),
                conceptVersion(req),
              );
              return ok(conceptItem(part, item));
            }),
          );
          if (writable) {
            listRoute.post(
              route(async (req, ctx) => {
                const view = await concepts.addItem(
                  ctx,
                  at(req),
                  param(req, 'concept'),
                  part,
                  bodyOf(req),
                );
                return created(
                  conceptItem(part, view.item),
                  conceptItemUrl(view, part, view.item.uuid),
                );
              }),
            );
            const editItem = route(async (req, ctx) => {
              const view = await concepts.updateItem(
                ctx,
                at(req),
                param(req, 'concept'),
                part,
                param(req, 'uuid'),
                bodyOf(req),
              );
              return ok(conceptItem(part, view.item));
            });
            itemRoute
              .put(editItem)
              .patch(editItem)
              .delete(
                route(async (req, ctx) => {
                  await concepts.removeItem(
                    ctx,
                    at(req),
                    param(req, 'concept'),
                    part,
                    param(req, 'uuid'),
                  );
                  return noContent();
                }),
              );
          }
          listRoute.all(reads('POST'));
          itemRoute.all(reads('PUT', 'PATCH', 'DELETE'));
        }

        router
          .route(`${conceptAt}extras/`)
          .get(
            route(async (req, ctx) => {
              const view = await concepts.get(
                ctx,
                at(req),
                param(req, 'concept'),
                conceptVersion(req),
              );
              return ok(view.version.extras ?? {});
            }),
          )
          .all(onlyMethods('GET'));
        const extraRoute = router.route(`${conceptAt}extras/:name/`).get(
          route(async (req, ctx) => {
            const name = param(req, 'name');
            const value = await concepts.getExtra(
              ctx,
              at(req),
              param(req, 'concept'),
              name,
              conceptVersion(req),
            );
            return ok({ [name]: value });
          }),
        );
        if (writable) {
          extraRoute
            .put(
              route(async (req, ctx) => {
                const name = param(req, 'name');
                // The raw body: `bodyOf` would rename a snake_case attribute.
                const view = await concepts.setExtra(
                  ctx,
                  at(req),
                  param(req, 'concept'),
                  name,
                  req.body,
                );
                return ok({ [name]: view.version.extras?.[name] });
              }),
            )
            .delete(
              route(async (req, ctx) => {
                await concepts.removeExtra(ctx, at(req), param(req, 'concept'), param(req, 'name'));
                return noContent();
              }),
            );
        }
        extraRoute.all(reads('PUT', 'DELETE'));
      }

      const edit = (mode: 'partial' | 'replace') =>
        route(async (req, ctx) =>
          ok(
            conceptDetailOf(
              await concepts.update(ctx, at(req), param(req, 'concept'), bodyOf(req), mode),
            ),
          ),
        );
      reads
        .route(conceptPath)
        .get(
          route(async (req, ctx) => {
            const include = {
              mappings: req.query.includeMappings === undefined || flag(req.query.includeMappings),
              inverseMappings: flag(req.query.includeInverseMappings),
            };
            return ok(
              conceptDetailOf(
                await concepts.detail(ctx, at(req), param(req, 'concept'), undefined, include),
              ),
            );
          }),
        )
        .post(edit('partial'))
        .patch(edit('partial'))
        .put(edit('replace'))
        .delete(
          route(async (req, ctx) => {
            const body = bodyOf(req);
            await concepts.retire(
              ctx,
              at(req),
              param(req, 'concept'),
              body.updateComment ?? body.comment,
            );
            return { kind: 'empty', status: 204 };
          }),
        );

      router
        .route(`${conceptPath}:conceptVersion/`)
        .get(
          route(async (req, ctx) =>
            ok(
              conceptDetailOf(
                await concepts.detail(
                  ctx,
                  at(req),
                  param(req, 'concept'),
                  param(req, 'conceptVersion'),
                ),
              ),
            ),
          ),
        )
        .all(onlyMethods('GET'));
    }
  }
  reads.use(router);
  return reads;
}

/** Summaries, or details with `verbose=true` (the list read their version counts). */
export function conceptListReply(req: Request, page: Page<ConceptView>): Reply {
  if (!flag(req.query.verbose)) return list(page, conceptSummary, req);
  return list(page, (view: ConceptView) => conceptDetail(view, view.versionCount ?? 0), req);
}
