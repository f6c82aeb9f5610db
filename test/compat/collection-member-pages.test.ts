import request from 'supertest';
import { createOrg, createTestApp, createUser, type TestApp, type TestUser } from '../factories';
import { createCollection, createConcept, createSource } from '../factories/content';

/**
 * A collection's concept pages in id order walk the members' own sort keys and count without
 * reading every member's version: followed and pinned members, retired either way, members of a
 * source the caller may not see, paging and both directions must answer as any other list does.
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
