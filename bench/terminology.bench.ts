import 'reflect-metadata';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { generateDictionary, Random, type GeneratedConcept } from './generate';
import { Pool } from 'pg';
import { parseLanguages } from '../src/services';
import {
  ADMIN_PASSWORD,
  ADMIN_USERNAME,
  APP_POOL_SIZE,
  benchParams,
  envInt,
  forkFloor,
  login,
  measureHttpVaried,
  printStackFloors,
  measureLoop,
  openInProcess,
  print,
  printSetup,
  request,
  settleTasks,
  startBenchServer,
  type BenchServer,
  type LoadResult,
  type Statement,
} from './harness';

/**
 * The terminology core (issue 25 part 1) on one large code system: the first `$lookup` after a
 * source is released and the server started (nothing rendered or cached yet), the server CPU per
 * `$lookup` in the steady state, and how much the server process grows over a few hundred
 * `$lookup` / `$validate-code` calls of different codes.
 */
export const title = 'Terminology core: $lookup and $validate-code on one large code system';

const ORG = 'TERM-BENCH';
const SOURCE = 'CIEL';
const SYSTEM = 'http://bench.example.org/fhir/CodeSystem/term';

export async function run(): Promise<void> {
  const params = benchParams();
  const concepts = envInt('BENCH_TERM_CONCEPTS', 60_000, 100);
  const calls = envInt('BENCH_TERM_CALLS', 400, 10);
  const server = await startBenchServer();
  try {
    printSetup(server, params, [
      `dataset:    org ${ORG}, one generated source ${SOURCE} of ${concepts.toLocaleString('en-US')} ` +
        `concepts (bench/generate.ts, no mappings), canonical URL ${SYSTEM}, released as v1`,
    ]);
    const dict = await generateDictionary(server.databaseUrl, {
      org: ORG,
      username: ADMIN_USERNAME,
      concepts,
      sources: 1,
      mappings: 0,
      log: print,
    });
    const token = await login(server, ADMIN_USERNAME, ADMIN_PASSWORD);
    const source = `/orgs/${ORG}/sources/${SOURCE}/`;
    await request(server, 'PUT', source, { token, body: { canonical_url: SYSTEM } });
    await request(server, 'POST', `${source}versions/`, {
      token,
      body: { id: 'v1', description: 'v1', released: true },
      status: 201,
    });
    await settleTasks(server, token);
    const active = dict.concepts.filter((c) => !c.retired);
    const pid = server.pid;
    const before = rssOf(pid);
    await firstLookup(server, active);
    await growth(server, active, calls, pid, before);
    await steadyState(server, params, sampleOf(active, envInt('BENCH_TERM_SAMPLE', 1_000, 10)));
  } finally {
    await server.stop();
  }
}

const e = encodeURIComponent;
const lookupPath = (c: GeneratedConcept): string =>
  `/fhir/CodeSystem/$lookup?system=${e(SYSTEM)}&code=${e(c.id)}`;
const validatePath = (c: GeneratedConcept): string =>
  `/fhir/CodeSystem/$validate-code?url=${e(SYSTEM)}&code=${e(c.id)}&display=${e(c.displayName)}`;

/** The first `$lookup` the server answers for the released source, then the next few. */
async function firstLookup(server: BenchServer, active: GeneratedConcept[]): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    const c = active[(i * 7919) % active.length];
    const started = performance.now();
    const body = await get(server, lookupPath(c));
    times.push(performance.now() - started);
    const problem = displayMismatch(c, body);
    if (problem) throw new Error(problem);
  }
  print(`first $lookup after the release: ${times[0].toFixed(1)} ms (target ≤ 20 ms)`);
  print(
    `next four $lookups: ${times
      .slice(1)
      .map((t) => t.toFixed(1))
      .join(', ')} ms`,
  );
}

/**
 * The server's resident set from before the first $lookup (`before`) to after `calls` more
 * $lookup / $validate-code of random codes.
 */
async function growth(
  server: BenchServer,
  active: GeneratedConcept[],
  calls: number,
  pid: number,
  before: number,
): Promise<void> {
  const draw = new Random(calls);
  const started = performance.now();
  for (let i = 0; i < calls; i += 1) {
    const c = active[Math.floor(draw.next() * active.length)];
    const body = await get(server, i % 2 === 0 ? lookupPath(c) : validatePath(c));
    const problem = i % 2 === 0 ? displayMismatch(c, body) : resultMismatch(c, body);
    if (problem) throw new Error(problem);
  }
  const seconds = (performance.now() - started) / 1000;
  const after = rssOf(pid);
  print(
    `RSS from before the first $lookup to after ${calls} more calls ($lookup and $validate-code ` +
      `alternating, random codes, one at a time, ` +
      `${seconds.toFixed(1)} s): ${mb(before)} → ${mb(after)} MB, growth ${mb(after - before)} MB ` +
      `(target ≤ 25 MB)`,
  );
}

/** `size` concepts spread over all of `active`. */
function sampleOf(active: GeneratedConcept[], size: number): GeneratedConcept[] {
  const step = Math.max(1, Math.floor(active.length / size));
  return active.filter((_c, i) => i % step === 0).slice(0, size);
}

/**
 * `$lookup`s of random codes of the sample under load, against the registry, against the floor
 * of our stack (`bench/floor.ts`: Node's HTTP server sending the registry's statements for each
 * path and writing its answer's bytes), and the statements alone on a `pg.Pool` (the raw
 * database): the CPU each spends per `$lookup`, and the ratios.
 */
