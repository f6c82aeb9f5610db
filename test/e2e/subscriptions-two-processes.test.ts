import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createTestApp, createUser, uniqueId, type TestApp } from '../factories';
import { createCollection, createConcept, createSource } from '../factories/content';
import { closeCode, record, until, wsClient } from '../graphql/ws';
import { buildServer, startServer, startWorker, stop } from './server-process';

/**
 * Issue 28 part 6: subscriptions are told of changes made by any process. Two real server
 * processes on one database (and a worker): a `graphql-ws` client subscribed on A hears what is
 * done through B and the progress of a task a third process runs, through PostgreSQL
 * LISTEN/NOTIFY; A's drain closes its subscriptions with 1001, so that clients reconnect elsewhere.
 */
const TOKEN = 'subscriptions-metrics-token-0123456789';
let buildDir: string;
let dataDir: string;
let setup: TestApp;
const children: ChildProcess[] = [];

beforeAll(async () => {
  buildDir = buildServer();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'subscriptions-'));
  // Makes the test's users and content; runs no tasks (the worker does).
  setup = await createTestApp({ DATA_DIR: dataDir, JOBS_WORKERS: '0' });
}, 240_000);

afterAll(async () => {
  await Promise.all(children.map((child) => stop(child)));
  await setup?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

const CHANGES = `subscription($url: String!) {
  repositoryChanged(url: $url) { kind url actor }
}`;
const TASK = `subscription($id: ID!) { taskProgress(id: $id) { id state result } }`;

test('a subscription on one process hears the changes and tasks of the others', async () => {
  const [a, b] = await Promise.all([
    startServer(buildDir, { METRICS_TOKEN: TOKEN, DATA_DIR: dataDir }),
    startServer(buildDir, { DATA_DIR: dataDir }),
  ]);
  children.push(a.child, b.child);
  const viaB = `http://127.0.0.1:${b.port}`;
  const owner = await createUser(setup);
  const source = await createSource(setup, { id: uniqueId('S') }, { owner });
  await createConcept(setup, source.url, owner, { id: 'A' });

  const client = wsClient(`ws://127.0.0.1:${a.port}/graphql`, owner.auth);
  const changes = record(client, CHANGES, { url: source.url });
  // A subscription has no acknowledgement: A's gauge tells when its watch is open.
  await until(async () => {
    const res = await request(`http://127.0.0.1:${a.port}`)
      .get('/metrics')
      .set('Authorization', `Bearer ${TOKEN}`);
    return /^registry_watches_open\{topic="repository"\} 1$/m.test(res.text);
  });

  // Concurrent writes through B: each heard once on A.
  const ids = Array.from({ length: 6 }, (_, i) => `B${i}`);
  await Promise.all(
    ids.map((id) =>
      request(viaB)
        .post(`${source.url}concepts/`)
        .set('Authorization', owner.auth)
        .send({ id, concept_class: 'Misc', names: [{ name: `Name ${id}`, locale: 'en' }] })
        .expect(201),
    ),
  );
  await changes.atLeast(ids.length, 20_000);
  expect(changes.events.map((e) => e.data?.repositoryChanged)).toEqual(
    expect.arrayContaining(
      ids.map((id) => ({
        kind: 'CONCEPT_CREATED',
        url: `${source.url}concepts/${id}/`,
        actor: owner.username,
      })),
    ),
  );
  expect(changes.events).toHaveLength(ids.length);

  // A task queued through B (no process runs tasks yet), followed on A, run by a worker.
  const collection = await createCollection(
    setup,
    { id: uniqueId('C') },
    { owner, org: source.org },
  );
  const queued = await request(viaB)
    .post('/graphql')
    .set('Authorization', owner.auth)
    .send({
      query: `mutation($c: String!, $r: JSON!) {
        addReferences(collection: $c, references: $r, background: true) { task { id state } }
      }`,
      variables: { c: collection.url, r: [`${source.url}concepts/A/`] },
    })
    .expect(200);
  const { id, state } = queued.body.data.addReferences.task as { id: string; state: string };
  expect(state).toBe('PENDING');
  const task = record(client, TASK, { id });
  await task.atLeast(1);
  const worker = await startWorker(buildDir, dataDir);
  children.push(worker.child);
  expect(await task.ended).toEqual({ complete: true });
  const states = task.events.map(
    (e) => (e.data?.taskProgress as { state: string } | undefined)?.state,
  );
  expect(states[0]).toBe('PENDING');
  expect(states.at(-1)).toBe('SUCCESS');

  // Draining, A closes its subscriptions with 1001 ("going away": reconnect elsewhere).
  const exited = new Promise((resolve) => a.child.once('exit', resolve));
  a.child.kill('SIGTERM');
  expect(closeCode(await changes.ended)).toBe(1001);
  expect(await exited).toBe(0);
  await client.dispose();
}, 180_000);
