import request from 'supertest';
import {
  addMember,
  createTestApp,
  createUser,
  uniqueId,
  type TestApp,
  type TestUser,
} from '../factories';
import {
  collectionWorld,
  type CollectionWorld,
  type CollectionWorldOptions,
} from '../factories/collection-world';
import { createConcepts, createRepo, createVersion } from '../factories/content';
import { as } from '../factories/http';

/**
 * Collection references through REST (issue 5 parts 1 and 7; spec operations §2.4, OCL's
 * `PUT|GET|DELETE …/references/`): every input form, the cascade parameter, duplicates and bad
 * references, listing and removal, versions keeping theirs, and who may do what.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

type World = CollectionWorld;

/**
 * The shared collection world (concepts A–E in S, C retired, X in S2, collection C) with mappings
 * M1 A→B, M2 B→E, M3 E→D (a chain inside S) and M4 A→X where X is in source S2.
 */
const world = (options: Omit<CollectionWorldOptions, 'mappings' | 'conceptExtras'> = {}) =>
  collectionWorld(t, {
    ...options,
    mappings: (w) => [
      ['M1', 'SAME-AS', `${w.source}concepts/A/`, `${w.source}concepts/B/`],
      ['M2', 'SAME-AS', `${w.source}concepts/B/`, `${w.source}concepts/E/`],
      ['M3', 'SAME-AS', `${w.source}concepts/E/`, `${w.source}concepts/D/`],
      ['M4', 'SAME-AS', `${w.source}concepts/A/`, `${w.other}concepts/X/`],
    ],
  });

async function renameConcept(w: World, id: string, name: string, cls: string) {
  await request(t.app)
    .put(`${w.source}concepts/${id}/`)
    .set(as(w.owner))
    .send({ concept_class: cls, names: [{ name, locale: 'en', locale_preferred: true }] })
    .expect(200);
}

interface Added {
  added: boolean;
  expression: string;
  message: string;
  id?: number;
}

/** `PUT …/references/` with a raw body. */
const putBody = (w: World, body: unknown, query = '', user: TestUser | null = w.owner) =>
  request(t.app)
    .put(`${w.collection}references/${query}`)
    .set(as(user ?? undefined))
    .send(body as object);

/** `PUT …/references/` with `{data}`; expects 200 and answers the per-reference results. */
async function add(w: World, data: unknown, query = ''): Promise<Added[]> {
  const res = await putBody(w, { data }, query);
  expect(res.status).toBe(200);
  return res.body as Added[];
}

async function referenceList(w: World, path = w.collection, query = '', user = w.owner) {
  const res = await request(t.app).get(`${path}references/${query}`).set(as(user));
  expect(res.status).toBe(200);
  return res.body as Array<
    { id: number; expression: string; include: boolean } & Record<string, unknown>
  >;
}

/** `user` null: anonymous. */
async function conceptIds(w: World, path = w.collection, user: TestUser | null = w.owner) {
  const res = await request(t.app)
    .get(`${path}concepts/?includeRetired=true&limit=100`)
    .set(as(user ?? undefined));
  expect(res.status).toBe(200);
  return (res.body as Array<{ id: string }>).map((c) => c.id).sort();
}

async function concepts(w: World, path = w.collection) {
  const res = await request(t.app)
    .get(`${path}concepts/?includeRetired=true&limit=100`)
    .set(as(w.owner));
  expect(res.status).toBe(200);
  return res.body as Array<{ id: string; display_name: string; version: string }>;
}

async function mappingIds(w: World, path = w.collection, user: TestUser | null = w.owner) {
  const res = await request(t.app)
    .get(`${path}mappings/?includeRetired=true&limit=100`)
    .set(as(user ?? undefined));
  expect(res.status).toBe(200);
  return (res.body as Array<{ id: string }>).map((m) => m.id).sort();
}

async function conceptVersionIds(w: World, id: string): Promise<string[]> {
  const res = await request(t.app).get(`${w.source}concepts/${id}/versions/`).set(as(w.owner));
  expect(res.status).toBe(200);
  return (res.body as Array<{ version: string }>).map((v) => v.version);
}

const addedFlags = (results: Added[]) => results.map((r) => r.added);

