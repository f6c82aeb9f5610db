import { AppError } from '../errors';
import type { CounterState, Repositories } from '../repositories';
import { hashSecret } from './credentials';

/** A window requests are counted in: its name (part of each counter's key) and its length. */
export interface RateWindow {
  name: string;
  ms: number;
}

/** Requests counted in one window so far, and when that window ends. */
export type WindowCount = CounterState;

/** The failed-login limits (spec core §8.2 leaves them to us); a limit of 0 is off. */
export interface FailedLoginLimits {
  /** Failures per account (username) within a window, after which its logins are refused. */
  perAccount: number;
  /** Failures from one client address within a window, after which its logins are refused. */
  perClient: number;
  windowMs: number;
}

/** The counters one login attempt is counted on; see `admitLogin`. */
export interface LoginAttempt {
  keys: string[];
  /** The account's failure counter, when it has failures on record (a success clears it). */
  accountToClear?: string;
}

const NO_ATTEMPT: LoginAttempt = { keys: [] };

/**
 * Request counters shared by every server process (spec core §8.2), and the limit on failed
 * logins. Counters live in the database so that all processes see the same counts.
 */
export class RateLimitService {
  private failedLogins: FailedLoginLimits | null = null;

  constructor(private readonly repos: Repositories) {}

  /** Sets the failed-login limits; null (the default) counts nothing. */
  limitFailedLogins(limits: FailedLoginLimits | null): void {
    this.failedLogins = limits;
  }

  /** Counts one request of `client` in every window at once (one statement); the counts after. */
  async hit(client: string, windows: readonly RateWindow[]): Promise<WindowCount[]> {
    const states = await this.repos.rateLimits.increment(
      windows.map((window) => ({ key: counterKey(window, client), windowMs: window.ms })),
    );
    return windows.map((window) => {
      const state = states.get(counterKey(window, client));
      if (!state) throw new Error(`No count came back for ${counterKey(window, client)}`);
      return state;
    });
  }

  /** The count of `client` in `window`, when its window is open. */
  async count(client: string, window: RateWindow): Promise<WindowCount | undefined> {
    const key = counterKey(window, client);
    return (await this.repos.rateLimits.find([key])).get(key);
  }

  /** Takes back one counted request. */
  uncount(client: string, window: RateWindow): Promise<void> {
    return this.repos.rateLimits.decrement(counterKey(window, client));
  }

  /** Forgets the count of `client` in `window`. */
  reset(client: string, window: RateWindow): Promise<void> {
    return this.repos.rateLimits.delete([counterKey(window, client)]);
  }

  /** Deletes counters whose window has ended; answers how many. */
  sweep(): Promise<number> {
    return this.repos.rateLimits.deleteExpired();
  }

  /**
   * Lets a login attempt (password or HTTP Basic) for `username` from `client` go ahead, or
   * refuses it with 429 and Retry-After while the account or the address has failed too often
   * in the current window, even when the password would be right.
   */
  async admitLogin(username: string | null, client: string | undefined): Promise<LoginAttempt> {
    const limits = this.failedLogins;
    if (!limits) return NO_ATTEMPT;
    const watched: Array<{ key: string; limit: number }> = [];
    const account = username ? accountKey(username) : undefined;
    if (account && limits.perAccount > 0) watched.push({ key: account, limit: limits.perAccount });
    if (client && limits.perClient > 0) {
      watched.push({ key: `login-client:${client}`, limit: limits.perClient });
    }
    if (watched.length === 0) return NO_ATTEMPT;
    const states = await this.repos.rateLimits.find(watched.map((w) => w.key));
    const blockedUntil = watched
      .map(({ key, limit }) => {
        const state = states.get(key);
        return state && state.hits >= limit ? state.resetAt.getTime() : 0;
      })
      .reduce((a, b) => Math.max(a, b), 0);
    if (blockedUntil > 0) {
      const seconds = Math.max(1, Math.ceil((blockedUntil - Date.now()) / 1000));
      throw new AppError(
        'RATE_LIMITED',
        `Too many failed logins for this account or from this address; try again in ${seconds} seconds.`,
        undefined,
        seconds,
      );
    }
    return {
      keys: watched.map((w) => w.key),
      accountToClear: account && states.has(account) ? account : undefined,
    };
  }

  /** Counts a failed attempt on its account and address (one statement). */
  async loginFailed(attempt: LoginAttempt): Promise<void> {
    const limits = this.failedLogins;
    if (!limits || attempt.keys.length === 0) return;
    await this.repos.rateLimits.increment(
      attempt.keys.map((key) => ({ key, windowMs: limits.windowMs })),
    );
  }

  /** A successful login clears its account's failures (not its address's). */
  async loginSucceeded(attempt: LoginAttempt): Promise<void> {
    if (attempt.accountToClear) await this.repos.rateLimits.delete([attempt.accountToClear]);
  }
}

function counterKey(window: RateWindow, client: string): string {
  return `${window.name}:${client}`;
}

/** Case-folded, so that `Alice` and `alice` share one counter; an odd or long name is hashed. */
function accountKey(username: string): string {
  const name = username.toLowerCase();
  const plain = name.length <= 150 && !name.includes('\u0000');
  return `login-account:${plain ? name : `#${hashSecret(name)}`}`;
}
