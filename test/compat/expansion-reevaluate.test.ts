import request from 'supertest';
import { createTestApp, createUser, tasksSettled, uniqueId, type TestApp } from '../factories';
import {
  createCollection,
  createConcept,
  createSource,
  createVersion,
  type TestSource,
} from '../factories/content';
import { gql } from '../graphql/gql';

/**
 * What the web client's collection versions tab reads and does with an expansion (oclweb3
 * `repos/CollectionVersionsTab.jsx`, oclapi2 `core/collections/urls.py`): `processing/`,
 * `resolved-repo-updates/` (which referenced repositories have a newer version) and
 * `re-evaluate/` (evaluate the references again), through REST and GraphQL.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

interface World {
  source: TestSource;
  collection: TestSource;
  canonical: string;
  /** `{collection}cv1/expansions/autoexpand-cv1/` */
  expansion: string;
}

/**
 * Source S (A, B; a canonical URL) released as v1; collection C (a canonical URL too)
 * referencing A and B by S's canonical URL without a version (so its newest release, v1),
 * released as cv1 (its default expansion `autoexpand-cv1`).
 */
async function world(): Promise<World> {
  const system = `http://example.org/cs/${uniqueId('s')}`;
  const source = await createSource(t, { canonical_url: system });
  for (const id of ['A', 'B']) await createConcept(t, source.url, source.owner, { id });
  await createVersion(t, source.url, source.owner, 'v1', { released: true });
  const canonical = `http://example.org/vs/${uniqueId('c')}`;
  const collection = await createCollection(
    t,
    { canonical_url: canonical },
    { owner: source.owner, org: source.org },
  );
  await request(t.app)
    .put(`${collection.url}references/`)
    .set('Authorization', source.owner.auth)
    .send({
      data: [
        { url: system, code: 'A' },
        { url: system, code: 'B' },
      ],
    })
    .expect(200);
  await createVersion(t, collection.url, source.owner, 'cv1', { released: true });
  await tasksSettled(t, source.owner.username);
  return {
    source,
    collection,
    canonical,
    expansion: `${collection.url}cv1/expansions/autoexpand-cv1/`,
  };
}

/** S moves on after C's version: A renamed, B retired, released as v2. */
async function sourceMovesOn({ source }: World): Promise<void> {
  await request(t.app)
    .put(`${source.url}concepts/A/`)
    .set('Authorization', source.owner.auth)
    .send({ names: [{ name: 'Renamed A', locale: 'en', locale_preferred: true }] })
    .expect(200);
  await request(t.app)
    .delete(`${source.url}concepts/B/`)
    .set('Authorization', source.owner.auth)
    .expect(204);
  await createVersion(t, source.url, source.owner, 'v2', { released: true });
}

const names = (body: Array<{ id: string; display_name: string }>) =>
  body.map((c) => `${c.id}:${c.display_name}`);

async function members(w: World, at = 'cv1/'): Promise<string[]> {
  const res = await request(t.app).get(`${w.collection.url}${at}concepts/`);
  expect(res.status).toBe(200);
  return names(res.body);
}

function reevaluate(w: World, auth: string | undefined, url = w.expansion) {
  const req = request(t.app).post(`${url}re-evaluate/`);
  return auth ? req.set('Authorization', auth) : req;
}

describe('an expansion, as the collection versions tab reads it', () => {
  it('answers processing/ bare: false once evaluated', async () => {
    const w = await world();
    const res = await request(t.app).get(`${w.expansion}processing/`);
    expect(res.status).toBe(200);
    expect(res.body).toBe(false);
    expect(
      (await request(t.app).get(`${w.collection.url}cv1/expansions/nope/processing/`)).status,
    ).toBe(404);
  });

  it('lists the repository versions that now resolve to another: none, then v1 → v2', async () => {
    const w = await world();
    const before = await request(t.app).get(`${w.expansion}resolved-repo-updates/`);
    expect(before.status).toBe(200);
    expect(before.body).toEqual({});
    await sourceMovesOn(w);
    const after = await request(t.app).get(`${w.expansion}resolved-repo-updates/`);
    expect(after.body).toEqual({ [`${w.source.url}v1/`]: `${w.source.url}v2/` });
  });

  it('keeps a private source private: its newer version is not named to those who cannot see it', async () => {
    const w = await world();
    await sourceMovesOn(w);
    await request(t.app)
      .put(w.source.url)
      .set('Authorization', w.source.owner.auth)
      .send({ public_access: 'None' })
      .expect(200);
    const stranger = await createUser(t);
    const res = await request(t.app)
      .get(`${w.expansion}resolved-repo-updates/`)
      .set('Authorization', stranger.auth);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    const owner = await request(t.app)
      .get(`${w.expansion}resolved-repo-updates/`)
      .set('Authorization', w.source.owner.auth);
    expect(owner.body).toEqual({ [`${w.source.url}v1/`]: `${w.source.url}v2/` });
  });
});

