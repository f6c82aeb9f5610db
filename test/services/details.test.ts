import request from 'supertest';
import type { RepoRef } from '../../src/services';
import {
  contextOf,
  createOrg,
  createTestApp,
  createUser,
  uniqueId,
  type TestApp,
  type TestUser,
} from '../factories';
import { createConcept } from '../factories/content';

/** Detail read-models: what one service call answers for a detail request. */
let t: TestApp;
let owner: TestUser;
let outsider: TestUser;
let org: string;
let main: string;
let other: string;
let hidden: string;

const as = (caller: TestUser | 'anonymous' | 'admin') => contextOf(t, caller);

async function post(url: string, body: object): Promise<void> {
  const res = await request(t.app).post(url).set('Authorization', owner.auth).send(body);
  expect(res.status).toBe(201);
}

async function concept(source: string, id: string, name: string): Promise<void> {
  await createConcept(t, `/orgs/${org}/sources/${source}/`, owner, {
    id,
    concept_class: 'Diagnosis',
    names: [{ name, locale: 'en', locale_preferred: true, name_type: 'FULLY_SPECIFIED' }],
  });
}

const ref = (id: string): RepoRef => ({ owner: { type: 'org', id: org }, kind: 'source', id });

beforeAll(async () => {
  t = await createTestApp();
  [owner, outsider] = await Promise.all([createUser(t), createUser(t)]);
  org = (await createOrg(t, owner)).id;
  [main, other, hidden] = [uniqueId('main'), uniqueId('other'), uniqueId('hidden')];
  await post(`/orgs/${org}/sources/`, { id: main, name: main });
  await post(`/orgs/${org}/sources/`, { id: other, name: other });
  await post(`/orgs/${org}/sources/`, { id: hidden, name: hidden, public_access: 'None' });
  await concept(main, 'A', 'Anemia');
  await concept(main, 'B', 'Bronchitis');
  await concept(other, 'X', 'Xerosis');
  await concept(hidden, 'H', 'Hidden thing');
  const from = `/orgs/${org}/sources/${main}/concepts/A/`;
  for (const to of [
    `/orgs/${org}/sources/${main}/concepts/B/`,
    `/orgs/${org}/sources/${other}/concepts/X/`,
    `/orgs/${org}/sources/${hidden}/concepts/H/`,
  ]) {
    await post(`/orgs/${org}/sources/${main}/mappings/`, {
      map_type: 'SAME-AS',
      from_concept_url: from,
      to_concept_url: to,
    });
  }
  // An edit: the concept has two versions.
  const edited = await request(t.app)
    .patch(`/orgs/${org}/sources/${main}/concepts/A/`)
    .set('Authorization', owner.auth)
    .send({ datatype: 'Text' });
  expect(edited.status).toBe(200);
});
afterAll(async () => t.close());

describe('concept detail', () => {
  it('answers the concept, its version count and its mappings with their ends', async () => {
    const detail = await t.services.concepts.detail(await as(owner), ref(main), 'A', undefined, {
      mappings: true,
      inverseMappings: true,
    });
    expect(detail.view.version.datatype).toBe('Text');
    expect(detail.versionCount).toBe(2);
    expect(detail.inverseMappings).toEqual([]);
    const ends = detail.mappings!.map(({ ends }) => [
      ends.to.source?.repo.mnemonic ?? null,
      ends.to.conceptName,
    ]);
    expect(ends).toEqual(
      expect.arrayContaining([
        [main, 'Bronchitis'],
        [other, 'Xerosis'],
        [hidden, 'Hidden thing'],
      ]),
    );
    expect(detail.mappings!.every(({ ends }) => ends.from.conceptName === 'Anemia')).toBe(true);
  });

  it('hides the ends in sources the caller may not see', async () => {
    const detail = await t.services.concepts.detail(await as(outsider), ref(main), 'A', undefined, {
      mappings: true,
    });
    const hiddenEnd = detail.mappings!.find((m) => m.view.version.toConceptCode === 'H')!;
    expect(hiddenEnd.ends.to).toEqual({ source: null, conceptName: null });
    const otherEnd = detail.mappings!.find((m) => m.view.version.toConceptCode === 'X')!;
    expect(otherEnd.ends.to.source?.repo.mnemonic).toBe(other);
  });

  it('leaves the mappings out unless asked', async () => {
    const detail = await t.services.concepts.detail(await as('anonymous'), ref(main), 'A');
    expect(detail.mappings).toBeNull();
    expect(detail.inverseMappings).toBeNull();
  });

  it('costs one statement, mappings and ends included', async () => {
    const ctx = await as('anonymous');
    t.queries.count = 0;
    await t.services.concepts.detail(ctx, ref(main), 'A', undefined, { mappings: true });
    expect(t.queries.count).toBe(1);
  });

  it('answers a REST detail equal to the mapping details of the same mappings', async () => {
    const res = await request(t.app).get(`/orgs/${org}/sources/${main}/concepts/A/`);
    expect(res.status).toBe(200);
    expect(res.body.versions).toBe(2);
    const mapping = (res.body.mappings as Array<Record<string, unknown>>).find(
      (m) => m.to_concept_code === 'X',
    )!;
    const alone = await request(t.app).get(mapping.url as string);
    expect(alone.status).toBe(200);
    for (const field of Object.keys(mapping)) expect(alone.body[field]).toEqual(mapping[field]);
  });
});

describe('mapping and repository details', () => {
  it('answers a mapping with its ends and version count in one call', async () => {
    const page = await t.services.mappings.list(await as(owner), ref(main), {
      limit: 10,
      offset: 0,
      filters: {},
    });
    const id = page.items.find((m) => m.view.version.toConceptCode === 'X')!.view.mapping.mnemonic;
    const detail = await t.services.mappings.detail(await as(owner), ref(main), id);
    expect(detail.versionCount).toBe(1);
    expect(detail.ends.from.conceptName).toBe('Anemia');
    expect(detail.ends.to.conceptName).toBe('Xerosis');
  });

  it('answers a repository with its counts', async () => {
    const detail = await t.services.repositories.detail(await as('anonymous'), ref(main));
    expect(detail.view.repo.mnemonic).toBe(main);
    expect(detail.counts).toMatchObject({ versions: 1, activeConcepts: 2, activeMappings: 3 });
  });
});
