import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { generateDictionary, type GeneratedDictionary } from './generate';
import {
  ADMIN_PASSWORD,
  ADMIN_USERNAME,
  cpuMeter,
  envInt,
  forkFloor,
  login,
  openInProcess,
  percentile,
  print,
  printColumns,
  printMachine,
  request,
  settleTasks,
  startBenchServer,
  type BenchServer,
  type Statement,
} from './harness';

/**
 * `$compare` and `$changelog` of two releases of a CIEL-scale source (issue 26: ≤ 2 s for 60,000
 * concepts and 500,000 mappings): v1 released, then a bulk import changes it as a release does
 * (classes changed, descriptions added, concepts retired and added; map types changed, mappings
 * retired and added), v2 released. Each request is timed against the raw database sending the
 * statements the service sends, and against the floor of our stack (node:http sending the same
 * statements and writing the same bytes).
 */
export const title = '$compare and $changelog of two releases of a CIEL-scale source';

const ORG = 'COMPARE-BENCH';
const SOURCE = 'CIEL';
const SOURCE_PATH = `/orgs/${ORG}/sources/${SOURCE}/`;
const TARGET_MS = 2000;

/** What the release between v1 and v2 changes (every n-th concept or mapping of the source). */
const CHANGES = {
  conceptClass: 30,
  description: 60,
  retiredConcept: 200,
  newConcepts: 1000,
  mapType: 60,
  retiredMapping: 300,
  newMappings: 5000,
};

export async function run(): Promise<void> {
  const sizes = {
    concepts: envInt('BENCH_CONCEPTS', 60_000, 1),
    otherConcepts: envInt('BENCH_OTHER_CONCEPTS', 20_000, 0),
    mappings: envInt('BENCH_MAPPINGS', 500_000, 0),
    seed: envInt('BENCH_SEED', 20_251_121, 0),
  };
  const runs = envInt('BENCH_COMPARE_RUNS', 10, 1);
  const server = await startBenchServer();
  try {
    printMachine(server);
    print(
      `dataset:    org ${ORG}: ${sizes.concepts.toLocaleString('en-US')} concepts in ${SOURCE} ` +
        `(BENCH_CONCEPTS), ${sizes.mappings.toLocaleString('en-US')} mappings in all ` +
        `(BENCH_MAPPINGS), seed ${sizes.seed}; loading (bench/generate.ts):`,
    );
    const dict = await generateDictionary(server.databaseUrl, {
      ...sizes,
      org: ORG,
      username: ADMIN_USERNAME,
      log: print,
    });
    const token = await login(server, ADMIN_USERNAME, ADMIN_PASSWORD);
    await request(server, 'POST', `${SOURCE_PATH}versions/`, {
      token,
      body: { id: 'v1', released: true },
      status: 201,
    });
    const release = await changeAsARelease(server, token, dict);
    await request(server, 'POST', `${SOURCE_PATH}versions/`, {
      token,
      body: { id: 'v2', released: true },
      status: 201,
    });
    await settleTasks(server, token);
    print(
      `release:    v1 released; then one bulk import of ${release.lines.toLocaleString('en-US')} ` +
        `lines in ${release.seconds.toFixed(1)} s (${release.report}); v2 released`,
    );
    print(`parameters: ${runs} requests one at a time after 2 unmeasured (BENCH_COMPARE_RUNS)`);
    print('');
    await measure(server, token, runs);
  } finally {
    await server.stop();
  }
}

