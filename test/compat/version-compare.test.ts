import request from 'supertest';
import { createTestApp, createUser, type TestApp } from '../factories';
import {
  createConcept,
  createMappingBetween,
  createSource,
  createVersion,
  retire,
  type TestSource,
} from '../factories/content';
import { gql } from '../graphql/gql';

/**
 * OCL's `POST /sources/$compare/` and `POST /sources/$changelog/` (oclapi2 `core/sources`): two
 * versions of a source compared by what changed between them, as the web client's "compare
 * versions" page (verbosity 3) and version changelog (verbosity 4, markdown) ask for it.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/**
 * v1: concepts A, B, C, D, R; mappings M1 (A → B), M2 (C → D), M3 (B → C).
 * Then: A's class changes (major), B gains a description (minor), C is retired, N is new; M1 is
 * retired, M2's map type changes (major), M4 (D → R) is new; D, R and M3 stay. v2.
 */
async function world(): Promise<TestSource> {
  const s = await createSource(t);
  for (const id of ['A', 'B', 'C', 'D', 'R']) {
    await createConcept(t, s.url, s.owner, { id, concept_class: 'Diagnosis' });
  }
  const c = (id: string) => `${s.url}concepts/${id}/`;
  await createMappingBetween(t, s.url, s.owner, ['M1', 'SAME-AS', c('A'), c('B')]);
  await createMappingBetween(t, s.url, s.owner, ['M2', 'SAME-AS', c('C'), c('D')]);
  await createMappingBetween(t, s.url, s.owner, ['M3', 'SAME-AS', c('B'), c('C')]);
  await createVersion(t, s.url, s.owner, 'v1', { released: true });
  const edit = (path: string, body: object) =>
    request(t.app).put(path).set('Authorization', s.owner.auth).send(body).expect(200);
  await edit(c('A'), {
    concept_class: 'Symptom',
    names: [{ name: 'Name A', locale: 'en', locale_preferred: true }],
  });
  await edit(c('B'), {
    names: [{ name: 'Name B', locale: 'en', locale_preferred: true }],
    descriptions: [{ description: 'Now described', locale: 'en' }],
  });
  await retire(t, s.url, s.owner, 'concepts', 'C');
  await createConcept(t, s.url, s.owner, { id: 'N' });
  await retire(t, s.url, s.owner, 'mappings', 'M1');
  await edit(`${s.url}mappings/M2/`, { map_type: 'NARROWER-THAN' });
  await createMappingBetween(t, s.url, s.owner, ['M4', 'SAME-AS', c('D'), c('R')]);
  await createVersion(t, s.url, s.owner, 'v2', { released: true });
  return s;
}

function post(path: string, body: object, auth?: string) {
  const req = request(t.app).post(path);
  if (auth) void req.set('Authorization', auth);
  return req.send(body);
}

