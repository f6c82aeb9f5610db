import type { EntityManager } from 'typeorm';
import { preparedQuery } from './prepared';

/**
 * Hits to count on a counter: its key, how many (one unless hits counted in one process are
 * handed on together) and, when it starts afresh, how long its window lasts.
 */
export interface CounterHit {
  key: string;
  windowMs: number;
  hits?: number;
}

/** A counter as it stands: hits in its current window and when that window ends. */
export interface CounterState {
  hits: number;
  resetAt: Date;
}

interface CounterRow {
  key: string;
  hits: number;
  reset_at: Date;
}

/**
 * Rate-limit counters (`rate_limit_counters`), shared by every server process. A counter whose
 * window has ended counts as absent; the next hit starts a new window.
 */
export class RateLimitRepository {
  constructor(private readonly em: EntityManager) {}

  /**
   * Counts the hits on each counter, in one statement, and answers their states after it. The
   * upsert takes each row's lock, so parallel hits on one counter all count; rows are taken in key
   * order, so two statements touching the same counters cannot deadlock.
   */
  async increment(counters: readonly CounterHit[]): Promise<Map<string, CounterState>> {
    const sorted = [...counters].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    // Prepared (it runs on every request): planning it would cost more than running it.
    const rows = await preparedQuery<CounterRow>(this.em, INCREMENT, [
      sorted.map((c) => c.key),
      sorted.map((c) => c.hits ?? 1),
      sorted.map((c) => c.windowMs / 1000),
    ]);
    return statesOf(rows);
  }

  /** The counters among `keys` whose window is still open. */
  async find(keys: readonly string[]): Promise<Map<string, CounterState>> {
    const rows = await this.em.query<CounterRow[]>(
      `SELECT key, hits, reset_at FROM rate_limit_counters
       WHERE key = ANY($1::text[]) AND reset_at > now()`,
      [keys],
    );
    return statesOf(rows);
  }

  /** Takes one hit back from a counter whose window is still open. */
  async decrement(key: string): Promise<void> {
    await this.em.query(
      `UPDATE rate_limit_counters SET hits = hits - 1
       WHERE key = $1 AND hits > 0 AND reset_at > now()`,
      [key],
    );
  }

  async delete(keys: readonly string[]): Promise<void> {
    await this.em.query(`DELETE FROM rate_limit_counters WHERE key = ANY($1::text[])`, [keys]);
  }

  /** Removes the counters whose window has ended; answers how many. */
  async deleteExpired(): Promise<number> {
    const [, count] = await this.em.query<[unknown, number]>(
      `DELETE FROM rate_limit_counters WHERE reset_at <= now()`,
    );
    return count;
  }
}

/**
 * The upsert of any number of counters, given as arrays, taken in key order (the caller sorts):
 * one prepared statement whatever their number.
 */
const INCREMENT = `
  INSERT INTO rate_limit_counters AS c (key, hits, reset_at)
  SELECT key, hits, now() + seconds * interval '1 second'
  FROM unnest($1::text[], $2::int[], $3::float8[]) WITH ORDINALITY AS h(key, hits, seconds, i)
  ORDER BY i
  ON CONFLICT (key) DO UPDATE SET
    hits = CASE WHEN c.reset_at <= now() THEN excluded.hits ELSE c.hits + excluded.hits END,
    reset_at = CASE WHEN c.reset_at <= now() THEN excluded.reset_at ELSE c.reset_at END
  RETURNING c.key, c.hits, c.reset_at`;

function statesOf(rows: CounterRow[]): Map<string, CounterState> {
  return new Map(
    rows.map((row) => [row.key, { hits: Number(row.hits), resetAt: new Date(row.reset_at) }]),
  );
}
