import request from 'supertest';
import {
  addMember,
  createOrg,
  createTestApp,
  createUser,
  uniqueId,
  type TestApp,
  type TestUser,
} from '../factories';
import {
  createCollection,
  createConcept,
  createMappingBetween,
  createRepo,
  createSource,
  createVersion,
} from '../factories/content';
import { as } from '../factories/http';

/** What oclweb3 reads from us, page by page (issue 15 parts 1, 2 and 5). */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/** An org with an administrator, a plain member and an outsider. */
async function people(publicAccess: 'View' | 'None' = 'View') {
  const owner = await createUser(t);
  const member = await createUser(t);
  const outsider = await createUser(t);
  const org = (await createOrg(t, owner, { public_access: publicAccess })).id;
  await addMember(t, org, owner, member);
  return { org, owner, member, outsider };
}

describe('users: first_name, last_name, is_staff and the include… parameters', () => {
  it('accepts first_name and last_name on create and on edit, and shows them', async () => {
    const user = await createUser(t, { first_name: 'Ada', last_name: 'Lovelace' });
    const read = await request(t.app).get(`/users/${user.username}/`);
    expect(read.body).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace', is_staff: false });
    const edit = await request(t.app)
      .put(`/users/${user.username}/`)
      .set(as(user))
      .send({ first_name: 'Augusta', last_name: null });
    expect(edit.status).toBe(200);
    expect(edit.body).toMatchObject({
      first_name: 'Augusta',
      last_name: null,
      name: `Name of ${user.username}`,
    });
  });

  it('refuses a first_name that is not a string with 400 and changes nothing', async () => {
    const user = await createUser(t, { first_name: 'Ada' });
    const res = await request(t.app)
      .put('/user/')
      .set(as(user))
      .send({ first_name: 42, name: 'New' });
    expect(res.status).toBe(400);
    expect(res.body.errors.first_name).toBeDefined();
    const read = await request(t.app).get('/user/').set(as(user));
    expect(read.body).toMatchObject({ first_name: 'Ada', name: `Name of ${user.username}` });
  });

  it("answers the sign-in request with the user's orgs, auth groups, pins, follows and is_staff", async () => {
    const { org, member } = await people('None');
    const res = await request(t.app)
      .get(
        '/user/?includeSubscribedOrgs=true&includeAuthGroups=true&includePins=true&includeFollowing=true',
      )
      .set(as(member));
    expect(res.status).toBe(200);
    expect(res.body.subscribed_orgs).toEqual([
      { id: org, name: `Org ${org}`, url: `/orgs/${org}/` },
    ]);
    expect(res.body).toMatchObject({ auth_groups: [], pins: [], following: [], is_staff: false });
    const admin = await request(t.app).get('/user/').set('Authorization', t.admin);
    expect(admin.body).toMatchObject({ is_staff: true, is_superuser: true });
    expect(admin.body.subscribed_orgs).toBeUndefined();
    expect(admin.body.pins).toBeUndefined();
  });

  it("shows another user's private orgs only to those who may see them", async () => {
    const { org, member, outsider } = await people('None');
    const path = `/users/${member.username}/?includeSubscribedOrgs=true`;
    const outside = await request(t.app).get(path).set(as(outsider));
    expect(outside.body.subscribed_orgs).toEqual([]);
    const anonymous = await request(t.app).get(path);
    expect(anonymous.body.subscribed_orgs).toEqual([]);
    const admin = await request(t.app).get(path).set('Authorization', t.admin);
    expect(admin.body.subscribed_orgs.map((o: { id: string }) => o.id)).toEqual([org]);
  });
});

