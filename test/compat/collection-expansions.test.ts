import request from 'supertest';
import { createTestApp, createUser, uniqueId, type TestApp, type TestUser } from '../factories';
import {
  collectionWorld,
  type CollectionWorld,
  type CollectionWorldOptions,
} from '../factories/collection-world';
import { createVersion } from '../factories/content';
import { as } from '../factories/http';

/**
 * Collection expansions through REST (issue 5 parts 2 and 7; spec operations §2.1, §2.2, §4.1):
 * create, list, get and delete; the evaluation rules (filters, exclusions after inclusions,
 * parameters); dynamic and static references after a source edit; and the active counts.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type World = CollectionWorld;

/**
 * The shared collection world (concepts A–E in S, C retired, X in S2, collection C) with D's extra
 * `dose`, and mappings M1 A→B SAME-AS and M2 B→E NARROWER-THAN.
 */
const world = (options: Omit<CollectionWorldOptions, 'mappings' | 'conceptExtras'> = {}) =>
  collectionWorld(t, {
    ...options,
    conceptExtras: { D: { dose: '100' } },
    mappings: (w) => [
      ['M1', 'SAME-AS', `${w.source}concepts/A/`, `${w.source}concepts/B/`],
      ['M2', 'NARROWER-THAN', `${w.source}concepts/B/`, `${w.source}concepts/E/`],
    ],
  });

async function rename(w: World, id: string, name: string) {
  const current = await request(t.app).get(`${w.source}concepts/${id}/`).set(as(w.owner));
  await request(t.app)
    .put(`${w.source}concepts/${id}/`)
    .set(as(w.owner))
    .send({
      concept_class: current.body.concept_class,
      names: [{ name, locale: 'en', locale_preferred: true }],
    })
    .expect(200);
}

/** The newest version id of a concept. */
async function currentVersion(w: World, id: string): Promise<string> {
  const res = await request(t.app).get(`${w.source}concepts/${id}/`).set(as(w.owner));
  expect(res.status).toBe(200);
  return String(res.body.version);
}

async function add(w: World, data: unknown): Promise<Array<{ added: boolean; id?: number }>> {
  const res = await request(t.app)
    .put(`${w.collection}references/`)
    .set(as(w.owner))
    .send({ data });
  expect(res.status).toBe(200);
  return res.body as Array<{ added: boolean; id?: number }>;
}

const createExpansion = (w: World, at: string, body: unknown, user: TestUser | null = w.owner) =>
  request(t.app)
    .post(`${w.collection}${at}/expansions/`)
    .set(as(user ?? undefined))
    .send(body as object);

/** Creates an expansion of HEAD (201 expected) and answers its concepts. */
async function expand(w: World, parameters: Record<string, unknown>, at = 'HEAD') {
  const mnemonic = uniqueId('e');
  const res = await createExpansion(w, at, { mnemonic, parameters });
  expect(res.status).toBe(201);
  return expansionConcepts(w, at, mnemonic);
}

async function expansionConcepts(w: World, at: string, mnemonic: string) {
  const res = await request(t.app)
    .get(`${w.collection}${at}/expansions/${mnemonic}/concepts/?includeRetired=true&limit=100`)
    .set(as(w.owner));
  expect(res.status).toBe(200);
  return res.body as Array<{ id: string; display_name: string; version: string }>;
}

async function concepts(w: World, path = w.collection, query = 'includeRetired=true') {
  const res = await request(t.app).get(`${path}concepts/?${query}&limit=100`).set(as(w.owner));
  expect(res.status).toBe(200);
  return res.body as Array<{ id: string; display_name: string; version: string }>;
}

async function mappings(w: World, path = w.collection, query = 'includeRetired=true') {
  const res = await request(t.app).get(`${path}mappings/?${query}&limit=100`).set(as(w.owner));
  expect(res.status).toBe(200);
  return res.body as Array<{ id: string }>;
}

const ids = (list: Array<{ id: string }>) => list.map((c) => c.id).sort();
const names = (list: Array<{ id: string; display_name: string }>) =>
  list.map((c) => [c.id, c.display_name]).sort((a, b) => a[0].localeCompare(b[0]));

