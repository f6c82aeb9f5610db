import crypto from 'node:crypto';
import { Client, type QueryResult, type QueryResultRow } from 'pg';
import type { Logger } from '../logger';

/** The `application_name` of a process's listening connection. */
export const LISTEN_CONNECTION = 'registry-listen';
/** Where the services publish what subscriptions watch (`NotificationRepository.publish`). */
export const NOTIFY_CHANNEL = 'registry_events';
/** PostgreSQL refuses a notification payload of 8000 bytes or more; ours stay well below. */
export const MAX_NOTIFY_BYTES = 7900;
/**
 * Round trips: a process asks on `SETTLE_CHANNEL` (a nonce); every other listening process answers
 * on `SETTLED_CHANNEL` with the same nonce once it has handled it (`settle`, and the check at
 * connect that notifications are delivered).
 */
const SETTLE_CHANNEL = 'registry_settle';
const SETTLED_CHANNEL = 'registry_settled';
/** How long a connect waits for its own notification to come back before it gives up. */
const ECHO_WAIT_MS = 5000;
/**
 * How long `settle` waits for the other processes. One that has not answered by then is logged and
 * not waited for again until it answers (a crashed machine's connection can stay open for hours).
 */
const SETTLE_WAIT_MS = 2000;
/** After a lost connection, the first try again waits this long, doubling up to the most. */
const RETRY_FIRST_MS = 250;
const RETRY_MOST_MS = 10_000;

type Handler = (payload: string) => void;

