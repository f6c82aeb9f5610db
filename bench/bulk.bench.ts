import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { writeJsonLines } from './generate';
import {
  ADMIN_PASSWORD,
  ADMIN_USERNAME,
  cpuMeter,
  envInt,
  login,
  print,
  printMachine,
  startBenchServer,
  type CpuUse,
} from './harness';

export const title = 'Bulk import of a CIEL-scale dictionary (JSON lines) against raw COPY';

/** The tables an import fills, with the rows of the imported org's sources. */
const TABLES = [
  { table: 'concepts', where: 'repository_id = ANY($1)' },
  { table: 'concept_versions', where: 'repository_id = ANY($1)' },
  { table: 'mappings', where: 'repository_id = ANY($1)' },
  { table: 'mapping_versions', where: 'repository_id = ANY($1)' },
];

/**
 * Writes the dataset as JSON lines (`writeJsonLines`), POSTs it to `/importers/bulk-import/` of
 * a registry in its own process and follows the task to its end: the import's time, its rows/s
 * and the CPU each party spent. The baseline is raw PostgreSQL `COPY` of exactly the rows the
 * import wrote into tables of the same definition and indexes (`LIKE … INCLUDING ALL`). Then the
 * same file again: everything `unchanged`, nothing written.
 *
 * BENCH_CONCEPTS (60,000) and BENCH_MAPPINGS (500,000) size the dataset; BENCH_REIMPORT=0 skips
 * the second import.
 */
export async function run(): Promise<void> {
  const concepts = envInt('BENCH_CONCEPTS', 60_000, 1);
  const mappings = envInt('BENCH_MAPPINGS', 500_000, 0);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulk-bench-'));
  fs.chmodSync(dir, 0o777); // the server-side COPY runs as the database's user
  const server = await startBenchServer();
  try {
    printMachine(server);
    print(`database:   ${server.database}`);
    const generated = performance.now();
    const dataset = await writeJsonLines(path.join(dir, 'ciel.jsonl'), { concepts, mappings });
    print(
      `dataset:    ${dataset.lines.toLocaleString('en-US')} JSON lines (${dataset.concepts.toLocaleString('en-US')} concepts, ` +
        `${dataset.mappings.toLocaleString('en-US')} mappings), ${(dataset.bytes / 1e6).toFixed(0)} MB, ` +
        `written in ${((performance.now() - generated) / 1000).toFixed(1)} s`,
    );
    const token = await login(server, ADMIN_USERNAME, ADMIN_PASSWORD);
    const first = await importFile(server.url, token, dataset.file);
    const db = new Client({ connectionString: server.databaseUrl });
    await db.connect();
    try {
      const repositories = (
        await db.query<{ id: string }>(
          `SELECT r.id::text FROM repositories r JOIN organizations o ON o.id = r.owner_org_id
           WHERE o.mnemonic = $1`,
          [dataset.org],
        )
      ).rows.map((r) => r.id);
      const copy = await rawCopy(db, dir, repositories);
      const rate = (rows: number, seconds: number): string =>
        `${Math.round(rows / seconds).toLocaleString('en-US')} rows/s`;
      print('');
      print(
        `import:     ${first.report.created} created, ${first.report.invalid} invalid, ${first.report.failed} failed of ${first.report.total} lines`,
      );
      print(
        `            ${copy.rows.toLocaleString('en-US')} rows in ${first.seconds.toFixed(1)} s ` +
          `(${rate(copy.rows, first.seconds)}); CPU ${cpuLine(first.cpu)}`,
      );
      print(
        `raw COPY:   the same rows in ${copy.seconds.toFixed(1)} s (${rate(copy.rows, copy.seconds)}); CPU ${cpuLine(copy.cpu)}`,
      );
      print(
        `ratio:      the import runs at ${((100 * copy.seconds) / first.seconds).toFixed(0)}% of raw COPY's rate ` +
          `(targets: import ≤ 90 s, ≥ 25% of COPY)`,
      );
      if (envInt('BENCH_REIMPORT', 1, 0) === 0) return;
      const again = await importFile(server.url, token, dataset.file);
      print(
        `re-import:  ${again.seconds.toFixed(1)} s, ${again.report.unchanged} unchanged, ` +
          `${again.report.created} created, ${again.report.updated} updated; CPU ${cpuLine(again.cpu)}`,
      );
    } finally {
      await db.end();
    }
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

interface Imported {
  seconds: number;
  cpu: CpuUse;
  report: {
    total: number;
    created: number;
    unchanged: number;
    updated: number;
    invalid: number;
    failed: number;
  };
}

/** POSTs the file and waits for the task; the time from the upload to the end of the task. */
async function importFile(base: string, token: string, file: string): Promise<Imported> {
  const headers = { Authorization: `Token ${token}` };
  const meter = await cpuMeter();
  const started = performance.now();
  const res = await fetch(`${base}/importers/bulk-import/`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/x-ndjson' },
    body: fs.readFileSync(file),
  });
  const task = (await res.json()) as { id: string };
  if (res.status !== 202)
    throw new Error(`The import was refused: ${res.status} ${JSON.stringify(task)}`);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const status = (await (
      await fetch(`${base}/importers/bulk-import/?task=${task.id}`, { headers })
    ).json()) as { state: string; error: string | null; report: Imported['report'] };
    if (status.state === 'FAILURE') throw new Error(`The import failed: ${status.error}`);
    if (status.state === 'SUCCESS') {
      const seconds = (performance.now() - started) / 1000;
      return { seconds, cpu: await meter(), report: status.report };
    }
  }
}

/** COPY of the rows the import wrote, out to files and into copies of their tables. */
async function rawCopy(
  db: Client,
  dir: string,
  repositories: string[],
): Promise<{ seconds: number; rows: number; cpu: CpuUse }> {
  let rows = 0;
  // The stored columns: those PostgreSQL generates (`name_locales`) it computes in the copy too.
  const columns = new Map<string, string>();
  for (const { table, where } of TABLES) {
    const file = path.join(dir, `${table}.copy`);
    const ids = `'{${repositories.join(',')}}'::bigint[]`;
    const { rows: listed } = await db.query<{ list: string }>(
      `SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) AS list FROM pg_attribute
       WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = ''`,
      [table],
    );
    columns.set(table, listed[0].list);
    const out = await db.query(
      `COPY (SELECT ${listed[0].list} FROM ${table} WHERE ${where.replace('$1', ids)}) TO '${file}'`,
    );
    rows += out.rowCount ?? 0;
    await db.query(`DROP TABLE IF EXISTS bench_copy_${table}`);
    await db.query(`CREATE TABLE bench_copy_${table} (LIKE ${table} INCLUDING ALL)`);
  }
  const meter = await cpuMeter();
  const started = performance.now();
  for (const { table } of TABLES) {
    await db.query(
      `COPY bench_copy_${table} (${columns.get(table)}) FROM '${path.join(dir, `${table}.copy`)}'`,
    );
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = await meter();
  for (const { table } of TABLES) await db.query(`DROP TABLE bench_copy_${table}`);
  return { seconds, rows, cpu };
}

function cpuLine(cpu: CpuUse): string {
  const s = (value: number | null): string => (value === null ? '?' : `${value.toFixed(1)} s`);
  return `client ${s(cpu.client)}, server ${s(cpu.server)}, postgres ${s(cpu.postgres)}`;
}
