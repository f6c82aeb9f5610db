import crypto from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../factories';
import {
  createCollection,
  createConcept,
  createMappingBetween,
  createSource,
  createVersion,
  retire,
  type TestSource,
} from '../factories/content';
import { WALK_BATCH } from '../../src/services/shared/list';
import { dataOf, errorCode, gql, type Json } from '../graphql/gql';
import { binary, unzip } from '../factories/zip';
import { as } from '../factories/http';

/**
 * Exports of repository versions (issue 13 parts 1 and 4; spec operations §3, §4.8, §9.3):
 * automatic on a new version, every method and status, the file's content equal to the version's
 * get with every item, single-use download addresses, private repositories, parallel requests,
 * bad input, and recovery from a process that died while writing.
 */

let t: TestApp;
let dataDir: string;
beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'exports-'));
  t = await createTestApp({ DATA_DIR: dataDir, EXPORT_URL_TTL_SECONDS: '60' });
});
afterAll(async () => {
  await t.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** GETs the export until it is no longer being written (208); answers the last response. */
async function settled(url: string, by?: TestUser | string): Promise<request.Response> {
  for (let i = 0; i < 150; i += 1) {
    const res = await request(t.app).get(url).set(as(by)).buffer(true).parse(binary);
    if (res.status !== 208) return res;
    await sleep(100);
  }
  throw new Error(`${url} still processing`);
}

/** A source with two concepts (one retired) and a mapping between them, and version v1. */
async function sourceWithVersion(fields: Record<string, unknown> = {}): Promise<TestSource> {
  const source = await createSource(t, {
    id: `S${crypto.randomBytes(3).toString('hex')}`,
    ...fields,
  });
  await createConcept(t, source.url, source.owner, { id: 'A' });
  await createConcept(t, source.url, source.owner, { id: 'B' });
  await createMappingBetween(t, source.url, source.owner, [
    'M1',
    'SAME-AS',
    `${source.url}concepts/A/`,
    `${source.url}concepts/B/`,
  ]);
  await retire(t, source.url, source.owner, 'concepts', 'B');
  await createVersion(t, source.url, source.owner, 'v1', { released: true });
  return source;
}

describe('a new version is exported by a background task', () => {
  let source: TestSource;
  let file: request.Response;
  beforeAll(async () => {
    source = await sourceWithVersion();
    file = await settled(`${source.url}v1/export/`);
  });

  it('answers 200 with the zip streamed and the file name of spec operations §4.8', () => {
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('application/zip');
    expect(file.headers['content-disposition']).toMatch(
      new RegExp(`attachment; filename="${source.id}_v1\\.\\d{4}-\\d\\d-\\d\\d_\\d{6}\\.zip"`),
    );
    expect(Number(file.headers['content-length'])).toBe((file.body as Buffer).length);
  });

  it('holds exactly what the version answers with every item (includeRetired, limit=0)', async () => {
    const entries = await unzip(file.body as Buffer);
    expect(Object.keys(entries)).toEqual(['export.json']);
    const detail = await request(t.app).get(
      `${source.url}v1/?includeConcepts=true&includeMappings=true&includeRetired=true&limit=0`,
    );
    expect(detail.status).toBe(200);
    const exported = JSON.parse(entries['export.json']) as Record<string, unknown>;
    expect(exported).toEqual(detail.body);
    expect(
      (exported.concepts as Array<{ id: string; retired: boolean }>).map((c) => [c.id, c.retired]),
    ).toEqual([
      ['A', false],
      ['B', true],
    ]);
    expect((exported.mappings as Array<{ id: string }>).map((m) => m.id)).toEqual(['M1']);
  });

  it('answers HEAD with the same status and headers and no body', async () => {
    const head = await request(t.app).head(`${source.url}v1/export/`);
    expect(head.status).toBe(200);
    expect(head.headers['content-disposition']).toBe(file.headers['content-disposition']);
    expect(head.headers.exporturl).toMatch(/\/exports\/[\w-]+\/$/);
    expect(head.text ?? '').toBe('');
  });

  it('hands out a single-use download address in exportURL', async () => {
    const address = new URL(String(file.headers.exporturl));
    const first = await request(t.app).get(address.pathname).buffer(true).parse(binary);
    expect(first.status).toBe(200);
    expect((first.body as Buffer).equals(file.body as Buffer)).toBe(true);
    expect(first.headers['content-disposition']).toBe(file.headers['content-disposition']);
    const again = await request(t.app).get(address.pathname);
    expect(again.status).toBe(410);
    expect((await request(t.app).get('/exports/not-a-token-of-ours-at-all/')).status).toBe(404);
    expect((await request(t.app).get('/exports/x/')).status).toBe(404);
  });

  it('answers POST with 200 when the file exists, and never writes it again', async () => {
    const res = await request(t.app).post(`${source.url}v1/export/`).set(as(source.owner));
    expect(res.status).toBe(200);
    // The web client (VersionExportDialog) asks with noRedirect and reads 204 as "exists", as OCL.
    const client = await request(t.app)
      .post(`${source.url}v1/export/?noRedirect=true`)
      .set(as(source.owner));
    expect(client.status).toBe(204);
    const [{ n }] = await t.dataSource.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM tasks WHERE created_by = $1 AND state IN ('PENDING', 'STARTED')`,
      [source.owner.username],
    );
    expect(n).toBe(0);
  });

  it('deletes the file for administrators only: 204, then 204 on GET and 404 on DELETE', async () => {
    const outsider = await createUser(t);
    expect((await request(t.app).delete(`${source.url}v1/export/`)).status).toBe(401);
    expect((await request(t.app).delete(`${source.url}v1/export/`).set(as(outsider))).status).toBe(
      403,
    );
    expect(
      (await request(t.app).delete(`${source.url}v1/export/`).set(as(source.owner))).status,
    ).toBe(204);
    expect((await request(t.app).get(`${source.url}v1/export/`)).status).toBe(204);
    expect((await request(t.app).head(`${source.url}v1/export/`)).status).toBe(204);
    expect(
      (await request(t.app).delete(`${source.url}v1/export/`).set(as(source.owner))).status,
    ).toBe(404);
    // An address handed out before the delete leads nowhere now.
    expect(
      (await request(t.app).get(new URL(String(file.headers.exporturl)).pathname)).status,
    ).toBe(404);
  });

  it('writes it again on POST (202), once for parallel requests (the others 409)', async () => {
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        request(t.app).post(`${source.url}v1/export/`).set(as(source.owner)),
      ),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.every((s) => s === 202 || s === 409 || s === 200)).toBe(true);
    expect(statuses.filter((s) => s === 409).length).toBeGreaterThan(0);
    const again = await settled(`${source.url}v1/export/`);
    expect(again.status).toBe(200);
    const tasks = await t.dataSource.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM tasks WHERE summary = $1`,
      [`Export of ${source.id} v1`],
    );
    expect(tasks[0].n).toBe(2); // the automatic one and the one of the six
  });
});

describe('a dictionary of several cursor batches', () => {
  // Two and a half batches of each kind, loaded in one import, with text JSON must escape.
  const count = Math.floor(WALK_BATCH * 2.5);
  const code = (i: number) => `K${String(i).padStart(4, '0')}`;
  const everything = 'v2/?includeConcepts=true&includeMappings=true&includeRetired=true&limit=0';
  let source: TestSource;
  beforeAll(async () => {
    source = await sourceWithVersion({ id: 'BIG' });
    const lines = [
      ...Array.from({ length: count }, (_, i) => ({
        type: 'Concept',
        owner: source.org,
        owner_type: 'Organization',
        source: source.id,
        id: code(i),
        concept_class: 'Diagnosis',
        datatype: 'N/A',
        names: [{ name: `Näme "${i}"\t\\ ✓`, locale: 'en', locale_preferred: true }],
        extras: { rank: i, tags: ['a', 'b'] },
      })),
      ...Array.from({ length: count }, (_, i) => ({
        type: 'Mapping',
        owner: source.org,
        source: source.id,
        id: `X${i}`,
        map_type: i % 2 ? 'SAME-AS' : 'NARROWER-THAN',
        from_concept_url: `${source.url}concepts/${code(i)}/`,
        to_concept_url: `${source.url}concepts/${code((i + 1) % count)}/`,
      })),
    ];
    const started = await request(t.app)
      .post('/importers/bulk-import/')
      .set('Authorization', source.owner.auth)
      .set('Content-Type', 'application/json')
      .send(lines.map((line) => JSON.stringify(line)).join('\n'));
    expect(started.status).toBe(202);
    for (let i = 0; ; i += 1) {
      const task = await request(t.app)
        .get(`/importers/bulk-import/?task=${started.body.id}`)
        .set('Authorization', source.owner.auth);
      if (task.body.state === 'SUCCESS') break;
      if (task.body.state === 'FAILURE' || i > 600) throw new Error(JSON.stringify(task.body));
      await sleep(100);
    }
    await createVersion(t, source.url, source.owner, 'v2', { released: true });
  });

  it('is written whole, in order, byte for byte what the version answers', async () => {
    const file = await settled(`${source.url}v2/export/`);
    expect(file.status).toBe(200);
    const exported = (await unzip(file.body as Buffer))['export.json'];
    const detail = await request(t.app)
      .get(`${source.url}${everything}`)
      .buffer(true)
      .parse(binary);
    expect(detail.status).toBe(200);
    expect(exported).toBe((detail.body as Buffer).toString('utf8'));
    const body = JSON.parse(exported) as {
      concepts: Array<{ id: string; names: Array<{ name: string }> }>;
      mappings: Array<{ id: string }>;
    };
    const codes = body.concepts.map((c) => c.id);
    expect(codes).toEqual(['A', 'B', ...Array.from({ length: count }, (_, i) => code(i))]);
    expect(body.concepts[2].names[0].name).toBe('Näme "0"\t\\ ✓');
    expect(body.mappings).toHaveLength(count + 1);
    expect(new Set(body.mappings.map((m) => m.id)).size).toBe(count + 1);
  });

  it('frees the walk of a reader that goes away after the first bytes (20 in a row)', async () => {
    // Each walk holds one of the process's 16 snapshots: one not given back would make the
    // 17th reader wait for ever.
    const server = http.createServer(t.app).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      for (let i = 0; i < 20; i += 1) {
        await new Promise<void>((resolve, reject) => {
          const req = http.get(`http://127.0.0.1:${port}${source.url}${everything}`, (res) => {
            res.once('data', () => req.destroy());
          });
          req.once('close', resolve);
          req.once('error', (error: NodeJS.ErrnoException) =>
            error.code === 'ECONNRESET' ? resolve() : reject(error),
          );
        });
      }
    } finally {
      server.close();
    }
    const whole = await request(t.app).get(`${source.url}${everything}`);
    expect(whole.status).toBe(200);
    expect(whole.body.concepts).toHaveLength(count + 2);
    expect(whole.body.mappings).toHaveLength(count + 1);
  });
});

