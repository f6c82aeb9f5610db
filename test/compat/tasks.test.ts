import crypto from 'node:crypto';
import request from 'supertest';
import { taskAccepted, taskJson } from '../../compat/rest/task.mapper';
import { createLogger } from '../../src/logger';
import type { ServiceContext } from '../../src/services';
import { createTestApp, createUser, uniqueId, type TestApp, type TestUser } from '../factories';

let t: TestApp;
let owner: TestUser;
let ownerCtx: ServiceContext;
const kind = uniqueId('test.rest');
const slow = uniqueId('test.rest-slow');
const release: { open: () => void } = { open: () => undefined };
const released = new Promise<void>((resolve) => (release.open = resolve));

beforeAll(async () => {
  t = await createTestApp();
  owner = await createUser(t);
  const actor = await t.services.auth.authenticate(owner.auth);
  ownerCtx = t.services.context(actor, createLogger('silent'), 'http://localhost');
  t.services.jobs.register<{ n: number }>(kind, async (payload, task) => {
    await task.progress(payload.n, payload.n, 'all done');
    return { added: payload.n };
  });
  t.services.jobs.register(slow, async () => {
    await released;
    return 'late';
  });
});
afterAll(async () => {
  release.open();
  await t.close();
});

async function finishedTask(n = 2) {
  const queued = await t.services.tasks.enqueue(ownerCtx, kind, { n }, { summary: `Adding ${n}` });
  return t.services.tasks.waitFor(ownerCtx, queued.id, 10_000);
}

describe('GET /tasks/:id/', () => {
  test('answers the task in OCL shape, with its progress and result', async () => {
    const task = await finishedTask(3);
    const res = await request(t.app).get(`/tasks/${task.id}/`).set('Authorization', owner.auth);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: task.id,
      task: kind,
      name: kind,
      state: 'SUCCESS',
      summary: 'Adding 3',
      progress: { done: 3, total: 3, message: 'all done' },
      result: { added: 3 },
      error: null,
      created_by: owner.username,
      username: owner.username,
      created_at: task.createdAt.toISOString(),
      started_at: task.startedAt!.toISOString(),
      finished_at: task.finishedAt!.toISOString(),
      url: `/tasks/${task.id}/`,
    });
  });

  test('answers 404 to another user, 401 without credentials, and superusers may read it', async () => {
    const task = await finishedTask();
    const stranger = await createUser(t);
    const other = await request(t.app)
      .get(`/tasks/${task.id}/`)
      .set('Authorization', stranger.auth);
    expect(other.status).toBe(404);
    expect(other.body.message).toMatch(/not found/);
    expect((await request(t.app).get(`/tasks/${task.id}/`)).status).toBe(401);
    expect(
      (await request(t.app).get(`/tasks/${task.id}/`).set('Authorization', t.admin)).status,
    ).toBe(200);
  });

  test('answers 404 for an unknown or malformed id', async () => {
    for (const id of [crypto.randomUUID(), 'not-a-task', '1']) {
      const res = await request(t.app).get(`/tasks/${id}/`).set('Authorization', owner.auth);
      expect(res.status).toBe(404);
    }
  });
});

describe('GET /tasks/', () => {
  test("lists the caller's own tasks, newest first, with paging headers", async () => {
    const user = await createUser(t);
    const actor = await t.services.auth.authenticate(user.auth);
    const ctx = t.services.context(actor, createLogger('silent'), 'http://localhost');
    const first = await t.services.tasks.enqueue(ctx, kind, { n: 1 });
    const second = await t.services.tasks.enqueue(ctx, kind, { n: 2 });
    await finishedTask(); // the owner's, not listed

    const res = await request(t.app).get('/tasks/?limit=1').set('Authorization', user.auth);
    expect(res.status).toBe(200);
    expect(res.headers.num_found).toBe('2');
    expect(res.body.map((task: { id: string }) => task.id)).toEqual([second.id]);
    const next = await request(t.app).get('/tasks/?limit=1&page=2').set('Authorization', user.auth);
    expect(next.body.map((task: { id: string }) => task.id)).toEqual([first.id]);
    expect(next.body[0]).toMatchObject({ name: kind, username: user.username });
  });

  test('answers 401 without credentials', async () => {
    expect((await request(t.app).get('/tasks/')).status).toBe(401);
  });
});

describe('the 202 reply for work queued by another endpoint', () => {
  test('taskAccepted answers 202 with the task, its URL and a Location header', async () => {
    const queued = await t.services.tasks.enqueue(ownerCtx, slow, {});
    const reply = taskAccepted(queued);
    expect(reply).toEqual({
      kind: 'json',
      status: 202,
      body: taskJson(queued),
      headers: { Location: `/tasks/${queued.id}/` },
    });
    expect(taskJson(queued)).toMatchObject({ id: queued.id, state: 'PENDING' });
  });
});