describe('re-evaluating an expansion', () => {
  it('reads what its references resolve to now, and its repository updates are then none', async () => {
    const w = await world();
    await sourceMovesOn(w);
    expect(await members(w)).toEqual(['A:Name A', 'B:Name B']);
    const res = await reevaluate(w, w.source.owner.auth);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(
      expect.objectContaining({ mnemonic: 'autoexpand-cv1', is_processing: false }),
    );
    // B is retired in v2: a member still, listed with includeRetired.
    expect(await members(w)).toEqual(['A:Renamed A']);
    const all = await request(t.app)
      .get(`${w.collection.url}cv1/concepts/`)
      .query({ includeRetired: true });
    expect(all.body.map((c: { id: string; retired: boolean }) => [c.id, c.retired])).toEqual([
      ['A', false],
      ['B', true],
    ]);
    expect((await request(t.app).get(`${w.expansion}resolved-repo-updates/`)).body).toEqual({});
  });

  it('is refused to readers who may not edit the collection, changing nothing', async () => {
    const w = await world();
    await sourceMovesOn(w);
    const stranger = await createUser(t);
    expect((await reevaluate(w, undefined)).status).toBe(401);
    expect((await reevaluate(w, stranger.auth)).status).toBe(403);
    expect(await members(w)).toEqual(['A:Name A', 'B:Name B']);
    expect(
      (await reevaluate(w, w.source.owner.auth, `${w.collection.url}cv1/expansions/nope/`)).status,
    ).toBe(404);
  });

  it('tells subscribers: a member re-pinned counts as changed since before it', async () => {
    const w = await world();
    await sourceMovesOn(w);
    const since = new Date(Date.now() - 1000).toISOString();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const unchanged = await request(t.app)
      .get(`${w.collection.url}cv1/concepts/`)
      .query({ updatedSince: new Date().toISOString(), includeRetired: true });
    expect(unchanged.body).toEqual([]);
    const mark = new Date().toISOString();
    await reevaluate(w, w.source.owner.auth).expect(200);
    const changed = await request(t.app)
      .get(`${w.collection.url}cv1/concepts/`)
      .query({ updatedSince: mark, includeRetired: true });
    expect(changed.body.map((c: { id: string }) => c.id).sort()).toEqual(['A', 'B']);
    expect(since < mark).toBe(true);
  });

  it("withdraws the version's export, written from the members it had", async () => {
    const w = await world();
    const exportUrl = `${w.collection.url}cv1/export/`;
    expect((await request(t.app).get(exportUrl)).status).toBe(200);
    await sourceMovesOn(w);
    await reevaluate(w, w.source.owner.auth).expect(200);
    expect((await request(t.app).get(exportUrl)).status).toBe(204);
    // A new export is written from the members it has now.
    await request(t.app).post(exportUrl).set('Authorization', w.source.owner.auth).expect(202);
    await tasksSettled(t, w.source.owner.username);
    expect((await request(t.app).get(exportUrl)).status).toBe(200);
  });

  it('shows FHIR readers the new members: nothing kept of the old evaluation is served', async () => {
    const w = await world();
    const expand = () =>
      request(t.app)
        .get('/fhir/ValueSet/$expand')
        .query({ url: w.canonical, valueSetVersion: 'cv1' })
        .set('Accept', 'application/fhir+json');
    const displays = (body: {
      expansion: { contains: Array<{ code: string; display: string }> };
    }) => body.expansion.contains.map((c) => `${c.code}:${c.display}`);
    // Read twice: the second may be served from what the first kept.
    for (let i = 0; i < 2; i += 1) {
      const res = await expand();
      expect(res.status).toBe(200);
      expect(displays(res.body)).toEqual(['A:Name A', 'B:Name B']);
    }
    await sourceMovesOn(w);
    await reevaluate(w, w.source.owner.auth).expect(200);
    const after = await expand();
    expect(displays(after.body)).toEqual(['A:Renamed A']);
  });

  it("re-evaluates HEAD's auto-expansion too (its unversioned references read the newest release)", async () => {
    const w = await world();
    await sourceMovesOn(w);
    expect(await members(w, '')).toEqual(['A:Name A', 'B:Name B']);
    await reevaluate(
      w,
      w.source.owner.auth,
      `${w.collection.url}HEAD/expansions/autoexpand-HEAD/`,
    ).expect(200);
    expect(await members(w, '')).toEqual(['A:Renamed A']);
    // Later reference edits still reach it.
    await createConcept(t, w.source.url, w.source.owner, { id: 'N' });
    await request(t.app)
      .put(`${w.collection.url}references/`)
      .set('Authorization', w.source.owner.auth)
      .send({ data: { expressions: [`${w.source.url}HEAD/concepts/N/`] } })
      .expect(200);
    expect(await members(w, '')).toEqual(['A:Renamed A', 'N:Name N']);
  });

  it('parallel re-evaluations and reference edits all finish, each whole', async () => {
    const w = await world();
    await sourceMovesOn(w);
    const head = `${w.collection.url}HEAD/expansions/autoexpand-HEAD/`;
    const adds = ['P1', 'P2', 'P3'];
    for (const id of adds) await createConcept(t, w.source.url, w.source.owner, { id });
    const answers = await Promise.all([
      reevaluate(w, w.source.owner.auth),
      reevaluate(w, w.source.owner.auth),
      reevaluate(w, w.source.owner.auth, head),
      reevaluate(w, w.source.owner.auth, head),
      ...adds.map((id) =>
        request(t.app)
          .put(`${w.collection.url}references/`)
          .set('Authorization', w.source.owner.auth)
          .send({ data: { expressions: [`${w.source.url}HEAD/concepts/${id}/`] } }),
      ),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200, 200]);
    expect(await members(w)).toEqual(['A:Renamed A']);
    expect(await members(w, '')).toEqual(['A:Renamed A', 'P1:Name P1', 'P2:Name P2', 'P3:Name P3']);
  });
});

