import request from 'supertest';
import {
  createOrg,
  createTestApp,
  createUser,
  tasksSettled,
  type TestApp,
  type TestUser,
} from '../factories';
import { createConcept, createRepo, createVersion } from '../factories/content';
import { orgWithPeople } from '../factories/people';
import { errorCode, gql } from './gql';

/** Issue 15 through GraphQL: what the web client reads over REST, as data. */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function world() {
  const owner = await createUser(t, { first_name: 'Grace', last_name: 'Hopper' });
  const {
    org: { id: org },
    member,
  } = await orgWithPeople(t, {}, { admin: owner });
  const repo = await createRepo(t, `/orgs/${org}`, owner, { id: 'S' });
  await createConcept(t, repo.url, owner, { id: 'A', concept_class: 'Diagnosis' });
  await createVersion(t, repo.url, owner, 'v1', { released: true });
  return { owner, member, org, repo };
}

/** Concept B and mapping M1 (A SAME-AS B) in the source at `repoUrl`. */
async function addMapping(owner: TestUser, repoUrl: string): Promise<void> {
  await createConcept(t, repoUrl, owner, { id: 'B' });
  await request(t.app)
    .post(`${repoUrl}mappings/`)
    .set('Authorization', owner.auth)
    .send({
      id: 'M1',
      map_type: 'SAME-AS',
      from_concept_url: `${repoUrl}concepts/A/`,
      to_concept_url: `${repoUrl}concepts/B/`,
    })
    .expect(201);
}

/** Collection C of the org, holding concept A and mapping M1 of the source at `repoUrl`. */
async function collectionOfAM1(owner: TestUser, org: string, repoUrl: string) {
  const c = await createRepo(t, `/orgs/${org}`, owner, { id: 'C' }, 'collections');
  await request(t.app)
    .put(`${c.url}references/`)
    .set('Authorization', owner.auth)
    .send({ data: { expressions: [`${repoUrl}concepts/A/`, `${repoUrl}mappings/M1/`] } })
    .expect(200);
  return c;
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
      'mutation { updateUser(input: { firstName: "Amazing", lastName: null }) { user { firstName lastName } } }',
    );
    expect(updated.data.updateUser.user).toEqual({ firstName: 'Amazing', lastName: null });
  });
});

describe('pins, follows and events', () => {
  it('pins, moves and unpins as REST does, and shows pins on the org', async () => {
    const { member, org, repo, outsider } = { ...(await world()), outsider: await createUser(t) };
    const uuid = String(repo.body.uuid);
    const made = await gql(
      t,
      member.auth,
      `mutation($o: String!, $id: ID!) { pin(owner: $o, resourceType: "Source", resourceId: $id) { pin { id order resourceType repository { id url } } } }`,
      { o: `/orgs/${org}/`, id: uuid },
    );
    // `resourceType: "Source"` is deprecated (issue 28) and still pins; the pin answers the enum.
    expect(made.data.pin.pin).toMatchObject({
      order: 0,
      resourceType: 'SOURCE',
      repository: { id: 'S', url: repo.url },
    });
    const refused = await gql(
      t,
      outsider.auth,
      `mutation($o: String!, $id: ID!) { pin(owner: $o, kind: SOURCE, resourceId: $id) { pin { id } } }`,
      { o: `/orgs/${org}/`, id: uuid },
    );
    expect(errorCode(refused)).toBe('FORBIDDEN');
    const anonymous = await gql(
      t,
      undefined,
      `mutation { unpin(owner: "/orgs/${org}/", id: "1") { deletedId } }`,
    );
    expect(errorCode(anonymous)).toBe('UNAUTHENTICATED');
    const read = await gql(
      t,
      undefined,
      `{ org(id: "${org}") { pins { id order repository { id } } } }`,
    );
    expect(read.data.org.pins).toEqual([
      { id: made.data.pin.pin.id, order: 0, repository: { id: 'S' } },
    ]);
    const bad = await gql(
      t,
      member.auth,
      `mutation { movePin(owner: "/orgs/${org}/", id: "${made.data.pin.pin.id}", order: 5) { pin { id } } }`,
    );
    expect(errorCode(bad)).toBe('INVALID');
    const gone = await gql(
      t,
      member.auth,
      `mutation { unpin(owner: "/orgs/${org}/", id: "${made.data.pin.pin.id}") { deletedId } }`,
    );
    expect(gone.data.unpin.deletedId).toBeTruthy();
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
      `mutation { follow(url: "${repo.url}") { follow { id type object } } }`,
    );
    expect(follow.errors).toBeUndefined();
    expect(follow.data.follow.follow).toMatchObject({ type: 'Source', object: { url: repo.url } });
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
      `mutation { unfollow(id: "${follow.data.follow.follow.id}") { deletedId } }`,
    );
    expect(unfollow.data.unfollow.deletedId).toBeTruthy();
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
    const res = await gql(t, user.auth, 'mutation { apiToken { token } }');
    const me = await request(t.app)
      .get('/user/')
      .set('Authorization', `Token ${res.data.apiToken.token}`);
    expect(me.body.username).toBe(user.username);
    expect(errorCode(await gql(t, undefined, 'mutation { apiToken { token } }'))).toBe(
      'UNAUTHENTICATED',
    );
  });
});