describe("org members' rights: the spec's, whatever the client's menus offer (docs/rights.md)", () => {
  it('refuses a plain member what the menus offer: creating, editing, versioning, adding members (403), and nothing changes', async () => {
    const { org, owner, member, outsider } = await people();
    const create = await request(t.app)
      .post(`/orgs/${org}/sources/`)
      .set(as(member))
      .send({ id: 'MEMBERS', name: 'n' });
    expect(create.status).toBe(403);
    expect((await request(t.app).get(`/orgs/${org}/sources/MEMBERS/`)).status).toBe(404);
    const repo = await createRepo(t, `/orgs/${org}`, owner, { id: 'OWNED' });
    const edit = await request(t.app)
      .put(repo.url)
      .set(as(member))
      .send({ description: 'by a member' });
    expect(edit.status).toBe(403);
    const version = await request(t.app)
      .post(`${repo.url}versions/`)
      .set(as(member))
      .send({ id: 'v1' });
    expect(version.status).toBe(403);
    expect((await request(t.app).get(`${repo.url}v1/`)).status).toBe(404);
    const add = await request(t.app)
      .put(`/orgs/${org}/members/${outsider.username}/`)
      .set(as(member));
    expect(add.status).toBe(403);
    const check = await request(t.app)
      .get(`/orgs/${org}/members/${outsider.username}/`)
      .set(as(member));
    expect(check.status).toBe(404);
  });

  it('keeps the administrator role with administrators', async () => {
    const { org, owner, member, outsider } = await people();
    await addMember(t, org, owner, outsider);
    const promote = await request(t.app)
      .put(`/orgs/${org}/members/${outsider.username}/`)
      .set(as(member))
      .send({ role: 'admin' });
    expect(promote.status).toBe(403);
    const removeAdmin = await request(t.app)
      .delete(`/orgs/${org}/members/${owner.username}/`)
      .set(as(member));
    expect(removeAdmin.status).toBe(403);
    // Re-adding an administrator without a role keeps their role.
    const readd = await request(t.app)
      .put(`/orgs/${org}/members/${owner.username}/`)
      .set(as(owner));
    expect(readd.status).toBe(204);
    const demote = await request(t.app)
      .put(`/orgs/${org}/members/${outsider.username}/`)
      .set(as(owner))
      .send({ role: 'admin' });
    expect(demote.status).toBe(204);
    const removeMember = await request(t.app)
      .delete(`/orgs/${org}/members/${member.username}/`)
      .set(as(outsider));
    expect(removeMember.status).toBe(204);
  });

  it('refuses non-members: 403 signed in, 401 anonymous, and nothing is created', async () => {
    const { org, owner, outsider } = await people();
    const repo = await createRepo(t, `/orgs/${org}`, owner, { id: 'KEEP' });
    const create = await request(t.app)
      .post(`/orgs/${org}/sources/`)
      .set(as(outsider))
      .send({ id: 'NOPE', name: 'n' });
    expect(create.status).toBe(403);
    expect(
      (await request(t.app).post(`/orgs/${org}/sources/`).send({ id: 'NOPE', name: 'n' })).status,
    ).toBe(401);
    expect((await request(t.app).put(repo.url).set(as(outsider)).send({ name: 'x' })).status).toBe(
      403,
    );
    expect(
      (await request(t.app).put(`/orgs/${org}/members/${outsider.username}/`).set(as(outsider)))
        .status,
    ).toBe(403);
    expect((await request(t.app).get(`/orgs/${org}/sources/NOPE/`)).status).toBe(404);
  });
});

describe('collections: expansion_url, references results, includeSummary', () => {
  async function world() {
    const s = await createSource(t);
    const c = await createCollection(t, {}, { owner: s.owner, org: s.org });
    for (const id of ['A', 'B']) await createConcept(t, s.url, s.owner, { id });
    await createMappingBetween(t, s.url, s.owner, [
      'M1',
      'SAME-AS',
      `${s.url}concepts/A/`,
      `${s.url}concepts/B/`,
    ]);
    const add = await request(t.app)
      .put(`${c.url}references/`)
      .set(as(s.owner))
      .send({ data: { expressions: [`${s.url}concepts/A/`, `${s.url}mappings/M1/`] } });
    expect(add.status).toBe(200);
    return { s, c };
  }

  it('gives HEAD and each version the URL of its default expansion, which the expansions list holds', async () => {
    const { s, c } = await world();
    const head = await request(t.app).get(c.url).set(as(s.owner));
    expect(head.body.expansion_url).toBe(`${c.url}HEAD/expansions/autoexpand-HEAD/`);
    await createVersion(t, c.url, s.owner, 'v1');
    const v1 = await request(t.app).get(`${c.url}v1/`).set(as(s.owner));
    expect(v1.body.expansion_url).toBe(`${c.url}v1/expansions/autoexpand-v1/`);
    const expansions = await request(t.app)
      .get(`${c.url}v1/expansions/?includeSummary=true&verbose=true`)
      .set(as(s.owner));
    expect(expansions.body.map((e: { url: string }) => e.url)).toContain(v1.body.expansion_url);
    const source = await request(t.app).get(s.url).set(as(s.owner));
    expect(source.body.expansion_url).toBeUndefined();
  });

  it('answers each reference with what it resolved to and when', async () => {
    const { s, c } = await world();
    const res = await request(t.app)
      .get(`${c.url}references/?verbose=true&includeResolvedRepoVersions=true`)
      .set(as(s.owner));
    expect(res.status).toBe(200);
    const byExpression = Object.fromEntries(
      res.body.map((r: { expression: string }) => [r.expression, r]),
    );
    expect(byExpression[`${s.url}concepts/A/`]).toMatchObject({ concepts: 1, mappings: 0 });
    expect(byExpression[`${s.url}mappings/M1/`]).toMatchObject({ concepts: 0, mappings: 1 });
    expect(Date.parse(byExpression[`${s.url}concepts/A/`].last_resolved_at)).not.toBeNaN();
  });

  it('adds summary to repository details, repository lists and version lists with includeSummary', async () => {
    const { s, c } = await world();
    await createVersion(t, s.url, s.owner, 'v1');
    const detail = await request(t.app).get(`${s.url}?includeSummary=true`).set(as(s.owner));
    expect(detail.body.summary).toEqual({ active_concepts: 2, active_mappings: 1, versions: 2 });
    const versions = await request(t.app)
      .get(`${s.url}versions/?verbose=true&includeSummary=true&limit=100`)
      .set(as(s.owner));
    expect(versions.body.find((v: { id: string }) => v.id === 'v1').summary).toEqual({
      active_concepts: 2,
      active_mappings: 1,
      versions: 2,
    });
    const plain = await request(t.app)
      .get(`${s.url}versions/?includeSummary=true`)
      .set(as(s.owner));
    expect(plain.body[0].summary).toMatchObject({ active_concepts: 2 });
    const repos = await request(t.app)
      .get(`/orgs/${s.org}/repos/?includeSummary=true`)
      .set(as(s.owner));
    const col = repos.body.find((r: { short_code: string }) => r.short_code === c.id);
    expect(col.summary).toMatchObject({ active_concepts: 1, active_mappings: 1 });
    const without = await request(t.app).get(s.url).set(as(s.owner));
    expect(without.body.summary).toBeUndefined();
  });
});