describe('through GraphQL', () => {
  it('reads isProcessing and repoUpdates, and re-evaluates', async () => {
    const w = await world();
    await sourceMovesOn(w);
    const read = `query($c: String!) {
      expansion(collection: $c, mnemonic: "autoexpand-cv1") { isProcessing repoUpdates { resolved latest } }
    }`;
    const before = await gql(t, w.source.owner.auth, read, { c: `${w.collection.url}cv1/` });
    expect(before.errors).toBeUndefined();
    expect(before.data.expansion).toEqual({
      isProcessing: false,
      repoUpdates: [{ resolved: `${w.source.url}v1/`, latest: `${w.source.url}v2/` }],
    });
    const denied = await gql(
      t,
      undefined,
      `mutation($c: String!) { reevaluateExpansion(collection: $c, mnemonic: "autoexpand-cv1") { expansion { mnemonic } } }`,
      { c: `${w.collection.url}cv1/` },
    );
    expect(denied.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    const done = await gql(
      t,
      w.source.owner.auth,
      `mutation($c: String!) {
        reevaluateExpansion(collection: $c, mnemonic: "autoexpand-cv1") { expansion { mnemonic repoUpdates { resolved } } }
      }`,
      { c: `${w.collection.url}cv1/` },
    );
    expect(done.errors).toBeUndefined();
    expect(done.data.reevaluateExpansion.expansion).toEqual({
      mnemonic: 'autoexpand-cv1',
      repoUpdates: [],
    });
    expect(await members(w)).toEqual(['A:Renamed A']);
  });
});
