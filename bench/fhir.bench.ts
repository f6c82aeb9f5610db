import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import { Pool } from 'pg';
import { generateDictionary, Random, type GeneratedConcept } from './generate';
import {
  ADMIN_PASSWORD,
  ADMIN_USERNAME,
  APP_POOL_SIZE,
  benchParams,
  envInt,
  login,
  measureHttpVaried,
  measureLoop,
  percentile,
  print,
  printColumns,
  printSetup,
  printTable,
  request,
  settleTasks,
  startBenchServer,
  type BenchParams,
  type BenchServer,
  type LoadResult,
} from './harness';

/**
 * The FHIR terminology operations on CIEL-scale content (issue 11, part 8): `$lookup` and
 * `$validate-code` (CodeSystem and ValueSet) under load against the raw database fetching the
 * same concept row, and `$expand` of a 10,000-concept ValueSet (a released collection version),
 * plain and with a `filter` text, one request at a time.
 */
export const title = 'FHIR terminology operations on a CIEL-scale code system';

const ORG = 'CIEL-BENCH';
const SOURCE = 'CIEL';
const COLLECTION = 'CIEL-10K';
const SYSTEM = 'http://bench.example.org/fhir/CodeSystem/ciel';
const VALUE_SET = 'http://bench.example.org/fhir/ValueSet/ciel-10k';
const VALUE_SET_SIZE = 10_000;

/** The raw database's part of a `$lookup`: the concept's current row, found by its code. */
const RAW_CONCEPT = `
  SELECT cv.mnemonic, cv.display_name, cv.retired, cv.concept_class, cv.datatype, cv.names,
    cv.descriptions
  FROM repositories r
  JOIN concept_versions cv ON cv.repository_id = r.id AND cv.mnemonic = $2
    AND cv.valid_to_seq IS NULL
  WHERE r.canonical_url = $1 AND r.kind = 'source'`;

