import request from 'supertest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../factories';
import {
  createCollection,
  createConcept,
  createConcepts,
  createMappingBetween,
  createRepo,
  createSource,
  createVersion,
} from '../factories/content';

/**
 * `$cascade` (spec operations §2.6, §4.2) over a small dictionary: a question Q with answers A1
 * and A2 (Q-AND-A), A1 with its own answer A1a, a concept set SET holding Q and M1, a SAME-AS
 * from A2 back to Q (a cycle) and one to an external code, and a hierarchy P > C1 > C2. Version
 * v1 is released; a later answer NEW exists at HEAD only.
 */
let t: TestApp;
let owner: TestUser;
let source: string;
let org: string;

type Entry = Record<string, unknown> & { entries?: Entry[] };
type Bundle = { total: number | null; entry: Entry[] | Entry } & Record<string, unknown>;

beforeAll(async () => {
  t = await createTestApp();
  const s = await createSource(t, { id: 'DICT' });
  ({ owner, org } = s);
  source = s.url;
  await createConcepts(t, source, owner, [
    ['Q', 'Which malaria test?', 'Question'],
    ['A1', 'Smear', 'Test'],
    ['A2', 'Rapid test', 'Test'],
    ['A1a', 'Thick smear', 'Test'],
    ['SET', 'Malaria panel', 'ConvSet'],
    ['M1', 'Parasite count', 'Test'],
    ['P', 'Infection', 'Diagnosis'],
  ]);
  await createConcept(t, source, owner, {
    id: 'C1',
    parent_concept_urls: [`${source}concepts/P/`],
  });
  await createConcept(t, source, owner, {
    id: 'C2',
    parent_concept_urls: [`${source}concepts/C1/`],
  });
  const c = (id: string) => `${source}concepts/${id}/`;
  for (const m of [
    ['m1', 'Q-AND-A', c('Q'), c('A1')],
    ['m2', 'Q-AND-A', c('Q'), c('A2')],
    ['m3', 'Q-AND-A', c('A1'), c('A1a')],
    ['m4', 'CONCEPT-SET', c('SET'), c('Q')],
    ['m5', 'CONCEPT-SET', c('SET'), c('M1')],
    ['m6', 'SAME-AS', c('A2'), c('Q')],
  ] as const) {
    await createMappingBetween(t, source, owner, m);
  }
  await request(t.app)
    .post(`${source}mappings/`)
    .set('Authorization', owner.auth)
    .send({
      id: 'm7',
      map_type: 'SAME-AS',
      from_concept_url: c('Q'),
      to_source_url: '/orgs/WHO/sources/ICD-10/',
      to_concept_code: 'B54',
    })
    .expect(201);
  await createVersion(t, source, owner, 'v1', { released: true });
  await createConcept(t, source, owner, { id: 'NEW' });
  await createMappingBetween(t, source, owner, ['m8', 'Q-AND-A', c('Q'), c('NEW')]);
});
afterAll(() => t.close());

async function cascade(path: string, auth?: string): Promise<Bundle> {
  const req = request(t.app).get(path);
  const res = await (auth ? req.set('Authorization', auth) : req);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Bundle;
}

const ids = (bundle: Bundle, type: 'Concept' | 'Mapping') =>
  (bundle.entry as Entry[]).filter((e) => e.type === type).map((e) => e.id);

