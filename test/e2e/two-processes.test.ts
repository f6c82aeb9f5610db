import { spawn, type ChildProcess } from 'node:child_process';
import { Client } from 'pg';
import crypto from 'node:crypto';
import path from 'node:path';
import request, { type Response } from 'supertest';
import { buildServer } from './server-process';
import {
  ADMIN_PASSWORD,
  addMember,
  createOrg,
  createTestApp,
  createUser,
  type TestApp,
} from '../factories';

/**
 * Two real server processes (`src/main.ts`, built) on the test database, as behind a load
 * balancer: rate-limit counters live in the database, so each process sees what the other
 * counted (spec core §8.2, "shared by all clients"); and nothing either process keeps can make
 * the other answer from before a change (a write is answered once every process has dropped what
 * it kept from before it).
 */
const root = path.resolve(__dirname, '..', '..');
let buildDir: string;
let setup: TestApp;

beforeAll(async () => {
  buildDir = buildServer();
  setup = await createTestApp();
}, 180_000);

const children = new Set<ChildProcess>();
afterAll(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  await setup?.close();
});

interface Server {
  child: ChildProcess;
  url: string;
}

function start(): Promise<Server> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set; the global setup did not run');
  const child = spawn(process.execPath, [path.join(buildDir, 'src', 'main.js')], {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: url,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ADMIN_PASSWORD,
      JOBS_WORKERS: '0',
      DB_POOL_SIZE: '3',
      RATE_LIMITS: 'on',
      TRUST_PROXY: 'true',
      RATE_LIMIT_ANON_PER_MINUTE: '6',
      RATE_LIMIT_ANON_PER_DAY: '1000',
      RATE_LIMIT_USER_PER_MINUTE: '6',
      RATE_LIMIT_USER_PER_DAY: '1000',
      LOGIN_FAILURES_PER_ACCOUNT: '3',
      LOGIN_FAILURES_PER_IP: '1000',
    },
  });
  children.add(child);
  let output = '';
  let listening = false;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no 'listening' within 60 s:\n${output}`)),
      60_000,
    );
    const onData = (chunk: Buffer): void => {
      if (listening) return; // the request log goes on; nothing more to look for
      output += chunk.toString();
      const lines = output.split('\n');
      const line = lines.find((l) => l.includes('"msg":"listening"'));
      // Ready once warmed up (src/app.ts `warmUp`).
      if (line && lines.some((l) => l.includes('"msg":"warmed up"'))) {
        listening = true;
        clearTimeout(timer);
        const { port } = JSON.parse(line) as { port: number };
        resolve({ child, url: `http://127.0.0.1:${port}` });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited with ${code}:\n${output}`)));
  });
}

async function stop(server: Server): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  return exited;
}

function newAddress(): string {
  const hex = crypto.randomBytes(6).toString('hex');
  return `fd${hex.slice(0, 2)}:${hex.slice(2, 6)}:${hex.slice(6, 10)}:${hex.slice(10)}00::1`;
}

function remaining(res: Response, window: string): number | undefined {
  const match = new RegExp(`"${window}"; r=(\\d+);`).exec(String(res.headers.ratelimit ?? ''));
  return match ? Number(match[1]) : undefined;
}

test('two processes on one database count every caller together', async () => {
  const [a, b] = await Promise.all([start(), start()]);
  const alternately = (i: number): Server => (i % 2 === 0 ? a : b);

  // Anonymous callers, per address.
  const from = newAddress();
  const anonymous: Response[] = [];
  for (let i = 0; i < 6; i += 1) {
    anonymous.push(await request(alternately(i).url).get('/version/').set('X-Forwarded-For', from));
  }
  expect(anonymous.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
  expect(anonymous.map((r) => remaining(r, 'minute'))).toEqual([5, 4, 3, 2, 1, 0]);
  for (const server of [a, b]) {
    const refused = await request(server.url).get('/version/').set('X-Forwarded-For', from);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  }

  // Signed-in callers, per user, from anywhere.
  const user = await createUser(setup);
  const signedIn: Response[] = [];
  for (let i = 0; i < 7; i += 1) {
    signedIn.push(
      await request(alternately(i).url)
        .get('/user/')
        .set('X-Forwarded-For', newAddress())
        .set('Authorization', user.auth),
    );
  }
  expect(signedIn.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200, 429]);

  // Parallel requests through both processes: exactly the limit gets through.
  const crowd = newAddress();
  const burst = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      request(alternately(i).url).get('/version/').set('X-Forwarded-For', crowd),
    ),
  );
  expect(burst.filter((r) => r.status === 200)).toHaveLength(6);
  expect(burst.filter((r) => r.status === 429)).toHaveLength(14);

  // Failed logins, per account.
  const target = await createUser(setup);
  for (let i = 0; i < 3; i += 1) {
    const res = await request(alternately(i).url)
      .post('/users/login/')
      .set('X-Forwarded-For', newAddress())
      .send({ username: target.username, password: 'wrong-password' });
    expect(res.status).toBe(400);
  }
  const locked = await request(b.url)
    .post('/users/login/')
    .set('X-Forwarded-For', newAddress())
    .send({ username: target.username, password: target.password });
  expect(locked.status).toBe(429);

  expect(await Promise.all([stop(a), stop(b)])).toEqual([0, 0]);
}, 120_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An org's source `S` (canonical URL by the org) with a concept `C` named `Before`, made through the test's own app. */
async function sourceWithConcept(owner: { auth: string }, org: string): Promise<string> {
  const source = `/orgs/${org}/sources/S/`;
  await request(setup.app)
    .post(`/orgs/${org}/sources/`)
    .set('Authorization', owner.auth)
    .send({ id: 'S', name: 'S', canonical_url: `http://example.org/e2e/${org}` })
    .expect(201);
  await request(setup.app)
    .post(`${source}concepts/`)
    .set('Authorization', owner.auth)
    .send({ id: 'C', concept_class: 'Misc', names: [{ name: 'Before', locale: 'en' }] })
    .expect(201);
  return source;
}

