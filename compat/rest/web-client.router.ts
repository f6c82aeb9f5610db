import { Router, type Request } from 'express';
import type { RepositoryKind } from '../../src/db/entities';
import type { OwnerRef, RepoRef, Services } from '../../src/services';
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
  queryString,
  route,
} from '../http';
import { OWNER_PREFIXES } from './owners';
import {
  eventJson,
  followJson,
  localeJson,
  lookupJson,
  pinJson,
  summaryJson,
} from './web-client.mapper';

const KINDS: Array<{ segment: string; kind: RepositoryKind }> = [
  { segment: 'sources', kind: 'source' },
  { segment: 'collections', kind: 'collection' },
];

/**
 * What the OCL web client (oclweb3) calls besides content (issue 15): events; pins; follows;
 * repository summaries; lookup values; the API token; feature toggles. Mounted before the user,
 * concept and repository routes, whose `:user`, `:concept` and `:version` segments would
 * otherwise take these paths.
 */
export function webClientRouter(services: Services): Router {
  const { pins, follows, events, summaries, lookups } = services;
  const router = Router();

  // OCL's feature flags: none here.
  router
    .route('/toggles/')
    .get(route(async () => ok({})))
    .all(onlyMethods('GET'));

  router
    .route('/users/api-token/')
    .get(
      route(async (req, ctx) => {
        const [scheme, value] = (req.header('authorization') ?? '').trim().split(/\s+/, 2);
        const presented = /^(token|bearer)$/i.test(scheme ?? '') ? value : undefined;
        return ok({ token: await services.auth.apiToken(ctx, presented) });
      }),
    )
    .all(onlyMethods('GET'));

  router
    .route('/events/')
    .get(
      route(async (req, ctx) =>
        list(await events.highlights(ctx, listParams(req)), eventJson, req),
      ),
    )
    .all(onlyMethods('GET'));
  router
    .route('/users/:user/events/')
    .get(
      route(async (req, ctx) => {
        const user = await services.users.get(ctx, param(req, 'user'));
        const scopes = (queryString(req, 'scopes') ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        return list(await events.ofUser(ctx, user, scopes, listParams(req)), eventJson, req);
      }),
    )
    .all(onlyMethods('GET'));

  router
    .route('/locales/')
    .get(
      route(async (req, ctx) => {
        const verbose = flag(req.query.verbose);
        return ok((await lookups.locales(ctx)).map((l) => localeJson(l, verbose)));
      }),
    )
    .all(onlyMethods('GET'));

  for (const owner of OWNER_PREFIXES) {
    router
      .route(`${owner.prefix}/pins/`)
      .get(route(async (req, ctx) => ok((await pins.list(ctx, owner.ref(req))).map(pinJson))))
      .post(
        route(async (req, ctx) => {
          const made = pinJson(await pins.add(ctx, owner.ref(req), bodyOf(req)));
          return created(made, (made as { uri: string }).uri);
        }),
      )
      .all(onlyMethods('GET', 'POST'));
    router
      .route(`${owner.prefix}/pins/:pin/`)
      .put(
        route(async (req, ctx) =>
          ok(pinJson(await pins.move(ctx, owner.ref(req), param(req, 'pin'), bodyOf(req)))),
        ),
      )
      .delete(
        route(async (req, ctx) => {
          await pins.remove(ctx, owner.ref(req), param(req, 'pin'));
          return noContent();
        }),
      )
      .all(onlyMethods('PUT', 'DELETE'));

    if (owner.prefix !== '/orgs/:org') {
      router
        .route(`${owner.prefix}/following/`)
        .get(
          route(async (req, ctx) =>
            ok((await follows.following(ctx, owner.ref(req))).map(followJson)),
          ),
        )
        .post(
          route(async (req, ctx) => {
            await follows.follow(ctx, owner.ref(req), bodyOf(req));
            return noContent();
          }),
        )
        .all(onlyMethods('GET', 'POST'));
      router
        .route(`${owner.prefix}/following/:follow/`)
        .delete(
          route(async (req, ctx) => {
            await follows.unfollow(ctx, owner.ref(req), param(req, 'follow'));
            return noContent();
          }),
        )
        .all(onlyMethods('DELETE'));
    }

    router
      .route(`${owner.prefix}/sources/:repo/concepts/lookup/`)
      .get(
        route(async (req, ctx) => {
          const verbose = flag(req.query.verbose);
          const values = await lookups.values(ctx, repoRef(owner.ref(req), 'source', req));
          return ok(values.map((concept) => lookupJson(concept, verbose)));
        }),
      )
      .all(onlyMethods('GET'));

    for (const { segment, kind } of KINDS) {
      for (const path of [`/${segment}/:repo/summary/`, `/${segment}/:repo/:version/summary/`]) {
        router
          .route(`${owner.prefix}${path}`)
          .get(
            route(async (req, ctx) => {
              const options = {
                verbose: flag(req.query.verbose),
                distribution: (queryString(req, 'distribution') ?? '')
                  .split(',')
                  .map((d) => d.trim())
                  .filter(Boolean),
              };
              const summary = await summaries.repoSummary(
                ctx,
                repoRef(owner.ref(req), kind, req),
                options,
              );
              return ok(summaryJson(summary, options));
            }),
          )
          // OCL recomputes its stored summary here; ours is computed on every read.
          .put(
            route(async (req, ctx) => {
              await summaries.refresh(ctx, repoRef(owner.ref(req), kind, req));
              return { kind: 'empty', status: 202 };
            }),
          )
          .all(onlyMethods('GET', 'PUT'));
      }
    }
  }
  return router;
}

function repoRef(owner: OwnerRef, kind: RepositoryKind, req: Request): RepoRef {
  return {
    owner,
    kind,
    id: param(req, 'repo'),
    version: req.params.version === undefined ? undefined : param(req, 'version'),
  };
}
