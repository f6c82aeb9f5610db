import type { OrganizationEntity, RepositoryEntity, UserEntity } from '../../db/entities';
import { AppError } from '../../errors';
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
  /** Add and remove members, grant or take away the administrator role. */
  | { action: 'org.manageMembers'; org: OrganizationEntity }
  | { action: 'repo.create'; owner: { org: OrganizationEntity } | { user: UserEntity } }
  | { action: 'repo.view'; repo: RepoAccess }
  /** Metadata, delete, versions, export delete, mapping versions by id: the repository's owners. */
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

/**
 * The rights of docs/rights.md (spec core §4.2, §4.5, §4.6, §5, §9.3). An org's owners are its
 * administrators; a repository's owners are its owning user or the owning org's administrators.
 */
export async function can(ctx: ServiceContext, request: Action): Promise<boolean> {
  const { actor } = ctx;
  if (request.action === 'org.view' && request.org.publicAccess !== 'None') return true;
  if (request.action === 'org.viewMembers' && request.org.publicAccess !== 'None') return true;
  if (request.action === 'repo.view' && request.repo.publicAccess !== 'None') return true;
  if (actor.kind === 'ownerReader') return readsAsOwnerReader(actor.owner, request);
  if (!isAuthenticated(actor)) return false;
  if (actor.isSuperuser) return true;
  const role = (orgId: string) => ctx.loaders.actorRole.load(orgId);
  switch (request.action) {
    case 'user.create':
    case 'user.activate':
      return false;
    case 'user.manage':
      return request.user.id === actor.id;
    case 'org.create':
      return true; // spec core §5 rule 6
    case 'org.delete':
      return false; // spec core §4.2: superuser only
    case 'org.view':
    case 'org.viewMembers':
    case 'org.checkMember':
    case 'org.edit': // spec core §4.2: "caller must be a member"
      return (await role(request.org.id)) !== null;
    case 'org.manageMembers': // spec core §4.2: "an administrative member"; §5 rule 7
      return (await role(request.org.id)) === 'admin';
    case 'repo.create':
      // spec core §4.5, §4.6: "An org administrator is required to create a source in an org";
      // a user creates in their own space (§5 rule 6: everything under `/user/`).
      return 'org' in request.owner
        ? (await role(request.owner.org.id)) === 'admin'
        : request.owner.user.id === actor.id;
    case 'repo.view': {
      // spec core §5 rules 4, 7: a private repository is seen by its owner and the org's members.
      const { repo } = request;
      if (repo.ownerUserId !== null) return repo.ownerUserId === actor.id;
      return (await role(repo.ownerOrgId as string)) !== null;
    }
    case 'repo.edit':
      return ownsRepo(ctx, actor.id, request.repo);
    case 'repo.editContent':
      // spec core §5 rule 5: `Edit` lets any authenticated user edit; `View` and `None` only
      // those with extra permission, the repository's owners (§5 rule 7: members view).
      return request.repo.publicAccess === 'Edit' || ownsRepo(ctx, actor.id, request.repo);
    case 'registry.edit':
      // The global registry is the superusers' (answered above); an org's is edited by those who
      // edit the org (spec core §4.2: its members); a user's by that user.
      if (request.owner === null) return false;
      return 'org' in request.owner
        ? (await role(request.owner.org.id)) !== null
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
 * spec core §5 rule 7: repository owners edit or delete it and create, edit and delete its
 * versions: the owning user, or the owning org's owners (its administrators).
 */
async function ownsRepo(
  ctx: ServiceContext,
  actorId: string,
  repo: Pick<RepositoryEntity, 'ownerOrgId' | 'ownerUserId'>,
): Promise<boolean> {
  if (repo.ownerUserId !== null) return repo.ownerUserId === actorId;
  return (await ctx.loaders.actorRole.load(repo.ownerOrgId as string)) === 'admin';
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
