import request from 'supertest';
import { createOrg, createTestApp, createUser, type TestApp, type TestUser } from '../factories';
import {
  createCollection,
  createConcept,
  createMappingBetween,
  createSource,
} from '../factories/content';

/**
 * A collection's concept pages in id order walk the members' own sort keys and count without
 * reading every member's version: followed and pinned members, retired either way, members of a
 * source the caller may not see, paging and both directions must answer as any other list does.
 * Filtered pages (and mapping pages) find the followed members' versions through their sources'
 * lists instead (`memberVersionRowsSql`), and must agree.
 */
let t: TestApp;
let owner: TestUser;
let outsider: TestUser;
let org: string;
let collection: string;

const auth = (user: TestUser) => ({ Authorization: user.auth });

async function concept(source: string, id: string): Promise<string> {
  return (await createConcept(t, source, owner, { id })).version_url as string;
}

async function page(
  query: string,
  as?: TestUser,
): Promise<{ ids: string[]; found: number; versions: string[] }> {
  const req = request(t.app).get(`${collection}concepts/?${query}`);
  const res = await (as ? req.set(auth(as)) : req).expect(200);
  const body = res.body as Array<{ id: string; version: string }>;
  return {
    ids: body.map((c) => c.id),
    found: Number(res.headers.num_found),
    versions: body.map((c) => c.version),
  };
}

beforeAll(async () => {
  t = await createTestApp();
  [owner, outsider] = await Promise.all([createUser(t), createUser(t)]);
  org = (await createOrg(t, owner)).id;
  const open = (await createSource(t, { id: 'OPEN', name: 'Open' }, { owner, org })).url;
  const closed = (
    await createSource(t, { id: 'CLOSED', name: 'Closed', public_access: 'None' }, { owner, org })
  ).url;
  collection = (await createCollection(t, {}, { owner, org })).url;
  // Followed: A, B (retired later), D; pinned: P1 at its first version (retired later at HEAD:
  // the pinned version is not retired), R at a retired version; hidden: H1, H2 in CLOSED.
  for (const id of ['A', 'B', 'D', 'F', 'G']) await concept(open, id);
  const p1 = await concept(open, 'P1');
  await concept(open, 'R');
  await request(t.app).delete(`${open}concepts/R/`).set(auth(owner)).expect(204);
  const retiredR = (
    (await request(t.app).get(`${open}concepts/R/`).expect(200)).body as { version_url: string }
  ).version_url;
  for (const id of ['H1', 'H2']) await concept(closed, id);
  const expressions = [
    `${open}concepts/A/`,
    `${open}concepts/B/`,
    `${open}concepts/D/`,
    `${open}concepts/F/`,
    `${open}concepts/G/`,
    p1,
    retiredR,
    `${closed}concepts/H1/`,
    `${closed}concepts/H2/`,
  ];
  await request(t.app)
    .put(`${collection}references/`)
    .set(auth(owner))
    .send({ data: { expressions } })
    .expect(200);
  await request(t.app).delete(`${open}concepts/B/`).set(auth(owner)).expect(204);
  await request(t.app).delete(`${open}concepts/P1/`).set(auth(owner)).expect(204);
});
afterAll(async () => t.close());

describe('a collection concept page in id order', () => {
  it('lists active members in id order, followed at HEAD and pinned at their version', async () => {
    const { ids, found } = await page('limit=0', owner);
    expect(ids).toEqual(['A', 'D', 'F', 'G', 'H1', 'H2', 'P1']);
    expect(found).toBe(7);
  });

  it('includes retired members on request: followed ones retired at HEAD, pinned at a retired version', async () => {
    const { ids, found } = await page('limit=0&includeRetired=true', owner);
    expect(ids).toEqual(['A', 'B', 'D', 'F', 'G', 'H1', 'H2', 'P1', 'R']);
    expect(found).toBe(9);
  });

  it('shows a pinned member at its pinned version, not at HEAD', async () => {
    const head = (
      (await request(t.app).get(`/orgs/${org}/sources/OPEN/concepts/P1/`).expect(200)).body as {
        version: string;
      }
    ).version;
    const { ids, versions } = await page('limit=0', owner);
    expect(versions[ids.indexOf('P1')]).not.toBe(head);
  });

  it('leaves out members of sources the caller may not see, in the count too', async () => {
    for (const as of [outsider, undefined]) {
      const { ids, found } = await page('limit=0', as);
      expect(ids).toEqual(['A', 'D', 'F', 'G', 'P1']);
      expect(found).toBe(5);
    }
  });

  it('pages and sorts both ways', async () => {
    const first = await page('limit=2&page=1', owner);
    const second = await page('limit=2&page=2', owner);
    const last = await page('limit=2&page=4', owner);
    expect([first.ids, second.ids, last.ids]).toEqual([['A', 'D'], ['F', 'G'], ['P1']]);
    expect(first.found).toBe(7);
    expect((await page('limit=3&sortDesc=id', owner)).ids).toEqual(['P1', 'H2', 'H1']);
    expect((await page('limit=3&sortAsc=id', owner)).ids).toEqual(['A', 'D', 'F']);
  });

  it('counts the collection’s active concepts the same way in its detail', async () => {
    const detail = await request(t.app).get(collection).set(auth(owner)).expect(200);
    expect(detail.body.active_concepts).toBe(7);
    const seen = await request(t.app).get(collection).set(auth(outsider)).expect(200);
    expect(seen.body.active_concepts).toBe(5);
  });
});

