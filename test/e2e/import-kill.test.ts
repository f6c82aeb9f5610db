import crypto from 'node:crypto';
import request from 'supertest';
import { sleep, workerWorld } from './server-process';

/**
 * A server process killed (SIGKILL) while its background task runs a bulk import (issue 13
 * part 4): every batch landed whole or not at all, the task ends FAILURE once its heartbeat is
 * known to have stopped, and importing the same file again creates only what had not landed,
 * reports the rest unchanged and duplicates nothing; the killed import does not hold its queue.
 */
const world = workerWorld('import-kill');

const SOURCES = ['A', 'B', 'C'];
const PER_SOURCE = 8000;
/** The importer's batch: consecutive concept lines of one source, at most this many. */
const BATCH = 2000;

/** An org, its sources, then each source's concepts (two names and a description each). */
function file(org: string): string {
  const lines: object[] = [
    { type: 'Organization', id: org, name: `Org ${org}` },
    ...SOURCES.map((id) => ({
      type: 'Source',
      id,
      name: id,
      owner: org,
      source_type: 'Dictionary',
    })),
  ];
  for (const source of SOURCES) {
    for (let n = 0; n < PER_SOURCE; n += 1) {
      lines.push({
        type: 'Concept',
        id: `${source}${n}`,
        owner: org,
        source,
        concept_class: 'Diagnosis',
        datatype: 'N/A',
        names: [
          { name: `Concept ${source} ${n}`, locale: 'en', locale_preferred: true },
          { name: `Concepto ${source} ${n}`, locale: 'es', locale_preferred: true },
        ],
        descriptions: [{ description: `About ${source} ${n}`, locale: 'en' }],
        extras: { n },
      });
    }
  }
  return lines.map((l) => JSON.stringify(l)).join('\n');
}

interface Status {
  state: string;
  report: {
    processed: number;
    created: number;
    unchanged: number;
    updated: number;
    failed: number;
    total: number;
  } | null;
}

async function status(taskId: string): Promise<Status> {
  const res = await request(world.app.app)
    .get(`/importers/bulk-import/?task=${taskId}`)
    .set('Authorization', world.app.admin);
  expect(res.status).toBe(200);
  return res.body as Status;
}

/** The status of an import whose worker was killed, once it reads FAILURE (within five seconds). */
async function failedSoon(taskId: string): Promise<Status> {
  let seen = await status(taskId);
  for (let i = 0; i < 50 && seen.state !== 'FAILURE'; i += 1) {
    await sleep(100);
    seen = await status(taskId);
  }
  expect(seen.state).toBe('FAILURE');
  return seen;
}

/** The import's status once it has ended (or the last one read, after five minutes). */
async function ended(taskId: string): Promise<Status> {
  let done = await status(taskId);
  for (let i = 0; i < 3000 && done.state !== 'SUCCESS' && done.state !== 'FAILURE'; i += 1) {
    await sleep(100);
    done = await status(taskId);
  }
  return done;
}

/**
 * The sizes of the import batches (`BATCH` consecutive lines, numbered after the id's first
 * character) that landed only in part: none when every batch landed whole or not at all.
 */
function partialBatches(rows: Array<{ mnemonic: string; source?: string }>): number[] {
  const perBatch = new Map<string, number>();
  for (const row of rows) {
    const key = `${row.source ?? ''}:${Math.floor(Number(row.mnemonic.slice(1)) / BATCH)}`;
    perBatch.set(key, (perBatch.get(key) ?? 0) + 1);
  }
  return [...perBatch.values()].filter((n) => n !== BATCH);
}

/** Into a named queue (one import of its user at a time): the killed one must not hold it. */
async function post(body: string): Promise<string> {
  const res = await request(world.app.app)
    .post('/importers/bulk-import/kill-test/')
    .set('Authorization', world.app.admin)
    .set('Content-Type', 'application/json')
    .send(body);
  expect(res.status).toBe(202);
  return res.body.id as string;
}

/** Concepts of the org's sources: per concept its versions, current ones and their names. */
async function landed(
  org: string,
): Promise<
  Array<{ source: string; mnemonic: string; versions: number; current: number; names: number }>
> {
  return world.app.dataSource.query(
    `SELECT r.mnemonic AS source, c.mnemonic,
       (SELECT count(*)::int FROM concept_versions v WHERE v.concept_id = c.id) AS versions,
       (SELECT count(*)::int FROM concept_versions v
         WHERE v.concept_id = c.id AND v.valid_to_seq IS NULL) AS current,
       coalesce((SELECT jsonb_array_length(v.names) FROM concept_versions v
         WHERE v.concept_id = c.id AND v.valid_to_seq IS NULL), 0) AS names
     FROM concepts c JOIN repositories r ON r.id = c.repository_id
     JOIN organizations o ON o.id = r.owner_org_id WHERE o.mnemonic = $1`,
    [org],
  );
}