async function expansionList(w: World, path: string, query = '') {
  const res = await request(t.app).get(`${path}expansions/${query}`).set(as(w.owner));
  expect(res.status).toBe(200);
  return res.body as Array<Record<string, unknown> & { mnemonic: string }>;
}

async function counts(w: World, path = w.collection) {
  const res = await request(t.app).get(path).set(as(w.owner));
  expect(res.status).toBe(200);
  return {
    concepts: res.body.active_concepts as number,
    mappings: res.body.active_mappings as number,
  };
}

async function summaryOf(w: World, at: string, mnemonic: string) {
  const res = await request(t.app)
    .get(`${w.collection}${at}/expansions/${mnemonic}/`)
    .set(as(w.owner));
  expect(res.status).toBe(200);
  const summary = res.body.summary as { active_concepts: number; active_mappings: number };
  return { concepts: summary.active_concepts, mappings: summary.active_mappings };
}

describe('creating an expansion (POST …/:version/expansions/)', () => {
  it('answers 201 with the fields of spec operations §2.1 and a Location', async () => {
    const w = await world();
    await add(w, { expressions: [`${w.source}concepts/A/`, `${w.source}concepts/B/`] });
    const res = await createExpansion(w, 'HEAD', {
      mnemonic: 'e1',
      parameters: { activeOnly: true },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      mnemonic: 'e1',
      id: expect.any(Number),
      parameters: { activeOnly: true },
      canonical_url: null,
      url: `${w.collection}HEAD/expansions/e1/`,
      is_processing: false,
    });
    expect(res.headers.location).toBe(res.body.url);
    const got = await request(t.app).get(res.body.url).set(as(w.owner));
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: res.body.id, mnemonic: 'e1' });
    expect(ids(await expansionConcepts(w, 'HEAD', 'e1'))).toEqual(['A', 'B']);
  });

  it('an expansion of a version evaluates that version’s references; canonical_url defaults to the collection’s', async () => {
    const canonical = `http://example.org/ValueSet/${uniqueId('vs')}`;
    const w = await world({ collectionFields: { canonical_url: canonical } });
    await add(w, { expressions: [`${w.source}concepts/A/`] });
    await createVersion(t, w.collection, w.owner, 'v1');
    await add(w, { expressions: [`${w.source}concepts/B/`] });
    const res = await createExpansion(w, 'v1', { mnemonic: 'e1', parameters: {} });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      url: `${w.collection}v1/expansions/e1/`,
      canonical_url: canonical,
    });
    expect(ids(await expansionConcepts(w, 'v1', 'e1'))).toEqual(['A']);
  });

  it('a mnemonic already used by the version is a 409, whatever its case; another version may use it', async () => {
    const w = await world();
    await createVersion(t, w.collection, w.owner, 'v1');
    expect((await createExpansion(w, 'HEAD', { mnemonic: 'e1', parameters: {} })).status).toBe(201);
    expect((await createExpansion(w, 'HEAD', { mnemonic: 'e1', parameters: {} })).status).toBe(409);
    expect((await createExpansion(w, 'HEAD', { mnemonic: 'E1', parameters: {} })).status).toBe(409);
    expect(
      (await createExpansion(w, 'HEAD', { mnemonic: 'autoexpand-HEAD', parameters: {} })).status,
    ).toBe(409);
    expect((await createExpansion(w, 'v1', { mnemonic: 'e1', parameters: {} })).status).toBe(201);
  });

  it.each<[string, unknown]>([
    ['no mnemonic', { parameters: {} }],
    ['an empty mnemonic', { mnemonic: '', parameters: {} }],
    ['parameters a list', { mnemonic: 'e1', parameters: [] }],
    ['parameters a string', { mnemonic: 'e1', parameters: 'activeOnly' }],
    ['no parameters', { mnemonic: 'e1' }],
    ['parameters null', { mnemonic: 'e1', parameters: null }],
  ])('%s is a 400 and creates nothing', async (_label, body) => {
    const w = await world();
    const res = await createExpansion(w, 'HEAD', body);
    expect(res.status).toBe(400);
    const field = (body as { mnemonic?: unknown }).mnemonic ? 'parameters' : 'mnemonic';
    expect(res.body.errors[field]).toBeDefined();
    expect((await expansionList(w, w.collection)).map((e) => e.mnemonic)).toEqual([
      'autoexpand-HEAD',
    ]);
  });

  it('anonymous callers get 401, users outside the org 403', async () => {
    const w = await world();
    const outsider = await createUser(t);
    expect(
      (await createExpansion(w, 'HEAD', { mnemonic: 'e1', parameters: {} }, null)).status,
    ).toBe(401);
    expect(
      (await createExpansion(w, 'HEAD', { mnemonic: 'e1', parameters: {} }, outsider)).status,
    ).toBe(403);
    await createExpansion(w, 'HEAD', { mnemonic: 'e1', parameters: {} }).expect(201);
    const del = await request(t.app).delete(`${w.collection}HEAD/expansions/e1/`).set(as(outsider));
    expect(del.status).toBe(403);
    await request(t.app).get(`${w.collection}HEAD/expansions/e1/`).set(as(w.owner)).expect(200);
  });

  it('an unknown version is a 404', async () => {
    const w = await world();
    expect((await createExpansion(w, 'v9', { mnemonic: 'e1', parameters: {} })).status).toBe(404);
  });
});