describe('$cascade, flat view', () => {
  it('walks the latest released version by default, HEAD only when named', async () => {
    const released = await cascade(`${source}concepts/Q/$cascade/`);
    expect(released.resourceType).toBe('Bundle');
    expect(released.type).toBe('searchset');
    expect(released.repo_version_url).toBe(`${source}v1/`);
    expect(ids(released, 'Concept')).toEqual(['Q', 'A1', 'A2', 'A1a']);
    expect(ids(released, 'Mapping').sort()).toEqual(['m1', 'm2', 'm3', 'm6', 'm7']);
    expect(released.total).toBe(9);

    const head = await cascade(`${source}HEAD/concepts/Q/$cascade/`);
    expect(head.repo_version_url).toBe(`${source}HEAD/`);
    expect(ids(head, 'Concept')).toContain('NEW');
    expect(ids(head, 'Mapping')).toContain('m8');
  });

  it('answers 404 saying so when the repository has no released version', async () => {
    const s = await createSource(t, { id: 'UNRELEASED' }, { owner, org });
    await createConcept(t, s.url, owner, { id: 'X' });
    const res = await request(t.app).get(`${s.url}concepts/X/$cascade/`).expect(404);
    expect(res.body.message).toMatch(/no released version/);
    await request(t.app).get(`${s.url}HEAD/concepts/X/$cascade/`).expect(200);
  });

  it('never cascades a concept twice (the SAME-AS cycle back to Q)', async () => {
    const bundle = await cascade(`${source}concepts/Q/$cascade/`);
    const concepts = ids(bundle, 'Concept');
    expect(new Set(concepts).size).toBe(concepts.length);
  });

  it('cascadeLevels 0 is the concept and what it points to; 1 goes one level further', async () => {
    const zero = await cascade(`${source}concepts/Q/$cascade/?cascadeLevels=0`);
    expect(ids(zero, 'Concept')).toEqual(['Q', 'A1', 'A2']);
    const terminal = Object.fromEntries((zero.entry as Entry[]).map((e) => [e.id, e.terminal]));
    expect(terminal).toMatchObject({ Q: false, A1: null, A2: null });
    const one = await cascade(`${source}concepts/Q/$cascade/?cascadeLevels=1`);
    expect(ids(one, 'Concept')).toEqual(['Q', 'A1', 'A2', 'A1a']);
    const all = await cascade(`${source}concepts/Q/$cascade/`);
    const ends = Object.fromEntries((all.entry as Entry[]).map((e) => [e.id, e.terminal]));
    expect(ends).toMatchObject({ Q: false, A1: false, A1a: true });
  });

  it('method=sourceMappings lists the mappings without going to their targets', async () => {
    const bundle = await cascade(`${source}concepts/Q/$cascade/?method=sourceMappings`);
    expect(ids(bundle, 'Concept')).toEqual(['Q']);
    expect(ids(bundle, 'Mapping').sort()).toEqual(['m1', 'm2', 'm7']);
  });

  it('mapTypes, excludeMapTypes and returnMapTypes choose what is followed and what is listed', async () => {
    const qa = await cascade(`${source}concepts/A2/$cascade/?mapTypes=Q-AND-A`);
    expect(ids(qa, 'Concept')).toEqual(['A2']);
    expect(ids(qa, 'Mapping')).toEqual([]);
    const listedOnly = await cascade(
      `${source}concepts/A2/$cascade/?mapTypes=Q-AND-A&returnMapTypes=*`,
    );
    expect(ids(listedOnly, 'Concept')).toEqual(['A2']);
    expect(ids(listedOnly, 'Mapping')).toEqual(['m6']);
    const excluded = await cascade(`${source}concepts/Q/$cascade/?excludeMapTypes=SAME-AS`);
    expect(ids(excluded, 'Mapping').sort()).toEqual(['m1', 'm2', 'm3']);
    const none = await cascade(`${source}concepts/Q/$cascade/?returnMapTypes=false`);
    expect(ids(none, 'Mapping')).toEqual([]);
    expect(ids(none, 'Concept')).toEqual(['Q', 'A1', 'A2', 'A1a']);
    const singular = await cascade(`${source}concepts/SET/$cascade/?mapType=concept-set`);
    expect(ids(singular, 'Concept')).toEqual(['SET', 'Q', 'M1']);
  });

  it('reverse walks from the target back to the concepts pointing at it', async () => {
    const bundle = await cascade(`${source}concepts/A1/$cascade/?reverse=true&cascadeLevels=0`);
    expect(ids(bundle, 'Concept')).toEqual(['A1', 'Q']);
    const mapping = (bundle.entry as Entry[]).find((e) => e.id === 'm1')!;
    expect(mapping.from_concept_code).toBe('Q');
    expect(mapping.from_concept_url).toBe(`${source}concepts/Q/`);
    expect(mapping.to_concept_code).toBeUndefined();
    expect(mapping.cascade_target_concept_code).toBe('Q');
  });

  it('follows the hierarchy to children, and with reverse to parents', async () => {
    const down = await cascade(`${source}concepts/P/$cascade/`);
    expect(ids(down, 'Concept')).toEqual(['P', 'C1', 'C2']);
    const up = await cascade(`${source}concepts/C2/$cascade/?reverse=true`);
    expect(ids(up, 'Concept')).toEqual(['C2', 'C1', 'P']);
    const off = await cascade(`${source}concepts/P/$cascade/?cascadeHierarchy=false`);
    expect(ids(off, 'Concept')).toEqual(['P']);
  });

  it('shows each mapping entry with its target as spec operations §2.6 lists', async () => {
    const bundle = await cascade(`${source}concepts/Q/$cascade/?cascadeLevels=0`);
    const m1 = (bundle.entry as Entry[]).find((e) => e.id === 'm1')!;
    expect(m1).toMatchObject({
      type: 'Mapping',
      url: `${source}mappings/m1/`,
      retired: false,
      map_type: 'Q-AND-A',
      to_concept_code: 'A1',
      to_concept_url: `${source}concepts/A1/`,
      cascade_target_concept_code: 'A1',
      cascade_target_concept_url: `${source}concepts/A1/`,
      cascade_target_concept_name: 'Smear',
      cascade_target_source_owner: org,
      cascade_target_source_name: 'DICT',
    });
    expect(m1.version_url).toBe(`${source}mappings/m1/${String(m1.uuid)}/`);
    const external = (bundle.entry as Entry[]).find((e) => e.id === 'm7')!;
    expect(external).toMatchObject({ to_concept_code: 'B54', cascade_target_source_name: null });
    const q = (bundle.entry as Entry[]).find((e) => e.id === 'Q')!;
    expect(q).toMatchObject({
      type: 'Concept',
      url: `${source}concepts/Q/`,
      display_name: 'Which malaria test?',
      retired: false,
    });
  });
});

