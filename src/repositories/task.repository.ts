import type { EntityManager } from 'typeorm';
import { NOTIFY_CHANNEL } from '../db/notifications';
import type { Slice, Window } from './list';
import { taskNoticeSql } from './notification.repository';

/** OCL's task states. */
export type TaskState = 'PENDING' | 'STARTED' | 'SUCCESS' | 'FAILURE';

export interface TaskProgress {
  done: number;
  /** Null while the amount of work is unknown. */
  total: number | null;
  message: string | null;
}

export interface TaskRecord {
  id: string;
  kind: string;
  state: TaskState;
  summary: string | null;
  progress: TaskProgress;
  result: unknown;
  error: string | null;
  createdBy: string;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** STARTED, but its process is gone or silent for longer than the caller's limit. */
  abandoned: boolean;
}

export interface NewTask {
  id: string;
  kind: string;
  summary: string | null;
  createdBy: string;
}

/** The user a task runs as, when that user is still active. */
export interface TaskRunner {
  id: string;
  username: string;
  isSuperuser: boolean;
}

/** The one kind of connection pg-boss needs to write its job row in this repository's transaction. */
export interface SqlExecutor {
  executeSql(text: string, values: unknown[]): Promise<{ rows: unknown[] }>;
}

interface TaskRow {
  id: string;
  kind: string;
  state: TaskState;
  summary: string | null;
  progress_done: string;
  progress_total: string | null;
  progress_message: string | null;
  result: unknown;
  error: string | null;
  created_by: string;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  abandoned: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The `application_name` prefix of a worker process's liveness connection. */
export const WORKER_CONNECTION = 'registry-worker ';

/**
 * A STARTED task is abandoned when its process's liveness connection is gone (the process is
 * dead), or when nothing wrote its heartbeat for `$n` seconds (a process that cannot be asked).
 */
const abandoned = (n: number): string => `
  state = 'STARTED' AND (heartbeat_at < now() - make_interval(secs => $${n})
    OR (worker IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a
      WHERE a.application_name = '${WORKER_CONNECTION}' || tasks.worker)))`;

const columns = (n: number): string => `
  id::text AS id, kind, state, summary, progress_done::text AS progress_done,
  progress_total::text AS progress_total, progress_message, result, error, created_by,
  created_at, started_at, finished_at, (${abandoned(n)}) AS abandoned`;

/**
 * An UPDATE of tasks (`… RETURNING id::text AS id`) that also notifies the watchers of each task
 * it changed, in the same statement (so never of a task it did not change), on the channel
 * given as parameter `$channel`; as a CTE, so that the driver answers the rows as for a SELECT.
 */
function notifying(update: string, channel: number): string {
  return `WITH changed AS (${update})
    SELECT id, ${taskNoticeSql('id', `$${channel}`)} FROM changed`;
}

function recordOf(row: TaskRow): TaskRecord {
  return {
    id: row.id,
    kind: row.kind,
    state: row.state,
    summary: row.summary,
    progress: {
      done: Number(row.progress_done),
      total: row.progress_total === null ? null : Number(row.progress_total),
      message: row.progress_message,
    },
    result: row.result,
    error: row.error,
    createdBy: row.created_by,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    abandoned: row.abandoned,
  };
}

export class TaskRepository {
  constructor(private readonly em: EntityManager) {}

  /** Runs pg-boss's statements on this repository's connection (and transaction, if any). */
  sqlExecutor(): SqlExecutor {
    return {
      executeSql: async (text, values) => {
        const raw = await this.em.query<unknown[]>(text, values);
        // UPDATE and DELETE come back from TypeORM as `[rows, rowCount]`.
        const counted = raw.length === 2 && Array.isArray(raw[0]) && typeof raw[1] === 'number';
        return { rows: counted ? (raw[0] as unknown[]) : raw };
      },
    };
  }

  async insert(task: NewTask): Promise<TaskRecord> {
    const rows = await this.em.query<TaskRow[]>(
      `INSERT INTO tasks (id, kind, summary, created_by) VALUES ($1, $2, $3, $4)
       RETURNING ${columns(5)}`,
      [task.id, task.kind, task.summary, task.createdBy, 0],
    );
    return recordOf(rows[0]);
  }

  async findById(id: string, abandonedAfterSeconds: number): Promise<TaskRecord | null> {
    if (!UUID.test(id)) return null;
    const rows = await this.em.query<TaskRow[]>(`SELECT ${columns(2)} FROM tasks WHERE id = $1`, [
      id,
      abandonedAfterSeconds,
    ]);
    return rows.length ? recordOf(rows[0]) : null;
  }

  /** A user's tasks, newest first. */
  async findByCreator(
    username: string,
    window: Window,
    abandonedAfterSeconds: number,
  ): Promise<Slice<TaskRecord>> {
    const counted = await this.em.query<Array<{ total: number }>>(
      `SELECT count(*)::int AS total FROM tasks WHERE created_by = $1`,
      [username],
    );
    const total = counted[0].total;
    if (total === 0 || window.offset >= total) return { rows: [], total };
    const rows = await this.em.query<TaskRow[]>(
      `SELECT ${columns(2)} FROM tasks WHERE created_by = $1
       ORDER BY created_at DESC, id DESC
       LIMIT $3 OFFSET $4`,
      [username, abandonedAfterSeconds, window.limit > 0 ? window.limit : null, window.offset],
    );
    return { rows: rows.map(recordOf), total };
  }