/** The lines a release's bulk import sends: every n-th concept or mapping changed. */
async function changeAsARelease(
  server: BenchServer,
  token: string,
  dict: GeneratedDictionary,
): Promise<{ lines: number; seconds: number; report: string }> {
  const owner = { owner: ORG, owner_type: 'Organization', source: SOURCE };
  const lines: object[] = [];
  const active = dict.concepts.filter((c) => !c.retired);
  active.forEach((c, i) => {
    const base = {
      type: 'Concept',
      ...owner,
      id: c.id,
      concept_class: c.conceptClass,
      datatype: c.datatype,
      names: c.names.map((n) => ({
        name: n.name,
        locale: n.locale,
        locale_preferred: n.preferred,
        name_type: n.nameType,
      })),
    };
    if (i % CHANGES.retiredConcept === 3) lines.push({ ...base, retired: true });
    else if (i % CHANGES.conceptClass === 0)
      lines.push({ ...base, concept_class: c.conceptClass === 'Misc' ? 'Finding' : 'Misc' });
    else if (i % CHANGES.description === 7)
      lines.push({ ...base, descriptions: [{ description: `Release note ${i}`, locale: 'en' }] });
  });
  for (let i = 0; i < CHANGES.newConcepts; i += 1) {
    lines.push({
      type: 'Concept',
      ...owner,
      id: `NEW-${i}`,
      concept_class: 'Finding',
      datatype: 'N/A',
      names: [{ name: `New finding ${i}`, locale: 'en', locale_preferred: true }],
    });
  }
  const db = new Client({ connectionString: server.databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{
      id: string;
      map_type: string;
      from_concept_code: string;
      to_source_url: string | null;
      to_concept_code: string | null;
    }>(
      `SELECT mv.mnemonic AS id, mv.map_type, mv.from_concept_code, mv.to_source_url,
         mv.to_concept_code
       FROM mapping_versions mv JOIN repositories r ON r.id = mv.repository_id
       WHERE r.mnemonic = $1 AND r.owner_org_id = (SELECT id FROM organizations WHERE mnemonic = $2)
         AND mv.valid_to_seq IS NULL AND NOT mv.retired
       ORDER BY mv.id`,
      [SOURCE, ORG],
    );
    rows.forEach((m, i) => {
      const changed = i % CHANGES.mapType === 0;
      const retired = i % CHANGES.retiredMapping === 11;
      if (!changed && !retired) return;
      lines.push({
        type: 'Mapping',
        ...owner,
        id: m.id,
        map_type: changed ? (m.map_type === 'SAME-AS' ? 'NARROWER-THAN' : 'SAME-AS') : m.map_type,
        from_concept_url: `${SOURCE_PATH}concepts/${m.from_concept_code}/`,
        to_source_url: m.to_source_url,
        to_concept_code: m.to_concept_code,
        ...(retired ? { retired: true } : {}),
      });
    });
  } finally {
    await db.end();
  }
  for (let i = 0; i < CHANGES.newMappings; i += 1) {
    const from = active[(i * 7919) % active.length].id;
    const to = active[(i * 104_729 + 1) % active.length].id;
    lines.push({
      type: 'Mapping',
      ...owner,
      id: `NEW-M-${i}`,
      map_type: 'SAME-AS',
      from_concept_url: `${SOURCE_PATH}concepts/${from}/`,
      to_concept_url: `${SOURCE_PATH}concepts/${to}/`,
    });
  }
  const started = performance.now();
  const headers = { Authorization: `Token ${token}` };
  const res = await fetch(`${server.url}/importers/bulk-import/?update_if_exists=true`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/x-ndjson' },
    body: lines.map((line) => JSON.stringify(line)).join('\n'),
  });
  const task = (await res.json()) as { id: string };
  if (res.status !== 202) throw new Error(`The import was refused: ${res.status}`);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const status = (await (
      await fetch(`${server.url}/importers/bulk-import/?task=${task.id}`, { headers })
    ).json()) as { state: string; error: string | null; report: Record<string, number> };
    if (status.state === 'FAILURE') throw new Error(`The import failed: ${status.error}`);
    if (status.state === 'SUCCESS') {
      const r = status.report;
      return {
        lines: lines.length,
        seconds: (performance.now() - started) / 1000,
        report: `${r.created} created, ${r.updated} updated, ${r.unchanged} unchanged, ${r.failed + r.invalid} refused`,
      };
    }
  }
}

interface Case {
  label: string;
  path: string;
  verbosity: number;
  changelog: boolean;
}

