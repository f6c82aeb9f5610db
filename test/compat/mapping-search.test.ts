import request from 'supertest';
import { createTestApp, createUser, uniqueId, type TestApp, type TestUser } from '../factories';
import {
  createCollection,
  createConcepts,
  createMapping,
  createSource,
  type TestSource,
} from '../factories/content';
import { gql } from '../graphql/gql';

/**
 * Mapping search (issue 26 item 3): `q` finds a mapping by its id and by either end's code or the
 * current display name of its concept, as OCL indexes `from_concept`/`to_concept`; a code matches
 * itself and the codes it begins (OCL's `code*` wildcard), exact code matches first; the names of
 * concepts in sources the caller may not see find nothing.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/**
 * A public source S with concepts 1002 (named `Malaria<tag>`), 10020, 21002 and X; a public
 * source T of another org with T1 (`Paludism<tag>`); a private source P of S's org with P1
 * (`Secretitis<tag>`). Mappings of S: M10020 (10020 → X, BROADER-THAN, made first), M1002
 * (1002 → T1), M21002 (21002 → X) and MP (X → P1). The tag keeps the names apart from other tests'.
 */
interface World {
  s: TestSource;
  t: TestSource;
  p: TestSource;
  tag: string;
}

async function world(): Promise<World> {
  const tag = uniqueId('w')
    .replace(/[^a-z0-9]/gi, '')
    .toLowerCase();
  const s = await createSource(t, { id: 'S' });
  const other = await createSource(t, { id: 'T' });
  const p = await createSource(
    t,
    { id: 'P', public_access: 'None' },
    { owner: s.owner, org: s.org },
  );
  await createConcepts(t, s.url, s.owner, [
    ['1002', `Malaria${tag}`, 'Diagnosis'],
    ['10020', `Fever${tag}`, 'Symptom'],
    ['21002', `Cough${tag}`, 'Symptom'],
    ['X', `Headache${tag}`, 'Symptom'],
  ]);
  await createConcepts(t, other.url, other.owner, [['T1', `Paludism${tag}`, 'Diagnosis']]);
  await createConcepts(t, p.url, p.owner, [['P1', `Secretitis${tag}`, 'Diagnosis']]);
  const map = (id: string, mapType: string, from: string, to: string) =>
    createMapping(t, s.url, s.owner, {
      id,
      map_type: mapType,
      from_concept_url: from,
      to_concept_url: to,
    });
  await map('M10020', 'BROADER-THAN', `${s.url}concepts/10020/`, `${s.url}concepts/X/`);
  await map('M1002', 'SAME-AS', `${s.url}concepts/1002/`, `${other.url}concepts/T1/`);
  await map('M21002', 'SAME-AS', `${s.url}concepts/21002/`, `${s.url}concepts/X/`);
  await map('MP', 'SAME-AS', `${s.url}concepts/X/`, `${p.url}concepts/P1/`);
  return { s, t: other, p, tag };
}

/** The ids of the mappings a list answers for `q`, in its order, as `by` (anonymous: none). */
async function found(path: string, q: string, by?: TestUser): Promise<string[]> {
  const req = request(t.app).get(path).query({ q, limit: '100' });
  if (by) void req.set('Authorization', by.auth);
  const res = await req;
  expect(res.status).toBe(200);
  return (res.body as Array<{ id: string }>).map((m) => m.id);
}

/** The ids `/mappings/` answers for `q` among S's mappings (other tests' sources are public too). */
async function foundGlobally(w: World, q: string, by?: TestUser): Promise<string[]> {
  const req = request(t.app).get('/mappings/').query({ q, limit: '100' });
  if (by) void req.set('Authorization', by.auth);
  const res = await req;
  expect(res.status).toBe(200);
  return (res.body as Array<{ id: string; url: string }>)
    .filter((m) => m.url.startsWith(w.s.url))
    .map((m) => m.id);
}

