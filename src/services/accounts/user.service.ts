import { z } from 'zod';
import type { UserEntity } from '../../db/entities';
import { AppError } from '../../errors';
import {
  isUniqueViolation,
  type Repositories,
  type UserCounts,
  type UserSortKey,
} from '../../repositories';
import { authorize, isSuperuser, requireUser } from '../shared/access';
import type { UserRateLimits } from '../shared/actor';
import type { ServiceContext } from '../shared/context';
import { hashPassword, hashSecret, newSecret } from './credentials';
import { pageOf, resolveSort, windowOf, type ListParams, type Page } from '../shared/list';
import type { Mailer } from './mailer';
import {
  email,
  extras,
  localeList,
  mnemonic,
  notReserved,
  optionalText,
  parseInput,
  password,
  redirectUrl,
  requiredText,
  website,
} from '../shared/validation';
import { removeRowExtra, setRowExtra } from '../shared/extras';

/** A user's own request limit (spec core §8.2): null is the instance's, 0 is none. */
const userRateLimit = z
  .number({ error: 'A whole number of requests (0: no limit), or null for the default.' })
  .int('A whole number of requests (0: no limit), or null for the default.')
  .min(0, 'A whole number of requests (0: no limit), or null for the default.')
  .max(1_000_000_000, 'At most 1000000000.')
  .nullable()
  .optional();

/** `/users/login/`, `/users/signup/` and `/users/logout/` are endpoints, not users. */
export const RESERVED_USERNAMES = ['login', 'signup', 'logout'];

const username = mnemonic.refine(notReserved(RESERVED_USERNAMES), 'This username is reserved.');

const profileFields = {
  name: requiredText,
  firstName: optionalText,
  lastName: optionalText,
  email,
  company: optionalText,
  location: optionalText,
  preferredLocale: localeList.optional(),
  website,
  extras,
};

const createSchema = z.object({
  username: username,
  password: password.optional(),
  ...profileFields,
});

const signupSchema = z.object({
  username: username,
  password,
  ...profileFields,
  emailVerifySuccessUrl: redirectUrl,
  emailVerifyFailureUrl: redirectUrl,
});

const updateSchema = z.object({
  name: requiredText.optional(),
  firstName: optionalText.optional(),
  lastName: optionalText.optional(),
  email: email.optional(),
  company: optionalText.optional(),
  location: optionalText.optional(),
  preferredLocale: localeList.optional(),
  website: website.optional(),
  extras: extras.optional(),
  password: password.optional(),
  rateLimitPerMinute: userRateLimit,
  rateLimitPerDay: userRateLimit,
  matchApproved: z.boolean().optional(),
});

/** The schemas the service validates its input with, for the API reference. */
export const userInput = { create: createSchema, signup: signupSchema, edit: updateSchema };

export type CreateUserInput = z.input<typeof createSchema>;
export type SignupInput = z.input<typeof signupSchema>;
export type UpdateUserInput = z.input<typeof updateSchema>;

/** spec core §4.1 sorts, under every spelling clients use. */
const SORTS: Record<string, UserSortKey> = {
  bestmatch: 'bestMatch',
  datejoined: 'dateJoined',
  username: 'username',
  name: 'name',
  lastupdate: 'lastUpdate',
  lastupdated: 'lastUpdate',
};

export interface VerificationOutcome {
  verified: boolean;
  /** Where to send the browser, when the signup named a page for this outcome. */
  redirectTo: string | null;
}

/** A user as a detail shows it: what one service call answers. */
export interface UserDetail {
  user: UserEntity;
  counts: UserCounts;
  /** Its own request limits, to itself and superusers only. */
  rateLimits: UserRateLimits | undefined;
}

/** A user as a list shows it: with its counts when the list is verbose. */
export interface UserItem {
  user: UserEntity;
  /** Present on the items of a list read with `verbose`. */
  counts?: UserCounts;
}

export class UserService {
  constructor(
    private readonly repos: Repositories,
    private readonly mailer: Mailer,
  ) {}

