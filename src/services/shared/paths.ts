import {
  HEAD,
  type OrganizationEntity,
  type RepositoryEntity,
  type RepositoryVersionEntity,
  type UserEntity,
} from '../../db/entities';
import { AppError } from '../../errors';
import type { ContentCounts, PathKey, PathRow, Repositories } from '../../repositories';
import { authorize, can, isSuperuser, requireUser, type RepoAccess } from './access';
import type { ServiceContext } from './context';
import { primeRepositoryHead } from './loaders';
import type { OwnerRef, RepoRef } from './urls';

/** The owner of a repository as the API names it. */
export interface Owner {
  type: 'Organization' | 'User';
  /** Org id or username. */
  id: string;
  org?: OrganizationEntity;
  user?: UserEntity;
}

/** A repository at one of its versions (HEAD included): what every read answers. */
export interface RepoView {
  repo: RepositoryEntity;
  version: RepositoryVersionEntity;
  owner: Owner;
  /** Its counts: on the items of a list read with `verbose`. */
  counts?: RepoCounts;
}

/** What a repository detail counts: versions, and the active content of the version read. */
export interface RepoCounts extends ContentCounts {
  versions: number;
}

/**
 * The one way a path is resolved (`/orgs/:org/`, `…/sources/:source/[:version/]`, `/user/…`):
 * owner, repository, version and the caller's role in the owning org in one statement, then the
 * one set of access rules, in the order a path reads. Every service that takes a repository path
 * or URL comes here (or, for a read that fetches more in the same statement, to `checkRepo`).
 */
export class PathResolver {
  constructor(private readonly repos: Repositories) {}

  /** The owner named in a path; a private org answers 401/403, an unknown owner 404. */
  async owner(ctx: ServiceContext, ref: OwnerRef): Promise<Owner> {
    return checkOwner(ctx, ref, await this.repos.paths.resolve(pathKey(ctx, ref)));
  }

  /**
   * A repository at HEAD (no version), `latest` (newest released) or a version id. Read at HEAD,
   * it is kept for the request's other questions (`primeRepositoryHead`): a mapping end in the
   * same source reads nothing again.
   */
  async repository(ctx: ServiceContext, ref: RepoRef): Promise<RepoView> {
    const found = await this.repos.paths.resolve(pathKey(ctx, ref.owner, ref));
    const view = await checkRepo(ctx, ref, found);
    if (view.version.mnemonic === HEAD)
      primeRepositoryHead(ctx.loaders, {
        repo: view.repo,
        version: view.version,
        org: found.org,
        user: found.user,
      });
    return view;
  }

  /**
   * A repository's newest released version, by the rules of every path; null when it has none
   * (a version-less FHIR read, spec operations §2.8, answers an empty Bundle then).
   */
  async latestReleased(ctx: ServiceContext, ref: RepoRef): Promise<RepoView | null> {
    const latest = { ...ref, version: 'latest' };
    const found = await checkRepoVersionless(
      ctx,
      latest,
      await this.repos.paths.resolve(pathKey(ctx, ref.owner, latest)),
    );
    return found.version ? { ...found, version: found.version } : null;
  }
}

/** The statement's key for a path as the caller reads it. `/user/` needs a signed-in caller. */
export function pathKey(
  ctx: ServiceContext,
  owner: OwnerRef,
  repo?: Pick<RepoRef, 'id' | 'version'>,
): PathKey {
  const { actor } = ctx;
  return {
    owner:
      owner.type === 'org'
        ? { org: owner.id }
        : owner.type === 'user'
          ? { username: owner.username }
          : { userId: requireUser(ctx).id },
    repo: repo?.id,
    version: repo?.version,
    // A superuser's role is never asked (they may do anything).
    viewerId: actor.kind === 'user' && !actor.isSuperuser ? actor.id : null,
  };
}

/** The access rules of an owner found by `pathKey`'s statement. */
export async function checkOwner(
  ctx: ServiceContext,
  ref: OwnerRef,
  found: PathRow,
): Promise<Owner> {
  const { org, user } = found;
  switch (ref.type) {
    case 'org':
      if (!org) throw AppError.notFound(`Organization '${ref.id}'`);
      // The statement brought the caller's role: the access rules read it without another query.
      if (ctx.actor.kind === 'user' && !ctx.actor.isSuperuser)
        ctx.loaders.actorRole.prime(org.id, found.role);
      await authorize(ctx, { action: 'org.view', org });
      return { type: 'Organization', id: org.mnemonic, org };
    case 'user':
      if (!user || (!user.isActive && !isSuperuser(ctx.actor)))
        throw AppError.notFound(`User '${ref.username}'`);
      return { type: 'User', id: user.username, user };
    case 'self':
      if (!user) throw AppError.notFound('User');
      return { type: 'User', id: user.username, user };
  }
}

/**
 * The access rules of a repository path found by `pathKey`'s statement: the owner (404 unknown,
 * 401/403 a private org), the repository (404 when missing, of another kind or inactive; 401/403
 * when private), then the version (404).
 */
export async function checkRepo(
  ctx: ServiceContext,
  ref: RepoRef,
  found: PathRow,
): Promise<RepoView> {
  const { repo, owner, version } = await checkRepoVersionless(ctx, ref, found);
  if (!version) {
    throw AppError.notFound(
      ref.version === 'latest'
        ? `A released version of '${repo.mnemonic}'`
        : `Version '${ref.version}' of '${repo.mnemonic}'`,
    );
  }
  return { repo, owner, version };
}

/** The rules of `checkRepo` but the last: the version may be missing (null). */
async function checkRepoVersionless(
  ctx: ServiceContext,
  ref: RepoRef,
  found: PathRow,
): Promise<Omit<RepoView, 'version'> & { version: PathRow['version'] }> {
  const owner = await checkOwner(ctx, ref.owner, found);
  const { repo, version } = found;
  const label = ref.kind === 'source' ? 'Source' : 'Collection';
  if (!repo || repo.kind !== ref.kind || (!repo.isActive && !isSuperuser(ctx.actor))) {
    throw AppError.notFound(`${label} '${ref.id}'`);
  }
  await authorize(ctx, { action: 'repo.view', repo });
  return { repo, owner, version };
}

/**
 * Whether the caller may see a repository reached other than by its path (by id, through a
 * registry or a mapping end): the rules of `checkRepo`, answered rather than thrown.
 */
export async function mayViewRepo(ctx: ServiceContext, repo: RepoAccess): Promise<boolean> {
  if (!repo.isActive && !isSuperuser(ctx.actor)) return false;
  return can(ctx, { action: 'repo.view', repo });
}
