import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import type { UserEntity } from '../../db/entities';
import { AppError } from '../../errors';
import type { Notifications } from '../../db/notifications';
import type { Repositories, TokenHolder } from '../../repositories';
import { ANONYMOUS, type Actor, type ServiceContext } from '../shared/context';
import { dummyHash, hashSecret, newSecret, verifyPassword } from './credentials';
import type { OidcService } from './oidc.service';
import type { RateLimitService } from './rate-limit.service';
import type { UserService } from './user.service';
import { parseInput, redirectUrl } from '../shared/validation';
import { requireUser } from '../shared/access';

const loginSchema = z.object({
  username: z.string({ error: 'This field is required.' }).min(1, 'This field is required.'),
  password: z.string({ error: 'This field is required.' }).min(1, 'This field is required.'),
  emailVerifySuccessUrl: redirectUrl,
  emailVerifyFailureUrl: redirectUrl,
});

export type LoginInput = z.input<typeof loginSchema>;

/** The schemas the service validates its input with, for the API reference. */
export const authInput = { login: loginSchema };

/**
 * Where the database announces a change to a user or their API tokens, with the user's id
 * (triggers of migration `AccountNotifications1765400000000`).
 */
export const ACCOUNTS_CHANNEL = 'registry_accounts';

export class AuthService {
  /** Successful Basic logins, remembered briefly so a client sending Basic on every call stays fast. */
  private readonly basicCache = new LRUCache<string, string>({ max: 1000, ttl: 60_000 });
  /**
   * The holders of API tokens checked here, by token hash, so that a signed-in request costs no
   * statement. Kept only while `notifications` is live; a user's are dropped when the database
   * announces a change to that user or their tokens (`ACCOUNTS_CHANNEL`), all at every gap.
   */
  private readonly holders = new LRUCache<string, Readonly<TokenHolder>>({ max: 10_000 });
  /** Moves on at every drop: a holder read before it is not kept (it may be the dropped one). */
  private generation = 0;

  constructor(
    private readonly repos: Repositories,
    private readonly users: UserService,
    private readonly rateLimits: RateLimitService,
    private readonly oidc: OidcService,
    private readonly notifications: Notifications,
  ) {
    // Made now, so that the first login of an unknown user takes no longer than any other.
    dummyHash().catch(() => undefined);
    notifications.on(ACCOUNTS_CHANNEL, (userId) => this.forget(userId));
    notifications.onGap(() => this.forget());
  }

  /**
   * The actor behind an `Authorization` header (spec core §5): `Token <token>` (also `Bearer`),
   * our API token or, with single sign-on, the identity provider's access token; or HTTP Basic. No header means anonymous; a wrong one is a 401, never silently anonymous.
   * Basic credentials count as a login attempt from `client` (the caller's address).
   */
  async authenticate(header: string | undefined, client?: string): Promise<Actor> {
    if (!header || header.trim() === '') return ANONYMOUS;
    const [scheme, ...rest] = header.trim().split(/\s+/);
    const value = rest.join(' ');
    switch (scheme.toLowerCase()) {
      case 'token':
      case 'bearer': {
        const holder = value ? await this.tokenHolder(hashSecret(value)) : null;
        if (holder) return { kind: 'user', ...holder };
        const signedOn = value ? await this.oidc.actorFor(value) : null;
        if (!signedOn) throw new AppError('UNAUTHENTICATED', 'Invalid token.');
        return signedOn;
      }
      case 'basic': {
        const user = await this.basicUser(value, client);
        if (!user) throw new AppError('UNAUTHENTICATED', 'Invalid username or password.');
        return actorOf(user);
      }
      default:
        throw new AppError(
          'UNAUTHENTICATED',
          `Unsupported authorization scheme '${scheme}'; use Token or Basic.`,
        );
    }
  }

  /** The active user holding the token with this hash: kept, or read and kept. */
  private async tokenHolder(hash: string): Promise<Readonly<TokenHolder> | null> {
    const live = this.notifications.live;
    const kept = live ? this.holders.get(hash) : undefined;
    if (kept) return kept;
    const generation = this.generation;
    const holder = await this.repos.tokens.findActiveHolder(hash);
    if (holder && live && this.notifications.live && generation === this.generation) {
      this.holders.set(
        hash,
        Object.freeze({ ...holder, rateLimits: Object.freeze(holder.rateLimits) }),
      );
    }
    return holder;
  }