describe('reference input forms', () => {
  it('{data: {expressions}} adds concepts and mappings and answers {added, expression, message} for each', async () => {
    const w = await world();
    const results = await add(w, {
      expressions: [`${w.source}concepts/A/`, `${w.source}mappings/M1/`],
    });
    expect(results).toEqual([
      {
        added: true,
        expression: `${w.source}concepts/A/`,
        message: expect.any(String),
        id: expect.any(Number),
      },
      {
        added: true,
        expression: `${w.source}mappings/M1/`,
        message: expect.any(String),
        id: expect.any(Number),
      },
    ]);
    expect(await conceptIds(w)).toEqual(['A']);
    expect(await mappingIds(w)).toEqual(['M1']);
    const refs = await referenceList(w);
    expect(refs.map((r) => [r.expression, r.resource_type])).toEqual([
      [`${w.source}concepts/A/`, 'Concept'],
      [`${w.source}mappings/M1/`, 'Mapping'],
    ]);
  });

  it('{data: {concepts: [...], mappings: [...]}} adds the listed concepts and mappings', async () => {
    const w = await world();
    const results = await add(w, {
      concepts: [`${w.source}concepts/A/`, `${w.source}concepts/B/`],
      mappings: [`${w.source}mappings/M2/`],
    });
    expect(addedFlags(results)).toEqual([true, true, true]);
    expect(await conceptIds(w)).toEqual(['A', 'B']);
    expect(await mappingIds(w)).toEqual(['M2']);
  });

  it('{concepts: "*", uri} takes every concept of the repository; {mappings: "*", uri} every mapping', async () => {
    const w = await world();
    const first = await add(w, { concepts: '*', uri: w.source });
    expect(addedFlags(first)).toEqual([true]);
    expect(await conceptIds(w)).toEqual(['A', 'B', 'C', 'D', 'E']);
    expect(await mappingIds(w)).toEqual([]);
    // OCL also accepts the fields without the `data` wrapper.
    const res = await putBody(w, { mappings: '*', uri: w.source });
    expect(res.status).toBe(200);
    expect(addedFlags(res.body as Added[])).toEqual([true]);
    expect(await mappingIds(w)).toEqual(['M1', 'M2', 'M3', 'M4']);
  });

  it('{expressions: "*", uri} takes concepts and mappings alike', async () => {
    const w = await world();
    await add(w, { expressions: '*', uri: w.source });
    expect(await conceptIds(w)).toEqual(['A', 'B', 'C', 'D', 'E']);
    expect(await mappingIds(w)).toEqual(['M1', 'M2', 'M3', 'M4']);
  });

  it('"*" without uri is a 400 and adds nothing', async () => {
    const w = await world();
    const res = await putBody(w, { data: { concepts: '*' } });
    expect(res.status).toBe(400);
    expect(await referenceList(w)).toEqual([]);
  });

  it('expanded form: url + code, url + version + code, resourceType Mapping + id, and id alone', async () => {
    const w = await world();
    await createVersion(t, w.source, w.owner, 'v1');
    await renameConcept(w, 'B', 'Fever (renamed)', 'Symptom');
    const results = await add(w, [
      { url: w.source, code: 'A' },
      { url: w.source, version: 'v1', code: 'B' },
      { url: w.source, resourceType: 'Mapping', id: 'M1' },
      { url: w.source, id: 'M2' },
    ]);
    expect(addedFlags(results)).toEqual([true, true, true, true]);
    const list = await concepts(w);
    expect(list.map((c) => c.id).sort()).toEqual(['A', 'B']);
    // The version-pinned reference reads B as v1 held it.
    expect(list.find((c) => c.id === 'B')!.display_name).toBe('Fever');
    expect(await mappingIds(w)).toEqual(['M1', 'M2']);
    const refs = await referenceList(w);
    expect(refs.map((r) => [r.resource_type, r.code, r.version])).toEqual([
      ['Concept', 'A', null],
      ['Concept', 'B', 'v1'],
      ['Mapping', 'M1', null],
      ['Mapping', 'M2', null],
    ]);
  });

  it('expanded form: display and namespace are kept on the reference; static says whether a version is named', async () => {
    const w = await world();
    await createVersion(t, w.source, w.owner, 'v1');
    const [a, b] = await add(w, [
      { url: w.source, code: 'A', display: 'Paludism', namespace: `/orgs/${w.org}/` },
      { url: w.source, version: 'v1', code: 'B' },
    ]);
    expect([a.added, b.added]).toEqual([true, true]);
    const ref = await request(t.app).get(`${w.collection}references/${a.id}/`).set(as(w.owner));
    expect(ref.status).toBe(200);
    expect(ref.body).toMatchObject({
      id: a.id,
      expression: `${w.source}concepts/A/`,
      code: 'A',
      display: 'Paludism',
      namespace: `/orgs/${w.org}/`,
      include: true,
      static: false,
    });
    const pinned = await request(t.app).get(`${w.collection}references/${b.id}/`).set(as(w.owner));
    expect(pinned.body).toMatchObject({
      version: 'v1',
      expression: `${w.source}v1/concepts/B/`,
      static: true,
    });
  });

  it('expanded form: a filter list selects by property; includeExclude Exclude removes', async () => {
    const w = await world();
    const results = await add(w, [
      { url: w.source, filter: [{ property: 'concept_class', op: '=', value: 'Symptom' }] },
      { url: w.source, code: 'E', includeExclude: 'Exclude' },
    ]);
    expect(addedFlags(results)).toEqual([true, true]);
    expect(await conceptIds(w)).toEqual(['B', 'C']);
    const refs = await referenceList(w);
    expect(refs.map((r) => r.include)).toEqual([true, false]);
  });

  it('expanded form: cascade on the object brings the concept’s mappings', async () => {
    const w = await world();
    const results = await add(w, [{ url: w.source, code: 'B', cascade: 'sourcemappings' }]);
    expect(addedFlags(results)).toEqual([true]);
    expect(await conceptIds(w)).toEqual(['B']);
    expect(await mappingIds(w)).toEqual(['M2']);
  });

  it('OCL’s form: system with a concept list adds one reference per code; exclude: true excludes', async () => {
    const w = await world();
    const results = await add(w, {
      system: w.source,
      concept: [{ code: 'A' }, { code: 'B' }, { code: 'D' }],
    });
    expect(results.map((r) => [r.added, r.expression])).toEqual([
      [true, `${w.source}concepts/A/`],
      [true, `${w.source}concepts/B/`],
      [true, `${w.source}concepts/D/`],
    ]);
    await add(w, { system: w.source, code: 'D', exclude: true });
    expect(await conceptIds(w)).toEqual(['A', 'B']);
  });

  it('the concept shorthand org:source:concept adds that concept', async () => {
    const w = await world();
    const results = await add(w, { expressions: [`${w.org}:S:A`, `${w.org}:S:NOPE`] });
    expect(results.map((r) => [r.added, r.expression])).toEqual([
      [true, `${w.org}:S:A`],
      [false, `${w.org}:S:NOPE`],
    ]);
    expect(await conceptIds(w)).toEqual(['A']);
  });

  it('a canonical URL with |version resolves through the namespace to that source version', async () => {
    const canonical = `http://example.org/CodeSystem/${uniqueId('cs')}`;
    const w = await world({ sourceFields: { canonical_url: canonical } });
    await createVersion(t, w.source, w.owner, 'v1', { released: true });
    await renameConcept(w, 'A', 'Malaria (renamed)', 'Diagnosis');
    const results = await add(w, [
      { url: `${canonical}|v1`, code: 'A', namespace: `/orgs/${w.org}/` },
      { url: canonical, version: 'v1', code: 'B', namespace: `/orgs/${w.org}/` },
    ]);
    expect(addedFlags(results)).toEqual([true, true]);
    const list = await concepts(w);
    expect(list.map((c) => [c.id, c.display_name]).sort()).toEqual([
      ['A', 'Malaria'],
      ['B', 'Fever'],
    ]);
  });

  it('a canonical URL of a source of the collection’s owner resolves without a namespace (the owner is the context)', async () => {
    // ocl-docs resolveReference: "when expanding a ValueSet, the namespace is set to the owner of
    // the ValueSet"; spec operations §4.4 step 2 then finds the owner's source by canonical URL.
    const canonical = `http://example.org/CodeSystem/${uniqueId('cs')}`;
    const w = await world({ sourceFields: { canonical_url: canonical } });
    const results = await add(w, { expressions: [canonical] });
    expect(results.map((r) => [r.added, r.message])).toEqual([[true, expect.any(String)]]);
    expect(await conceptIds(w)).toEqual(['A', 'B', 'C', 'D', 'E']);
  });
});

