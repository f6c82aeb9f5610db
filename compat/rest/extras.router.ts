import { Router, type Request } from 'express';
import {
  extraOf,
  withExtra,
  withoutExtra,
  type RepoRef,
  type ServiceContext,
  type Services,
} from '../../src/services';
import { noContent, ok, onlyMethods, param, route } from '../http';
import { OWNER_PREFIXES } from './owners';

type Extras = Record<string, unknown> | null;

/** How one kind of resource reads and saves its extras (through its own service). */
interface ExtrasAccess {
  label: (req: Request) => string;
  read: (req: Request, ctx: ServiceContext) => Promise<Extras>;
  write: (req: Request, ctx: ServiceContext, extras: Extras) => Promise<Extras>;
}

/**
 * `…/extras/` and `…/extras/:name/` (spec operations §4.9) for orgs, users, sources, collections
 * and mappings; concepts have their own (each change there is a new concept version). Mounted
 * before the routers whose parameter segments would take these paths.
 */
export function extrasRouter(services: Services): Router {
  const router = Router();
  const { orgs, users, repositories, mappings } = services;

  mount(router, '/orgs/:org', {
    label: (req) => `organization '${param(req, 'org')}'`,
    read: async (req, ctx) => (await orgs.get(ctx, param(req, 'org'))).extras,
    write: async (req, ctx, extras) =>
      (await orgs.update(ctx, param(req, 'org'), { extras })).extras,
  });
  mount(router, '/users/:user', {
    label: (req) => `user '${param(req, 'user')}'`,
    read: async (req, ctx) => (await users.get(ctx, param(req, 'user'))).extras,
    write: async (req, ctx, extras) =>
      (await users.update(ctx, param(req, 'user'), { extras })).extras,
  });
  mount(router, '/user', {
    label: () => 'the signed-in user',
    read: async (_req, ctx) => (await users.me(ctx)).extras,
    write: async (_req, ctx, extras) => (await users.update(ctx, undefined, { extras })).extras,
  });

  for (const owner of OWNER_PREFIXES) {
    for (const [segment, kind] of [
      ['sources', 'source'],
      ['collections', 'collection'],
    ] as const) {
      const ref = (req: Request): RepoRef => ({
        owner: owner.ref(req),
        kind,
        id: param(req, 'repo'),
      });
      mount(router, `${owner.prefix}/${segment}/:repo`, {
        label: (req) => `${kind} '${param(req, 'repo')}'`,
        read: async (req, ctx) => (await repositories.get(ctx, ref(req))).repo.extras,
        write: async (req, ctx, extras) =>
          (await repositories.update(ctx, ref(req), { extras })).repo.extras,
      });
    }
    const sourceRef = (req: Request): RepoRef => ({
      owner: owner.ref(req),
      kind: 'source',
      id: param(req, 'repo'),
    });
    mount(router, `${owner.prefix}/sources/:repo/mappings/:mapping`, {
      label: (req) => `mapping '${param(req, 'mapping')}'`,
      read: async (req, ctx) =>
        (await mappings.get(ctx, sourceRef(req), param(req, 'mapping'))).version.extras,
      write: async (req, ctx, extras) =>
        (await mappings.update(ctx, sourceRef(req), param(req, 'mapping'), { extras })).version
          .extras,
    });
  }
  return router;
}

function mount(router: Router, base: string, access: ExtrasAccess): void {
  router
    .route(`${base}/extras/`)
    .get(route(async (req, ctx) => ok((await access.read(req, ctx)) ?? {})))
    .all(onlyMethods('GET'));
  router
    .route(`${base}/extras/:name/`)
    .get(
      route(async (req, ctx) => {
        const name = param(req, 'name');
        return ok({ [name]: extraOf(await access.read(req, ctx), name, access.label(req)) });
      }),
    )
    .put(
      route(async (req, ctx) => {
        const name = param(req, 'name');
        // The raw body: `bodyOf` would rename a snake_case attribute.
        const saved = await access.write(
          req,
          ctx,
          withExtra(await access.read(req, ctx), name, req.body),
        );
        return ok({ [name]: saved?.[name] });
      }),
    )
    .delete(
      route(async (req, ctx) => {
        const name = param(req, 'name');
        await access.write(
          req,
          ctx,
          withoutExtra(await access.read(req, ctx), name, access.label(req)),
        );
        return noContent();
      }),
    )
    .all(onlyMethods('GET', 'PUT', 'DELETE'));
}