  /** A user profile; profiles are public (spec core §2.2), deactivated ones are 404 but to superusers. */
  async get(ctx: ServiceContext, username: string): Promise<UserEntity> {
    const user = await this.repos.users.findByUsername(username);
    if (!user || (!user.isActive && !isSuperuser(ctx.actor)))
      throw AppError.notFound(`User '${username}'`);
    return user;
  }

  /** The authenticated user (`/user/`). */
  async me(ctx: ServiceContext): Promise<UserEntity> {
    const actor = requireUser(ctx);
    const user = await ctx.loaders.userById.load(actor.id);
    if (!user) throw AppError.notFound('User');
    return user;
  }

  async list(_ctx: ServiceContext, params: ListParams): Promise<Page<UserEntity>> {
    const sort = resolveSort(params, SORTS, { key: 'bestMatch', desc: false });
    const filter = {
      q: params.q,
      company: params.filters.company,
      location: params.filters.location,
      updatedSince: params.updatedSince,
    };
    const slice = await this.repos.users.search(filter, sort, windowOf(params));
    const facets = params.includeFacets ? await this.repos.users.facets(filter) : undefined;
    return pageOf(slice.rows, slice.total, params, facets);
  }

  /** Users as a list shows them: with their counts (one statement) when `verbose`. */
  async listItems(ctx: ServiceContext, params: ListParams): Promise<Page<UserItem>> {
    return this.withCounts(ctx, await this.list(ctx, params), params);
  }

  /** A page's users, with their counts (one batched statement) when the list is verbose. */
  async withCounts(
    ctx: ServiceContext,
    page: Page<UserEntity>,
    params: ListParams,
  ): Promise<Page<UserItem>> {
    if (!params.verbose) return { ...page, items: page.items.map((user) => ({ user })) };
    const counts = await Promise.all(page.items.map((user) => this.counts(ctx, user)));
    return { ...page, items: page.items.map((user, i) => ({ user, counts: counts[i] })) };
  }

  /** Active members of an org, as a user list (access is checked by the org service). */
  async listMembers(orgId: string, params: ListParams): Promise<Page<UserEntity>> {
    const sort = resolveSort(params, SORTS, { key: 'username', desc: false });
    const slice = await this.repos.users.search(
      { q: params.q, memberOfOrgId: orgId },
      sort,
      windowOf(params),
    );
    return pageOf(slice.rows, slice.total, params);
  }

  counts(ctx: ServiceContext, user: UserEntity): Promise<UserCounts> {
    return ctx.loaders.userCounts.load(user.id);
  }

  /** A user's detail (the caller's when `username` is undefined): one service call. */
  async detail(ctx: ServiceContext, username: string | undefined): Promise<UserDetail> {
    return this.detailOf(
      ctx,
      username === undefined ? await this.me(ctx) : await this.get(ctx, username),
    );
  }

  /** The detail of a user read or written: its counts, and its limits to those who may see them. */
  async detailOf(ctx: ServiceContext, user: UserEntity): Promise<UserDetail> {
    return { user, counts: await this.counts(ctx, user), rateLimits: this.rateLimitsOf(ctx, user) };
  }

  /** `POST /users/` by an administrator; the account can log in at once. */
  async create(ctx: ServiceContext, input: unknown): Promise<UserDetail> {
    await authorize(ctx, { action: 'user.create' });
    const data = parseInput(createSchema, input);
    await this.assertUsernameFree(data.username);
    const { password: plain, ...profile } = data;
    const user = await this.insertUser(this.repos, {
      ...profile,
      preferredLocale: profile.preferredLocale ?? 'en',
      passwordHash: plain ? await hashPassword(plain) : null,
      verified: true,
      createdBy: ctx.actor.kind === 'user' ? ctx.actor.username : null,
      updatedBy: ctx.actor.kind === 'user' ? ctx.actor.username : null,
    });
    return this.detailOf(ctx, user);
  }

