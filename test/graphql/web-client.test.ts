import request from 'supertest';
import { addMember, createOrg, createTestApp, createUser, type TestApp } from '../factories';
import { createConcept, createRepo, createVersion } from '../factories/content';
import { errorCode, gql } from './gql';

/** Issue 15 through GraphQL: what the web client reads over REST, as data. */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function world() {
  const owner = await createUser(t, { first_name: 'Grace', last_name: 'Hopper' });
  const member = await createUser(t);
  const org = (await createOrg(t, owner)).id;
  await addMember(t, org, owner, member);
  const repo = await createRepo(t, `/orgs/${org}`, owner, { id: 'S' });
  await createConcept(t, repo.url, owner, { id: 'A', concept_class: 'Diagnosis' });
  await createVersion(t, repo.url, owner, 'v1', { released: true });
  return { owner, member, org, repo };
}

describe('users', () => {
  it('carry firstName, lastName and isStaff, set on create and update', async () => {
    const { owner } = await world();
    const me = await gql(t, owner.auth, '{ me { firstName lastName isStaff authGroups } }');
    expect(me.data.me).toEqual({
      firstName: 'Grace',
      lastName: 'Hopper',
      isStaff: false,
      authGroups: [],
    });
    const updated = await gql(
      t,
      owner.auth,
      'mutation { updateUser(input: { firstName: "Amazing", lastName: null }) { firstName lastName } }',
    );
    expect(updated.data.updateUser).toEqual({ firstName: 'Amazing', lastName: null });
  });
});

describe('pins, follows and events', () => {
  it('pins, moves and unpins as REST does, and shows pins on the org', async () => {
    const { member, org, repo, outsider } = { ...(await world()), outsider: await createUser(t) };
    const uuid = String(repo.body.uuid);
    const made = await gql(
      t,
      member.auth,
      `mutation($o: String!, $id: ID!) { pin(owner: $o, resourceType: "Source", resourceId: $id) { id order repository { id url } } }`,
      { o: `/orgs/${org}/`, id: uuid },
    );
    expect(made.data.pin).toMatchObject({ order: 0, repository: { id: 'S', url: repo.url } });
    const refused = await gql(
      t,
      outsider.auth,
      `mutation($o: String!, $id: ID!) { pin(owner: $o, resourceType: "Source", resourceId: $id) { id } }`,
      { o: `/orgs/${org}/`, id: uuid },
    );
    expect(errorCode(refused)).toBe('FORBIDDEN');
    const anonymous = await gql(
      t,
      undefined,
      `mutation { unpin(owner: "/orgs/${org}/", id: "1") }`,
    );
    expect(errorCode(anonymous)).toBe('UNAUTHENTICATED');
    const read = await gql(
      t,
      undefined,
      `{ org(id: "${org}") { pins { id order repository { id } } } }`,
    );
    expect(read.data.org.pins).toEqual([
      { id: made.data.pin.id, order: 0, repository: { id: 'S' } },
    ]);
    const bad = await gql(
      t,
      member.auth,
      `mutation { movePin(owner: "/orgs/${org}/", id: "${made.data.pin.id}", order: 5) { id } }`,
    );
    expect(errorCode(bad)).toBe('INVALID');
    const gone = await gql(
      t,
      member.auth,
      `mutation { unpin(owner: "/orgs/${org}/", id: "${made.data.pin.id}") }`,
    );
    expect(gone.data.unpin).toBe(true);
    expect((await gql(t, undefined, `{ pins(owner: "/orgs/${org}/") { id } }`)).data.pins).toEqual(
      [],
    );
  });

  it("follows, lists follows and reads a user's events by scope", async () => {
    const { member, org, repo } = await world();
    const fan = await createUser(t);
    const follow = await gql(
      t,
      fan.auth,
      `mutation { follow(url: "${repo.url}") { id type object } }`,
    );
    expect(follow.errors).toBeUndefined();
    expect(follow.data.follow).toMatchObject({ type: 'Source', object: { url: repo.url } });
    const list = await gql(t, fan.auth, '{ following { id } me { following { type } } }');
    expect(list.data.following).toHaveLength(1);
    expect(list.data.me.following).toEqual([{ type: 'Source' }]);
    const events = await gql(
      t,
      member.auth,
      `{ events(username: "${member.username}", scopes: ["orgs"], limit: 2) { totalCount items { eventType referencedObject } } }`,
    );
    // The org's creation, the member joining, S, v1 created and released, and fan following S.
    expect(events.data.events.totalCount).toBe(6);
    expect(events.data.events.items.map((e: { eventType: string }) => e.eventType)).toEqual([
      'Followed',
      'Released',
    ]);
    const guest = await gql(
      t,
      undefined,
      '{ events(limit: 100) { items { eventType referencedObject } } }',
    );
    expect(
      guest.data.events.items.some(
        (e: { referencedObject: { version_url?: string } }) =>
          e.referencedObject.version_url === `/orgs/${org}/sources/S/v1/`,
      ),
    ).toBe(true);
    const badScope = await gql(
      t,
      member.auth,
      `{ events(username: "${member.username}", scopes: ["x"]) { totalCount } }`,
    );
    expect(errorCode(badScope)).toBe('INVALID');
    const unfollow = await gql(
      t,
      fan.auth,
      `mutation { unfollow(id: "${follow.data.follow.id}") }`,
    );
    expect(unfollow.data.unfollow).toBe(true);
  });
});

describe('summaries, references and the API token', () => {
  it('answers a repository summary, verbose with its distributions', async () => {
    const { repo } = await world();
    const res = await gql(
      t,
      undefined,
      `{ repositorySummary(url: "${repo.url}v1/", verbose: true) { activeConcepts activeMappings versions { total released } content } }`,
    );
    expect(res.data.repositorySummary).toMatchObject({
      activeConcepts: 1,
      activeMappings: 0,
      versions: { total: 1, released: 1 },
      content: { concepts: { conceptClass: [['Diagnosis', 1]] } },
    });
  });

  it('gives references what they resolved to', async () => {
    const { owner, org, repo } = await world();
    const c = await createRepo(t, `/orgs/${org}`, owner, { id: 'C' }, 'collections');
    await request(t.app)
      .put(`${c.url}references/`)
      .set('Authorization', owner.auth)
      .send({ data: { expressions: [`${repo.url}concepts/A/`] } })
      .expect(200);
    const res = await gql(
      t,
      owner.auth,
      `{ collection(url: "${c.url}") { ... on Collection { references { items { resolvedConcepts resolvedMappings lastResolvedAt } } } } }`,
    );
    expect(res.data.collection.references.items[0]).toMatchObject({
      resolvedConcepts: 1,
      resolvedMappings: 0,
    });
  });

  it('issues an API token that works, to signed-in callers only', async () => {
    const user = await createUser(t);
    const res = await gql(t, user.auth, 'mutation { apiToken }');
    const me = await request(t.app)
      .get('/user/')
      .set('Authorization', `Token ${res.data.apiToken}`);
    expect(me.body.username).toBe(user.username);
    expect(errorCode(await gql(t, undefined, 'mutation { apiToken }'))).toBe('UNAUTHENTICATED');
  });
});
