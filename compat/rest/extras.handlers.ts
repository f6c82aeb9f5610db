import type { Request } from 'express';
import { extraOf, type RepoRef, type ServiceContext, type Services } from '../../src/services';
import { noContent, ok, param } from '../http';
import { repoOf } from './owners';
import { handlers } from './table';

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
 * and mappings; concepts have their own (each change there is a new concept version).
 */
export function extrasHandlers(services: Services) {
  const { orgs, users, repositories, mappings } = services;
  const sourceOf = (req: Request): RepoRef => ({ ...repoOf(req), version: undefined });
  return {
    org: extrasOf({
      label: (req) => `organization '${param(req, 'org')}'`,
      read: async (req, ctx) => (await orgs.get(ctx, param(req, 'org'))).extras,
      set: (req, ctx, name, body) => orgs.setExtra(ctx, param(req, 'org'), name, body),
      remove: (req, ctx, name) => orgs.removeExtra(ctx, param(req, 'org'), name),
    }),
    user: extrasOf({
      label: (req) => `user '${param(req, 'user')}'`,
      read: async (req, ctx) => (await users.get(ctx, param(req, 'user'))).extras,
      set: (req, ctx, name, body) => users.setExtra(ctx, param(req, 'user'), name, body),
      remove: (req, ctx, name) => users.removeExtra(ctx, param(req, 'user'), name),
    }),
    self: extrasOf({
      label: () => 'the signed-in user',
      read: async (_req, ctx) => (await users.me(ctx)).extras,
      set: (_req, ctx, name, body) => users.setExtra(ctx, undefined, name, body),
      remove: (_req, ctx, name) => users.removeExtra(ctx, undefined, name),
    }),
    /** A source's or a collection's (at HEAD). */
    repo: extrasOf({
      label: (req) => `${repoOf(req).kind} '${repoOf(req).id}'`,
      read: async (req, ctx) => (await repositories.get(ctx, sourceOf(req))).repo.extras,
      set: (req, ctx, name, body) => repositories.setExtra(ctx, sourceOf(req), name, body),
      remove: (req, ctx, name) => repositories.removeExtra(ctx, sourceOf(req), name),
    }),
    mapping: extrasOf({
      label: (req) => `mapping '${param(req, 'mapping')}'`,
      read: async (req, ctx) =>
        (await mappings.get(ctx, sourceOf(req), param(req, 'mapping'))).version.extras,
      set: async (req, ctx, name, body) =>
        (await mappings.setExtra(ctx, sourceOf(req), param(req, 'mapping'), name, body)).version
          .extras?.[name],
      remove: async (req, ctx, name) => {
        await mappings.removeExtra(ctx, sourceOf(req), param(req, 'mapping'), name);
      },
    }),
  };
}

function extrasOf(access: ExtrasAccess) {
  return handlers({
    list: async (req, ctx) => ok((await access.read(req, ctx)) ?? {}),
    get: async (req, ctx) => {
      const name = param(req, 'name');
      return ok({ [name]: extraOf(await access.read(req, ctx), name, access.label(req)) });
    },
    set: async (req, ctx) => {
      const name = param(req, 'name');
      // The raw body: `bodyOf` would rename a snake_case attribute.
      return ok({ [name]: await access.set(req, ctx, name, req.body) });
    },
    remove: async (req, ctx) => {
      await access.remove(req, ctx, param(req, 'name'));
      return noContent();
    },
  });
}