  /** `POST /users/signup/`: open to anyone; login is refused until the emailed link is followed. */
  async signup(ctx: ServiceContext, input: unknown): Promise<UserDetail> {
    const data = parseInput(signupSchema, input);
    await this.assertUsernameFree(data.username);
    const { password: plain, emailVerifySuccessUrl, emailVerifyFailureUrl, ...profile } = data;
    const passwordHash = await hashPassword(plain);
    const urls = { successUrl: emailVerifySuccessUrl, failureUrl: emailVerifyFailureUrl };
    // The account exists only if its verification mail could be sent: one transaction.
    const user = await this.repos.transaction(async (repos) => {
      const user = await this.insertUser(repos, {
        ...profile,
        preferredLocale: profile.preferredLocale ?? 'en',
        passwordHash,
        verified: false,
        createdBy: profile.username,
        updatedBy: profile.username,
      });
      await this.sendVerification(ctx, user, urls, repos);
      return user;
    });
    return this.detailOf(ctx, user);
  }

  /**
   * Issues a fresh verification link (the previous one stops working) and mails it. The new
   * link is stored only if the mail went out; otherwise nothing changes and the answer is 503.
   */
  async sendVerification(
    ctx: ServiceContext,
    user: UserEntity,
    urls: { successUrl: string | null; failureUrl: string | null },
    repos: Repositories = this.repos,
  ): Promise<void> {
    const { secret, hash } = newSecret();
    const link = `${ctx.baseUrl}/users/${encodeURIComponent(user.username)}/verify/${secret}/`;
    await repos.transaction(async (r) => {
      user.verificationTokenHash = hash;
      user.verifySuccessUrl = urls.successUrl ?? user.verifySuccessUrl;
      user.verifyFailureUrl = urls.failureUrl ?? user.verifyFailureUrl;
      await r.users.save(user);
      try {
        await this.mailer.send({
          to: user.email,
          subject: 'Confirm your email address',
          text: `Hello ${user.name},\n\nConfirm your email address to activate your account:\n${link}\n`,
        });
      } catch (error) {
        ctx.log.error({ err: error }, 'verification mail failed');
        throw new AppError(
          'UNAVAILABLE',
          'The verification mail could not be sent; try again later.',
        );
      }
    });
  }

  /** Follows an emailed verification link. */
  async verifyEmail(username: string, token: string): Promise<VerificationOutcome> {
    const user = await this.repos.users.findByUsername(username);
    if (!user) throw AppError.notFound(`User '${username}'`);
    if (user.verified) return { verified: true, redirectTo: user.verifySuccessUrl };
    if (!user.verificationTokenHash || user.verificationTokenHash !== hashSecret(token)) {
      return { verified: false, redirectTo: user.verifyFailureUrl };
    }
    user.verified = true;
    user.verificationTokenHash = null;
    await this.repos.users.save(user);
    return { verified: true, redirectTo: user.verifySuccessUrl };
  }

  /** Partial update: only the fields sent change. `username` undefined means the caller. */
  async update(
    ctx: ServiceContext,
    username: string | undefined,
    input: unknown,
  ): Promise<UserDetail> {
    const user = username === undefined ? await this.me(ctx) : await this.get(ctx, username);
    await authorize(ctx, { action: 'user.manage', user });
    const record = (input ?? {}) as Record<string, unknown>;
    if (record.username !== undefined && record.username !== user.username) {
      throw AppError.field('username', 'The username cannot be changed.');
    }
    const { password: plain, ...changes } = parseInput(updateSchema, input);
    assertMayChangeRateLimits(ctx, user, changes);
    if (
      changes.matchApproved !== undefined &&
      changes.matchApproved !== user.matchApproved &&
      !isSuperuser(ctx.actor)
    ) {
      throw new AppError('FORBIDDEN', 'Only an administrator can approve a user for $match.');
    }
    const passwordHash = plain !== undefined ? await hashPassword(plain) : undefined;
    const updatedBy = requireUser(ctx).username;
    const saved = await this.repos.transaction(async (r) => {
      // Applied to the row as committed, under its lock: parallel edits of other fields stay.
      const current = await r.users.lock(user.id);
      Object.assign(current, stripUndefined({ ...changes, passwordHash }), { updatedBy });
      return r.users.save(current);
    });
    return this.detailOf(ctx, saved);
  }