describe('concept and mapping history: version lists with the repository versions that hold them', () => {
  it('lists each concept version with uuid, version_created_on, update_comment, source_versions and collection_versions', async () => {
    const s = await createSource(t);
    const c = await createCollection(t, {}, { owner: s.owner, org: s.org });
    await createConcept(t, s.url, s.owner, { id: 'A' });
    await createConcept(t, s.url, s.owner, { id: 'B' });
    await createMappingBetween(t, s.url, s.owner, [
      'M1',
      'SAME-AS',
      `${s.url}concepts/A/`,
      `${s.url}concepts/B/`,
    ]);
    await createVersion(t, s.url, s.owner, 'v1');
    await request(t.app)
      .put(`${c.url}references/`)
      .set(as(s.owner))
      .send({ data: { expressions: [`${s.url}concepts/A/`] } });
    await createVersion(t, c.url, s.owner, 'c1');
    const edit = await request(t.app)
      .put(`${s.url}concepts/A/`)
      .set(as(s.owner))
      .send({
        names: [{ name: 'Renamed', locale: 'en', locale_preferred: true }],
        update_comment: 'renamed',
      });
    expect(edit.status).toBe(200);
    const res = await request(t.app)
      .get(`${s.url}concepts/A/versions/?includeCollectionVersions=true&includeSourceVersions=true`)
      .set(as(s.owner));
    expect(res.status).toBe(200);
    const [latest, first] = res.body;
    expect(latest).toMatchObject({
      update_comment: 'renamed',
      source_versions: [],
      collection_versions: [],
      is_latest_version: true,
    });
    expect(first).toMatchObject({
      source_versions: [`${s.url}v1/`],
      collection_versions: [`${c.url}c1/`],
      is_latest_version: false,
    });
    for (const v of res.body) {
      expect(v.uuid).toEqual(String(v.version));
      expect(Date.parse(v.version_created_on)).not.toBeNaN();
      // The history's "committed …" reads when and by whom the version was made.
      expect(v.version_updated_on).toBe(v.version_created_on);
      expect(v.version_updated_by).toBe(s.owner.username);
    }
    const plain = await request(t.app).get(`${s.url}concepts/A/versions/`).set(as(s.owner));
    expect(plain.body[0].source_versions).toBeUndefined();
    const mapping = await request(t.app)
      .get(`${s.url}mappings/M1/versions/?includeSourceVersions=true`)
      .set(as(s.owner));
    expect(mapping.body[0]).toMatchObject({
      source_versions: [`${s.url}v1/`],
      collection_versions: [],
      version_updated_by: s.owner.username,
    });
    expect(mapping.body[0].version_updated_on).toBe(mapping.body[0].version_created_on);
  });

  it('leaves out collection versions the caller may not see', async () => {
    const s = await createSource(t);
    const hidden = await createUser(t);
    const privateOrg = (await createOrg(t, hidden, { public_access: 'None' })).id;
    const c = await createRepo(
      t,
      `/orgs/${privateOrg}`,
      hidden,
      { public_access: 'None' },
      'collections',
    );
    await createConcept(t, s.url, s.owner, { id: 'A' });
    await request(t.app)
      .put(`${c.url}references/`)
      .set(as(hidden))
      .send({ data: { expressions: [`${s.url}concepts/A/`] } });
    await createVersion(t, c.url, hidden, 'c1');
    const url = `${s.url}concepts/A/versions/?includeCollectionVersions=true`;
    expect((await request(t.app).get(url).set(as(hidden))).body[0].collection_versions).toEqual([
      `${c.url}c1/`,
    ]);
    expect((await request(t.app).get(url).set(as(s.owner))).body[0].collection_versions).toEqual(
      [],
    );
  });
});

