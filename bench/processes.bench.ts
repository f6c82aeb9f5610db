import { generateDictionary, Random, type GeneratedConcept } from './generate';
import {
  ADMIN_PASSWORD,
  ADMIN_USERNAME,
  benchParams,
  envInt,
  forkBalancer,
  forkServer,
  login,
  measureHttpVaried,
  percentile,
  print,
  printColumns,
  printSetup,
  request,
  settleTasks,
  startBenchServer,
  type BenchServer,
  type LoadResult,
  type VariedHttpTarget,
} from './harness';

/**
 * Scale-out (issue 24 part 11): the same mixed load (concept detail, concept search, a nested
 * GraphQL page, FHIR `$lookup`, in turn on every connection) against one registry process, one
 * behind the balancer (what the balancer alone costs), and two processes on the same database
 * behind it. The balancer (`balancer.ts`) hands each connection to the next process, as a layer-4
 * load balancer does.
 */
export const title = 'Scale-out: one process vs two behind a balancer, mixed load';

const ORG = 'PROCS-BENCH';
const SOURCE = 'CIEL';
const SOURCE_PATH = `/orgs/${ORG}/sources/${SOURCE}/`;
const SYSTEM = 'http://bench.example.org/fhir/CodeSystem/processes';

const NESTED = `query Page($url: String!, $offset: Int!) { source(url: $url) { id
  concepts(limit: 10, offset: $offset) { totalCount items { id displayName conceptClass
    names { name locale } mappings { mapType to { conceptCode sourceName } } } } } }`;

export async function run(): Promise<void> {
  const params = benchParams();
  const concepts = envInt('BENCH_PROCS_CONCEPTS', 20_000, 100);
  const server = await startBenchServer();
  try {
    printSetup(server, params, [
      `dataset:    org ${ORG}, one generated source ${SOURCE} of ` +
        `${concepts.toLocaleString('en-US')} concepts with mappings (bench/generate.ts), released`,
      `load:       every connection cycles concept detail, concept search (?q=, 10 results), ` +
        `GraphQL source { concepts(limit: 10) { names mappings { to } } }, FHIR $lookup; ` +
        `random concepts; ${envInt('BENCH_PROCS_WARMUP_SECONDS', 10, 0)} s of it unmeasured ` +
        `first (BENCH_PROCS_WARMUP_SECONDS)`,
    ]);
    const dict = await generateDictionary(server.databaseUrl, {
      org: ORG,
      username: ADMIN_USERNAME,
      concepts,
      sources: 1,
      mappings: concepts * 2,
      log: print,
    });
    const token = await login(server, ADMIN_USERNAME, ADMIN_PASSWORD);
    await request(server, 'PUT', SOURCE_PATH, { token, body: { canonical_url: SYSTEM } });
    await request(server, 'POST', `${SOURCE_PATH}versions/`, {
      token,
      body: { id: 'v1', description: 'v1', released: true },
      status: 201,
    });
    await settleTasks(server, token);
    const active = dict.concepts.filter((c) => !c.retired);
    const load = mixedLoad(active);
    // A process just started runs its first thousands of requests slower (its code is compiled
    // as it runs, its connections prepare their statements): the first run is measured after
    // the same load has run unmeasured, as it would on a server in service.
    const warmSeconds = envInt('BENCH_PROCS_WARMUP_SECONDS', 10, 0);
    if (warmSeconds > 0) {
      await measureHttpVaried(
        server,
        { ...load, label: 'warm-up' },
        {
          ...params,
          seconds: warmSeconds,
          warmupSeconds: 0,
        },
      );
    }

    const one = await measureHttpVaried(server, { ...load, label: 'one process, direct' }, params);
    const results: LoadResult[] = [one];
    const viaOne = await forkBalancer([portOf(server)]);
    try {
      const label = 'one process, balancer';
      results.push(
        await measureHttpVaried({ ...server, url: viaOne.url }, { ...load, label }, params),
      );
    } finally {
      await viaOne.stop();
    }
    const second = await forkServer(server.databaseUrl);
    try {
      const viaTwo = await forkBalancer([portOf(server), second.port]);
      try {
        const label = 'two processes, balancer';
        results.push(
          await measureHttpVaried({ ...server, url: viaTwo.url }, { ...load, label }, params),
        );
      } finally {
        await viaTwo.stop();
      }
    } finally {
      await second.stop();
    }
    printResults(results, one);
    printKinds(results);
    // Why: each request alone on one process, to show which party each one spends.
    const alone: LoadResult[] = [];
    for (const [kind, label] of KINDS.entries()) {
      const only = mixedLoad(active, [kind]);
      alone.push(await measureHttpVaried(server, { ...only, label: `${label} alone` }, params));
    }
    printResults(alone, one);
  } finally {
    await server.stop();
  }
}

const portOf = (server: BenchServer): number => Number(new URL(server.url).port);
const e = encodeURIComponent;