describe('?cascade=', () => {
  it('sourcemappings adds the mappings held in the source from the referenced concepts, not their targets', async () => {
    const w = await world();
    const results = await add(
      w,
      { expressions: [`${w.source}concepts/A/`] },
      '?cascade=sourcemappings',
    );
    expect(addedFlags(results)).toEqual([true]);
    expect(await conceptIds(w)).toEqual(['A']);
    expect(await mappingIds(w)).toEqual(['M1', 'M4']);
  });

  it('sourcetoconcepts follows mappings to target concepts of the same source, level after level', async () => {
    const w = await world();
    await add(w, { expressions: [`${w.source}concepts/A/`] }, '?cascade=sourcetoconcepts');
    // A →M1 B →M2 E →M3 D; M4 leads to X in another source, which is not taken.
    expect(await conceptIds(w)).toEqual(['A', 'B', 'D', 'E']);
    expect(await mappingIds(w)).toEqual(['M1', 'M2', 'M3', 'M4']);
  });

  it('the cascade follows no retired mapping', async () => {
    const w = await world();
    await request(t.app).delete(`${w.source}mappings/M2/`).set(as(w.owner)).expect(204);
    await add(w, { expressions: [`${w.source}concepts/A/`] }, '?cascade=sourcetoconcepts');
    expect(await conceptIds(w)).toEqual(['A', 'B']);
  });

  it('an unknown cascade mode is a 400 and adds nothing', async () => {
    const w = await world();
    const res = await putBody(
      w,
      { data: { expressions: [`${w.source}concepts/A/`] } },
      '?cascade=everything',
    );
    expect(res.status).toBe(400);
    expect(await referenceList(w)).toEqual([]);
  });
});