/** One `settle` (or connect echo): which listening connections must answer, and which have. */
interface RoundTrip {
  /** Backend pids of the listening connections asked; unknown until the asking statement returns. */
  asked: Set<number> | null;
  heard: Set<number>;
  /** Only this process's own connection must hear it (the connect echo). */
  ownOnly: boolean;
  done: () => void;
}

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
  /** This process's round trips under way, by nonce. */
  private readonly settling = new Map<string, RoundTrip>();
  /** `settle`'s round trip under way, and the next one its later callers share. */
  private settlingNow: Promise<void> | null = null;
  private settlingNext: Promise<void> | null = null;
  /** Listening connections (backend pids) that did not answer a round trip in time. */
  private readonly silent = new Set<number>();
  private readonly waitingLive = new Set<() => void>();
  private client: Client | null = null;
  /** The listening connection's statements, one after another (`pg` queues, but warns). */
  private statements: Promise<unknown> = Promise.resolve();
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
   * Resolves once every notification committed before the call has been handled by every process
   * listening on this database: they arrive in commit order, so a process answers the question
   * this asks only after it has handled them. A process that has not answered within
   * `SETTLE_WAIT_MS` is logged and not waited for. At once when this process is not live: nothing
   * is kept here then. Parallel callers share round trips: one that comes while a round trip is
   * under way (asked, perhaps, before its commit) waits for the next, which all such callers
   * share, so a burst of writes asks each process twice, not once a write.
   */
  settle(): Promise<void> {
    if (!this.connected || !this.client) return Promise.resolve();
    if (!this.settlingNow) return this.settleOnce();
    this.settlingNext ??= this.settlingNow.then(() => {
      this.settlingNext = null;
      return this.settleOnce();
    });
    return this.settlingNext;
  }

  /** One round trip with every listening connection, as `settle`'s current one. */
  private settleOnce(): Promise<void> {
    const client = this.client;
    if (!this.connected || !client) return Promise.resolve();
    const trip: Promise<void> = this.roundTrip(client, { ownOnly: false, ms: SETTLE_WAIT_MS })
      // A lost connection ends the wait: `lost` has dropped what was kept.
      .catch(() => undefined)
      .finally(() => {
        if (this.settlingNow === trip) this.settlingNow = null;
      });
    this.settlingNow = trip;
    return trip;
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.url, application_name: LISTEN_CONNECTION });
    client.on('notification', (message) =>
      this.deliver(client, message.channel, message.payload ?? '', message.processId),
    );
    client.on('error', (error) => {
      this.log?.warn({ err: error }, 'the notification connection failed');
      this.lostClient(client);
    });
    client.on('end', () => this.lostClient(client));
    this.client = client;
    this.statements = Promise.resolve(); // a lost connection's statements are not waited for
    try {
      await client.connect();
      for (const channel of [SETTLE_CHANNEL, SETTLED_CHANNEL, ...this.handlers.keys()]) {
        await this.send(client, `LISTEN ${client.escapeIdentifier(channel)}`, []);
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
    return this.roundTrip(client, { ownOnly: true, ms: ECHO_WAIT_MS });
  }

  /**
   * Asks every listening connection (or only this process's own) for a round trip and waits until
   * each has answered, i.e. has handled every notification committed before the question. After
   * `ms` the echo rejects; a round trip with the others goes on without those silent.
   */
  private async roundTrip(
    client: Client,
    { ownOnly, ms }: { ownOnly: boolean; ms: number },
  ): Promise<void> {
    const nonce = crypto.randomUUID();
    let trip: RoundTrip | undefined;
    let timer: NodeJS.Timeout | undefined;
    const answered = new Promise<void>((resolve, reject) => {
      trip = { asked: null, heard: new Set(), ownOnly, done: resolve };
      this.settling.set(nonce, trip);
      timer = setTimeout(() => {
        if (ownOnly) {
          reject(new Error('This connection does not receive its own notifications.'));
          return;
        }
        const silent = [...(trip?.asked ?? [])].filter((pid) => !trip?.heard.has(pid));
        for (const pid of silent) this.silent.add(pid);
        this.log?.warn(
          { backendPids: silent, ms },
          'listening connections did not answer a round trip; not waiting for them until they do',
        );
        resolve();
      }, ms);
    });
    try {
      // The listening connections asked are those open when the question is sent: one opened
      // later has heard nothing before and keeps nothing yet.
      const { rows } = await this.send<{ asked: number[] }>(
        client,
        `SELECT pg_notify($1, $2),
                CASE WHEN $3 THEN ARRAY[pg_backend_pid()]
                     ELSE ARRAY(SELECT pid FROM pg_stat_activity
                                WHERE application_name = $4 AND datname = current_database())
                END AS asked`,
        [SETTLE_CHANNEL, nonce, ownOnly, LISTEN_CONNECTION],
      );
      const asked = (rows[0]?.asked ?? []).filter((pid) => !this.silent.has(pid));
      (trip as RoundTrip).asked = new Set(asked);
      this.check(nonce);
      await answered;
    } finally {
      clearTimeout(timer);
      this.settling.delete(nonce);
    }
  }

  /** Runs a statement on the listening connection after those sent before it. */
  private send<R extends QueryResultRow>(
    client: Client,
    sql: string,
    params: unknown[],
  ): Promise<QueryResult<R>> {
    const result = this.statements.then(() => client.query<R>(sql, params));
    this.statements = result.catch(() => undefined);
    return result;
  }

  /** Resolves a round trip once every connection asked has answered. */
  private check(nonce: string): void {
    const trip = this.settling.get(nonce);
    if (!trip?.asked) return;
    for (const pid of trip.asked) if (!trip.heard.has(pid)) return;
    trip.done();
  }

  private deliver(client: Client, channel: string, payload: string, from: number): void {
    if (channel === SETTLE_CHANNEL) {
      const own = this.settling.get(payload);
      if (own) {
        own.heard.add(from); // the question came back to the connection that sent it
        this.check(payload);
      } else {
        // Another process's question, after every notification before it has been handled here.
        // A lost connection: the asker stops waiting for it.
        this.send(client, 'SELECT pg_notify($1, $2)', [SETTLED_CHANNEL, payload]).catch(
          () => undefined,
        );
      }
      return;
    }
    if (channel === SETTLED_CHANNEL) {
      this.silent.delete(from);
      const trip = this.settling.get(payload);
      if (trip && !trip.ownOnly) {
        trip.heard.add(from);
        this.check(payload);
      }
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
    for (const trip of this.settling.values()) trip.done();
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
