import { AppError } from '../../src/errors';
import type { OrgDetail, Services } from '../../src/services';
import { bodyOf, created, listParams, noContent, ok, param } from '../http';
import { orgListReply, userListReply } from './list-replies';
import { orgDetail, orgUrl } from './org.mapper';
import { handlers } from './table';

const ORG_FILTERS = ['company', 'location'];

/** spec core §4.2: organizations and their members. */
export function orgHandlers(services: Services) {
  const { orgs } = services;
  const detail = ({ org, counts }: OrgDetail): object => orgDetail(org, counts);

  return handlers({
    list: async (req, ctx) =>
      orgListReply(req, await orgs.listItems(ctx, listParams(req, ORG_FILTERS))),
    create: async (req, ctx) => {
      const made = await orgs.create(ctx, bodyOf(req));
      return created(detail(made), orgUrl(made.org.mnemonic));
    },
    get: async (req, ctx) => ok(detail(await orgs.detail(ctx, param(req, 'org')))),
    update: async (req, ctx) => ok(detail(await orgs.update(ctx, param(req, 'org'), bodyOf(req)))),
    remove: async (req, ctx) => {
      await orgs.delete(ctx, param(req, 'org'));
      return noContent();
    },
    members: async (req, ctx) =>
      userListReply(req, await orgs.memberItems(ctx, param(req, 'org'), listParams(req))),
    isMember: async (req, ctx) => {
      const member = await orgs.isMember(ctx, param(req, 'org'), param(req, 'user'));
      if (!member) {
        throw AppError.notFound(`'${param(req, 'user')}' as a member of '${param(req, 'org')}'`);
      }
      return noContent();
    },
    addMember: async (req, ctx) => {
      await orgs.addMember(ctx, param(req, 'org'), param(req, 'user'), bodyOf(req));
      return noContent();
    },
    removeMember: async (req, ctx) => {
      await orgs.removeMember(ctx, param(req, 'org'), param(req, 'user'));
      return noContent();
    },
  });
}