describe('duplicate references', () => {
  it('a reference given twice in one request is added once; the second answers added: false', async () => {
    const w = await world();
    const results = await add(w, {
      expressions: [`${w.source}concepts/A/`, `${w.source}concepts/A/`],
    });
    expect(addedFlags(results)).toEqual([true, false]);
    expect(results[1].message).toMatch(/twice/i);
    expect(await referenceList(w)).toHaveLength(1);
  });

  it('a reference already in the collection is not added again, whatever form it is written in', async () => {
    const w = await world();
    const [first] = await add(w, { expressions: [`${w.source}concepts/A/`] });
    const again = await add(w, [`${w.source}concepts/A/`]);
    const expanded = await add(w, [{ url: w.source, code: 'A' }]);
    const results = [...again, ...expanded];
    expect(addedFlags(results)).toEqual([false, false]);
    for (const r of results) {
      expect(r.message).toMatch(/already/i);
      expect(r.message).toContain(String(first.id));
    }
    expect(await referenceList(w)).toHaveLength(1);
  });

  it('including and excluding the same concept are two references', async () => {
    const w = await world();
    await add(w, { expressions: [`${w.source}concepts/A/`, `${w.source}concepts/B/`] });
    const results = await add(w, [{ url: w.source, code: 'A', includeExclude: 'Exclude' }]);
    expect(addedFlags(results)).toEqual([true]);
    expect(await conceptIds(w)).toEqual(['B']);
  });
});

