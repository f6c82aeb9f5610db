import type { Request } from 'express';
import type { OrganizationEntity, UserEntity } from '../../src/db/entities';
import type { Page, ServiceContext, Services } from '../../src/services';
import { flag, list, type Reply } from '../http';
import { orgDetail, orgSummary } from './org.mapper';
import { userDetail, userSummary } from './user.mapper';

/** A user list in summary form, or in detail with `verbose=true` (counts batched per page). */
export async function userListReply(
  services: Services,
  req: Request,
  ctx: ServiceContext,
  page: Page<UserEntity>,
): Promise<Reply> {
  if (!flag(req.query.verbose)) return list(page, userSummary, req);
  const counts = await Promise.all(page.items.map((u) => services.users.counts(ctx, u)));
  return list(page, (u: UserEntity) => userDetail(u, counts[page.items.indexOf(u)]), req);
}

/** An org list in summary form, or in detail with `verbose=true` (counts batched per page). */
export async function orgListReply(
  services: Services,
  req: Request,
  ctx: ServiceContext,
  page: Page<OrganizationEntity>,
): Promise<Reply> {
  if (!flag(req.query.verbose)) return list(page, orgSummary, req);
  const counts = await Promise.all(page.items.map((o) => services.orgs.counts(ctx, o)));
  return list(page, (o: OrganizationEntity) => orgDetail(o, counts[page.items.indexOf(o)]), req);
}