describe('$compare', () => {
  it('counts what changed between two versions, older first whatever the order', async () => {
    const s = await world();
    for (const [version1, version2] of [
      [`${s.url}v1/`, `${s.url}v2/`],
      [`${s.url}v2/`, `${s.url}v1/`],
    ]) {
      const res = await post('/sources/$compare/', { version1, version2 }, s.owner.auth);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        meta: {
          version1: { uri: `${s.url}v1/`, concepts: 5, mappings: 3 },
          version2: { uri: `${s.url}v2/`, concepts: 5, mappings: 3 },
        },
        concepts: {
          new: 1,
          removed: 0,
          changed_total: 3,
          changed_retired: 1,
          changed_major: 1,
          changed_minor: 1,
        },
        mappings: {
          new: 1,
          removed: 0,
          changed_total: 2,
          changed_retired: 1,
          changed_major: 1,
          changed_minor: 0,
        },
      });
    }
  });

  it('lists the codes with verbosity 2, and the unchanged ones with 1 and 3', async () => {
    const s = await world();
    const body = { version1: `${s.url}v1/`, version2: `${s.url}v2/` };
    const two = await post('/sources/$compare/?verbosity=2', body, s.owner.auth);
    expect(two.body.concepts).toEqual({
      new: { total: 1, mnemonic: ['N'] },
      removed: 0,
      changed_total: 3,
      changed_retired: { total: 1, mnemonic: ['C'] },
      changed_major: { total: 1, mnemonic: ['A'] },
      changed_minor: { total: 1, mnemonic: ['B'] },
      // From verbosity 1 on, the unchanged are counted; their ids come at 3.
      same_total: 2,
      same_major: 2,
      same_minor: 0,
    });
    expect(two.body.mappings.changed_major).toEqual({ total: 1, mnemonic: ['M2'] });
    const one = await post('/sources/$compare/', { ...body, verbosity: 1 }, s.owner.auth);
    expect(one.body.concepts).toMatchObject({ same_total: 2, same_major: 2, same_minor: 0 });
    const three = await post('/sources/$compare/?verbosity=3', body, s.owner.auth);
    expect(three.body.concepts.same_major).toEqual({ total: 2, mnemonic: ['D', 'R'] });
    expect(three.body.mappings.same_major).toEqual({ total: 1, mnemonic: ['M3'] });
  });

  it('compares a version with HEAD, and HEAD with itself', async () => {
    const s = await world();
    await createConcept(t, s.url, s.owner, { id: 'H' });
    const res = await post(
      '/sources/$compare/?verbosity=2',
      { version1: s.url, version2: `${s.url}v2/` },
      s.owner.auth,
    );
    expect(res.body.meta.version1.uri).toBe(`${s.url}v2/`);
    expect(res.body.meta.version2).toEqual({ uri: s.url, concepts: 6, mappings: 3 });
    expect(res.body.concepts.new).toEqual({ total: 1, mnemonic: ['H'] });
    const same = await post(
      '/sources/$compare/?verbosity=1',
      { version1: `${s.url}HEAD/`, version2: s.url },
      s.owner.auth,
    );
    expect(same.body.concepts).toMatchObject({ new: 0, changed_total: 0, same_total: 6 });
  });

  it('refuses bad input with a 400, anonymous callers with a 401, and keeps private sources private', async () => {
    const s = await world();
    const body = { version1: `${s.url}v1/`, version2: `${s.url}v2/` };
    expect((await post('/sources/$compare/', body)).status).toBe(401);
    const other = await createSource(t, { id: 'OTHER' });
    for (const [bad, field] of [
      [{ version1: `${s.url}v1/` }, 'version2'],
      [{ ...body, version2: `${other.url}` }, 'version2'],
      [{ ...body, version1: 'not a url' }, 'version1'],
      [{ ...body, verbosity: 'lots' }, 'verbosity'],
      [{ ...body, verbosity: 9 }, 'verbosity'],
    ] as const) {
      const res = await post('/sources/$compare/', bad, s.owner.auth);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain(field);
    }
    expect(
      (await post('/sources/$compare/', { ...body, version2: `${s.url}v9/` }, s.owner.auth)).status,
    ).toBe(404);
    await request(t.app)
      .put(s.url)
      .set('Authorization', s.owner.auth)
      .send({ public_access: 'None' })
      .expect(200);
    const stranger = await createUser(t);
    const hidden = await post('/sources/$compare/', body, stranger.auth);
    expect([403, 404]).toContain(hidden.status);
    expect(JSON.stringify(hidden.body)).not.toContain('changed_major');
  });
});