export async function run(): Promise<void> {
  const params = benchParams();
  const expandRuns = envInt('BENCH_EXPAND_RUNS', 10, 1);
  const server = await startBenchServer();
  try {
    printSetup(server, params, [
      `dataset:    org ${ORG}, the generated dictionary (bench/generate.ts, BENCH_CONCEPTS …); ` +
        `${SOURCE} gets the canonical URL ${SYSTEM} and a released version v1; a collection of ` +
        `${VALUE_SET_SIZE.toLocaleString('en-US')} of its active concepts, released as v1, is ` +
        `the ValueSet ${VALUE_SET}`,
    ]);
    const dict = await generateDictionary(server.databaseUrl, {
      org: ORG,
      username: ADMIN_USERNAME,
      log: print,
    });
    const token = await login(server, ADMIN_USERNAME, ADMIN_PASSWORD);
    const started = performance.now();
    const members = await publish(server, token, dict.concepts);
    print(
      `published:  source version and the collection of ${members.length.toLocaleString('en-US')} ` +
        `references with its version in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    await settleTasks(server, token);
    print('');
    const active = dict.concepts.filter((c) => !c.retired);
    await operationsUnderLoad(server, params, active, members);
    await expansions(server, expandRuns, members);
  } finally {
    await server.stop();
  }
}

/** The canonical URLs, the released source version, and the collection of 10,000 concepts. */
async function publish(
  server: BenchServer,
  token: string,
  concepts: GeneratedConcept[],
): Promise<GeneratedConcept[]> {
  const source = `/orgs/${ORG}/sources/${SOURCE}/`;
  await request(server, 'PUT', source, { token, body: { canonical_url: SYSTEM } });
  await request(server, 'POST', `${source}versions/`, {
    token,
    body: { id: 'v1', description: 'v1', released: true },
    status: 201,
  });
  const draw = new Random(7);
  const active = concepts.filter((c) => !c.retired);
  const members = new Map<string, GeneratedConcept>();
  while (members.size < VALUE_SET_SIZE) {
    const c = active[Math.floor(draw.next() * active.length)];
    members.set(c.id, c);
  }
  const collection = `/orgs/${ORG}/collections/${COLLECTION}/`;
  await request(server, 'POST', `/orgs/${ORG}/collections/`, {
    token,
    body: { id: COLLECTION, name: 'CIEL 10k', canonical_url: VALUE_SET },
    status: 201,
  });
  const list = [...members.values()];
  // Adds of up to 2,000 references answer at once; larger ones become background tasks.
  for (let i = 0; i < list.length; i += 2_000) {
    await request(server, 'PUT', `${collection}references/`, {
      token,
      body: {
        data: { expressions: list.slice(i, i + 2_000).map((c) => `${source}v1/concepts/${c.id}/`) },
      },
    });
  }
  await request(server, 'POST', `${collection}versions/`, {
    token,
    body: { id: 'v1', description: 'v1', released: true },
    status: 201,
  });
  return list;
}

async function operationsUnderLoad(
  server: BenchServer,
  params: BenchParams,
  active: GeneratedConcept[],
  members: GeneratedConcept[],
): Promise<void> {
  const e = encodeURIComponent;
  const results: LoadResult[] = [];
  // What the server keeps between requests (the rendered code system and value set) is made by
  // one request each before the timed runs: the runs measure the steady state, and the first
  // rendering is reported on its own.
  for (const [label, path] of [
    ['code system', `/fhir/CodeSystem/$lookup?system=${e(SYSTEM)}&code=${e(active[0].id)}`],
    [
      'value set',
      `/fhir/ValueSet/$validate-code?url=${e(VALUE_SET)}&system=${e(SYSTEM)}&code=${e(members[0].id)}`,
    ],
  ]) {
    const started = performance.now();
    await request(server, 'GET', path);
    print(`first request (renders the ${label}): ${(performance.now() - started).toFixed(0)} ms`);
  }
  const varied = (
    label: string,
    pool: GeneratedConcept[],
    path: (c: GeneratedConcept) => string,
    check: (c: GeneratedConcept, body: string) => string | null,
  ): Promise<LoadResult> => {
    const draw = new Random(pool.length);
    return measureHttpVaried(
      server,
      {
        label,
        headers: { accept: 'application/fhir+json' },
        next: () => {
          const c = pool[Math.floor(draw.next() * pool.length)];
          return {
            path: path(c),
            check: (status, body) =>
              status !== 200 ? `HTTP ${status} for ${c.id}: ${body.slice(0, 200)}` : check(c, body),
          };
        },
      },
      params,
    );
  };
  results.push(
    await varied(
      'CodeSystem/$lookup?system&code, random codes',
      active,
      (c) => `/fhir/CodeSystem/$lookup?system=${e(SYSTEM)}&code=${e(c.id)}`,
      (c, body) => displayMismatch(c, body, 'display'),
    ),
  );
  results.push(
    await varied(
      'CodeSystem/$validate-code?url&code, random codes',
      active,
      (c) => `/fhir/CodeSystem/$validate-code?url=${e(SYSTEM)}&code=${e(c.id)}`,
      (c, body) => resultMismatch(c, body),
    ),
  );
  results.push(
    await varied(
      'ValueSet/$validate-code?url&system&code, random members',
      members,
      (c) =>
        `/fhir/ValueSet/$validate-code?url=${e(VALUE_SET)}&system=${e(SYSTEM)}&code=${e(c.id)}`,
      (c, body) => resultMismatch(c, body),
    ),
  );
  const pool = new Pool({ connectionString: server.databaseUrl, max: APP_POOL_SIZE });
  try {
    const draw = new Random(active.length);
    const raw = await measureLoop(
      'raw DB: the concept row by system and code',
      params,
      async () => {
        const c = active[Math.floor(draw.next() * active.length)];
        const { rows } = await pool.query<{ display_name: string }>({
          name: 'bench-fhir-raw-concept',
          text: RAW_CONCEPT,
          values: [SYSTEM, c.id],
        });
        if (rows[0]?.display_name !== c.displayName) throw new Error(`raw row of ${c.id} differs`);
      },
    );
    results.push(raw);
    print('Operations under load (answers checked: display, result true)');
    printTable(results, raw);
    print(
      'Targets: $lookup ≥ 3,000 requests/s with server CPU ≤ 0.35 ms per request on this machine.',
    );
    print('');
  } finally {
    await pool.end();
  }
}

async function expansions(
  server: BenchServer,
  runs: number,
  members: GeneratedConcept[],
): Promise<void> {
  const e = encodeURIComponent;
  // A word that some members' display names hold, as a person types a filter.
  const word = commonWord(members);
  const expected = members.filter((c) => c.displayName.toLowerCase().includes(word)).length;
  const rows: string[][] = [];
  for (const [label, path, total] of [
    // An expansion this large is asked for by page size, as FHIR clients page large ones.
    [
      '$expand 10,000 concepts (count=10000)',
      `/fhir/ValueSet/$expand?url=${e(VALUE_SET)}&count=${VALUE_SET_SIZE}`,
      members.length,
    ],
    [
      `$expand with filter=${word}`,
      `/fhir/ValueSet/$expand?url=${e(VALUE_SET)}&filter=${e(word)}&count=${VALUE_SET_SIZE}`,
      expected,
    ],
    // The pages a picker asks for: the first 20, and the first 20 matching what was typed.
    [
      '$expand first page (count=20)',
      `/fhir/ValueSet/$expand?url=${e(VALUE_SET)}&count=20`,
      members.length,
    ],
    [
      `$expand first page with filter=${word} (count=20)`,
      `/fhir/ValueSet/$expand?url=${e(VALUE_SET)}&filter=${e(word)}&count=20`,
      expected,
    ],
  ] as const) {
    const times: number[] = [];
    let answered = 0;
    for (let i = -2; i < runs; i += 1) {
      const started = performance.now();
      const res = await fetch(server.url + path, { headers: { accept: 'application/fhir+json' } });
      const text = await res.text();
      if (i >= 0) times.push(performance.now() - started);
      if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${text}`);
      answered = (JSON.parse(text) as { expansion: { total: number } }).expansion.total;
    }
    rows.push([
      label,
      String(answered),
      String(total),
      percentile(times, 0.5).toFixed(1),
      percentile(times, 0.95).toFixed(1),
    ]);
  }
  print(`ValueSet $expand, one request at a time, ${runs} runs after 2 unmeasured`);
  printColumns(['', 'total', 'expected', 'p50 ms', 'p95 ms'], rows);
  print('Targets: 10k p50 ≤ 250 ms, with filter ≤ 50 ms.');
}

