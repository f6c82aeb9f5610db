import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Client, type Pool } from 'pg';
import PgBoss from 'pg-boss';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { AppError, isAppError } from '../errors';
import type { Notifications } from '../db/notifications';
import type { Logger } from '../logger';
import { taskDuration } from '../metrics/registry';
import type { Repositories, Slice, TaskRecord, Window } from '../repositories';
import { WORKER_CONNECTION } from '../repositories/task.repository';
import { RunningTask } from './running-task';
import type { TaskActor, TaskHandler, TaskView } from './types';

/** pg-boss's own schema (installed by the `tasks` migration). */
const PGBOSS_SCHEMA = 'pgboss';
/** A STARTED task whose heartbeat is older than this was abandoned by a stopped process. */
export const ABANDONED_AFTER_SECONDS = 60;
/** How often an idle worker looks for work queued by other processes. */
const POLL_MS = 2000;
/** How often worker processes delete old finished tasks. */
const PRUNE_INTERVAL_MS = 3600_000;
/** Handlers that ignore the abort signal are given up on this long after it is sent. */
const ABORT_WAIT_MS = 2000;
/**
 * pg-boss expires an active job after this (its maximum is 24 h); a task still running then
 * keeps running and records its outcome, but pg-boss no longer tracks it.
 */
const EXPIRE_SECONDS = 23 * 3600;

const INTERNAL_ERROR = 'The task failed because of an internal error.';
const ABANDONED =
  'The process running this task stopped before it finished (crash or restart); run it again.';
const INTERRUPTED =
  'The server stopped while this task was running; it was not finished. Run it again.';

const KIND = /^[A-Za-z][\w.-]{0,99}$/;
/** Postgres `deadlock_detected`. */
const DEADLOCK = '40P01';

export interface JobQueueOptions {
  /** Tasks this process runs at once; 0: it only enqueues, other processes run them. */
  workers: number;
  /** On stop, how long running tasks may take to finish before they are aborted. */
  shutdownSeconds: number;
  /** Finished tasks are deleted this many days after they finished (by worker processes); 0 keeps them. */
  keepFinishedDays: number;
  log: Logger;
}

/** What pg-boss stores for a job. */
interface JobData {
  payload: unknown;
  actor: TaskActor;
  baseUrl: string;
}

interface Running {
  task: RunningTask | null;
  kind: string;
  done: Promise<void>;
}

/**
 * Background tasks on pg-boss in the same database (schema `pgboss`), with their user-facing
 * state in the `tasks` table. Each kind of task has its own pg-boss queue, so a process only
 * ever takes work it has a handler for. Tasks are not retried: user-requested work may not be
 * safe to repeat, so a task that fails, or whose process dies, ends as FAILURE with a message
 * and the user runs it again. A PENDING task survives restarts (its job waits in pg-boss).
 */