/** The display name of `source`'s concept `C` as `server` shows it to anyone. */
async function shown(server: Server, source: string): Promise<string> {
  const res = await request(server.url)
    .get(`${source}concepts/C/`)
    .set('X-Forwarded-For', newAddress());
  return (res.body as { display_name: string }).display_name;
}

test('a write is answered once the other process has heard it; a process that does not answer is waited for once', async () => {
  const [a, b] = await Promise.all([start(), start()]);
  const owner = await createUser(setup);
  const source = await sourceWithConcept(owner, (await createOrg(setup, owner)).id);
  const edit = (name: string) => {
    let answered = false;
    const started = Date.now();
    const answer = request(a.url)
      .patch(`${source}concepts/C/`)
      .set('X-Forwarded-For', newAddress())
      .set('Authorization', owner.auth)
      .send({ names: [{ name, locale: 'en', locale_preferred: true }] })
      .then((res) => {
        answered = true;
        return { status: res.status, ms: Date.now() - started };
      });
    return { answer, answered: () => answered };
  };
  expect(await shown(b, source)).toBe('Before'); // b keeps this answer

  // While b cannot run, a does not answer the write; once b has heard it, a answers and b shows it.
  const waitsForB = async (name: string) => {
    b.child.kill('SIGSTOP');
    const pending = edit(name);
    await sleep(700);
    expect(pending.answered()).toBe(false);
    b.child.kill('SIGCONT');
    expect((await pending.answer).status).toBe(200);
    expect(await shown(b, source)).toBe(name);
  };
  await waitsForB('After');

  // A process silent for 2 s is waited for once, then not until it answers again.
  b.child.kill('SIGSTOP');
  const silent = await edit('Silent').answer;
  expect(silent.status).toBe(200);
  expect(silent.ms).toBeGreaterThanOrEqual(1900);
  const next = await edit('Again').answer;
  expect(next.status).toBe(200);
  expect(next.ms).toBeLessThan(1500);
  b.child.kill('SIGCONT');
  // Running again, b answers the questions it missed (after the changes before them)...
  for (let i = 0; i < 100 && (await shown(b, source)) !== 'Again'; i += 1) await sleep(100);
  expect(await shown(b, source)).toBe('Again');
  await sleep(500); // ...and its answers reach a
  // ...so a waits for it again.
  await waitsForB('Last');
  expect(await Promise.all([stop(a), stop(b)])).toEqual([0, 0]);
}, 120_000);