  /** One custom attribute of a user (the caller when `username` is undefined) set in place. */
  async setExtra(
    ctx: ServiceContext,
    username: string | undefined,
    name: string,
    input: unknown,
  ): Promise<unknown> {
    const user = username === undefined ? await this.me(ctx) : await this.get(ctx, username);
    await authorize(ctx, { action: 'user.manage', user });
    const row = { table: 'users', id: user.id } as const;
    return setRowExtra(this.repos, row, name, input, requireUser(ctx).username);
  }

  /** One custom attribute of a user removed; 404 when it has none such. */
  async removeExtra(
    ctx: ServiceContext,
    username: string | undefined,
    name: string,
  ): Promise<void> {
    const user = username === undefined ? await this.me(ctx) : await this.get(ctx, username);
    await authorize(ctx, { action: 'user.manage', user });
    const row = { table: 'users', id: user.id, label: `user '${user.username}'` } as const;
    await removeRowExtra(this.repos, row, name, requireUser(ctx).username);
  }

  /** A user's own rate limits: shown to that user and to superusers only. */
  rateLimitsOf(ctx: ServiceContext, user: UserEntity): UserRateLimits | undefined {
    const { actor } = ctx;
    if (!isSuperuser(actor) && !(actor.kind === 'user' && actor.id === user.id)) return undefined;
    return { perMinute: user.rateLimitPerMinute, perDay: user.rateLimitPerDay };
  }

  /** spec core §3: 204; 404 when missing or already deactivated. */
  async deactivate(ctx: ServiceContext, username: string): Promise<void> {
    await authorize(ctx, { action: 'user.activate' });
    const user = await this.repos.users.findByUsername(username);
    if (!user || !user.isActive) throw AppError.notFound(`User '${username}'`);
    if (user.isSuperuser && (await this.repos.users.countActiveSuperusers()) <= 1) {
      throw new AppError('CONFLICT', 'The last active superuser cannot be deactivated.');
    }
    user.isActive = false;
    user.updatedBy = requireUser(ctx).username;
    await this.repos.users.save(user);
  }

  /** spec core §3: 204; 404 when the user does not exist. */
  async reactivate(ctx: ServiceContext, username: string): Promise<void> {
    await authorize(ctx, { action: 'user.activate' });
    const user = await this.repos.users.findByUsername(username);
    if (!user) throw AppError.notFound(`User '${username}'`);
    if (user.isActive) return;
    user.isActive = true;
    user.updatedBy = requireUser(ctx).username;
    await this.repos.users.save(user);
  }

  private async assertUsernameFree(username: string): Promise<void> {
    if (await this.repos.users.usernameTaken(username)) throw usernameTaken(username);
  }

  private async insertUser(
    repos: Repositories,
    values: Partial<UserEntity> & { username: string },
  ): Promise<UserEntity> {
    try {
      return await repos.users.insert(values);
    } catch (error) {
      if (isUniqueViolation(error)) throw usernameTaken(values.username);
      throw error;
    }
  }
}

/**
 * Only a superuser sets a user's rate limits; anyone else gets 403 for a change (sending back
 * the values as they are, e.g. in a PUT of the whole record, changes nothing and passes).
 */
function assertMayChangeRateLimits(
  ctx: ServiceContext,
  user: UserEntity,
  changes: { rateLimitPerMinute?: number | null; rateLimitPerDay?: number | null },
): void {
  if (isSuperuser(ctx.actor)) return;
  const changed = (sent: number | null | undefined, current: number | null): boolean =>
    sent !== undefined && sent !== current;
  if (
    changed(changes.rateLimitPerMinute, user.rateLimitPerMinute) ||
    changed(changes.rateLimitPerDay, user.rateLimitPerDay)
  ) {
    throw new AppError('FORBIDDEN', "Only an administrator can change a user's rate limits.");
  }
}

function usernameTaken(username: string): AppError {
  return AppError.field('username', `A user with username '${username}' already exists.`);
}

export function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
