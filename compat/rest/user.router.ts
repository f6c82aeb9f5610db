import { Router, type Request } from 'express';

import type { ProfileInclude, Services, UserDetail } from '../../src/services';
import {
  bodyOf,
  created,
  flag,
  listParams,
  noContent,
  ok,
  onlyMethods,
  param,
  queryOf,
  redirect,
  route,
} from '../http';
import { orgListReply, userListReply } from './list-replies';
import { userDetail, userUrl } from './user.mapper';
import { profileJson } from './web-client.mapper';

const USER_FILTERS = ['company', 'location'];

/** spec core §4.1. */
export function userRouter(services: Services): Router {
  const { users, orgs, auth, oidc, profiles } = services;
  const router = Router();

  const detail = ({ user, counts, rateLimits }: UserDetail): object =>
    userDetail(user, counts, rateLimits);

  router.get(
    '/users/',
    route(async (req, ctx) =>
      userListReply(req, await users.listItems(ctx, listParams(req, USER_FILTERS))),
    ),
  );
  router.post(
    '/users/',
    route(async (req, ctx) => {
      const made = await users.create(ctx, bodyOf(req));
      return created(detail(made), userUrl(made.user.username));
    }),
  );
  router
    .route('/users/signup/')
    .post(
      route(async (req, ctx) => {
        const made = await users.signup(ctx, bodyOf(req));
        return created(detail(made), userUrl(made.user.username));
      }),
    )
    .all(onlyMethods('POST'));
  router
    .route('/users/login/')
    // Single sign-on (OCL's OIDC set-up): the browser goes on to the identity provider.
    .get(route(async (req) => redirect(await oidc.loginUrl(queryOf(req)))))
    .post(route(async (req, ctx) => ok({ token: (await auth.login(ctx, bodyOf(req))).token })))
    .all(onlyMethods('GET', 'POST'));
  router
    .route('/users/oidc/code-exchange/')
    .post(route(async (req, ctx) => ok((await oidc.exchangeCode(ctx, bodyOf(req))).tokens)))
    .all(onlyMethods('POST'));
  router
    .route('/users/logout/')
    .get(route(async (req) => redirect(await oidc.logoutUrl(queryOf(req)))))
    .all(onlyMethods('GET'));

  router.get(
    '/user/',
    route(async (req, ctx) => ok(profileJson(await profiles.detail(ctx, undefined, include(req))))),
  );
  const updateSelf = route(async (req, ctx) =>
    ok(detail(await users.update(ctx, undefined, bodyOf(req)))),
  );
  router.route('/user/').post(updateSelf).put(updateSelf).patch(updateSelf);
  router.get(
    '/user/orgs/',
    route(async (req, ctx) =>
      orgListReply(req, await orgs.listItems(ctx, listParams(req), { type: 'self' })),
    ),
  );

  router.get(
    '/users/:user/',
    route(async (req, ctx) =>
      ok(profileJson(await profiles.detail(ctx, param(req, 'user'), include(req)))),
    ),
  );
  const updateUser = route(async (req, ctx) =>
    ok(detail(await users.update(ctx, param(req, 'user'), bodyOf(req)))),
  );
  router.route('/users/:user/').post(updateUser).put(updateUser).patch(updateUser);
  router.delete(
    '/users/:user/',
    route(async (req, ctx) => {
      await users.deactivate(ctx, param(req, 'user'));
      return noContent();
    }),
  );
  router.put(
    '/users/:user/reactivate/',
    route(async (req, ctx) => {
      await users.reactivate(ctx, param(req, 'user'));
      return noContent();
    }),
  );
  router.get(
    '/users/:user/verify/:token/',
    route(async (req) => {
      const outcome = await users.verifyEmail(param(req, 'user'), param(req, 'token'));
      if (outcome.redirectTo) return redirect(outcome.redirectTo);
      if (!outcome.verified) {
        return {
          kind: 'json',
          status: 400,
          body: { code: 'Bad Request', message: 'This verification link is not valid.' },
        };
      }
      return ok({ message: 'Email address verified; you can now log in.' });
    }),
  );
  router.get(
    '/users/:user/orgs/',
    route(async (req, ctx) =>
      orgListReply(
        req,
        await orgs.listItems(ctx, listParams(req), { type: 'user', username: param(req, 'user') }),
      ),
    ),
  );

  return router;
}

/** OCL's `include…` parameters of a user detail (what the web client asks for on sign-in). */
function include(req: Request): ProfileInclude {
  return {
    subscribedOrgs: flag(req.query.includeSubscribedOrgs),
    authGroups: flag(req.query.includeAuthGroups),
    pins: flag(req.query.includePins),
    following: flag(req.query.includeFollowing),
  };
}