describe('unresolvable and malformed references', () => {
  it('answers added: false with a message for what does not exist, and stores none of it', async () => {
    const w = await world();
    // v0 is made before F exists.
    await createVersion(t, w.source, w.owner, 'v0');
    await createConcepts(t, w.source, w.owner, [['F', 'Rash', 'Symptom']]);
    const [a1] = await conceptVersionIds(w, 'A');
    const results = await add(w, {
      expressions: [
        `${w.source}concepts/NOPE/`,
        `${w.source}mappings/NOPE/`,
        `/orgs/${w.org}/sources/NOSUCH/concepts/A/`,
        `${w.source}v9/concepts/A/`,
        `${w.source}concepts/A/999999999/`,
        `${w.other}concepts/A/`,
        `${w.source}v0/concepts/F/`,
        `${w.source}concepts/A/${a1}/`,
      ],
    });
    expect(addedFlags(results)).toEqual([false, false, false, false, false, false, false, true]);
    for (const r of results.slice(0, 7)) expect(r.message.length).toBeGreaterThan(0);
    expect(results[0].message).toMatch(/NOPE/);
    expect(results[2].message).toMatch(/does not resolve/);
    expect(await referenceList(w)).toHaveLength(1);
    expect(await conceptIds(w)).toEqual(['A']);
  });

  it('malformed references inside a good body answer added: false; the good ones are added', async () => {
    const w = await world();
    const results = await add(w, [
      'garbage',
      42,
      `${w.source}concepts/A/1/extra/`,
      { code: 'A' },
      { url: w.source, code: 'A', filter: [{ property: 'concept_class', op: '=', value: 'Drug' }] },
      { url: w.source, display: 'No code' },
      { url: w.source, cascade: 'sourcemappings' },
      { url: w.source, code: 'A', includeExclude: 'Maybe' },
      { url: w.source, filter: [{ property: 'concept_class', op: 'like', value: 'Drug' }] },
      { url: w.source, filter: [{ property: 'colour', op: '=', value: 'red' }] },
      { url: w.source, code: 'A', cascade: 'everything' },
      { url: w.source, code: 'A', id: 'M1' },
      `${w.source}concepts/B/`,
    ]);
    expect(addedFlags(results)).toEqual([...Array<boolean>(12).fill(false), true]);
    for (const r of results.slice(0, 12)) {
      expect(typeof r.expression).toBe('string');
      expect(r.message.length).toBeGreaterThan(0);
    }
    const refs = await referenceList(w);
    expect(refs.map((r) => r.expression)).toEqual([`${w.source}concepts/B/`]);
    expect(await conceptIds(w)).toEqual(['B']);
  });

  it.each<[string, unknown]>([
    ['no body', undefined],
    ['an empty object', {}],
    ['data a number', { data: 5 }],
    ['data null', { data: null }],
    ['an empty list', { data: [] }],
    ['an empty expressions list', { data: { expressions: [] } }],
    ['expressions not a list', { data: { expressions: 'x' } }],
    ['unknown fields only', { data: { things: ['x'] } }],
  ])('a malformed body (%s) is a 400 and adds nothing', async (_label, body) => {
    const w = await world();
    const res = await putBody(w, body);
    expect(res.status).toBe(400);
    expect(res.body.message).toEqual(expect.any(String));
    expect(await referenceList(w)).toEqual([]);
  });

  it('more references than the limit in one request is a 400 and adds nothing', async () => {
    const w = await world();
    const expressions = Array.from({ length: 50_001 }, (_, i) => `${w.org}:S:c${i}`);
    const res = await putBody(w, { data: { expressions } });
    expect(res.status).toBe(400);
    expect(await referenceList(w)).toEqual([]);
  });
});