describe('listing, reading and deleting expansions', () => {
  it('lists expansions across versions and per version', async () => {
    const w = await world();
    await add(w, { expressions: [`${w.source}concepts/A/`] });
    await createVersion(t, w.collection, w.owner, 'v1');
    await createExpansion(w, 'HEAD', { mnemonic: 'e-head', parameters: {} }).expect(201);
    await createExpansion(w, 'v1', { mnemonic: 'e-v1', parameters: {} }).expect(201);
    const mnemonics = (list: Array<{ mnemonic: string }>) => list.map((e) => e.mnemonic).sort();
    expect(mnemonics(await expansionList(w, w.collection))).toEqual([
      'autoexpand-HEAD',
      'autoexpand-v1',
      'e-head',
      'e-v1',
    ]);
    expect(mnemonics(await expansionList(w, `${w.collection}v1/`))).toEqual([
      'autoexpand-v1',
      'e-v1',
    ]);
    expect(mnemonics(await expansionList(w, `${w.collection}HEAD/`))).toEqual([
      'autoexpand-HEAD',
      'e-head',
    ]);
    for (const e of await expansionList(w, w.collection)) {
      expect(e).toMatchObject({ created_on: expect.any(String), url: expect.any(String) });
      expect(e).toHaveProperty('created_by');
      expect(e).not.toHaveProperty('summary');
    }
  });

  it('includeSummary adds the active counts of each expansion', async () => {
    const w = await world();
    await add(w, {
      expressions: ['A', 'B', 'C']
        .map((c) => `${w.source}concepts/${c}/`)
        .concat(`${w.source}mappings/M1/`),
    });
    await createExpansion(w, 'HEAD', {
      mnemonic: 'active',
      parameters: { activeOnly: true },
    }).expect(201);
    const list = await expansionList(w, `${w.collection}HEAD/`, '?includeSummary=true');
    const byMnemonic = Object.fromEntries(list.map((e) => [e.mnemonic, e.summary]));
    // C is retired: in the expansion, but not an active concept.
    expect(byMnemonic).toEqual({
      'autoexpand-HEAD': { active_concepts: 2, active_mappings: 1 },
      active: { active_concepts: 2, active_mappings: 1 },
    });
  });

  it('verbose adds the repository versions the evaluation resolved', async () => {
    const w = await world();
    await createVersion(t, w.source, w.owner, 'v1');
    await add(w, {
      expressions: [`${w.source}v1/concepts/A/`, `${w.other}concepts/X/`],
    });
    await createExpansion(w, 'HEAD', { mnemonic: 'e1', parameters: {} }).expect(201);
    const plain = await request(t.app).get(`${w.collection}HEAD/expansions/e1/`).set(as(w.owner));
    expect(plain.body).not.toHaveProperty('resolved_repo_versions');
    const verbose = await request(t.app)
      .get(`${w.collection}HEAD/expansions/e1/?verbose=true`)
      .set(as(w.owner));
    expect(verbose.status).toBe(200);
    expect([...(verbose.body.resolved_repo_versions as string[])].sort()).toEqual(
      [`${w.source}v1/`, w.other].sort(),
    );
    expect(verbose.body.unresolved_repo_versions).toEqual([]);
    const list = await expansionList(w, `${w.collection}HEAD/`, '?verbose=true');
    expect(list.find((e) => e.mnemonic === 'e1')).toHaveProperty('resolved_repo_versions');
  });

  it('gets one expansion; an unknown one is a 404', async () => {
    const w = await world();
    await request(t.app)
      .get(`${w.collection}HEAD/expansions/autoexpand-HEAD/`)
      .set(as(w.owner))
      .expect(200);
    await request(t.app).get(`${w.collection}HEAD/expansions/nope/`).set(as(w.owner)).expect(404);
  });

  it('deletes an expansion (204); HEAD’s auto-expansion cannot be deleted (405)', async () => {
    const w = await world();
    await add(w, { expressions: [`${w.source}concepts/A/`] });
    await createExpansion(w, 'HEAD', { mnemonic: 'e1', parameters: {} }).expect(201);
    await request(t.app).delete(`${w.collection}HEAD/expansions/e1/`).set(as(w.owner)).expect(204);
    await request(t.app).get(`${w.collection}HEAD/expansions/e1/`).set(as(w.owner)).expect(404);
    await request(t.app).delete(`${w.collection}HEAD/expansions/e1/`).set(as(w.owner)).expect(404);
    const auto = await request(t.app)
      .delete(`${w.collection}HEAD/expansions/autoexpand-HEAD/`)
      .set(as(w.owner));
    expect(auto.status).toBe(405);
    await request(t.app)
      .get(`${w.collection}HEAD/expansions/autoexpand-HEAD/`)
      .set(as(w.owner))
      .expect(200);
    expect(ids(await concepts(w))).toEqual(['A']);
  });
});

