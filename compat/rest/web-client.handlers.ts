import type { Services } from '../../src/services';
import {
  bodyOf,
  created,
  flag,
  list,
  listParams,
  noContent,
  ok,
  param,
  queryString,
} from '../http';
import { ownerOf, repoOf } from './owners';
import { handlers } from './table';
import {
  eventJson,
  followJson,
  localeJson,
  lookupJson,
  pinJson,
  summaryJson,
} from './web-client.mapper';

/**
 * What the OCL web client (oclweb3) calls besides content (issue 15): events; pins; follows;
 * repository summaries; lookup values; the API token; feature toggles.
 */
export function webClientHandlers(services: Services) {
  const { pins, follows, events, summaries, lookups } = services;
  return handlers({
    // OCL's feature flags: none here.
    toggles: async () => ok({}),
    apiToken: async (req, ctx) => {
      const [scheme, value] = (req.header('authorization') ?? '').trim().split(/\s+/, 2);
      const presented = /^(token|bearer)$/i.test(scheme ?? '') ? value : undefined;
      return ok({ token: await services.auth.apiToken(ctx, presented) });
    },
    events: async (req, ctx) => list(await events.highlights(ctx, listParams(req)), eventJson, req),
    userEvents: async (req, ctx) => {
      const user = await services.users.get(ctx, param(req, 'user'));
      const scopes = (queryString(req, 'scopes') ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      return list(await events.ofUser(ctx, user, scopes, listParams(req)), eventJson, req);
    },
    locales: async (req, ctx) => {
      const verbose = flag(req.query.verbose);
      return ok((await lookups.locales(ctx)).map((l) => localeJson(l, verbose)));
    },
    pins: async (req, ctx) => ok((await pins.list(ctx, ownerOf(req))).map(pinJson)),
    addPin: async (req, ctx) => {
      const made = pinJson(await pins.add(ctx, ownerOf(req), bodyOf(req)));
      return created(made, (made as { uri: string }).uri);
    },
    movePin: async (req, ctx) =>
      ok(pinJson(await pins.move(ctx, ownerOf(req), param(req, 'pin'), bodyOf(req)))),
    removePin: async (req, ctx) => {
      await pins.remove(ctx, ownerOf(req), param(req, 'pin'));
      return noContent();
    },
    following: async (req, ctx) => ok((await follows.following(ctx, ownerOf(req))).map(followJson)),
    follow: async (req, ctx) => {
      await follows.follow(ctx, ownerOf(req), bodyOf(req));
      return noContent();
    },
    unfollow: async (req, ctx) => {
      await follows.unfollow(ctx, ownerOf(req), param(req, 'follow'));
      return noContent();
    },
    lookupValues: async (req, ctx) => {
      const verbose = flag(req.query.verbose);
      const values = await lookups.values(ctx, repoOf(req));
      return ok(values.map((concept) => lookupJson(concept, verbose)));
    },
    summary: async (req, ctx) => {
      const options = {
        verbose: flag(req.query.verbose),
        distribution: (queryString(req, 'distribution') ?? '')
          .split(',')
          .map((d) => d.trim())
          .filter(Boolean),
      };
      const summary = await summaries.repoSummary(ctx, repoOf(req), options);
      return ok(summaryJson(summary, options));
    },
    // OCL recomputes its stored summary here; ours is computed on every read.
    refreshSummary: async (req, ctx) => {
      await summaries.refresh(ctx, repoOf(req));
      return { kind: 'empty', status: 202 };
    },
  });
}
