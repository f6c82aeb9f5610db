import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rate-limit counters (spec core §8.2) shared by every server process, and the per-user limits an
 * administrator may set.
 *
 * The counters are UNLOGGED: they are written on every request, so skipping the WAL keeps that
 * cheap, and losing them in a crash only forgives some requests. One row per key and window (the
 * key names its window: `minute:ip:…`, `day:user:…`, `login-account:…`); a row whose `reset_at`
 * has passed counts from zero again. No index beyond the key, and room left in each page, so the
 * per-request update stays a HOT update.
 */
export class RateLimits1764400000000 implements MigrationInterface {
  name = 'RateLimits1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE UNLOGGED TABLE rate_limit_counters (
        key text PRIMARY KEY,
        hits integer NOT NULL,
        reset_at timestamptz NOT NULL
      ) WITH (fillfactor = 70)`);
    await q.query(`
      ALTER TABLE users
        ADD COLUMN rate_limit_per_minute integer CHECK (rate_limit_per_minute >= 0),
        ADD COLUMN rate_limit_per_day integer CHECK (rate_limit_per_day >= 0)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE users DROP COLUMN rate_limit_per_minute, DROP COLUMN rate_limit_per_day`,
    );
    await q.query(`DROP TABLE rate_limit_counters`);
  }
}
