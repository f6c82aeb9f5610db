import autocannon from 'autocannon';
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { DataSource, type Logger as TypeOrmLogger } from 'typeorm';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded-postgres';
import { SESSION_OPTIONS, withSessionSettings } from '../src/db/data-source';
import { entities } from '../src/db/entities';
import { createLogger } from '../src/logger';
import {
  ANONYMOUS,
  createMailer,
  Services,
  type ServiceContext,
  type ServiceOptions,
} from '../src/services';
import {
  STACK_FLOORS,
  type FloorPorts,
  type FloorRoute,
  type FloorSetup,
  type StackFloor,
} from './floor';

/** Shared pieces of the benchmarks: a server to measure, two load runners, the printout. */

export const ADMIN_USERNAME = 'ocladmin';
export const ADMIN_PASSWORD = 'bench-password';
/** The server's connection pool (createDataSource's default); raw-database runs use the same. */
export const APP_POOL_SIZE = 10;

export interface BenchParams {
  /** Concurrent clients: HTTP connections, or loops sharing the raw pool. */
  connections: number;
  /** Length of each measured run. */
  seconds: number;
  /** Unmeasured load before each run. */
  warmupSeconds: number;
}

export function benchParams(): BenchParams {
  return {
    connections: envInt('BENCH_CONNECTIONS', 16, 1),
    seconds: envInt('BENCH_SECONDS', 10, 1),
    warmupSeconds: envInt('BENCH_WARMUP_SECONDS', 2, 0),
  };
}

export function envInt(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${name} must be an integer ≥ ${min}, not '${raw}'.`);
  return value;
}

// ---------------------------------------------------------------------------------------------
// The server under test

export interface BenchServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The server process's pid (its CPU and memory are read from `/proc`). */
  pid: number;
  /** The database the server uses, for the raw-database runs. */
  databaseUrl: string;
  /** Where that database came from, for the printout. */
  database: string;
  postgresVersion: string;
  stop(): Promise<void>;
}

/**
 * A migrated database (BENCH_DATABASE_URL, or an embedded Postgres in a fresh temp folder) and
 * the registry serving it from a child process (`server.ts`), with the bootstrap admin in place;
 * `env` adds to the server's environment (e.g. `JOBS_WORKERS: '0'`: no task runs in it).
 */
export async function startBenchServer(env: Record<string, string> = {}): Promise<BenchServer> {
  const db = await openBenchDatabase();
  try {
    const server = await forkServer(db.url, env);
    benchPostmaster = await postmasterOf(db.url);
    return {
      url: `http://127.0.0.1:${server.port}`,
      pid: server.pid,
      // The raw database's sessions plan as the registry's do.
      databaseUrl: withSessionSettings(db.url),
      database: db.description,
      postgresVersion: await postgresVersion(db.url),
      stop: async () => {
        await server.stop();
        await db.close();
      },
    };
  } catch (error) {
    await db.close();
    throw error;
  }
}

interface BenchDatabase {
  url: string;
  description: string;
  close(): Promise<void>;
}

