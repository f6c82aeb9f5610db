import crypto from 'node:crypto';
import fs from 'node:fs';
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
import { gql } from '../graphql/gql';
import { binary, unzip } from '../factories/zip';
import { as } from '../factories/http';

/**
 * Client synchronization (issue 13 part 2; spec operations §4.10): repository and version details
 * with their content paged by `limit`/`offset` (every item exactly once, in a stable order),
 * `updatedSince` (creations, edits, retirements — how removals are reported, also from
 * collections), `Compress: true`, and the whole subscription flow: latest → export →
 * lastUpdated from the file name → changes.
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

/** A reference add to collection `c` (REST `PUT {collection}references/`), by its owner unless told. */
const addReferences = (c: TestSource, data: unknown, by: TestUser = c.owner) =>
  request(t.app).put(`${c.url}references/`).set(as(by)).send({ data });

/** A reference removal from collection `c` (REST `DELETE {collection}references/`). */
const removeReferences = (c: TestSource, expressions: string[], by: TestUser = c.owner) =>
  request(t.app).delete(`${c.url}references/`).set(as(by)).send({ expressions });

/** An edit of a concept of source `s` by its owner. */
const editConcept = (s: TestSource, id: string, fields: object) =>
  request(t.app).patch(`${s.url}concepts/${id}/`).set(as(s.owner)).send(fields);
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
    await editConcept(s, 'C01', { datatype: 'Numeric' }).expect(200);
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

