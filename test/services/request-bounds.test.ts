import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityManager } from 'typeorm';
import { boundTransaction, withinRequest } from '../../src/db/transaction-scope';
import { createTestApp, type TestApp } from '../factories';

/**
 * A transaction run for an HTTP request keeps the request's bounds (issue 23): a time budget
 * (each statement and the whole transaction) and the client's presence; either ends it rolled
 * back. Outside a request (background tasks) neither applies. Transactions are run as
 * `Repositories.transaction` runs them.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await t.dataSource.query(`CREATE TABLE IF NOT EXISTS bounds_probe (id text PRIMARY KEY)`);
});
afterAll(async () => {
  await t.dataSource.query(`DROP TABLE IF EXISTS bounds_probe`);
  await t.close();
});

const transaction = (work: (em: EntityManager) => Promise<void>) =>
  t.dataSource.transaction(async (em) => {
    const unbind = await boundTransaction(em);
    try {
      await work(em);
    } finally {
      unbind();
    }
  });
const insert = (em: EntityManager, id: string) =>
  em.query(`INSERT INTO bounds_probe (id) VALUES ($1)`, [id]);
const stored = async (id: string) =>
  (await t.dataSource.query(`SELECT 1 FROM bounds_probe WHERE id = $1`, [id])).length === 1;
const present = () => new AbortController().signal;

it('cancels a statement that runs past the budget and rolls the transaction back', async () => {
  const work = withinRequest({ signal: present(), budgetMs: 300 }, () =>
    transaction(async (em) => {
      await insert(em, 'slow-statement');
      await em.query(`SELECT pg_sleep(2)`);
    }),
  );
  await expect(work).rejects.toMatchObject({ code: '57014' });
  expect(await stored('slow-statement')).toBe(false);
});

it('starts no statement once the budget has passed since the transaction began', async () => {
  const work = withinRequest({ signal: present(), budgetMs: 300 }, () =>
    transaction(async (em) => {
      await insert(em, 'late-statement');
      await sleep(400);
      await em.query('SELECT 1');
    }),
  );
  await expect(work).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  expect(await stored('late-statement')).toBe(false);
});

it('stops at the next statement once the client has gone', async () => {
  const gone = new AbortController();
  const work = withinRequest({ signal: gone.signal, budgetMs: 10_000 }, () =>
    transaction(async (em) => {
      await insert(em, 'gone-client');
      gone.abort();
      await em.query('SELECT 1');
    }),
  );
  await expect(work).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  expect(await stored('gone-client')).toBe(false);
});

it('bounds nothing outside a request', async () => {
  await transaction(async (em) => {
    await insert(em, 'background');
    await sleep(400);
    await em.query('SELECT 1');
  });
  expect(await stored('background')).toBe(true);
});