describe('methods and statuses', () => {
  let source: TestSource;
  beforeAll(async () => {
    source = await sourceWithVersion();
    await settled(`${source.url}v1/export/`);
  });

  it('answers 405 for HEAD (the repository version) with every method', async () => {
    for (const url of [`${source.url}HEAD/export/`, `${source.url}head/export/`]) {
      expect((await request(t.app).get(url)).status).toBe(405);
      expect((await request(t.app).head(url)).status).toBe(405);
      expect((await request(t.app).post(url).set(as(source.owner))).status).toBe(405);
      expect((await request(t.app).delete(url).set(as(source.owner))).status).toBe(405);
    }
  });

  it('answers 404 for a version, repository or owner that does not exist', async () => {
    expect((await request(t.app).get(`${source.url}v9/export/`)).status).toBe(404);
    expect((await request(t.app).get(`/orgs/${source.org}/sources/nope/v1/export/`)).status).toBe(
      404,
    );
    expect((await request(t.app).get(`/orgs/no-such-org-x/sources/S/v1/export/`)).status).toBe(404);
    expect(
      (await request(t.app).post(`${source.url}v9/export/`).set(as(source.owner))).status,
    ).toBe(404);
  });

  it('answers 405 for other methods, and 401 to an anonymous POST', async () => {
    expect((await request(t.app).put(`${source.url}v1/export/`).send({})).status).toBe(405);
    expect((await request(t.app).post(`${source.url}v1/export/`)).status).toBe(401);
  });

  it('answers 208 while the file is being written', async () => {
    const other = await sourceWithVersion();
    // Right after the version is made its task is queued or running.
    const res = await request(t.app).get(`${other.url}v1/export/`);
    expect([208, 200]).toContain(res.status);
    if (res.status === 208) {
      // 409 while it is still written; 200 if it was finished meanwhile — never a second task.
      const asked = await request(t.app).post(`${other.url}v1/export/`).set(as(other.owner));
      expect([409, 200]).toContain(asked.status);
    }
    expect((await settled(`${other.url}v1/export/`)).status).toBe(200);
  });
});

