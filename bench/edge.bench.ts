import {
  ADMIN_PASSWORD,
  ADMIN_USERNAME,
  benchParams,
  forkFloor,
  login,
  measureHttpVaried,
  print,
  printColumns,
  printSetup,
  printStackFloors,
  request,
  settleTasks,
  startBenchServer,
  type BenchServer,
  type LoadResult,
} from './harness';

/**
 * What the HTTP edge costs: the server CPU per request of paths that do little or no work of
 * their own (a probe answered before the shared middleware, the API version and FHIR metadata,
 * which read nothing), beside a concept detail and a `$lookup` whose concept is kept, each against
 * the floor of our stack writing the same answer bytes (`node:http`, no statement). What the
 * registry spends above the floor on the first three is its request pipeline: routing, request
 * logging, CORS, metrics, rate limiting, the request context and the reply.
 */
export const title = 'The HTTP edge: the CPU each request costs around its work';

const ORG = 'EDGE-BENCH';
const SOURCE = 'S';
const SYSTEM = 'http://bench.example.org/fhir/CodeSystem/edge';
const CONCEPTS = 50;

export async function run(): Promise<void> {
  const params = benchParams();
  const server = await startBenchServer();
  try {
    printSetup(server, params, [
      `dataset:    org ${ORG}, a source ${SOURCE} of ${CONCEPTS} concepts, released as v1 ` +
        `(canonical URL ${SYSTEM}); every request anonymous`,
    ]);
    await dataset(server);
    const e = encodeURIComponent;
    const targets: Array<[string, string]> = [
      ['liveness probe (before the shared middleware)', '/livez/'],
      ['API version (no statement)', '/version/'],
      ['FHIR metadata (no statement)', '/fhir/metadata'],
      ['concept detail', `/orgs/${ORG}/sources/${SOURCE}/concepts/C7/`],
      [
        'CodeSystem $lookup (its concept kept)',
        `/fhir/CodeSystem/$lookup?system=${e(SYSTEM)}&code=C7`,
      ],
    ];
    const headers = { accept: 'application/json' };
    // The same answers from `node:http`, with no statement at all.
    const floor = await forkFloor(
      server,
      targets.map(([, path]) => path),
      headers,
      () => Promise.resolve([]),
    );
    const rows: string[][] = [];
    const failures: string[] = [];
    const target = (name: string, label: string, path: string) => ({
      label: `${name}: ${label}`,
      headers,
      next: () => ({
        path,
        check: (status: number) => (status === 200 ? null : `HTTP ${status}`),
      }),
    });
    const measured = new Map<string, LoadResult>();
    try {
      for (const [label, path] of targets) {
        const registry = await measureHttpVaried(server, target('registry', label, path), params);
        const bare = await measureHttpVaried(floor, target('floor', label, path), params, [
          floor.pid,
        ]);
        measured.set(path, registry);
        rows.push(row(label, registry, bare));
        for (const r of [registry, bare]) {
          for (const failure of r.failures) failures.push(`  ! ${r.label}: ${failure}`);
        }
      }
      printColumns(
        [
          '',
          'req/s',
          'server CPU ms/req',
          'Postgres',
          'floor req/s',
          'floor CPU',
          'registry / floor',
        ],
        rows,
      );
      for (const failure of failures) print(failure);
      // The stack's floors on the concept detail's path (the $lookup's answer is of a like size).
      const [detailLabel, detailPath] = targets[3];
      await printStackFloors(floor, target('floor', detailLabel, detailPath), params, [
        { label: 'concept detail', result: measured.get(detailPath)! },
        { label: '$lookup', result: measured.get(targets[4][1])! },
      ]);
    } finally {
      await floor.stop();
    }
    await conditionalAndSignedIn(server, params, targets[3][1], measured.get(targets[3][1])!);
    print('');
  } finally {
    await server.stop();
  }
}

/**
 * The concept detail again, signed in with an API token (issue 27: at most 0.05 ms above the
 * anonymous read) and as a 304 to `If-None-Match` with its `ETag` (at most 0.3 ms).
 */
async function conditionalAndSignedIn(
  server: BenchServer,
  params: ReturnType<typeof benchParams>,
  path: string,
  anonymous: LoadResult,
): Promise<void> {
  const token = await login(server, ADMIN_USERNAME, ADMIN_PASSWORD);
  const etag = (
    await fetch(server.url + path, { headers: { accept: 'application/json' } })
  ).headers.get('etag');
  if (!etag) throw new Error(`No ETag on ${path}`);
  const variants: Array<[string, Record<string, string>, number]> = [
    ['concept detail, anonymous (above)', {}, 200],
    ['concept detail, signed in (Token)', { authorization: `Token ${token}` }, 200],
    ['concept detail, 304 to If-None-Match', { 'if-none-match': etag }, 304],
  ];
  const rows: string[][] = [];
  for (const [label, extra, status] of variants) {
    const result =
      Object.keys(extra).length === 0
        ? anonymous
        : await measureHttpVaried(
            server,
            {
              label,
              headers: { accept: 'application/json', ...extra },
              next: () => ({
                path,
                check: (got: number) => (got === status ? null : `HTTP ${got}`),
              }),
            },
            params,
          );
    const perOp = (seconds: number | null | undefined) =>
      seconds == null || result.completed === 0
        ? '–'
        : ((seconds * 1000) / result.completed).toFixed(3);
    rows.push([
      label,
      (result.completed / result.seconds).toFixed(0),
      perOp(result.cpu?.server),
      perOp(result.cpu?.postgres),
    ]);
    for (const failure of result.failures) print(`  ! ${label}: ${failure}`);
  }
  print('');
  printColumns(['', 'req/s', 'server CPU ms/req', 'Postgres'], rows);
}

async function dataset(server: BenchServer): Promise<void> {
  const token = await login(server, ADMIN_USERNAME, ADMIN_PASSWORD);
  const post = (path: string, body: unknown) =>
    request(server, 'POST', path, { token, body, status: 201 });
  await post('/orgs/', { id: ORG, name: ORG });
  const source = `/orgs/${ORG}/sources/${SOURCE}/`;
  await post(`/orgs/${ORG}/sources/`, { id: SOURCE, name: SOURCE, canonical_url: SYSTEM });
  for (let i = 0; i < CONCEPTS; i += 1) {
    await post(`${source}concepts/`, {
      id: `C${i}`,
      concept_class: 'Misc',
      datatype: 'N/A',
      names: [{ name: `Name ${i}`, locale: 'en', locale_preferred: true }],
    });
  }
  await post(`${source}versions/`, { id: 'v1', description: 'v1', released: true });
  await settleTasks(server, token);
}

function row(label: string, registry: LoadResult, floor: LoadResult): string[] {
  const rate = (r: LoadResult) => r.completed / r.seconds;
  const perOp = (r: LoadResult, seconds: number | null | undefined) =>
    seconds === null || seconds === undefined || r.completed === 0
      ? null
      : (seconds * 1000) / r.completed;
  const server = perOp(registry, registry.cpu?.server);
  const bare = perOp(floor, floor.cpu?.server);
  const fixed = (value: number | null) => (value === null ? '–' : value.toFixed(3));
  return [
    label,
    rate(registry).toFixed(0),
    fixed(server),
    fixed(perOp(registry, registry.cpu?.postgres)),
    rate(floor).toFixed(0),
    fixed(bare),
    server !== null && bare !== null && bare > 0 ? `${(server / bare).toFixed(1)}×` : '–',
  ];
}
