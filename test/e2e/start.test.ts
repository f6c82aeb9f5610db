import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';

/**
 * The real entry point (`npm start` runs `node dist/src/main.js`) on a fresh data folder with
 * the embedded Postgres: first start, restart on the same data, and recovery after a crash.
 */
const root = path.resolve(__dirname, '..', '..');
let dataDir: string;

beforeAll(() => {
  execFileSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    { cwd: root },
  );
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-start-'));
  fs.chmodSync(dataDir, 0o755);
}, 120_000);

/** Whatever a failed test left running is killed, so a failure never hangs the run. */
const children = new Set<ChildProcess>();
afterEach(() => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  children.clear();
  const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');
  if (fs.existsSync(pidFile)) {
    const pid = postgresPid();
    if (alive(pid)) process.kill(pid, 'SIGQUIT');
  }
});

afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

interface Running {
  child: ChildProcess;
  url: string;
  output: string;
}

function spawnServer(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [path.join(root, 'dist', 'src', 'main.js')], {
    cwd: root,
    // NODE_ENV as in production: libraries behave differently under jest's `test`.
    env: {
      ...process.env,
      NODE_ENV: 'production',
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...env,
    },
  });
  children.add(child);
  return child;
}

function start(env: Record<string, string> = {}): Promise<Running> {
  const child = spawnServer(env);
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no 'listening' within 60 s:\n${output}`)),
      60_000,
    );
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const lines = output.split('\n');
      const line = lines.find((l) => l.includes('"msg":"listening"'));
      // Ready once warmed up (src/app.ts `warmUp`).
      if (line && lines.some((l) => l.includes('"msg":"warmed up"'))) {
        clearTimeout(timer);
        const { port } = JSON.parse(line) as { port: number };
        resolve({ child, url: `http://127.0.0.1:${port}`, output });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited with ${code}:\n${output}`)));
  });
}

/** The exit code, or a rejection when the process has not exited within 20 s. */
function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('the server did not exit within 20 s')),
      20_000,
    );
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

function postgresPid(): number {
  return Number(fs.readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('first start prints a generated admin password once; restart reuses the data; SIGTERM stops Postgres', async () => {
  const first = await start();
  const password = /password '([^']+)'/.exec(first.output)?.[1];
  expect(password).toBeDefined();

  const version = await request(first.url).get('/version/');
  expect(version.body).toBe('2.0.0');
  const login = await request(first.url)
    .post('/users/login/')
    .send({ username: 'ocladmin', password });
  expect(login.status).toBe(200);
  const org = await request(first.url)
    .post('/orgs/')
    .set('Authorization', `Token ${login.body.token}`)
    .send({ id: 'KeptOrg', name: 'Kept across restarts' });
  expect(org.status).toBe(201);

  const pgPid = postgresPid();
  const stopped = exitOf(first.child);
  first.child.kill('SIGTERM');
  expect(await stopped).toBe(0);
  expect(alive(pgPid)).toBe(false);

  const second = await start();
  expect(second.output).not.toMatch(/password '/);
  expect(
    (await request(second.url).post('/users/login/').send({ username: 'ocladmin', password }))
      .status,
  ).toBe(200);
  expect((await request(second.url).get('/orgs/KeptOrg/')).status).toBe(200);
  const stoppedAgain = exitOf(second.child);
  second.child.kill('SIGTERM');
  expect(await stoppedAgain).toBe(0);
}, 120_000);

test('a start after a crash that orphaned Postgres stops the stale server and comes up', async () => {
  const crashed = await start({ ADMIN_PASSWORD: 'chosen-password' });
  const orphan = postgresPid();
  const gone = exitOf(crashed.child);
  crashed.child.kill('SIGKILL');
  await gone;
  expect(alive(orphan)).toBe(true);

  const recovered = await start();
  expect(alive(orphan)).toBe(false);
  const login = await request(recovered.url)
    .post('/users/login/')
    .send({ username: 'ocladmin', password: 'chosen-password' });
  expect(login.status).toBe(200);
  const stopped = exitOf(recovered.child);
  recovered.child.kill('SIGTERM');
  expect(await stopped).toBe(0);
}, 120_000);

test('a second start on a live DATA_DIR exits with a clear message and leaves the first serving', async () => {
  const first = await start({ ADMIN_PASSWORD: 'chosen-password' });
  const pgPid = postgresPid();
  const { port } = new URL(first.url);
  for (const env of [{ PORT: port }, { PORT: '0' }]) {
    const second = spawnServer(env);
    let output = '';
    second.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    second.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    expect(await exitOf(second)).toBe(1);
    expect(output).toMatch(/is in use by another running server \(pid \d+.*nothing was changed/);
    expect(postgresPid()).toBe(pgPid);
    expect(alive(pgPid)).toBe(true);
    expect((await request(first.url).get('/healthz/')).status).toBe(200);
    const login = await request(first.url)
      .post('/users/login/')
      .send({ username: 'ocladmin', password: 'chosen-password' });
    expect(login.status).toBe(200);
  }
  const stopped = exitOf(first.child);
  first.child.kill('SIGTERM');
  expect(await stopped).toBe(0);
}, 120_000);