export class JobQueue {
  private readonly handlers = new Map<string, TaskHandler<never>>();
  /** Kinds whose pg-boss queue exists (creation is idempotent and races safely). */
  private readonly queues = new Map<string, Promise<void>>();
  private readonly readyKinds: string[] = [];
  private readonly running = new Map<string, Running>();
  private readonly finished = new EventEmitter().setMaxListeners(0);
  private boss: PgBoss | undefined;
  private options: JobQueueOptions | undefined;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private nudged = false;
  private stopping = false;
  private stopped: Promise<void> | undefined;
  private pruning: NodeJS.Timeout | undefined;
  private sweeping: NodeJS.Timeout | undefined;
  /** This process's id on the tasks it runs, named by its liveness connection. */
  private readonly worker = crypto.randomUUID();
  private liveness: Client | undefined;
  /**
   * Whether other sessions see the liveness connection. Behind a pooler in transaction mode
   * (PgBouncer) an idle client holds no server connection and would look dead: then tasks carry
   * no worker id and only their heartbeat tells (a live process's tasks are never failed).
   */
  private livenessSeen = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly repos: Repositories,
    /** Every process hears what a task wrote before the task is recorded as finished. */
    private readonly notifications: Notifications,
  ) {}

  /** Registers the handler of one kind of task, once, at composition time (before or after start). */
  register<P>(kind: string, handler: TaskHandler<P>): void {
    if (!KIND.test(kind)) throw new Error(`Invalid task kind '${kind}'`);
    if (this.handlers.has(kind)) throw new Error(`Task kind '${kind}' is registered twice`);
    this.handlers.set(kind, handler);
    if (this.boss) this.createQueue(kind);
  }

  get started(): boolean {
    return this.boss !== undefined && !this.stopping;
  }

  /** Connects to pg-boss, fails tasks abandoned by stopped processes and starts the workers. */
  async start(options: JobQueueOptions): Promise<void> {
    if (this.boss) throw new Error('The job queue is already started');
    const url = (this.dataSource.options as { url?: string }).url;
    if (!url) throw new Error('The job queue needs a data source configured by URL');
    this.options = options;
    const boss = new PgBoss({
      connectionString: url,
      schema: PGBOSS_SCHEMA,
      application_name: 'registry-jobs',
      max: 2,
      // Our migrations install the schema; pg-boss upgrades it itself, under its advisory lock.
      migrate: true,
      schedule: false,
      // Expiry, archiving and deletion of old jobs, run by one worker process at a time.
      supervise: options.workers > 0,
      retryLimit: 0,
      expireInSeconds: EXPIRE_SECONDS,
    });
    boss.on('error', (error: unknown) => options.log.warn({ err: error }, 'job queue error'));
    await boss.start();
    this.boss = boss;
    const swept = await this.repos.tasks.failAbandoned(ABANDONED_AFTER_SECONDS, ABANDONED);
    if (swept > 0) options.log.warn({ tasks: swept }, 'abandoned tasks marked FAILURE');
    for (const kind of this.handlers.keys()) this.createQueue(kind);
    await Promise.all(this.queues.values());
    if (options.workers > 0) {
      await this.connectLiveness(url);
      this.loop = this.dispatch(options.workers);
      // Killed processes' tasks are recorded FAILURE within a minute or two, read or not.
      this.sweeping = setInterval(() => {
        this.repos.tasks
          .failAbandoned(ABANDONED_AFTER_SECONDS, ABANDONED)
          .then((n) => n > 0 && options.log.warn({ tasks: n }, 'abandoned tasks marked FAILURE'))
          .catch((error: unknown) =>
            options.log.warn({ err: error }, 'could not record abandoned tasks'),
          );
      }, ABANDONED_AFTER_SECONDS * 1000).unref();
    }
    if (options.workers > 0 && options.keepFinishedDays > 0) {
      const prune = (): void => {
        this.pruneFinished().catch((error: unknown) =>
          options.log.warn({ err: error }, 'pruning finished tasks failed'),
        );
      };
      prune();
      this.pruning = setInterval(prune, PRUNE_INTERVAL_MS).unref();
    }
    options.log.info(
      { workers: options.workers, kinds: [...this.handlers.keys()] },
      'job queue started',
    );
  }

  /**
   * Stops taking work, lets running tasks finish within the shutdown grace, then aborts them
   * and records those still running as FAILURE; closes pg-boss's connections.
   */
  stop(): Promise<void> {
    this.stopped ??= this.shutdown();
    return this.stopped;
  }

  /**
   * Deletes the tasks that finished more than `keepFinishedDays` ago (worker processes do it at
   * start and hourly); how many it deleted.
   */
  async pruneFinished(): Promise<number> {
    const days = this.options?.keepFinishedDays ?? 0;
    if (days <= 0) return 0;
    const deleted = await this.repos.tasks.deleteFinished(days);
    if (deleted > 0) this.options?.log.info({ tasks: deleted, days }, 'old finished tasks deleted');
    return deleted;
  }

  /** Records a PENDING task and queues its job, in one transaction; returns at once. */
  async enqueue(
    kind: string,
    payload: unknown,
    by: { actor: TaskActor; baseUrl: string; summary?: string },
  ): Promise<TaskView> {
    const boss = this.boss;
    if (!boss || this.stopping) throw new Error('The job queue is not running');
    if (!this.handlers.has(kind)) throw new Error(`No handler is registered for '${kind}'`);
    await this.queues.get(kind);
    const id = crypto.randomUUID();
    const data: JobData = { payload, actor: by.actor, baseUrl: by.baseUrl };
    const record = await this.repos.transaction(async (tx) => {
      const inserted = await tx.tasks.insert({
        id,
        kind,
        summary: by.summary ?? null,
        createdBy: by.actor.username,
      });
      const jobId = await boss.send(kind, data, {
        id,
        retryLimit: 0,
        expireInSeconds: EXPIRE_SECONDS,
        db: tx.tasks.sqlExecutor(),
      });
      if (jobId !== id) throw new Error(`pg-boss did not queue task ${id} (${kind})`);
      return inserted;
    });
    this.nudge();
    return viewOf(record);
  }

  async find(id: string): Promise<TaskView | null> {
    const read = () => this.repos.tasks.findById(id, ABANDONED_AFTER_SECONDS);
    const record = await read();
    if (record?.abandoned && (await this.recordAbandoned([record.id]))) {
      return viewOf((await read()) ?? record);
    }
    return record ? viewOf(record) : null;
  }

  async findByCreator(username: string, window: Window): Promise<Slice<TaskView>> {
    const read = () => this.repos.tasks.findByCreator(username, window, ABANDONED_AFTER_SECONDS);
    let slice = await read();
    const abandoned = slice.rows.filter((r) => r.abandoned).map((r) => r.id);
    if (abandoned.length > 0 && (await this.recordAbandoned(abandoned))) slice = await read();
    return { rows: slice.rows.map(viewOf), total: slice.total };
  }

  /**
   * Records as FAILURE the abandoned tasks a read came across (their process was killed and
   * cannot), so that they stay failed in every later read and in the database; false when
   * that write failed (the read still shows them failed).
   */
  private async recordAbandoned(ids: string[]): Promise<boolean> {
    try {
      await this.repos.tasks.failAbandoned(ABANDONED_AFTER_SECONDS, ABANDONED, ids);
      return true;
    } catch (error) {
      this.options?.log.warn({ err: error, tasks: ids }, 'could not record abandoned tasks');
      return false;
    }
  }

  /** The use of the connection pool (the app's: the queue shares its data source), for the metrics. */
  poolUse(): { totalCount: number; idleCount: number; waitingCount: number } | undefined {
    if (!this.dataSource.isInitialized) return undefined;
    return (this.dataSource.driver as PostgresDriver).master as Pool | undefined;
  }

  /** How many tasks are in each state (for the metrics, read when they are scraped). */
  countByState(): ReturnType<Repositories['tasks']['countByState']> {
    return this.repos.tasks.countByState();
  }

  /**
   * Resolves when this process finishes the task, or after `ms` (the task may run elsewhere:
   * callers read it again either way).
   */
  settled(id: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.finished.off(id, done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.finished.on(id, done);
    });
  }

  /**
   * Creates the kind's pg-boss queue (idempotent). Creations run one at a time here, and one
   * that deadlocks with another process's (pg-boss's `create_queue` is not locked) is retried.
   */
  private createQueue(kind: string): void {
    const boss = this.boss;
    if (!boss || this.queues.has(kind)) return;
    const previous = [...this.queues.values()].at(-1) ?? Promise.resolve();
    const created = previous
      .catch(() => undefined)
      .then(async () => {
        for (let attempt = 1; ; attempt += 1) {
          try {
            await boss.createQueue(kind, {
              name: kind,
              retryLimit: 0,
              expireInSeconds: EXPIRE_SECONDS,
            });
            break;
          } catch (error) {
            if ((error as { code?: string }).code !== DEADLOCK || attempt >= 5) throw error;
            await new Promise((resolve) => setTimeout(resolve, 20 * attempt + 50 * Math.random()));
          }
        }
        this.readyKinds.push(kind);
        this.nudge();
      });
    created.catch((error: unknown) =>
      this.options?.log.error({ err: error, kind }, 'could not create the job queue'),
    );
    this.queues.set(kind, created);
  }

  /** The worker loop: takes one job at a time from the kinds' queues in turn, `workers` at once. */
  private async dispatch(workers: number): Promise<void> {
    const boss = this.boss as PgBoss;
    let turn = 0;
    while (!this.stopping) {
      if (this.running.size >= workers) {
        await this.pause(POLL_MS);
        continue;
      }
      let job: { kind: string; id: string; data: JobData } | undefined;
      const kinds = [...this.readyKinds];
      try {
        for (let i = 0; i < kinds.length && !job && !this.stopping; i += 1) {
          const kind = kinds[(turn + i) % kinds.length];
          const [next] = await boss.fetch<JobData>(kind, { batchSize: 1 });
          if (next) job = { kind, id: next.id, data: next.data };
        }
      } catch (error) {
        this.options?.log.warn({ err: error }, 'could not fetch jobs');
      }
      turn += 1;
      if (job) this.launch(job.kind, job.id, job.data);
      else await this.pause(POLL_MS);
    }
  }

  /** Waits `ms`, or less when `nudge()` is called (also just before: nothing is missed). */
  private pause(ms: number): Promise<void> {
    if (this.nudged) {
      this.nudged = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    }).finally(() => {
      this.wake = undefined;
      this.nudged = false;
    });
  }

  /** There may be work (a task queued or finished here): the worker loop looks at once. */
  private nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  private launch(kind: string, id: string, data: JobData): void {
    const entry: Running = { task: null, kind, done: Promise.resolve() };
    entry.done = this.execute(kind, id, data, entry)
      .catch((error: unknown) =>
        this.options?.log.error({ err: error, taskId: id }, 'task crashed'),
      )
      .finally(() => {
        this.running.delete(id);
        this.finished.emit(id);
        this.nudge();
      });
    this.running.set(id, entry);
  }

  private async execute(kind: string, id: string, data: JobData, entry: Running): Promise<void> {
    const boss = this.boss as PgBoss;
    const log = (this.options as JobQueueOptions).log.child({ taskId: id, task: kind });
    if (!(await this.repos.tasks.markStarted(id, this.livenessSeen ? this.worker : null))) {
      // Finished or failed already (e.g. a duplicate delivery): never run a task twice.
      await boss.complete(kind, id);
      return;
    }
    const runner = await this.repos.tasks.findActiveRunner(data.actor.id);
    const actor: TaskActor = runner ? { kind: 'user', ...runner } : data.actor;
    const task = new RunningTask(id, kind, actor, data.baseUrl, log, this.repos.tasks);
    entry.task = task;
    const handler = this.handlers.get(kind) as TaskHandler<unknown>;
    const started = Date.now();
    log.info({ by: actor.username }, 'task started');
    let outcome: { state: 'SUCCESS' | 'FAILURE'; resultJson: string | null; error: string | null };
    try {
      if (!runner)
        throw new AppError('FORBIDDEN', 'The user who requested this task is no longer active.');
      const result = await handler(data.payload, task);
      outcome = { state: 'SUCCESS', resultJson: JSON.stringify(result ?? null), error: null };
    } catch (error) {
      const message = task.signal.aborted
        ? INTERRUPTED
        : isAppError(error)
          ? error.message
          : INTERNAL_ERROR;
      if (message === INTERNAL_ERROR) log.error({ err: error }, 'task failed');
      outcome = { state: 'FAILURE', resultJson: null, error: message };
    }
    await task.close();
    // Whoever reads the outcome, through any process, then reads what the task wrote.
    await this.notifications.settle();
    const recorded = await this.repos.tasks.finish(id, {
      ...outcome,
      progress: task.lastProgress(),
    });
    if (!recorded) log.warn({ state: outcome.state }, 'task outcome came after it was failed');
    else taskDuration.observe({ kind, state: outcome.state }, (Date.now() - started) / 1000);
    if (recorded)
      log.info(
        { state: outcome.state, ms: Date.now() - started, error: outcome.error ?? undefined },
        'task ended',
      );
    if (outcome.state === 'SUCCESS') await boss.complete(kind, id);
    else await boss.fail(kind, id, { message: outcome.error });
  }

  private async shutdown(): Promise<void> {
    const boss = this.boss;
    if (!boss) return;
    const log = (this.options as JobQueueOptions).log;
    this.stopping = true;
    clearInterval(this.pruning);
    clearInterval(this.sweeping);
    this.nudge();
    await this.loop;
    if (this.running.size > 0) {
      const grace = (this.options as JobQueueOptions).shutdownSeconds * 1000;
      log.info({ tasks: this.running.size, graceMs: grace }, 'waiting for running tasks');
      await this.allSettled(grace);
      for (const entry of this.running.values()) entry.task?.abort();
      await this.allSettled(ABORT_WAIT_MS);
    }
    const left = [...this.running.entries()];
    if (left.length > 0) {
      for (const [, entry] of left) await entry.task?.close();
      try {
        const failed = await this.repos.tasks.failStarted(
          left.map(([id]) => id),
          INTERRUPTED,
        );
        for (const [id, entry] of left) {
          if (failed.includes(id)) await boss.fail(entry.kind, id, { message: INTERRUPTED });
        }
        log.warn({ tasks: failed }, 'tasks interrupted by shutdown');
      } catch (error) {
        log.error({ err: error }, 'could not record interrupted tasks');
      }
    }
    await boss.stop({ graceful: false, close: true });
    await this.liveness?.end().catch(() => undefined);
  }

  /**
   * Holds the connection whose presence in `pg_stat_activity` shows this process alive: when the
   * process dies its socket closes, and every reader sees its tasks abandoned at once. Reopened if
   * it drops while the process lives.
   */
  private async connectLiveness(url: string): Promise<void> {
    const client = new Client({
      connectionString: url,
      application_name: `${WORKER_CONNECTION}${this.worker}`,
    });
    client.on('error', (error: unknown) =>
      this.options?.log.warn({ err: error }, 'task liveness connection lost'),
    );
    client.on('end', () => {
      if (this.stopping) return;
      setTimeout(() => {
        this.connectLiveness(url).catch((error: unknown) =>
          this.options?.log.error({ err: error }, 'could not reopen the task liveness connection'),
        );
      }, 1000).unref();
    });
    await client.connect();
    this.liveness = client;
    const seen = await this.dataSource.query<unknown[]>(
      `SELECT 1 FROM pg_stat_activity WHERE application_name = $1`,
      [`${WORKER_CONNECTION}${this.worker}`],
    );
    this.livenessSeen = seen.length > 0;
    if (!this.livenessSeen) {
      this.options?.log.warn(
        'the task liveness connection is not seen by other sessions (a pooler?): killed tasks are found by their heartbeat only',
      );
    }
  }

  private async allSettled(ms: number): Promise<void> {
    if (this.running.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.running.values()].map((entry) => entry.done)),
      new Promise((resolve) => (timer = setTimeout(resolve, ms))),
    ]);
    clearTimeout(timer);
  }
}

function viewOf(record: TaskRecord): TaskView {
  const { abandoned, ...task } = record;
  if (!abandoned) return task;
  // A dead process cannot write its outcome; say what happened without waiting for the sweep.
  return { ...task, state: 'FAILURE', error: ABANDONED, finishedAt: null };
}