describe('expansions of new collection versions', () => {
  it('a new version evaluates its references into its own default expansion, autoexpand-<version>', async () => {
    const w = await world();
    await add(w, { expressions: [`${w.source}concepts/A/`, `${w.source}mappings/M1/`] });
    await createVersion(t, w.collection, w.owner, 'v1');
    const list = await expansionList(w, `${w.collection}v1/`, '?includeSummary=true');
    expect(list.map((e) => [e.mnemonic, e.summary])).toEqual([
      ['autoexpand-v1', { active_concepts: 1, active_mappings: 1 }],
    ]);
    expect(ids(await concepts(w, `${w.collection}v1/`))).toEqual(['A']);
    expect(ids(await mappings(w, `${w.collection}v1/`))).toEqual(['M1']);
  });

  it('with autoexpand: false a version has no expansion and lists no concepts until one is made', async () => {
    const w = await world();
    await add(w, { expressions: [`${w.source}concepts/A/`, `${w.source}concepts/B/`] });
    await createVersion(t, w.collection, w.owner, 'v1', { autoexpand: false });
    expect(await expansionList(w, `${w.collection}v1/`)).toEqual([]);
    expect(await concepts(w, `${w.collection}v1/`)).toEqual([]);
    expect((await counts(w, `${w.collection}v1/`)).concepts).toBe(0);
    await createExpansion(w, 'v1', { mnemonic: 'later', parameters: {} }).expect(201);
    expect(ids(await concepts(w, `${w.collection}v1/`))).toEqual(['A', 'B']);
    expect((await counts(w, `${w.collection}v1/`)).concepts).toBe(2);
  });
});