describe('changes of a collection since a time', () => {
  /** A collection holding C00…C03 and M00…M02 of a fresh source, one reference each. */
  async function collection(): Promise<{ s: TestSource; c: TestSource }> {
    const s = await source(4);
    const c = await createCollection(t, { id: `Z${crypto.randomBytes(3).toString('hex')}` });
    const expressions = [
      ...['C00', 'C01', 'C02', 'C03'].map((id) => `${s.url}concepts/${id}/`),
      ...['M00', 'M01', 'M02'].map((id) => `${s.url}mappings/${id}/`),
    ];
    await addReferences(c, { expressions }).expect(200);
    return { s, c };
  }

  type Item = { id: string; retired: boolean };
  const changesOf = async (
    c: TestSource,
    since: Date,
    query = 'includeRetired=true',
  ): Promise<{ concepts: Item[]; mappings: Item[] }> => {
    const res = await request(t.app)
      .get(
        `${c.url}?includeConcepts=true&includeMappings=true&limit=0&updatedSince=${since.toISOString()}&${query}`,
      )
      .set(as(c.owner));
    expect(res.status).toBe(200);
    return res.body as { concepts: Item[]; mappings: Item[] };
  };
  const shown = (items: Item[]) => items.map((i) => [i.id, i.retired]);

  it('lists members added, edited in their source and removed (as retired), nothing else', async () => {
    const { s, c } = await collection();
    await sleep(50);
    const since = new Date();
    expect(await changesOf(c, since)).toMatchObject({ concepts: [], mappings: [] });

    // Removed: C01 (its reference) and M00; edited in the source: C02; added: C04 (new) and M03.
    await removeReferences(c, [`${s.url}concepts/C01/`, `${s.url}mappings/M00/`]).expect(204);
    await editConcept(s, 'C02', { datatype: 'Numeric' }).expect(200);
    await createConcept(t, s.url, s.owner, { id: 'C04' });
    await createMappingBetween(t, s.url, s.owner, [
      'M03',
      'SAME-AS',
      `${s.url}concepts/C03/`,
      `${s.url}concepts/C04/`,
    ]);
    await addReferences(c, {
      expressions: [`${s.url}concepts/C04/`, `${s.url}mappings/M03/`],
    }).expect(200);

    const changes = await changesOf(c, since);
    expect(shown(changes.concepts)).toEqual([
      ['C01', true],
      ['C02', false],
      ['C04', false],
    ]);
    expect(shown(changes.mappings)).toEqual([
      ['M00', true],
      ['M03', false],
    ]);
    // Removed from the collection only: the source still has it, not retired.
    const inSource = await request(t.app).get(`${s.url}concepts/C01/`).expect(200);
    expect(inSource.body.retired).toBe(false);
    // Without includeRetired removals are not shown (as for sources); a later time shows none.
    expect(shown((await changesOf(c, since, 'includeRetired=false')).concepts)).toEqual([
      ['C02', false],
      ['C04', false],
    ]);
    await sleep(50);
    expect(await changesOf(c, new Date())).toMatchObject({ concepts: [], mappings: [] });
    // The collection's own content is unchanged by how changes are read.
    const members = await request(t.app).get(`${c.url}concepts/?limit=0`).set(as(c.owner));
    expect(ids(members.body)).toEqual(['C00', 'C02', 'C03', 'C04']);
  });

  it('a member removed then added again is a change, not a removal', async () => {
    const { s, c } = await collection();
    await sleep(50);
    const since = new Date();
    const expression = `${s.url}concepts/C00/`;
    await removeReferences(c, [expression]).expect(204);
    await addReferences(c, { expressions: [expression] }).expect(200);
    expect(shown((await changesOf(c, since)).concepts)).toEqual([['C00', false]]);
  });

  it('an exclude reference removes members; paging covers changes and removals once each', async () => {
    const { s, c } = await collection();
    await sleep(50);
    const since = new Date();
    await addReferences(c, [{ url: s.url, code: 'C00', exclude: true }]).expect(200);
    await removeReferences(c, [`${s.url}concepts/C03/`]).expect(204);
    await editConcept(s, 'C02', { datatype: 'Numeric' }).expect(200);
    const all = shown((await changesOf(c, since)).concepts);
    expect(all).toEqual([
      ['C00', true],
      ['C02', false],
      ['C03', true],
    ]);
    const paged: Array<[string, boolean]> = [];
    for (let offset = 0; ; offset += 1) {
      const page = await request(t.app)
        .get(
          `${c.url}?includeConcepts=true&includeRetired=true&updatedSince=${since.toISOString()}&limit=1&offset=${offset}`,
        )
        .set(as(c.owner));
      paged.push(...(shown(page.body.concepts) as Array<[string, boolean]>));
      if (page.body.concepts.length < 1) break;
    }
    expect(paged).toEqual(all);
  });

  it('parallel reference adds and removals: the changes match the final members', async () => {
    const { s, c } = await collection();
    const code = (i: number) => `C${String(i).padStart(2, '0')}`;
    for (let i = 4; i < 12; i += 1) await createConcept(t, s.url, s.owner, { id: code(i) });
    await sleep(50);
    const since = new Date();
    const url = (i: number) => `${s.url}concepts/${code(i)}/`;
    // Removals of C00–C03 and adds of C04–C11, all at once.
    const results = await Promise.all([
      ...[0, 1, 2, 3].map((i) => removeReferences(c, [url(i)])),
      ...[4, 5, 6, 7, 8, 9, 10, 11].map((i) => addReferences(c, { expressions: [url(i)] })),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([
      ...Array(8).fill(200),
      204,
      204,
      204,
      204,
    ]);
    const changes = await changesOf(c, since);
    expect(shown(changes.concepts)).toEqual([
      ['C00', true],
      ['C01', true],
      ['C02', true],
      ['C03', true],
      ...[4, 5, 6, 7, 8, 9, 10, 11].map((i) => [code(i), false]),
    ]);
    const members = await request(t.app).get(`${c.url}concepts/?limit=0`).set(as(c.owner));
    expect(ids(members.body)).toEqual(changes.concepts.filter((x) => !x.retired).map((x) => x.id));
  });

  it('the member lists and GraphQL show the same changes, removals as retired', async () => {
    const { s, c } = await collection();
    await sleep(50);
    const since = new Date();
    await removeReferences(c, [`${s.url}concepts/C01/`, `${s.url}mappings/M02/`]).expect(204);
    await editConcept(s, 'C03', { datatype: 'Numeric' }).expect(200);
    const query = `updatedSince=${since.toISOString()}&includeRetired=true&limit=0`;
    const concepts = await request(t.app).get(`${c.url}concepts/?${query}`).set(as(c.owner));
    expect(shown(concepts.body)).toEqual([
      ['C01', true],
      ['C03', false],
    ]);
    const mappings = await request(t.app).get(`${c.url}mappings/?${query}`).set(as(c.owner));
    expect(shown(mappings.body)).toEqual([['M02', true]]);
    const res = await gql(
      t,
      c.owner.auth,
      `query($url: String!, $since: DateTimeISO) {
         collection(url: $url) {
           concepts(updatedSince: $since, includeRetired: true, limit: 0) { items { id retired } }
           mappings(updatedSince: $since, includeRetired: true, limit: 0) { items { id retired } }
         }
       }`,
      { url: c.url, since: since.toISOString() },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.collection.concepts.items).toEqual([
      { id: 'C01', retired: true },
      { id: 'C03', retired: false },
    ]);
    expect(res.data.collection.mappings.items).toEqual([{ id: 'M02', retired: true }]);
  });

  it('shows a removal only to those who may see its source; a bad updatedSince is a 400', async () => {
    const hidden = await source(2, { public_access: 'None' });
    const c = await createCollection(
      t,
      { id: `Z${crypto.randomBytes(3).toString('hex')}` },
      { owner: hidden.owner, org: hidden.org },
    );
    const expressions = [`${hidden.url}concepts/C00/`, `${hidden.url}concepts/C01/`];
    await addReferences(c, { expressions }, hidden.owner).expect(200);
    await sleep(50);
    const since = new Date();
    await removeReferences(c, [expressions[0]], hidden.owner).expect(204);
    const url = `${c.url}?includeConcepts=true&includeRetired=true&limit=0&updatedSince=${since.toISOString()}`;
    const anonymous = await request(t.app).get(url);
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.concepts).toEqual([]);
    const own = await request(t.app).get(url).set(as(hidden.owner));
    expect(shown(own.body.concepts)).toEqual([['C00', true]]);
    const bad = await request(t.app).get(`${c.url}?includeConcepts=true&updatedSince=yesterday`);
    expect(bad.status).toBe(400);
  });

  it('the zipped answer (Compress: true) holds the removals too', async () => {
    const { s, c } = await collection();
    await sleep(50);
    const since = new Date();
    await removeReferences(c, [`${s.url}concepts/C03/`]).expect(204);
    const zipped = await request(t.app)
      .get(
        `${c.url}?includeConcepts=true&includeMappings=true&includeRetired=true&updatedSince=${since.toISOString()}`,
      )
      .set(as(c.owner))
      .set('Compress', 'true')
      .buffer(true)
      .parse(binary);
    expect(zipped.status).toBe(200);
    const body = JSON.parse((await unzip(zipped.body as Buffer))['export.json']);
    expect(shown(body.concepts)).toEqual([['C03', true]]);
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
    await editConcept(s, 'C03', { concept_class: 'Diagnosis' }).expect(200);
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