describe('listing, reading and removing references', () => {
  it('lists HEAD references; q narrows by expression', async () => {
    const w = await world();
    await add(w, {
      expressions: [`${w.source}concepts/A/`, `${w.source}mappings/M1/`, `${w.other}concepts/X/`],
    });
    expect(await referenceList(w)).toHaveLength(3);
    const mappings = await referenceList(w, w.collection, '?q=mappings');
    expect(mappings.map((r) => r.expression)).toEqual([`${w.source}mappings/M1/`]);
    const inOther = await referenceList(w, w.collection, '?q=S2');
    expect(inOther.map((r) => r.expression)).toEqual([`${w.other}concepts/X/`]);
  });

  it('gets one reference by id; an unknown id is a 404', async () => {
    const w = await world();
    const [a] = await add(w, { expressions: [`${w.source}concepts/A/`] });
    const res = await request(t.app).get(`${w.collection}references/${a.id}/`).set(as(w.owner));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: a.id,
      expression: `${w.source}concepts/A/`,
      include: true,
    });
    await request(t.app).get(`${w.collection}references/99999999/`).set(as(w.owner)).expect(404);
    await request(t.app)
      .get(`${w.collection}references/not-a-number/`)
      .set(as(w.owner))
      .expect(404);
  });

  it('deletes one reference: 204, then 404; the expansion drops what only it held', async () => {
    const w = await world();
    const [a, b] = await add(w, {
      expressions: [`${w.source}concepts/A/`, `${w.source}concepts/B/`],
    });
    await request(t.app).delete(`${w.collection}references/${a.id}/`).set(as(w.owner)).expect(204);
    await request(t.app).delete(`${w.collection}references/${a.id}/`).set(as(w.owner)).expect(404);
    expect((await referenceList(w)).map((r) => r.id)).toEqual([b.id]);
    expect(await conceptIds(w)).toEqual(['B']);
  });

  it('removing a reference keeps what another reference still holds', async () => {
    const w = await world();
    const [a] = await add(w, { expressions: [`${w.source}concepts/A/`, `${w.source}concepts/`] });
    await request(t.app).delete(`${w.collection}references/${a.id}/`).set(as(w.owner)).expect(204);
    expect(await conceptIds(w)).toEqual(['A', 'B', 'C', 'D', 'E']);
  });

  it('deletes many by expressions, by ids, and all with "*"', async () => {
    const w = await world();
    const added = await add(w, {
      expressions: ['A', 'B', 'D', 'E'].map((c) => `${w.source}concepts/${c}/`),
    });
    await request(t.app)
      .delete(`${w.collection}references/`)
      .set(as(w.owner))
      .send({ expressions: [`${w.source}concepts/A/`] })
      .expect(204);
    expect(await conceptIds(w)).toEqual(['B', 'D', 'E']);
    await request(t.app)
      .delete(`${w.collection}references/`)
      .set(as(w.owner))
      .send({ ids: [added[1].id, added[2].id] })
      .expect(204);
    expect(await conceptIds(w)).toEqual(['E']);
    await request(t.app)
      .delete(`${w.collection}references/`)
      .set(as(w.owner))
      .send({ expressions: '*' })
      .expect(204);
    expect(await referenceList(w)).toEqual([]);
    expect(await conceptIds(w)).toEqual([]);
  });

  it.each<[string, unknown]>([
    ['no body', undefined],
    ['an empty object', {}],
    ['an empty expressions list', { expressions: [] }],
    ['an empty ids list', { ids: [] }],
  ])('a DELETE with %s is a 400 and removes nothing', async (_label, body) => {
    const w = await world();
    await add(w, { expressions: [`${w.source}concepts/A/`] });
    const req = request(t.app).delete(`${w.collection}references/`).set(as(w.owner));
    const res = body === undefined ? await req : await req.send(body as object);
    expect(res.status).toBe(400);
    expect(await referenceList(w)).toHaveLength(1);
  });

  it('references are read-only through a version path', async () => {
    const w = await world();
    const [a] = await add(w, { expressions: [`${w.source}concepts/A/`] });
    await createVersion(t, w.collection, w.owner, 'v1');
    const put = await request(t.app)
      .put(`${w.collection}v1/references/`)
      .set(as(w.owner))
      .send({ data: { expressions: [`${w.source}concepts/B/`] } });
    expect(put.status).toBe(405);
    const del = await request(t.app)
      .delete(`${w.collection}v1/references/`)
      .set(as(w.owner))
      .send({ expressions: '*' });
    expect(del.status).toBe(405);
    const delOne = await request(t.app)
      .delete(`${w.collection}v1/references/${a.id}/`)
      .set(as(w.owner));
    expect(delOne.status).toBe(405);
    expect(await referenceList(w, `${w.collection}v1/`)).toHaveLength(1);
    expect(await referenceList(w)).toHaveLength(1);
  });

  it('a version keeps its references and content after HEAD changes', async () => {
    const w = await world();
    const [a, b] = await add(w, {
      expressions: [`${w.source}concepts/A/`, `${w.source}concepts/B/`],
    });
    await createVersion(t, w.collection, w.owner, 'v1');
    await request(t.app).delete(`${w.collection}references/${b.id}/`).set(as(w.owner)).expect(204);
    await add(w, { expressions: [`${w.source}concepts/D/`] });

    const v1 = await referenceList(w, `${w.collection}v1/`);
    expect(v1.map((r) => r.expression)).toEqual([
      `${w.source}concepts/A/`,
      `${w.source}concepts/B/`,
    ]);
    const head = await referenceList(w);
    expect(head.map((r) => r.expression)).toEqual([
      `${w.source}concepts/A/`,
      `${w.source}concepts/D/`,
    ]);
    await request(t.app).get(`${w.collection}v1/references/${b.id}/`).set(as(w.owner)).expect(200);
    await request(t.app).get(`${w.collection}references/${b.id}/`).set(as(w.owner)).expect(404);
    await request(t.app).get(`${w.collection}v1/references/${a.id}/`).set(as(w.owner)).expect(200);
    expect(await conceptIds(w, `${w.collection}v1/`)).toEqual(['A', 'B']);
    expect(await conceptIds(w)).toEqual(['A', 'D']);
  });
});