async function measure(server: BenchServer, token: string, runs: number): Promise<void> {
  const body = { version1: `${SOURCE_PATH}v1/`, version2: `${SOURCE_PATH}v2/` };
  const cases: Case[] = [
    {
      label: '$compare, counts (verbosity 0)',
      path: '/sources/$compare/?verbosity=0',
      verbosity: 0,
      changelog: false,
    },
    {
      label: '$compare, codes (verbosity 3)',
      path: '/sources/$compare/?verbosity=3',
      verbosity: 3,
      changelog: false,
    },
    {
      label: '$changelog (verbosity 3)',
      path: '/sources/$changelog/?verbosity=3',
      verbosity: 3,
      changelog: true,
    },
    {
      label: '$changelog, enriched + markdown (4)',
      path: '/sources/$changelog/?verbosity=4&output=markdown',
      verbosity: 4,
      changelog: true,
    },
  ];
  const headers = { Authorization: `Token ${token}`, 'Content-Type': 'application/json' };
  const inProcess = await openInProcess(server.databaseUrl);
  const client = new Client({ connectionString: server.databaseUrl });
  await client.connect();
  const statements = new Map<string, Statement[]>();
  try {
    for (const c of cases) {
      statements.set(
        c.path,
        await inProcess.statementsOf(
          (services, ctx) =>
            c.changelog
              ? services.versionComparisons.changelog(ctx, body)
              : services.versionComparisons.compare(ctx, body, { sameCodes: c.verbosity >= 3 }),
          `Token ${token}`,
        ),
      );
    }
    const floor = await forkFloor(
      server,
      cases.map((c) => c.path),
      headers,
      async (path) => statements.get(path)!,
      () => ({ method: 'POST', body: JSON.stringify(body) }),
    );
    const rows: string[][] = [];
    let summary = '';
    try {
      for (const c of cases) {
        const timed = async (base: string) => {
          const times: number[] = [];
          let bytes = 0;
          let text = '';
          const meter = await cpuMeter();
          for (let i = -2; i < runs; i += 1) {
            const started = performance.now();
            const res = await fetch(base + c.path, {
              method: 'POST',
              headers,
              body: JSON.stringify(body),
            });
            text = await res.text();
            if (res.status !== 200) throw new Error(`${c.path} answered ${res.status}: ${text}`);
            if (i >= 0) times.push(performance.now() - started);
            bytes = Buffer.byteLength(text);
          }
          const cpu = await meter();
          return { times, bytes, text, cpu };
        };
        const ours = await timed(server.url);
        const raw: number[] = [];
        const sent = statements.get(c.path)!;
        for (let i = -2; i < runs; i += 1) {
          const started = performance.now();
          for (const s of sent) await client.query(s.sql, s.parameters);
          if (i >= 0) raw.push(performance.now() - started);
        }
        const low = await timed(floor.url);
        const n = runs + 2;
        const p50 = percentile(ours.times, 0.5);
        rows.push([
          c.label,
          `${(ours.bytes / 1024).toFixed(0)} KiB`,
          p50.toFixed(0),
          percentile(ours.times, 0.95).toFixed(0),
          (((ours.cpu.server ?? 0) * 1000) / n).toFixed(0),
          (((ours.cpu.postgres ?? 0) * 1000) / n).toFixed(0),
          percentile(raw, 0.5).toFixed(0),
          `${(p50 / percentile(raw, 0.5)).toFixed(1)}×`,
          percentile(low.times, 0.5).toFixed(0),
          String(sent.length),
          p50 <= TARGET_MS ? 'met' : 'missed',
        ]);
        if (c.verbosity === 0 && !c.changelog) {
          const parsed = JSON.parse(ours.text) as {
            concepts: Record<string, number>;
            mappings: Record<string, number>;
          };
          summary =
            `the release: concepts new ${parsed.concepts.new}, retired ${parsed.concepts.changed_retired}, ` +
            `major ${parsed.concepts.changed_major}, minor ${parsed.concepts.changed_minor}; mappings new ` +
            `${parsed.mappings.new}, retired ${parsed.mappings.changed_retired}, major ` +
            `${parsed.mappings.changed_major}, minor ${parsed.mappings.changed_minor}`;
        }
      }
    } finally {
      await floor.stop();
    }
    print(summary);
    print('');
    printColumns(
      [
        'request',
        'answer',
        'p50 ms',
        'p95 ms',
        'server CPU ms',
        'pg CPU ms',
        'raw ms',
        'vs raw',
        'floor ms',
        'statements',
        `≤ ${TARGET_MS} ms`,
      ],
      rows,
    );
    print('');
    print(
      'raw: the statements the service sends for the request, sent one after the other by pg; ' +
        'floor: node:http sending them and writing the same bytes; CPU per request (server, PostgreSQL)',
    );
  } finally {
    await client.end();
    await inProcess.close();
  }
}
