import type { Client } from 'graphql-ws';
import crypto from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createLogger } from '../../src/logger';
import { REPOSITORY_CHANGE_KINDS } from '../../src/services';
import {
  addMember,
  createOrg,
  createTestApp,
  createUser,
  uniqueId,
  type TestApp,
  type TestUser,
} from '../factories';
import {
  createCollection,
  createConcept,
  createSource,
  createVersion,
  retire,
  type TestSource,
} from '../factories/content';
import { dataOf, gql } from './gql';
import { closeCode, codesOf, record, until, wsClient, type Recording } from './ws';

/**
 * GraphQL subscriptions over WebSocket (issue 28 part 6), with a real `graphql-ws` client against
 * the app listening on a port: who may connect and subscribe, a task followed to its end, the
 * changes of a repository as any edge makes them, privacy (checked again at each delivery), the
 * limits, clean-up, many subscribers and writers at once, and a lost listening connection.
 */
let t: TestApp;
let server: Server;
let url: string;
let owner: TestUser;
const clients: Client[] = [];
const SLOW = uniqueId('test.slow');
/** What a slow task waits for after its first step, by the name its payload gives. */
const gates = new Map<string, Promise<void>>();

beforeAll(async () => {
  t = await createTestApp({ GRAPHQL_MAX_SUBSCRIPTIONS: '3' });
  server = t.app.listen(0, '127.0.0.1');
  t.attachWebSocket(server);
  await once(server, 'listening');
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  owner = await createUser(t);
  t.services.jobs.register<{ steps: number; gate?: string }>(
    SLOW,
    async ({ steps, gate }, task) => {
      await task.progress(1, steps, 'started');
      await (gate ? gates.get(gate) : undefined);
      for (let step = 2; step <= steps; step += 1) {
        // Progress is written at most once a second.
        await new Promise((resolve) => setTimeout(resolve, 1100));
        await task.progress(step, steps, `step ${step}`);
      }
      return { steps };
    },
  );
}, 60_000);

afterEach(async () => {
  await Promise.all(clients.splice(0).map(async (client) => client.dispose()));
});

afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => server?.close(resolve));
});

function client(authorization?: string): Client {
  const made = wsClient(url, authorization);
  clients.push(made);
  return made;
}

const open = (): number => t.services.watches.openWatches();

/** `record` once the server holds the watch (a subscription has no acknowledgement of its own). */
async function watching(
  c: Client,
  query: string,
  variables: Record<string, unknown>,
): Promise<Recording> {
  const before = open();
  const recording = record(c, query, variables);
  await until(
    () => open() > before || recording.done,
    10_000,
    () => 'for the watch to open',
  );
  return recording;
}

const TASK = `subscription($id: ID!) {
  taskProgress(id: $id) { id kind state progress { done total message } result error }
}`;
const CHANGES = `subscription($url: String!) {
  repositoryChanged(url: $url) { kind url repositoryUrl actor at }
}`;

interface Change {
  kind: string;
  url: string;
  repositoryUrl: string;
  actor: string;
  at: string;
}

const changesOf = (r: Recording): Change[] =>
  r.events.map((e) => (e.data as { repositoryChanged: Change }).repositoryChanged);

/** Queues a slow task of `steps` (a second apart); `gate`: the name of what it waits for first. */
async function enqueueSlow(user: TestUser, steps: number, gate?: string): Promise<string> {
  const actor = await t.services.auth.authenticate(user.auth);
  const ctx = t.services.context(actor, createLogger('silent'), 'http://localhost');
  return (await t.services.tasks.enqueue(ctx, SLOW, { steps, gate })).id;
}

async function source(options: { fields?: Record<string, unknown> } = {}): Promise<TestSource> {
  return createSource(t, { id: uniqueId('S'), ...options.fields }, { owner });
}

