import request from 'supertest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../factories';
import {
  createCollection,
  createConcept,
  createConcepts,
  createMappingBetween,
  createSource,
  createVersion,
} from '../factories/content';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(process.env.DEBUG_LOG ? { LOG_LEVEL: 'debug' } : {});
});
afterAll(async () => t.close());

interface World {
  owner: TestUser;
  org: string;
  source: string;
  collection: string;
}

/** An org with a source of concepts A–D (C retired), mapping A→B, and an empty collection. */
async function world(): Promise<World> {
  const { owner, org, url: source } = await createSource(t);
  const collection = (await createCollection(t, {}, { owner, org })).url;
  await createConcepts(t, source, owner, [
    ['A', 'Malaria', 'Diagnosis'],
    ['B', 'Fever', 'Symptom'],
    ['C', 'Cough', 'Symptom'],
    ['D', 'Aspirin', 'Drug'],
  ]);
  await request(t.app).delete(`${source}concepts/C/`).set('Authorization', owner.auth).expect(204);
  await createMappingBetween(t, source, owner, [
    'M1',
    'SAME-AS',
    `${source}concepts/A/`,
    `${source}concepts/B/`,
  ]);
  return { owner, org, source, collection };
}

/** Another source of the world's org, holding one concept of class Misc; answers its URL. */
async function otherSource(
  w: World,
  fields: Record<string, unknown>,
  [id, name]: [string, string],
): Promise<string> {
  const { url } = await createSource(t, fields, { owner: w.owner, org: w.org });
  await createConcept(t, url, w.owner, { id, names: [{ name, locale: 'en' }] });
  return url;
}

const put = (w: World, data: unknown, query = '') =>
  request(t.app)
    .put(`${w.collection}references/${query}`)
    .set('Authorization', w.owner.auth)
    .send({ data });

const ids = (body: Array<{ id: string }>) => body.map((c) => c.id).sort();