  /** Drops the kept holders of one user, or of all. */
  private forget(userId?: string): void {
    this.generation += 1;
    if (userId === undefined) {
      this.holders.clear();
      return;
    }
    const dropped: string[] = [];
    for (const [hash, holder] of this.holders.entries())
      if (holder.id === userId) dropped.push(hash);
    for (const hash of dropped) this.holders.delete(hash);
  }

  /** `POST /users/login/`: a new API token for valid credentials of an active, verified user. */
  async login(ctx: ServiceContext, input: unknown): Promise<{ token: string; user: UserEntity }> {
    const data = parseInput(loginSchema, input);
    const attempt = await this.rateLimits.admitLogin(data.username, ctx.client);
    const user = await this.repos.users.findByUsername(data.username);
    // An unknown user's password is checked too (against a throwaway hash): same time taken.
    if (!(await verifyPassword(user?.passwordHash, data.password)) || !user) {
      await this.rateLimits.loginFailed(attempt);
      throw AppError.invalid('Unable to log in with provided credentials.');
    }
    await this.rateLimits.loginSucceeded(attempt);
    if (!user.isActive) throw new AppError('UNAUTHENTICATED', 'This account is deactivated.');
    if (!user.verified) {
      await this.users.sendVerification(ctx, user, {
        successUrl: data.emailVerifySuccessUrl,
        failureUrl: data.emailVerifyFailureUrl,
      });
      throw new AppError(
        'UNAUTHENTICATED',
        `Email address not verified. A new verification link was sent to ${user.email}.`,
      );
    }
    const { secret, hash } = newSecret();
    await this.repos.tokens.insert(user.id, hash);
    return { token: secret, user };
  }

  /**
   * `GET /users/api-token/`: the caller's API token (OCL shows it on the profile). Only hashes are
   * stored, so the token is the one the caller signed in with when that is one of ours;
   * otherwise (Basic credentials, another scheme) a new one is issued.
   */
  async apiToken(ctx: ServiceContext, presented: string | undefined): Promise<string> {
    const actor = requireUser(ctx);
    if (presented) {
      const holder = await this.repos.tokens.findActiveHolder(hashSecret(presented));
      if (holder?.id === actor.id) return presented;
    }
    const { secret, hash } = newSecret();
    await this.repos.tokens.insert(actor.id, hash);
    return secret;
  }

  private async basicUser(encoded: string, client: string | undefined): Promise<UserEntity | null> {
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    // No stored username or password holds a NUL.
    const username = colon > 0 && !decoded.includes('\u0000') ? decoded.slice(0, colon) : null;
    const attempt = await this.rateLimits.admitLogin(username, client);
    if (username === null) {
      await this.rateLimits.loginFailed(attempt);
      return null;
    }
    const password = decoded.slice(colon + 1);
    const user = await this.repos.users.findByUsername(username);
    const usable = user?.isActive && user.verified ? user : null;
    // The stored hash is part of the key, so a password change invalidates what was remembered.
    const key = usable
      ? hashSecret(`${usable.id}\u0000${usable.passwordHash ?? ''}\u0000${password}`)
      : '';
    if (usable && this.basicCache.get(key) === usable.id) return usable;
    // Checked whether or not the user exists or may log in: the time taken tells nothing.
    const verified = await verifyPassword(user?.passwordHash, password);
    if (!usable || !verified) {
      await this.rateLimits.loginFailed(attempt);
      return null;
    }
    this.basicCache.set(key, usable.id);
    await this.rateLimits.loginSucceeded(attempt);
    return usable;
  }
}

function actorOf(user: UserEntity): Actor {
  return {
    kind: 'user',
    id: user.id,
    username: user.username,
    isSuperuser: user.isSuperuser,
    rateLimits: { perMinute: user.rateLimitPerMinute, perDay: user.rateLimitPerDay },
  };
}