describe('connecting', () => {
  it('refused credentials close the connection with 4401', async () => {
    const s = await source();
    const ending = await record(client('Token not-a-token'), CHANGES, { url: s.url }).ended;
    expect(closeCode(ending)).toBe(4401);
    expect((ending as { error: { reason: string } }).error.reason).toBe('Invalid token.');
    const basic = await record(client('Digest abc'), CHANGES, { url: s.url }).ended;
    expect(closeCode(basic)).toBe(4401);
  });

  it('accepts the token forms of HTTP (Token, Bearer) and none (anonymous)', async () => {
    const s = await source();
    const secret = owner.auth.replace(/^Token /, '');
    const base = open();
    for (const authorization of [`Token ${secret}`, `Bearer ${secret}`, undefined]) {
      const r = await watching(client(authorization), CHANGES, { url: s.url });
      expect(r.done).toBe(false);
      r.stop();
      await until(() => open() === base);
    }
  });

  it('takes only WebSocket upgrades of /graphql: any other upgrade is answered as a plain request', async () => {
    const port = (server.address() as AddressInfo).port;
    const firstLine = (upgrade: string, path: string): Promise<string> =>
      new Promise((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () =>
          socket.write(
            `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\n` +
              `Upgrade: ${upgrade}\r\nSec-WebSocket-Version: 13\r\n` +
              `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
          ),
        );
        socket.once('data', (data) => {
          resolve(data.toString().split('\r\n')[0]);
          socket.destroy();
        });
        socket.once('error', reject);
      });
    expect(await firstLine('h2c', '/version/')).toBe('HTTP/1.1 200 OK');
    expect(await firstLine('websocket', '/version/')).toBe('HTTP/1.1 200 OK');
    expect(await firstLine('websocket', '/graphql')).toBe('HTTP/1.1 101 Switching Protocols');
  });

  it('an anonymous caller may not follow a task (UNAUTHENTICATED), as over HTTP', async () => {
    const id = await enqueueSlow(owner, 1);
    const r = record(client(), TASK, { id });
    expect(await r.ended).toEqual({ complete: true });
    expect(r.events).toHaveLength(1);
    expect(codesOf(r.events[0])).toEqual(['UNAUTHENTICATED']);
  });
});

describe('taskProgress', () => {
  it('follows a task from now through its progress to its end, then completes', async () => {
    let release!: () => void;
    const gate = uniqueId('gate');
    gates.set(gate, new Promise<void>((resolve) => (release = resolve)));
    const id = await enqueueSlow(owner, 3, gate);
    const r = record(client(owner.auth), TASK, { id });
    await r.atLeast(1);
    release();
    expect(await r.ended).toEqual({ complete: true });
    const tasks = r.events.map(
      (e) =>
        (e.data as { taskProgress: { state: string; progress: { done: number } } }).taskProgress,
    );
    expect(r.events.every((e) => e.errors === undefined)).toBe(true);
    expect(tasks.at(-1)).toMatchObject({
      id,
      kind: 'OTHER', // this test's own kind of task, which TaskKind does not name
      state: 'SUCCESS',
      progress: { done: 3, total: 3, message: 'step 3' },
      result: { steps: 3 },
      error: null,
    });
    // Each event says something new, in order: the progress never goes back.
    const done = tasks.map((task) => task.progress.done);
    expect(done).toEqual([...done].sort((a, b) => a - b));
    expect(done).toContain(2);
    expect(new Set(tasks.map((task) => JSON.stringify(task))).size).toBe(tasks.length);
  });

  it("follows a background reference add to its result; another user's task is NOT_FOUND", async () => {
    const s = await source();
    await createConcept(t, s.url, owner, { id: 'A' });
    const c = await createCollection(t, { id: uniqueId('C') }, { owner, org: s.org });
    const queued = dataOf(
      await gql(
        t,
        owner.auth,
        `mutation($c: String!, $r: JSON!) {
          addReferences(collection: $c, references: $r, background: true) { task { id } }
        }`,
        { c: c.url, r: [`${s.url}concepts/A/`] },
      ),
    ) as { addReferences: { task: { id: string } } };
    const id = queued.addReferences.task.id;
    const mine = record(client(owner.auth), TASK, { id });
    const stranger = record(client((await createUser(t)).auth), TASK, { id });
    expect(await mine.ended).toEqual({ complete: true });
    const last = (mine.events.at(-1)!.data as { taskProgress: { state: string; result: unknown } })
      .taskProgress;
    expect(last.state).toBe('SUCCESS');
    expect(JSON.stringify(last.result)).toContain(`${s.url}concepts/A/`);
    expect(await stranger.ended).toEqual({ complete: true });
    expect(codesOf(stranger.events[0])).toEqual(['NOT_FOUND']);
  });
});

describe('repositoryChanged', () => {
  it('tells each change of a source, made through any edge, in order, with its URL and actor', async () => {
    const s = await source();
    const r = await watching(client(owner.auth), CHANGES, { url: s.url });
    await createConcept(t, s.url, owner, { id: 'A' });
    await createConcept(t, s.url, owner, { id: 'B' });
    dataOf(
      await gql(
        t,
        owner.auth,
        `mutation($u: String!) { updateConcept(url: $u, input: { datatype: "Text" }) { concept { id } } }`,
        { u: `${s.url}concepts/A/` },
      ),
    );
    await request(t.app)
      .post(`${s.url}mappings/`)
      .set('Authorization', owner.auth)
      .send({
        id: 'M1',
        map_type: 'SAME-AS',
        from_concept_url: `${s.url}concepts/A/`,
        to_concept_url: `${s.url}concepts/B/`,
      })
      .expect(201);
    await retire(t, s.url, owner, 'concepts', 'B');
    await createVersion(t, s.url, owner, 'v1');
    dataOf(
      await gql(
        t,
        owner.auth,
        `mutation($u: String!) { updateSource(url: $u, input: { name: "Renamed" }) { source { id } } }`,
        { u: s.url },
      ),
    );
    await r.atLeast(7);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(changesOf(r).map((c) => [c.kind, c.url])).toEqual([
      ['CONCEPT_CREATED', `${s.url}concepts/A/`],
      ['CONCEPT_CREATED', `${s.url}concepts/B/`],
      ['CONCEPT_UPDATED', `${s.url}concepts/A/`],
      ['MAPPING_CREATED', `${s.url}mappings/M1/`],
      ['CONCEPT_RETIRED', `${s.url}concepts/B/`],
      ['VERSION_CREATED', `${s.url}v1/`],
      ['REPOSITORY_UPDATED', s.url],
    ]);
    for (const change of changesOf(r)) {
      expect(change).toMatchObject({ repositoryUrl: s.url, actor: owner.username });
      expect(Date.now() - Date.parse(change.at)).toBeLessThan(60_000);
    }
    expect(r.done).toBe(false);
  });

  it("tells a collection's references added and removed, and its deletion last", async () => {
    const s = await source();
    await createConcept(t, s.url, owner, { id: 'A' });
    const c = await createCollection(t, { id: uniqueId('C') }, { owner, org: s.org });
    const r = await watching(client(owner.auth), CHANGES, { url: c.url });
    dataOf(
      await gql(
        t,
        owner.auth,
        `mutation($c: String!, $r: JSON!) { addReferences(collection: $c, references: $r) { results { added } } }`,
        { c: c.url, r: [`${s.url}concepts/A/`] },
      ),
    );
    dataOf(
      await gql(
        t,
        owner.auth,
        `mutation($c: String!) { removeReferences(collection: $c, all: true) { removedCount } }`,
        {
          c: c.url,
        },
      ),
    );
    await request(t.app).delete(c.url).set('Authorization', owner.auth).expect(204);
    expect(await r.ended).toEqual({ complete: true });
    expect(changesOf(r).map((change) => change.kind)).toEqual([
      'REFERENCES_ADDED',
      'REFERENCES_REMOVED',
      'REPOSITORY_DELETED',
    ]);
  });

  it('refuses a version URL and a repository the caller cannot see', async () => {
    const s = await source({ fields: { public_access: 'None' } });
    const version = record(client(owner.auth), CHANGES, { url: `${s.url}v1/` });
    expect(await version.ended).toEqual({ complete: true });
    expect(codesOf(version.events[0])).toEqual(['INVALID']);
    const outsider = record(client((await createUser(t)).auth), CHANGES, { url: s.url });
    expect(await outsider.ended).toEqual({ complete: true });
    expect(codesOf(outsider.events[0])).toEqual(['FORBIDDEN']);
    const anonymous = record(client(), CHANGES, { url: s.url });
    expect(await anonymous.ended).toEqual({ complete: true });
    expect(codesOf(anonymous.events[0])).toEqual(['UNAUTHENTICATED']);
    expect(JSON.stringify([version.events, outsider.events, anonymous.events])).not.toContain(
      '"kind"',
    );
  });

  it("never tells an outsider a private repository's changes: a member hears them until removed", async () => {
    const org = (await createOrg(t, owner)).id;
    const member = await createUser(t);
    await addMember(t, org, owner, member);
    const s = await createSource(t, { id: uniqueId('P'), public_access: 'None' }, { owner, org });
    const ownerWatch = await watching(client(owner.auth), CHANGES, { url: s.url });
    const memberWatch = await watching(client(member.auth), CHANGES, { url: s.url });
    await createConcept(t, s.url, owner, { id: 'A' });
    await memberWatch.atLeast(1);
    expect(changesOf(memberWatch).map((c) => c.url)).toEqual([`${s.url}concepts/A/`]);

    // Rights are read again at each delivery: once out of the org, the member hears nothing more.
    await request(t.app)
      .delete(`/orgs/${org}/members/${member.username}/`)
      .set('Authorization', owner.auth)
      .expect(204);
    await createConcept(t, s.url, owner, { id: 'SECRET' });
    const ending = await memberWatch.ended;
    expect(ending).toEqual({ complete: true });
    expect(memberWatch.events).toHaveLength(2);
    expect(memberWatch.events[1].data).toEqual({ repositoryChanged: null });
    expect(codesOf(memberWatch.events[1])).toEqual(['FORBIDDEN']);
    expect(JSON.stringify(memberWatch.events)).not.toContain('SECRET');
    await ownerWatch.atLeast(2);
    expect(changesOf(ownerWatch).map((c) => c.url)).toEqual([
      `${s.url}concepts/A/`,
      `${s.url}concepts/SECRET/`,
    ]);
  });

  it("a public source made private ends an outsider's subscription without telling the change", async () => {
    const s = await source();
    const outsider = await watching(client((await createUser(t)).auth), CHANGES, { url: s.url });
    await request(t.app)
      .put(s.url)
      .set('Authorization', owner.auth)
      .send({ public_access: 'None' })
      .expect(200);
    expect(await outsider.ended).toEqual({ complete: true });
    expect(outsider.events).toHaveLength(1);
    expect(codesOf(outsider.events[0])).toEqual(['FORBIDDEN']);
  });
});

describe('limits and clean-up', () => {
  it('carries only subscriptions, valid ones within the alias and per-connection limits', async () => {
    const s = await source();
    const c = client(owner.auth);
    const query = await record(c, '{ me { username } }').ended;
    expect(codesOf(query)).toEqual(['NOT_ALLOWED']);
    const aliases = Array.from({ length: 101 }, (_, i) => `a${i}: kind`).join(' ');
    const aliased = await record(
      c,
      `subscription($url: String!) { repositoryChanged(url: $url) { ${aliases} } }`,
      { url: s.url },
    ).ended;
    expect(codesOf(aliased)).toEqual(['TOO_MANY_ALIASES']);
    const invalid = await record(c, 'subscription { nope }').ended;
    expect(codesOf(invalid)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    const held = [1, 2, 3].map(() => record(c, CHANGES, { url: s.url }));
    await until(() => held.every((r) => !r.done) && open() >= 3);
    const fourth = await record(c, CHANGES, { url: s.url }).ended;
    expect(codesOf(fourth)).toEqual(['RATE_LIMITED']);
    for (const r of held) r.stop();
  });

  it("keeps the HTTP edge's depth, cost and text limits", async () => {
    const limited = await createTestApp({ GRAPHQL_MAX_DEPTH: '2', GRAPHQL_MAX_COST: '3' });
    const listening = limited.app.listen(0, '127.0.0.1');
    limited.attachWebSocket(listening);
    try {
      await once(listening, 'listening');
      const port = (listening.address() as AddressInfo).port;
      const c = wsClient(`ws://127.0.0.1:${port}/graphql`);
      clients.push(c);
      const deep = await record(c, TASK, { id: crypto.randomUUID() }).ended;
      expect(codesOf(deep)).toEqual(['QUERY_TOO_DEEP']);
      const costly = await record(c, CHANGES, { url: '/orgs/O/sources/S/' }).ended;
      expect(codesOf(costly)).toEqual(['QUERY_TOO_COSTLY']);
      const text = await record(
        c,
        'subscription($u: String!) { repositoryChanged(url: $u) { kind } }',
        {
          u: '/orgs/O/sources/S\u0007/',
        },
      ).ended;
      expect(codesOf(text)).toEqual(['INVALID']);
    } finally {
      await limited.close();
      await new Promise((resolve) => listening.close(resolve));
    }
  });

  it('stopping a subscription, or closing the connection, ends its watch', async () => {
    const s = await source();
    const before = open();
    const c = client(owner.auth);
    const first = await watching(c, CHANGES, { url: s.url });
    await watching(c, CHANGES, { url: s.url });
    expect(open()).toBe(before + 2);
    first.stop();
    await until(() => open() === before + 1);
    await c.dispose();
    await until(() => open() === before);
  });
});

describe('many at once', () => {
  it('several subscribers each hear every one of concurrent writes once', async () => {
    const s = await source();
    const member = await createUser(t);
    await addMember(t, s.org, owner, member);
    const watches = [
      await watching(client(owner.auth), CHANGES, { url: s.url }),
      await watching(client(member.auth), CHANGES, { url: s.url }),
      await watching(client(t.admin), CHANGES, { url: s.url }),
      await watching(client(), CHANGES, { url: s.url }),
    ];
    const ids = Array.from({ length: 12 }, (_, i) => `C${i}`);
    await Promise.all(ids.map((id) => createConcept(t, s.url, owner, { id })));
    for (const watch of watches) await watch.atLeast(ids.length);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const expected = ids.map((id) => `${s.url}concepts/${id}/`).sort();
    for (const watch of watches) {
      expect(watch.events.every((e) => e.errors === undefined)).toBe(true);
      expect(
        changesOf(watch)
          .map((c) => c.url)
          .sort(),
      ).toEqual(expected);
    }
    // Every subscriber heard them in the same (commit) order.
    const orders = watches.map((watch) =>
      changesOf(watch)
        .map((c) => c.url)
        .join(),
    );
    expect(new Set(orders).size).toBe(1);
  });
});

describe('the listening connection', () => {
  it('is one per process, and comes back after it is lost', async () => {
    const listeners = async (): Promise<number[]> =>
      (
        await t.dataSource.query<Array<{ pid: number }>>(
          `SELECT pid FROM pg_stat_activity
           WHERE application_name = 'registry-listen' AND datname = current_database()
             AND state = 'idle'`,
        )
      ).map((row) => row.pid);
    const s = await source();
    const r = await watching(client(owner.auth), CHANGES, { url: s.url });
    const [pid, ...others] = await listeners();
    expect(others).toEqual([]);
    await t.dataSource.query('SELECT pg_terminate_backend($1)', [pid]);
    await until(async () => {
      const now = await listeners();
      return now.length === 1 && now[0] !== pid;
    });
    await createConcept(t, s.url, owner, { id: 'AFTER' });
    await r.atLeast(1);
    expect(changesOf(r).map((c) => c.url)).toEqual([`${s.url}concepts/AFTER/`]);
  });
});

test('the GraphQL enum of changes is the services’ list', async () => {
  const res = await gql(
    t,
    undefined,
    `{ __type(name: "RepositoryChangeKind") { enumValues { name } } }`,
  );
  const names = (res.data as { __type: { enumValues: Array<{ name: string }> } }).__type.enumValues;
  expect(names.map((v) => v.name)).toEqual([...REPOSITORY_CHANGE_KINDS]);
});