describe('private repositories', () => {
  it('answers 401 anonymous and 403 outsiders; the download address is the credential', async () => {
    const source = await sourceWithVersion({ public_access: 'None' });
    const outsider = await createUser(t);
    const file = await settled(`${source.url}v1/export/`, source.owner);
    expect(file.status).toBe(200);
    expect((await request(t.app).get(`${source.url}v1/export/`)).status).toBe(401);
    expect((await request(t.app).get(`${source.url}v1/export/`).set(as(outsider))).status).toBe(
      403,
    );
    expect((await request(t.app).post(`${source.url}v1/export/`).set(as(outsider))).status).toBe(
      403,
    );
    const address = new URL(String(file.headers.exporturl)).pathname;
    expect((await request(t.app).get(address)).status).toBe(200);
  });
});

describe('collections', () => {
  it('exports a collection version with its members', async () => {
    const source = await sourceWithVersion();
    const collection = await createCollection(
      t,
      { id: `C${crypto.randomBytes(3).toString('hex')}` },
      { owner: source.owner, org: source.org },
    );
    const added = await request(t.app)
      .put(`${collection.url}references/`)
      .set(as(source.owner))
      .send({ data: { expressions: [`${source.url}concepts/A/`, `${source.url}mappings/M1/`] } });
    expect(added.status).toBe(200);
    await createVersion(t, collection.url, source.owner, 'c1');
    const file = await settled(`${collection.url}c1/export/`);
    expect(file.status).toBe(200);
    const exported = JSON.parse((await unzip(file.body as Buffer))['export.json']) as {
      concepts: Array<{ id: string }>;
      mappings: Array<{ id: string }>;
    };
    const detail = await request(t.app).get(
      `${collection.url}c1/?includeConcepts=true&includeMappings=true&includeRetired=true&limit=0`,
    );
    expect(exported).toEqual(detail.body);
    expect(exported.concepts.map((c) => c.id)).toEqual(['A']);
    expect(exported.mappings.map((m) => m.id)).toEqual(['M1']);
  });
});

