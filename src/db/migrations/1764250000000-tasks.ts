import PgBoss from 'pg-boss';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The schema pg-boss keeps its queues in (src/jobs/job-queue.ts names it too). */
const PGBOSS_SCHEMA = 'pgboss';

/**
 * Background tasks as users see them (OCL's task states), and the pg-boss schema that queues
 * them. pg-boss is installed here, once, by whoever migrates, so that processes (and parallel
 * test workers) starting together never race to create it; pg-boss migrates its own schema
 * forward at start after that, under its own advisory lock.
 */
export class Tasks1764250000000 implements MigrationInterface {
  name = 'Tasks1764250000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE tasks (
        id uuid PRIMARY KEY,
        kind text NOT NULL,
        state text NOT NULL DEFAULT 'PENDING'
          CHECK (state IN ('PENDING', 'STARTED', 'SUCCESS', 'FAILURE')),
        summary text,
        progress_done bigint NOT NULL DEFAULT 0,
        progress_total bigint,
        progress_message text,
        result jsonb,
        error text,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        finished_at timestamptz,
        -- written while the task runs; a STARTED task whose heartbeat stopped was abandoned
        heartbeat_at timestamptz
      )`);
    await q.query(`CREATE INDEX tasks_created_by ON tasks (created_by, created_at, id)`);
    await q.query(`CREATE INDEX tasks_started ON tasks (heartbeat_at) WHERE state = 'STARTED'`);

    const installed = (await q.query(
      `SELECT to_regclass('${PGBOSS_SCHEMA}.version')::text AS table`,
    )) as Array<{ table: string | null }>;
    if (installed[0]?.table) return;
    // The plan brackets itself in BEGIN … COMMIT; here it runs inside the migration's transaction.
    const plan = PgBoss.getConstructionPlans(PGBOSS_SCHEMA);
    const body = /^\s*BEGIN;([\s\S]*)COMMIT;\s*$/.exec(plan)?.[1];
    if (body === undefined) throw new Error('Unexpected pg-boss construction plan');
    await q.query(body);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP SCHEMA IF EXISTS ${PGBOSS_SCHEMA} CASCADE`);
    await q.query(`DROP TABLE tasks`);
  }
}
