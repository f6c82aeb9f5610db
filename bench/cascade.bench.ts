import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import {
  ADMIN_PASSWORD,
  ADMIN_USERNAME,
  envInt,
  login,
  openInProcess,
  percentile,
  print,
  printColumns,
  printMachine,
  startBenchServer,
  type BenchServer,
} from './harness';

/**
 * `$cascade` and `$clone` on a CIEL-like hierarchy (issue 12): a concept set whose members are
 * questions with answers, six levels deep, with answers pointing back at questions (cycles), 1,000
 * concepts and mappings reachable from the root; and a small tree of the same shape, to show that
 * the statements per request do not grow with what is reached.
 */
export const title = '$cascade and $clone on a generated hierarchy';

const ORG = 'CASCADE-BENCH';
/** Children per concept at each level below the root: 1 + 4 + 12 + 36 + 108 + 324 = 485 concepts. */
const BRANCHING = [4, 3, 3, 3, 3];
/** Mappings from the deepest answers back to first-level questions: 484 + 31 = 515 mappings. */
const BACK_LINKS = 31;

interface Tree {
  url: string;
  concepts: number;
  mappings: number;
}

export async function run(): Promise<void> {
  const runs = envInt('BENCH_CASCADE_RUNS', 30, 1);
  const server = await startBenchServer();
  try {
    printMachine(server);
    const token = await login(server, ADMIN_USERNAME, ADMIN_PASSWORD);
    await post(server, token, '/orgs/', { id: ORG, name: 'Cascade benchmark' });
    const started = performance.now();
    const big = await createTree(server, token, 'TREE', BRANCHING, BACK_LINKS);
    const small = await createTree(server, token, 'SMALL', [2, 2], 1);
    print(
      `dataset:    ${ORG}/TREE: ${big.concepts} concepts, ${big.mappings} mappings (CONCEPT-SET ` +
        `below the root, Q-AND-A below, ${BACK_LINKS} back to level 1), six levels; ${ORG}/SMALL: ` +
        `${small.concepts} concepts, ${small.mappings} mappings; made through the API in ` +
        `${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    print(`parameters: ${runs} requests one at a time after 3 unmeasured (BENCH_CASCADE_RUNS)`);
    print('');
    await cascadeRuns(server, big, small, runs);
    print('');
    await cloneRuns(server, token, big, Math.max(3, Math.min(runs, 5)));
  } finally {
    await server.stop();
  }
}

async function post(
  server: BenchServer,
  token: string,
  path: string,
  body: unknown,
): Promise<unknown> {
  const res = await fetch(server.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Token ${token}` },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 201 && res.status !== 200) {
    throw new Error(`POST ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  }
  return JSON.parse(text) as unknown;
}

/** A source of the org holding the tree; concept ids `L<level>-<n>`. */
async function createTree(
  server: BenchServer,
  token: string,
  id: string,
  branching: number[],
  backLinks: number,
): Promise<Tree> {
  const url = `/orgs/${ORG}/sources/${id}/`;
  await post(server, token, `/orgs/${ORG}/sources/`, { id, name: id });
  const levels: string[][] = [['L0-0']];
  branching.forEach((n, i) => {
    levels.push(Array.from({ length: levels[i].length * n }, (_, k) => `L${i + 1}-${k}`));
  });
  const concepts = levels.flat();
  const mappings: Array<[string, string, string]> = [];
  branching.forEach((n, i) => {
    levels[i + 1].forEach((child, k) =>
      mappings.push([i === 0 ? 'CONCEPT-SET' : 'Q-AND-A', levels[i][Math.floor(k / n)], child]),
    );
  });
  const deepest = levels[levels.length - 1];
  for (let k = 0; k < backLinks; k += 1) {
    mappings.push(['Q-AND-A', deepest[(k * 7) % deepest.length], levels[1][k % levels[1].length]]);
  }
  await inBatches(concepts, (code) =>
    post(server, token, `${url}concepts/`, {
      id: code,
      concept_class: code === 'L0-0' ? 'ConvSet' : 'Question',
      names: [{ name: `Concept ${code}`, locale: 'en', locale_preferred: true }],
    }),
  );
  await inBatches(mappings, ([mapType, from, to]) =>
    post(server, token, `${url}mappings/`, {
      map_type: mapType,
      from_concept_url: `${url}concepts/${from}/`,
      to_concept_url: `${url}concepts/${to}/`,
    }),
  );
  return { url, concepts: concepts.length, mappings: mappings.length };
}

async function inBatches<T>(items: T[], work: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += 8) await Promise.all(items.slice(i, i + 8).map(work));
}

async function cascadeRuns(
  server: BenchServer,
  big: Tree,
  small: Tree,
  runs: number,
): Promise<void> {
  const inProcess = await openInProcess(server.databaseUrl);
  const client = new Client({ connectionString: server.databaseUrl });
  await client.connect();
  const rows: string[][] = [];
  let slowest: Array<{ ms: number; sql: string }> = [];
  try {
    for (const [tree, view] of [
      [big, 'flat'],
      [big, 'hierarchy'],
      [small, 'flat'],
    ] as const) {
      const path = `${tree.url}HEAD/concepts/L0-0/$cascade/?view=${view}`;
      const times: number[] = [];
      let resources = 0;
      let limitReached = false;
      for (let i = -3; i < runs; i += 1) {
        const started = performance.now();
        const res = await fetch(server.url + path);
        const text = await res.text();
        if (i >= 0) times.push(performance.now() - started);
        if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${text}`);
        const bundle = JSON.parse(text) as { entry: unknown; limit_reached: boolean };
        resources = countEntries(bundle.entry);
        limitReached = bundle.limit_reached;
      }
      if (view === 'flat' && resources !== tree.concepts + tree.mappings) {
        throw new Error(`${path}: ${resources} entries, expected ${tree.concepts + tree.mappings}`);
      }
      const statements = await inProcess.statementsOf((services, ctx) =>
        services.cascade.cascade(
          ctx,
          {
            owner: { type: 'org', id: ORG },
            kind: 'source',
            id: tree.url.split('/')[4],
            version: 'HEAD',
          },
          'L0-0',
          { view },
        ),
      );
      const raw: number[] = [];
      const each = statements.map(() => [] as number[]);
      for (let i = -3; i < runs; i += 1) {
        const started = performance.now();
        for (const [k, s] of statements.entries()) {
          const one = performance.now();
          await client.query(s.sql, s.parameters);
          if (i >= 0) each[k].push(performance.now() - one);
        }
        if (i >= 0) raw.push(performance.now() - started);
      }
      if (tree === big && view === 'flat') {
        slowest = statements
          .map((s, k) => ({ ms: percentile(each[k], 0.5), sql: s.sql.replace(/\s+/g, ' ') }))
          .sort((x, y) => y.ms - x.ms)
          .slice(0, 4);
      }
      rows.push([
        `${tree.url.split('/')[4]} ${view}`,
        String(resources) + (limitReached ? ' (limit)' : ''),
        percentile(times, 0.5).toFixed(1),
        percentile(times, 0.95).toFixed(1),
        percentile(raw, 0.5).toFixed(1),
        `${(percentile(times, 0.5) / percentile(raw, 0.5)).toFixed(1)}×`,
        String(statements.length),
      ]);
    }
  } finally {
    await client.end();
    await inProcess.close();
  }
  print(`GET {source}HEAD/concepts/L0-0/$cascade/ (every level), one request at a time`);
  printColumns(
    ['', 'resources', 'p50 ms', 'p95 ms', 'raw p50 ms', 'vs raw', 'SQL statements'],
    rows,
  );
  print(
    "raw: the walk's own statements (path, one per level and kind, the entities, the mapping " +
      'ends) replayed on one pg client. Target: 1,000 resources p50 ≤ 60 ms.',
  );
  print('slowest statements of the TREE walk (raw p50 ms):');
  for (const { ms, sql } of slowest) print(`  ${ms.toFixed(1).padStart(6)}  ${sql.slice(0, 150)}`);
}

