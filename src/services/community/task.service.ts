import { AppError } from '../../errors';
import { isFinished, type JobQueue, type TaskView } from '../../jobs';
import { requireUser } from '../shared/access';
import type { ServiceContext } from '../shared/context';
import { pageOf, windowOf, type ListParams, type Page } from '../shared/list';

/** How often `waitFor` rereads a task that may be running in another process. */
const WAIT_POLL_MS = 500;
/** The longest `waitFor` may be asked to wait. */
const MAX_WAIT_MS = 5 * 60_000;

/**
 * Background tasks as their users see them. A task is its creator's: only the creator and
 * superusers may read it; anyone else gets 404, so task ids reveal nothing.
 */
export class TaskService {
  constructor(private readonly jobs: JobQueue) {}

  /**
   * Queues a registered kind of task to run as the caller and returns at once (PENDING). The
   * payload must be JSON; the handler gets it with a handle whose `actor` is the caller.
   */
  async enqueue(
    ctx: ServiceContext,
    kind: string,
    payload: unknown,
    options: { summary?: string } = {},
  ): Promise<TaskView> {
    const actor = requireUser(ctx);
    return this.jobs.enqueue(kind, payload, {
      actor: {
        kind: 'user',
        id: actor.id,
        username: actor.username,
        isSuperuser: actor.isSuperuser,
      },
      baseUrl: ctx.baseUrl,
      summary: options.summary,
    });
  }

  async get(ctx: ServiceContext, id: string): Promise<TaskView> {
    const actor = requireUser(ctx);
    const task = await this.jobs.find(id);
    if (!task || (!actor.isSuperuser && task.createdBy !== actor.username)) {
      throw AppError.notFound(`Task '${id}'`);
    }
    return task;
  }

  /** The caller's own tasks, newest first. */
  async list(ctx: ServiceContext, params: ListParams): Promise<Page<TaskView>> {
    const actor = requireUser(ctx);
    const slice = await this.jobs.findByCreator(actor.username, windowOf(params));
    return pageOf(slice.rows, slice.total, params);
  }

  /**
   * The task once it has finished, or as it is after `ms` (at most 5 minutes): lets an edge
   * answer a short task directly and a long one with 202 and the task.
   */
  async waitFor(ctx: ServiceContext, id: string, ms: number): Promise<TaskView> {
    let task = await this.get(ctx, id);
    const wait = Number.isFinite(ms) ? Math.min(Math.max(0, ms), MAX_WAIT_MS) : 0;
    const deadline = Date.now() + wait;
    while (!isFinished(task)) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      await this.jobs.settled(id, Math.min(left, WAIT_POLL_MS));
      task = (await this.jobs.find(id)) ?? task;
    }
    return task;
  }
}