/** The most frequent word (4+ letters) of the members' display names. */
function commonWord(members: GeneratedConcept[]): string {
  const counts = new Map<string, number>();
  for (const c of members) {
    for (const w of new Set(c.displayName.toLowerCase().match(/[a-z]{4,}/g) ?? [])) {
      counts.set(w, (counts.get(w) ?? 0) + 1);
    }
  }
  // A word neither rare nor everywhere: the one closest to 2% of the members.
  const goal = members.length / 50;
  return [...counts.entries()].sort((a, b) => Math.abs(a[1] - goal) - Math.abs(b[1] - goal))[0][0];
}

function parametersOf(body: string): Map<string, unknown> {
  const parsed = JSON.parse(body) as { parameter?: Array<Record<string, unknown>> };
  const values = new Map<string, unknown>();
  for (const p of parsed.parameter ?? []) {
    const key = Object.keys(p).find((k) => k.startsWith('value'));
    if (typeof p.name === 'string' && key) values.set(p.name, p[key]);
  }
  return values;
}

function displayMismatch(c: GeneratedConcept, body: string, name: string): string | null {
  const shown = parametersOf(body).get(name);
  return shown === c.displayName ? null : `${c.id}: ${name} '${String(shown)}'`;
}

function resultMismatch(c: GeneratedConcept, body: string): string | null {
  const values = parametersOf(body);
  return values.get('result') === true ? null : `${c.id}: ${body.slice(0, 300)}`;
}
