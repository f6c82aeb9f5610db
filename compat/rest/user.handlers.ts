import type { Request } from 'express';
import type { ProfileInclude, Services, UserDetail } from '../../src/services';
import {
  bodyOf,
  created,
  flag,
  listParams,
  noContent,
  ok,
  param,
  queryOf,
  redirect,
} from '../http';
import { orgListReply, userListReply } from './list-replies';
import { handlers } from './table';
import { userDetail, userUrl } from './user.mapper';
import { profileJson } from './web-client.mapper';

const USER_FILTERS = ['company', 'location'];

/** spec core §4.1: users, sign-up, sign-in (password and OIDC), the signed-in user. */
export function userHandlers(services: Services) {
  const { users, orgs, auth, oidc, profiles } = services;
  const detail = ({ user, counts, rateLimits }: UserDetail): object =>
    userDetail(user, counts, rateLimits);

  return handlers({
    list: async (req, ctx) =>
      userListReply(req, await users.listItems(ctx, listParams(req, USER_FILTERS))),
    create: async (req, ctx) => {
      const made = await users.create(ctx, bodyOf(req));
      return created(detail(made), userUrl(made.user.username));
    },
    signup: async (req, ctx) => {
      const made = await users.signup(ctx, bodyOf(req));
      return created(detail(made), userUrl(made.user.username));
    },
    // Single sign-on (OCL's OIDC set-up): the browser goes on to the identity provider.
    loginRedirect: async (req) => redirect(await oidc.loginUrl(queryOf(req))),
    signupRedirect: async (req) => redirect(await oidc.signupUrl(queryOf(req))),
    passwordResetRedirect: async (req) => redirect(await oidc.passwordResetUrl(queryOf(req))),
    login: async (req, ctx) => ok({ token: (await auth.login(ctx, bodyOf(req))).token }),
    codeExchange: async (req, ctx) => ok((await oidc.exchangeCode(ctx, bodyOf(req))).tokens),
    logout: async (req) => redirect(await oidc.logoutUrl(queryOf(req))),
    me: async (req, ctx) => ok(profileJson(await profiles.detail(ctx, undefined, include(req)))),
    updateMe: async (req, ctx) => ok(detail(await users.update(ctx, undefined, bodyOf(req)))),
    myOrgs: async (req, ctx) =>
      orgListReply(req, await orgs.listItems(ctx, listParams(req), { type: 'self' })),
    get: async (req, ctx) =>
      ok(profileJson(await profiles.detail(ctx, param(req, 'user'), include(req)))),
    update: async (req, ctx) =>
      ok(detail(await users.update(ctx, param(req, 'user'), bodyOf(req)))),
    deactivate: async (req, ctx) => {
      await users.deactivate(ctx, param(req, 'user'));
      return noContent();
    },
    reactivate: async (req, ctx) => {
      await users.reactivate(ctx, param(req, 'user'));
      return noContent();
    },
    verifyEmail: async (req) => {
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
    },
    orgs: async (req, ctx) =>
      orgListReply(
        req,
        await orgs.listItems(ctx, listParams(req), { type: 'user', username: param(req, 'user') }),
      ),
  });
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
