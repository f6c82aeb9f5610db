import type { Request } from 'express';
import type { OrgItem, Page, UserItem } from '../../src/services';
import { list, type Reply } from '../http';
import { orgDetail, orgSummary } from './org.mapper';
import { userDetail, userSummary } from './user.mapper';

/** A user list in summary form, or in detail when the service read their counts (`verbose`). */
export function userListReply(req: Request, page: Page<UserItem>): Reply {
  return list(
    page,
    ({ user, counts }: UserItem) => (counts ? userDetail(user, counts) : userSummary(user)),
    req,
  );
}

/** An org list in summary form, or in detail when the service read their counts (`verbose`). */
export function orgListReply(req: Request, page: Page<OrgItem>): Reply {
  return list(
    page,
    ({ org, counts }: OrgItem) => (counts ? orgDetail(org, counts) : orgSummary(org)),
    req,
  );
}
