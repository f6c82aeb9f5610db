import { z } from 'zod';
import type { UserEntity } from '../../db/entities';
import { AppError } from '../../errors';
import type { FollowedType, FollowRow, Repositories } from '../../repositories';
import { authorize, can } from '../shared/access';
import type { ServiceContext } from '../shared/context';
import {
  orgSubject,
  recordEvent,
  repoSubject,
  userSubject,
  type EventSubject,
} from './event.service';
import type { OrgService } from '../accounts/org.service';
import type { RepositoryService } from '../content/repository.service';
import { parseOwnerUrl, parseRepoUrl, type OwnerRef } from '../shared/urls';
import type { UserService } from '../accounts/user.service';
import { parseInput } from '../shared/validation';

const followSchema = z.object({
  follow: z
    .string({ error: 'This field is required: the URL of a user, org, source or collection.' })
    .trim()
    .min(1, 'This field is required: the URL of a user, org, source or collection.')
    .max(1000, 'At most 1000 characters.'),
});

/** The schemas the service validates its input with, for the API reference. */
export const followInput = { follow: followSchema };

/** One follow as the lists show it: what is followed, as its brief. */
export interface FollowView {
  row: FollowRow;
  follower: UserEntity;
  object: Record<string, unknown>;
}

/** A thing that can be followed, resolved as the caller may see it. */
interface Followable {
  type: FollowedType;
  id: string;
  subject: EventSubject;
}

/**
 * Follows (OCL `/users/:user/following/`): a user follows users, orgs, sources and collections;
 * their events then show on that user's dashboard (`scopes=following`).
 */
export class FollowService {
  constructor(
    private readonly repos: Repositories,
    private readonly users: UserService,
    private readonly orgs: OrgService,
    private readonly repositories: RepositoryService,
  ) {}

  /** What a user follows, newest first; things the caller may not see are left out. */
  async following(ctx: ServiceContext, ownerRef: OwnerRef): Promise<FollowView[]> {
    return this.ofUser(ctx, await this.user(ctx, ownerRef));
  }

  async ofUser(ctx: ServiceContext, user: UserEntity): Promise<FollowView[]> {
    const rows = (await this.repos.follows.listForUsers([user.id])).get(user.id) ?? [];
    const views = await Promise.all(
      rows.map(async (row) => {
        const followed = await this.byId(ctx, row.following_type, row.following_id);
        return followed ? { row, follower: user, object: followed.subject.brief } : null;
      }),
    );
    return views.filter((v): v is FollowView => v !== null);
  }

  /** The user follows what `follow` names; following it again changes nothing. */
  async follow(ctx: ServiceContext, ownerRef: OwnerRef, input: unknown): Promise<FollowView> {
    const user = await this.user(ctx, ownerRef);
    await authorize(ctx, { action: 'user.manage', user });
    const { follow } = parseInput(followSchema, input);
    const target = await this.byUrl(ctx, follow);
    if (target.type === 'User' && target.id === user.id) {
      throw AppError.field('follow', 'A user cannot follow themselves.');
    }
    const row = await this.repos.transaction(async (r) => {
      const made = await r.follows.insert(user.id, target.type, target.id);
      if (made) await recordEvent(r, user, 'Followed', target.subject);
      return made;
    });
    const current =
      row ??
      ((await this.repos.follows.listForUsers([user.id])).get(user.id) ?? []).find(
        (f) => f.following_type === target.type && f.following_id === target.id,
      )!;
    return { row: current, follower: user, object: target.subject.brief };
  }

  /** Stops following; 404 when the user has no such follow. */
  async unfollow(ctx: ServiceContext, ownerRef: OwnerRef, followId: string): Promise<void> {
    const user = await this.user(ctx, ownerRef);
    await authorize(ctx, { action: 'user.manage', user });
    if (!/^[1-9][0-9]{0,17}$/.test(followId)) throw AppError.notFound(`Follow '${followId}'`);
    const row = await this.repos.follows.find(user.id, followId);
    if (!row) throw AppError.notFound(`Follow '${followId}'`);
    const target = await this.byId(ctx, row.following_type, row.following_id);
    await this.repos.transaction(async (r) => {
      if (!(await r.follows.delete(user.id, followId)))
        throw AppError.notFound(`Follow '${followId}'`);
      if (target) await recordEvent(r, user, 'Unfollowed', target.subject);
    });
  }

  private user(ctx: ServiceContext, ref: OwnerRef): Promise<UserEntity> {
    if (ref.type === 'org') throw AppError.notFound('Only users follow');
    return ref.type === 'self' ? this.users.me(ctx) : this.users.get(ctx, ref.username);
  }

  /** What a URL names: a user, an org, or a source or collection (at HEAD). */
  private async byUrl(ctx: ServiceContext, url: string): Promise<Followable> {
    const repoLike = /\/(sources|collections)\//.test(url);
    let owner: OwnerRef;
    try {
      if (repoLike) {
        const ref = parseRepoUrl(url);
        const view = await this.repositories.get(ctx, { ...ref, version: undefined });
        return {
          type: view.repo.kind === 'source' ? 'Source' : 'Collection',
          id: view.repo.id,
          subject: repoSubject(view),
        };
      }
      owner = parseOwnerUrl(url);
    } catch (error) {
      if (error instanceof AppError && error.code === 'INVALID') {
        throw AppError.field('follow', 'Must be the URL of a user, org, source or collection.');
      }
      throw error;
    }
    if (owner.type === 'org') {
      const org = await this.orgs.get(ctx, owner.id);
      return { type: 'Organization', id: org.id, subject: orgSubject(org) };
    }
    if (owner.type === 'self') {
      throw AppError.field('follow', 'Must be the URL of a user, org, source or collection.');
    }
    const user = await this.users.get(ctx, owner.username);
    return { type: 'User', id: user.id, subject: userSubject(user) };
  }

  private async byId(
    ctx: ServiceContext,
    type: FollowedType,
    id: string,
  ): Promise<Followable | null> {
    if (type === 'User') {
      const user = await ctx.loaders.userById.load(id);
      return user?.isActive ? { type, id, subject: userSubject(user) } : null;
    }
    if (type === 'Organization') {
      const org = await ctx.loaders.orgById.load(id);
      if (!org || !(await can(ctx, { action: 'org.view', org }))) return null;
      return { type, id, subject: orgSubject(org) };
    }
    const view = await this.repositories.headView(ctx, id);
    if (!view || !view.repo.isActive || !(await can(ctx, { action: 'repo.view', repo: view.repo })))
      return null;
    return { type, id, subject: repoSubject(view) };
  }
}