describe('$cascade, the other parameters', () => {
  it('cascadeMappings=false follows only the hierarchy; includeMappings=false lists no mapping', async () => {
    const noMappings = await cascade(`${source}concepts/Q/$cascade/?cascadeMappings=false`);
    expect(ids(noMappings, 'Concept')).toEqual(['Q']);
    expect(ids(noMappings, 'Mapping')).toEqual([]);
    const unlisted = await cascade(`${source}concepts/Q/$cascade/?includeMappings=false`);
    expect(ids(unlisted, 'Mapping')).toEqual([]);
    expect(ids(unlisted, 'Concept')).toEqual(['Q', 'A1', 'A2', 'A1a']);
    const singular = await cascade(
      `${source}concepts/Q/$cascade/?mapType=Q-AND-A&returnMapType=SAME-AS`,
    );
    expect(ids(singular, 'Concept')).toEqual(['Q', 'A1', 'A2', 'A1a']);
    expect(ids(singular, 'Mapping')).toEqual(['m7', 'm6']);
  });

  it('includeRetired brings retired concepts and mappings in', async () => {
    const s = await createSource(t, { id: 'RETIRING' }, { owner, org });
    await createConcepts(t, s.url, owner, [
      ['X', 'X', 'Misc'],
      ['Y', 'Y', 'Misc'],
    ]);
    await createMappingBetween(t, s.url, owner, [
      'mx',
      'Q-AND-A',
      `${s.url}concepts/X/`,
      `${s.url}concepts/Y/`,
    ]);
    await request(t.app).delete(`${s.url}concepts/Y/`).set('Authorization', owner.auth).expect(204);
    const active = await cascade(`${s.url}HEAD/concepts/X/$cascade/`);
    expect(ids(active, 'Concept')).toEqual(['X']);
    const all = await cascade(`${s.url}HEAD/concepts/X/$cascade/?includeRetired=true`);
    expect(ids(all, 'Concept')).toEqual(['X', 'Y']);
    expect((all.entry as Entry[]).find((e) => e.id === 'Y')!.retired).toBe(true);
  });

  it('omitIfExistsIn with equivalencyMapType: a concept mapped as equivalent there is omitted', async () => {
    const other = await createSource(t, { id: 'LOCAL' }, { owner, org });
    await createConcept(t, other.url, owner, { id: 'MINE' });
    await createMappingBetween(t, other.url, owner, [
      'eq',
      'SAME-AS',
      `${other.url}concepts/MINE/`,
      `${source}concepts/A2/`,
    ]);
    const omitted = `${source}concepts/Q/$cascade/?omitIfExistsIn=${encodeURIComponent(other.url)}`;
    expect(ids(await cascade(omitted), 'Concept')).toEqual(['Q', 'A1', 'A2', 'A1a']);
    expect(ids(await cascade(`${omitted}&equivalencyMapType=SAME-AS`), 'Concept')).toEqual([
      'Q',
      'A1',
      'A1a',
    ]);
  });

  it('a version cascades its concepts and mappings as they were then', async () => {
    const s = await createSource(t, { id: 'EDITED' }, { owner, org });
    await createConcepts(t, s.url, owner, [
      ['X', 'Before', 'Misc'],
      ['Y', 'Answer', 'Misc'],
    ]);
    await createMappingBetween(t, s.url, owner, [
      'mx',
      'Q-AND-A',
      `${s.url}concepts/X/`,
      `${s.url}concepts/Y/`,
    ]);
    await createVersion(t, s.url, owner, 'v1', { released: true });
    await request(t.app)
      .patch(`${s.url}concepts/X/`)
      .set('Authorization', owner.auth)
      .send({ names: [{ name: 'After', locale: 'en', locale_preferred: true }] })
      .expect(200);
    await request(t.app)
      .delete(`${s.url}mappings/mx/`)
      .set('Authorization', owner.auth)
      .expect(204);
    const then = await cascade(`${s.url}concepts/X/$cascade/`);
    expect((then.entry as Entry[])[0].display_name).toBe('Before');
    expect(ids(then, 'Concept')).toEqual(['X', 'Y']);
    expect(ids(then, 'Mapping')).toEqual(['mx']);
    const now = await cascade(`${s.url}HEAD/concepts/X/$cascade/`);
    expect((now.entry as Entry[])[0].display_name).toBe('After');
    expect(ids(now, 'Concept')).toEqual(['X']);
  });
});

