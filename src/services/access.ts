import type { OrganizationEntity, RepositoryEntity, UserEntity } from '../db/entities';
import { AppError } from '../errors';
import type { ReaderOwner } from './actor';
import type { Actor, ServiceContext } from './context';

/**
 * The one authorization policy (spec core §5). Services call `authorize` before acting; GraphQL's
 * shield rules reuse `isAuthenticated`/`isSuperuser` as an outer gate.
 */
export type Action =
  | { action: 'user.create' }
  | { action: 'user.manage'; user: UserEntity }
  | { action: 'user.activate' }
  | { action: 'org.create' }
  | { action: 'org.view'; org: OrganizationEntity }
  | { action: 'org.edit'; org: OrganizationEntity }
  | { action: 'org.delete'; org: OrganizationEntity }
  | { action: 'org.viewMembers'; org: OrganizationEntity }
  | { action: 'org.checkMember'; org: OrganizationEntity }
  /** Add members and remove those who are not administrators. */
  | { action: 'org.addMembers'; org: OrganizationEntity }
  /** Grant or take away the administrator role, remove an administrator. */
  | { action: 'org.manageMembers'; org: OrganizationEntity }
  | { action: 'repo.create'; owner: { org: OrganizationEntity } | { user: UserEntity } }
  | { action: 'repo.view'; repo: RepoAccess }
  | { action: 'repo.edit'; repo: RepositoryEntity }
  | { action: 'repo.editContent'; repo: RepositoryEntity }
  /** A canonical URL registry: an org's or a user's, or (null) the global one. */
  | { action: 'registry.edit'; owner: { org: OrganizationEntity } | { user: UserEntity } | null };

/** What deciding whether a repository may be seen reads of it. */
export type RepoAccess = Pick<
  RepositoryEntity,
  'publicAccess' | 'ownerOrgId' | 'ownerUserId' | 'isActive'
>;

export function isAuthenticated(actor: Actor): actor is Extract<Actor, { kind: 'user' }> {
  return actor.kind === 'user';
}

export function isSuperuser(actor: Actor): boolean {
  return actor.kind === 'user' && actor.isSuperuser;
}

export { viewerOf } from './actor';

export async function can(ctx: ServiceContext, request: Action): Promise<boolean> {
  const { actor } = ctx;
  if (request.action === 'org.view' && request.org.publicAccess !== 'None') return true;
  if (request.action === 'org.viewMembers' && request.org.publicAccess !== 'None') return true;
  if (request.action === 'repo.view' && request.repo.publicAccess !== 'None') return true;
  if (actor.kind === 'ownerReader') return readsAsOwnerReader(actor.owner, request);
  if (!isAuthenticated(actor)) return false;
  if (actor.isSuperuser) return true;
  switch (request.action) {
    case 'user.create':
    case 'user.activate':
      return false;
    case 'user.manage':
      return request.user.id === actor.id;
    case 'org.create':
      return true;
    case 'org.delete':
      return false; // spec core §4.2: superuser only
    case 'org.view':
    case 'org.viewMembers':
    case 'org.checkMember':
    case 'org.edit': // spec core §4.2: "caller must be a member"
    case 'org.addMembers': // as OCL and its web client: every member manages the member list
      return (await ctx.loaders.actorRole.load(request.org.id)) !== null;
    case 'org.manageMembers':
      return (await ctx.loaders.actorRole.load(request.org.id)) === 'admin';
    case 'repo.create':
      // An org's members create in it, as OCL and its web client let them (the client offers
      // "New repository" to every member); a user in their own space.
      return 'org' in request.owner
        ? (await ctx.loaders.actorRole.load(request.owner.org.id)) !== null
        : request.owner.user.id === actor.id;
    case 'repo.view': {
      // spec core §5.4: a private repository is seen by its owner and the owning org's members.
      const { repo } = request;
      if (repo.ownerUserId !== null) return repo.ownerUserId === actor.id;
      return (await ctx.loaders.actorRole.load(repo.ownerOrgId as string)) !== null;
    }
    case 'repo.edit':
      return canEditRepo(ctx, actor.id, actor.username, request.repo);
    case 'repo.editContent': {
      // spec core §5.5: `Edit` lets any authenticated user edit content; org members always may.
      const { repo } = request;
      if (repo.publicAccess === 'Edit') return true;
      if (repo.ownerOrgId !== null && (await ctx.loaders.actorRole.load(repo.ownerOrgId)) !== null)
        return true;
      return canEditRepo(ctx, actor.id, actor.username, repo);
    }
    case 'registry.edit':
      // The global registry is the superusers' (answered above); an org's is edited by its
      // members, as they edit the org (spec core §4.2); a user's by that user.
      if (request.owner === null) return false;
      return 'org' in request.owner
        ? (await ctx.loaders.actorRole.load(request.owner.org.id)) !== null
        : request.owner.user.id === actor.id;
  }
}

/** An owner reader views its owner's org and repositories, and does nothing else. */
function readsAsOwnerReader(owner: ReaderOwner, request: Action): boolean {
  if (request.action === 'org.view' || request.action === 'org.viewMembers') {
    return 'orgId' in owner && request.org.id === owner.orgId;
  }
  if (request.action !== 'repo.view') return false;
  return 'orgId' in owner
    ? request.repo.ownerOrgId === owner.orgId
    : request.repo.ownerUserId === owner.userId;
}

/**
 * Metadata and versions (spec core §5.7): the owner, the creator, and the owning org's members
 * (OCL's HasPrivateAccess; the web client gives every member the repository's Manage menu).
 */
async function canEditRepo(
  ctx: ServiceContext,
  actorId: string,
  actorUsername: string,
  repo: RepositoryEntity,
): Promise<boolean> {
  if (repo.ownerUserId === actorId || repo.createdBy === actorUsername) return true;
  return repo.ownerOrgId !== null && (await ctx.loaders.actorRole.load(repo.ownerOrgId)) !== null;
}

/** Throws 401 for an anonymous caller and 403 for one who lacks the permission (spec core §7). */
export async function authorize(ctx: ServiceContext, request: Action): Promise<void> {
  if (await can(ctx, request)) return;
  if (!isAuthenticated(ctx.actor)) throw unauthenticated();
  throw new AppError('FORBIDDEN', 'You do not have permission to perform this action.');
}

export function requireUser(ctx: ServiceContext): Extract<Actor, { kind: 'user' }> {
  if (!isAuthenticated(ctx.actor)) throw unauthenticated();
  return ctx.actor;
}

function unauthenticated(): AppError {
  return new AppError('UNAUTHENTICATED', 'Authentication credentials were not provided.');
}
