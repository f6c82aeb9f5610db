import crypto from 'node:crypto';
import { loadConfig } from '../../src/config';
import { AppError } from '../../src/errors';
import { PROGRESS_INTERVAL_MS } from '../../src/jobs/running-task';
import { createLogger } from '../../src/logger';
import { TaskRepository } from '../../src/repositories/task.repository';
import type { ServiceContext, TaskView } from '../../src/services';
import {
  createTestApp,
  createUser,
  uniqueId,
  until,
  type TestApp,
  type TestUser,
} from '../factories';

let t: TestApp;
let owner: TestUser;
let other: TestUser;
let ownerCtx: ServiceContext;
let otherCtx: ServiceContext;
let adminCtx: ServiceContext;
let anonymousCtx: ServiceContext;

const log = createLogger('silent');

async function contextOf(app: TestApp, auth: string | undefined): Promise<ServiceContext> {
  const actor = await app.services.auth.authenticate(auth);
  return app.services.context(actor, log, 'http://localhost');
}

beforeAll(async () => {
  t = await createTestApp();
  owner = await createUser(t);
  other = await createUser(t);
  ownerCtx = await contextOf(t, owner.auth);
  otherCtx = await contextOf(t, other.auth);
  adminCtx = await contextOf(t, t.admin);
  anonymousCtx = await contextOf(t, undefined);
});
afterAll(async () => t.close());