  /**
   * PENDING → STARTED by this worker process; false when the task is gone or no longer pending
   * (never run it twice).
   */
  async markStarted(id: string, worker: string | null): Promise<boolean> {
    const rows = await this.em.query<Array<{ id: string }>>(
      notifying(
        `UPDATE tasks SET state = 'STARTED', started_at = now(), heartbeat_at = now(), worker = $2
         WHERE id = $1 AND state = 'PENDING' RETURNING id::text AS id`,
        3,
      ),
      [id, worker, NOTIFY_CHANNEL],
    );
    return rows.length === 1;
  }

  async saveProgress(id: string, progress: TaskProgress): Promise<void> {
    await this.em.query(
      notifying(
        `UPDATE tasks SET progress_done = $2, progress_total = $3, progress_message = $4,
           heartbeat_at = now()
         WHERE id = $1 AND state = 'STARTED' RETURNING id::text AS id`,
        5,
      ),
      [id, progress.done, progress.total, progress.message, NOTIFY_CHANNEL],
    );
  }

  async heartbeat(id: string): Promise<void> {
    await this.em.query(
      `UPDATE tasks SET heartbeat_at = now() WHERE id = $1 AND state = 'STARTED'`,
      [id],
    );
  }

  /**
   * STARTED → SUCCESS or FAILURE with the outcome (`result` as JSON text) and the last progress
   * reported; false when the task was already finished (e.g. failed at shutdown).
   */
  async finish(
    id: string,
    outcome: {
      state: 'SUCCESS' | 'FAILURE';
      resultJson: string | null;
      error: string | null;
      progress: TaskProgress | null;
    },
  ): Promise<boolean> {
    const { progress } = outcome;
    const rows = await this.em.query<Array<{ id: string }>>(
      notifying(
        `UPDATE tasks SET state = $2, result = $3::jsonb, error = $4, finished_at = now(),
           heartbeat_at = NULL,
           progress_done = CASE WHEN $5 THEN $6 ELSE progress_done END,
           progress_total = CASE WHEN $5 THEN $7 ELSE progress_total END,
           progress_message = CASE WHEN $5 THEN $8 ELSE progress_message END
         WHERE id = $1 AND state = 'STARTED' RETURNING id::text AS id`,
        9,
      ),
      [
        id,
        outcome.state,
        outcome.resultJson,
        outcome.error,
        progress !== null,
        progress?.done ?? 0,
        progress?.total ?? null,
        progress?.message ?? null,
        NOTIFY_CHANNEL,
      ],
    );
    return rows.length === 1;
  }

  /** Fails these STARTED tasks with one message; the ids of those it failed. */
  async failStarted(ids: string[], error: string): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.em.query<Array<{ id: string }>>(
      notifying(
        `UPDATE tasks SET state = 'FAILURE', error = $2, finished_at = now(), heartbeat_at = NULL
         WHERE id = ANY($1::uuid[]) AND state = 'STARTED' RETURNING id::text AS id`,
        3,
      ),
      [ids, error, NOTIFY_CHANNEL],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Fails every abandoned task (of `ids`, when given), as finished at its last heartbeat; how
   * many it failed.
   */
  async failAbandoned(
    abandonedAfterSeconds: number,
    error: string,
    ids?: string[],
  ): Promise<number> {
    const rows = await this.em.query<Array<{ id: string }>>(
      notifying(
        `UPDATE tasks SET state = 'FAILURE', error = $2, finished_at = heartbeat_at,
           heartbeat_at = NULL
         WHERE ${abandoned(1)}
           AND ($3::uuid[] IS NULL OR id = ANY($3::uuid[]))
         RETURNING id::text AS id`,
        4,
      ),
      [abandonedAfterSeconds, error, ids ?? null, NOTIFY_CHANNEL],
    );
    return rows.length;
  }

  /** How many tasks are in each state (states with none are absent). */
  async countByState(): Promise<Partial<Record<TaskState, number>>> {
    const rows = await this.em.query<Array<{ state: TaskState; n: number }>>(
      'SELECT state, count(*)::int AS n FROM tasks GROUP BY state',
    );
    return Object.fromEntries(rows.map((row) => [row.state, row.n]));
  }

  /** Deletes the tasks that finished more than `days` days ago; how many it deleted. */
  async deleteFinished(days: number): Promise<number> {
    const rows = await this.em.query<Array<{ n: number }>>(
      `WITH gone AS (DELETE FROM tasks
         WHERE state IN ('SUCCESS', 'FAILURE') AND finished_at < now() - make_interval(days => $1)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [days],
    );
    return rows[0].n;
  }

  /** The task's user as it is now: null when deactivated (a task never outlives its rights). */
  async findActiveRunner(userId: string): Promise<TaskRunner | null> {
    if (!/^\d{1,19}$/.test(userId)) return null;
    const rows = await this.em.query<
      Array<{ id: string; username: string; is_superuser: boolean }>
    >(`SELECT id::text AS id, username, is_superuser FROM users WHERE id = $1 AND is_active`, [
      userId,
    ]);
    return rows.length
      ? { id: rows[0].id, username: rows[0].username, isSuperuser: rows[0].is_superuser }
      : null;
  }
}