const KINDS = ['concept detail', 'concept search', 'nested GraphQL page', 'FHIR $lookup'];

/**
 * The four requests (or those of `only`, indexes into KINDS) in turn, each on a random active
 * concept, each answer checked.
 */
function mixedLoad(active: GeneratedConcept[], only?: number[]): VariedHttpTarget {
  const draw = new Random(active.length);
  const pick = (): GeneratedConcept => active[Math.floor(draw.next() * active.length)];
  const kinds: Array<() => ReturnType<VariedHttpTarget['next']>> = [
    () => {
      const c = pick();
      return {
        path: `${SOURCE_PATH}concepts/${e(c.id)}/`,
        check: (status, body) =>
          status !== 200
            ? `detail ${c.id}: HTTP ${status}`
            : (JSON.parse(body) as { id?: string }).id === c.id
              ? null
              : `detail ${c.id}: ${body.slice(0, 200)}`,
      };
    },
    () => {
      const word = pick().displayName.split(/\s+/)[0];
      return {
        path: `${SOURCE_PATH}concepts/?q=${e(word)}&limit=10`,
        check: (status, body) =>
          status !== 200
            ? `search ${word}: HTTP ${status}`
            : (JSON.parse(body) as unknown[]).length > 0
              ? null
              : `search ${word}: no results`,
      };
    },
    () => {
      const offset = Math.floor(draw.next() * Math.max(1, active.length - 10));
      const variables = JSON.stringify({ url: SOURCE_PATH, offset });
      return {
        path: `/graphql?query=${e(NESTED)}&variables=${e(variables)}`,
        check: (status, body) => {
          if (status !== 200) return `GraphQL offset ${offset}: HTTP ${status}`;
          const answer = JSON.parse(body) as {
            data?: { source: { concepts: { items: unknown[] } } };
            errors?: unknown[];
          };
          return answer.data?.source.concepts.items.length === 10
            ? null
            : `GraphQL offset ${offset}: ${body.slice(0, 200)}`;
        },
      };
    },
    () => {
      const c = pick();
      return {
        path: `/fhir/CodeSystem/$lookup?system=${e(SYSTEM)}&code=${e(c.id)}`,
        check: (status, body) =>
          status !== 200
            ? `$lookup ${c.id}: HTTP ${status}`
            : body.includes(JSON.stringify(c.displayName))
              ? null
              : `$lookup ${c.id}: ${body.slice(0, 200)}`,
      };
    },
  ];
  const chosen = only ?? kinds.map((_, kind) => kind);
  let turn = 0;
  return {
    label: 'mixed',
    headers: { accept: 'application/json', 'apollo-require-preflight': 'true' },
    next: () => {
      const kind = chosen[turn++ % chosen.length];
      return { ...kinds[kind](), kind: KINDS[kind] };
    },
  };
}

/** Throughput, latency and CPU per request of every party, each run against the first. */
function printResults(results: LoadResult[], baseline: LoadResult): void {
  const rate = (r: LoadResult): number => r.completed / r.seconds;
  const perOp = (r: LoadResult, seconds: number | null | undefined): string =>
    seconds === null || seconds === undefined || r.completed === 0
      ? '–'
      : ((seconds * 1000) / r.completed).toFixed(3);
  const busy = (r: LoadResult): string => {
    const cpu = r.cpu;
    if (!cpu) return '–';
    const total = cpu.client + (cpu.server ?? 0) + (cpu.postgres ?? 0) + (cpu.balancer ?? 0);
    return `${(total / r.seconds).toFixed(2)}`;
  };
  printColumns(
    [
      '',
      'req/s',
      'vs one',
      'p50 ms',
      'p99 ms',
      'errors',
      'CPU ms/req: servers',
      'Postgres',
      'balancer',
      'client',
      'cores busy',
    ],
    results.map((r) => [
      r.label,
      rate(r).toFixed(0),
      `${(rate(r) / rate(baseline)).toFixed(2)}×`,
      percentile(r.latencies, 0.5).toFixed(2),
      percentile(r.latencies, 0.99).toFixed(2),
      String(r.errors),
      perOp(r, r.cpu?.server),
      perOp(r, r.cpu?.postgres),
      perOp(r, r.cpu?.balancer),
      perOp(r, r.cpu?.client),
      busy(r),
    ]),
  );
  for (const r of results) {
    for (const failure of r.failures) print(`  ! ${r.label}: ${failure}`);
  }
  print('');
}

/** Each kind's own latencies within the mixed runs: the target holds for every kind. */
function printKinds(results: LoadResult[]): void {
  printColumns(
    ['p50 / p99 ms', ...KINDS],
    results.map((r) => [
      r.label,
      ...KINDS.map((kind) => {
        const own = r.latenciesByKind?.get(kind) ?? [];
        return own.length === 0
          ? '–'
          : `${percentile(own, 0.5).toFixed(1)} / ${percentile(own, 0.99).toFixed(1)}`;
      }),
    ]),
  );
  print('');
}