async function openBenchDatabase(): Promise<BenchDatabase> {
  const external = process.env.BENCH_DATABASE_URL;
  if (external) {
    return { url: external, description: 'BENCH_DATABASE_URL', close: async () => undefined };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-bench-'));
  fs.chmodSync(dir, 0o755); // Postgres runs as the `postgres` user when we are root
  const removeDir = (): void => fs.rmSync(dir, { recursive: true, force: true });
  let pg: EmbeddedPostgres;
  try {
    pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg') });
  } catch (error) {
    removeDir();
    throw error;
  }
  const close = async (): Promise<void> => {
    await pg.stop();
    removeDir();
  };
  try {
    const admin = new Client({ connectionString: pg.url });
    await admin.connect();
    await admin.query('CREATE DATABASE registry_bench');
    await admin.end();
  } catch (error) {
    await close();
    throw error;
  }
  return {
    url: pg.url.replace(/\/postgres$/, '/registry_bench'),
    description: `embedded, in ${dir}`,
    close,
  };
}

/**
 * Rate limits stay on, so that what counting costs is part of every figure, but so high that the
 * load is never refused (the environment may set others, or `RATE_LIMITS=off`).
 */
const BENCH_RATE_LIMITS = {
  RATE_LIMIT_ANON_PER_MINUTE: '1000000000',
  RATE_LIMIT_ANON_PER_DAY: '1000000000',
  RATE_LIMIT_USER_PER_MINUTE: '1000000000',
  RATE_LIMIT_USER_PER_DAY: '1000000000',
};

/**
 * The running benchmark server processes, whose CPU time each run counts (`CpuUse.server` sums
 * them), and the balancer in front of them when a benchmark runs one (`CpuUse.balancer`).
 */
const serverPids = new Set<number>();
let balancerPid: number | null = null;

/** A registry process serving `databaseUrl` (`server.ts`), migrated and listening. */
export interface ServerProcess {
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Forks a registry process on `databaseUrl`. Several may serve one database (the two-process
 * benchmark); every one is counted in `CpuUse.server` until stopped.
 */
export async function forkServer(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  // BENCH_SERVER_PROFILE=DIR: the server writes a V8 CPU profile of its whole run into DIR.
  const profile = process.env.BENCH_SERVER_PROFILE;
  const child = fork(path.join(__dirname, 'server.js'), [], {
    execArgv: profile ? ['--cpu-prof', '--cpu-prof-dir', profile] : [],
    // Production mode, as the Docker image runs (graphql-js skips its development checks).
    env: {
      ...BENCH_RATE_LIMITS,
      NODE_ENV: 'production',
      ...process.env,
      ...env,
      DATABASE_URL: databaseUrl,
      ADMIN_PASSWORD,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await portOf(child, 'The benchmark server');
  const pid = child.pid!;
  serverPids.add(pid);
  return {
    port,
    pid,
    stop: async () => {
      serverPids.delete(pid);
      await stopChild(child);
    },
  };
}

/**
 * A TCP balancer (`balancer.ts`, its own process) handing each new connection to the next of
 * `ports` in turn, as a load balancer in front of API replicas does; counted in
 * `CpuUse.balancer` until stopped.
 */
export async function forkBalancer(
  ports: number[],
): Promise<{ url: string; stop(): Promise<void> }> {
  const child = fork(path.join(__dirname, 'balancer.js'), ports.map(String), {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await portOf(child, 'The balancer');
  balancerPid = child.pid!;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      balancerPid = null;
      await stopChild(child);
    },
  };
}

/**
 * The floor (`floor.ts`) for `paths`, in a process of its own: Node's HTTP server and a
 * `pg.Pool` sending, per path, the statements `statementsOf(path)` answers (those the registry
 * sends for it, recorded in process) and writing the registry's own answer to it, fetched here
 * from `server` with `headers`.
 */
export async function forkFloor(
  server: BenchServer,
  paths: string[],
  headers: Record<string, string>,
  statementsOf: (path: string) => Promise<Statement[]>,
  /** How each path is asked of the registry (the floor answers by path alone); GET by default. */
  init: (path: string) => RequestInit = () => ({}),
): Promise<Floor> {
  const routes: Record<string, FloorRoute> = {};
  for (const path of paths) {
    const asked = init(path);
    const res = await fetch(server.url + path, {
      ...asked,
      headers: { ...headers, ...(asked.headers as Record<string, string> | undefined) },
    });
    const kept: Record<string, string> = {};
    res.headers.forEach((value, name) => {
      if (!FLOOR_DROPPED_HEADERS.has(name)) kept[name] = value;
    });
    routes[path] = {
      statements: await statementsOf(path),
      status: res.status,
      headers: kept,
      body: await res.text(),
    };
  }
  const child = fork(path.join(__dirname, 'floor.js'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const setup: FloorSetup = { databaseUrl: server.databaseUrl, poolSize: APP_POOL_SIZE, routes };
  child.send(setup);
  const ports = await messageOf<FloorPorts>(child, 'The floor');
  const url = (port: number): string => `http://127.0.0.1:${port}`;
  return {
    url: url(ports.port),
    stack: Object.fromEntries(STACK_FLOORS.map((f) => [f, url(ports.stack[f])])) as Floor['stack'],
    pid: child.pid!,
    stop: () => stopChild(child),
  };
}

/** A running floor (`forkFloor`): the registry's statements and bytes, and the stack floors. */
export interface Floor {
  /** `node:http` + `pg.Pool` sending the registry's statements for each path, then its bytes. */
  url: string;
  /** The stack's own floors (`STACK_FLOORS` in `floor.ts`), each serving every recorded path. */
  stack: Record<StackFloor, string>;
  pid: number;
  stop(): Promise<void>;
}

/** What each stack floor is, as the tables print it. */
const STACK_FLOOR_LABELS: Record<StackFloor, string> = {
  'http-memory': 'node:http, bytes from memory',
  'http-text': 'node:http + one prepared query returning the answer as text',
  'express-memory': 'Express, bytes from memory',
  'express-query': 'Express + one prepared query, its JSON parsed and re-serialised',
};

/**
 * Measures the stack's floors on `target` (its paths must be among those the floor recorded) in
 * the same minutes as the registry's own figures, and prints them with the registry's server CPU
 * per request as a ratio to each (issue 27: every figure reads against the stack's own floor).
 */
export async function printStackFloors(
  floor: Floor,
  target: VariedHttpTarget,
  params: BenchParams,
  registry: Array<{ label: string; result: LoadResult }>,
): Promise<void> {
  const cpuOf = (r: LoadResult): number | null =>
    r.cpu?.server == null || r.completed === 0 ? null : (r.cpu.server * 1000) / r.completed;
  const floors: Array<{ label: string; cpu: number | null; rate: number }> = [];
  for (const name of STACK_FLOORS) {
    const label = `floor: ${STACK_FLOOR_LABELS[name]}`;
    const result = await measureHttpVaried(
      { url: floor.stack[name] },
      { ...target, label },
      params,
      [floor.pid],
    );
    floors.push({ label, cpu: cpuOf(result), rate: result.completed / result.seconds });
  }
  const fixed = (value: number | null): string => (value === null ? '–' : value.toFixed(3));
  print('');
  print(`the stack's floors on the same paths, same minutes (server CPU ms per request):`);
  printColumns(
    ['', 'req/s', 'server CPU', ...registry.map((r) => `${r.label} / floor`)],
    floors.map((f) => [
      f.label,
      f.rate.toFixed(0),
      fixed(f.cpu),
      ...registry.map((r) => {
        const own = cpuOf(r.result);
        return own === null || f.cpu === null || f.cpu === 0 ? '–' : `${(own / f.cpu).toFixed(2)}×`;
      }),
    ]),
  );
}

/** Headers Node writes itself (or that describe the connection), not copied into the floor. */
const FLOOR_DROPPED_HEADERS = new Set([
  'connection',
  'content-length',
  'date',
  'keep-alive',
  'transfer-encoding',
]);

/** The port a forked child sends (`{ port }`) once listening; rejects if it exits first. */
async function portOf(child: ChildProcess, name: string): Promise<number> {
  return (await messageOf<{ port: number }>(child, name)).port;
}

/** The first message a forked child sends (once listening); rejects if it exits first. */
function messageOf<T>(child: ChildProcess, name: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const failed = (code: number | null): void =>
      reject(new Error(`${name} exited during start-up (code ${code}).`));
    child.once('exit', failed);
    child.once('message', (message) => {
      child.off('exit', failed);
      resolve(message as T);
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.send({ stop: true });
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

async function postgresVersion(url: string): Promise<string> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    return rows[0].server_version;
  } finally {
    await client.end();
  }
}

/** One request outside the measurements (fixtures, reference answers); returns the body text. */
/**
 * Waits until every background task of the token's user has finished (a version made by a
 * benchmark is exported by a task, which would otherwise share the server's CPU with what is
 * measured); prints how long that took.
 */
export async function settleTasks(
  server: BenchServer,
  token: string,
  options: { quiet?: boolean } = {},
): Promise<number> {
  const started = performance.now();
  for (;;) {
    const body = await request(server, 'GET', '/tasks/?limit=0', { token });
    const tasks = JSON.parse(body) as Array<{ state: string }>;
    if (tasks.every((task) => task.state === 'SUCCESS' || task.state === 'FAILURE')) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const seconds = (performance.now() - started) / 1000;
  if (!options.quiet) print(`background:  tasks settled in ${seconds.toFixed(1)} s`);
  return seconds;
}

export async function request(
  server: BenchServer,
  method: string,
  urlPath: string,
  options: { token?: string; body?: unknown; status?: number } = {},
): Promise<string> {
  const headers: Record<string, string> = {};
  if (options.token) headers.Authorization = `Token ${options.token}`;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(server.url + urlPath, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  const expected = options.status ?? 200;
  if (res.status !== expected) {
    throw new Error(`${method} ${urlPath} answered ${res.status}, expected ${expected}: ${text}`);
  }
  return text;
}

export async function login(
  server: BenchServer,
  username: string,
  password: string,
): Promise<string> {
  const text = await request(server, 'POST', '/users/login/', { body: { username, password } });
  return (JSON.parse(text) as { token: string }).token;
}

// ---------------------------------------------------------------------------------------------
// Load

export interface LoadResult {
  label: string;
  /** Operations that answered as expected. */
  completed: number;
  seconds: number;
  /** Latency of every answered operation, in ms. */
  latencies: number[];
  /** The same latencies by the kind each request named (`VariedHttpTarget` requests only). */
  latenciesByKind?: Map<string, number[]>;
  /** Connection errors, non-2xx answers and unexpected bodies. */
  errors: number;
  /** What went wrong, a few examples. */
  failures: string[];
  /** CPU seconds spent during the measured run, where they could be read. */
  cpu?: CpuUse;
}

/**
 * CPU seconds over a measured run: this process (the HTTP load generator, or the raw-database
 * client), the benchmark server and every Postgres process of this machine. On two shared cores
 * a throughput ratio says little without them: they show what each operation costs each party.
 */
export interface CpuUse {
  client: number;
  /** Every server process of the run, summed. */
  server: number | null;
  postgres: number | null;
  /** The balancer, when the run went through one. */
  balancer: number | null;
}

/** Starts counting CPU time; the returned function stops and answers the use since. */
export async function cpuMeter(servers = [...serverPids]): Promise<() => Promise<CpuUse>> {
  const own = process.cpuUsage();
  const server = cpuSecondsOf(servers);
  const balancer = balancerPid === null ? null : cpuSecondsOf([balancerPid]);
  const postgres = postgresTicks();
  return async () => {
    const ownUsed = process.cpuUsage(own);
    const serverNow = cpuSecondsOf(servers);
    const balancerNow = balancerPid === null ? null : cpuSecondsOf([balancerPid]);
    return {
      client: (ownUsed.user + ownUsed.system) / 1e6,
      server: server === null || serverNow === null ? null : serverNow - server,
      postgres: postgres === null ? null : postgresSecondsSince(postgres),
      balancer: balancer === null || balancerNow === null ? null : balancerNow - balancer,
    };
  };
}

/** CPU seconds the processes have used in all (Linux `/proc`); null when one is gone or unknown. */
export function cpuSecondsOf(pids: number[]): number | null {
  if (pids.length === 0) return null;
  let ticks = 0;
  for (const pid of pids) {
    const stat = statOf(String(pid));
    if (stat === null) return null;
    ticks += stat.ticks;
  }
  return ticks / clockTicksPerSecond();
}

function clockTicksPerSecond(): number {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return clockTicks;
}

let clockTicks: number | undefined;

/** The pid of the benchmark database's postmaster when it runs on this machine (Linux). */
let benchPostmaster: string | null = null;

/** The parent of one of the database's backends (its postmaster), when it runs here. */
async function postmasterOf(url: string): Promise<string | null> {
  if (process.platform !== 'linux') return null;
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    return statOf(String(rows[0].pid))?.ppid ?? null;
  } finally {
    await client.end();
  }
}

/** A process's name, parent and CPU ticks (`/proc/PID/stat`), or null when it is gone. */
function statOf(pid: string): { name: string; ppid: string; ticks: number } | null {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null; // exited meanwhile
  }
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  return {
    name: stat.slice(stat.indexOf('(') + 1, close),
    ppid: fields[1],
    ticks: Number(fields[11]) + Number(fields[12]), // utime, stime
  };
}

/**
 * CPU clock ticks of the benchmark database's processes by pid (Linux `/proc`): its postmaster
 * and children when known (other agents' clusters on a shared machine are not counted), else
 * each process named `postgres`; null elsewhere or when there is none.
 */
function postgresTicks(): Map<string, number> | null {
  if (process.platform !== 'linux') return null;
  const ticks = new Map<string, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = statOf(entry);
    if (!stat || stat.name !== 'postgres') continue;
    if (benchPostmaster && entry !== benchPostmaster && stat.ppid !== benchPostmaster) continue;
    ticks.set(entry, stat.ticks);
  }
  return ticks.size > 0 ? ticks : null;
}

/**
 * Postgres CPU seconds since `before`: what each process that still runs spent since, all of
 * what a process started since spent. (A backend that ended meanwhile, e.g. an idle pooled
 * connection of a party not under load, is left out rather than subtracted.)
 */
function postgresSecondsSince(before: Map<string, number>): number | null {
  const now = postgresTicks();
  if (now === null) return null;
  let ticks = 0;
  for (const [pid, used] of now) ticks += used - (before.get(pid) ?? 0);
  return ticks / clockTicksPerSecond();
}

export interface HttpTarget {
  label: string;
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** The exact body every answer must have (any other status has another body). */
  expectBody: string;
}

/** autocannon against one endpoint: a warm-up, then a measured run. */
export async function measureHttp(
  server: BenchServer,
  target: HttpTarget,
  params: BenchParams,
): Promise<LoadResult> {
  const options: autocannon.Options = {
    url: server.url + target.path,
    method: target.method,
    headers: target.headers,
    body: target.body,
    connections: params.connections,
    expectBody: target.expectBody,
  };
  if (params.warmupSeconds > 0) await cannon({ ...options, duration: params.warmupSeconds });

  const latencies: number[] = [];
  const failures: string[] = [];
  const meter = await cpuMeter();
  const result = await cannon({ ...options, duration: params.seconds }, (instance) => {
    // autocannon's own histogram has 1 ms resolution; keep the exact times instead.
    instance.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
    instance.on('reqError', (error: unknown) => note(failures, String(error)));
    // Not in the typings: the body of an answer that differs from `expectBody`.
    (instance as NodeJS.EventEmitter).on('reqMismatch', (body: string) =>
      note(failures, `unexpected body: ${body}`),
    );
  });
  for (const [status, { count }] of Object.entries(result.statusCodeStats ?? {})) {
    if (status !== '200') failures.unshift(`HTTP ${status} × ${count}`);
  }
  const cpu = await meter();
  // Every answer other than a 200 with the expected body is a mismatch.
  const errors = result.errors + result.mismatches;
  return {
    label: target.label,
    completed: result.requests.total - result.mismatches,
    seconds: result.duration,
    latencies,
    errors,
    failures,
    cpu,
  };
}

/** A GET whose path changes from request to request, each answer checked on its own. */
export interface VariedHttpTarget {
  label: string;
  /** Headers every request sends. */
  headers?: Record<string, string>;
  /**
   * The next request's path, the check of its answer (a problem, or null when right) and the
   * kind of request it is, whose latencies the result keeps apart.
   */
  next(): { path: string; check: (status: number, body: string) => string | null; kind?: string };
}

/** autocannon GETting `target.next()` paths: a warm-up, then a measured run. */
export async function measureHttpVaried(
  server: { url: string },
  target: VariedHttpTarget,
  params: BenchParams,
  /** The server processes whose CPU the run counts (default: every registry process). */
  servers?: number[],
): Promise<LoadResult> {
  type Context = {
    check?: (status: number, body: string) => string | null;
    kind?: string;
    sent?: number;
  };
  const load = async (seconds: number): Promise<LoadResult> => {
    const latencies: number[] = [];
    const latenciesByKind = new Map<string, number[]>();
    const failures: string[] = [];
    let mismatches = 0;
    const requests: autocannon.Request[] = [
      {
        method: 'GET',
        headers: target.headers,
        setupRequest: (req, context) => {
          const next = target.next();
          Object.assign(context as Context, {
            check: next.check,
            kind: next.kind,
            sent: performance.now(),
          });
          return { ...req, path: next.path };
        },
        onResponse: (status, body, context) => {
          const { kind, sent } = context as Context;
          if (kind !== undefined && sent !== undefined) {
            const own = latenciesByKind.get(kind) ?? [];
            own.push(performance.now() - sent);
            latenciesByKind.set(kind, own);
          }
          const problem = (context as Context).check?.(status, body) ?? null;
          if (problem === null) return;
          mismatches += 1;
          note(failures, problem);
        },
      },
    ];
    const options = { url: server.url, connections: params.connections, duration: seconds };
    const meter = await cpuMeter(servers);
    const result = await cannon({ ...options, requests }, (instance) => {
      instance.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
      instance.on('reqError', (error: unknown) => note(failures, String(error)));
    });
    return {
      label: target.label,
      completed: result.requests.total - mismatches,
      seconds: result.duration,
      latencies,
      latenciesByKind,
      errors: result.errors + mismatches,
      failures,
      cpu: await meter(),
    };
  };
  if (params.warmupSeconds > 0) await load(params.warmupSeconds);
  return load(params.seconds);
}

function cannon(
  options: autocannon.Options,
  observe: (instance: autocannon.Instance) => void = () => undefined,
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error: unknown, result) =>
      error
        ? reject(error instanceof Error ? error : new Error('autocannon failed', { cause: error }))
        : resolve(result),
    );
    observe(instance);
  });
}

/**
 * `connections` loops each awaiting `operation` back to back, for the same warm-up and duration
 * as an HTTP run; `operation` throws when the answer is not the expected one.
 */
export async function measureLoop(
  label: string,
  params: BenchParams,
  operation: () => Promise<void>,
): Promise<LoadResult> {
  const loop = async (seconds: number, result: LoadResult): Promise<void> => {
    const deadline = performance.now() + seconds * 1000;
    const worker = async (): Promise<void> => {
      while (performance.now() < deadline) {
        const started = performance.now();
        try {
          await operation();
          result.latencies.push(performance.now() - started);
          result.completed += 1;
        } catch (error) {
          result.errors += 1;
          note(result.failures, error instanceof Error ? error.message : String(error));
        }
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: params.connections }, worker));
    result.seconds = (performance.now() - started) / 1000;
  };
  const empty = (): LoadResult => ({
    label,
    completed: 0,
    seconds: 0,
    latencies: [],
    errors: 0,
    failures: [],
  });
  if (params.warmupSeconds > 0) await loop(params.warmupSeconds, empty());
  const result = empty();
  const meter = await cpuMeter();
  await loop(params.seconds, result);
  result.cpu = await meter();
  return result;
}

function note(failures: string[], message: string): void {
  const short = message.length > 300 ? `${message.slice(0, 300)}…` : message;
  if (failures.length < 3 && !failures.includes(short)) failures.push(short);
}

// ---------------------------------------------------------------------------------------------
// Printing

export function printSetup(server: BenchServer, params: BenchParams, lines: string[]): void {
  printMachine(server);
  print(
    `parameters: ${params.connections} concurrent clients, ${params.seconds} s per run after ` +
      `${params.warmupSeconds} s of warm-up, pool of ${APP_POOL_SIZE} connections (app and raw)`,
  );
  print(`database:   ${server.database}`);
  for (const line of lines) print(line);
  print('');
}

/** The `machine:` line of every benchmark's header. */
export function printMachine(server: BenchServer): void {
  const cpus = os.cpus();
  print(
    `machine:    ${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'}), ` +
      `${os.type()} ${os.release()}, Node ${process.version}, PostgreSQL ${server.postgresVersion}`,
  );
}

/**
 * The table: throughput, latency, errors, each figure against the raw-database one, and the CPU
 * milliseconds one operation cost this process (load generator or raw client), the server and
 * Postgres.
 */
export function printTable(results: LoadResult[], baseline: LoadResult): void {
  const rate = (r: LoadResult): number => r.completed / r.seconds;
  const perOp = (r: LoadResult, seconds: number | null | undefined): string =>
    seconds === null || seconds === undefined || r.completed === 0
      ? '–'
      : ((seconds * 1000) / r.completed).toFixed(3);
  const rows = results.map((r) => [
    r.label,
    rate(r).toFixed(0),
    percentile(r.latencies, 0.5).toFixed(2),
    percentile(r.latencies, 0.99).toFixed(2),
    String(r.errors),
    rate(baseline) > 0 ? `${(rate(r) / rate(baseline)).toFixed(3)}×` : '–',
    perOp(r, r.cpu?.client),
    perOp(r, r.cpu?.server),
    perOp(r, r.cpu?.postgres),
  ]);
  printColumns(
    [
      '',
      'req/s',
      'p50 ms',
      'p99 ms',
      'errors',
      'vs raw DB',
      'CPU ms/op: client',
      'server',
      'Postgres',
    ],
    rows,
  );
  for (const r of results) {
    for (const failure of r.failures) print(`  ! ${r.label}: ${failure}`);
  }
  print('');
}

/** Rows under a header, the first column left-aligned and the others right-aligned. */
export function printColumns(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('   ');
  print(line(header));
  for (const row of rows) print(line(row));
}

/** Nearest-rank percentile; 0 for no samples. */
export function percentile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

export function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

// ---------------------------------------------------------------------------------------------
// The services in this process, to see the statements a call sends

/** An SQL statement as sent, with its parameters. */
export interface Statement {
  sql: string;
  parameters: unknown[];
}

/** The services over their own data source, recording the statements each call sends. */
export interface InProcess {
  /** The statements `work` sends, with their parameters, in order. */
  statementsOf(
    work: (services: Services, ctx: ServiceContext) => Promise<unknown>,
    /** The caller, as an `Authorization` header value; anonymous without. */
    authorization?: string,
  ): Promise<Statement[]>;
  close(): Promise<void>;
}

export async function openInProcess(
  databaseUrl: string,
  options: ServiceOptions = {},
): Promise<InProcess> {
  let captured: Statement[] = [];
  const ignore = (): void => undefined;
  const logger: TypeOrmLogger = {
    logQuery: (sql, parameters) => {
      captured.push({ sql, parameters: Array.isArray(parameters) ? parameters : [] });
    },
    logQueryError: ignore,
    logQuerySlow: ignore,
    logSchemaBuild: ignore,
    logMigration: ignore,
    log: ignore,
  };
  const dataSource = new DataSource({
    type: 'postgres',
    url: databaseUrl,
    entities,
    synchronize: false,
    extra: { max: 2, options: SESSION_OPTIONS },
    logging: ['query'],
    logger,
  });
  await dataSource.initialize();
  const log = createLogger('silent');
  const services = new Services(
    dataSource,
    createMailer({ from: 'bench@localhost' }, log),
    options,
  );
  return {
    statementsOf: async (work, authorization) => {
      const actor = authorization ? await services.auth.authenticate(authorization) : ANONYMOUS;
      captured = [];
      await work(services, services.context(actor, log, 'http://127.0.0.1'));
      const result = captured;
      captured = [];
      return result;
    },
    close: () => dataSource.destroy(),
  };
}
