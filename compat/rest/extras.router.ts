import { Router, type Request } from 'express';
import { extraOf, type RepoRef, type ServiceContext, type Services } from '../../src/services';
import { noContent, ok, onlyMethods, param, route } from '../http';
import { OWNER_PREFIXES } from './owners';

type Extras = Record<string, unknown> | null;

/**
 * How one kind of resource reads its extras and sets or removes one of them, through its own
 * service: the service changes the one attribute, so parallel writes of others are kept.
 */
interface ExtrasAccess {
  label: (req: Request) => string;
  read: (req: Request, ctx: ServiceContext) => Promise<Extras>;
  /** Answers the value stored. */
  set: (req: Request, ctx: ServiceContext, name: string, body: unknown) => Promise<unknown>;
  remove: (req: Request, ctx: ServiceContext, name: string) => Promise<void>;
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
    set: (req, ctx, name, body) => orgs.setExtra(ctx, param(req, 'org'), name, body),
    remove: (req, ctx, name) => orgs.removeExtra(ctx, param(req, 'org'), name),
  });
  mount(router, '/users/:user', {
    label: (req) => `user '${param(req, 'user')}'`,
    read: async (req, ctx) => (await users.get(ctx, param(req, 'user'))).extras,
    set: (req, ctx, name, body) => users.setExtra(ctx, param(req, 'user'), name, body),
    remove: (req, ctx, name) => users.removeExtra(ctx, param(req, 'user'), name),
  });
  mount(router, '/user', {
    label: () => 'the signed-in user',
    read: async (_req, ctx) => (await users.me(ctx)).extras,
    set: (_req, ctx, name, body) => users.setExtra(ctx, undefined, name, body),
    remove: (_req, ctx, name) => users.removeExtra(ctx, undefined, name),
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
        set: (req, ctx, name, body) => repositories.setExtra(ctx, ref(req), name, body),
        remove: (req, ctx, name) => repositories.removeExtra(ctx, ref(req), name),
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
      set: async (req, ctx, name, body) =>
        (await mappings.setExtra(ctx, sourceRef(req), param(req, 'mapping'), name, body)).version
          .extras?.[name],
      remove: async (req, ctx, name) => {
        await mappings.removeExtra(ctx, sourceRef(req), param(req, 'mapping'), name);
      },
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
        return ok({ [name]: await access.set(req, ctx, name, req.body) });
      }),
    )
    .delete(
      route(async (req, ctx) => {
        await access.remove(req, ctx, param(req, 'name'));
        return noContent();
      }),
    )
    .all(onlyMethods('GET', 'PUT', 'DELETE'));
}