test('a killed import leaves whole batches; it fails and the same file completes it', async () => {
  const org = `IMP${crypto.randomBytes(3).toString('hex')}`;
  const text = file(org);
  const total = 1 + SOURCES.length + SOURCES.length * PER_SOURCE;
  // Queued here (no workers in this process); the child takes it.
  const first = await post(text);
  await world.start();

  // Killed as soon as a batch of concepts has landed (read in the database, not from the report,
  // which is saved about once a second), well before the last.
  for (let i = 0; i < 6000 && (await landed(org)).length === 0; i += 1) await sleep(10);
  await world.kill();
  // Its process is gone: the task reads FAILURE within seconds, without waiting for a restart.
  const seen = await failedSoon(first);
  expect(seen.report?.processed ?? 0).toBeLessThan(total);

  // No partial batch: each batch of a source's lines landed whole or not at all, and every
  // concept has its one version with both of its names.
  const rows = await landed(org);
  expect(rows.length).toBeGreaterThanOrEqual(BATCH);
  expect(rows.length).toBeLessThan(SOURCES.length * PER_SOURCE);
  expect(partialBatches(rows)).toEqual([]);
  expect(rows.filter((r) => r.versions !== 1 || r.current !== 1 || r.names !== 2)).toEqual([]);

  // Recorded so in the database too.
  await world.start();
  const [task] = await world.app.dataSource.query<Array<{ state: string; error: string }>>(
    `SELECT state, error FROM tasks WHERE id = $1`,
    [first],
  );
  expect(task).toMatchObject({ state: 'FAILURE', error: expect.stringMatching(/stopped/) });
  expect(await status(first)).toMatchObject({ state: 'FAILURE' });

  // The same file again: what landed is unchanged (with the org and sources), the rest created.
  const done = await ended(await post(text));
  expect(done).toMatchObject({
    state: 'SUCCESS',
    report: {
      total,
      processed: total,
      unchanged: rows.length + 1 + SOURCES.length,
      created: SOURCES.length * PER_SOURCE - rows.length,
      updated: 0,
      failed: 0,
    },
  });
  const after = await landed(org);
  expect(after).toHaveLength(SOURCES.length * PER_SOURCE);
  expect(new Set(after.map((r) => `${r.source}:${r.mnemonic}`)).size).toBe(after.length);
  expect(after.filter((r) => r.versions !== 1 || r.current !== 1 || r.names !== 2)).toEqual([]);
  await world.finish();
}, 300_000);

/** An org, a source, its concepts, then mappings between them in whole batches of `BATCH`. */
const CONCEPTS = 2000;
const MAPPINGS = 8000;
const MAP_TYPES = ['SAME-AS', 'NARROWER-THAN', 'BROADER-THAN', 'Q-AND-A'];

function mappingFile(org: string): string {
  const lines: object[] = [
    { type: 'Organization', id: org, name: `Org ${org}` },
    { type: 'Source', id: 'M', name: 'M', owner: org, source_type: 'Dictionary' },
  ];
  for (let n = 0; n < CONCEPTS; n += 1) {
    lines.push({
      type: 'Concept',
      id: `C${n}`,
      owner: org,
      source: 'M',
      concept_class: 'Diagnosis',
      datatype: 'N/A',
      names: [{ name: `Concept ${n}`, locale: 'en', locale_preferred: true }],
    });
  }
  for (let n = 0; n < MAPPINGS; n += 1) {
    lines.push({
      type: 'Mapping',
      id: `M${n}`,
      owner: org,
      source: 'M',
      map_type: MAP_TYPES[Math.floor(n / CONCEPTS)],
      from_concept_url: `/orgs/${org}/sources/M/concepts/C${n % CONCEPTS}/`,
      to_concept_url: `/orgs/${org}/sources/M/concepts/C${(n * 7 + 1) % CONCEPTS}/`,
    });
  }
  return lines.map((l) => JSON.stringify(l)).join('\n');
}

/** Mappings of the org's source: per mapping its versions and current ones. */
async function landedMappings(
  org: string,
): Promise<Array<{ mnemonic: string; versions: number; current: number; ends: number }>> {
  return world.app.dataSource.query(
    `SELECT m.mnemonic,
       (SELECT count(*)::int FROM mapping_versions v WHERE v.mapping_id = m.id) AS versions,
       (SELECT count(*)::int FROM mapping_versions v
         WHERE v.mapping_id = m.id AND v.valid_to_seq IS NULL) AS current,
       (SELECT count(*)::int FROM mapping_versions v WHERE v.mapping_id = m.id
         AND v.from_concept_id IS NOT NULL AND v.to_concept_id IS NOT NULL) AS ends
     FROM mappings m JOIN repositories r ON r.id = m.repository_id
     JOIN organizations o ON o.id = r.owner_org_id WHERE o.mnemonic = $1`,
    [org],
  );
}

test('a killed import of mappings leaves whole batches; the same file completes it', async () => {
  const org = `MAP${crypto.randomBytes(3).toString('hex')}`;
  const text = mappingFile(org);
  const total = 2 + CONCEPTS + MAPPINGS;
  const first = await post(text);
  await world.start();
  for (let i = 0; i < 6000 && (await landedMappings(org)).length === 0; i += 1) await sleep(10);
  await world.kill();

  const rows = await landedMappings(org);
  expect(rows.length).toBeGreaterThanOrEqual(BATCH);
  expect(rows.length).toBeLessThan(MAPPINGS);
  expect(partialBatches(rows)).toEqual([]);
  // Each landed mapping has its one version, both ends resolved to the batch before's concepts.
  expect(rows.filter((r) => r.versions !== 1 || r.current !== 1 || r.ends !== 1)).toEqual([]);

  await failedSoon(first);
  await world.start();
  const done = await ended(await post(text));
  expect(done).toMatchObject({
    state: 'SUCCESS',
    report: {
      total,
      processed: total,
      unchanged: rows.length + CONCEPTS + 2,
      created: MAPPINGS - rows.length,
      updated: 0,
      failed: 0,
    },
  });
  const after = await landedMappings(org);
  expect(after).toHaveLength(MAPPINGS);
  expect(after.filter((r) => r.versions !== 1 || r.current !== 1 || r.ends !== 1)).toEqual([]);
  await world.finish();
}, 300_000);
