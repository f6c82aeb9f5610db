import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { generateDictionary } from './generate';
import {
  ADMIN_PASSWORD,
  ADMIN_USERNAME,
  cpuSecondsOf,
  envInt,
  login,
  percentile,
  print,
  printColumns,
  printMachine,
  request,
  startBenchServer,
  type BenchServer,
} from './harness';

/**
 * Exports and synchronization at CIEL scale (issue 13 part 5): the automatic export of a new
 * version of the 60,000-concept source (zip written by the server's background task from
 * cursors), with the server process's peak memory; against the raw database reading the same
 * rows through a cursor. Then a synchronization read of 1,000 changes (`updatedSince`), plain
 * and `Compress: true`, against the raw database selecting those rows.
 */
export const title = 'Export of a CIEL-scale version and a sync read of 1,000 changes';

const ORG = 'CIEL-BENCH';
const SOURCE_PATH = `/orgs/${ORG}/sources/CIEL/`;
const EXPORT_TARGET_SECONDS = 20;
const RSS_TARGET_MB = 300;
const CHANGES = 1000;

/** The raw baseline of the export: every row of the version through a cursor, as JSON text. */
const RAW_ROWS = (table: string) => `
  SELECT to_json(x) AS row FROM ${table} x
  WHERE x.repository_id = $1 AND x.valid_from_seq <= $2
    AND (x.valid_to_seq IS NULL OR x.valid_to_seq > $2)
  ORDER BY x.mnemonic, x.id`;

export async function run(): Promise<void> {
  const sizes = {
    concepts: envInt('BENCH_CONCEPTS', 60_000, 1),
    otherConcepts: envInt('BENCH_OTHER_CONCEPTS', 20_000, 0),
    mappings: envInt('BENCH_MAPPINGS', 500_000, 0),
    seed: envInt('BENCH_SEED', 20_251_121, 0),
  };
  const server = await startBenchServer();
  try {
    printMachine(server);
    print(`database:   ${server.database}`);
    const dict = await generateDictionary(server.databaseUrl, {
      ...sizes,
      org: ORG,
      username: ADMIN_USERNAME,
      log: print,
    });
    const main = dict.sources[0];
    print(
      `dataset:    ${main.activeConcepts.toLocaleString('en-US')} active concepts and ` +
        `${main.activeMappings.toLocaleString('en-US')} active mappings in CIEL (bench/generate.ts)`,
    );
    const token = await login(server, ADMIN_USERNAME, ADMIN_PASSWORD);
    await exportBenchmark(server, token);
    await syncBenchmark(
      server,
      token,
      dict.concepts.map((c) => c.id),
    );
  } finally {
    await server.stop();
  }
}

