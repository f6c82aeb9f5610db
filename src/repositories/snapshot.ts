import crypto from 'node:crypto';
import type { EntityManager, QueryRunner } from 'typeorm';
import type { Listing } from './list';

/**
 * One consistent view of the database for a long read (an export, a whole synchronization
 * answer): a read-only REPEATABLE READ transaction on a connection of its own, whose listings
 * are walked through server-side cursors a batch at a time, so that memory holds one batch
 * whatever the size of the dictionary, and every list read sees the same moment.
 */
export class ReadSnapshot {
  private constructor(private readonly runner: QueryRunner) {}

  static async open(em: EntityManager): Promise<ReadSnapshot> {
    const runner = em.connection.createQueryRunner('slave');
    await runner.connect();
    try {
      await runner.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    } catch (error) {
      await runner.release();
      throw error;
    }
    return new ReadSnapshot(runner);
  }

  /** The rows of `listing`, `batch` at a time, through a cursor of the snapshot. */
  async *rows<T>(listing: Listing, batch: number): AsyncGenerator<T[]> {
    const name = `walk_${crypto.randomBytes(6).toString('hex')}`;
    await this.runner.query(`DECLARE ${name} NO SCROLL CURSOR FOR ${listing.sql}`, listing.params);
    try {
      for (;;) {
        const rows = (await this.runner.query(`FETCH ${batch} FROM ${name}`)) as T[];
        if (rows.length > 0) yield rows;
        if (rows.length < batch) return;
      }
    } finally {
      await this.runner.query(`CLOSE ${name}`).catch(() => undefined);
    }
  }

  /** Ends the transaction and hands the connection back. */
  async close(): Promise<void> {
    try {
      await this.runner.query('ROLLBACK');
    } finally {
      await this.runner.release();
    }
  }
}