/** Entries of a Bundle: a flat list, or a root with nested `entries`. */
function countEntries(entry: unknown): number {
  if (Array.isArray(entry)) return entry.length;
  const node = entry as { entries?: unknown[] };
  return 1 + (node.entries ?? []).reduce<number>((n, e) => n + countEntries(e), 0);
}

async function cloneRuns(
  server: BenchServer,
  token: string,
  big: Tree,
  runs: number,
): Promise<void> {
  const times: number[] = [];
  let concepts = 0;
  let mappings = 0;
  for (let i = 0; i < runs; i += 1) {
    const destination = `/orgs/${ORG}/sources/CLONE${i}/`;
    await post(server, token, `/orgs/${ORG}/sources/`, { id: `CLONE${i}`, name: `Clone ${i}` });
    const expression = `${big.url}concepts/L1-0/`;
    const started = performance.now();
    const answer = (await post(server, token, `${destination}concepts/$clone/`, {
      expressions: [expression],
      parameters: { cascadeLevels: 3 },
    })) as Record<string, { status: number; bundle: { entry: Array<{ type: string }> } }>;
    times.push(performance.now() - started);
    const outcome = answer[expression];
    if (outcome.status !== 201) throw new Error(`$clone answered ${JSON.stringify(outcome)}`);
    concepts = outcome.bundle.entry.filter((e) => e.type === 'Concept').length;
    mappings = outcome.bundle.entry.filter((e) => e.type === 'Mapping').length;
  }
  print(`POST {source}concepts/$clone/ of L1-0 with cascadeLevels=3, into a new source each time`);
  printColumns(
    ['', 'runs', 'concepts made', 'mappings made', 'p50 ms', 'max ms'],
    [
      [
        'clone',
        String(runs),
        String(concepts),
        String(mappings),
        percentile(times, 0.5).toFixed(0),
        Math.max(...times).toFixed(0),
      ],
    ],
  );
  print('Target: cloning 100 concepts with their mappings ≤ 1 s.');
}
