import type { Logger } from '../logger';
import type { TaskProgress, TaskState } from '../repositories';

export type { TaskProgress, TaskState };

/**
 * The signed-in user who asked for a task; the same shape as the services' user `Actor`, so a
 * handler can build a `ServiceContext` from it and act with exactly that user's rights.
 */
export interface TaskActor {
  kind: 'user';
  id: string;
  username: string;
  isSuperuser: boolean;
}

/** A task as users see it (OCL's task states). */
export interface TaskView {
  /** Also the pg-boss job id. */
  id: string;
  kind: string;
  state: TaskState;
  summary: string | null;
  progress: TaskProgress;
  /** What the handler returned (JSON), once SUCCESS. */
  result: unknown;
  /** Why it failed, once FAILURE. */
  error: string | null;
  createdBy: string;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/** What a handler receives beside its payload. */
export interface TaskHandle {
  readonly id: string;
  readonly kind: string;
  /** The user who enqueued the task, as that user is now (a deactivated user's task fails). */
  readonly actor: TaskActor;
  /** The enqueuing request's base URL (`https://host`), for links the handler builds. */
  readonly baseUrl: string;
  /** A logger bound to this task. */
  readonly log: Logger;
  /**
   * Aborted when the process stops and the shutdown grace has run out; a long handler should
   * check it between batches and stop (throwing ends the task as FAILURE).
   */
  readonly signal: AbortSignal;
  /**
   * Reports progress; cheap to call often: at most one write a second reaches the database,
   * and the last values reported are always saved with the outcome.
   */
  progress(done: number, total: number | null, message?: string): Promise<void>;
}

/** Does the work of one kind of task; what it returns (JSON) becomes the task's `result`. */
export type TaskHandler<P> = (payload: P, task: TaskHandle) => Promise<unknown>;

export function isFinished(task: Pick<TaskView, 'state'>): boolean {
  return task.state === 'SUCCESS' || task.state === 'FAILURE';
}
