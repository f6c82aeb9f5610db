import request from 'supertest';
import { createOrg, createTestApp, createUser, type TestApp } from '../factories';
import {
  createConcept,
  createMapping,
  createRepo,
  createSource,
  createVersion,
} from '../factories/content';
import { orgWithPeople } from '../factories/people';
import { dataOf, errorCode, gql } from './gql';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const CONCEPT_FIELDS = `id version url versionUrl conceptClass datatype retired displayName displayLocale
  names { uuid name locale localePreferred nameType } descriptions { description locale }
  extras checksums { standard smart } isLatestVersion versionsCount`;

const source = () => createSource(t);

const CREATE = `mutation($s: String!, $i: ConceptInput!) { createConcept(source: $s, input: $i) { concept { ${CONCEPT_FIELDS} } } }`;
const MALARIA = {
  id: '116128',
  conceptClass: 'Diagnosis',
  datatype: 'N/A',
  names: [{ name: 'Malaria', locale: 'en', localePreferred: true, nameType: 'FULLY_SPECIFIED' }],
};

describe('concepts through GraphQL', () => {
  it('createConcept answers the concept with the golden checksums', async () => {
    const src = await source();
    const data = dataOf(await gql(t, src.owner.auth, CREATE, { s: src.url, i: MALARIA }));
    expect(data.createConcept.concept).toMatchObject({
      id: '116128',
      displayName: 'Malaria',
      versionsCount: 1,
      isLatestVersion: true,
      checksums: {
        standard: 'e200b92bd2ff4d1ec21c0e83b5f4fa4e',
        smart: 'e200b92bd2ff4d1ec21c0e83b5f4fa4e',
      },
    });
  });

  it('createConcept refuses bad input with INVALID and anonymous callers with UNAUTHENTICATED', async () => {
    const src = await source();
    const bad = await gql(t, src.owner.auth, CREATE, { s: src.url, i: { id: 'X', names: [] } });
    expect(errorCode(bad)).toBe('INVALID');
    expect(Object.keys(bad.errors![0].extensions!.fieldErrors!).sort()).toEqual([
      'conceptClass',
      'names',
    ]);
    expect(errorCode(await gql(t, undefined, CREATE, { s: src.url, i: MALARIA }))).toBe(
      'UNAUTHENTICATED',
    );
    const list = `query($u: String!) { source(url: $u) { concepts { totalCount } } }`;
    expect(dataOf(await gql(t, src.owner.auth, list, { u: src.url })).source.concepts).toEqual({
      totalCount: 0,
    });
  });

  it('updateConcept makes a version; an identical edit is UNCHANGED; a version URL reads the old one', async () => {
    const src = await source();
    await gql(t, src.owner.auth, CREATE, { s: src.url, i: MALARIA });
    const url = `${src.url}concepts/116128/`;
    const update = `mutation($u: String!, $i: ConceptInput!) { updateConcept(url: $u, input: $i) { concept { version datatype versionsCount } } }`;
    const same = await gql(t, src.owner.auth, update, { u: url, i: { datatype: 'N/A' } });
    expect(errorCode(same)).toBe('UNCHANGED');
    const edited = dataOf(
      await gql(t, src.owner.auth, update, { u: url, i: { datatype: 'Coded' } }),
    );
    expect(edited.updateConcept.concept).toMatchObject({ datatype: 'Coded', versionsCount: 2 });
    const read = `query($u: String!) { concept(url: $u) { datatype isLatestVersion versions { totalCount items { version datatype } } } }`;
    const now = dataOf(await gql(t, undefined, read, { u: url }));
    expect(now.concept.datatype).toBe('Coded');
    expect(now.concept.versions.items.map((v: { datatype: string }) => v.datatype)).toEqual([
      'Coded',
      'N/A',
    ]);
    const first = now.concept.versions.items[1] as { version: string };
    const old = dataOf(await gql(t, undefined, read, { u: `${url}${first.version}/` }));
    expect([old.concept.datatype, old.concept.isLatestVersion]).toEqual(['N/A', false]);
  });

  it('retireConcept and reactivateConcept flip retired with new versions', async () => {
    const src = await source();
    await gql(t, src.owner.auth, CREATE, { s: src.url, i: MALARIA });
    const url = `${src.url}concepts/116128/`;
    const retired = dataOf(
      await gql(
        t,
        src.owner.auth,
        `mutation($u: String!) { retireConcept(url: $u) { concept { retired } } }`,
        {
          u: url,
        },
      ),
    );
    expect(retired.retireConcept.concept.retired).toBe(true);
    const again = await gql(
      t,
      src.owner.auth,
      `mutation($u: String!) { retireConcept(url: $u) { concept { retired } } }`,
      { u: url },
    );
    expect(errorCode(again)).toBe('INVALID');
    const back = dataOf(
      await gql(
        t,
        src.owner.auth,
        `mutation($u: String!) { reactivateConcept(url: $u) { concept { retired versionsCount } } }`,
        { u: url },
      ),
    );
    expect(back.reactivateConcept.concept).toEqual({ retired: false, versionsCount: 3 });
    const read = `query($u: String!) { concept(url: $u) { retired versions { items { retired } } } }`;
    expect(dataOf(await gql(t, undefined, read, { u: url })).concept).toEqual({
      retired: false,
      versions: { items: [{ retired: false }, { retired: true }, { retired: false }] },
    });
  });

  it('Source.concepts lists as of the version the source was read at', async () => {
    const src = await source();
    await gql(t, src.owner.auth, CREATE, { s: src.url, i: MALARIA });
    await createVersion(t, src.url, src.owner, 'v1');
    await gql(t, src.owner.auth, CREATE, { s: src.url, i: { ...MALARIA, id: 'later' } });
    const q = `query($u: String!) { source(url: $u) { concepts { totalCount items { id source { version } } } } }`;
    const head = dataOf(await gql(t, undefined, q, { u: src.url }));
    const v1 = dataOf(await gql(t, undefined, q, { u: `${src.url}v1/` }));
    expect(head.source.concepts.totalCount).toBe(2);
    expect(v1.source.concepts.items).toEqual([{ id: '116128', source: { version: 'v1' } }]);
  });

  it('concepts(source, q, conceptClass) searches and filters', async () => {
    const src = await source();
    await gql(t, src.owner.auth, CREATE, { s: src.url, i: MALARIA });
    await gql(t, src.owner.auth, CREATE, {
      s: src.url,
      i: { id: 'F1', conceptClass: 'Symptom', names: [{ name: 'Fièvre', locale: 'fr' }] },
    });
    const q = `query($s: String!, $q: String, $c: [String!]) { concepts(source: $s, q: $q, conceptClass: $c) { totalCount items { id } } }`;
    expect(dataOf(await gql(t, undefined, q, { s: src.url, q: 'fievre' })).concepts.items).toEqual([
      { id: 'F1' },
    ]);
    expect(
      dataOf(await gql(t, undefined, q, { s: src.url, c: ['Diagnosis'] })).concepts.items,
    ).toEqual([{ id: '116128' }]);
  });

  it('the SQL statements of a concept list with nested fields do not grow with the number of concepts', async () => {
    const counts: number[] = [];
    for (const size of [5, 60]) {
      const src = await source();
      for (let i = 0; i < size; i += 1) {
        await createConcept(t, src.url, src.owner, {
          id: `C${i}`,
          concept_class: 'Misc',
          names: [{ name: `Name ${i}`, locale: 'en' }],
        });
      }
      const q = `query($s: String!) { concepts(source: $s, limit: 100) { totalCount items { ${CONCEPT_FIELDS} source { id versionsCount activeConcepts } } } }`;
      t.queries.count = 0;
      const data = dataOf(await gql(t, undefined, q, { s: src.url }));
      expect(data.concepts.items).toHaveLength(size);
      counts.push(t.queries.count);
    }
    expect(counts[1]).toBe(counts[0]);
  });
});

