import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createOrg, createTestApp, uniqueId, type TestApp, type TestUser } from '../factories';
import {
  createCollection,
  createConcept,
  createMappingBetween,
  createRepo,
  createSource,
  createVersion,
  type TestSource,
} from '../factories/content';
import { gql } from '../graphql/gql';
import { binary, unzip } from '../factories/zip';
import { as } from '../factories/http';
import { orgWithPeople } from '../factories/people';

/**
 * Issue 23 defect 1: an export is one file served to every reader of its version, so it holds
 * only what the least of them sees (docs/design-choices.md, "Exports: whose rights"): a public repository's is written as an
 * anonymous reader, a private org repository's as a plain member of that org alone, a private
 * user repository's as its owner's own. It is never served once it no longer fits: a repository
 * whose audience changed, or content it read made private since.
 */

let t: TestApp;
let dataDir: string;
beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'export-privacy-'));
  t = await createTestApp({ DATA_DIR: dataDir });
});
afterAll(async () => {
  await t.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** GETs the export until it is no longer being written (208); answers the last response. */
async function settled(url: string, by?: TestUser): Promise<request.Response> {
  for (let i = 0; i < 150; i += 1) {
    const res = await request(t.app).get(url).set(as(by)).buffer(true).parse(binary);
    if (res.status !== 208) return res;
    await sleep(100);
  }
  throw new Error(`${url} still processing`);
}

interface Exported {
  concepts: Array<{ id: string }>;
  mappings: Array<{ id: string }>;
}

async function exportedIn(res: request.Response): Promise<{ text: string; json: Exported }> {
  expect(res.status).toBe(200);
  const text = (await unzip(res.body as Buffer))['export.json'];
  return { text, json: JSON.parse(text) as Exported };
}

/** What the live read of a version with every item shows `reader`. */
async function liveRead(url: string, reader?: TestUser): Promise<Exported> {
  const res = await request(t.app)
    .get(`${url}?includeConcepts=true&includeMappings=true&includeRetired=true&limit=0`)
    .set(as(reader));
  expect(res.status).toBe(200);
  return res.body as Exported;
}

const ids = (items: Array<{ id: string }>) => items.map((item) => item.id).sort();

/** A word no other test writes: it appears in a response only if the secret concept leaks. */
const SECRET_NAME = uniqueId('Zyxwvut');

/**
 * Org A (alice administers it; bob is a plain member): private `secret` (S1 named SECRET_NAME, a
 * mapping S1 → P1), public `open` (P1, a mapping P1 → S1), and carol, signed in, no member.
 */
interface World {
  alice: TestUser;
  bob: TestUser;
  carol: TestUser;
  org: string;
  secret: TestSource;
  open: TestSource;
}

async function world(): Promise<World> {
  const {
    org: { id: org },
    admin: alice,
    member: bob,
    outsider: carol,
  } = await orgWithPeople(t);
  // Not `secret`: one test here makes it public, and the database is shared with the other
  // files, whose global lists must not find a public source of their private one's id.
  const secret = await createSource(
    t,
    { id: 'hidden', public_access: 'None' },
    { owner: alice, org },
  );
  const open = await createSource(t, { id: 'open' }, { owner: alice, org });
  await createConcept(t, secret.url, alice, {
    id: 'S1',
    concept_class: 'Diagnosis',
    names: [
      { name: SECRET_NAME, locale: 'en', locale_preferred: true, name_type: 'FULLY_SPECIFIED' },
    ],
    extras: { hidden: SECRET_NAME },
  });
  await createConcept(t, open.url, alice, { id: 'P1' });
  await createMappingBetween(t, secret.url, alice, [
    'SM1',
    'SAME-AS',
    `${secret.url}concepts/S1/`,
    `${open.url}concepts/P1/`,
  ]);
  await createMappingBetween(t, open.url, alice, [
    'PM1',
    'SAME-AS',
    `${open.url}concepts/P1/`,
    `${secret.url}concepts/S1/`,
  ]);
  return { alice, bob, carol, org, secret, open };
}

/** A collection of `w.org` holding S1, SM1 and P1, with version v1 (its export queued). */
async function collectionOfAll(w: World, fields: Record<string, unknown>): Promise<TestSource> {
  const collection = await createCollection(
    t,
    { id: uniqueId('col'), ...fields },
    { owner: w.alice, org: w.org },
  );
  const added = await request(t.app)
    .put(`${collection.url}references/`)
    .set(as(w.alice))
    .send({
      data: {
        expressions: [
          `${w.secret.url}concepts/S1/`,
          `${w.secret.url}mappings/SM1/`,
          `${w.open.url}concepts/P1/`,
        ],
      },
    });
  expect(added.status).toBe(200);
  await createVersion(t, collection.url, w.alice, 'v1');
  return collection;
}

describe('a public collection referencing a private source', () => {
  let w: World;
  let pubcol: TestSource;
  beforeAll(async () => {
    w = await world();
    pubcol = await collectionOfAll(w, {});
  });

  it('exports to anonymous callers only what they see live: no private concept or mapping', async () => {
    const { text, json } = await exportedIn(await settled(`${pubcol.url}v1/export/`));
    expect(text).not.toContain(SECRET_NAME);
    expect(ids(json.concepts)).toEqual(['P1']);
    expect(ids(json.mappings)).toEqual([]);
    expect(json).toEqual(await liveRead(`${pubcol.url}v1/`));
  });

  it('serves signed-in outsiders and members the same file, without the private content', async () => {
    for (const reader of [w.carol, w.bob, w.alice]) {
      const { text, json } = await exportedIn(await settled(`${pubcol.url}v1/export/`, reader));
      expect(text).not.toContain(SECRET_NAME);
      expect(ids(json.concepts)).toEqual(['P1']);
    }
  });

  it('leads GraphQL download addresses to the same file', async () => {
    await settled(`${pubcol.url}v1/export/`);
    for (const reader of [undefined, w.carol.auth]) {
      const read = await gql(
        t,
        reader,
        `query($url: String!) { collection(url: $url) { export { state downloadUrl } } }`,
        { url: `${pubcol.url}v1/` },
      );
      const exported = read.data.collection.export;
      expect(exported.state).toBe('READY');
      const file = await request(t.app)
        .get(new URL(String(exported.downloadUrl)).pathname)
        .buffer(true)
        .parse(binary);
      const { text, json } = await exportedIn(file);
      expect(text).not.toContain(SECRET_NAME);
      expect(ids(json.concepts)).toEqual(['P1']);
    }
  });
});

describe('a private org collection', () => {
  it("holds the org's private content, never another org's that its creator also sees", async () => {
    const w = await world();
    // Alice also administers org B, whose private source holds T1.
    const { id: orgB } = await createOrg(t, w.alice);
    const other = await createSource(
      t,
      { id: 'bsecret', public_access: 'None' },
      { owner: w.alice, org: orgB },
    );
    const otherName = uniqueId('Qwertzui');
    await createConcept(t, other.url, w.alice, {
      id: 'T1',
      names: [{ name: otherName, locale: 'en', locale_preferred: true }],
    });
    const collection = await createCollection(
      t,
      { id: uniqueId('col'), public_access: 'None' },
      { owner: w.alice, org: w.org },
    );
    const added = await request(t.app)
      .put(`${collection.url}references/`)
      .set(as(w.alice))
      .send({ data: { expressions: [`${w.secret.url}concepts/S1/`, `${other.url}concepts/T1/`] } });
    expect(added.status).toBe(200);
    await createVersion(t, collection.url, w.alice, 'v1');

    const { text, json } = await exportedIn(await settled(`${collection.url}v1/export/`, w.bob));
    expect(text).toContain(SECRET_NAME);
    expect(text).not.toContain(otherName);
    expect(ids(json.concepts)).toEqual(['S1']);
    // Bob, a plain member of the org only, sees exactly that live.
    expect(json).toEqual(await liveRead(`${collection.url}v1/`, w.bob));
    expect((await request(t.app).get(`${collection.url}v1/export/`)).status).toBe(401);
    expect((await request(t.app).get(`${collection.url}v1/export/`).set(as(w.carol))).status).toBe(
      403,
    );
  });
});

describe("a private user's collection", () => {
  it("holds public content and its owner's own, never an org's private content", async () => {
    const w = await world();
    const own = await createRepo(t, `/users/${w.bob.username}`, w.bob, {
      id: 'mine',
      public_access: 'None',
    });
    await createConcept(t, own.url, w.bob, { id: 'U1' });
    const collection = await createRepo(
      t,
      `/users/${w.bob.username}`,
      w.bob,
      { id: 'mycol', public_access: 'None' },
      'collections',
    );
    const added = await request(t.app)
      .put(`${collection.url}references/`)
      .set(as(w.bob))
      .send({
        data: {
          expressions: [
            `${w.secret.url}concepts/S1/`,
            `${w.open.url}concepts/P1/`,
            `${own.url}concepts/U1/`,
          ],
        },
      });
    expect(added.status).toBe(200);
    await createVersion(t, collection.url, w.bob, 'v1');
    const { text, json } = await exportedIn(await settled(`${collection.url}v1/export/`, w.bob));
    expect(text).not.toContain(SECRET_NAME);
    expect(ids(json.concepts)).toEqual(['P1', 'U1']);
  });
});

describe('an export that no longer fits what it was written from', () => {
  it('is absent once content it read is made private, and is written again without it', async () => {
    const w = await world();
    const pubcol = await collectionOfAll(w, {});
    const before = await settled(`${pubcol.url}v1/export/`);
    expect(ids((await exportedIn(before)).json.concepts)).toEqual(['P1']);
    const address = new URL(String(before.headers.exporturl)).pathname;

    const hidden = await request(t.app)
      .put(w.open.url)
      .set(as(w.alice))
      .send({ public_access: 'None' });
    expect(hidden.status).toBe(200);

    expect((await request(t.app).get(address)).status).toBe(410);
    expect((await request(t.app).get(`${pubcol.url}v1/export/`)).status).toBe(204);
    expect((await request(t.app).post(`${pubcol.url}v1/export/`).set(as(w.alice))).status).toBe(
      202,
    );
    const again = await exportedIn(await settled(`${pubcol.url}v1/export/`));
    expect(ids(again.json.concepts)).toEqual([]);
    expect(again.json).toEqual(await liveRead(`${pubcol.url}v1/`));
  });

  it('is absent once its repository is made public, and is written again for everyone', async () => {
    const w = await world();
    const collection = await collectionOfAll(w, { public_access: 'None' });
    const members = await exportedIn(await settled(`${collection.url}v1/export/`, w.bob));
    expect(ids(members.json.concepts)).toEqual(['P1', 'S1']);

    const shown = await request(t.app)
      .put(collection.url)
      .set(as(w.alice))
      .send({ public_access: 'View' });
    expect(shown.status).toBe(200);

    expect((await request(t.app).get(`${collection.url}v1/export/`)).status).toBe(204);
    expect((await request(t.app).post(`${collection.url}v1/export/`).set(as(w.alice))).status).toBe(
      202,
    );
    const everyone = await exportedIn(await settled(`${collection.url}v1/export/`));
    expect(everyone.text).not.toContain(SECRET_NAME);
    expect(ids(everyone.json.concepts)).toEqual(['P1']);
  });

  it('stays served when visibility only widens', async () => {
    const w = await world();
    const pubcol = await collectionOfAll(w, {});
    const first = await settled(`${pubcol.url}v1/export/`);
    expect(first.status).toBe(200);
    const shown = await request(t.app)
      .put(w.secret.url)
      .set(as(w.alice))
      .send({ public_access: 'View' });
    expect(shown.status).toBe(200);
    const later = await settled(`${pubcol.url}v1/export/`);
    expect(later.status).toBe(200);
    expect(later.headers['content-disposition']).toBe(first.headers['content-disposition']);
  });
});
