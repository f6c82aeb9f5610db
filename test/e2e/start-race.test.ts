import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { Client } from 'pg';
import { buildServer, startServer, stop } from './server-process';

/**
 * Issue 24 defect 1: processes started together on an empty database all come up. Migrations run
 * under an advisory lock, so the first migrates while the others wait and then find nothing left
 * to apply (before, all but one died on a duplicate extension or table).
 */
let buildDir: string;
let databaseUrl: string;
let admin: Client;
const database = `start_race_${crypto.randomBytes(4).toString('hex')}`;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  buildDir = buildServer();
  const testUrl = new URL(process.env.TEST_DATABASE_URL!);
  const adminUrl = new URL(testUrl);
  adminUrl.pathname = '/postgres';
  admin = new Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(testUrl);
  url.pathname = `/${database}`;
  databaseUrl = url.toString();
}, 180_000);

afterAll(async () => {
  for (const child of children) await stop(child);
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
});

/** Starts the built server on the empty database; its port once it listens, or its output. */
async function start(): Promise<{ port: number } | { failed: string }> {
  try {
    const { child, port } = await startServer(buildDir, {
      DATABASE_URL: databaseUrl,
      DB_POOL_SIZE: '2',
    });
    children.add(child);
    return { port };
  } catch (error) {
    return { failed: String(error) };
  }
}

it('three processes started at once on an empty database all migrate and serve', async () => {
  const started = await Promise.all([start(), start(), start()]);
  const failures = started.flatMap((s) => ('failed' in s ? [s.failed] : []));
  expect(failures).toEqual([]);
  for (const s of started) {
    const res = await fetch(`http://127.0.0.1:${(s as { port: number }).port}/healthz/`);
    expect(res.status).toBe(200);
  }
  const { rows } = await admin.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_database WHERE datname = $1`,
    [database],
  );
  expect(rows[0].n).toBe(1);
}, 150_000);
