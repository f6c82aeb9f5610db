import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import {
  ADMIN_PASSWORD,
  ADMIN_USERNAME,
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
 * POST /orgs/:org/sources/:source/versions/ on a source of 10 concepts and on one of 100,000:
 * a version stores the change number it froze and copies nothing, so both must take the same
 * time. Against the raw database doing the same work, and against what copying would cost.
 */
export const title =
  'Version creation: POST .../versions/ on 10 vs 100,000 concepts vs the raw database';

/** Every 20th concept and mapping is retired at change 2 (5%), the others stay as created. */
const RETIRE_EVERY = 20;
/** The repositories' change number once loaded: 1 created everything, 2 retired some. */
const HEAD_SEQ = 2;
/** Unmeasured versions created first (API and raw) on an empty source. */
const WARMUP_VERSIONS = 5;
/** Runs of the copy a copy-per-version design would make. */
const COPY_RUNS = 5;

interface SourceSpec {
  id: string;
  concepts: number;
  mappings: number;
}

const SOURCES: SourceSpec[] = [
  { id: 'SMALL', concepts: 10, mappings: 0 },
  { id: 'LARGE', concepts: 100_000, mappings: 50_000 },
];
const WARMUP: SourceSpec = { id: 'WARMUP', concepts: 0, mappings: 0 };

interface Source extends SourceSpec {
  /** repositories.id */
  repositoryId: string;
  activeConcepts: number;
  activeMappings: number;
}

/** Latencies in ms, one per version. */
interface Timings {
  apiCreate: number[];
  apiGet: number[];
  rawCreate: number[];
  rawCounts: number[];
}

/** What POST .../versions/ does in the database (design §4): lock, read head_seq, one row. */
const LOCK_HEAD = 'SELECT head_seq::text AS head_seq FROM repositories WHERE id = $1 FOR UPDATE';
const INSERT_VERSION = `
  INSERT INTO repository_versions (repository_id, mnemonic, seq, description, released,
    previous_version, metadata, created_by, updated_by)
  VALUES ($1, $2, $3, $4, false, $5, $6, $7, $7) RETURNING id::text AS id`;
/** Active content as a frozen version sees it: the rows whose interval holds its seq. */
const VERSION_COUNTS = `
  SELECT
    (SELECT count(*)::int FROM concept_versions c
      WHERE c.repository_id = v.repository_id AND c.valid_from_seq <= v.seq
        AND (c.valid_to_seq IS NULL OR c.valid_to_seq > v.seq) AND NOT c.retired) AS concepts,
    (SELECT count(*)::int FROM mapping_versions m
      WHERE m.repository_id = v.repository_id AND m.valid_from_seq <= v.seq
        AND (m.valid_to_seq IS NULL OR m.valid_to_seq > v.seq) AND NOT m.retired) AS mappings
  FROM repository_versions v WHERE v.id = $1`;

export async function run(): Promise<void> {
  const versions = envInt('BENCH_VERSIONS', 30, 1);
  // No task runs in the measured process: each new version queues its export, and the
  // 100,000-concept source's exports would run beside the requests being timed (the export
  // benchmark measures them).
  const server = await startBenchServer({ JOBS_WORKERS: '0' });
  try {
    const admin = await login(server, ADMIN_USERNAME, ADMIN_PASSWORD);
    const org = `bench-${crypto.randomBytes(3).toString('hex')}`;
    await request(server, 'POST', '/orgs/', {
      token: admin,
      body: { id: org, name: 'Version benchmark' },
      status: 201,
    });
    for (const spec of [WARMUP, ...SOURCES]) {
      await request(server, 'POST', `/orgs/${org}/sources/`, {
        token: admin,
        body: { id: spec.id, name: `${spec.id} source` },
        status: 201,
      });
    }

    const client = new Client({ connectionString: server.databaseUrl });
    await client.connect();
    try {
      const loadStarted = performance.now();
      const warmup = await loadSource(client, org, WARMUP);
      const sources: Source[] = [];
      for (const spec of SOURCES) sources.push(await loadSource(client, org, spec));
      await client.query('ANALYZE');
      const loadSeconds = (performance.now() - loadStarted) / 1000;

      printMachine(server);
      print(
        `parameters: ${versions} versions per source (BENCH_VERSIONS), one request at a time, ` +
          `the sources taking turns, after ${WARMUP_VERSIONS} unmeasured on an empty source`,
      );
      print(`database:   ${server.database}`);
      for (const s of sources) {
        print(
          `content:    ${s.id.padEnd(5)} ${count(s.concepts)} concepts (${count(s.activeConcepts)} ` +
            `active), ${count(s.mappings)} mappings (${count(s.activeMappings)} active), ` +
            `head_seq ${HEAD_SEQ}`,
        );
      }
      print(
        `load:       ${loadSeconds.toFixed(1)} s (set-based SQL: concepts, their versions, ` +
          `5% retired, mappings likewise, then ANALYZE)`,
      );
      print('');

      const timings = new Map<string, Timings>(
        sources.map((s) => [s.id, { apiCreate: [], apiGet: [], rawCreate: [], rawCounts: [] }]),
      );
      const at = (s: Source): Timings => timings.get(s.id)!;

      // Warm-up: both paths once through on a source with nothing in it.
      for (let i = 1; i <= WARMUP_VERSIONS; i += 1) {
        await apiCreate(server, admin, org, warmup, `warmup${i}`);
        await rawCreate(client, warmup, `raw-warmup${i}`, i > 1 ? `raw-warmup${i - 1}` : null);
      }

      for (let i = 1; i <= versions; i += 1) {
        for (const s of sources) {
          const { create, get } = await apiCreate(server, admin, org, s, `v${i}`);
          at(s).apiCreate.push(create);
          at(s).apiGet.push(get);
        }
      }
      for (let i = 1; i <= versions; i += 1) {
        for (const s of sources) {
          const { create, counts } = await rawCreate(
            client,
            s,
            `raw${i}`,
            i > 1 ? `raw${i - 1}` : null,
          );
          at(s).rawCreate.push(create);
          at(s).rawCounts.push(counts);
        }
      }
      const large = sources.find((s) => s.id === 'LARGE')!;
      const copies = await copyCost(client, large);

      printColumns(
        [
          'source',
          'concepts',
          'create p50 ms',
          'p95 ms',
          'mean ms',
          'raw create mean ms',
          'API/raw',
          'GET version p50 ms',
          'recount p50 ms',
        ],
        sources.map((s) => {
          const t = at(s);
          return [
            s.id,
            count(s.concepts),
            percentile(t.apiCreate, 0.5).toFixed(2),
            percentile(t.apiCreate, 0.95).toFixed(2),
            mean(t.apiCreate).toFixed(2),
            mean(t.rawCreate).toFixed(2),
            `${(mean(t.apiCreate) / mean(t.rawCreate)).toFixed(2)}×`,
            percentile(t.apiGet, 0.5).toFixed(2),
            percentile(t.rawCounts, 0.5).toFixed(2),
          ];
        }),
      );
      print('');
      const small = sources.find((s) => s.id === 'SMALL')!;
      const ratio = percentile(at(large).apiCreate, 0.5) / percentile(at(small).apiCreate, 0.5);
      print(`LARGE/SMALL create time ratio: ${ratio.toFixed(2)} (flat ≈ 1)`);
      const copy = percentile(copies, 0.5);
      print(
        `copy per version (OCL-style), LARGE: ${copy.toFixed(2)} ms to INSERT … SELECT the ` +
          `${count(large.concepts)} current concept_versions ids into a temp table (median of ` +
          `${COPY_RUNS}, rolled back), ${(copy / mean(at(large).rawCreate)).toFixed(0)}× the raw ` +
          `create`,
      );
      print('');
      print('create: POST .../versions/ {id, description, released: false} as the admin, 201');
      print('checked; its answer is the version detail, active_concepts and active_mappings');
      print('included. raw create: BEGIN; SELECT head_seq … FOR UPDATE; INSERT INTO');
      print(
        'repository_versions …; COMMIT on one pg client. GET version: GET .../:source/<version>/,',
      );
      print('active_concepts and active_mappings checked against the loaded content. recount:');
      print("counting the version's rows in SQL, the work the service avoids by keeping counts");
      print('(triggers on HEAD, frozen into each version). The ratio is of p50s.');
    } finally {
      await client.end();
    }
  } finally {
    await server.stop();
  }
}

/**
 * Content written directly (no concept API yet), set-based: every concept and mapping created at
 * change 1, every 20th retired at change 2 (its first version ended, a retired one begun).
 */
async function loadSource(client: Client, org: string, spec: SourceSpec): Promise<Source> {
  const { rows } = await client.query<{ id: string }>(
    `SELECT r.id::text AS id FROM repositories r JOIN organizations o ON o.id = r.owner_org_id
     WHERE o.mnemonic = $1 AND r.mnemonic = $2 AND r.kind = 'source'`,
    [org, spec.id],
  );
  assert.equal(rows.length, 1, `source ${spec.id} not found`);
  const repositoryId = rows[0].id;
  await client.query('BEGIN');
  try {
    for (const [content, prefix, total] of [
      ['concept', 'C', spec.concepts],
      ['mapping', 'M', spec.mappings],
    ] as const) {
      await client.query(
        `INSERT INTO ${content}s (repository_id, mnemonic)
         SELECT $1, '${prefix}' || g FROM generate_series(1, $2::int) g`,
        [repositoryId, total],
      );
      await client.query(
        `INSERT INTO ${content}_versions (${content}_id, repository_id, valid_from_seq)
         SELECT id, repository_id, 1 FROM ${content}s WHERE repository_id = $1`,
        [repositoryId],
      );
      await client.query(
        `WITH ended AS (
           UPDATE ${content}_versions cv SET valid_to_seq = 2
           FROM ${content}s x
           WHERE x.id = cv.${content}_id AND x.repository_id = $1 AND cv.valid_to_seq IS NULL
             AND substr(x.mnemonic, 2)::int % $2 = 0
           RETURNING cv.${content}_id AS content_id, cv.repository_id)
         INSERT INTO ${content}_versions (${content}_id, repository_id, valid_from_seq, retired)
         SELECT content_id, repository_id, 2, true FROM ended`,
        [repositoryId, RETIRE_EVERY],
      );
    }
    await client.query('UPDATE repositories SET head_seq = $2 WHERE id = $1', [
      repositoryId,
      HEAD_SEQ,
    ]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
  const active = (n: number): number => n - Math.floor(n / RETIRE_EVERY);
  return {
    ...spec,
    repositoryId,
    activeConcepts: active(spec.concepts),
    activeMappings: active(spec.mappings),
  };
}

/** POST a version, then GET it; both answers checked, both timed (ms). */
async function apiCreate(
  server: BenchServer,
  token: string,
  org: string,
  source: Source,
  version: string,
): Promise<{ create: number; get: number }> {
  const repoPath = `/orgs/${org}/sources/${source.id}/`;
  let started = performance.now();
  const created = await request(server, 'POST', `${repoPath}versions/`, {
    token,
    body: { id: version, description: `Benchmark version ${version}`, released: false },
    status: 201,
  });
  const create = performance.now() - started;
  checkVersion(created, source, version);
  started = performance.now();
  const fetched = await request(server, 'GET', `${repoPath}${version}/`, { token });
  const get = performance.now() - started;
  checkVersion(fetched, source, version);
  return { create, get };
}

function checkVersion(body: string, source: Source, version: string): void {
  const detail = JSON.parse(body) as Record<string, unknown>;
  assert.deepEqual(
    {
      id: detail.id,
      short_code: detail.short_code,
      active_concepts: detail.active_concepts,
      active_mappings: detail.active_mappings,
    },
    {
      id: version,
      short_code: source.id,
      active_concepts: source.activeConcepts,
      active_mappings: source.activeMappings,
    },
  );
}

/** The database work of a version creation in one transaction, then its counts; both timed. */
async function rawCreate(
  client: Client,
  source: Source,
  version: string,
  previous: string | null,
): Promise<{ create: number; counts: number }> {
  let started = performance.now();
  let versionId: string;
  await client.query('BEGIN');
  try {
    const head = await client.query<{ head_seq: string }>(LOCK_HEAD, [source.repositoryId]);
    const inserted = await client.query<{ id: string }>(INSERT_VERSION, [
      source.repositoryId,
      version,
      head.rows[0].head_seq,
      `Benchmark version ${version}`,
      previous,
      JSON.stringify(snapshot(source)),
      ADMIN_USERNAME,
    ]);
    versionId = inserted.rows[0].id;
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
  const create = performance.now() - started;
  started = performance.now();
  const { rows } = await client.query<{ concepts: number; mappings: number }>(VERSION_COUNTS, [
    versionId,
  ]);
  const counts = performance.now() - started;
  assert.deepEqual(rows, [{ concepts: source.activeConcepts, mappings: source.activeMappings }]);
  return { create, counts };
}

/** The metadata a version freezes (the shape of the service's snapshot). */
function snapshot(source: Source): Record<string, unknown> {
  return {
    name: `${source.id} source`,
    fullName: `${source.id} source`,
    description: null,
    website: null,
    externalId: null,
    publicAccess: 'View',
    defaultLocale: 'en',
    supportedLocales: ['en'],
    sourceType: 'dictionary',
    collectionType: null,
    preferredSource: null,
    customValidationSchema: null,
    canonicalUrl: null,
    extras: null,
  };
}

/** What a version costs when it copies its members: the current concept rows' ids, once each run. */
async function copyCost(client: Client, source: Source): Promise<number[]> {
  await client.query('CREATE TEMP TABLE version_members (concept_version_id bigint NOT NULL)');
  const times: number[] = [];
  try {
    for (let i = 0; i < COPY_RUNS; i += 1) {
      await client.query('BEGIN');
      try {
        const started = performance.now();
        const result = await client.query(
          `INSERT INTO version_members
           SELECT id FROM concept_versions WHERE repository_id = $1 AND valid_to_seq IS NULL`,
          [source.repositoryId],
        );
        times.push(performance.now() - started);
        assert.equal(result.rowCount, source.concepts);
      } finally {
        await client.query('ROLLBACK');
      }
    }
  } finally {
    await client.query('DROP TABLE version_members');
  }
  return times;
}

function mean(values: number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}