/**
 * What a process killed mid-export leaves (its file deleted first): its task STARTED with a stale
 * heartbeat, the export processing, and a partial file under a temporary name.
 */
async function leaveAbandonedExport(
  source: TestSource,
): Promise<{ taskId: string; folder: string; partial: string }> {
  expect(
    (await request(t.app).delete(`${source.url}v1/export/`).set(as(source.owner))).status,
  ).toBe(204);
  const [version] = await t.dataSource.query<Array<{ id: string; repository_id: string }>>(
    `SELECT v.id::text AS id, v.repository_id::text AS repository_id
       FROM repository_versions v JOIN repositories r ON r.id = v.repository_id
       WHERE r.mnemonic = $1 AND v.mnemonic = 'v1'`,
    [source.id],
  );
  const taskId = crypto.randomUUID();
  await t.dataSource.query(
    `INSERT INTO tasks (id, kind, state, created_by, started_at, heartbeat_at)
       VALUES ($1, 'repository-export', 'STARTED', $2, now() - interval '5 minutes',
               now() - interval '5 minutes')`,
    [taskId, source.owner.username],
  );
  await t.dataSource.query(
    `INSERT INTO repository_exports (version_id, state, task_id) VALUES ($1, 'processing', $2)`,
    [version.id, taskId],
  );
  const folder = path.join(dataDir, 'exports', version.repository_id);
  fs.mkdirSync(folder, { recursive: true });
  const partial = path.join(folder, `${version.id}.zip.0123456789ab.partial`);
  fs.writeFileSync(partial, 'PK half a zip');

  return { taskId, folder, partial };
}

