import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../factories';
import {
  createConcept,
  createMappingBetween,
  createSource,
  createVersion,
  retire,
  type TestSource,
} from '../factories/content';
import { gql } from '../graphql/gql';
import { binary, unzip } from '../factories/zip';

/**
 * Client synchronization (issue 13 part 2; spec operations §4.10): repository and version details
 * with their content paged by `limit`/`offset` (every item exactly once, in a stable order),
 * `updatedSince` (creations, edits, retirements — how removals are reported), `Compress: true`,
 * and the whole subscription flow: latest → export → lastUpdated from the file name → changes.
 */

let t: TestApp;
let dataDir: string;
beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sync-'));
  t = await createTestApp({ DATA_DIR: dataDir });
});
afterAll(async () => {
  await t.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const as = (user?: TestUser) => (user ? { Authorization: user.auth } : {});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ids = (items: Array<{ id: string }>) => items.map((i) => i.id);

/** A source of `n` concepts `C00`… with a mapping from each to the next. */
async function source(n: number, fields: Record<string, unknown> = {}): Promise<TestSource> {
  const made = await createSource(t, {
    id: `Y${crypto.randomBytes(3).toString('hex')}`,
    ...fields,
  });
  const code = (i: number) => `C${String(i).padStart(2, '0')}`;
  for (let i = 0; i < n; i += 1) await createConcept(t, made.url, made.owner, { id: code(i) });
  for (let i = 0; i + 1 < n; i += 1) {
    await createMappingBetween(t, made.url, made.owner, [
      `M${String(i).padStart(2, '0')}`,
      'SAME-AS',
      `${made.url}concepts/${code(i)}/`,
      `${made.url}concepts/${code(i + 1)}/`,
    ]);
  }
  return made;
}

describe('paging the content of a repository detail', () => {
  let s: TestSource;
  beforeAll(async () => {
    s = await source(23);
  });

  it('covers every concept and mapping exactly once with limit and offset, in a stable order', async () => {
    const concepts: string[] = [];
    const mappings: string[] = [];
    for (let offset = 0; ; offset += 10) {
      const res = await request(t.app).get(
        `${s.url}?includeConcepts=true&includeMappings=true&limit=10&offset=${offset}`,
      );
      expect(res.status).toBe(200);
      concepts.push(...ids(res.body.concepts));
      mappings.push(...ids(res.body.mappings));
      if (res.body.concepts.length < 10) break; // spec operations §4.10: until fewer than limit
    }
    expect(concepts).toEqual(
      Array.from({ length: 23 }, (_, i) => `C${String(i).padStart(2, '0')}`),
    );
    expect(mappings).toEqual(
      Array.from({ length: 22 }, (_, i) => `M${String(i).padStart(2, '0')}`),
    );
    const again = await request(t.app).get(`${s.url}?includeConcepts=true&limit=10&offset=10`);
    expect(ids(again.body.concepts)).toEqual(concepts.slice(10, 20));
  });

  it('pages by page number too, the same items', async () => {
    const second = await request(t.app).get(`${s.url}?includeConcepts=true&limit=10&page=2`);
    expect(ids(second.body.concepts)).toEqual(
      Array.from({ length: 10 }, (_, i) => `C${String(i + 10).padStart(2, '0')}`),
    );
  });

  it('answers everything with limit=0, the detail fields first', async () => {
    const all = await request(t.app).get(
      `${s.url}?includeConcepts=true&includeMappings=true&limit=0`,
    );
    expect(all.headers['content-type']).toMatch(/^application\/json/);
    expect(all.body).toMatchObject({ id: s.id, type: 'Source', active_concepts: 23 });
    expect(all.body.concepts).toHaveLength(23);
    expect(all.body.mappings).toHaveLength(22);
    expect(all.body.concepts[0]).toMatchObject({
      id: 'C00',
      names: [expect.objectContaining({ name: 'Name C00', locale: 'en' })],
      retired: false,
    });
  });

  it('answers Compress: true with a zip of everything (paging off)', async () => {
    const all = await request(t.app).get(
      `${s.url}?includeConcepts=true&includeMappings=true&limit=0`,
    );
    const zipped = await request(t.app)
      .get(`${s.url}?includeConcepts=true&includeMappings=true&limit=5&offset=5`)
      .set('Compress', 'true')
      .buffer(true)
      .parse(binary);
    expect(zipped.status).toBe(200);
    expect(zipped.headers['content-type']).toBe('application/zip');
    const files = await unzip(zipped.body as Buffer);
    expect(JSON.parse(files['export.json'])).toEqual(all.body);
  });

  it('refuses bad paging and timestamps with 400, naming the parameter', async () => {
    for (const query of ['offset=-1', 'offset=x', 'limit=abc', 'updatedSince=yesterday']) {
      const res = await request(t.app).get(`${s.url}?includeConcepts=true&${query}`);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.errors)).toEqual([query.split('=')[0]]);
    }
  });
});