/** Resident set size now and at its peak (VmHWM), in MB. */
function memory(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

async function exportBenchmark(server: BenchServer, token: string): Promise<void> {
  const pid = server.pid;
  const before = memory(pid);
  // Reset the peak so that it is the export's (Linux: writing 5 to clear_refs resets VmHWM).
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // not permitted: the peak then covers the server's whole life
  }
  const cpuBefore = cpuSecondsOfOne(pid);
  // PostgreSQL's side of the export: the CPU of the walk's own connection (`registry-walk`),
  // sampled at each poll (its last sample before it ends; a poll every 100 ms).
  const watch = new Client({ connectionString: server.databaseUrl });
  await watch.connect();
  const walkCpu = new Map<number, number>();
  const sampleWalks = async (): Promise<void> => {
    const { rows } = await watch.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE application_name = 'registry-walk'`,
    );
    for (const { pid: backend } of rows) {
      try {
        walkCpu.set(backend, cpuSecondsOfOne(backend));
      } catch {
        // ended meanwhile: its last sample stands
      }
    }
  };
  const started = performance.now();
  await request(server, 'POST', `${SOURCE_PATH}versions/`, {
    token,
    body: { id: 'bench-v1', released: true },
    status: 201,
  });
  let status = 0;
  let peak = 0;
  while (status !== 200) {
    const res = await fetch(`${server.url}${SOURCE_PATH}bench-v1/export/`, { method: 'HEAD' });
    status = res.status;
    peak = Math.max(peak, memory(pid).peak);
    await sampleWalks();
    if (status !== 200 && status !== 208) throw new Error(`export answered ${status}`);
    if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await watch.end();
  const walkSeconds = [...walkCpu.values()].reduce((sum, seconds) => sum + seconds, 0);
  const wall = (performance.now() - started) / 1000;
  const cpu = cpuSecondsOfOne(pid) - cpuBefore;
  const after = memory(pid);
  peak = Math.max(peak, after.peak);

  const db = new Client({ connectionString: server.databaseUrl });
  await db.connect();
  let rawSeconds = 0;
  let rawBytes = 0;
  let rawCpu = { client: 0, postgres: 0 };
  let task: { seconds: number; size: number } | undefined;
  try {
    const [row] = (
      await db.query<{ id: string; seq: string; seconds: number; size: string }>(
        `SELECT r.id::text AS id, v.seq::text AS seq, e.size::text AS size,
           extract(epoch FROM (t.finished_at - t.started_at))::float8 AS seconds
         FROM repositories r JOIN repository_versions v ON v.repository_id = r.id
         JOIN repository_exports e ON e.version_id = v.id JOIN tasks t ON t.id = e.task_id
         WHERE r.mnemonic = 'CIEL' AND v.mnemonic = 'bench-v1'`,
      )
    ).rows;
    task = { seconds: row.seconds, size: Number(row.size) };
    const [{ pid: rawPid }] = (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))
      .rows;
    const rawPgBefore = cpuSecondsOfOne(rawPid);
    const rawClientBefore = process.cpuUsage();
    const rawStart = performance.now();
    await db.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    for (const table of ['concept_versions', 'mapping_versions']) {
      await db.query(`DECLARE raw CURSOR FOR ${RAW_ROWS(table)}`, [row.id, row.seq]);
      for (;;) {
        const { rows } = await db.query<{ row: unknown }>('FETCH 1000 FROM raw');
        for (const r of rows) rawBytes += JSON.stringify(r.row).length;
        if (rows.length < 1000) break;
      }
      await db.query('CLOSE raw');
    }
    await db.query('ROLLBACK');
    rawSeconds = (performance.now() - rawStart) / 1000;
    const client = process.cpuUsage(rawClientBefore);
    rawCpu = {
      client: (client.user + client.system) / 1e6,
      postgres: cpuSecondsOfOne(rawPid) - rawPgBefore,
    };
  } finally {
    await db.end();
  }
  print('');
  print('(a) export of a new version of CIEL (POST …/versions/ → HEAD …/bench-v1/export/ is 200)');
  printColumns(
    ['figure', 'value', 'target'],
    [
      ['request to ready, wall s', wall.toFixed(1), `≤ ${EXPORT_TARGET_SECONDS}`],
      ['the task alone (started → finished), s', task.seconds.toFixed(1), ''],
      ['zip size, MB', (task.size / 1024 / 1024).toFixed(1), ''],
      ['server RSS before / after, MB', `${before.rss.toFixed(0)} / ${after.rss.toFixed(0)}`, ''],
      ['server peak RSS during the export, MB', peak.toFixed(0), `≤ ${RSS_TARGET_MB}`],
      ['server CPU s (version, export, polls)', cpu.toFixed(1), ''],
      ["PostgreSQL CPU s of the export's cursors (registry-walk)", walkSeconds.toFixed(1), ''],
      [
        'raw DB: the same rows through a cursor as JSON, s',
        `${rawSeconds.toFixed(1)} (${(rawBytes / 1024 / 1024).toFixed(0)} MB of JSON)`,
        '',
      ],
      [
        'raw DB CPU s: client (parse, stringify) / PostgreSQL',
        `${rawCpu.client.toFixed(1)} / ${rawCpu.postgres.toFixed(1)}`,
        '',
      ],
      ['task / raw', (task.seconds / rawSeconds).toFixed(1), ''],
    ],
  );
}

async function syncBenchmark(server: BenchServer, token: string, codes: string[]): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const since = new Date().toISOString();
  // 1,000 changes through the API (edits), spread over the source.
  const step = Math.max(1, Math.floor(codes.length / CHANGES));
  for (let i = 0; i < CHANGES; i += 1) {
    const code = encodeURIComponent(codes[(i * step) % codes.length]);
    await request(server, 'PATCH', `${SOURCE_PATH}concepts/${code}/`, {
      token,
      body: { external_id: `sync-${i}` },
    });
  }
  const query =
    `${SOURCE_PATH}?includeConcepts=true&includeMappings=true&includeRetired=true` +
    `&limit=0&updatedSince=${since}`;
  const runs = envInt('BENCH_SYNC_RUNS', 10, 1);
  const time = async (
    compress: boolean,
  ): Promise<{ p50: number; items: number; bytes: number }> => {
    const times: number[] = [];
    let items = 0;
    let bytes = 0;
    for (let i = 0; i < runs + 2; i += 1) {
      const started = performance.now();
      const res = await fetch(server.url + query, {
        headers: { Authorization: `Token ${token}`, ...(compress ? { Compress: 'true' } : {}) },
      });
      const body = Buffer.from(await res.arrayBuffer());
      if (res.status !== 200) throw new Error(`sync read answered ${res.status}`);
      if (i >= 2) times.push(performance.now() - started);
      bytes = body.length;
      if (!compress)
        items = (JSON.parse(body.toString()) as { concepts: unknown[] }).concepts.length;
    }
    return { p50: percentile(times, 0.5), items, bytes };
  };
  const plain = await time(false);
  const zipped = await time(true);
  const db = new Client({ connectionString: server.databaseUrl });
  await db.connect();
  const raw: number[] = [];
  try {
    for (let i = 0; i < runs + 2; i += 1) {
      const started = performance.now();
      await db.query(
        `SELECT to_json(x) FROM concept_versions x JOIN repositories r ON r.id = x.repository_id
         WHERE r.mnemonic = 'CIEL' AND x.valid_to_seq IS NULL AND x.created_at >= $1
         ORDER BY x.mnemonic, x.id`,
        [since],
      );
      await db.query(
        `SELECT to_json(x) FROM mapping_versions x JOIN repositories r ON r.id = x.repository_id
         WHERE r.mnemonic = 'CIEL' AND x.valid_to_seq IS NULL AND x.created_at >= $1`,
        [since],
      );
      if (i >= 2) raw.push(performance.now() - started);
    }
  } finally {
    await db.end();
  }
  print('');
  print(
    `(b) sync read of ${CHANGES.toLocaleString('en-US')} changes (updatedSince, limit=0), ${runs} runs`,
  );
  printColumns(
    ['request', 'p50 ms', 'items', 'bytes', 'raw DB p50 ms', 'vs raw'],
    [
      [
        'JSON',
        plain.p50.toFixed(0),
        String(plain.items),
        String(plain.bytes),
        percentile(raw, 0.5).toFixed(0),
        (plain.p50 / percentile(raw, 0.5)).toFixed(1),
      ],
      [
        'Compress: true (zip)',
        zipped.p50.toFixed(0),
        String(plain.items),
        String(zipped.bytes),
        percentile(raw, 0.5).toFixed(0),
        (zipped.p50 / percentile(raw, 0.5)).toFixed(1),
      ],
    ],
  );
}

/** CPU seconds one process has used (utime + stime). */
function cpuSecondsOfOne(pid: number): number {
  const seconds = cpuSecondsOf([pid]);
  if (seconds === null) throw new Error(`Process ${pid} is gone.`);
  return seconds;
}
