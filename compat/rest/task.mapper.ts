import type { ServiceContext, Services, TaskView } from '../../src/services';
import type { Reply } from '../http';

/** How long a REST call that queued a task waits for it before answering 202 (as OCL does). */
export const SYNC_WAIT_MS = 25_000;

export const taskUrl = (id: string): string => `/tasks/${encodeURIComponent(id)}/`;

/** A task in OCL's shape (`id`, `state`, `name`, `username`, `result`) plus our own fields. */
export function taskJson(task: TaskView): object {
  return {
    id: task.id,
    task: task.kind,
    name: task.kind,
    state: task.state,
    summary: task.summary,
    progress: {
      done: task.progress.done,
      total: task.progress.total,
      message: task.progress.message,
    },
    result: task.result ?? null,
    error: task.error,
    created_by: task.createdBy,
    username: task.createdBy,
    created_at: task.createdAt.toISOString(),
    started_at: task.startedAt?.toISOString() ?? null,
    finished_at: task.finishedAt?.toISOString() ?? null,
    url: taskUrl(task.id),
  };
}

/** 202 Accepted with the task and a `Location` where its progress and outcome can be read. */
export function taskAccepted(task: TaskView): Reply {
  const url = taskUrl(task.id);
  return { kind: 'json', status: 202, body: taskJson(task), headers: { Location: url } };
}

/**
 * Runs a queued task synchronously-with-timeout: waits up to `ms` for it; once finished the
 * reply is `done(task)` (which decides what SUCCESS and FAILURE answer), otherwise 202.
 */
export async function waitOrAccept(
  services: Services,
  ctx: ServiceContext,
  task: TaskView,
  done: (task: TaskView) => Reply | Promise<Reply>,
  ms: number = SYNC_WAIT_MS,
): Promise<Reply> {
  const now = await services.tasks.waitFor(ctx, task.id, ms);
  return now.state === 'SUCCESS' || now.state === 'FAILURE' ? done(now) : taskAccepted(now);
}