describe('a process killed while writing an export', () => {
  it('leaves no file served as ready; the export is failed and can be run again', async () => {
    const source = await sourceWithVersion();
    await settled(`${source.url}v1/export/`);
    const { taskId, folder, partial } = await leaveAbandonedExport(source);

    const after = await request(t.app).get(`${source.url}v1/export/`);
    expect(after.status).toBe(204); // not 208 for ever, and never the partial file
    const task = await request(t.app).get(`/tasks/${taskId}/`).set(as(source.owner));
    expect(task.body).toMatchObject({ state: 'FAILURE' });

    const again = await request(t.app).post(`${source.url}v1/export/`).set(as(source.owner));
    expect(again.status).toBe(202);
    const file = await settled(`${source.url}v1/export/`);
    expect(file.status).toBe(200);
    expect(Object.keys(await unzip(file.body as Buffer))).toEqual(['export.json']);
    expect(fs.existsSync(partial)).toBe(false);
    expect(fs.readdirSync(folder).filter((f) => f.endsWith('.partial'))).toEqual([]);
  });
});

describe('GraphQL', () => {
  const ask = `mutation($url: String!) { requestExport(url: $url) { outcome taskId } }`;

  it('shows the export of a version (null at HEAD) with a download address', async () => {
    const source = await sourceWithVersion();
    await settled(`${source.url}v1/export/`);
    const read = await gql(
      t,
      undefined,
      `query($url: String!) { source(url: $url) { export { state fileName size lastUpdated downloadUrl } } }`,
      { url: `${source.url}v1/` },
    );
    const exported = read.data.source.export;
    expect(exported.state).toBe('READY');
    expect(String(exported.fileName)).toMatch(new RegExp(`^${source.id}_v1\\.`));
    const download = await request(t.app)
      .get(new URL(String(exported.downloadUrl)).pathname)
      .buffer(true)
      .parse(binary);
    expect(download.status).toBe(200);
    expect((download.body as Buffer).length).toBe(exported.size);
    const head = await gql(
      t,
      undefined,
      `query($url: String!) { source(url: $url) { export { state } } }`,
      {
        url: source.url,
      },
    );
    expect(head.data.source.export).toBeNull();
  });

  it('asks for an export and deletes one, with the REST rules', async () => {
    const source = await sourceWithVersion();
    await settled(`${source.url}v1/export/`);
    const url = `${source.url}v1/`;
    expect((await gql(t, source.owner.auth, ask, { url })).data.requestExport.outcome).toBe(
      'EXISTS',
    );
    const removed = await gql(
      t,
      source.owner.auth,
      `mutation($url: String!) { deleteExport(url: $url) { deletedId } }`,
      {
        url,
      },
    );
    expect(removed.data).toEqual({ deleteExport: { deletedId: expect.any(String) } });
    const queued = await gql(t, source.owner.auth, ask, { url });
    expect(queued.data.requestExport.outcome).toBe('QUEUED');
    expect(queued.data.requestExport.taskId).toEqual(expect.any(String));
    expect(errorCode(await gql(t, undefined, ask, { url }))).toBe('UNAUTHENTICATED');
    expect(errorCode(await gql(t, source.owner.auth, ask, { url: `${source.url}HEAD/` }))).toBe(
      'NOT_ALLOWED',
    );
    expect(errorCode(await gql(t, source.owner.auth, ask, { url: 'not a url' }))).toBe('INVALID');
    expect((await settled(`${source.url}v1/export/`)).status).toBe(200);
  });

  const state = `query($url: String!) { source(url: $url) { export { state fileName } } }`;
  const stateOf = async (url: string, auth?: string): Promise<Json> =>
    dataOf(await gql(t, auth, state, { url })).source.export;

  it('parallel requests queue one export; the others are told it is being written or exists', async () => {
    const source = await sourceWithVersion();
    await settled(`${source.url}v1/export/`);
    const url = `${source.url}v1/`;
    dataOf(
      await gql(
        t,
        source.owner.auth,
        `mutation($url: String!) { deleteExport(url: $url) { deletedId } }`,
        {
          url,
        },
      ),
    );
    expect(await stateOf(url)).toEqual({ state: 'ABSENT', fileName: null });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => gql(t, source.owner.auth, ask, { url })),
    );
    const outcomes = answers.map((a) => dataOf(a).requestExport.outcome as string);
    expect(outcomes.filter((o) => o === 'QUEUED')).toHaveLength(1);
    expect(outcomes.every((o) => ['QUEUED', 'PROCESSING', 'EXISTS'].includes(o))).toBe(true);
    expect((await settled(`${source.url}v1/export/`)).status).toBe(200);
    expect(await stateOf(url)).toMatchObject({ state: 'READY' });
  });

  it('a killed writer shows ABSENT (never READY), its task FAILURE; requestExport runs it again', async () => {
    const source = await sourceWithVersion();
    await settled(`${source.url}v1/export/`);
    const { taskId } = await leaveAbandonedExport(source);
    const url = `${source.url}v1/`;
    expect(await stateOf(url)).toEqual({ state: 'ABSENT', fileName: null });
    const task = await gql(t, source.owner.auth, `query($id: ID!) { task(id: $id) { state } }`, {
      id: taskId,
    });
    expect(dataOf(task).task).toEqual({ state: 'FAILURE' });
    expect(dataOf(await gql(t, source.owner.auth, ask, { url })).requestExport.outcome).toBe(
      'QUEUED',
    );
    expect((await settled(`${source.url}v1/export/`)).status).toBe(200);
    expect(await stateOf(url)).toMatchObject({ state: 'READY' });
  });

  it('refuses deleteExport to non-administrators and when there is no file; private exports stay private', async () => {
    const source = await sourceWithVersion({ public_access: 'None' });
    await settled(`${source.url}v1/export/`, source.owner);
    const url = `${source.url}v1/`;
    const outsider = await createUser(t);
    const remove = `mutation($url: String!) { deleteExport(url: $url) { deletedId } }`;
    expect(errorCode(await gql(t, outsider.auth, remove, { url }))).toBe('FORBIDDEN');
    expect(errorCode(await gql(t, undefined, remove, { url }))).toBe('UNAUTHENTICATED');
    expect(errorCode(await gql(t, outsider.auth, state, { url }))).toBe('FORBIDDEN');
    expect(errorCode(await gql(t, outsider.auth, ask, { url }))).toBe('FORBIDDEN');
    expect(await stateOf(url, source.owner.auth)).toMatchObject({ state: 'READY' });
    expect(dataOf(await gql(t, source.owner.auth, remove, { url }))).toEqual({
      deleteExport: { deletedId: expect.any(String) },
    });
    expect(errorCode(await gql(t, source.owner.auth, remove, { url }))).toBe('NOT_FOUND');
  });

  it('shows and asks for the export of a collection version', async () => {
    const source = await sourceWithVersion();
    const collection = await createCollection(
      t,
      { id: `C${crypto.randomBytes(3).toString('hex')}` },
      { owner: source.owner, org: source.org },
    );
    await createVersion(t, collection.url, source.owner, 'c1');
    await settled(`${collection.url}c1/export/`);
    const url = `${collection.url}c1/`;
    const read = await gql(
      t,
      undefined,
      `query($url: String!) { collection(url: $url) { export { state fileName } } }`,
      { url },
    );
    expect(dataOf(read).collection.export).toMatchObject({ state: 'READY' });
    expect(String(dataOf(read).collection.export.fileName)).toMatch(
      new RegExp(`^${collection.id}_c1\\.`),
    );
    expect(dataOf(await gql(t, source.owner.auth, ask, { url })).requestExport.outcome).toBe(
      'EXISTS',
    );
  });
});