describe('$changelog', () => {
  it('describes each change, with the changed mappings under the concept they map from', async () => {
    const s = await world();
    const res = await post(
      '/sources/$changelog/',
      { version1: `${s.url}v1/`, version2: `${s.url}v2/`, verbosity: 3 },
      s.owner.auth,
    );
    expect(res.status).toBe(200);
    expect(res.body.meta.diff.concepts).toEqual({
      new: 1,
      removed: 0,
      changed_total: 3,
      changed_retired: 1,
      changed_major: 1,
      changed_minor: 1,
    });
    expect(res.body.concepts).toEqual({
      new: { N: { id: 'N', display_name: 'Name N' } },
      changed_retired: {
        C: {
          id: 'C',
          display_name: 'Name C',
          mappings: {
            changed_major: [
              {
                id: 'M2',
                from_concept: 'C',
                from_source: s.url,
                to_concept: 'D',
                to_source: s.url,
                map_type: 'NARROWER-THAN',
              },
            ],
          },
        },
      },
      changed_major: {
        A: {
          id: 'A',
          display_name: 'Name A',
          mappings: { changed_retired: [expect.objectContaining({ id: 'M1', to_concept: 'B' })] },
        },
      },
      changed_minor: { B: { id: 'B', display_name: 'Name B' } },
      changed_mappings_only: {
        D: {
          id: 'D',
          display_name: 'Name D',
          mappings: { new: [expect.objectContaining({ id: 'M4', to_concept: 'R' })] },
        },
      },
    });
    expect(res.body.mappings).toEqual({});
  });

  it('adds names, descriptions and former values with verbosity 4, and a release note as markdown', async () => {
    const s = await world();
    const res = await post(
      '/sources/$changelog/?output=markdown&verbosity=4',
      { version1: `${s.url}v1/`, version2: `${s.url}v2/` },
      s.owner.auth,
    );
    expect(res.status).toBe(200);
    expect(res.body.concepts.changed_major.A).toMatchObject({
      concept_class: 'Symptom',
      prev_concept_class: 'Diagnosis',
      names: [expect.objectContaining({ name: 'Name A', locale: 'en' })],
    });
    expect(res.body.concepts.changed_minor.B).toMatchObject({
      descriptions: [expect.objectContaining({ description: 'Now described' })],
      prev_descriptions: [],
    });
    expect(res.body.concepts.changed_retired.C.mappings.changed_major[0]).toMatchObject({
      prev_map_type: 'SAME-AS',
      map_type: 'NARROWER-THAN',
    });
    const markdown = res.body.markdown as string;
    expect(markdown).toContain('v1 → v2');
    expect(markdown).toMatch(/\| New \| 1 \| 1 \|/);
    expect(markdown).toMatch(
      /## Changed in meaning concepts \(1\)\n\n- \*\*A\*\* Name A\n {2}- class: Diagnosis → Symptom/,
    );
    expect(markdown).toContain('## Concepts whose mappings changed (1)');
    expect(
      (
        await post(
          '/sources/$changelog/?output=pdf',
          { version1: `${s.url}v1/`, version2: `${s.url}v2/` },
          s.owner.auth,
        )
      ).status,
    ).toBe(400);
  });

  it('answers through GraphQL, typed', async () => {
    const s = await world();
    const res = await gql(
      t,
      s.owner.auth,
      `query($a: String!, $b: String!) {
        compareSourceVersions(version1: $a, version2: $b) {
          older { url concepts } newer { url concepts }
          concepts { new removed retired major minor same }
          mappings { new retired major same }
          changelog { concepts { kind code displayName before { conceptClass } mappings { kind code mapType } } mappings { code } }
        }
      }`,
      { a: `${s.url}v2/`, b: `${s.url}v1/` },
    );
    expect(res.errors).toBeUndefined();
    const c = res.data.compareSourceVersions;
    expect(c.older).toEqual({ url: `${s.url}v1/`, concepts: 5 });
    expect(c.concepts).toEqual({
      new: ['N'],
      removed: [],
      retired: ['C'],
      major: ['A'],
      minor: ['B'],
      same: 2,
    });
    expect(c.mappings).toEqual({ new: ['M4'], retired: ['M1'], major: ['M2'], same: 1 });
    expect(
      c.changelog.concepts.map((x: { kind: string | null; code: string }) => [x.kind, x.code]),
    ).toEqual([
      ['NEW', 'N'],
      ['RETIRED', 'C'],
      ['MAJOR', 'A'],
      ['MINOR', 'B'],
      [null, 'D'],
    ]);
    expect(c.changelog.concepts[2].before).toEqual({ conceptClass: 'Diagnosis' });
    const denied = await gql(
      t,
      undefined,
      `query { compareSourceVersions(version1: "${s.url}v1/", version2: "${s.url}v2/") { concepts { same } } }`,
    );
    expect(denied.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
  });
});