describe('the concept shorthand', () => {
  it('concept(url) accepts org:source:concept and its versioned forms', async () => {
    const owner = await createUser(t);
    const org = await createOrg(t, owner);
    await createRepo(t, `/orgs/${org.id}`, owner, { id: 'S', name: 'S' });
    await gql(t, owner.auth, CREATE, { s: `/orgs/${org.id}/sources/S/`, i: MALARIA });
    await createVersion(t, `/orgs/${org.id}/sources/S/`, owner, 'v1');
    await request(t.app)
      .patch(`/orgs/${org.id}/sources/S/concepts/116128/`)
      .set('Authorization', owner.auth)
      .send({ datatype: 'Coded' });
    const q = `query($u: String!) { concept(url: $u) { datatype version } }`;
    const head = dataOf(await gql(t, undefined, q, { u: `${org.id}:S:116128` }));
    const old = dataOf(await gql(t, undefined, q, { u: `${org.id}:S[v1]:116128` }));
    expect(head.concept.datatype).toBe('Coded');
    expect(old.concept.datatype).toBe('N/A');
    const byVersion = dataOf(
      await gql(t, undefined, q, { u: `${org.id}:S:116128[${old.concept.version}]` }),
    );
    expect(byVersion.concept.datatype).toBe('N/A');
    expect(errorCode(await gql(t, undefined, q, { u: `${org.id}:S` }))).toBe('INVALID');
  });
});