describe('{repo}[/:version]/summary/', () => {
  async function source(publicAccess: 'View' | 'None' = 'View') {
    const s = await createSource(
      t,
      { public_access: publicAccess },
      { orgFields: { public_access: publicAccess } },
    );
    await createConcept(t, s.url, s.owner, {
      id: 'A',
      concept_class: 'Diagnosis',
      datatype: 'N/A',
      extras: { icd: 'B54' },
      names: [
        { name: 'Malaria', locale: 'en', locale_preferred: true, name_type: 'FULLY_SPECIFIED' },
        { name: 'Paludisme', locale: 'fr', locale_preferred: true, name_type: 'FULLY_SPECIFIED' },
      ],
    });
    await createConcept(t, s.url, s.owner, { id: 'B', concept_class: 'Symptom' });
    await createConcept(t, s.url, s.owner, { id: 'C', concept_class: 'Symptom' });
    await createMappingBetween(t, s.url, s.owner, [
      'M1',
      'SAME-AS',
      `${s.url}concepts/A/`,
      `${s.url}concepts/B/`,
    ]);
    await request(t.app).delete(`${s.url}concepts/C/`).set(as(s.owner)).expect(204);
    await createVersion(t, s.url, s.owner, 'v1', { released: true });
    await createConcept(t, s.url, s.owner, { id: 'D', concept_class: 'Drug' });
    return s;
  }

  it('answers the counts the summary panel reads, at HEAD and at a version', async () => {
    const s = await source();
    const head = await request(t.app).get(`${s.url}summary/?verbose=true`);
    expect(head.status).toBe(200);
    expect(head.body).toMatchObject({
      id: 'S',
      concepts: {
        active: 3,
        retired: 1,
        concept_class: [
          ['Symptom', 1],
          ['Diagnosis', 1],
          ['Drug', 1],
        ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
        locale: [
          ['en', 3],
          ['fr', 1],
        ],
      },
      mappings: { active: 1, retired: 0, map_type: [['SAME-AS', 1]] },
      versions: { total: 1, released: 1 },
    });
    const v1 = await request(t.app).get(`${s.url}v1/summary/?verbose=true`);
    expect(v1.body).toMatchObject({ id: 'v1', concepts: { active: 2, retired: 1 } });
    const plain = await request(t.app).get(`${s.url}v1/summary/`);
    expect(plain.body).toMatchObject({
      id: 'v1',
      active_concepts: 2,
      active_mappings: 1,
      versions: 2,
    });
  });

  it('answers a distribution when asked, and 400 for one it does not know', async () => {
    const s = await source();
    const res = await request(t.app).get(
      `${s.url}summary/?verbose=true&distribution=concepts_extras,map_type`,
    );
    expect(res.body.distribution).toEqual({
      concepts_extras: ['icd'],
      map_type: [{ map_type: 'SAME-AS', count: 1 }],
    });
    const bad = await request(t.app).get(`${s.url}summary/?verbose=true&distribution=nonsense`);
    expect(bad.status).toBe(400);
    expect(bad.body.errors.distribution).toBeDefined();
  });

  it("summarizes a collection from its version's default expansion", async () => {
    const s = await source();
    const c = await createCollection(t, {}, { owner: s.owner, org: s.org });
    await request(t.app)
      .put(`${c.url}references/`)
      .set(as(s.owner))
      .send({ data: { expressions: [`${s.url}concepts/A/`, `${s.url}concepts/D/`] } });
    const res = await request(t.app).get(`${c.url}summary/?verbose=true`);
    expect(res.body).toMatchObject({
      concepts: { active: 2, retired: 0 },
      mappings: { active: 0 },
    });
  });

  it('keeps a private repository summary to its org: 401 anonymous, 403 outsider', async () => {
    const s = await source('None');
    const outsider = await createUser(t);
    expect((await request(t.app).get(`${s.url}summary/`)).status).toBe(401);
    expect((await request(t.app).get(`${s.url}summary/`).set(as(outsider))).status).toBe(403);
    expect((await request(t.app).get(`${s.url}summary/`).set(as(s.owner))).status).toBe(200);
    expect((await request(t.app).put(`${s.url}summary/`).set(as(outsider))).status).toBe(403);
    expect((await request(t.app).put(`${s.url}summary/`).set(as(s.owner))).status).toBe(202);
  });
});

describe('/toggles/ and /users/api-token/', () => {
  it('answers no feature flags', async () => {
    const res = await request(t.app).get('/toggles/');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
  });

  it('answers the token the caller signed in with, and a working new one to Basic credentials', async () => {
    const user = await createUser(t);
    const same = await request(t.app).get('/users/api-token/').set(as(user));
    expect(same.status).toBe(200);
    expect(`Token ${same.body.token}`).toBe(user.auth);
    const basic = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`;
    const issued = await request(t.app).get('/users/api-token/').set('Authorization', basic);
    expect(issued.body.token).not.toBe(same.body.token);
    const me = await request(t.app)
      .get('/user/')
      .set('Authorization', `Token ${issued.body.token}`);
    expect(me.body.username).toBe(user.username);
    expect((await request(t.app).get('/users/api-token/')).status).toBe(401);
  });
});

describe('events', () => {
  it('shows a user what happened in their orgs and what they did, newest first; private events only to members', async () => {
    const { org, owner, member, outsider } = await people('None');
    await createRepo(t, `/orgs/${org}`, owner, { id: 'PRIV' });
    const mine = await request(t.app)
      .get(`/users/${member.username}/events/?scopes=orgs&limit=10&page=1`)
      .set(as(member));
    expect(mine.status).toBe(200);
    expect(
      mine.body.map((e: { event_type: string; referenced_object: { id?: string } }) => [
        e.event_type,
        e.referenced_object.id,
      ]),
    ).toEqual([
      ['Created', 'PRIV'],
      ['Joined', org],
      ['Created', org],
    ]);
    expect(mine.body[0]).toMatchObject({
      type: 'Event',
      public: false,
      actor: { username: owner.username },
      object: { type: 'User', username: owner.username },
      referenced_object: { type: 'Source', url: `/orgs/${org}/sources/PRIV/` },
    });
    expect(mine.headers.num_found).toBe('3');
    const self = await request(t.app)
      .get(`/users/${member.username}/events/?scopes=self`)
      .set(as(member));
    expect(self.body.map((e: { event_type: string }) => e.event_type)).toEqual(['Joined']);
    const seenByOutsider = await request(t.app)
      .get(`/users/${member.username}/events/?scopes=all`)
      .set(as(outsider));
    expect(seenByOutsider.body).toEqual([]);
    const guest = await request(t.app).get('/events/?limit=100');
    expect(
      guest.body.some((e: { referenced_object: { url: string } }) =>
        e.referenced_object.url.startsWith(`/orgs/${org}/`),
      ),
    ).toBe(false);
  });

  it('shows what followed things do, and highlights public creations and releases to guests', async () => {
    const s = await createSource(t);
    const fan = await createUser(t);
    const follow = await request(t.app)
      .post(`/users/${fan.username}/following/`)
      .set(as(fan))
      .send({ follow: s.url });
    expect(follow.status).toBe(204);
    await createVersion(t, s.url, s.owner, 'v1', { released: true });
    const feed = await request(t.app)
      .get(`/users/${fan.username}/events/?scopes=following`)
      .set(as(fan));
    expect(
      feed.body.map((e: { event_type: string; referenced_object: { id: string } }) => [
        e.event_type,
        e.referenced_object.id,
      ]),
    ).toEqual([
      ['Released', 'v1'],
      ['Created', 'v1'],
      ['Followed', 'S'],
      ['Created', 'S'],
    ]);
    const guest = await request(t.app).get('/events/?limit=100');
    const urls = guest.body.map(
      (e: { referenced_object: { version_url?: string; url: string } }) =>
        e.referenced_object.version_url ?? e.referenced_object.url,
    );
    expect(urls).toContain(`${s.url}v1/`);
    expect(
      guest.body.every((e: { event_type: string }) =>
        ['Created', 'Released'].includes(e.event_type),
      ),
    ).toBe(true);
  });

  it('answers 400 for an unknown scope and 404 for an unknown user', async () => {
    const user = await createUser(t);
    expect(
      (await request(t.app).get(`/users/${user.username}/events/?scopes=everything`)).status,
    ).toBe(400);
    expect((await request(t.app).get(`/users/${uniqueId('nobody')}/events/`)).status).toBe(404);
  });

  it('records nothing when the change is refused', async () => {
    const { org, owner, outsider } = await people();
    await request(t.app)
      .post(`/orgs/${org}/sources/`)
      .set(as(outsider))
      .send({ id: 'X', name: 'x' })
      .expect(403);
    await request(t.app)
      .post(`/orgs/${org}/sources/`)
      .set(as(owner))
      .send({ id: 'bad id!', name: 'x' })
      .expect(400);
    const events = await request(t.app)
      .get(`/users/${owner.username}/events/?scopes=orgs`)
      .set(as(owner));
    // The org's creation and its member's joining, nothing of the refused creates.
    expect(events.body.map((e: { event_type: string }) => e.event_type)).toEqual([
      'Joined',
      'Created',
    ]);
  });
});

describe('pins', () => {
  async function pinWorld() {
    const { org, owner, member, outsider } = await people();
    const repos = [];
    for (const id of ['P1', 'P2', 'P3', 'P4', 'P5'])
      repos.push(await createRepo(t, `/orgs/${org}`, owner, { id }));
    return { org, owner, member, outsider, repos };
  }
  const pin = (org: string, by: TestUser | undefined, body: object) =>
    request(t.app).post(`/orgs/${org}/pins/`).set(as(by)).send(body);

  it('lets members add, list, reorder and delete org pins', async () => {
    const { org, member, repos } = await pinWorld();
    const made = [];
    for (const r of repos.slice(0, 3)) {
      const res = await pin(org, member, {
        resource_type: 'Source',
        resource_id: Number(r.body.uuid),
      });
      expect(res.status).toBe(201);
      made.push(res.body);
    }
    expect(made[0]).toMatchObject({
      order: 0,
      resource_type: 'Source',
      resource: { short_code: 'P1', summary: { active_concepts: 0 } },
    });
    expect(made[0].uri).toBe(`/orgs/${org}/pins/${made[0].id}/`);
    const moved = await request(t.app).put(made[2].uri).set(as(member)).send({ order: 0 });
    expect(moved.status).toBe(200);
    expect(moved.body.order).toBe(0);
    const list = await request(t.app).get(`/orgs/${org}/pins/`);
    expect(
      list.body.map((p: { resource: { short_code: string }; order: number }) => [
        p.resource.short_code,
        p.order,
      ]),
    ).toEqual([
      ['P3', 0],
      ['P1', 1],
      ['P2', 2],
    ]);
    expect((await request(t.app).delete(made[0].uri).set(as(member))).status).toBe(204);
    const after = await request(t.app).get(`/orgs/${org}/pins/`);
    expect(
      after.body.map((p: { resource: { short_code: string }; order: number }) => [
        p.resource.short_code,
        p.order,
      ]),
    ).toEqual([
      ['P3', 0],
      ['P2', 1],
    ]);
  });

  it('refuses outsiders (403) and anonymous callers (401)', async () => {
    const { org, outsider, member, repos } = await pinWorld();
    const body = { resource_type: 'Source', resource_id: repos[0].body.uuid };
    expect((await pin(org, outsider, body)).status).toBe(403);
    expect((await pin(org, undefined, body)).status).toBe(401);
    const made = await pin(org, member, body);
    expect(
      (await request(t.app).put(made.body.uri).set(as(outsider)).send({ order: 0 })).status,
    ).toBe(403);
    expect((await request(t.app).delete(made.body.uri).set(as(outsider))).status).toBe(403);
    const other = await createUser(t);
    expect(
      (await request(t.app).post(`/users/${other.username}/pins/`).set(as(member)).send(body))
        .status,
    ).toBe(403);
  });

  it('answers 400 for bad input, duplicates and a fifth pin, 404 for an unknown pin', async () => {
    const { org, member, repos } = await pinWorld();
    expect((await pin(org, member, { resource_type: 'Concept', resource_id: 1 })).status).toBe(400);
    expect((await pin(org, member, { resource_type: 'Source', resource_id: 'x' })).status).toBe(
      400,
    );
    expect(
      (await pin(org, member, { resource_type: 'Source', resource_id: 999999999 })).status,
    ).toBe(400);
    for (const id of [1e30, -3, 1.5, '12a', null]) {
      expect((await pin(org, member, { resource_type: 'Source', resource_id: id })).status).toBe(
        400,
      );
    }
    const body = { resource_type: 'Source', resource_id: repos[0].body.uuid };
    const first = await pin(org, member, body);
    expect(first.status).toBe(201);
    expect((await pin(org, member, body)).status).toBe(400);
    for (const r of repos.slice(1, 4))
      expect(
        (await pin(org, member, { resource_type: 'Source', resource_id: r.body.uuid })).status,
      ).toBe(201);
    const fifth = await pin(org, member, {
      resource_type: 'Source',
      resource_id: repos[4].body.uuid,
    });
    expect(fifth.status).toBe(400);
    expect(fifth.body.message).toMatch(/max 4/);
    expect(
      (await request(t.app).put(first.body.uri).set(as(member)).send({ order: 9 })).status,
    ).toBe(400);
    expect(
      (await request(t.app).put(first.body.uri).set(as(member)).send({ order: 'first' })).status,
    ).toBe(400);
    expect(
      (await request(t.app).put(`/orgs/${org}/pins/99999999/`).set(as(member)).send({ order: 0 }))
        .status,
    ).toBe(404);
    for (const id of ['abc', '-1', '99999999999999999999999']) {
      expect((await request(t.app).delete(`/orgs/${org}/pins/${id}/`).set(as(member))).status).toBe(
        404,
      );
    }
    expect((await request(t.app).get(`/orgs/${org}/pins/`)).body).toHaveLength(4);
  });

  it('does not show a pin of a private repository to those who may not see it', async () => {
    const user = await createUser(t);
    const secret = await createRepo(t, `/users/${user.username}`, user, {
      id: 'SECRET',
      public_access: 'None',
    });
    const res = await request(t.app)
      .post('/user/pins/')
      .set(as(user))
      .send({ resource_type: 'Source', resource_id: secret.body.uuid });
    expect(res.status).toBe(201);
    expect(
      (await request(t.app).get(`/users/${user.username}/pins/`).set(as(user))).body,
    ).toHaveLength(1);
    expect((await request(t.app).get(`/users/${user.username}/pins/`)).body).toEqual([]);
    const me = await request(t.app).get('/user/?includePins=true').set(as(user));
    expect(
      me.body.pins.map((p: { resource: { short_code: string } }) => p.resource.short_code),
    ).toEqual(['SECRET']);
  });

  it('parallel adds keep at most four pins, never a duplicate, in one dense order', async () => {
    const { org, owner, member, repos } = await pinWorld();
    const bodies = repos.map((r) => ({ resource_type: 'Source', resource_id: r.body.uuid }));
    const answers = await Promise.all(
      [...bodies, ...bodies].map((b, i) => pin(org, i % 2 ? owner : member, b)),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(4);
    expect(answers.every((a) => a.status === 201 || a.status === 400)).toBe(true);
    const list = (await request(t.app).get(`/orgs/${org}/pins/`)).body as Array<{
      order: number;
      resource_id: number;
    }>;
    expect(list.map((p) => p.order)).toEqual([0, 1, 2, 3]);
    expect(new Set(list.map((p) => p.resource_id)).size).toBe(4);
  });

  it('parallel reorders lose no pin and keep the order dense', async () => {
    const { org, member, repos } = await pinWorld();
    const made = [];
    for (const r of repos.slice(0, 4))
      made.push(
        (await pin(org, member, { resource_type: 'Source', resource_id: r.body.uuid })).body,
      );
    const moves = await Promise.all(
      made.flatMap((p, i) =>
        [0, 3, 1].map((order) =>
          request(t.app)
            .put(p.uri)
            .set(as(member))
            .send({ order: (order + i) % 4 }),
        ),
      ),
    );
    expect(moves.every((m) => m.status === 200)).toBe(true);
    const list = (await request(t.app).get(`/orgs/${org}/pins/`)).body as Array<{
      order: number;
      id: number;
    }>;
    expect(list.map((p) => p.order)).toEqual([0, 1, 2, 3]);
    expect(list.map((p) => p.id).sort()).toEqual(made.map((p) => (p as { id: number }).id).sort());
  });
});

describe('follows', () => {
  it('follows users, orgs and repositories; lists and removes them', async () => {
    const fan = await createUser(t);
    const star = await createUser(t);
    const s = await createSource(t);
    for (const url of [`/users/${star.username}/`, `/orgs/${s.org}/`, s.url]) {
      expect(
        (await request(t.app).post('/user/following/').set(as(fan)).send({ follow: url })).status,
      ).toBe(204);
    }
    // Following again changes nothing.
    expect(
      (await request(t.app).post('/user/following/').set(as(fan)).send({ follow: s.url })).status,
    ).toBe(204);
    const list = await request(t.app).get(`/users/${fan.username}/following/`);
    expect(list.body.map((f: { object: { url: string } }) => f.object.url).sort()).toEqual(
      [`/users/${star.username}/`, `/orgs/${s.org}/`, s.url].sort(),
    );
    const me = await request(t.app).get('/user/?includeFollowing=true').set(as(fan));
    expect(me.body.following).toHaveLength(3);
    const gone = await request(t.app).delete(list.body[0].url).set(as(fan));
    expect(gone.status).toBe(204);
    expect((await request(t.app).get(`/users/${fan.username}/following/`)).body).toHaveLength(2);
    expect((await request(t.app).delete(list.body[0].url).set(as(fan))).status).toBe(404);
  });

  it('answers 400 for bad input, 403 for changing another user, 401 anonymous', async () => {
    const fan = await createUser(t);
    const other = await createUser(t);
    const send = (by: TestUser | undefined, user: string, body: object) =>
      request(t.app).post(`/users/${user}/following/`).set(as(by)).send(body);
    expect((await send(fan, fan.username, { follow: `/users/${fan.username}/` })).status).toBe(400);
    expect((await send(fan, fan.username, { follow: 'not a url' })).status).toBe(400);
    expect((await send(fan, fan.username, {})).status).toBe(400);
    expect((await send(fan, fan.username, { follow: `/users/${uniqueId('ghost')}/` })).status).toBe(
      404,
    );
    expect((await send(fan, other.username, { follow: `/users/${fan.username}/` })).status).toBe(
      403,
    );
    expect(
      (await send(undefined, other.username, { follow: `/users/${fan.username}/` })).status,
    ).toBe(401);
  });

  it('parallel follows of the same thing make one follow', async () => {
    const fan = await createUser(t);
    const s = await createSource(t);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        request(t.app).post('/user/following/').set(as(fan)).send({ follow: s.url }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(204));
    expect((await request(t.app).get(`/users/${fan.username}/following/`)).body).toHaveLength(1);
  });
});

describe('{collection}[/:version]/concepts/:concept/ and mappings/:mapping/: one member by its id', () => {
  it('answers the member, 404 for a non-member, 409 for an id two sources share', async () => {
    const s = await createSource(t);
    const other = await createRepo(t, `/orgs/${s.org}`, s.owner, { id: 'OTHER' });
    const c = await createCollection(t, {}, { owner: s.owner, org: s.org });
    for (const id of ['A', 'B']) await createConcept(t, s.url, s.owner, { id });
    await createConcept(t, other.url, s.owner, { id: 'A' });
    await createMappingBetween(t, s.url, s.owner, [
      'M1',
      'SAME-AS',
      `${s.url}concepts/A/`,
      `${s.url}concepts/B/`,
    ]);
    await request(t.app)
      .put(`${c.url}references/`)
      .set(as(s.owner))
      .send({ data: { expressions: [`${s.url}concepts/B/`, `${s.url}mappings/M1/`] } })
      .expect(200);
    const b = await request(t.app).get(`${c.url}concepts/B/?includeReferences=true`);
    expect(b.status).toBe(200);
    expect(b.body).toMatchObject({ id: 'B', url: `${s.url}concepts/B/` });
    expect(b.body.references.map((r: { expression: string }) => r.expression)).toEqual([
      `${s.url}concepts/B/`,
    ]);
    const m1 = await request(t.app).get(`${c.url}mappings/M1/?includeReferences=true`);
    expect(m1.body).toMatchObject({ id: 'M1', map_type: 'SAME-AS' });
    expect(m1.body.references).toHaveLength(1);
    const absent = await request(t.app).get(`${c.url}concepts/A/`);
    expect(absent.status).toBe(404);
    expect((await request(t.app).get(`${c.url}mappings/NOPE/`)).status).toBe(404);
    await request(t.app)
      .put(`${c.url}references/`)
      .set(as(s.owner))
      .send({ data: { expressions: [`${s.url}concepts/A/`, `${other.url}concepts/A/`] } })
      .expect(200);
    const shared = await request(t.app).get(`${c.url}concepts/A/`);
    expect(shared.status).toBe(409);
    // Odd ids: a clear 400 (a NUL, as everywhere; an id longer than any), else not members.
    for (const [odd, status, field] of [
      ['%00', 400, 'path'],
      ['x'.repeat(3000), 400, 'id'],
      ['%E2%9C%93', 404, undefined],
      ["a'b", 404, undefined],
      ['..', 404, undefined],
    ] as const) {
      for (const kind of ['concepts', 'mappings']) {
        const res = await request(t.app).get(`${c.url}${kind}/${odd}/`);
        expect([odd.slice(0, 9), kind, res.status]).toEqual([odd.slice(0, 9), kind, status]);
        if (field) expect(res.body.errors).toHaveProperty(field);
      }
    }
    // Through an expansion named in the path, and retired members too.
    await request(t.app).delete(`${s.url}concepts/B/`).set(as(s.owner)).expect(204);
    const head = await request(t.app).get(c.url);
    const retired = await request(t.app).get(`${head.body.expansion_url}concepts/B/`);
    expect(retired.status).toBe(200);
    expect(retired.body.retired).toBe(true);
  });

  it('hides a member of a source the caller may not see', async () => {
    const s = await createSource(t);
    const hidden = await createUser(t);
    const privateOrg = (await createOrg(t, hidden, { public_access: 'None' })).id;
    const secret = await createRepo(t, `/orgs/${privateOrg}`, hidden, {
      id: 'SECRET',
      public_access: 'None',
    });
    await createConcept(t, secret.url, hidden, { id: 'X' });
    const c = await createCollection(t, {}, { owner: s.owner, org: s.org });
    await addMember(t, s.org, s.owner, hidden, 'admin');
    await request(t.app)
      .put(`${c.url}references/`)
      .set(as(hidden))
      .send({ data: { expressions: [`${secret.url}concepts/X/`] } })
      .expect(200);
    expect((await request(t.app).get(`${c.url}concepts/X/`).set(as(hidden))).status).toBe(200);
    expect((await request(t.app).get(`${c.url}concepts/X/`).set(as(s.owner))).status).toBe(404);
    expect((await request(t.app).get(`${c.url}concepts/X/`)).status).toBe(404);
  });
});