describe('$cascade, hierarchy view', () => {
  it('nests what each concept reaches under it; a concept reached again appears without entries', async () => {
    const bundle = await cascade(`${source}concepts/Q/$cascade/?view=hierarchy`);
    expect(bundle.total).toBeNull();
    const root = bundle.entry as Entry;
    expect(root.id).toBe('Q');
    const under = (e: Entry) => (e.entries ?? []).map((x) => `${String(x.type)}:${String(x.id)}`);
    expect(under(root)).toEqual([
      'Mapping:m1',
      'Concept:A1',
      'Mapping:m2',
      'Concept:A2',
      'Mapping:m7',
    ]);
    const a2 = root.entries!.find((e) => e.id === 'A2')!;
    expect(under(a2)).toEqual(['Mapping:m6', 'Concept:Q']);
    const again = a2.entries!.find((e) => e.id === 'Q')!;
    expect(again.entries).toEqual([]);
    const a1 = root.entries!.find((e) => e.id === 'A1')!;
    expect(under(a1)).toEqual(['Mapping:m3', 'Concept:A1a']);
    expect(a1.entries![0].target_concept_code).toBe('A1a');
  });

  it('answers the web client’s Associations request', async () => {
    const bundle = await cascade(
      `${source}concepts/Q/$cascade/?uri=${encodeURIComponent(source)}&cascadeLevels=1` +
        '&method=sourceToConcepts&view=hierarchy',
    );
    expect((bundle.entry as Entry).entries!.length).toBeGreaterThan(0);
  });
});

