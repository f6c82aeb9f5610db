import http from 'node:http';
import request from 'supertest';
import { createLogger } from '../../src/logger';
import type { ImportReport } from '../../src/services';
import {
  createOrg,
  createTestApp,
  createUser,
  uniqueId,
  type TestApp,
  type TestUser,
} from '../factories';
import { createConcept, createSource } from '../factories/content';

let t: TestApp;
let owner: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  owner = await createUser(t);
});
afterAll(async () => {
  await t.close();
});

const jsonl = (lines: unknown[]): string => lines.map((l) => JSON.stringify(l)).join('\n');

/** Posts a file as the raw body; answers the task id once accepted (202). */
async function start(
  auth: string,
  body: string,
  query = '',
  path = '/importers/bulk-import/',
): Promise<string> {
  const res = await request(t.app)
    .post(`${path}${query}`)
    .set('Authorization', auth)
    .set('Content-Type', 'application/json')
    .send(body);
  if (res.status !== 202)
    throw new Error(`import refused: ${res.status} ${JSON.stringify(res.body)}`);
  expect(res.headers.location).toBe(`/tasks/${res.body.id}/`);
  return res.body.id as string;
}

/** The import's state and report once it has ended. */
async function finished(
  auth: string,
  taskId: string,
): Promise<{ state: string; error: string | null; report: ImportReport }> {
  for (let i = 0; i < 600; i += 1) {
    const res = await request(t.app)
      .get(`/importers/bulk-import/?task=${taskId}`)
      .set('Authorization', auth);
    expect(res.status).toBe(200);
    const body = res.body as { state: string; error: string | null; report: ImportReport };
    if (body.state === 'SUCCESS' || body.state === 'FAILURE') return body;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the import did not finish');
}

async function importLines(auth: string, lines: unknown[], query = ''): Promise<ImportReport> {
  const done = await finished(auth, await start(auth, jsonl(lines), query));
  expect(done.state).toBe('SUCCESS');
  return done.report;
}

const concept = (org: string, source: string, id: string, extra: Record<string, unknown> = {}) => ({
  type: 'Concept',
  owner: org,
  owner_type: 'Organization',
  source,
  id,
  concept_class: 'Diagnosis',
  datatype: 'N/A',
  names: [
    { name: `Name ${id}`, locale: 'en', locale_preferred: true, name_type: 'Fully Specified' },
  ],
  ...extra,
});
const mapping = (
  org: string,
  source: string,
  id: string | undefined,
  from: string,
  to: string,
) => ({
  type: 'Mapping',
  owner: org,
  source,
  ...(id ? { id } : {}),
  map_type: 'SAME-AS',
  from_concept_url: `/orgs/${org}/sources/${source}/concepts/${from}/`,
  to_concept_url: `/orgs/${org}/sources/${source}/concepts/${to}/`,
});

async function conceptVersions(sourceUrl: string, id: string, auth = owner.auth) {
  const res = await request(t.app)
    .get(`${sourceUrl}concepts/${id}/versions/`)
    .set('Authorization', auth);
  return res;
}

describe('POST /importers/bulk-import/ (JSON lines)', () => {
  test('imports an org, a source, concepts, mappings and a version, and reports each count', async () => {
    const org = uniqueId('org');
    const lines = [
      { type: 'Organization', id: org, name: 'Imported org' },
      { type: 'Source', id: 'S', owner: org, owner_type: 'Organization', name: 'Imported source' },
      concept(org, 'S', 'A'),
      concept(org, 'S', 'B', { extras: { units: 'mg' } }),
      mapping(org, 'S', 'M1', 'A', 'B'),
      { type: 'Source Version', id: 'v1', owner: org, source: 'S', description: 'first' },
    ];
    const report = await importLines(owner.auth, lines);
    expect(report).toMatchObject({
      total: 6,
      processed: 6,
      created: 6,
      updated: 0,
      unchanged: 0,
      invalid: 0,
      failed: 0,
      failures: [],
    });
    expect(report.elapsed_seconds).toBeGreaterThanOrEqual(0);
    const b = await request(t.app)
      .get(`/orgs/${org}/sources/S/v1/concepts/B/`)
      .set('Authorization', owner.auth);
    expect(b.status).toBe(200);
    expect(b.body.extras).toEqual({ units: 'mg' });
    const m = await request(t.app)
      .get(`/orgs/${org}/sources/S/mappings/M1/`)
      .set('Authorization', owner.auth);
    expect(m.status).toBe(200);
    expect(m.body.from_concept_code).toBe('A');
    expect(m.body.to_concept_name_resolved ?? m.body.to_concept_code).toBeTruthy();
  });

  test('writes what the API writes: the same checksums as a concept created through the API', async () => {
    const source = await createSource(t, {}, { owner });
    const body = concept(source.org, 'S', 'X1', {
      descriptions: [{ description: 'd', locale: 'en' }],
    });
    await importLines(owner.auth, [body]);
    const fields: Record<string, unknown> = { ...body };
    for (const key of ['type', 'owner', 'owner_type', 'source']) delete fields[key];
    await createConcept(t, source.url, owner, { ...fields, id: 'X2' });
    const [x1, x2] = await Promise.all(
      ['X1', 'X2'].map((id) =>
        request(t.app).get(`${source.url}concepts/${id}/`).set('Authorization', owner.auth),
      ),
    );
    expect(x1.body.checksums.smart).toBeDefined();
    // The id is not part of the checksums (spec core §3): the same content has the same sums.
    expect(x1.body.checksums).toEqual(x2.body.checksums);
  });

  test('a second import of the same file reports everything unchanged and writes nothing', async () => {
    const source = await createSource(t, {}, { owner });
    const lines = [
      concept(source.org, 'S', 'A'),
      concept(source.org, 'S', 'B'),
      mapping(source.org, 'S', 'M1', 'A', 'B'),
      mapping(source.org, 'S', undefined, 'B', 'A'),
    ];
    expect(await importLines(owner.auth, lines)).toMatchObject({ created: 4 });
    const again = await importLines(owner.auth, lines);
    expect(again).toMatchObject({ total: 4, created: 0, updated: 0, unchanged: 4, failures: [] });
    expect((await conceptVersions(source.url, 'A')).body).toHaveLength(1);
    const mappings = await request(t.app)
      .get(`${source.url}mappings/?limit=0`)
      .set('Authorization', owner.auth);
    expect(mappings.body).toHaveLength(2);
  });

  test('an edited line makes a new version (updated); update_if_exists=false reports it exists', async () => {
    const source = await createSource(t, {}, { owner });
    await importLines(owner.auth, [concept(source.org, 'S', 'A')]);
    const edited = concept(source.org, 'S', 'A', { datatype: 'Numeric' });
    expect(await importLines(owner.auth, [edited], '?update_if_exists=false')).toMatchObject({
      exists: 1,
      updated: 0,
      failures: [{ line: 1, type: 'Concept', id: 'A', outcome: 'exists' }],
    });
    expect(await importLines(owner.auth, [edited])).toMatchObject({ updated: 1 });
    const versions = (await conceptVersions(source.url, 'A')).body as Array<{ datatype: string }>;
    expect(versions.map((v) => v.datatype)).toEqual(['Numeric', 'N/A']);
  });

  test('CREATE of an existing concept is `exists`; UPDATE and DELETE of a missing one `not_found`', async () => {
    const source = await createSource(t, {}, { owner });
    await importLines(owner.auth, [concept(source.org, 'S', 'A')]);
    const report = await importLines(owner.auth, [
      { ...concept(source.org, 'S', 'A'), __action: 'CREATE' },
      { ...concept(source.org, 'S', 'Z'), __action: 'UPDATE' },
      { type: 'Concept', owner: source.org, source: 'S', id: 'Y', __action: 'DELETE' },
    ]);
    expect(report).toMatchObject({ exists: 1, not_found: 2, created: 0 });
    expect(
      (await request(t.app).get(`${source.url}concepts/Z/`).set('Authorization', owner.auth))
        .status,
    ).toBe(404);
  });

  test('DELETE retires concepts and mappings (a new, retired version); a second DELETE is unchanged', async () => {
    const source = await createSource(t, {}, { owner });
    await importLines(owner.auth, [
      concept(source.org, 'S', 'A'),
      concept(source.org, 'S', 'B'),
      mapping(source.org, 'S', 'M1', 'A', 'B'),
    ]);
    const deletes = [
      { type: 'Mapping', owner: source.org, source: 'S', id: 'M1', __action: 'DELETE' },
      { type: 'Concept', owner: source.org, source: 'S', id: 'A', __action: 'DELETE' },
    ];
    expect(await importLines(owner.auth, deletes)).toMatchObject({ deleted: 2 });
    const a = await request(t.app).get(`${source.url}concepts/A/`).set('Authorization', owner.auth);
    expect(a.body.retired).toBe(true);
    const m = await request(t.app)
      .get(`${source.url}mappings/M1/`)
      .set('Authorization', owner.auth);
    expect(m.body.retired).toBe(true);
    expect(await importLines(owner.auth, deletes)).toMatchObject({ deleted: 0, unchanged: 2 });
  });

  test('bad lines are reported one by one with their reason; the good lines are written', async () => {
    const source = await createSource(t, {}, { owner });
    const text = [
      JSON.stringify(concept(source.org, 'S', 'A')),
      '{not json',
      JSON.stringify({ type: 'Spaceship', id: 'x' }),
      JSON.stringify({ ...concept(source.org, 'S', 'B'), names: [] }),
      JSON.stringify({ ...concept(source.org, 'S', 'C'), __action: 'MAYBE' }),
      JSON.stringify(concept(source.org, 'S', 'D')),
      JSON.stringify({ ...mapping(source.org, 'S', 'M1', 'A', 'D'), map_type: '' }),
      JSON.stringify(mapping(source.org, 'S', 'M2', 'A', 'D')),
      JSON.stringify(mapping(source.org, 'S', 'M3', 'A', 'D')),
      '[1, 2]',
    ].join('\n');
    const { state, report } = await finished(owner.auth, await start(owner.auth, text));
    expect(state).toBe('SUCCESS');
    expect(report).toMatchObject({ total: 10, processed: 10, created: 3, invalid: 7, failed: 0 });
    const reasons = Object.fromEntries(report.failures.map((f) => [f.line, f.reason]));
    expect(Object.keys(reasons).map(Number)).toEqual([2, 3, 4, 5, 7, 9, 10]);
    expect(reasons[2]).toMatch(/not valid JSON/);
    expect(reasons[3]).toMatch(/'type' must be one of/);
    expect(reasons[4]).toMatch(/at least one name/);
    expect(reasons[5]).toMatch(/__action/);
    expect(reasons[7]).toMatch(/map_type|mapType|required/i);
    expect(reasons[9]).toMatch(/Mapping 'M2' already maps these ends/);
    expect(reasons[10]).toMatch(/JSON object/);
    const list = await request(t.app)
      .get(`${source.url}concepts/?limit=0`)
      .set('Authorization', owner.auth);
    expect((list.body as Array<{ id: string }>).map((c) => c.id).sort()).toEqual(['A', 'D']);
  });

  test('a refused character in a line makes that line invalid', async () => {
    const source = await createSource(t, {}, { owner });
    const report = await importLines(owner.auth, [concept(source.org, 'S', 'A\u0000')]);
    expect(report).toMatchObject({ invalid: 1, created: 0 });
    expect(report.failures[0].reason).toMatch(/invalid character/);
  });

  test('lines for a private source of others are permission_denied and write nothing', async () => {
    const source = await createSource(t, { public_access: 'None' }, { owner });
    const stranger = await createUser(t);
    const report = await importLines(stranger.auth, [
      concept(source.org, 'S', 'A'),
      concept(source.org, 'S', 'B'),
      { type: 'Source Version', id: 'v9', owner: source.org, source: 'S' },
    ]);
    expect(report.created).toBe(0);
    expect(report.permission_denied + report.not_found).toBe(3);
    expect(report.failures.map((f) => f.line)).toEqual([1, 2, 3]);
    const list = await request(t.app)
      .get(`${source.url}concepts/?limit=0`)
      .set('Authorization', owner.auth);
    expect(list.body).toEqual([]);
  });

  test('lines for a public source the caller may not edit are permission_denied', async () => {
    const source = await createSource(t, { public_access: 'View' }, { owner });
    const stranger = await createUser(t);
    const report = await importLines(stranger.auth, [concept(source.org, 'S', 'A')]);
    expect(report).toMatchObject({ permission_denied: 1, created: 0 });
  });

  test('parallel imports into the same source create each concept and mapping once', async () => {
    const source = await createSource(t, {}, { owner });
    const lines = [
      ...Array.from({ length: 30 }, (_, i) => concept(source.org, 'S', `C${i}`)),
      ...Array.from({ length: 29 }, (_, i) =>
        mapping(source.org, 'S', undefined, `C${i}`, `C${i + 1}`),
      ),
    ];
    const tasks = await Promise.all([0, 1, 2].map(() => start(owner.auth, jsonl(lines))));
    const reports = await Promise.all(tasks.map((id) => finished(owner.auth, id)));
    for (const r of reports) expect(r.state).toBe('SUCCESS');
    expect(reports.reduce((n, r) => n + r.report.created, 0)).toBe(59);
    expect(reports.reduce((n, r) => n + r.report.unchanged, 0)).toBe(59 * 2);
    const concepts = await request(t.app)
      .get(`${source.url}concepts/?limit=0`)
      .set('Authorization', owner.auth);
    expect(concepts.body).toHaveLength(30);
    const mappings = await request(t.app)
      .get(`${source.url}mappings/?limit=0`)
      .set('Authorization', owner.auth);
    expect(mappings.body).toHaveLength(29);
  });

  test('across batches drafted ahead: mapping ends find the concepts of earlier batches, the ends rule holds file-wide, and re-import is unchanged', async () => {
    const source = await createSource(t, {}, { owner });
    const n = 4100; // three batches of concepts, three of mappings
    const lines = [
      ...Array.from({ length: n }, (_, i) => concept(source.org, 'S', `C${i}`)),
      ...Array.from({ length: n - 1 }, (_, i) =>
        mapping(source.org, 'S', `M${i}`, `C${i}`, `C${i + 1}`),
      ),
      // The ends of M5, in a later batch: refused, naming M5.
      mapping(source.org, 'S', 'DUP', 'C5', 'C6'),
      // Without an id: the mapping with these ends (M2000, a batch earlier) is meant.
      mapping(source.org, 'S', undefined, 'C2000', 'C2001'),
    ];
    const report = await importLines(owner.auth, lines);
    expect(report).toMatchObject({ total: 2 * n + 1, processed: 2 * n + 1, created: 2 * n - 1 });
    expect(report).toMatchObject({ invalid: 1, unchanged: 1, failed: 0 });
    expect(report.failures).toEqual([
      expect.objectContaining({
        id: 'DUP',
        outcome: 'invalid',
        reason: expect.stringContaining("'M5'"),
      }),
    ]);
    const [ends] = await t.dataSource.query(
      `SELECT count(*)::int AS mappings, count(mv.from_concept_id)::int AS from_ids,
         count(mv.to_concept_id)::int AS to_ids,
         (SELECT active_mappings FROM repositories WHERE id = r.id) AS active
       FROM mapping_versions mv JOIN repositories r ON r.id = mv.repository_id
       WHERE r.mnemonic = 'S' AND mv.valid_to_seq IS NULL
         AND r.owner_org_id = (SELECT id FROM organizations WHERE mnemonic = $1)
       GROUP BY r.id`,
      [source.org],
    );
    expect(ends).toEqual({ mappings: n - 1, from_ids: n - 1, to_ids: n - 1, active: n - 1 });
    const again = await importLines(owner.auth, lines);
    expect(again).toMatchObject({ created: 0, updated: 0, unchanged: 2 * n, invalid: 1 });
  });

  test('a source assigning ids numbers concepts and mappings sent without one', async () => {
    const source = await createSource(
      t,
      { autoid_concept_mnemonic: 'sequential', autoid_concept_mnemonic_start_from: 100 },
      { owner },
    );
    const noId: Record<string, unknown> = concept(source.org, 'S', 'x');
    delete noId.id;
    const report = await importLines(owner.auth, [
      noId,
      noId,
      { ...noId, names: [{ name: 'Other', locale: 'en' }] },
    ]);
    expect(report.created).toBe(3);
    const list = await request(t.app)
      .get(`${source.url}concepts/?limit=0`)
      .set('Authorization', owner.auth);
    expect((list.body as Array<{ id: string }>).map((c) => c.id).sort()).toEqual([
      '100',
      '101',
      '102',
    ]);
  });

  test('a batch that fails in the database writes none of its lines, and the file can be run again', async () => {
    const source = await createSource(t, {}, { owner });
    const fn = uniqueId('boom').replace(/-/g, '_');
    await t.dataSource.query(
      `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN IF NEW.mnemonic = 'BOOM' THEN RAISE EXCEPTION 'simulated crash'; END IF; RETURN NEW; END $$`,
    );
    await t.dataSource.query(
      `CREATE TRIGGER ${fn} BEFORE INSERT ON concept_versions FOR EACH ROW EXECUTE FUNCTION ${fn}()`,
    );
    const lines = ['A', 'B', 'BOOM', 'C'].map((id) => concept(source.org, 'S', id));
    try {
      const report = await importLines(owner.auth, lines);
      expect(report).toMatchObject({ created: 0, failed: 4 });
      const list = await request(t.app)
        .get(`${source.url}concepts/?limit=0`)
        .set('Authorization', owner.auth);
      expect(list.body).toEqual([]);
      const rows = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM concepts c JOIN repositories r ON r.id = c.repository_id
         WHERE r.mnemonic = 'S' AND c.mnemonic IN ('A', 'B', 'BOOM', 'C')
           AND r.owner_org_id = (SELECT id FROM organizations WHERE mnemonic = $1)`,
        [source.org],
      );
      expect(rows[0].n).toBe(0);
    } finally {
      await t.dataSource.query(`DROP TRIGGER ${fn} ON concept_versions`);
      await t.dataSource.query(`DROP FUNCTION ${fn}()`);
    }
    expect(await importLines(owner.auth, lines)).toMatchObject({ created: 4 });
  });
});

describe('bulk import: files and records left behind', () => {
  const fileOf = async (taskId: string): Promise<{ content: string | null } | undefined> => {
    const rows = await t.dataSource.query<Array<{ content: string | null }>>(
      `SELECT content FROM bulk_imports WHERE task_id = $1`,
      [taskId],
    );
    return rows[0];
  };

  test("a new import drops a killed import's file, and the record of one whose task was deleted", async () => {
    const source = await createSource(t, {}, { owner });
    const one = (id: string) => jsonl([concept(source.org, 'S', id)]);
    const killed = await start(owner.auth, one('A'));
    const running = await start(owner.auth, one('B'));
    const deleted = await start(owner.auth, one('C'));
    for (const id of [killed, running, deleted]) await finished(owner.auth, id);
    expect(await fileOf(killed)).toEqual({ content: null });
    // As a process killed mid-import leaves them: the file kept, the task recorded FAILURE by
    // the queue's sweep (or still STARTED until then); and a record whose task was pruned.
    await t.dataSource.query(`UPDATE bulk_imports SET content = 'kept' WHERE task_id = ANY($1)`, [
      [killed, running],
    ]);
    await t.dataSource.query(`UPDATE tasks SET state = 'FAILURE' WHERE id = $1`, [killed]);
    await t.dataSource.query(
      `UPDATE tasks SET state = 'STARTED', heartbeat_at = now(), finished_at = NULL WHERE id = $1`,
      [running],
    );
    await t.dataSource.query(`DELETE FROM tasks WHERE id = $1`, [deleted]);
    const next = await start(owner.auth, one('D'));
    expect(await fileOf(killed)).toEqual({ content: null });
    expect(await fileOf(running)).toEqual({ content: 'kept' });
    expect(await fileOf(deleted)).toBeUndefined();
    expect((await finished(owner.auth, next)).report).toMatchObject({ created: 1 });
    await t.dataSource.query(`UPDATE tasks SET state = 'FAILURE' WHERE id = $1`, [running]);
  });
});

describe('bulk import: other inputs and controls', () => {
  test('a multipart `file` is imported like a raw body', async () => {
    const source = await createSource(t, {}, { owner });
    const res = await request(t.app)
      .post('/importers/bulk-import/')
      .set('Authorization', owner.auth)
      .attach('file', Buffer.from(jsonl([concept(source.org, 'S', 'A')])), 'dictionary.json');
    expect(res.status).toBe(202);
    const done = await finished(owner.auth, res.body.id);
    expect(done.report).toMatchObject({ created: 1 });
  });

  test('CSV with attr:<name>:<type> columns makes typed extras; a bad typed value is an invalid row', async () => {
    const source = await createSource(t, {}, { owner });
    const csv = [
      'resource_type,id,owner,source,concept_class,name,locale,attr:hi:float,attr:is_set:bool,attr:count:int,attr:tags:list,attr:meta:json,attr:code:str,attr:guess',
      `Concept,A,${source.org},S,Test,Alpha,en,2.5,true,7,"a,b","{""k"":1}",007,[1]`,
      `Concept,B,${source.org},S,Test,Beta,en,x,false,1,,,,12`,
      `Concept,C,${source.org},S,Test,Gamma,en,,,,,,,true`,
    ].join('\n');
    const res = await request(t.app)
      .post('/importers/bulk-import/?format=csv')
      .set('Authorization', owner.auth)
      .set('Content-Type', 'text/csv')
      .send(csv);
    expect(res.status).toBe(202);
    const { report } = await finished(owner.auth, res.body.id);
    expect(report).toMatchObject({ total: 3, created: 2, invalid: 1 });
    expect(report.failures[0]).toMatchObject({ line: 3, outcome: 'invalid' });
    expect(report.failures[0].reason).toMatch(/attr:hi:float.*not a number/);
    const a = await request(t.app).get(`${source.url}concepts/A/`).set('Authorization', owner.auth);
    expect(a.body.extras).toEqual({
      hi: 2.5,
      is_set: true,
      count: 7,
      tags: ['a', 'b'],
      meta: { k: 1 },
      code: '007',
      guess: [1],
    });
    expect(a.body.display_name).toBe('Alpha');
    const c = await request(t.app).get(`${source.url}concepts/C/`).set('Authorization', owner.auth);
    expect(c.body.extras).toEqual({ guess: true });
  });

  test('CSV mappings are imported too', async () => {
    const source = await createSource(t, {}, { owner });
    await importLines(owner.auth, [concept(source.org, 'S', 'A'), concept(source.org, 'S', 'B')]);
    const csv = [
      'resource_type,id,owner,source,map_type,from_concept_url,to_concept_url,attr:weight',
      `Mapping,M1,${source.org},S,SAME-AS,/orgs/${source.org}/sources/S/concepts/A/,/orgs/${source.org}/sources/S/concepts/B/,3`,
    ].join('\n');
    const taskId = (
      await request(t.app)
        .post('/importers/bulk-import/')
        .set('Authorization', owner.auth)
        .set('Content-Type', 'text/csv')
        .send(csv)
    ).body.id as string;
    expect((await finished(owner.auth, taskId)).report).toMatchObject({ created: 1 });
    const m = await request(t.app)
      .get(`${source.url}mappings/M1/`)
      .set('Authorization', owner.auth);
    expect(m.body.extras).toEqual({ weight: 3 });
  });

  test('refuses an empty body, file_url when no host is allowed, and callers without credentials', async () => {
    const empty = await request(t.app)
      .post('/importers/bulk-import/')
      .set('Authorization', owner.auth)
      .set('Content-Type', 'text/plain')
      .send('  ');
    expect(empty.status).toBe(400);
    const url = await request(t.app)
      .post('/importers/bulk-import/')
      .set('Authorization', owner.auth)
      .send({ file_url: 'http://example.org/ciel.json' });
    expect(url.status).toBe(400);
    expect(url.body.message).toMatch(/IMPORT_FILE_URL_HOSTS/);
    const anonymous = await request(t.app)
      .post('/importers/bulk-import/')
      .set('Content-Type', 'text/plain')
      .send('{}');
    expect(anonymous.status).toBe(401);
    const format = await request(t.app)
      .post('/importers/bulk-import/?format=xml')
      .set('Authorization', owner.auth)
      .send('{}');
    expect(format.status).toBe(400);
  });

  test('the status is the task with its report; another user gets 404; ?task is required', async () => {
    const source = await createSource(t, {}, { owner });
    const id = await start(owner.auth, jsonl([concept(source.org, 'S', 'A')]));
    await finished(owner.auth, id);
    const stranger = await createUser(t);
    expect(
      (
        await request(t.app)
          .get(`/importers/bulk-import/?task=${id}`)
          .set('Authorization', stranger.auth)
      ).status,
    ).toBe(404);
    expect(
      (await request(t.app).get('/importers/bulk-import/').set('Authorization', owner.auth)).status,
    ).toBe(400);
    const task = await request(t.app).get(`/tasks/${id}/`).set('Authorization', owner.auth);
    expect(task.body).toMatchObject({
      state: 'SUCCESS',
      task: 'bulk-import',
      progress: { done: 1, total: 1 },
    });
    expect(task.body.result).toMatchObject({ created: 1, total: 1 });
  });

  test('a named queue takes one import of its user at a time (409 Already Queued)', async () => {
    const source = await createSource(t, {}, { owner });
    const queue = uniqueId('q');
    const big = jsonl(Array.from({ length: 3000 }, (_, i) => concept(source.org, 'S', `Q${i}`)));
    const first = await start(owner.auth, big, '', `/importers/bulk-import/${queue}/`);
    const second = await request(t.app)
      .post(`/importers/bulk-import/${queue}/`)
      .set('Authorization', owner.auth)
      .set('Content-Type', 'application/json')
      .send(big);
    expect(second.status).toBe(409);
    expect(second.body.message).toBe('Already Queued');
    expect((await finished(owner.auth, first)).state).toBe('SUCCESS');
  });

  test('DELETE cancels an import: it stops between batches, FAILURE, what committed stays', async () => {
    const source = await createSource(t, {}, { owner });
    const lines = Array.from({ length: 5000 }, (_, i) => concept(source.org, 'S', `K${i}`));
    const id = await start(owner.auth, jsonl(lines));
    const cancel = await request(t.app)
      .delete('/importers/bulk-import/')
      .set('Authorization', owner.auth)
      .send({ task_id: id });
    expect(cancel.status).toBe(204);
    const done = await finished(owner.auth, id);
    expect(done.state).toBe('FAILURE');
    expect(done.error).toMatch(new RegExp(`Cancelled by ${owner.username}`));
    expect(done.report.processed).toBeLessThan(5000);
    const list = await request(t.app)
      .get(`${source.url}concepts/?limit=0`)
      .set('Authorization', owner.auth);
    expect(list.body).toHaveLength(done.report.created);
    const again = await request(t.app)
      .delete(`/importers/bulk-import/?task=${id}`)
      .set('Authorization', owner.auth);
    expect(again.status).toBe(400);
  });

  test('a superuser imports users and orgs; a normal user may not create users', async () => {
    const username = uniqueId('imported');
    const lines = [
      {
        type: 'User',
        username,
        name: 'Imported',
        email: `${username}@example.org`,
        password: 'pw-123456789',
      },
    ];
    expect(await importLines(t.admin, lines)).toMatchObject({ created: 1 });
    const other = uniqueId('imported');
    const denied = await importLines(owner.auth, [
      { ...lines[0], username: other, email: `${other}@example.org` },
    ]);
    expect(denied).toMatchObject({ permission_denied: 1, created: 0 });
    const org = (await createOrg(t, owner)).id;
    expect(
      await importLines(owner.auth, [{ type: 'Organization', id: org, name: 'Renamed' }]),
    ).toMatchObject({ updated: 1 });
  });
});

describe('bulk import: hostile files and file_url', () => {
  test('binary, NUL and deeply nested input is refused or reported invalid, never a 500', async () => {
    const nul = await request(t.app)
      .post('/importers/bulk-import/')
      .set('Authorization', owner.auth)
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from([0x7b, 0x00, 0xff, 0xfe]));
    expect(nul.status).toBe(400);
    expect(nul.body.message).toMatch(/NUL/);
    const deep = `${'['.repeat(100)}${']'.repeat(100)}`;
    const nested = {
      type: 'Concept',
      owner: 'x',
      source: 'S',
      id: 'A',
      extras: JSON.parse(`{"a":${deep}}`) as unknown,
    };
    const report = await importLines(owner.auth, [nested]);
    expect(report).toMatchObject({ invalid: 1, created: 0 });
    expect(report.failures[0].reason).toMatch(/nested deeper/);
  });

  test('file_url downloads from a host the administrator allows', async () => {
    const source = await createSource(t, {}, { owner });
    const file = jsonl([concept(source.org, 'S', 'U1')]);
    const files = http.createServer((_req, res) => res.end(file));
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    const address = files.address();
    const host = `127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const allowed = await createTestApp({ IMPORT_FILE_URL_HOSTS: host });
    try {
      const res = await request(allowed.app)
        .post('/importers/bulk-import/')
        .set('Authorization', owner.auth)
        .send({ file_url: `http://${host}/dictionary.json` });
      expect(res.status).toBe(202);
      const done = await allowed.services.tasks.waitFor(
        allowed.services.context(
          await allowed.services.auth.authenticate(owner.auth),
          createLogger('silent'),
          'http://localhost',
        ),
        res.body.id as string,
        20_000,
      );
      expect(done.state).toBe('SUCCESS');
      expect(done.result).toMatchObject({ created: 1 });
      const other = await request(allowed.app)
        .post('/importers/bulk-import/')
        .set('Authorization', owner.auth)
        .send({ file_url: 'http://elsewhere.example/x.json' });
      expect(other.status).toBe(400);
    } finally {
      await allowed.close();
      await new Promise((resolve) => files.close(resolve));
    }
  });

  test('a file_url body without Content-Length is cut off once it passes the size limit', async () => {
    const total = 64 * 1024 ** 2;
    const piece = Buffer.alloc(64 * 1024, 'x');
    const sender = { sent: 0, closedEarly: false };
    // Chunked (no Content-Length), sent as fast as the reader takes it.
    const files = http.createServer((_req, res) => {
      res.on('close', () => (sender.closedEarly = sender.sent < total));
      const more = (): void => {
        while (sender.sent < total && !res.destroyed) {
          sender.sent += piece.length;
          if (!res.write(piece)) return void res.once('drain', more);
        }
        res.end();
      };
      more();
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    const address = files.address();
    const host = `127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const allowed = await createTestApp({ IMPORT_FILE_URL_HOSTS: host, IMPORT_MAX_SIZE: '1mb' });
    try {
      const res = await request(allowed.app)
        .post('/importers/bulk-import/')
        .set('Authorization', owner.auth)
        .send({ file_url: `http://${host}/huge.json` });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/larger than 1048576 bytes/);
      // What the sockets' buffers hold besides, far below the whole body.
      expect(sender.sent).toBeLessThan(total / 4);
      for (let i = 0; i < 100 && !sender.closedEarly; i += 1)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(sender.closedEarly).toBe(true);
    } finally {
      await allowed.close();
      files.closeAllConnections();
      await new Promise((resolve) => files.close(resolve));
    }
  });
});
