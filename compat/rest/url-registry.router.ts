import { Router, type Request } from 'express';
import { AppError } from '../../src/errors';
import { registryEntryUrl, type OwnerRef, type Services } from '../../src/services';
import {
  bodyOf,
  created,
  list,
  listParams,
  noContent,
  ok,
  onlyMethods,
  param,
  queryString,
  route,
} from '../http';
import { OWNER_PREFIXES } from './owners';
import { repoSummary } from './repo.mapper';
import { registryEntry } from './url-registry.mapper';

/** The global registry (no prefix) and the owner ones (`/orgs/:org`, `/users/:user`, `/user`). */
const REGISTRIES: Array<{ prefix: string; ref: (req: Request) => OwnerRef | null }> = [
  { prefix: '', ref: () => null },
  ...OWNER_PREFIXES,
];

/** spec operations §4.6: the canonical URL registries. */
export function urlRegistryRouter(services: Services): Router {
  const { urlRegistry } = services;
  const router = Router();

  for (const { prefix, ref } of REGISTRIES) {
    const base = `${prefix}/url-registry/`;

    // Before `:id/`, which would otherwise take `$lookup`.
    router
      .route(`${base}$lookup/`)
      .post(
        route(async (req, ctx) => {
          const body: unknown = req.body;
          const fromBody =
            body !== null && typeof body === 'object' && !Array.isArray(body)
              ? (body as Record<string, unknown>).url
              : undefined;
          const url = queryString(req, 'url') ?? fromBody;
          const repo = await urlRegistry.lookup(ctx, ref(req), url);
          // spec operations §4.6: 404 when the URL resolves to nothing.
          if (!repo) throw AppError.notFound(`A repository registered under '${String(url)}'`);
          return ok(repoSummary(repo));
        }),
      )
      .all(onlyMethods('POST'));

    router
      .route(base)
      .get(
        route(async (req, ctx) => {
          const params = listParams(req, ['namespace']);
          const url = queryString(req, 'url')?.trim();
          if (url) params.filters.url = [url];
          return list(await urlRegistry.list(ctx, ref(req), params), registryEntry, req);
        }),
      )
      .post(
        route(async (req, ctx) => {
          const view = await urlRegistry.create(ctx, ref(req), bodyOf(req));
          return created(registryEntry(view), registryEntryUrl(view));
        }),
      );

    const update = route(async (req, ctx) =>
      ok(registryEntry(await urlRegistry.update(ctx, ref(req), param(req, 'id'), bodyOf(req)))),
    );
    router
      .route(`${base}:id/`)
      .get(
        route(async (req, ctx) =>
          ok(registryEntry(await urlRegistry.get(ctx, ref(req), param(req, 'id')))),
        ),
      )
      .put(update)
      .patch(update)
      .delete(
        route(async (req, ctx) => {
          await urlRegistry.delete(ctx, ref(req), param(req, 'id'));
          return noContent();
        }),
      );
  }
  return router;
}