describe('q finds mappings by their ends’ concept names', () => {
  it('by the from concept’s name, in the source list, /mappings/ and GraphQL', async () => {
    const w = await world();
    expect(await found(`${w.s.url}mappings/`, `malaria${w.tag}`)).toEqual(['M1002']);
    expect(await foundGlobally(w, `MALARIA${w.tag}`)).toEqual(['M1002']);
    const res = await gql(
      t,
      undefined,
      `query($s: String!, $q: String) { mappings(source: $s, q: $q) { totalCount items { id } } }`,
      { s: w.s.url, q: `malaria${w.tag}` },
    );
    expect(res.data.mappings).toEqual({ totalCount: 1, items: [{ id: 'M1002' }] });
  });

  it('by the to concept’s name, a concept of another org’s source', async () => {
    const w = await world();
    expect(await found(`${w.s.url}mappings/`, `paludism${w.tag}`)).toEqual(['M1002']);
    expect(await foundGlobally(w, `paludism${w.tag}`)).toEqual(['M1002']);
    // Every word must be found, each at either end.
    expect(await found(`${w.s.url}mappings/`, `paludism${w.tag} malaria${w.tag}`)).toEqual([
      'M1002',
    ]);
    expect(await found(`${w.s.url}mappings/`, `paludism${w.tag} fever${w.tag}`)).toEqual([]);
  });

  it('by the start of a word, not by letters inside one', async () => {
    const w = await world();
    expect(await found(`${w.s.url}mappings/`, 'malar')).toEqual(['M1002']);
    expect(await found(`${w.s.url}mappings/`, 'alaria')).toEqual([]);
    // A one-letter word names the concepts with that whole word (X is `Headache…`).
    expect(await found(`${w.s.url}mappings/`, 'h')).toEqual([]);
    expect(await found(`${w.s.url}mappings/`, 'headache')).toEqual(['M10020', 'M21002', 'MP']);
    // LIKE's wildcards are letters like any other.
    expect(await found(`${w.s.url}mappings/`, '%')).toEqual([]);
    expect(await found(`${w.s.url}mappings/`, '_')).toEqual([]);
  });

  it('by a word of a name set off by punctuation, typed with it or without', async () => {
    const w = await world();
    await createConcepts(t, w.s.url, w.s.owner, [
      ['Q', `Quartan${w.tag} fever (finding${w.tag}) [x-ray${w.tag}]`, 'Finding'],
    ]);
    await createMapping(t, w.s.url, w.s.owner, {
      id: 'MQ',
      map_type: 'SAME-AS',
      from_concept_url: `${w.s.url}concepts/Q/`,
      to_concept_url: `${w.s.url}concepts/X/`,
    });
    for (const q of [`finding${w.tag}`, `(finding${w.tag})`, `x-ray${w.tag}`, `ray${w.tag}`]) {
      expect(await found(`${w.s.url}mappings/`, q)).toEqual(['MQ']);
    }
    expect(await found(`${w.s.url}mappings/`, `inding${w.tag}`)).toEqual([]);
    expect(await found(`${w.s.url}mappings/`, '()')).toEqual([]);
  });

  it('by a renamed concept’s new name at once, and by its old name no more', async () => {
    const w = await world();
    const renamed = await request(t.app)
      .put(`${w.t.url}concepts/T1/`)
      .set('Authorization', w.t.owner.auth)
      .send({
        concept_class: 'Diagnosis',
        names: [{ name: `Plasmodium${w.tag} infection`, locale: 'en', locale_preferred: true }],
      });
    expect(renamed.status).toBe(200);
    expect(await found(`${w.s.url}mappings/`, `plasmodium${w.tag}`)).toEqual(['M1002']);
    expect(await found(`${w.s.url}mappings/`, 'infection')).toEqual(['M1002']);
    expect(await found(`${w.s.url}mappings/`, `paludism${w.tag}`)).toEqual([]);
    expect(await foundGlobally(w, `plasmodium${w.tag}`)).toEqual(['M1002']);
  });

  it('by the name in a collection’s mapping list', async () => {
    const w = await world();
    const c = await createCollection(t, { id: 'C' }, { owner: w.s.owner, org: w.s.org });
    await request(t.app)
      .put(`${c.url}references/`)
      .set('Authorization', w.s.owner.auth)
      .send({ data: { expressions: [`${w.s.url}mappings/M1002/`, `${w.s.url}mappings/M21002/`] } })
      .expect(200);
    expect(await found(`${c.url}mappings/`, `malaria${w.tag}`)).toEqual(['M1002']);
    expect(await found(`${c.url}mappings/`, `cough${w.tag}`)).toEqual(['M21002']);
    expect(await found(`${c.url}mappings/`, `fever${w.tag}`)).toEqual([]);
  });
});

describe('q on codes', () => {
  it('matches a code and the codes it begins, never one it is inside; exact matches first', async () => {
    const w = await world();
    // M10020 sorts first without a search (BROADER-THAN before SAME-AS): the rank moves it.
    expect(await found(`${w.s.url}mappings/`, '1002')).toEqual(['M1002', 'M10020']);
    expect(await foundGlobally(w, '1002')).toEqual(['M1002', 'M10020']);
    expect(await found(`${w.s.url}mappings/`, '21002')).toEqual(['M21002']);
    expect(await found(`${w.s.url}mappings/`, '10020')).toEqual(['M10020']);
    // The mapping's own id is searched as a word too.
    expect(await found(`${w.s.url}mappings/`, 'm21002')).toEqual(['M21002']);
  });

  it('finds an end outside the service by the code and the name stored with the mapping', async () => {
    const w = await world();
    await createMapping(t, w.s.url, w.s.owner, {
      id: 'MEXT',
      map_type: 'SAME-AS',
      from_concept_url: `${w.s.url}concepts/X/`,
      to_source_url: 'http://snomed.info/sct',
      to_concept_code: '61462000',
      to_concept_name: `Malaria${w.tag} (disorder)`,
    });
    expect(await found(`${w.s.url}mappings/`, '61462000')).toEqual(['MEXT']);
    expect((await found(`${w.s.url}mappings/`, `malaria${w.tag}`)).sort()).toEqual([
      'M1002',
      'MEXT',
    ]);
  });
});

describe('q and private sources', () => {
  it('a private concept’s name finds its mappings only for those who may see its source', async () => {
    const w = await world();
    const q = `secretitis${w.tag}`;
    const outsider = await createUser(t);
    // Anonymous and an outsider read the public source S: MP is there, P1's name is not theirs.
    expect(await found(`${w.s.url}mappings/`, q)).toEqual([]);
    expect(await found(`${w.s.url}mappings/`, q, outsider)).toEqual([]);
    expect(await foundGlobally(w, q)).toEqual([]);
    expect(await foundGlobally(w, q, outsider)).toEqual([]);
    const anonymous = await gql(
      t,
      undefined,
      `query($s: String!, $q: String) { mappings(source: $s, q: $q) { totalCount } }`,
      { s: w.s.url, q },
    );
    expect(anonymous.data.mappings.totalCount).toBe(0);
    // MP itself is public: its codes find it for anyone.
    expect(await found(`${w.s.url}mappings/`, 'p1')).toEqual(['MP']);
    // A member of the org that holds P sees P1, and so finds MP by its name.
    expect(await found(`${w.s.url}mappings/`, q, w.s.owner)).toEqual(['MP']);
    expect(await foundGlobally(w, q, w.s.owner)).toEqual(['MP']);
  });
});
