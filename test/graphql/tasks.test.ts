import crypto from 'node:crypto';
import { createLogger } from '../../src/logger';
import { createTestApp, createUser, uniqueId, type TestApp, type TestUser } from '../factories';
import { dataOf, errorCode, gql } from './gql';

let t: TestApp;
let owner: TestUser;
const kind = uniqueId('test.graphql');

beforeAll(async () => {
  t = await createTestApp();
  owner = await createUser(t);
  t.services.jobs.register<{ n: number }>(kind, async (payload, task) => {
    await task.progress(payload.n, null, 'counted');
    if (payload.n < 0) throw new Error('negative');
    return { n: payload.n };
  });
});
afterAll(async () => t.close());

async function runTask(user: TestUser, n: number) {
  const actor = await t.services.auth.authenticate(user.auth);
  const ctx = t.services.context(actor, createLogger('silent'), 'http://localhost');
  const queued = await t.services.tasks.enqueue(ctx, kind, { n }, { summary: `n = ${n}` });
  return t.services.tasks.waitFor(ctx, queued.id, 10_000);
}

const TASK = `query($id: ID!) {
  task(id: $id) {
    id kind state summary progress { done total message } result error
    createdBy createdAt startedAt finishedAt url
  }
}`;
const TASKS = `query($limit: Int, $offset: Int) {
  tasks(limit: $limit, offset: $offset) { totalCount items { id state result } }
}`;

test('task(id) answers the creator with state, progress and result', async () => {
  const done = await runTask(owner, 5);
  const data = dataOf(await gql(t, owner.auth, TASK, { id: done.id }));
  expect(data.task).toEqual({
    id: done.id,
    kind: 'OTHER', // a kind registered by this test only, which the TaskKind enum does not name
    state: 'SUCCESS',
    summary: 'n = 5',
    progress: { done: 5, total: null, message: 'counted' },
    result: { n: 5 },
    error: null,
    createdBy: owner.username,
    createdAt: done.createdAt.toISOString(),
    startedAt: done.startedAt!.toISOString(),
    finishedAt: done.finishedAt!.toISOString(),
    url: `/tasks/${done.id}/`,
  });
});

test('a failed task has state FAILURE and a generic error for an internal failure', async () => {
  const failed = await runTask(owner, -1);
  const data = dataOf(await gql(t, owner.auth, TASK, { id: failed.id }));
  expect(data.task).toMatchObject({
    state: 'FAILURE',
    result: null,
    error: 'The task failed because of an internal error.',
  });
});

test('another user gets NOT_FOUND, an anonymous caller UNAUTHENTICATED', async () => {
  const done = await runTask(owner, 1);
  const stranger = await createUser(t);
  expect(errorCode(await gql(t, stranger.auth, TASK, { id: done.id }))).toBe('NOT_FOUND');
  expect(errorCode(await gql(t, undefined, TASK, { id: done.id }))).toBe('UNAUTHENTICATED');
  expect(errorCode(await gql(t, undefined, TASKS, {}))).toBe('UNAUTHENTICATED');
  expect(errorCode(await gql(t, owner.auth, TASK, { id: crypto.randomUUID() }))).toBe('NOT_FOUND');
});

test("tasks(limit, offset) pages the caller's own tasks, newest first", async () => {
  const user = await createUser(t);
  const first = await runTask(user, 1);
  const second = await runTask(user, 2);
  const page = dataOf(await gql(t, user.auth, TASKS, { limit: 1, offset: 0 })).tasks;
  expect(page).toEqual({
    totalCount: 2,
    items: [{ id: second.id, state: 'SUCCESS', result: { n: 2 } }],
  });
  const rest = dataOf(await gql(t, user.auth, TASKS, { limit: 1, offset: 1 })).tasks;
  expect(rest.items.map((task: { id: string }) => task.id)).toEqual([first.id]);
});