describe('expansion parameters (spec operations §2.2)', () => {
  it('activeOnly leaves retired concepts out', async () => {
    const w = await world();
    await add(w, { expressions: [`${w.source}concepts/`] });
    expect(ids(await expand(w, { activeOnly: true }))).toEqual(['A', 'B', 'D', 'E']);
    expect(ids(await expand(w, { activeOnly: false }))).toEqual(['A', 'B', 'C', 'D', 'E']);
  });

  it('filter keeps the concepts whose text matches', async () => {
    const w = await world();
    await add(w, { expressions: [`${w.source}concepts/`, `${w.other}concepts/X/`] });
    expect(ids(await expand(w, { filter: 'malaria' }))).toEqual(['A']);
    expect(ids(await expand(w, { filter: 'aspirin' }))).toEqual(['D']);
  });

  it('date reads the definitions as they were: between two edits, the older version', async () => {
    const w = await world();
    await add(w, { expressions: [`${w.source}concepts/A/`, `${w.source}concepts/B/`] });
    await sleep(50);
    const between = new Date().toISOString();
    await sleep(50);
    await rename(w, 'A', 'Malaria (renamed)');
    expect(names(await expand(w, { date: between }))).toEqual([
      ['A', 'Malaria'],
      ['B', 'Fever'],
    ]);
    expect(names(await concepts(w))).toEqual([
      ['A', 'Malaria (renamed)'],
      ['B', 'Fever'],
    ]);
  });

  it.each<[string, string]>([
    ['before any content', '2000-01-01T00:00:00Z'],
    ['in the future', '2999-01-01T00:00:00Z'],
    ['not a date', 'last tuesday'],
  ])('a date %s is a 400 and creates nothing', async (_label, date) => {
    const w = await world();
    await add(w, { expressions: [`${w.source}concepts/A/`] });
    const res = await createExpansion(w, 'HEAD', { mnemonic: 'dated', parameters: { date } });
    expect(res.status).toBe(400);
    await request(t.app).get(`${w.collection}HEAD/expansions/dated/`).set(as(w.owner)).expect(404);
  });

  it('exclude-system leaves out the references to that system, or only to that version of it', async () => {
    const w = await world();
    await createVersion(t, w.source, w.owner, 'v1');
    await add(w, {
      expressions: [`${w.source}v1/concepts/A/`, `${w.source}concepts/B/`, `${w.other}concepts/X/`],
    });
    expect(ids(await expand(w, { 'exclude-system': w.source }))).toEqual(['X']);
    expect(ids(await expand(w, { 'exclude-system': `${w.source}|v1` }))).toEqual(['B', 'X']);
    expect(ids(await expand(w, { 'exclude-system': `${w.source}|v1,${w.other}` }))).toEqual(['B']);
  });

  it('exclude-system names a source by its canonical URL too', async () => {
    // A FHIR system is the code system's canonical URL; the reference may be relative.
    const canonical = `http://example.org/CodeSystem/${uniqueId('cs')}`;
    const w = await world({ sourceFields: { canonical_url: canonical } });
    await add(w, { expressions: [`${w.source}concepts/A/`, `${w.other}concepts/X/`] });
    expect(ids(await expand(w, { 'exclude-system': canonical }))).toEqual(['X']);
  });

  describe('system versions', () => {
    /** Source versions v1 (original names) and v2 (A and B renamed); refs: A without a version, B at v2. */
    async function versioned() {
      const w = await world();
      await createVersion(t, w.source, w.owner, 'v1');
      await rename(w, 'A', 'Malaria (2)');
      await rename(w, 'B', 'Fever (2)');
      await createVersion(t, w.source, w.owner, 'v2');
      await rename(w, 'A', 'Malaria (HEAD)');
      await add(w, { expressions: [`${w.source}concepts/A/`, `${w.source}v2/concepts/B/`] });
      return w;
    }

    it('without parameters: A follows HEAD, B is read at v2', async () => {
      const w = await versioned();
      expect(names(await expand(w, {}))).toEqual([
        ['A', 'Malaria (HEAD)'],
        ['B', 'Fever (2)'],
      ]);
    });

    it('system-version gives the version of references that name none, and only of those', async () => {
      const w = await versioned();
      expect(names(await expand(w, { 'system-version': `${w.source}|v1` }))).toEqual([
        ['A', 'Malaria'],
        ['B', 'Fever (2)'],
      ]);
    });

    it('check-system-version is a 400 when a reference names another version, and creates nothing', async () => {
      const w = await versioned();
      const res = await createExpansion(w, 'HEAD', {
        mnemonic: 'checked',
        parameters: { 'check-system-version': `${w.source}|v1` },
      });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain('v2');
      await request(t.app)
        .get(`${w.collection}HEAD/expansions/checked/`)
        .set(as(w.owner))
        .expect(404);
    });

    it('check-system-version naming the version the references name is used for those naming none', async () => {
      const w = await versioned();
      expect(names(await expand(w, { 'check-system-version': `${w.source}|v2` }))).toEqual([
        ['A', 'Malaria (2)'],
        ['B', 'Fever (2)'],
      ]);
    });

    it('force-system-version overrides every version, and the expansion states it', async () => {
      const w = await versioned();
      const mnemonic = 'forced';
      const res = await createExpansion(w, 'HEAD', {
        mnemonic,
        parameters: { 'force-system-version': `${w.source}|v1` },
      });
      expect(res.status).toBe(201);
      expect(res.body.parameters).toEqual({ 'force-system-version': `${w.source}|v1` });
      expect(names(await expansionConcepts(w, 'HEAD', mnemonic))).toEqual([
        ['A', 'Malaria'],
        ['B', 'Fever'],
      ]);
      const verbose = await request(t.app)
        .get(`${w.collection}HEAD/expansions/${mnemonic}/?verbose=true`)
        .set(as(w.owner));
      expect(verbose.body.resolved_repo_versions).toEqual([`${w.source}v1/`]);
    });

    it.each(['system-version', 'check-system-version', 'force-system-version'])(
      '%s without |version is a 400',
      async (name) => {
        const w = await world();
        const res = await createExpansion(w, 'HEAD', {
          mnemonic: 'e',
          parameters: { [name]: w.source },
        });
        expect(res.status).toBe(400);
      },
    );
  });

  it('the parameters displayLanguage, includeDesignations and includeDefinition are accepted and kept', async () => {
    const w = await world();
    const parameters = {
      displayLanguage: 'fr',
      includeDesignations: true,
      includeDefinition: false,
    };
    const res = await createExpansion(w, 'HEAD', { mnemonic: 'e1', parameters });
    expect(res.status).toBe(201);
    expect(res.body.parameters).toEqual(parameters);
  });

  it.each([
    'valueSet',
    'context',
    'contextDirection',
    'excludeNested',
    'excludeNotForUI',
    'excludePostCoordinated',
  ])('the TBD parameter %s is a 400 "not supported"', async (name) => {
    const w = await world();
    const res = await createExpansion(w, 'HEAD', { mnemonic: 'e1', parameters: { [name]: true } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(/not supported/i);
    expect(JSON.stringify(res.body)).toContain(name);
    await request(t.app).get(`${w.collection}HEAD/expansions/e1/`).set(as(w.owner)).expect(404);
  });

  it.each<[string, Record<string, unknown>]>([
    ['an unknown parameter', { colour: 'red' }],
    ['activeOnly not a boolean', { activeOnly: 'yes' }],
    ['count negative', { count: -1 }],
    ['offset not a number', { offset: 'first' }],
    ['filter empty', { filter: '' }],
  ])('%s is a 400', async (_label, parameters) => {
    const w = await world();
    const res = await createExpansion(w, 'HEAD', { mnemonic: 'e1', parameters });
    expect(res.status).toBe(400);
    expect(res.body.message).toEqual(expect.any(String));
  });
});

describe('reference filters (spec operations §2.4 filter ops)', () => {
  const byFilter = async (w: World, filter: unknown[], resourceType?: string) => {
    const results = await add(w, [
      { url: w.source, filter, ...(resourceType ? { resourceType } : {}) },
    ]);
    expect(results.map((r) => r.added)).toEqual([true]);
  };

  it.each<[string, Record<string, string>, string[]]>([
    ['=', { property: 'concept_class', op: '=', value: 'Symptom' }, ['B', 'C', 'E']],
    ['in', { property: 'concept_class', op: 'in', value: 'Symptom,Drug' }, ['B', 'C', 'D', 'E']],
    ['not-in', { property: 'concept_class', op: 'not-in', value: 'Symptom' }, ['A', 'D']],
    ['regex', { property: 'display_name', op: 'regex', value: '^(Mal|Fev)' }, ['A', 'B']],
    ['exists', { property: 'extras.dose', op: 'exists', value: 'true' }, ['D']],
    [
      'exists false',
      { property: 'extras.dose', op: 'exists', value: 'false' },
      ['A', 'B', 'C', 'E'],
    ],
  ])('%s selects the matching concepts', async (_op, filter, expected) => {
    const w = await world();
    await byFilter(w, [filter]);
    expect(ids(await concepts(w))).toEqual(expected);
  });

  it('several filters all apply', async () => {
    const w = await world();
    await byFilter(w, [
      { property: 'concept_class', op: '=', value: 'Symptom' },
      { property: 'retired', op: '=', value: 'false' },
    ]);
    expect(ids(await concepts(w))).toEqual(['B', 'E']);
  });

  it('a mapping reference filters mappings by map_type', async () => {
    const w = await world();
    await byFilter(w, [{ property: 'map_type', op: '=', value: 'NARROWER-THAN' }], 'Mapping');
    expect(ids(await mappings(w))).toEqual(['M2']);
    expect(await concepts(w)).toEqual([]);
  });

  it('a bad regular expression is a 400 and nothing of the request is added', async () => {
    const w = await world();
    const res = await request(t.app)
      .put(`${w.collection}references/`)
      .set(as(w.owner))
      .send({
        data: [
          `${w.source}concepts/A/`,
          {
            url: w.source,
            filter: [{ property: 'display_name', op: 'regex', value: '(unclosed' }],
          },
        ],
      });
    expect(res.status).toBe(400);
    const refs = await request(t.app).get(`${w.collection}references/`).set(as(w.owner));
    expect(refs.body).toEqual([]);
    expect(await concepts(w)).toEqual([]);
  });
});

describe('exclusions', () => {
  it('exclusions apply after inclusions, whichever was added first', async () => {
    const w = await world();
    await add(w, { expressions: [`${w.source}concepts/`] });
    await add(w, [{ url: w.source, code: 'B', includeExclude: 'Exclude' }]);
    expect(ids(await concepts(w))).toEqual(['A', 'C', 'D', 'E']);

    const w2 = await world();
    const [exclude] = await add(w2, [{ url: w2.source, code: 'B', includeExclude: 'Exclude' }]);
    await add(w2, { expressions: [`${w2.source}concepts/`, `${w2.source}concepts/B/`] });
    expect(ids(await concepts(w2))).toEqual(['A', 'C', 'D', 'E']);
    // A new version evaluates all its references the same way.
    await createVersion(t, w2.collection, w2.owner, 'v1');
    expect(ids(await concepts(w2, `${w2.collection}v1/`))).toEqual(['A', 'C', 'D', 'E']);
    // Removing the exclusion brings B back.
    await request(t.app)
      .delete(`${w2.collection}references/${exclude.id}/`)
      .set(as(w2.owner))
      .expect(204);
    expect(ids(await concepts(w2))).toEqual(['A', 'B', 'C', 'D', 'E']);
  });

  it('an exclusion with a concept version removes only that version; without one, every version', async () => {
    const w = await world();
    const a1 = await currentVersion(w, 'A');
    await rename(w, 'A', 'Malaria (2)');
    const a2 = await currentVersion(w, 'A');
    expect(a2).not.toBe(a1);
    await add(w, { expressions: [`${w.source}concepts/A/${a1}/`, `${w.source}concepts/A/${a2}/`] });
    expect(names(await concepts(w))).toEqual([['A', 'Malaria (2)']]);
    await add(w, [{ url: `${w.source}concepts/A/${a2}/`, includeExclude: 'Exclude' }]);
    const left = await concepts(w);
    expect(names(left)).toEqual([['A', 'Malaria']]);
    expect(left[0].version).toBe(a1);
    await add(w, [{ url: w.source, code: 'A', includeExclude: 'Exclude' }]);
    expect(await concepts(w)).toEqual([]);
  });

  it('an excluded mapping is left out', async () => {
    const w = await world();
    await add(w, { expressions: [`${w.source}mappings/`] });
    await add(w, [{ url: w.source, id: 'M1', includeExclude: 'Exclude' }]);
    expect(ids(await mappings(w))).toEqual(['M2']);
  });
});

describe('dynamic and static references after a source edit', () => {
  it('a reference without versions follows the concept; one naming a concept or source version stays; a version keeps the old one', async () => {
    const w = await world();
    await createVersion(t, w.source, w.owner, 'v1');
    const b1 = await currentVersion(w, 'B');
    await add(w, {
      expressions: [
        `${w.source}concepts/A/`,
        `${w.source}concepts/B/${b1}/`,
        `${w.source}v1/concepts/D/`,
      ],
    });
    await createVersion(t, w.collection, w.owner, 'before');
    await rename(w, 'A', 'Malaria (new)');
    await rename(w, 'B', 'Fever (new)');
    await rename(w, 'D', 'Aspirin (new)');

    expect(names(await concepts(w))).toEqual([
      ['A', 'Malaria (new)'],
      ['B', 'Fever'],
      ['D', 'Aspirin'],
    ]);
    expect((await concepts(w)).find((c) => c.id === 'B')!.version).toBe(b1);
    expect(names(await concepts(w, `${w.collection}before/`))).toEqual([
      ['A', 'Malaria'],
      ['B', 'Fever'],
      ['D', 'Aspirin'],
    ]);
  });

  it('a dynamic mapping reference follows the mapping’s retirement', async () => {
    const w = await world();
    await add(w, { expressions: [`${w.source}mappings/M1/`] });
    await request(t.app).delete(`${w.source}mappings/M1/`).set(as(w.owner)).expect(204);
    expect(ids(await mappings(w, w.collection, 'includeRetired=false'))).toEqual([]);
    expect(ids(await mappings(w))).toEqual(['M1']);
  });
});

describe('collection detail with children', () => {
  it('includeConcepts, includeMappings and includeReferences read the version’s expansion and references', async () => {
    const w = await world();
    await add(w, { expressions: [`${w.source}concepts/A/`, `${w.source}mappings/M1/`] });
    await createVersion(t, w.collection, w.owner, 'v1');
    await add(w, { expressions: [`${w.source}concepts/B/`] });
    const query = '?includeConcepts=true&includeMappings=true&includeReferences=true';
    const head = await request(t.app).get(`${w.collection}${query}`).set(as(w.owner));
    expect(head.status).toBe(200);
    expect(ids(head.body.concepts)).toEqual(['A', 'B']);
    expect(ids(head.body.mappings)).toEqual(['M1']);
    expect(head.body.references).toHaveLength(3);
    const v1 = await request(t.app).get(`${w.collection}v1/${query}`).set(as(w.owner));
    expect(v1.status).toBe(200);
    expect(ids(v1.body.concepts)).toEqual(['A']);
    expect(ids(v1.body.mappings)).toEqual(['M1']);
    expect(v1.body.references).toHaveLength(2);
  });
});

describe('active_concepts and active_mappings', () => {
  it('equal what the expansion holds, at HEAD and in a version, through retirements and removals', async () => {
    const w = await world();
    const added = await add(w, {
      expressions: ['A', 'B', 'C', 'D']
        .map((c) => `${w.source}concepts/${c}/`)
        .concat(`${w.source}mappings/M1/`, `${w.source}mappings/M2/`),
    });
    await createVersion(t, w.collection, w.owner, 'v1');

    const check = async (
      path: string,
      at: string,
      mnemonic: string,
      expected: { concepts: number; mappings: number },
    ) => {
      expect(await counts(w, path)).toEqual(expected);
      expect(await summaryOf(w, at, mnemonic)).toEqual(expected);
      expect(await concepts(w, path, 'includeRetired=false')).toHaveLength(expected.concepts);
      expect(await mappings(w, path, 'includeRetired=false')).toHaveLength(expected.mappings);
    };
    const head = (expected: { concepts: number; mappings: number }) =>
      check(w.collection, 'HEAD', 'autoexpand-HEAD', expected);
    const v1 = (expected: { concepts: number; mappings: number }) =>
      check(`${w.collection}v1/`, 'v1', 'autoexpand-v1', expected);

    // C is retired already.
    await head({ concepts: 3, mappings: 2 });
    await v1({ concepts: 3, mappings: 2 });

    // Retired in the source: HEAD follows (dynamic); v1 keeps what it froze.
    await request(t.app).delete(`${w.source}concepts/B/`).set(as(w.owner)).expect(204);
    await request(t.app).delete(`${w.source}mappings/M2/`).set(as(w.owner)).expect(204);
    await head({ concepts: 2, mappings: 1 });
    await v1({ concepts: 3, mappings: 2 });

    // A reference removed from HEAD.
    await request(t.app)
      .delete(`${w.collection}references/${added[0].id}/`)
      .set(as(w.owner))
      .expect(204);
    await head({ concepts: 1, mappings: 1 });
    await v1({ concepts: 3, mappings: 2 });
  });
});
