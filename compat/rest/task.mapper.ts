import type { TaskView } from '../../src/services';
import type { Reply } from '../http';

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