describe('changes since a time', () => {
  it('lists creations, edits and retirements (removals), and nothing else', async () => {
    const s = await source(4);
    await sleep(1100);
    const since = new Date();
    await request(t.app)
      .patch(`${s.url}concepts/C01/`)
      .set(as(s.owner))
      .send({ datatype: 'Numeric' })
      .expect(200);
    await retire(t, s.url, s.owner, 'concepts', 'C02');
    await retire(t, s.url, s.owner, 'mappings', 'M00');
    await createConcept(t, s.url, s.owner, { id: 'N1' });
    const changes = await request(t.app).get(
      `${s.url}?includeConcepts=true&includeMappings=true&includeRetired=true&limit=0&updatedSince=${since.toISOString()}`,
    );
    expect(changes.status).toBe(200);
    const concepts = changes.body.concepts as Array<{
      id: string;
      retired: boolean;
      datatype: string;
    }>;
    expect(concepts.map((c) => [c.id, c.retired])).toEqual([
      ['C01', false],
      ['C02', true],
      ['N1', false],
    ]);
    expect(concepts[0].datatype).toBe('Numeric');
    expect(
      changes.body.mappings.map((m: { id: string; retired: boolean }) => [m.id, m.retired]),
    ).toEqual([['M00', true]]);
    // Without includeRetired a removal is not seen: subscribers ask for retired items.
    const active = await request(t.app).get(
      `${s.url}?includeConcepts=true&limit=0&updatedSince=${since.toISOString()}`,
    );
    expect(ids(active.body.concepts)).toEqual(['C01', 'N1']);
  });

  it('reads the same changes through GraphQL', async () => {
    const s = await source(3);
    await sleep(50);
    const since = new Date();
    await retire(t, s.url, s.owner, 'concepts', 'C00');
    const res = await gql(
      t,
      undefined,
      `query($url: String!, $since: DateTimeISO) {
         source(url: $url) {
           concepts(updatedSince: $since, includeRetired: true, limit: 0) { items { id retired } }
         }
       }`,
      { url: s.url, since: since.toISOString() },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.source.concepts.items).toEqual([{ id: 'C00', retired: true }]);
  });
});

describe('private repositories', () => {
  it('answers the content to those who may see it only', async () => {
    const s = await source(2, { public_access: 'None' });
    const url = `${s.url}?includeConcepts=true&limit=0`;
    expect((await request(t.app).get(url)).status).toBe(401);
    expect(
      (
        await request(t.app)
          .get(url)
          .set(as(await createUser(t)))
      ).status,
    ).toBe(403);
    const own = await request(t.app).get(url).set(as(s.owner));
    expect(ids(own.body.concepts)).toEqual(['C00', 'C01']);
    const zipped = await request(t.app).get(url).set('Compress', 'true');
    expect(zipped.status).toBe(401);
  });
});

describe('the subscription flow of spec operations §4.10', () => {
  it('latest → export → lastUpdated from the file name → the changes since', async () => {
    const s = await source(5);
    await sleep(1100); // the version's second differs from the content's
    await createVersion(t, s.url, s.owner, 'v1', { released: true });
    // Edits after the release: an edit, a retirement, a new concept.
    await sleep(1100);
    await request(t.app)
      .patch(`${s.url}concepts/C03/`)
      .set(as(s.owner))
      .send({ concept_class: 'Diagnosis' })
      .expect(200);
    await retire(t, s.url, s.owner, 'concepts', 'C04');
    await createConcept(t, s.url, s.owner, { id: 'NEW' });

    // 1. The latest released version.
    const latest = await request(t.app).get(`${s.url}latest/`).set(as(s.owner));
    expect(latest.status).toBe(200);
    const version = latest.body.version as string;
    expect(version).toBe('v1');

    // 2. Its export's address (retry while it is written).
    let head: request.Response;
    for (let i = 0; ; i += 1) {
      head = await request(t.app).head(`${s.url}${version}/export/`).set(as(s.owner));
      if (head.status === 200 || i > 100) break;
      await sleep(100);
    }
    expect(head.status).toBe(200);

    // 3. Download it; lastUpdated from its name.
    const file = await request(t.app)
      .get(new URL(String(head.headers.exporturl)).pathname)
      .buffer(true)
      .parse(binary);
    expect(file.status).toBe(200);
    const name = /filename="([^"]+)"/.exec(String(file.headers['content-disposition']))![1];
    const lastUpdated = /\.(\d{4}-\d\d-\d\d_\d{6})\.zip$/.exec(name)![1];
    const exported = JSON.parse((await unzip(file.body as Buffer))['export.json']);
    expect(ids(exported.concepts)).toEqual(['C00', 'C01', 'C02', 'C03', 'C04']);
    expect(exported.concepts.every((c: { retired: boolean }) => !c.retired)).toBe(true);

    // 4. The changes since, page by page, then zipped.
    const changed: Array<{ id: string; retired: boolean }> = [];
    for (let offset = 0; ; offset += 2) {
      const page = await request(t.app)
        .get(
          `${s.url}?includeConcepts=true&includeMappings=true&includeRetired=true&updatedSince=${lastUpdated}&limit=2&offset=${offset}`,
        )
        .set(as(s.owner));
      expect(page.status).toBe(200);
      changed.push(...page.body.concepts);
      if (page.body.concepts.length < 2) break;
    }
    expect(changed.map((c) => [c.id, c.retired])).toEqual([
      ['C03', false],
      ['C04', true],
      ['NEW', false],
    ]);
    const zipped = await request(t.app)
      .get(
        `${s.url}?includeConcepts=true&includeMappings=true&includeRetired=true&updatedSince=${lastUpdated}`,
      )
      .set(as(s.owner))
      .set('Compress', 'true')
      .buffer(true)
      .parse(binary);
    const all = JSON.parse((await unzip(zipped.body as Buffer))['export.json']);
    expect(ids(all.concepts)).toEqual(['C03', 'C04', 'NEW']);
    expect(all.mappings).toEqual([]);
  });
});