describe('$cascade limits, scope and errors', () => {
  it('stops at CASCADE_MAX_RESOURCES and says so', async () => {
    const small = await createTestApp({ CASCADE_MAX_RESOURCES: '3' });
    try {
      const res = await request(small.app).get(`${source}concepts/Q/$cascade/`).expect(200);
      expect(res.body.entry).toHaveLength(3);
      expect(res.body.limit_reached).toBe(true);
      expect(res.body.limit).toBe(3);
    } finally {
      await small.close();
    }
    const full = await cascade(`${source}concepts/Q/$cascade/`);
    expect(full.limit_reached).toBe(false);
  });

  it('omits concepts already in the omitIfExistsIn repository, ending their branch', async () => {
    const c = await createCollection(t, { id: 'HAVE' }, { owner, org });
    await request(t.app)
      .put(`${c.url}references/`)
      .set('Authorization', owner.auth)
      .send({ data: { expressions: [`${source}concepts/A1/`] } })
      .expect(200);
    const bundle = await cascade(
      `${source}concepts/Q/$cascade/?omitIfExistsIn=${encodeURIComponent(c.url)}`,
    );
    expect(ids(bundle, 'Concept')).toEqual(['Q', 'A2']);
  });

  it('cascades within a collection version: only its members are reached', async () => {
    const c = await createCollection(t, { id: 'PART' }, { owner, org });
    await request(t.app)
      .put(`${c.url}references/`)
      .set('Authorization', owner.auth)
      .send({
        data: {
          expressions: [
            `${source}concepts/Q/`,
            `${source}concepts/A1/`,
            `${source}mappings/m1/`,
            `${source}mappings/m2/`,
          ],
        },
      })
      .expect(200);
    await createVersion(t, c.url, owner, 'r1', { released: true });
    const bundle = await cascade(`${c.url}concepts/Q/$cascade/`);
    expect(bundle.repo_version_url).toBe(`${c.url}r1/`);
    expect(ids(bundle, 'Concept')).toEqual(['Q', 'A1']);
    expect(ids(bundle, 'Mapping')).toEqual(['m1', 'm2']);
  });

  it('keeps private content private: 401 anonymous, 403 outsiders, 200 members', async () => {
    const s = await createSource(t, { id: 'PRIV', public_access: 'None' }, { owner, org });
    await createConcept(t, s.url, owner, { id: 'X' });
    await request(t.app).get(`${s.url}HEAD/concepts/X/$cascade/`).expect(401);
    const outsider = await createUser(t);
    await request(t.app)
      .get(`${s.url}HEAD/concepts/X/$cascade/`)
      .set('Authorization', outsider.auth)
      .expect(403);
    await cascade(`${s.url}HEAD/concepts/X/$cascade/`, owner.auth);
  });

  it('refuses bad parameters with 400, an unknown concept with 404, other methods with 405', async () => {
    for (const query of [
      'cascadeLevels=many',
      'view=tree',
      'method=everything',
      'reverse=perhaps',
      'omitIfExistsIn=nowhere',
    ]) {
      const res = await request(t.app).get(`${source}concepts/Q/$cascade/?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.message).toBeTruthy();
    }
    await request(t.app).get(`${source}concepts/NOPE/$cascade/`).expect(404);
    await request(t.app)
      .post(`${source}concepts/Q/$cascade/`)
      .set('Authorization', owner.auth)
      .send({})
      .expect(405);
  });
});

describe('$cascade under hostile input', () => {
  it('answers odd parameters and paths with 2xx or 4xx, never a 5xx', async () => {
    const queries = [
      'cascadeLevels=999999',
      'cascadeLevels=-1',
      `mapTypes=${'x,'.repeat(5000)}`,
      'omitIfExistsIn=%2Forgs%2F',
      `omitIfExistsIn=${encodeURIComponent(`${source}NOPE/`)}`,
      'view=%00',
      'returnMapTypes=,,,',
      // Long, yet under Node's 16 KB header limit, so that the route (not Node's parser) answers.
      `equivalencyMapType=${'a'.repeat(12_000)}&omitIfExistsIn=${encodeURIComponent(source)}`,
    ];
    const failures: string[] = [];
    for (const query of queries) {
      for (const path of [
        `${source}HEAD/concepts/Q/$cascade/?${query}`,
        `${source}HEAD/concepts/%F0%9F%98%80/$cascade/?${query}`,
        `${source}x'%22/concepts/Q/$cascade/?${query}`,
      ]) {
        const res = await request(t.app).get(path);
        if (res.status >= 500) failures.push(`${res.status} ${path.slice(0, 120)}`);
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('one walk for $cascade and collection references', () => {
  async function membersAfter(id: string, body: object, query = ''): Promise<string[]> {
    const c = await createCollection(t, { id }, { owner, org });
    await request(t.app)
      .put(`${c.url}references/${query}`)
      .set('Authorization', owner.auth)
      .send(body)
      .expect(200);
    const res = await request(t.app).get(`${c.url}concepts/?limit=0`).expect(200);
    return (res.body as Array<{ id: string }>).map((x) => x.id).sort();
  }

  it('a reference with ?cascade= reaches what $cascade at HEAD reaches', async () => {
    const walked = await cascade(`${source}HEAD/concepts/Q/$cascade/`);
    const members = await membersAfter(
      'SAMEWALK',
      { data: { expressions: [`${source}concepts/Q/`] } },
      '?cascade=sourcetoconcepts',
    );
    expect(members).toEqual(ids(walked, 'Concept').sort());
    const hierarchy = await membersAfter(
      'TREE',
      { data: { expressions: [`${source}concepts/P/`] } },
      '?cascade=sourcetoconcepts',
    );
    expect(hierarchy).toEqual(['C1', 'C2', 'P']);
  });

  it('a reference’s cascade object takes the parameters of $cascade', async () => {
    const members = await membersAfter('OBJ', {
      url: `${source}concepts/Q/`,
      cascade: { method: 'sourcetoconcepts', map_types: 'Q-AND-A', cascadeLevels: 0 },
    });
    expect(members).toEqual(['A1', 'A2', 'NEW', 'Q']);
    const c = await createCollection(t, { id: 'BADOBJ' }, { owner, org });
    const res = await request(t.app)
      .put(`${c.url}references/`)
      .set('Authorization', owner.auth)
      .send({ url: `${source}concepts/Q/`, cascade: { cascadeLevels: 'many' } });
    // As any malformed reference of an add: refused with its message, nothing added.
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      expect.objectContaining({ added: false, message: expect.stringMatching(/cascadeLevels/) }),
    ]);
    const after = await request(t.app).get(`${c.url}references/`).expect(200);
    expect(after.body).toEqual([]);
  });
});

describe('$cascade, every value of the map-type, level and method parameters', () => {
  it('returnMapTypes takes a list of several types (any case), and 0 lists none', async () => {
    const two = await cascade(
      `${source}concepts/SET/$cascade/?returnMapTypes=concept-set, SAME-AS`,
    );
    expect(ids(two, 'Concept')).toEqual(['SET', 'Q', 'M1', 'A1', 'A2', 'A1a']);
    expect(ids(two, 'Mapping').sort()).toEqual(['m4', 'm5', 'm6', 'm7']);
    const zero = await cascade(`${source}concepts/SET/$cascade/?returnMapTypes=0`);
    expect(ids(zero, 'Mapping')).toEqual([]);
    expect(ids(zero, 'Concept')).toEqual(['SET', 'Q', 'M1', 'A1', 'A2', 'A1a']);
    expect(zero.total).toBe(6);
  });

  it('excludeMapTypes is ignored when mapTypes is set (a list or *)', async () => {
    const excluded = await cascade(`${source}concepts/Q/$cascade/?excludeMapTypes=Q-AND-A`);
    expect(ids(excluded, 'Concept')).toEqual(['Q']);
    expect(ids(excluded, 'Mapping')).toEqual(['m7']);
    const listed = await cascade(
      `${source}concepts/SET/$cascade/?mapTypes=CONCEPT-SET&excludeMapTypes=CONCEPT-SET`,
    );
    expect(ids(listed, 'Concept')).toEqual(['SET', 'Q', 'M1']);
    expect(ids(listed, 'Mapping')).toEqual(['m4', 'm5']);
    const every = await cascade(`${source}concepts/Q/$cascade/?mapTypes=*&excludeMapTypes=Q-AND-A`);
    expect(ids(every, 'Concept')).toEqual(['Q', 'A1', 'A2', 'A1a']);
    expect(ids(every, 'Mapping').sort()).toEqual(['m1', 'm2', 'm3', 'm6', 'm7']);
  });

  it('cascadeLevels n >= 2 goes n levels further; an explicit * is the default', async () => {
    const byLevels: Record<string, unknown[]> = {};
    for (const levels of ['0', '1', '2', '*']) {
      const bundle = await cascade(`${source}concepts/SET/$cascade/?cascadeLevels=${levels}`);
      byLevels[levels] = (bundle.entry as Entry[])
        .filter((e) => e.type === 'Concept')
        .map((e) => `${String(e.id)}:${String(e.terminal)}`);
    }
    expect(byLevels).toEqual({
      '0': ['SET:false', 'Q:null', 'M1:null'],
      '1': ['SET:false', 'Q:false', 'M1:true', 'A1:null', 'A2:null'],
      '2': ['SET:false', 'Q:false', 'M1:true', 'A1:false', 'A2:false', 'A1a:null'],
      '*': ['SET:false', 'Q:false', 'M1:true', 'A1:false', 'A2:false', 'A1a:true'],
    });
    expect(await cascade(`${source}concepts/SET/$cascade/?cascadeLevels=*`)).toEqual(
      expect.objectContaining({
        total: (await cascade(`${source}concepts/SET/$cascade/`)).total,
      }),
    );
    const tree = await cascade(`${source}concepts/P/$cascade/?cascadeLevels=0`);
    expect(ids(tree, 'Concept')).toEqual(['P', 'C1']);
  });

  it('method is case-insensitive: sourcetoconcepts, sourcemappings, SOURCEMAPPINGS', async () => {
    const concepts = await cascade(`${source}concepts/Q/$cascade/?method=sourcetoconcepts`);
    expect(ids(concepts, 'Concept')).toEqual(['Q', 'A1', 'A2', 'A1a']);
    for (const method of ['sourcemappings', 'SOURCEMAPPINGS']) {
      const mappings = await cascade(`${source}concepts/Q/$cascade/?method=${method}`);
      expect(ids(mappings, 'Concept')).toEqual(['Q']);
      expect(ids(mappings, 'Mapping').sort()).toEqual(['m1', 'm2', 'm7']);
    }
    // sourcemappings follows no hierarchy either.
    const tree = await cascade(`${source}concepts/P/$cascade/?method=sourcemappings`);
    expect(ids(tree, 'Concept')).toEqual(['P']);
  });
});

describe('$cascade, hierarchy view with reverse', () => {
  const under = (e: Entry) => (e.entries ?? []).map((x) => `${String(x.type)}:${String(x.id)}`);

  it('nests from a target back to what points at it, and from a child to its parents', async () => {
    const bundle = await cascade(`${source}concepts/A1a/$cascade/?view=hierarchy&reverse=true`);
    expect(bundle.total).toBeNull();
    const root = bundle.entry as Entry;
    expect(root.id).toBe('A1a');
    expect(under(root)).toEqual(['Mapping:m3', 'Concept:A1']);
    const m3 = root.entries![0];
    expect(m3).toMatchObject({
      from_concept_code: 'A1',
      from_concept_url: `${source}concepts/A1/`,
      cascade_target_concept_code: 'A1',
      target_concept_code: 'A1',
      target_concept_name: 'Smear',
    });
    expect(m3.to_concept_code).toBeUndefined();
    const a1 = root.entries![1];
    expect(under(a1)).toEqual(['Mapping:m1', 'Concept:Q']);
    const q = a1.entries![1];
    expect(under(q)).toEqual(['Mapping:m4', 'Concept:SET', 'Mapping:m6', 'Concept:A2']);
    const a2 = q.entries![3];
    // A2 is pointed at by Q (m2): Q appears again, not cascaded again.
    expect(under(a2)).toEqual(['Mapping:m2', 'Concept:Q']);
    expect(a2.entries![1].entries).toEqual([]);

    const parents = await cascade(`${source}concepts/C2/$cascade/?view=hierarchy&reverse=true`);
    const c2 = parents.entry as Entry;
    expect(under(c2)).toEqual(['Concept:C1']);
    expect(under(c2.entries![0])).toEqual(['Concept:P']);
    expect(c2.entries![0].entries![0]).toMatchObject({ id: 'P', terminal: true, entries: [] });
  });

  it('answers the web client’s Associations request for parents (reverse=true)', async () => {
    const bundle = await cascade(
      `${source}concepts/A1/$cascade/?uri=${encodeURIComponent(source)}&cascadeLevels=1` +
        '&method=sourceToConcepts&view=hierarchy&reverse=true',
    );
    const root = bundle.entry as Entry;
    expect(root).toMatchObject({ id: 'A1', terminal: false });
    expect(under(root)).toEqual(['Mapping:m1', 'Concept:Q']);
    const q = root.entries![1];
    expect(q.terminal).toBe(false);
    expect(under(q)).toEqual(['Mapping:m4', 'Concept:SET', 'Mapping:m6', 'Concept:A2']);
    // Level 2 is beyond cascadeLevels=1: reached, not cascaded.
    expect(q.entries![1]).toMatchObject({ id: 'SET', terminal: null, entries: [] });
    expect(q.entries![3]).toMatchObject({ id: 'A2', terminal: null, entries: [] });
  });
});

describe('$cascade under users and collections', () => {
  it('answers under /users/:user/ and /user/ (the caller’s own) as under /orgs/', async () => {
    const user = await createUser(t);
    const repo = await createRepo(t, `/users/${user.username}`, user, { id: 'MINE' });
    expect(repo.url).toBe(`/users/${user.username}/sources/MINE/`);
    await createConcepts(t, repo.url, user, [
      ['X', 'Question X', 'Question'],
      ['Y', 'Answer Y', 'Misc'],
    ]);
    await createMappingBetween(t, repo.url, user, [
      'mxy',
      'Q-AND-A',
      `${repo.url}concepts/X/`,
      `${repo.url}concepts/Y/`,
    ]);
    await createVersion(t, repo.url, user, 'v1', { released: true });
    const byName = await cascade(`${repo.url}concepts/X/$cascade/`);
    expect(byName.repo_version_url).toBe(`${repo.url}v1/`);
    expect(ids(byName, 'Concept')).toEqual(['X', 'Y']);
    expect(ids(byName, 'Mapping')).toEqual(['mxy']);
    const own = await cascade('/user/sources/MINE/HEAD/concepts/X/$cascade/', user.auth);
    expect(own.repo_version_url).toBe(`${repo.url}HEAD/`);
    expect(ids(own, 'Concept')).toEqual(['X', 'Y']);
    const released = await cascade('/user/sources/MINE/v1/concepts/X/$cascade/', user.auth);
    expect(ids(released, 'Mapping')).toEqual(['mxy']);
    await request(t.app).get('/user/sources/MINE/concepts/X/$cascade/').expect(401);

    const coll = await createRepo(
      t,
      `/users/${user.username}`,
      user,
      { id: 'MYSET' },
      'collections',
    );
    await request(t.app)
      .put(`${coll.url}references/`)
      .set('Authorization', user.auth)
      .send({ data: { expressions: [`${repo.url}concepts/X/`, `${repo.url}concepts/Y/`] } })
      .expect(200);
    const inColl = await cascade('/user/collections/MYSET/HEAD/concepts/X/$cascade/', user.auth);
    expect(inColl.repo_version_url).toBe(`${coll.url}HEAD/`);
    expect(ids(inColl, 'Concept')).toEqual(['X']);
    expect(ids(await cascade(`${coll.url}HEAD/concepts/X/$cascade/`), 'Concept')).toEqual(['X']);
  });

  it('a collection at HEAD walks its current members; with no released version, 404 saying so', async () => {
    const c = await createCollection(t, { id: 'DRAFT' }, { owner, org });
    await request(t.app)
      .put(`${c.url}references/`)
      .set('Authorization', owner.auth)
      .send({
        data: {
          expressions: [`${source}concepts/Q/`, `${source}concepts/A2/`, `${source}mappings/m2/`],
        },
      })
      .expect(200);
    const head = await cascade(`${c.url}HEAD/concepts/Q/$cascade/`);
    expect(head.repo_version_url).toBe(`${c.url}HEAD/`);
    expect(ids(head, 'Concept')).toEqual(['Q', 'A2']);
    expect(ids(head, 'Mapping')).toEqual(['m2']);
    const none = await request(t.app).get(`${c.url}concepts/Q/$cascade/`).expect(404);
    expect(none.body.message).toMatch(/DRAFT.*no released version/);
    // An unreleased version does not count.
    await createVersion(t, c.url, owner, 'd1', { released: false });
    const still = await request(t.app).get(`${c.url}concepts/Q/$cascade/`).expect(404);
    expect(still.body.message).toMatch(/no released version/);
    expect(ids(await cascade(`${c.url}d1/concepts/Q/$cascade/`), 'Concept')).toEqual(['Q', 'A2']);
  });
});

describe('$cascade and private content inside a walk', () => {
  /**
   * PUB (public) has P1 mapped (Q-AND-A) to S1 of SECRET, a private source of another org of the
   * same author; the public collection MIX holds P1, S1 and the mapping.
   */
  let pub: string;
  let secret: string;
  let mix: string;
  let outsider: TestUser;

  beforeAll(async () => {
    secret = (await createSource(t, { id: 'SECRET', public_access: 'None' }, { owner })).url;
    await createConcepts(t, secret, owner, [['S1', 'Secret name', 'Misc']]);
    await createConcepts(t, secret, owner, [['S2', 'Secret answer', 'Misc']]);
    await createMappingBetween(t, secret, owner, [
      'sm',
      'Q-AND-A',
      `${secret}concepts/S1/`,
      `${secret}concepts/S2/`,
    ]);
    pub = (await createSource(t, { id: 'PUB' }, { owner, org })).url;
    await createConcepts(t, pub, owner, [['P1', 'Public question', 'Question']]);
    await createMappingBetween(t, pub, owner, [
      'pm',
      'Q-AND-A',
      `${pub}concepts/P1/`,
      `${secret}concepts/S1/`,
    ]);
    mix = (await createCollection(t, { id: 'MIX' }, { owner, org })).url;
    await request(t.app)
      .put(`${mix}references/`)
      .set('Authorization', owner.auth)
      .send({
        data: {
          expressions: [
            `${pub}concepts/P1/`,
            `${pub}mappings/pm/`,
            `${secret}concepts/S1/`,
            `${secret}concepts/S2/`,
            `${secret}mappings/sm/`,
          ],
        },
      })
      .expect(200);
    await createVersion(t, mix, owner, 'r1', { released: true });
    outsider = await createUser(t);
  });

  it('a mapping of a public source to a private concept: listed, the concept never shown', async () => {
    for (const auth of [undefined, outsider.auth]) {
      const bundle = await cascade(`${pub}HEAD/concepts/P1/$cascade/`, auth);
      expect(ids(bundle, 'Concept')).toEqual(['P1']);
      const pm = (bundle.entry as Entry[]).find((e) => e.id === 'pm')!;
      expect(pm).toMatchObject({
        to_concept_code: 'S1',
        cascade_target_concept_name: null,
        cascade_target_source_owner: null,
        cascade_target_source_name: null,
      });
      expect(JSON.stringify(bundle)).not.toMatch(/Secret/);
    }
    const mine = await cascade(`${pub}HEAD/concepts/P1/$cascade/`, owner.auth);
    const pm = (mine.entry as Entry[]).find((e) => e.id === 'pm')!;
    expect(pm).toMatchObject({
      cascade_target_concept_name: 'Secret name',
      cascade_target_source_name: 'SECRET',
    });
  });

  it('in a collection, members of a source the caller may not see are neither reached nor shown', async () => {
    for (const auth of [undefined, outsider.auth]) {
      for (const view of ['flat', 'hierarchy']) {
        const bundle = await cascade(`${mix}concepts/P1/$cascade/?view=${view}`, auth);
        expect(JSON.stringify(bundle)).not.toMatch(/Secret|"S2"|"sm"/);
        if (view === 'flat') {
          expect(ids(bundle, 'Concept')).toEqual(['P1']);
          expect(ids(bundle, 'Mapping')).toEqual(['pm']);
        } else {
          expect((bundle.entry as Entry).entries!.map((e) => e.id)).toEqual(['pm']);
        }
      }
      const hidden = request(t.app).get(`${mix}concepts/S1/$cascade/`);
      await (auth ? hidden.set('Authorization', auth) : hidden).expect(404);
    }
    const mine = await cascade(`${mix}concepts/P1/$cascade/`, owner.auth);
    expect(ids(mine, 'Concept')).toEqual(['P1', 'S1', 'S2']);
    expect(ids(mine, 'Mapping')).toEqual(['pm', 'sm']);
  });

  it('omitIfExistsIn naming a private repository answers as reading it would (401/403), leaking nothing', async () => {
    const omit = `${pub}HEAD/concepts/P1/$cascade/?omitIfExistsIn=${encodeURIComponent(secret)}`;
    const direct = await request(t.app).get(secret);
    const anonymous = await request(t.app).get(omit);
    expect([direct.status, anonymous.status]).toEqual([401, 401]);
    const directOutsider = await request(t.app).get(secret).set('Authorization', outsider.auth);
    const asOutsider = await request(t.app).get(omit).set('Authorization', outsider.auth);
    expect([directOutsider.status, asOutsider.status]).toEqual([403, 403]);
    expect(JSON.stringify(asOutsider.body)).not.toMatch(/Secret|S1/);
    const missing = `${pub}HEAD/concepts/P1/$cascade/?omitIfExistsIn=${encodeURIComponent(
      secret.replace('SECRET', 'NOSUCH'),
    )}`;
    await request(t.app).get(missing).set('Authorization', outsider.auth).expect(404);
    // A collection holding private members: the caller's own view of it only.
    const viaMix = `${mix}concepts/P1/$cascade/?omitIfExistsIn=${encodeURIComponent(mix)}`;
    expect(ids(await cascade(viaMix, owner.auth), 'Concept')).toEqual(['P1']);
    await cascade(
      `${pub}HEAD/concepts/P1/$cascade/?omitIfExistsIn=${encodeURIComponent(secret)}`,
      owner.auth,
    );
  });
});
