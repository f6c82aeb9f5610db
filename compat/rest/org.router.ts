import { Router } from 'express';
import { AppError } from '../../src/errors';
import type { OrgDetail, Services } from '../../src/services';
import { bodyOf, created, listParams, noContent, ok, param, route } from '../http';
import { orgListReply, userListReply } from './list-replies';
import { orgDetail, orgUrl } from './org.mapper';

const ORG_FILTERS = ['company', 'location'];

/** spec core §4.2. */
export function orgRouter(services: Services): Router {
  const { orgs } = services;
  const router = Router();

  const detail = ({ org, counts }: OrgDetail): object => orgDetail(org, counts);

  router.get(
    '/orgs/',
    route(async (req, ctx) =>
      orgListReply(req, await orgs.listItems(ctx, listParams(req, ORG_FILTERS))),
    ),
  );
  router.post(
    '/orgs/',
    route(async (req, ctx) => {
      const made = await orgs.create(ctx, bodyOf(req));
      return created(detail(made), orgUrl(made.org.mnemonic));
    }),
  );
  router.get(
    '/orgs/:org/',
    route(async (req, ctx) => ok(detail(await orgs.detail(ctx, param(req, 'org'))))),
  );
  const update = route(async (req, ctx) =>
    ok(detail(await orgs.update(ctx, param(req, 'org'), bodyOf(req)))),
  );
  router.route('/orgs/:org/').post(update).put(update).patch(update);
  router.delete(
    '/orgs/:org/',
    route(async (req, ctx) => {
      await orgs.delete(ctx, param(req, 'org'));
      return noContent();
    }),
  );

  router.get(
    '/orgs/:org/members/',
    route(async (req, ctx) =>
      userListReply(req, await orgs.memberItems(ctx, param(req, 'org'), listParams(req))),
    ),
  );
  router.get(
    '/orgs/:org/members/:user/',
    route(async (req, ctx) => {
      const member = await orgs.isMember(ctx, param(req, 'org'), param(req, 'user'));
      if (!member) {
        throw AppError.notFound(`'${param(req, 'user')}' as a member of '${param(req, 'org')}'`);
      }
      return noContent();
    }),
  );
  router.put(
    '/orgs/:org/members/:user/',
    route(async (req, ctx) => {
      await orgs.addMember(ctx, param(req, 'org'), param(req, 'user'), bodyOf(req));
      return noContent();
    }),
  );
  router.delete(
    '/orgs/:org/members/:user/',
    route(async (req, ctx) => {
      await orgs.removeMember(ctx, param(req, 'org'), param(req, 'user'));
      return noContent();
    }),
  );
  return router;
}
