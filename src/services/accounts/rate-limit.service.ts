import { AppError } from '../../errors';
import type { CounterState, Repositories } from '../../repositories';
import { hashSecret } from './credentials';

/** A window requests are counted in: its name (part of each counter's key) and its length. */
export interface RateWindow {
  name: string;
  ms: number;
}

/** A window with the limit one request is held to in it (0: none; absent: count exactly). */
export interface LimitedWindow extends RateWindow {
  limit?: number;
}

/** Requests counted in one window so far, and when that window ends. */
export type WindowCount = CounterState;

/**
 * How request counts are shared: a process counts a client's requests in memory, and hands them
 * to the shared counters at least this often (ms)...
 */
export const COUNT_FLUSH_MS = 100;
/** ...while the shared count it knows is at most this old (ms), ... */
const LOCAL_MAX_AGE_MS = 1_000;
/** ...the limit is at least this many... */
const LOCAL_MIN_LIMIT = 100;
/** ...and the client has used less than half of it; else each request is counted exactly. */
const LOCAL_SHARE = 0.5;

/** A counter as this process counts it: the shared state it last saw and its own hits since. */
interface LocalCounter {
  /** Hits counted by every process as of the last statement on this counter. */
  shared: number;
  /** Hits counted here since, not yet handed to the shared counter. */
  pending: number;
  /** Hits counted here and being handed to the shared counter by a statement not yet answered. */
  sending: number;
  resetAt: Date;
  windowMs: number;
  /** When `shared` was read (ms since the epoch). */
  syncedAt: number;
}

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
  private readonly local = new Map<string, LocalCounter>();

  constructor(private readonly repos: Repositories) {}

  /** Sets the failed-login limits; null (the default) counts nothing. */
  limitFailedLogins(limits: FailedLoginLimits | null): void {
    this.failedLogins = limits;
  }

  /**
   * Counts one request of `client` (`units` requests' worth) in every window; the counts after. Far below a window's limit
   * the request is counted in this process and handed on by `flush`, so most requests cost no
   * statement; near it (or for small limits, or when what this process knows of the other
   * processes' counts is old) every window is counted in one statement on the shared counters,
   * so that the limit holds exactly across processes where it matters.
   */
  async hit(client: string, windows: readonly LimitedWindow[], units = 1): Promise<WindowCount[]> {
    const now = Date.now();
    const keys = windows.map((window) => counterKey(window, client));
    const counters = keys.map((key) => this.local.get(key));
    if (windows.every((window, i) => countsLocally(counters[i], window.limit, units, now))) {
      return counters.map((counter) => {
        counter!.pending += units;
        return { hits: estimate(counter!), resetAt: counter!.resetAt };
      });
    }
    // This request and whatever this process counted of these clients so far, at once.
    const hits = counters.map((counter) => units + (counter?.pending ?? 0));
    const sending = counters.map((counter) => {
      if (!counter) return 0;
      const handed = counter.pending;
      counter.pending = 0;
      counter.sending += handed;
      return handed;
    });
    let states: Map<string, CounterState>;
    try {
      states = await this.repos.rateLimits.increment(
        windows.map((window, i) => ({ key: keys[i], windowMs: window.ms, hits: hits[i] })),
      );
    } catch (error) {
      counters.forEach((counter, i) => counter && unsend(counter, sending[i], true));
      throw error;
    }
    counters.forEach((counter, i) => counter && unsend(counter, sending[i], false));
    return keys.map((key, i) => {
      const state = states.get(key);
      if (!state) throw new Error(`No count came back for ${key}`);
      const counter = this.synced(key, windows[i].ms, state, now);
      // This request's count: the shared one, and what this process counted while it was asked.
      return { hits: state.hits + counter.sending + counter.pending, resetAt: state.resetAt };
    });
  }

  /**
   * Hands the requests this process counted to the shared counters (one statement), learns their
   * shared counts, and forgets counters it has not needed for a while. Run every
   * `COUNT_FLUSH_MS` by each process, and at its stop.
   */
  async flush(): Promise<void> {
    const now = Date.now();
    const due: Array<{ key: string; windowMs: number; hits: number; counter: LocalCounter }> = [];
    for (const [key, counter] of this.local) {
      if (counter.resetAt.getTime() <= now)
        this.local.delete(key); // its hits ended with it
      else if (counter.pending > 0) {
        due.push({ key, windowMs: counter.windowMs, hits: counter.pending, counter });
        counter.sending += counter.pending;
        counter.pending = 0;
      } else if (now - counter.syncedAt > LOCAL_MAX_AGE_MS) this.local.delete(key);
    }
    if (due.length === 0) return;
    let states: Map<string, CounterState>;
    try {
      states = await this.repos.rateLimits.increment(due);
    } catch (error) {
      for (const { counter, hits } of due) unsend(counter, hits, true);
      throw error;
    }
    for (const { counter, hits } of due) unsend(counter, hits, false);
    for (const { key, windowMs } of due) {
      const state = states.get(key);
      if (state) this.synced(key, windowMs, state, now);
    }
  }

  /** Records a counter's shared state as a statement answered it at `now`. */
  private synced(key: string, windowMs: number, state: CounterState, now: number): LocalCounter {
    const counter = this.local.get(key);
    if (counter && counter.resetAt.getTime() === state.resetAt.getTime()) {
      // Statements may answer out of order; a count only grows within its window.
      counter.shared = Math.max(counter.shared, state.hits);
      counter.syncedAt = now;
      return counter;
    }
    // New here, or a new window: what was counted here belonged to the window that ended.
    const fresh: LocalCounter = {
      shared: state.hits,
      pending: 0,
      sending: 0,
      resetAt: state.resetAt,
      windowMs,
      syncedAt: now,
    };
    this.local.set(key, fresh);
    return fresh;
  }

  /** The count of `client` in `window`, when its window is open. */
  async count(client: string, window: RateWindow): Promise<WindowCount | undefined> {
    const key = counterKey(window, client);
    return (await this.repos.rateLimits.find([key])).get(key);
  }

  /** Takes back one counted request. */
  async uncount(client: string, window: RateWindow): Promise<void> {
    const counter = this.local.get(counterKey(window, client));
    if (counter && counter.pending > 0) counter.pending -= 1;
    else await this.repos.rateLimits.decrement(counterKey(window, client));
  }

  /** Forgets the count of `client` in `window`. */
  reset(client: string, window: RateWindow): Promise<void> {
    this.local.delete(counterKey(window, client));
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

/** The count of a window as this process knows it. */
function estimate(counter: LocalCounter): number {
  return counter.shared + counter.sending + counter.pending;
}

/** A statement handing on `hits` was answered: they are shared now, or (`failed`) pending again. */
function unsend(counter: LocalCounter, hits: number, failed: boolean): void {
  counter.sending -= hits;
  if (failed) counter.pending += hits;
}

/** Whether `units` more requests may be counted in this process alone (see `hit`). */
function countsLocally(
  counter: LocalCounter | undefined,
  limit: number | undefined,
  units: number,
  now: number,
): counter is LocalCounter {
  if (!counter || limit === undefined) return false;
  if (counter.resetAt.getTime() <= now || now - counter.syncedAt > LOCAL_MAX_AGE_MS) return false;
  if (limit === 0) return true;
  return limit >= LOCAL_MIN_LIMIT && estimate(counter) + units <= limit * LOCAL_SHARE;
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