async function steadyState(
  server: BenchServer,
  params: ReturnType<typeof benchParams>,
  sample: GeneratedConcept[],
): Promise<void> {
  const headers = { accept: 'application/fhir+json' };
  const target = (label: string) => {
    const draw = new Random(sample.length);
    return {
      label,
      headers,
      next: () => {
        const c = sample[Math.floor(draw.next() * sample.length)];
        return {
          path: lookupPath(c),
          check: (status: number, body: string) =>
            status !== 200 ? `HTTP ${status} for ${c.id}` : displayMismatch(c, body),
        };
      },
    };
  };
  const result = await measureHttpVaried(server, target('registry'), params);
  report(`steady-state $lookup, random codes of ${sample.length}`, result, params, 'server');

  // What the edge asks the service for a `$lookup?system=…&code=…` (compat/fhir/code-system-lookup.ts),
  // in the steady state measured above: asked a second time, when the version's concept is kept.
  const inProcess = await openInProcess(server.databaseUrl);
  const statements = new Map<string, Statement[]>();
  try {
    for (const c of sample) {
      const lookup = () =>
        inProcess.statementsOf((services, ctx) =>
          services.terminology.lookup(
            ctx,
            {
              coding: { system: SYSTEM, code: c.id },
              properties: [],
              languages: parseLanguages(undefined),
              useSupplements: [],
            },
            [],
          ),
        );
      await lookup();
      statements.set(lookupPath(c), await lookup());
    }
  } finally {
    await inProcess.close();
  }
  const counts = new Set([...statements.values()].map((s) => s.length));
  print(`statements per $lookup: ${[...counts].join(', ')}`);
  const floor = await forkFloor(server, [...statements.keys()], headers, async (path) =>
    statements.get(path)!,
  );
  let floorResult: LoadResult;
  try {
    floorResult = await measureHttpVaried(floor, target('floor'), params, [floor.pid]);
    await printStackFloors(floor, target('floor'), params, [{ label: '$lookup', result }]);
  } finally {
    await floor.stop();
  }
  report(
    'the floor (node:http + pg.Pool, the same statements and bytes)',
    floorResult,
    params,
    'server',
  );

  const pool = new Pool({ connectionString: server.databaseUrl, max: APP_POOL_SIZE });
  let raw: LoadResult;
  try {
    const paths = [...statements.keys()];
    const draw = new Random(paths.length);
    raw = await measureLoop('raw DB', params, async () => {
      const path = paths[Math.floor(draw.next() * paths.length)];
      for (const [i, s] of statements.get(path)!.entries()) {
        await pool.query({ name: `raw_${i}`, text: s.sql, values: s.parameters });
      }
    });
  } finally {
    await pool.end();
  }
  report('raw DB (the same statements on a pg.Pool, from this process)', raw, params, 'client');
  const rate = (r: LoadResult): number => r.completed / r.seconds;
  const cpu = (r: LoadResult): number => (r.cpu?.server ?? NaN) / r.completed;
  print(
    `registry / floor: ${(rate(result) / rate(floorResult)).toFixed(2)}× the throughput, ` +
      `${(cpu(result) / cpu(floorResult)).toFixed(2)}× the server CPU per $lookup; ` +
      `registry / raw DB: ${(rate(result) / rate(raw)).toFixed(2)}× the throughput`,
  );
}

function report(
  label: string,
  result: LoadResult,
  params: ReturnType<typeof benchParams>,
  party: 'server' | 'client',
): void {
  const perOp = (seconds: number | null | undefined): string =>
    seconds === null || seconds === undefined || result.completed === 0
      ? 'n/a'
      : ((seconds * 1000) / result.completed).toFixed(3);
  const own = party === 'server' ? result.cpu?.server : result.cpu?.client;
  print(
    `${label}, ${params.connections} clients, ${params.seconds} s: ` +
      `${(result.completed / result.seconds).toFixed(0)}/s, ${result.errors} errors; CPU ms per ` +
      `$lookup: ${party} ${perOp(own)}${party === 'server' ? ' (target ≤ 0.35)' : ''}, Postgres ` +
      `${perOp(result.cpu?.postgres)}${party === 'server' ? `, client ${perOp(result.cpu?.client)}` : ''}`,
  );
  if (result.failures.length) print(`failures: ${result.failures.join('; ')}`);
}

async function get(server: BenchServer, path: string): Promise<string> {
  const res = await fetch(server.url + path, { headers: { accept: 'application/fhir+json' } });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${body}`);
  return body;
}

function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return kb * 1024;
}

const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);

function parametersOf(body: string): Map<string, unknown> {
  const parsed = JSON.parse(body) as { parameter?: Array<Record<string, unknown>> };
  const values = new Map<string, unknown>();
  for (const p of parsed.parameter ?? []) {
    const key = Object.keys(p).find((k) => k.startsWith('value'));
    if (typeof p.name === 'string' && key) values.set(p.name, p[key]);
  }
  return values;
}

function displayMismatch(c: GeneratedConcept, body: string): string | null {
  const shown = parametersOf(body).get('display');
  return shown === c.displayName ? null : `${c.id}: display '${String(shown)}'`;
}

function resultMismatch(c: GeneratedConcept, body: string): string | null {
  return parametersOf(body).get('result') === true ? null : `${c.id}: ${body.slice(0, 300)}`;
}