describe('concept(url) reads a concept as the REST detail does', () => {
  it('with its mappings and their ends, seen fresh after an edit', async () => {
    const src = await source();
    await gql(t, src.owner.auth, CREATE, { s: src.url, i: MALARIA });
    await gql(t, src.owner.auth, CREATE, {
      s: src.url,
      i: { ...MALARIA, id: 'B', names: [{ name: 'Bee', locale: 'en' }] },
    });
    await createMapping(t, src.url, src.owner, {
      map_type: 'SAME-AS',
      from_concept_url: `${src.url}concepts/116128/`,
      to_concept_url: `${src.url}concepts/B/`,
    });
    const q = `query($u: String!) { concept(url: $u) { versionsCount mappings { mapType toConcept { id displayName } } } }`;
    interface Read {
      versionsCount: number;
      mappings: Array<{ mapType: string; toConcept: { id: string; displayName: string } | null }>;
    }
    const read = async (): Promise<Read> =>
      dataOf(await gql(t, undefined, q, { u: `${src.url}concepts/116128/` })).concept as Read;
    expect(await read()).toEqual({
      versionsCount: 1,
      mappings: [{ mapType: 'SAME-AS', toConcept: { id: 'B', displayName: 'Bee' } }],
    });
    await request(t.app)
      .patch(`${src.url}concepts/B/`)
      .set('Authorization', src.owner.auth)
      .send({ names: [{ name: 'Wasp', locale: 'en', locale_preferred: true }] });
    expect((await read()).mappings[0].toConcept?.displayName).toBe('Wasp');
  });

  it('answers NOT_FOUND, UNAUTHENTICATED and FORBIDDEN for unknown and private paths', async () => {
    const { org, admin, member } = await orgWithPeople(t, { public_access: 'None' });
    const url = `/orgs/${org.id}/sources/P/`;
    await createRepo(t, `/orgs/${org.id}`, admin, { id: 'P', name: 'P', public_access: 'None' });
    await gql(t, admin.auth, CREATE, { s: url, i: MALARIA });
    const q = `query($u: String!) { concept(url: $u) { id } }`;
    const read = (auth: string | undefined, u: string) => gql(t, auth, q, { u });
    expect(errorCode(await read(undefined, `${url}concepts/116128/`))).toBe('UNAUTHENTICATED');
    expect(errorCode(await read((await createUser(t)).auth, `${url}concepts/116128/`))).toBe(
      'FORBIDDEN',
    );
    expect(dataOf(await read(member.auth, `${url}concepts/116128/`)).concept).toEqual({
      id: '116128',
    });
    expect(errorCode(await read(member.auth, `${url}concepts/nope/`))).toBe('NOT_FOUND');
    expect(errorCode(await read(member.auth, `${url}v1/concepts/116128/`))).toBe('NOT_FOUND');
  });
});