describe('adding references (PUT …/references/)', () => {
  it('adds concept expressions and the HEAD expansion holds them', async () => {
    const w = await world();
    const res = await put(w, { expressions: [`${w.source}concepts/A/`, `${w.source}concepts/B/`] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      expect.objectContaining({ added: true, expression: `${w.source}concepts/A/` }),
      expect.objectContaining({ added: true, expression: `${w.source}concepts/B/` }),
    ]);
    const concepts = await request(t.app)
      .get(`${w.collection}concepts/`)
      .set('Authorization', w.owner.auth);
    expect(concepts.status).toBe(200);
    expect(ids(concepts.body)).toEqual(['A', 'B']);
    const detail = await request(t.app).get(w.collection).set('Authorization', w.owner.auth);
    expect(detail.body.active_concepts).toBe(2);
  });

  it('answers added: false for duplicates and unknown concepts, and adds nothing for them', async () => {
    const w = await world();
    await put(w, { expressions: [`${w.source}concepts/A/`] }).expect(200);
    const res = await put(w, {
      expressions: [
        `${w.source}concepts/A/`,
        `${w.source}concepts/NOPE/`,
        '/orgs/nobody/sources/X/concepts/1/',
        'garbage',
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.map((r: { added: boolean }) => r.added)).toEqual([false, false, false, false]);
    expect(res.body[0].message).toMatch(/Already/);
    expect(res.body[1].message).toMatch(/not in/);
    expect(res.body[2].message).toMatch(/does not resolve/);
    const refs = await request(t.app)
      .get(`${w.collection}references/`)
      .set('Authorization', w.owner.auth);
    expect(refs.body).toHaveLength(1);
  });

  it('a whole-source reference with an exclusion: exclusions apply after inclusions', async () => {
    const w = await world();
    await put(w, [{ url: w.source, includeExclude: 'Exclude', code: 'B' }]).expect(200);
    await put(w, { expressions: [`${w.source}concepts/`] }).expect(200);
    const concepts = await request(t.app)
      .get(`${w.collection}concepts/?includeRetired=true`)
      .set('Authorization', w.owner.auth);
    expect(ids(concepts.body)).toEqual(['A', 'C', 'D']);
  });

  it('filters and cascade', async () => {
    const w = await world();
    await put(w, [
      { url: w.source, filter: [{ property: 'concept_class', op: '=', value: 'Symptom' }] },
    ]).expect(200);
    let concepts = await request(t.app)
      .get(`${w.collection}concepts/?includeRetired=true`)
      .set('Authorization', w.owner.auth);
    expect(ids(concepts.body)).toEqual(['B', 'C']);
    await put(w, { expressions: [`${w.source}concepts/A/`] }, '?cascade=sourcemappings').expect(
      200,
    );
    const mappings = await request(t.app)
      .get(`${w.collection}mappings/`)
      .set('Authorization', w.owner.auth);
    expect(mappings.body.map((m: { id: string }) => m.id)).toEqual(['M1']);
    concepts = await request(t.app)
      .get(`${w.collection}concepts/`)
      .set('Authorization', w.owner.auth);
    expect(ids(concepts.body)).toEqual(['A', 'B']);
  });

  it('removing a reference drops what only it held', async () => {
    const w = await world();
    await put(w, { expressions: [`${w.source}concepts/A/`, `${w.source}concepts/`] }).expect(200);
    await request(t.app)
      .delete(`${w.collection}references/`)
      .set('Authorization', w.owner.auth)
      .send({ expressions: [`${w.source}concepts/`] })
      .expect(204);
    const concepts = await request(t.app)
      .get(`${w.collection}concepts/`)
      .set('Authorization', w.owner.auth);
    expect(ids(concepts.body)).toEqual(['A']);
  });

  it('dynamic references follow a source edit; static ones and versions keep theirs', async () => {
    const w = await world();
    const a1 = await request(t.app)
      .get(`${w.source}concepts/A/versions/`)
      .set('Authorization', w.owner.auth);
    const firstVersion = a1.body[0].version;
    await put(w, {
      expressions: [
        `${w.source}concepts/A/`,
        `${w.source}concepts/B/${(await request(t.app).get(`${w.source}concepts/B/versions/`).set('Authorization', w.owner.auth)).body[0].version}/`,
      ],
    }).expect(200);
    await createVersion(t, w.collection, w.owner, 'v1');
    await request(t.app)
      .put(`${w.source}concepts/A/`)
      .set('Authorization', w.owner.auth)
      .send({
        concept_class: 'Diagnosis',
        names: [{ name: 'Malaria fever', locale: 'en', locale_preferred: true }],
      })
      .expect(200);
    const head = await request(t.app)
      .get(`${w.collection}concepts/`)
      .set('Authorization', w.owner.auth);
    const v1 = await request(t.app)
      .get(`${w.collection}v1/concepts/`)
      .set('Authorization', w.owner.auth);
    const nameOf = (
      body: Array<{ id: string; display_name: string; version: string }>,
      id: string,
    ) => body.find((c) => c.id === id)!;
    expect(nameOf(head.body, 'A').display_name).toBe('Malaria fever');
    expect(nameOf(v1.body, 'A').display_name).toBe('Malaria');
    expect(nameOf(v1.body, 'A').version).toBe(firstVersion);
    const expansions = await request(t.app)
      .get(`${w.collection}expansions/?includeSummary=true`)
      .set('Authorization', w.owner.auth);
    expect(expansions.body.map((e: { mnemonic: string }) => e.mnemonic).sort()).toEqual([
      'autoexpand-HEAD',
      'autoexpand-v1',
    ]);
  });
});

describe('large adds as a background task', () => {
  it('async=true answers 202 with a task whose result is the per-reference answer', async () => {
    const w = await world();
    const res = await put(
      w,
      { expressions: [`${w.source}concepts/A/`, `${w.source}concepts/NOPE/`] },
      '?async=true',
    );
    expect(res.status).toBe(202);
    expect(res.headers.location).toBe(`/tasks/${res.body.id}/`);
    let task = res.body;
    for (let i = 0; i < 100 && !['SUCCESS', 'FAILURE'].includes(task.state); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      task = (await request(t.app).get(`/tasks/${res.body.id}/`).set('Authorization', w.owner.auth))
        .body;
    }
    expect(task.state).toBe('SUCCESS');
    expect(task.result.map((r: { added: boolean }) => r.added)).toEqual([true, false]);
    const concepts = await request(t.app)
      .get(`${w.collection}concepts/`)
      .set('Authorization', w.owner.auth);
    expect(ids(concepts.body)).toEqual(['A']);
  });

  it('an add of more than 2,000 references runs as a task, and the request answers its results', async () => {
    const w = await world();
    const expressions = [
      `${w.source}concepts/A/`,
      ...Array.from({ length: 2_000 }, (_, i) => `${w.source}concepts/X${i}/`),
    ];
    const res = await put(w, { expressions });
    expect(res.status).toBe(200);
    const results = res.body as Array<{ added: boolean; id?: number; message: string }>;
    expect(results).toHaveLength(2_001);
    expect(results[0]).toMatchObject({ added: true, id: expect.any(Number) });
    expect(results.slice(1).every((r) => !r.added)).toBe(true);
    const tasks = await request(t.app).get('/tasks/').set('Authorization', w.owner.auth);
    expect(tasks.body).toHaveLength(1);
    expect(tasks.body[0]).toMatchObject({
      state: 'SUCCESS',
      summary: expect.stringMatching(/^Add 2001 references/),
    });
    const refs = await request(t.app)
      .get(`${w.collection}references/`)
      .set('Authorization', w.owner.auth);
    expect(refs.body).toEqual([expect.objectContaining({ id: results[0].id })]);
  });

  it('a malformed body is refused at once, before anything is queued', async () => {
    const w = await world();
    const res = await request(t.app)
      .put(`${w.collection}references/?async=true`)
      .set('Authorization', w.owner.auth)
      .send({ data: 42 });
    expect(res.status).toBe(400);
    const tasks = await request(t.app).get('/tasks/').set('Authorization', w.owner.auth);
    expect(tasks.body).toEqual([]);
  });
});

describe('how an expansion shows its concepts (spec operations §2.2, §2.4)', () => {
  const expansion = (w: World, mnemonic: string, parameters: object) =>
    request(t.app)
      .post(`${w.collection}HEAD/expansions/`)
      .set('Authorization', w.owner.auth)
      .send({ mnemonic, parameters });
  const concepts = (w: World, mnemonic: string, query = '') =>
    request(t.app)
      .get(`${w.collection}HEAD/expansions/${mnemonic}/concepts/${query}`)
      .set('Authorization', w.owner.auth);

  it('offset and count make the expansion a window of its members', async () => {
    const w = await world();
    await put(w, { expressions: [`${w.source}concepts/`] }).expect(200);
    await expansion(w, 'window', { offset: 1, count: 1, activeOnly: true }).expect(201);
    const res = await concepts(w, 'window', '?sortAsc=id');
    expect(res.status).toBe(200);
    expect(res.body.map((c: { id: string }) => c.id)).toEqual(['B']);
    expect(res.headers.num_found).toBe('1');
  });

  it("a reference's display overrides the display name; displayLanguage picks the name", async () => {
    const w = await world();
    await request(t.app)
      .post(`${w.source}concepts/B/names/`)
      .set('Authorization', w.owner.auth)
      .send({ name: 'Fièvre', locale: 'fr', locale_preferred: true })
      .expect(201);
    await put(w, [{ url: w.source, code: 'A', display: 'Paludism (local)' }]).expect(200);
    await put(w, { expressions: [`${w.source}concepts/B`] }).expect(200);
    await expansion(w, 'fr', { displayLanguage: 'fr', includeDesignations: true }).expect(201);
    const res = await concepts(w, 'fr', '?sortAsc=id');
    expect(res.body.map((c: { display_name: string }) => c.display_name)).toEqual([
      'Paludism (local)',
      'Fièvre',
    ]);
    expect(res.body[1].names.map((n: { name: string }) => n.name).sort()).toEqual([
      'Fever',
      'Fièvre',
    ]);
  });

  it('an expression without its trailing slash is the same reference', async () => {
    const w = await world();
    await put(w, { expressions: [`${w.source}concepts/A/`] }).expect(200);
    const res = await put(w, { expressions: [`${w.source}concepts/A`] });
    expect(res.body[0]).toMatchObject({ added: false, message: expect.stringMatching(/Already/) });
  });

  it('counts never include members from a source the caller cannot see', async () => {
    const w = await world();
    const hidden = await otherSource(w, { id: 'P', public_access: 'None' }, ['X', 'Secret']);
    await put(w, { expressions: [`${w.source}concepts/A/`, `${hidden}concepts/X/`] }).expect(200);
    const member = await request(t.app).get(w.collection).set('Authorization', w.owner.auth);
    expect(member.body.active_concepts).toBe(2);
    const outsider = await createUser(t);
    const seen = await request(t.app).get(w.collection).set('Authorization', outsider.auth);
    expect(seen.body.active_concepts).toBe(1);
    const summary = await request(t.app)
      .get(`${w.collection}HEAD/expansions/autoexpand-HEAD/`)
      .set('Authorization', outsider.auth);
    expect(summary.body.summary.active_concepts).toBe(1);
    const listed = await request(t.app)
      .get(`${w.collection}concepts/`)
      .set('Authorization', outsider.auth);
    expect(ids(listed.body)).toEqual(['A']);
  });
});

describe('hierarchy filters (is-a, descendent-of, is-not-a, generalizes)', () => {
  it('concepts name their parents and references filter on the hierarchy', async () => {
    const w = await world();
    // D's parent is A; B's parent is D: A > D > B.
    for (const [id, parent] of [
      ['D', 'A'],
      ['B', 'D'],
    ]) {
      const res = await request(t.app)
        .patch(`${w.source}concepts/${id}/`)
        .set('Authorization', w.owner.auth)
        .send({ parent_concept_urls: [`${w.source}concepts/${parent}/`] });
      expect(res.status).toBe(200);
    }
    const detail = await request(t.app)
      .get(`${w.source}concepts/B/`)
      .set('Authorization', w.owner.auth);
    expect(detail.body.parent_concept_urls).toEqual([`${w.source}concepts/D/`]);
    const bad = await request(t.app)
      .patch(`${w.source}concepts/A/`)
      .set('Authorization', w.owner.auth)
      .send({ parent_concept_urls: [`${w.source}concepts/NOPE/`] });
    expect(bad.status).toBe(400);

    const members = async (op: string, value: string) => {
      const c = `/orgs/${w.org}/collections/`;
      const id = `H${op.replace(/-/g, '')}${value}`;
      await request(t.app)
        .post(c)
        .set('Authorization', w.owner.auth)
        .send({ id, name: id })
        .expect(201);
      const res = await request(t.app)
        .put(`${c}${id}/references/`)
        .set('Authorization', w.owner.auth)
        .send({ data: [{ url: w.source, filter: [{ property: 'concept', op, value }] }] });
      expect(res.body).toEqual([expect.objectContaining({ added: true })]);
      const list = await request(t.app)
        .get(`${c}${id}/concepts/?includeRetired=true`)
        .set('Authorization', w.owner.auth);
      return ids(list.body);
    };
    expect(await members('is-a', 'D')).toEqual(['B', 'D']);
    expect(await members('descendent-of', 'A')).toEqual(['B', 'D']);
    expect(await members('is-not-a', 'D')).toEqual(['A', 'C']);
    expect(await members('generalizes', 'B')).toEqual(['A', 'B', 'D']);
  });
});

describe('when referenced content goes away', () => {
  it('deleting a source leaves the collection readable, without its concepts', async () => {
    const w = await world();
    const other = await otherSource(w, { id: 'GONE', name: 'Gone' }, ['G', 'Gone']);
    await put(w, { expressions: [`${w.source}concepts/A/`, `${other}concepts/G/`] }).expect(200);
    await request(t.app).delete(other).set('Authorization', w.owner.auth).expect(204);
    const detail = await request(t.app).get(w.collection).set('Authorization', w.owner.auth);
    expect(detail.body.active_concepts).toBe(1);
    const listed = await request(t.app)
      .get(`${w.collection}concepts/`)
      .set('Authorization', w.owner.auth);
    expect(ids(listed.body)).toEqual(['A']);
    await createVersion(t, w.collection, w.owner, 'v1');
    const v1 = await request(t.app)
      .get(`${w.collection}v1/concepts/`)
      .set('Authorization', w.owner.auth);
    expect(ids(v1.body)).toEqual(['A']);
  });
});
