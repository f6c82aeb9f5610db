import type { AppError } from '../../errors';

/** One thing a watch delivers: a value, or the error that ends the watch. */
export type Delivery<T> = { value: T } | { error: AppError };

/**
 * A stream that one producer pushes into and one consumer reads as an async iterator. Either
 * side ends it: the producer with `finish()` (the consumer still reads what was pushed), the
 * consumer with `return()`, at once, even while it waits for the next value. `onClose` runs
 * once, at whichever comes first.
 */
export class Feed<T> implements AsyncIterableIterator<T> {
  private readonly queue: T[] = [];
  private waiting: ((result: IteratorResult<T>) => void) | undefined;
  private finished = false;
  private returned = false;
  private closed = false;

  /** `capacity`: the most values waiting to be read; `push` refuses more. */
  constructor(
    private readonly onClose: () => void,
    private readonly capacity = 1000,
  ) {}

  /** Whether values may still be pushed. */
  get open(): boolean {
    return !this.finished && !this.returned;
  }

  /** Queues a value; false when the feed is ended or `capacity` values wait to be read. */
  push(value: T): boolean {
    if (!this.open) return false;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve({ value, done: false });
      return true;
    }
    if (this.queue.length >= this.capacity) return false;
    this.queue.push(value);
    return true;
  }

  /** Ends the feed after `last` (whatever the capacity) and what is queued before it. */
  finish(...last: [] | [T]): void {
    if (!this.open) return;
    if (last.length === 1) {
      const [value] = last;
      if (this.waiting) {
        const resolve = this.waiting;
        this.waiting = undefined;
        resolve({ value, done: false });
      } else this.queue.push(value);
    }
    this.finished = true;
    if (this.queue.length === 0) this.settle();
    this.close();
  }

  next(): Promise<IteratorResult<T>> {
    if (this.queue.length > 0)
      return Promise.resolve({ value: this.queue.shift() as T, done: false });
    if (!this.open) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  return(): Promise<IteratorResult<T>> {
    this.returned = true;
    this.queue.length = 0;
    this.settle();
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(): Promise<IteratorResult<T>> {
    return this.return();
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  /** Answers a reader waiting for a value that will not come. */
  private settle(): void {
    const resolve = this.waiting;
    this.waiting = undefined;
    resolve?.({ value: undefined, done: true });
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }
}