test('a background task is recorded as finished once the other process has heard what it wrote', async () => {
  const b = await start();
  const owner = await createUser(setup);
  const org = (await createOrg(setup, owner)).id;
  const source = await sourceWithConcept(owner, org);
  expect(await shown(b, source)).toBe('Before'); // b keeps this answer
  // The test holds the source's row, so the import (run by the test's own app) waits for it.
  const holder = new Client({ connectionString: process.env.TEST_DATABASE_URL });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query(
    `SELECT 1 FROM repositories WHERE mnemonic = 'S' AND owner_org_id = (SELECT id FROM organizations WHERE mnemonic = $1) FOR UPDATE`,
    [org],
  );
  const line = {
    type: 'Concept',
    owner: org,
    owner_type: 'Organization',
    source: 'S',
    id: 'C',
    concept_class: 'Misc',
    names: [{ name: 'Imported', locale: 'en', locale_preferred: true }],
  };
  const accepted = await request(setup.app)
    .post('/importers/bulk-import/?update_if_exists=true')
    .set('Authorization', owner.auth)
    .set('Content-Type', 'application/json')
    .send(JSON.stringify(line))
    .expect(202);
  const task = (accepted.body as { id: string }).id;
  const state = async () =>
    (
      await setup.dataSource.query<Array<{ state: string }>>(
        'SELECT state FROM tasks WHERE id = $1',
        [task],
      )
    )[0].state;

  b.child.kill('SIGSTOP');
  await holder.query('COMMIT'); // the import writes now
  await holder.end();
  await sleep(1000);
  expect(await state()).toBe('STARTED'); // written, not yet heard by b
  b.child.kill('SIGCONT');
  for (let i = 0; i < 100 && (await state()) === 'STARTED'; i += 1) await sleep(100);
  expect(await state()).toBe('SUCCESS');
  expect(await shown(b, source)).toBe('Imported');
  expect(await stop(b)).toBe(0);
}, 120_000);

test('a change made through one process is seen by the very next request to the other', async () => {
  const [a, b] = await Promise.all([start(), start()]);
  const [owner, member, outsider, leaving] = [
    await createUser(setup),
    await createUser(setup),
    await createUser(setup),
    await createUser(setup),
  ];
  const org = (await createOrg(setup, owner)).id;
  await addMember(setup, org, owner, member);
  const source = await sourceWithConcept(owner, org);
  const read = (server: Server, path: string, auth?: string) => {
    const req = request(server.url).get(path).set('X-Forwarded-For', newAddress());
    return auth ? req.set('Authorization', auth) : req;
  };
  // The FHIR operations keep stored code systems rendered: the same changes must show there.
  const lookup = async (server: Server, auth?: string) => {
    const system = encodeURIComponent(`http://example.org/e2e/${org}`);
    const res = await read(server, `/fhir/CodeSystem/$lookup?system=${system}&code=C`, auth);
    if (res.status !== 200) return res.status;
    const display = (
      res.body as { parameter: Array<{ name: string; valueString?: string }> }
    ).parameter.find((p) => p.name === 'display');
    return display?.valueString;
  };
  // Each process has answered once before the changes (anything it might keep, it has).
  for (const server of [a, b]) {
    expect((await read(server, `${source}concepts/C/`)).body.display_name).toBe('Before');
    expect(await lookup(server)).toBe('Before');
  }

  // An edit.
  await request(a.url)
    .patch(`${source}concepts/C/`)
    .set('X-Forwarded-For', newAddress())
    .set('Authorization', owner.auth)
    .send({ names: [{ name: 'After', locale: 'en', locale_preferred: true }] })
    .expect(200);
  for (const server of [b, a]) {
    expect((await read(server, `${source}concepts/C/`)).body.display_name).toBe('After');
    expect(await lookup(server)).toBe('After');
  }

  // A permission change: the source becomes private.
  await request(a.url)
    .patch(source)
    .set('X-Forwarded-For', newAddress())
    .set('Authorization', owner.auth)
    .send({ public_access: 'None' })
    .expect(200);
  expect((await read(b, `${source}concepts/C/`)).status).toBe(401);
  expect((await read(b, `${source}concepts/C/`, outsider.auth)).status).toBe(403);
  expect((await read(b, `${source}concepts/C/`, member.auth)).status).toBe(200);
  for (const server of [b, a]) {
    expect(await lookup(server)).toBe(404);
    expect(await lookup(server, outsider.auth)).toBe(404);
    expect(await lookup(server, member.auth)).toBe('After');
  }

  // A membership removal.
  await request(a.url)
    .delete(`/orgs/${org}/members/${member.username}/`)
    .set('X-Forwarded-For', newAddress())
    .set('Authorization', owner.auth)
    .expect(204);
  expect((await read(b, `${source}concepts/C/`, member.auth)).status).toBe(403);
  expect(await lookup(b, member.auth)).toBe(404);
  expect(await lookup(a, member.auth)).toBe(404);

  // A revoked token: its user deactivated.
  expect((await read(b, '/user/', leaving.auth)).status).toBe(200);
  await request(a.url)
    .delete(`/users/${leaving.username}/`)
    .set('X-Forwarded-For', newAddress())
    .set('Authorization', setup.admin)
    .expect(204);
  for (const server of [b, a]) {
    expect((await read(server, '/user/', leaving.auth)).status).toBe(401);
  }
  await Promise.all([stop(a), stop(b)]);
}, 120_000);
