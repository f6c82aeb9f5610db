import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SingleBar } from 'cli-progress';
import Table from 'cli-table3';
import type { LineFailure } from '../src/services';

/** What `npm run import -- FILE --url … --token …` is asked to do. */
export interface ImportOptions {
  file: string;
  /** The registry's base URL, e.g. `https://registry.example.org`. */
  url: string;
  token: string;
  /** `json` (JSON lines) or `csv`; by the file name when absent. */
  format?: string;
  queue?: string;
  updateIfExists: boolean;
  /** How often the task is read, in milliseconds. */
  pollMs: number;
}

interface Status {
  id: string;
  state: string;
  error: string | null;
  progress: { done: number; total: number | null };
  report:
    | (Record<string, unknown> & {
        failures?: LineFailure[];
      })
    | null;
}

const COUNTS = [
  'total',
  'processed',
  'created',
  'updated',
  'unchanged',
  'deleted',
  'exists',
  'not_found',
  'invalid',
  'permission_denied',
  'failed',
  'elapsed_seconds',
] as const;
/** The failed lines the summary lists (the report holds them all). */
const FAILURES_SHOWN = 20;

const USAGE = `Usage: npm run import -- FILE --url URL --token TOKEN [--format json|csv] [--queue NAME] [--no-update]

Uploads FILE (OCL JSON lines, or CSV of concepts and mappings) to URL/importers/bulk-import/,
shows the import's progress and prints its report. Exit status 0 when it finished, 1 otherwise.`;

/**
 * Runs one import against a registry: uploads the file, follows the task with a progress bar
 * (on `out`), prints the summary table and the first failed lines; answers the final status.
 */
export async function runImport(
  options: ImportOptions,
  out: NodeJS.WritableStream,
): Promise<Status> {
  const base = options.url.replace(/\/+$/, '');
  const headers = { Authorization: `Token ${options.token}` };
  const format = options.format ?? (/\.csv$/i.test(options.file) ? 'csv' : 'json');
  const query = new URLSearchParams({ format, update_if_exists: String(options.updateIfExists) });
  const queue = options.queue ? `${encodeURIComponent(options.queue)}/` : '';
  const started = await fetch(`${base}/importers/bulk-import/${queue}?${query.toString()}`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': format === 'csv' ? 'text/csv' : 'application/x-ndjson' },
    body: fs.readFileSync(options.file),
  });
  const task = (await started.json()) as { id?: string; message?: string };
  if (started.status !== 202 || !task.id) {
    throw new Error(`The registry refused the import (${started.status}): ${task.message ?? ''}`);
  }
  out.write(`Import of ${path.basename(options.file)} queued as task ${task.id}\n`);
  const bar = new SingleBar({
    stream: out,
    format: ' {bar} {percentage}% | {value}/{total} lines | {duration}s',
    noTTYOutput: true,
  });
  bar.start(1, 0);
  let status: Status;
  for (;;) {
    const res = await fetch(`${base}/importers/bulk-import/?task=${task.id}`, { headers });
    if (res.status !== 200) throw new Error(`Reading the import failed (${res.status}).`);
    status = (await res.json()) as Status;
    bar.setTotal(Math.max(1, status.progress.total ?? 1));
    bar.update(status.progress.done);
    if (status.state === 'SUCCESS' || status.state === 'FAILURE') break;
    await new Promise((resolve) => setTimeout(resolve, options.pollMs));
  }
  bar.stop();
  out.write(`${summaryOf(status)}\n`);
  return status;
}

/** The report as tables: the counts, then the first failed lines with their reasons. */
export function summaryOf(status: Status): string {
  const counts = new Table({ head: ['', 'lines'] });
  counts.push(['state', status.state]);
  for (const key of COUNTS) counts.push([key, JSON.stringify(status.report?.[key] ?? 0)]);
  const parts = [counts.toString()];
  if (status.error) parts.push(`Error: ${status.error}`);
  const failures = status.report?.failures ?? [];
  if (failures.length > 0) {
    const table = new Table({
      head: ['line', 'type', 'id', 'outcome', 'reason'],
      colWidths: [8, 14, 16, 18, 60],
      wordWrap: true,
    });
    for (const f of failures.slice(0, FAILURES_SHOWN)) {
      table.push([f.line, f.type ?? '', f.id ?? '', f.outcome, f.reason]);
    }
    parts.push(table.toString());
    if (failures.length > FAILURES_SHOWN) {
      parts.push(
        `… and ${failures.length - FAILURES_SHOWN} more (GET /importers/bulk-import/?task=${status.id}).`,
      );
    }
  }
  return parts.join('\n');
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      format: { type: 'string' },
      queue: { type: 'string' },
      'no-update': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const file = positionals[0];
  if (values.help || !file || !values.url || !values.token) {
    process.stderr.write(`${USAGE}\n`);
    process.exitCode = values.help ? 0 : 2;
    return;
  }
  const status = await runImport(
    {
      file,
      url: values.url,
      token: values.token,
      format: values.format,
      queue: values.queue,
      updateIfExists: !values['no-update'],
      pollMs: 1000,
    },
    process.stdout,
  );
  process.exitCode = status.state === 'SUCCESS' ? 0 : 1;
}

if (require.main === module) {
  main().catch((error: Error) => {
    process.stderr.write(`${error.message}\n`);
    process.exitCode = 1;
  });
}