describe('a filtered collection concept page', () => {
  // Filtered, the members' versions are found another way (a source's list indexes merged with
  // the members' order): a filter every member passes must list what the plain page lists.
  it.each(['limit=0', 'limit=0&includeRetired=true', 'limit=2&page=2', 'limit=3&sortDesc=id'])(
    'with a filter every member passes, %s lists what the plain page lists',
    async (query) => {
      for (const as of [owner, outsider, undefined]) {
        expect(await page(`${query}&conceptClass=Misc`, as)).toEqual(await page(query, as));
      }
    },
  );

  it('filters a followed member by its current version', async () => {
    await request(t.app)
      .patch(`/orgs/${org}/sources/OPEN/concepts/A/`)
      .set(auth(owner))
      .send({ concept_class: 'Drug' })
      .expect(200);
    expect(await page('limit=0&conceptClass=Drug', owner)).toMatchObject({
      ids: ['A'],
      found: 1,
    });
    expect((await page('limit=0&conceptClass=Misc', owner)).ids).toEqual([
      'D',
      'F',
      'G',
      'H1',
      'H2',
      'P1',
    ]);
  });
});

describe('a collection mapping page', () => {
  let mappings: string;
  const listed = async (query: string) => {
    const res = await request(t.app).get(`${mappings}?${query}`).set(auth(owner)).expect(200);
    const body = res.body as Array<{ id: string; map_type: string; version_url: string }>;
    return { found: Number(res.headers.num_found), rows: body.map((m) => [m.id, m.map_type]) };
  };

  beforeAll(async () => {
    const source = (await createSource(t, { id: 'MAPS', name: 'Maps' }, { owner, org })).url;
    for (const id of ['X', 'Y']) await concept(source, id);
    const end = (id: string) => `${source}concepts/${id}/`;
    await createMappingBetween(t, source, owner, ['M1', 'SAME-AS', end('X'), end('Y')]);
    const m2 = await createMappingBetween(t, source, owner, ['M2', 'SAME-AS', end('Y'), end('X')]);
    const holder = (await createCollection(t, { id: 'MAPPED' }, { owner, org })).url;
    mappings = `${holder}mappings/`;
    await request(t.app)
      .put(`${holder}references/`)
      .set(auth(owner))
      .send({ data: { expressions: [`${source}mappings/M1/`, m2.version_url] } })
      .expect(200);
    // At HEAD both become NARROWER-THAN: M1 follows, M2 stays at its pinned version.
    for (const id of ['M1', 'M2']) {
      await request(t.app)
        .patch(`${source}mappings/${id}/`)
        .set(auth(owner))
        .send({ map_type: 'NARROWER-THAN' })
        .expect(200);
    }
  });

  it('shows a followed member at HEAD and a pinned one at its version, filtered or not', async () => {
    expect(await listed('limit=0')).toEqual({
      found: 2,
      rows: [
        ['M1', 'NARROWER-THAN'],
        ['M2', 'SAME-AS'],
      ],
    });
    expect(await listed('limit=0&mapType=SAME-AS')).toEqual({
      found: 1,
      rows: [['M2', 'SAME-AS']],
    });
    expect(await listed('limit=0&mapType=NARROWER-THAN')).toEqual({
      found: 1,
      rows: [['M1', 'NARROWER-THAN']],
    });
  });
});