describe("what the client's REST includes carry, as GraphQL fields", () => {
  /** A source with A (edited after v1), mapping M1 and v1; a collection C holding A, with c1. */
  async function history() {
    const { owner, org, repo } = await world();
    await addMapping(owner, repo.url);
    await createVersion(t, repo.url, owner, 'v2');
    const c = await collectionOfAM1(owner, org, repo.url);
    await createVersion(t, c.url, owner, 'c1');
    await request(t.app)
      .put(`${repo.url}concepts/A/`)
      .set('Authorization', owner.auth)
      .send({ names: [{ name: 'Renamed', locale: 'en', locale_preferred: true }] })
      .expect(200);
    return { owner, org, repo, c };
  }

  it("gives a collection version its default expansion's URL, as REST expansion_url", async () => {
    const { owner, c } = await history();
    for (const url of [c.url, `${c.url}c1/`]) {
      const res = await gql(
        t,
        owner.auth,
        `{ collection(url: "${url}") { ... on Collection { expansionUrl expansions { items { url } } } } }`,
      );
      const rest = await request(t.app).get(url).set('Authorization', owner.auth);
      expect(res.data.collection.expansionUrl).toBe(rest.body.expansion_url);
      expect(res.data.collection.expansions.items.map((e: { url: string }) => e.url)).toContain(
        rest.body.expansion_url,
      );
    }
  });

  it('gives every repository and version of a list its summary, verbose with the panel', async () => {
    const { owner, repo } = await history();
    const res = await gql(
      t,
      owner.auth,
      `{ source(url: "${repo.url}") { summary { activeConcepts activeMappings versions { total released } }
          versions(limit: 0) { items { version summary(verbose: true) { activeConcepts activeMappings versions { total released } content } } } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.source.summary).toEqual({
      activeConcepts: 2,
      activeMappings: 1,
      versions: { total: 2, released: 1 },
    });
    const byVersion = Object.fromEntries(
      res.data.source.versions.items.map((v: { version: string; summary: unknown }) => [
        v.version,
        v.summary,
      ]),
    );
    expect(byVersion.v1).toMatchObject({ activeConcepts: 1, activeMappings: 0 });
    expect(byVersion.v2).toMatchObject({
      activeConcepts: 2,
      activeMappings: 1,
      versions: { total: 2, released: 1 },
      content: { concepts: { active: 2 }, mappings: { mapType: [['SAME-AS', 1]] } },
    });
    const rest = await request(t.app)
      .get(`${repo.url}versions/?includeSummary=true`)
      .set('Authorization', owner.auth);
    for (const v of rest.body as Array<{ id: string; summary: Record<string, number> }>) {
      expect(byVersion[v.id]).toMatchObject({
        activeConcepts: v.summary.active_concepts,
        activeMappings: v.summary.active_mappings,
      });
    }
  });

  it('reads the summaries of a whole versions list in as many statements as of a short one', async () => {
    const { owner, repo } = await world();
    const count = async () => {
      t.queries.count = 0;
      const res = await gql(
        t,
        owner.auth,
        `{ source(url: "${repo.url}") { versions(limit: 0) { items { summary { versions { total } } } } } }`,
      );
      expect(res.errors).toBeUndefined();
      return t.queries.count;
    };
    await tasksSettled(t, owner.username);
    const few = await count();
    for (const id of ['v2', 'v3', 'v4', 'v5']) await createVersion(t, repo.url, owner, id);
    await tasksSettled(t, owner.username);
    expect(await count()).toBe(few);
  });

  it('lists the source and collection versions holding each concept and mapping version', async () => {
    const { owner, repo, c } = await history();
    const res = await gql(
      t,
      owner.auth,
      `{ concept(url: "${repo.url}concepts/A/") { versions { items { version sourceVersions collectionVersions } } }
         mapping(url: "${repo.url}mappings/M1/") { versions { items { sourceVersions collectionVersions } } } }`,
    );
    expect(res.errors).toBeUndefined();
    const [latest, first] = res.data.concept.versions.items;
    expect(latest).toMatchObject({ sourceVersions: [], collectionVersions: [] });
    expect(first).toMatchObject({
      sourceVersions: [`${repo.url}v1/`, `${repo.url}v2/`],
      collectionVersions: [`${c.url}c1/`],
    });
    expect(res.data.mapping.versions.items).toEqual([
      { sourceVersions: [`${repo.url}v2/`], collectionVersions: [`${c.url}c1/`] },
    ]);
    const rest = await request(t.app)
      .get(
        `${repo.url}concepts/A/versions/?includeSourceVersions=true&includeCollectionVersions=true`,
      )
      .set('Authorization', owner.auth);
    expect(
      rest.body.map((v: { source_versions: string[]; collection_versions: string[] }) => [
        v.source_versions,
        v.collection_versions,
      ]),
    ).toEqual(
      res.data.concept.versions.items.map(
        (v: { sourceVersions: string[]; collectionVersions: string[] }) => [
          v.sourceVersions,
          v.collectionVersions,
        ],
      ),
    );
  });

  it('leaves out collection versions the caller may not see', async () => {
    const { owner, repo } = await world();
    const hidden = await createUser(t);
    const privateOrg = (await createOrg(t, hidden, { public_access: 'None' })).id;
    const c = await createRepo(
      t,
      `/orgs/${privateOrg}`,
      hidden,
      { public_access: 'None' },
      'collections',
    );
    await request(t.app)
      .put(`${c.url}references/`)
      .set('Authorization', hidden.auth)
      .send({ data: { expressions: [`${repo.url}concepts/A/`] } })
      .expect(200);
    await createVersion(t, c.url, hidden, 'c1');
    const query = `{ concept(url: "${repo.url}concepts/A/") { collectionVersions } }`;
    expect((await gql(t, hidden.auth, query)).data.concept.collectionVersions).toEqual([
      `${c.url}c1/`,
    ]);
    expect((await gql(t, owner.auth, query)).data.concept.collectionVersions).toEqual([]);
    expect((await gql(t, undefined, query)).data.concept.collectionVersions).toEqual([]);
  });

  it("reaches the concept form's pick lists: the OCL lookup sources and the locales", async () => {
    await t.services.lookups.ensure();
    const res = await gql(
      t,
      undefined,
      `{ source(url: "/orgs/OCL/sources/Classes/") { concepts(limit: 0) { items { id displayName } } }
         locales { id locale displayName } }`,
    );
    expect(res.errors).toBeUndefined();
    const rest = await request(t.app).get('/orgs/OCL/sources/Classes/concepts/lookup/');
    expect(res.data.source.concepts.items.map((c: { id: string }) => c.id).sort()).toEqual(
      rest.body.map((c: { id: string }) => c.id).sort(),
    );
    expect(res.data.locales).toContainEqual(expect.objectContaining({ locale: 'fr' }));
  });
});

describe("a collection's member by id", () => {
  it('finds the concept and mapping the expansion holds, with the references that brought them in', async () => {
    const { owner, org, repo } = await world();
    await addMapping(owner, repo.url);
    const c = await collectionOfAM1(owner, org, repo.url);
    const res = await gql(
      t,
      owner.auth,
      `{ collection(url: "${c.url}") { ... on Collection {
          memberConcept(id: "A") { concept { id url } references { expression } }
          memberMapping(id: "M1") { mapping { id mapType } references { expression } } } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.collection.memberConcept).toEqual({
      concept: { id: 'A', url: `${repo.url}concepts/A/` },
      references: [{ expression: `${repo.url}concepts/A/` }],
    });
    expect(res.data.collection.memberMapping).toEqual({
      mapping: { id: 'M1', mapType: 'SAME-AS' },
      references: [{ expression: `${repo.url}mappings/M1/` }],
    });
    const missing = await gql(
      t,
      owner.auth,
      `{ collection(url: "${c.url}") { ... on Collection { memberConcept(id: "B") { concept { id } } } } }`,
    );
    expect(errorCode(missing)).toBe('NOT_FOUND');
  });
});
