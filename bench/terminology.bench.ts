import 'reflect-metadata';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { generateDictionary, Random, type GeneratedConcept } from './generate';
import {
  ADMIN_PASSWORD,
  ADMIN_USERNAME,
  benchParams,
  envInt,
  login,
  measureHttpVaried,
  print,
  printSetup,
  request,
  settleTasks,
  startBenchServer,
  type BenchServer,
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
    await steadyState(server, params, active);
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

async function steadyState(
  server: BenchServer,
  params: ReturnType<typeof benchParams>,
  active: GeneratedConcept[],
): Promise<void> {
  const draw = new Random(active.length);
  const result = await measureHttpVaried(
    server,
    {
      label: '$lookup',
      headers: { accept: 'application/fhir+json' },
      next: () => {
        const c = active[Math.floor(draw.next() * active.length)];
        return {
          path: lookupPath(c),
          check: (status, body) =>
            status !== 200 ? `HTTP ${status} for ${c.id}` : displayMismatch(c, body),
        };
      },
    },
    params,
  );
  const perOp = (seconds: number | null | undefined): string =>
    seconds === null || seconds === undefined || result.completed === 0
      ? 'n/a'
      : ((seconds * 1000) / result.completed).toFixed(3);
  print(
    `steady-state $lookup, random codes, ${params.connections} clients, ${params.seconds} s: ` +
      `${(result.completed / result.seconds).toFixed(0)} req/s, ${result.errors} errors; CPU ms per ` +
      `$lookup: server ${perOp(result.cpu?.server)} (target ≤ 0.35), Postgres ` +
      `${perOp(result.cpu?.postgres)}, client ${perOp(result.cpu?.client)}`,
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
