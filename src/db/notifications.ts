import crypto from 'node:crypto';
import { Client } from 'pg';
import type { Logger } from '../logger';

/** The `application_name` of a process's listening connection. */
export const LISTEN_CONNECTION = 'registry-listen';
/** Where the services publish what subscriptions watch (`NotificationRepository.publish`). */
export const NOTIFY_CHANNEL = 'registry_events';
/** PostgreSQL refuses a notification payload of 8000 bytes or more; ours stay well below. */
export const MAX_NOTIFY_BYTES = 7900;
/** A process's own round trips (`settle`, and the check that notifications are delivered). */
const SETTLE_CHANNEL = 'registry_settle';
/** How long a connect waits for its own notification to come back before it gives up. */
const ECHO_WAIT_MS = 5000;
/** After a lost connection, the first try again waits this long, doubling up to the most. */
const RETRY_FIRST_MS = 250;
const RETRY_MOST_MS = 10_000;

type Handler = (payload: string) => void;

/**
 * PostgreSQL `LISTEN/NOTIFY` for one process: one connection of its own listening on the channels
 * handlers were registered for, re-established when lost. What a process keeps in memory on the
 * strength of these notifications must be dropped at every `gap` (the connection was lost, so
 * notifications may have been missed) and not kept while the connection is not `live`.
 * Notifications are sent at commit and reach every listening process in commit order.
 */
export class Notifications {
  private readonly handlers = new Map<string, Handler[]>();
  private readonly gapHandlers: Array<() => void> = [];
  private readonly settling = new Map<string, () => void>();
  private readonly waitingLive = new Set<() => void>();
  private client: Client | null = null;
  private connected = false;
  private stopped = true;
  private retryMs = RETRY_FIRST_MS;
  private retry: NodeJS.Timeout | undefined;
  private log: Logger | undefined;

  constructor(private readonly url: string | undefined) {}

  /** Calls `handler` with the payload of each notification on `channel`. Register before `start`. */
  on(channel: string, handler: Handler): void {
    const list = this.handlers.get(channel) ?? [];
    list.push(handler);
    this.handlers.set(channel, list);
  }

  /** Calls `handler` whenever notifications may have been missed: the connection was lost or (re)made. */
  onGap(handler: () => void): void {
    this.gapHandlers.push(handler);
  }

  /** Whether the listening connection is up, so that no notification is being missed. */
  get live(): boolean {
    return this.connected;
  }

  /** Resolves once the connection is live (at once when it is); rejects after `ms`. */
  whenLive(ms: number): Promise<void> {
    if (this.connected) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waitingLive.delete(done);
        reject(new Error('The notification connection is not live.'));
      }, ms);
      this.waitingLive.add(done);
    });
  }

  /** Connects and listens; a failure is logged and tried again later (nothing is kept meanwhile). */
  async start(log: Logger): Promise<void> {
    this.log = log;
    if (!this.url || !this.stopped) return;
    this.stopped = false;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.lost();
    await client?.end().catch(() => undefined);
  }

  /**
   * Resolves once every notification committed before the call has been handled here (they arrive
   * in commit order, so this process's own round trip comes after them). At once when not live:
   * nothing is kept then.
   */
  async settle(): Promise<void> {
    const client = this.client;
    if (!this.connected || !client) return;
    // A lost connection ends the wait: `lost` has dropped what was kept.
    await this.roundTrip(client).catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.url, application_name: LISTEN_CONNECTION });
    client.on('notification', (message) => this.deliver(message.channel, message.payload ?? ''));
    client.on('error', (error) => {
      this.log?.warn({ err: error }, 'the notification connection failed');
      this.lostClient(client);
    });
    client.on('end', () => this.lostClient(client));
    this.client = client;
    try {
      await client.connect();
      for (const channel of [SETTLE_CHANNEL, ...this.handlers.keys()]) {
        await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
      }
      await this.echo(client);
    } catch (error) {
      this.log?.warn({ err: error }, 'listening for notifications failed; trying again');
      this.lostClient(client);
      await client.end().catch(() => undefined);
      return;
    }
    if (this.client !== client) return; // lost while listening
    this.retryMs = RETRY_FIRST_MS;
    this.connected = true;
    this.gap();
    for (const resolve of this.waitingLive) resolve();
    this.waitingLive.clear();
  }

  /**
   * Proves that notifications reach this connection: its own comes back (behind a pooler in
   * transaction mode it would not, and nothing kept could be trusted).
   */
  private echo(client: Client): Promise<void> {
    return this.roundTrip(client, ECHO_WAIT_MS);
  }

  /**
   * Sends this process a notification of its own and waits until it is handled (after every one
   * committed before it, as they arrive in commit order); rejects after `ms` when given.
   */
  private async roundTrip(client: Client, ms?: number): Promise<void> {
    const nonce = crypto.randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const heard = new Promise<void>((resolve, reject) => {
      this.settling.set(nonce, resolve);
      if (ms !== undefined) {
        timer = setTimeout(
          () => reject(new Error('This connection does not receive its own notifications.')),
          ms,
        );
      }
    });
    try {
      await client.query('SELECT pg_notify($1, $2)', [SETTLE_CHANNEL, nonce]);
      await heard;
    } finally {
      clearTimeout(timer);
      this.settling.delete(nonce);
    }
  }

  private deliver(channel: string, payload: string): void {
    if (channel === SETTLE_CHANNEL) {
      const resolve = this.settling.get(payload);
      this.settling.delete(payload);
      resolve?.();
      return;
    }
    for (const handler of this.handlers.get(channel) ?? []) {
      try {
        handler(payload);
      } catch (error) {
        this.log?.error({ err: error, channel }, 'a notification handler failed');
      }
    }
  }

  private lostClient(client: Client): void {
    if (this.client !== client) return;
    this.lost();
    if (this.stopped) return;
    this.retry = setTimeout(() => void this.connect(), this.retryMs);
    this.retry.unref();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MOST_MS);
  }

  private lost(): void {
    this.client = null;
    const wasConnected = this.connected;
    this.connected = false;
    for (const resolve of this.settling.values()) resolve();
    this.settling.clear();
    if (wasConnected) this.gap();
  }

  private gap(): void {
    for (const handler of this.gapHandlers) {
      try {
        handler();
      } catch (error) {
        this.log?.error({ err: error }, 'a notification gap handler failed');
      }
    }
  }
}
