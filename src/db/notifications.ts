import { Client } from 'pg';
import type { Logger } from '../logger';

/** The one channel every process publishes to (`pg_notify`) and listens on. */
export const NOTIFY_CHANNEL = 'registry_events';

/** PostgreSQL refuses a notification payload of 8000 bytes or more; ours stay well below. */
export const MAX_NOTIFY_BYTES = 7900;

/** The `application_name` prefix of a process's listening connection. */
export const LISTEN_CONNECTION = 'registry-listen';

/** Waits before reconnecting after the listening connection was lost: 0.5 s, doubling, at most 30 s. */
const RETRY_MS = [500, 1000, 2000, 4000, 8000, 16_000, 30_000];

/**
 * The process's one listening connection (`LISTEN registry_events`): a `pg` client of its own,
 * outside the pool (a pooled connection would be handed to other work). It connects on the first
 * `ready()` and, when lost while the process lives, reconnects with growing waits; what was
 * published meanwhile is not delivered, which `onResume` tells (after every reconnect).
 * Notifications are delivered at their transaction's commit, in commit order, once per listener.
 */
export class NotificationListener {
  private readonly handlers = new Set<(payload: string) => void>();
  private readonly resumeHandlers = new Set<() => void>();
  private client: Client | undefined;
  /** Resolves once listening; replaced by a pending one while the connection is down. */
  private listening: Promise<void> | undefined;
  private retries = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly url: string,
    private log?: Logger,
  ) {}

  /** The logger its warnings go to (the app's, once it starts). */
  useLogger(log: Logger): void {
    this.log = log;
  }

  /** Resolves once the connection listens (connecting first when it does not yet). */
  ready(): Promise<void> {
    if (this.stopped) return Promise.reject(new Error('The notification listener is stopped.'));
    this.listening ??= this.connect().catch((error: unknown) => {
      // The next caller tries again.
      this.listening = undefined;
      throw error;
    });
    return this.listening;
  }

  /** Calls `handler` with every payload published on the channel; returns what stops it. */
  onNotification(handler: (payload: string) => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  /** Calls `handler` after each reconnect (notifications may have been missed meanwhile). */
  onResume(handler: () => void): () => void {
    this.resumeHandlers.add(handler);
    return () => this.resumeHandlers.delete(handler);
  }

  /** Closes the connection for good. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    this.listening = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.url, application_name: LISTEN_CONNECTION });
    client.on('notification', (message) => {
      if (message.channel !== NOTIFY_CHANNEL || message.payload === undefined) return;
      for (const handler of this.handlers) {
        try {
          handler(message.payload);
        } catch (error) {
          this.log?.error({ err: error }, 'a notification handler failed');
        }
      }
    });
    // An error on an idle client is followed by 'end': the reconnect happens there.
    client.on('error', (error: unknown) =>
      this.log?.warn({ err: error }, 'the notification listener lost its connection'),
    );
    client.on('end', () => {
      if (this.client !== client) return;
      this.client = undefined;
      if (!this.stopped) this.reconnect();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${NOTIFY_CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      throw new Error('The notification listener is stopped.');
    }
    this.client = client;
    this.retries = 0;
  }

  /** Reconnects after a loss; new watchers wait for it, and `onResume` handlers run once it listens. */
  private reconnect(): void {
    let resolve!: () => void;
    this.listening = new Promise<void>((done) => (resolve = done));
    const attempt = (): void => {
      const wait = RETRY_MS[Math.min(this.retries, RETRY_MS.length - 1)];
      this.retries += 1;
      this.retryTimer = setTimeout(() => {
        if (this.stopped) return;
        this.connect().then(
          () => {
            this.log?.info('the notification listener reconnected');
            resolve();
            for (const handler of this.resumeHandlers) handler();
          },
          (error: unknown) => {
            this.log?.warn(
              { err: error, waitMs: wait },
              'the notification listener could not reconnect',
            );
            attempt();
          },
        );
      }, wait);
      this.retryTimer.unref();
    };
    attempt();
  }
}
