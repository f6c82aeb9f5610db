import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ADMIN_PASSWORD, createTestApp, type TestApp } from '../factories';
import { sharedBuildDir } from '../setup/shared-build';
import request from 'supertest';
import { createConcept, createSource, createVersion, type TestSource } from '../factories/content';

/** The server built apart from dist/ (other tests rebuild that), run as its own process. */
const root = path.resolve(__dirname, '..', '..');

/**
 * The server built once for the whole run and shared by every file that starts real processes
 * (a build takes ~20 s): under the checkout, so that it resolves node_modules, named by the run
 * (`TEST_RUN_ID`, set by the global setup, which also removes it). The first caller builds into a
 * folder of its own and renames it into place; a caller that finds it there uses it. Nobody
 * writes to it afterwards, so sharing it is safe.
 */
export function buildServer(): string {
  const runId = process.env.TEST_RUN_ID;
  if (!runId) throw new Error('TEST_RUN_ID is not set; the global setup did not run');
  const shared = sharedBuildDir(root, runId);
  if (fs.existsSync(path.join(shared, 'src', 'main.js'))) return shared;
  fs.mkdirSync(path.dirname(shared), { recursive: true });
  const own = fs.mkdtempSync(`${shared}-`);
  execFileSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', own],
    { cwd: root },
  );
  try {
    fs.renameSync(own, shared);
  } catch {
    // Another file built it meanwhile: use that one.
    fs.rmSync(own, { recursive: true, force: true });
  }
  return shared;
}

/**
 * The built server on the test database as a worker process (`PROCESS_ROLE=worker`: background
 * tasks, one at a time, no HTTP listener; `env` over those settings), answered once its job queue
 * has started and, with `METRICS_PORT`, its metrics listener listens (`metricsPort` says where).
 */
export function startWorker(
  buildDir: string,
  dataDir: string,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; metricsPort?: number }> {
  const started = spawn(process.execPath, [path.join(buildDir, 'src', 'main.js')], {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: process.env.TEST_DATABASE_URL!,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      ADMIN_PASSWORD,
      PROCESS_ROLE: 'worker',
      JOBS_WORKERS: '1',
      RATE_LIMITS: 'off',
      ...env,
    },
  });
  const awaited = ['"msg":"job queue started"'];
  if (env.METRICS_PORT !== undefined) awaited.push('"msg":"metrics listening"');
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not started in 60 s:\n${output}`)), 60_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (awaited.every((message) => output.includes(message))) {
        clearTimeout(timer);
        started.stdout.off('data', onData);
        started.stderr.off('data', onData);
        const metrics = output.split('\n').find((l) => l.includes('"msg":"metrics listening"'));
        resolve({
          child: started,
          metricsPort: metrics ? (JSON.parse(metrics) as { port: number }).port : undefined,
        });
      }
    };
    started.stdout.on('data', onData);
    started.stderr.on('data', onData);
    started.once('exit', (code) => reject(new Error(`exited with ${code}:\n${output}`)));
  });
}

/**
 * The built server as its own process on the test database (`env` over the defaults: port 0, no
 * task workers, no rate limits); its port once it listens. Rejects with its output when it exits
 * first, or does not listen within 90 s.
 */
export function startServer(
  buildDir: string,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [path.join(buildDir, 'src', 'main.js')], {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: process.env.TEST_DATABASE_URL!,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ADMIN_PASSWORD,
      JOBS_WORKERS: '0',
      RATE_LIMITS: 'off',
      ...env,
    },
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no 'listening' in 90 s:\n${output}`)), 90_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const lines = output.split('\n');
      const line = lines.find((l) => l.includes('"msg":"listening"'));
      // Ready once warmed up (src/app.ts `warmUp`): /readyz/ answers 200 from then on.
      if (line && lines.some((l) => l.includes('"msg":"warmed up"'))) {
        clearTimeout(timer);
        resolve({ child, port: (JSON.parse(line) as { port: number }).port });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}:\n${output.slice(-2000)}`));
    });
  });
}

/** Kills a process (SIGKILL unless told) and waits until it has exited. */
export async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A kill test's world, set up before the file's tests and removed after them: an in-process app
 * that only queues and reads (no workers), and the server built apart to run as the worker that
 * does the background work and gets killed.
 */
export interface WorkerWorld {
  /** The queue-only app on the test database. */
  readonly app: TestApp;
  /** The data folder the app and the worker share. */
  readonly dataDir: string;
  /**
   * Starts a worker, with `env` over its settings (the one running is stopped by `kill` or
   * `finish`).
   */
  start(env?: Record<string, string>): Promise<void>;
  /** Where the worker started last serves `/metrics` (started with `METRICS_PORT`). */
  metricsPort(): number | undefined;
  /** SIGKILLs the worker and waits until it has exited. */
  kill(): Promise<void>;
  /** Stops the worker gently (SIGTERM), at the end of a test. */
  finish(): Promise<void>;
  /** What the worker started last has logged since its job queue started. */
  output(): string;
}

export function workerWorld(name: string): WorkerWorld {
  let app: TestApp | undefined;
  let buildDir: string | undefined;
  let dataDir: string | undefined;
  let child: ChildProcess | undefined;
  let metricsPort: number | undefined;
  let output = '';
  beforeAll(async () => {
    buildDir = buildServer();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`));
    app = await createTestApp({ DATA_DIR: dataDir, JOBS_WORKERS: '0' });
  }, 240_000);
  afterAll(async () => {
    if (child) await stop(child);
    await app?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    get app() {
      return app!;
    },
    get dataDir() {
      return dataDir!;
    },
    start: async (env = {}) => {
      ({ child, metricsPort } = await startWorker(buildDir!, dataDir!, env));
      output = '';
      const collect = (chunk: Buffer): void => {
        output += chunk.toString();
      };
      child.stdout?.on('data', collect);
      child.stderr?.on('data', collect);
    },
    output: () => output,
    metricsPort: () => metricsPort,
    kill: async () => stop(child!),
    finish: async () => stop(child!, 'SIGTERM'),
  };
}

/**
 * A source with one concept and a version `v1` whose export the queue-only app has queued (it
 * answers 208: the app runs no tasks, so a worker must take it).
 */
export async function queuedExport(app: TestApp): Promise<TestSource> {
  const source = await createSource(app);
  await createConcept(app, source.url, source.owner, { id: 'A' });
  await createVersion(app, source.url, source.owner, 'v1');
  const queued = await request(app.app).get(`${source.url}v1/export/`);
  expect(queued.status).toBe(208);
  return source;
}

/** The status `v1/export/` answers once it stops answering 208 (or after 20 s). */
export async function exportStatus(app: TestApp, source: TestSource): Promise<number> {
  let status = 208;
  for (let i = 0; i < 100 && status === 208; i += 1) {
    await sleep(200);
    status = (await request(app.app).get(`${source.url}v1/export/`)).status;
  }
  return status;
}
