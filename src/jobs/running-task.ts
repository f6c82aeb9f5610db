import type { Logger } from '../logger';
import type { TaskRepository } from '../repositories/task.repository';
import type { TaskActor, TaskHandle, TaskProgress } from './types';

/** At most one progress write per task per interval. */
export const PROGRESS_INTERVAL_MS = 1000;
/** A running task proves it is alive this often (progress writes count too). */
export const HEARTBEAT_INTERVAL_MS = 15_000;

/**
 * One task while it runs in this process: the handle its handler sees, the throttled progress
 * writes and the heartbeat. `close()` stops every timer; nothing is written after it.
 */
export class RunningTask implements TaskHandle {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private latest: TaskProgress | null = null;
  private dirty = false;
  private lastWrite = 0;
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly heartbeat: NodeJS.Timeout;
  private closed = false;

  constructor(
    readonly id: string,
    readonly kind: string,
    readonly actor: TaskActor,
    readonly baseUrl: string,
    readonly log: Logger,
    private readonly tasks: TaskRepository,
  ) {
    this.signal = this.controller.signal;
    this.heartbeat = setInterval(() => {
      if (Date.now() - this.lastWrite < HEARTBEAT_INTERVAL_MS / 2) return;
      this.tasks
        .heartbeat(this.id)
        .catch((error: unknown) => this.log.warn({ err: error }, 'task heartbeat failed'));
    }, HEARTBEAT_INTERVAL_MS);
    this.heartbeat.unref();
  }

  progress(done: number, total: number | null, message?: string): Promise<void> {
    if (!Number.isFinite(done) || done < 0) throw new RangeError('done must be 0 or more');
    if (total !== null && (!Number.isFinite(total) || total < 0))
      throw new RangeError('total must be null or 0 or more');
    this.latest = {
      done: Math.floor(done),
      total: total === null ? null : Math.floor(total),
      message: message ?? null,
    };
    this.dirty = true;
    if (this.closed) return Promise.resolve();
    const wait = this.lastWrite + PROGRESS_INTERVAL_MS - Date.now();
    if (wait <= 0 && !this.writing) return this.flush();
    this.schedule(wait);
    return Promise.resolve();
  }

  /** The last progress reported, to be saved with the outcome. */
  lastProgress(): TaskProgress | null {
    return this.latest;
  }

  abort(): void {
    this.controller.abort(new Error('The server is stopping.'));
  }

  /** Stops the timers and waits for a write in flight, so the outcome is written last. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.heartbeat);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
  }

  private schedule(wait: number): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        void this.flush();
      },
      Math.max(wait, 10),
    );
    this.timer.unref();
  }

  private flush(): Promise<void> {
    if (this.closed || !this.dirty || !this.latest) return Promise.resolve();
    if (this.writing) return this.writing;
    const progress = this.latest;
    this.dirty = false;
    this.lastWrite = Date.now();
    this.writing = this.tasks
      .saveProgress(this.id, progress)
      .catch((error: unknown) => this.log.warn({ err: error }, 'task progress write failed'))
      .finally(() => {
        this.writing = undefined;
        if (this.dirty) this.schedule(this.lastWrite + PROGRESS_INTERVAL_MS - Date.now());
      });
    return this.writing;
  }
}