/** A promise the test resolves when it chooses. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

test('a task runs to SUCCESS as its creator, with its progress readable while it runs', async () => {
  const kind = uniqueId('test.double');
  const release = gate();
  t.services.jobs.register<{ n: number }>(kind, async (payload, task) => {
    await task.progress(1, 3, 'first step');
    await release.wait;
    await task.progress(3, 3, 'last step');
    // The handler acts with the rights of the user who enqueued it.
    const me = await t.services.users.me(t.services.context(task.actor, task.log, task.baseUrl));
    return { doubled: payload.n * 2, by: me.username };
  });

  const queued = await t.services.tasks.enqueue(ownerCtx, kind, { n: 21 }, { summary: 'Doubling' });
  expect(queued).toMatchObject({
    kind,
    state: 'PENDING',
    summary: 'Doubling',
    createdBy: owner.username,
    progress: { done: 0, total: null, message: null },
    result: null,
    error: null,
    startedAt: null,
    finishedAt: null,
  });

  await until(async () => (await t.services.tasks.get(ownerCtx, queued.id)).progress.done === 1);
  const running = await t.services.tasks.get(ownerCtx, queued.id);
  expect(running.state).toBe('STARTED');
  expect(running.progress).toEqual({ done: 1, total: 3, message: 'first step' });
  expect(running.startedAt).toBeInstanceOf(Date);

  release.open();
  const done = await t.services.tasks.waitFor(ownerCtx, queued.id, 10_000);
  expect(done.state).toBe('SUCCESS');
  expect(done.result).toEqual({ doubled: 42, by: owner.username });
  // The last progress reported is kept even when its write was throttled.
  expect(done.progress).toEqual({ done: 3, total: 3, message: 'last step' });
  expect(done.finishedAt).toBeInstanceOf(Date);
  expect(done.error).toBeNull();
});

test('an expected failure ends as FAILURE with its message; an unexpected one with a generic message', async () => {
  const expected = uniqueId('test.refuse');
  const unexpected = uniqueId('test.crash');
  t.services.jobs.register(expected, async () => {
    throw AppError.invalid('Reference 7 cannot be resolved.');
  });
  t.services.jobs.register(unexpected, async () => {
    throw new Error('secret internals');
  });

  const a = await t.services.tasks.enqueue(ownerCtx, expected, {});
  const b = await t.services.tasks.enqueue(ownerCtx, unexpected, {});
  const refused = await t.services.tasks.waitFor(ownerCtx, a.id, 10_000);
  const crashed = await t.services.tasks.waitFor(ownerCtx, b.id, 10_000);

  expect(refused).toMatchObject({ state: 'FAILURE', error: 'Reference 7 cannot be resolved.' });
  expect(refused.result).toBeNull();
  expect(crashed).toMatchObject({
    state: 'FAILURE',
    error: 'The task failed because of an internal error.',
  });
  expect(crashed.error).not.toContain('secret');
});

test('waitFor answers as soon as the task finishes, and with the running task on timeout', async () => {
  const kind = uniqueId('test.gated');
  const release = gate();
  t.services.jobs.register(kind, async () => {
    await release.wait;
    return 'finished';
  });
  const queued = await t.services.tasks.enqueue(ownerCtx, kind, {});

  let started = Date.now();
  const waited = await t.services.tasks.waitFor(ownerCtx, queued.id, 400);
  expect(Date.now() - started).toBeGreaterThanOrEqual(390);
  expect(['PENDING', 'STARTED']).toContain(waited.state);

  started = Date.now();
  setTimeout(release.open, 200);
  const done = await t.services.tasks.waitFor(ownerCtx, queued.id, 20_000);
  expect(done).toMatchObject({ state: 'SUCCESS', result: 'finished' });
  expect(Date.now() - started).toBeLessThan(5000);
});

test('only the creator and superusers read a task; others get 404, anonymous callers 401', async () => {
  const kind = uniqueId('test.private');
  t.services.jobs.register(kind, async () => ({ ok: true }));
  const queued = await t.services.tasks.enqueue(ownerCtx, kind, {});

  expect((await t.services.tasks.get(adminCtx, queued.id)).id).toBe(queued.id);
  expect((await rejection(t.services.tasks.get(otherCtx, queued.id))).code).toBe('NOT_FOUND');
  expect((await rejection(t.services.tasks.waitFor(otherCtx, queued.id, 10))).code).toBe(
    'NOT_FOUND',
  );
  expect((await rejection(t.services.tasks.get(anonymousCtx, queued.id))).code).toBe(
    'UNAUTHENTICATED',
  );
  expect((await rejection(t.services.tasks.get(ownerCtx, crypto.randomUUID()))).code).toBe(
    'NOT_FOUND',
  );
  expect((await rejection(t.services.tasks.get(ownerCtx, 'not-a-uuid'))).code).toBe('NOT_FOUND');
  expect((await rejection(t.services.tasks.enqueue(anonymousCtx, kind, {}))).code).toBe(
    'UNAUTHENTICATED',
  );
  const theirs = await t.services.tasks.list(otherCtx, { limit: 0, offset: 0, filters: {} });
  expect(theirs.items.map((task) => task.id)).not.toContain(queued.id);
});

test("a user's task list holds only their tasks, newest first, paged", async () => {
  const lister = await createUser(t);
  const ctx = await contextOf(t, lister.auth);
  const kind = uniqueId('test.list');
  t.services.jobs.register(kind, async () => null);
  const ids: string[] = [];
  for (let i = 0; i < 3; i += 1) ids.push((await t.services.tasks.enqueue(ctx, kind, { i })).id);

  const page = await t.services.tasks.list(ctx, { limit: 2, offset: 0, filters: {} });
  expect(page.total).toBe(3);
  expect(page.items.map((task) => task.id)).toEqual([ids[2], ids[1]]);
  const rest = await t.services.tasks.list(ctx, { limit: 2, offset: 2, filters: {} });
  expect(rest.items.map((task) => task.id)).toEqual([ids[0]]);
});

test('progress is cheap to report: a burst of calls writes at most once a second', async () => {
  const kind = uniqueId('test.burst');
  const saveProgress = jest.spyOn(TaskRepository.prototype, 'saveProgress');
  let writes = -1;
  let elapsed = 0;
  t.services.jobs.register(kind, async (_payload, task) => {
    const writesOf = () => saveProgress.mock.calls.filter(([id]) => id === task.id).length;
    const started = Date.now();
    for (let i = 1; i <= 500; i += 1) await task.progress(i, 500, `item ${i}`);
    elapsed = Date.now() - started;
    writes = writesOf();
    return null;
  });
  try {
    const queued = await t.services.tasks.enqueue(ownerCtx, kind, {});
    const done = await t.services.tasks.waitFor(ownerCtx, queued.id, 10_000);
    expect(done.state).toBe('SUCCESS');
    expect(writes).toBeGreaterThanOrEqual(1);
    expect(writes).toBeLessThanOrEqual(1 + Math.floor(elapsed / PROGRESS_INTERVAL_MS));
    expect(done.progress).toEqual({ done: 500, total: 500, message: 'item 500' });
  } finally {
    saveProgress.mockRestore();
  }
});

test('a task of a user deactivated before it runs fails instead of running', async () => {
  const leaving = await createUser(t);
  const ctx = await contextOf(t, leaving.auth);
  const kind = uniqueId('test.deactivated');
  const ran = jest.fn();
  const worker = await createTestApp({ JOBS_WORKERS: '0' });
  try {
    worker.services.jobs.register(kind, async () => undefined);
    // Queued by a process that runs nothing; the user is gone before a worker takes it.
    const queued = await worker.services.tasks.enqueue(ctx, kind, {});
    await t.services.users.deactivate(adminCtx, leaving.username);
    t.services.jobs.register(kind, async () => {
      ran();
    });
    const done = await t.services.tasks.waitFor(adminCtx, queued.id, 10_000);
    expect(done).toMatchObject({
      state: 'FAILURE',
      error: 'The user who requested this task is no longer active.',
    });
    expect(ran).not.toHaveBeenCalled();
  } finally {
    await worker.close();
  }
});

test('a process with JOBS_WORKERS=0 only enqueues; a worker process runs the task', async () => {
  const kind = uniqueId('test.scale-out');
  const api = await createTestApp({ JOBS_WORKERS: '0' });
  try {
    const ran: string[] = [];
    api.services.jobs.register(kind, async () => ran.push('api'));
    t.services.jobs.register(kind, async () => {
      ran.push('worker');
      return 'done by the worker';
    });
    const ctx = await contextOf(api, owner.auth);
    const queued = await api.services.tasks.enqueue(ctx, kind, {});
    const done = await api.services.tasks.waitFor(ctx, queued.id, 10_000);
    expect(done).toMatchObject({ state: 'SUCCESS', result: 'done by the worker' });
    expect(ran).toEqual(['worker']);
  } finally {
    await api.close();
  }
});

test('a STARTED task whose process died reads as FAILURE, and the next start records it', async () => {
  const id = crypto.randomUUID();
  await t.dataSource.query(
    `INSERT INTO tasks (id, kind, state, created_by, started_at, heartbeat_at)
     VALUES ($1, 'test.orphan', 'STARTED', $2, now() - interval '10 minutes',
             now() - interval '10 minutes')`,
    [id, owner.username],
  );
  const read = await t.services.tasks.get(ownerCtx, id);
  expect(read.state).toBe('FAILURE');
  expect(read.error).toMatch(/stopped before it finished/);

  const restarted = await createTestApp();
  await restarted.close();
  const rows = await t.dataSource.query(`SELECT state, error FROM tasks WHERE id = $1`, [id]);
  expect(rows[0].state).toBe('FAILURE');
  expect(rows[0].error).toMatch(/stopped before it finished/);
});

test('the app closes promptly with tasks running; they end as FAILURE, interrupted', async () => {
  const closing = await createTestApp({ JOBS_STOP_SECONDS: '0' });
  const polite = uniqueId('test.polite');
  const stubborn = uniqueId('test.stubborn');
  const never = gate();
  const started: string[] = [];
  closing.services.jobs.register(polite, async (_payload, task) => {
    started.push(polite);
    await new Promise((_resolve, reject) =>
      task.signal.addEventListener('abort', () => reject(task.signal.reason as Error)),
    );
  });
  closing.services.jobs.register(stubborn, async () => {
    started.push(stubborn);
    await never.wait;
  });
  let closed = false;
  try {
    const ctx = await contextOf(closing, owner.auth);
    const a = await closing.services.tasks.enqueue(ctx, polite, {});
    const b = await closing.services.tasks.enqueue(ctx, stubborn, {});
    await until(async () => started.length === 2);

    const began = Date.now();
    await closing.close();
    closed = true;
    expect(Date.now() - began).toBeLessThan(8000);

    for (const id of [a.id, b.id]) {
      const task = await t.services.tasks.get(ownerCtx, id);
      expect(task.state).toBe('FAILURE');
      expect(task.error).toMatch(/server stopped while this task was running/);
    }
  } finally {
    if (!closed) await closing.close();
  }
  never.open();
});

test('enqueueing a kind nobody registered is a programming error', async () => {
  await expect(t.services.tasks.enqueue(ownerCtx, uniqueId('test.unknown'), {})).rejects.toThrow(
    /No handler/,
  );
});

test('results are whatever JSON the handler returns', async () => {
  const kind = uniqueId('test.json');
  t.services.jobs.register(kind, async () => [1, 'two', { three: 3 }]);
  const queued: TaskView = await t.services.tasks.enqueue(ownerCtx, kind, {});
  const done = await t.services.tasks.waitFor(ownerCtx, queued.id, 10_000);
  expect(done.result).toEqual([1, 'two', { three: 3 }]);
});

test('JOBS_WORKERS defaults to 2, JOBS_STOP_SECONDS to 5, TASKS_KEEP_DAYS to 30; bad values stop the start', () => {
  expect(loadConfig({})).toMatchObject({ jobsWorkers: 2, jobsStopSeconds: 5, tasksKeepDays: 30 });
  expect(loadConfig({ JOBS_WORKERS: '0' }).jobsWorkers).toBe(0);
  expect(loadConfig({ TASKS_KEEP_DAYS: '0' }).tasksKeepDays).toBe(0);
  expect(() => loadConfig({ JOBS_WORKERS: '-1' })).toThrow(/JOBS_WORKERS/);
  expect(() => loadConfig({ JOBS_STOP_SECONDS: 'soon' })).toThrow(/JOBS_STOP_SECONDS/);
  expect(() => loadConfig({ TASKS_KEEP_DAYS: '1.5' })).toThrow(/TASKS_KEEP_DAYS/);
});

test('finished tasks older than TASKS_KEEP_DAYS are deleted; recent and unfinished ones stay', async () => {
  const kind = uniqueId('test.prune');
  const release = gate();
  t.services.jobs.register(kind, async (payload: { wait: boolean }) => {
    if (payload.wait) await release.wait;
    return null;
  });
  const old = await t.services.tasks.enqueue(ownerCtx, kind, { wait: false });
  const recent = await t.services.tasks.enqueue(ownerCtx, kind, { wait: false });
  await t.services.tasks.waitFor(ownerCtx, old.id, 10_000);
  await t.services.tasks.waitFor(ownerCtx, recent.id, 10_000);
  const running = await t.services.tasks.enqueue(ownerCtx, kind, { wait: true });
  await until(async () => (await t.services.tasks.get(ownerCtx, running.id)).state === 'STARTED');
  try {
    // 31 days ago for one, 29 for the other (the default keeps 30 days).
    await t.dataSource.query(
      `UPDATE tasks SET finished_at = now() - make_interval(days => 31) WHERE id = $1`,
      [old.id],
    );
    await t.dataSource.query(
      `UPDATE tasks SET finished_at = now() - make_interval(days => 29) WHERE id = $1`,
      [recent.id],
    );
    expect(await t.services.jobs.pruneFinished()).toBe(1);
    expect((await rejection(t.services.tasks.get(ownerCtx, old.id))).code).toBe('NOT_FOUND');
    expect((await t.services.tasks.get(ownerCtx, recent.id)).state).toBe('SUCCESS');
    expect((await t.services.tasks.get(ownerCtx, running.id)).state).toBe('STARTED');
  } finally {
    release.open();
    await t.services.tasks.waitFor(ownerCtx, running.id, 10_000);
  }
});