describe('who may change references', () => {
  it('an anonymous PUT is a 401 and adds nothing; an anonymous DELETE is a 401', async () => {
    const w = await world();
    const res = await putBody(w, { data: { expressions: [`${w.source}concepts/A/`] } }, '', null);
    expect(res.status).toBe(401);
    expect(await referenceList(w)).toEqual([]);
    await add(w, { expressions: [`${w.source}concepts/A/`] });
    const del = await request(t.app)
      .delete(`${w.collection}references/`)
      .send({ expressions: '*' });
    expect(del.status).toBe(401);
    expect(await referenceList(w)).toHaveLength(1);
  });

  it('a user outside the org and a plain member get 403 on its collection; an administrator may add (spec core §5 rules 5, 7)', async () => {
    const w = await world();
    const outsider = await createUser(t);
    const member = await createUser(t);
    await addMember(t, w.org, w.owner, member);
    const body = { data: { expressions: [`${w.source}concepts/A/`] } };
    expect((await putBody(w, body, '', outsider)).status).toBe(403);
    expect((await putBody(w, body, '', member)).status).toBe(403);
    expect(await referenceList(w)).toEqual([]);
    await addMember(t, w.org, w.owner, member, 'admin');
    const byMember = await putBody(w, body, '', member);
    expect(byMember.status).toBe(200);
    expect(addedFlags(byMember.body as Added[])).toEqual([true]);
    const del = await request(t.app)
      .delete(`${w.collection}references/`)
      .set(as(outsider))
      .send({ expressions: '*' });
    expect(del.status).toBe(403);
    const delOne = await request(t.app)
      .delete(`${w.collection}references/${(byMember.body as Added[])[0].id}/`)
      .set(as(outsider));
    expect(delOne.status).toBe(403);
    expect(await referenceList(w)).toHaveLength(1);
  });

  it('a private source’s concepts in a public collection are seen by members, not by outsiders', async () => {
    const w = await world({ sourceFields: { public_access: 'None' } });
    const outsider = await createUser(t);
    const member = await createUser(t);
    await addMember(t, w.org, w.owner, member);
    await add(w, {
      expressions: [`${w.source}concepts/A/`, `${w.source}mappings/M1/`, `${w.other}concepts/X/`],
    });
    expect(await conceptIds(w, w.collection, member)).toEqual(['A', 'X']);
    expect(await mappingIds(w, w.collection, member)).toEqual(['M1']);
    expect(await conceptIds(w, w.collection, outsider)).toEqual(['X']);
    expect(await mappingIds(w, w.collection, outsider)).toEqual([]);
    expect(await conceptIds(w, w.collection, null)).toEqual(['X']);
    expect(await mappingIds(w, w.collection, null)).toEqual([]);
    // The collection's own expansion lists filter the same way.
    const viaExpansion = await request(t.app)
      .get(`${w.collection}HEAD/expansions/autoexpand-HEAD/concepts/`)
      .set(as(outsider));
    expect(viaExpansion.status).toBe(200);
    expect((viaExpansion.body as Array<{ id: string }>).map((c) => c.id)).toEqual(['X']);
  });

  it('a reference to a source the caller cannot see is not added, answered as if it did not exist', async () => {
    const w = await world({ sourceFields: { public_access: 'None' } });
    const outsider = await createUser(t);
    const mine = `/users/${outsider.username}/collections/Mine/`;
    await createRepo(
      t,
      `/users/${outsider.username}`,
      outsider,
      { id: 'Mine', name: 'Mine' },
      'collections',
    );
    const res = await request(t.app)
      .put(`${mine}references/`)
      .set(as(outsider))
      .send({
        data: {
          expressions: [`${w.source}concepts/A/`, `/orgs/${w.org}/sources/NOSUCH/concepts/A/`],
        },
      });
    expect(res.status).toBe(200);
    const [hidden, missing] = res.body as Added[];
    expect([hidden.added, missing.added]).toEqual([false, false]);
    // The same answer as for a source that does not exist: nothing tells the private one is there.
    expect(hidden.message.replace(`${w.source}`, '<source>')).toBe(
      missing.message.replace(`/orgs/${w.org}/sources/NOSUCH/`, '<source>'),
    );
    const refs = await request(t.app).get(`${mine}references/`).set(as(outsider));
    expect(refs.body).toEqual([]);
  });
});
