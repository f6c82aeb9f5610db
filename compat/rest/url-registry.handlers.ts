import type { Request } from 'express';
import { AppError } from '../../src/errors';
import { registryEntryUrl, type OwnerRef, type Services } from '../../src/services';
import { bodyOf, created, list, listParams, noContent, ok, param, queryString } from '../http';
import { ownerOf } from './owners';
import { repoSummary } from './repo.mapper';
import { handlers } from './table';
import { registryEntry } from './url-registry.mapper';

/**
 * spec operations §4.6: the canonical URL registries, the global one (`/url-registry/`) and the
 * owners' (`/orgs/:org/url-registry/`, `/users/:user/…`, `/user/…`).
 */
export function urlRegistryHandlers(services: Services) {
  return {
    global: registryHandlers(services, () => null),
    owned: registryHandlers(services, ownerOf),
  };
}

function registryHandlers(services: Services, ref: (req: Request) => OwnerRef | null) {
  const { urlRegistry } = services;
  const update = async (req: Request, ctx: Parameters<typeof urlRegistry.update>[0]) =>
    ok(registryEntry(await urlRegistry.update(ctx, ref(req), param(req, 'id'), bodyOf(req))));
  return handlers({
    lookup: async (req, ctx) => {
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
    },
    list: async (req, ctx) => {
      const params = listParams(req, ['namespace']);
      const url = queryString(req, 'url')?.trim();
      if (url) params.filters.url = [url];
      return list(await urlRegistry.list(ctx, ref(req), params), registryEntry, req);
    },
    create: async (req, ctx) => {
      const view = await urlRegistry.create(ctx, ref(req), bodyOf(req));
      return created(registryEntry(view), registryEntryUrl(view));
    },
    get: async (req, ctx) =>
      ok(registryEntry(await urlRegistry.get(ctx, ref(req), param(req, 'id')))),
    update,
    remove: async (req, ctx) => {
      await urlRegistry.delete(ctx, ref(req), param(req, 'id'));
      return noContent();
    },
  });
}
