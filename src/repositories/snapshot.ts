import crypto from 'node:crypto';
import { Client } from 'pg';
import type { EntityManager } from 'typeorm';
import type { Listing } from './list';

/** Snapshots open at once in this process; more wait for one to close. */
const MAX_OPEN = 16;
/** A snapshot left idle this long (a reader that stopped reading) is ended by PostgreSQL. */
const IDLE_LIMIT_MS = 5 * 60_000;

let open = 0;
const waiting: Array<() => void> = [];

/**
 * One consistent view of the database for a long read (an export, a whole synchronization
 * answer): a read-only REPEATABLE READ transaction whose listings are walked through server-side
 * cursors a batch at a time, so that memory holds one batch whatever the size of the dictionary,
 * and every list read sees the same moment. It runs on a connection of its own, outside the pool:
 * a walk also reads through the pool between batches, and snapshots holding every pooled
 * connection would wait on each other for ever.
 */
export class ReadSnapshot {
  private constructor(private readonly client: Client) {}

  static async open(em: EntityManager): Promise<ReadSnapshot> {
    const url = (em.connection.options as { url?: string }).url;
    if (!url) throw new Error('A read snapshot needs a data source configured by URL');
    // A closing snapshot hands its place to the next waiting one.
    if (open >= MAX_OPEN) await new Promise<void>((resolve) => waiting.push(resolve));
    else open += 1;
    const client = new Client({ connectionString: url, application_name: 'registry-walk' });
    try {
      await client.connect();
      await client.query(`SET idle_in_transaction_session_timeout = ${IDLE_LIMIT_MS}`);
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    } catch (error) {
      await client.end().catch(() => undefined);
      release();
      throw error;
    }
    client.on('error', () => undefined); // a connection ended by the server fails the next read
    return new ReadSnapshot(client);
  }

  /**
   * The rows of `listing`, `batch` at a time, through a cursor of the snapshot. The next batch
   * is asked for before this one is handed out, so the database reads it while the caller works
   * (two batches in memory at most).
   */
  async *rows<T>(listing: Listing, batch: number): AsyncGenerator<T[]> {
    const name = `walk_${crypto.randomBytes(6).toString('hex')}`;
    await this.client.query(`DECLARE ${name} NO SCROLL CURSOR FOR ${listing.sql}`, listing.params);
    const fetch = (): Promise<T[]> =>
      this.client.query(`FETCH ${batch} FROM ${name}`).then(({ rows }) => rows as T[]);
    let next: Promise<T[]> | null = fetch();
    try {
      while (next) {
        const rows: T[] = await next;
        next = rows.length < batch ? null : fetch();
        if (rows.length > 0) yield rows;
      }
    } finally {
      // A caller that stopped early leaves a batch asked for: it is read (or fails) first.
      await next?.catch(() => undefined);
      await this.client.query(`CLOSE ${name}`).catch(() => undefined);
    }
  }

  /** Ends the transaction and the connection. */
  async close(): Promise<void> {
    try {
      await this.client.query('ROLLBACK').catch(() => undefined);
      await this.client.end();
    } finally {
      release();
    }
  }
}

function release(): void {
  const next = waiting.shift();
  if (next) next();
  else open -= 1;
}
