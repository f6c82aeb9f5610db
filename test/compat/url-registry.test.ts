import request from 'supertest';
import { createTestApp, createUser, uniqueId, type TestApp, type TestUser } from '../factories';
import { createRepo } from '../factories/content';
import { as } from '../factories/http';
import { orgWithPeople } from '../factories/people';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/** A canonical URL no other test uses. */
const canonical = () => `http://example.org/fhir/CodeSystem/${uniqueId('cs')}`;

async function createEntry(registry: string, by: TestUser | string, body: Record<string, unknown>) {
  const res = await request(t.app).post(`${registry}url-registry/`).set(as(by)).send(body);
  if (res.status !== 201)
    throw new Error(`entry create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Record<string, unknown> & { id: number };
}

describe('the global registry (spec operations §2.3, §4.6)', () => {
  it('a superuser creates an entry: 201, Location and the entry; anyone reads it', async () => {
    const url = canonical();
    const res = await request(t.app)
      .post('/url-registry/')
      .set(as(t.admin))
      .send({ url, namespace: '/orgs/Somewhere', name: 'Some code system', extras: { a: 1 } });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/url-registry/${res.body.id}/`);
    expect(res.body).toMatchObject({
      type: 'URLRegistryEntry',
      url,
      namespace: '/orgs/Somewhere/',
      name: 'Some code system',
      extras: { a: 1 },
      is_active: true,
      owner: null,
      owner_type: null,
      owner_url: '/',
      created_by: 'ocladmin',
      updated_by: 'ocladmin',
    });
    expect(typeof res.body.id).toBe('number');
    expect(new Date(res.body.created_at as string).toISOString()).toBe(res.body.created_at);
    const get = await request(t.app).get(`/url-registry/${res.body.id}/`);
    expect(get.status).toBe(200);
    expect(get.body).toEqual(res.body);
    const listed = await request(t.app).get('/url-registry/').query({ url });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([res.body]);
    expect(listed.headers.num_found).toBe('1');
  });

  it('only superusers write it: 401 anonymous, 403 for a signed-in user, nothing written', async () => {
    const user = await createUser(t);
    const url = canonical();
    expect((await request(t.app).post('/url-registry/').send({ url })).status).toBe(401);
    const denied = await request(t.app).post('/url-registry/').set(as(user)).send({ url });
    expect(denied.status).toBe(403);
    expect((await request(t.app).get('/url-registry/').query({ url })).body).toEqual([]);
    const entry = await createEntry('/', t.admin, { url });
    const path = `/url-registry/${entry.id}/`;
    expect((await request(t.app).patch(path).set(as(user)).send({ name: 'x' })).status).toBe(403);
    expect((await request(t.app).delete(path).set(as(user))).status).toBe(403);
    expect((await request(t.app).delete(path)).status).toBe(401);
    expect((await request(t.app).get(path)).body.name).toBeNull();
  });
});

describe('owner registries', () => {
  it("an org's members write its registry; an outsider gets 403, an anonymous caller 401", async () => {
    const { org, admin, member, outsider } = await orgWithPeople(t);
    const registry = `/orgs/${org.id}/`;
    const byMember = await createEntry(registry, member, { url: canonical() });
    expect(byMember).toMatchObject({
      owner: org.id,
      owner_type: 'Organization',
      owner_url: registry,
      created_by: member.username,
    });
    await createEntry(registry, admin, { url: canonical() });
    const url = canonical();
    expect(
      (await request(t.app).post(`${registry}url-registry/`).set(as(outsider)).send({ url }))
        .status,
    ).toBe(403);
    expect((await request(t.app).post(`${registry}url-registry/`).send({ url })).status).toBe(401);
    const list = await request(t.app).get(`${registry}url-registry/`);
    expect(list.status).toBe(200);
    expect(list.headers.num_found).toBe('2');
    const path = `${registry}url-registry/${byMember.id}/`;
    expect((await request(t.app).put(path).set(as(outsider)).send({ name: 'n' })).status).toBe(403);
    expect((await request(t.app).get(path)).status).toBe(200);
  });

  it("a private org's registry is read only by its members (401 anonymous, 403 outsider)", async () => {
    const { org, member, outsider } = await orgWithPeople(t, { public_access: 'None' });
    const registry = `/orgs/${org.id}/url-registry/`;
    const entry = await createEntry(`/orgs/${org.id}/`, member, { url: canonical() });
    expect((await request(t.app).get(registry)).status).toBe(401);
    expect((await request(t.app).get(registry).set(as(outsider))).status).toBe(403);
    expect((await request(t.app).get(`${registry}${entry.id}/`).set(as(outsider))).status).toBe(
      403,
    );
    const own = await request(t.app).get(registry).set(as(member));
    expect(own.status).toBe(200);
    expect(own.body).toHaveLength(1);
  });

  it("a user's registry is written by that user, under /user/ and /users/:user/", async () => {
    const owner = await createUser(t);
    const other = await createUser(t);
    const mine = await createEntry('/user/', owner, { url: canonical(), namespace: '/users/x/' });
    expect(mine).toMatchObject({ owner: owner.username, owner_type: 'User' });
    expect(mine.owner_url).toBe(`/users/${owner.username}/`);
    const path = `/users/${owner.username}/url-registry/`;
    expect((await request(t.app).post(path).set(as(other)).send({ url: canonical() })).status).toBe(
      403,
    );
    const theirs = await request(t.app).get(path);
    expect(theirs.body.map((e: { id: number }) => e.id)).toEqual([mine.id]);
    expect((await request(t.app).get('/user/url-registry/').set(as(owner))).body).toHaveLength(1);
    expect((await request(t.app).get('/user/url-registry/')).status).toBe(401);
    // An entry is reachable only through its own registry.
    expect((await request(t.app).get(`/url-registry/${mine.id}/`)).status).toBe(404);
  });
});

describe('entries: validation, duplicates, edits, deletion', () => {
  it('answers 400 for a missing or relative url, a bad namespace or extras; nothing is written', async () => {
    const user = await createUser(t);
    const registry = '/user/url-registry/';
    const missing = await request(t.app).post(registry).set(as(user)).send({ name: 'x' });
    expect(missing.status).toBe(400);
    expect(missing.body.errors.url).toBeDefined();
    const relative = await request(t.app)
      .post(registry)
      .set(as(user))
      .send({ url: '/orgs/X/sources/Y/' });
    expect(relative.status).toBe(400);
    expect(relative.body.errors.url[0]).toMatch(/absolute URI/);
    for (const namespace of ['/orgs/', 'http://example.org/', '/user/', '/orgs/X/sources/Y/']) {
      const bad = await request(t.app)
        .post(registry)
        .set(as(user))
        .send({ url: canonical(), namespace });
      expect(bad.status).toBe(400);
      expect(bad.body.errors.namespace[0]).toMatch(/owner URL/);
    }
    const extras = await request(t.app)
      .post(registry)
      .set(as(user))
      .send({ url: canonical(), extras: [1] });
    expect(extras.body.errors.extras).toBeDefined();
    const notObject = await request(t.app).post(registry).set(as(user)).send(['x']);
    expect(notObject.status).toBe(400);
    expect((await request(t.app).get(registry).set(as(user))).body).toEqual([]);
  });

  it('a duplicate active url in one registry is a 400; other registries and deleted entries do not count', async () => {
    const user = await createUser(t);
    const other = await createUser(t);
    const url = canonical();
    const first = await createEntry('/user/', user, { url });
    const dup = await request(t.app).post('/user/url-registry/').set(as(user)).send({ url });
    expect(dup.status).toBe(400);
    expect(dup.body.errors.url[0]).toMatch(/already has an active entry/);
    await createEntry('/user/', other, { url });
    const second = await createEntry('/user/', user, { url: canonical() });
    const clash = await request(t.app)
      .patch(`/user/url-registry/${second.id}/`)
      .set(as(user))
      .send({ url });
    expect(clash.status).toBe(400);
    const removed = await request(t.app).delete(`/user/url-registry/${first.id}/`).set(as(user));
    expect(removed.status).toBe(204);
    expect((await request(t.app).get(`/user/url-registry/${first.id}/`).set(as(user))).status).toBe(
      404,
    );
    expect(
      (await request(t.app).delete(`/user/url-registry/${first.id}/`).set(as(user))).status,
    ).toBe(404);
    await createEntry('/user/', user, { url });
  });

  it('PUT and PATCH change what is sent (200); unknown and malformed ids are 404', async () => {
    const user = await createUser(t);
    const entry = await createEntry('/user/', user, {
      url: canonical(),
      name: 'A',
      extras: { k: 1 },
    });
    const path = `/user/url-registry/${entry.id}/`;
    const patched = await request(t.app)
      .patch(path)
      .set(as(user))
      .send({ name: 'B', namespace: '/orgs/Z' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'B', namespace: '/orgs/Z/', extras: { k: 1 } });
    const url = canonical();
    const put = await request(t.app).put(path).set(as(user)).send({ url, namespace: null });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ url, name: 'B', namespace: null });
    const bad = await request(t.app).put(path).set(as(user)).send({ url: 'not a uri' });
    expect(bad.status).toBe(400);
    expect((await request(t.app).get(path).set(as(user))).body.url).toBe(url);
    expect((await request(t.app).get('/user/url-registry/999999999/').set(as(user))).status).toBe(
      404,
    );
    expect((await request(t.app).get('/user/url-registry/abc/').set(as(user))).status).toBe(404);
  });
});

describe('listing', () => {
  it('q searches url, name, namespace and extras; url and namespace filter exactly; pages', async () => {
    const { org, member } = await orgWithPeople(t);
    const registry = `/orgs/${org.id}/url-registry/`;
    const marker = uniqueId('marker');
    const a = await createEntry(`/orgs/${org.id}/`, member, {
      url: `http://example.org/${marker}/a`,
      name: 'Alpha',
      namespace: '/orgs/NS1/',
    });
    const b = await createEntry(`/orgs/${org.id}/`, member, {
      url: canonical(),
      name: `Beta ${marker}`,
      namespace: '/orgs/NS2/',
    });
    const c = await createEntry(`/orgs/${org.id}/`, member, {
      url: canonical(),
      namespace: '/orgs/NS2/',
      extras: { tag: 'gamma-tag' },
    });
    const ids = async (query: Record<string, string>): Promise<number[]> =>
      ((await request(t.app).get(registry).query(query)).body as Array<{ id: number }>).map(
        (e) => e.id,
      );
    expect((await ids({ q: marker })).sort()).toEqual([a.id, b.id].sort());
    expect(await ids({ q: 'gamma-tag' })).toEqual([c.id]);
    expect((await ids({ q: 'ns2' })).sort()).toEqual([b.id, c.id].sort());
    expect(await ids({ url: a.url as string })).toEqual([a.id]);
    expect((await ids({ namespace: '/orgs/NS2' })).sort()).toEqual([b.id, c.id].sort());
    const page = await request(t.app).get(registry).query({ limit: 2, page: 2 });
    expect(page.headers).toMatchObject({ num_found: '3', num_returned: '1', page_number: '2' });
    const bad = await request(t.app).get(registry).query({ namespace: 'nowhere' });
    expect(bad.status).toBe(400);
  });
});

describe('$lookup', () => {
  it('answers the repository an entry registers, through its namespace; 404 otherwise', async () => {
    const { org, admin } = await orgWithPeople(t);
    const url = canonical();
    const source = await createRepo(t, `/orgs/${org.id}`, admin, { canonical_url: url });
    await createEntry('/', t.admin, { url, namespace: `/orgs/${org.id}/` });
    const found = await request(t.app).post('/url-registry/$lookup/').query({ url });
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({
      type: 'Source',
      short_code: source.id,
      url: source.url,
      owner: org.id,
    });
    const none = await request(t.app).post('/url-registry/$lookup/').query({ url: canonical() });
    expect(none.status).toBe(404);
    const missing = await request(t.app).post('/url-registry/$lookup/');
    expect(missing.status).toBe(400);
    expect(missing.body.errors.url).toBeDefined();
    expect((await request(t.app).get('/url-registry/$lookup/').query({ url })).status).toBe(405);
    // An entry without a namespace, or whose namespace holds no such repository, resolves nowhere.
    const orphan = canonical();
    await createEntry('/', t.admin, { url: orphan });
    expect(
      (await request(t.app).post('/url-registry/$lookup/').query({ url: orphan })).status,
    ).toBe(404);
  });

  it('an owner registry overrides the global one and falls back on it', async () => {
    const { org, admin, member } = await orgWithPeople(t);
    const other = await orgWithPeople(t);
    const url = canonical();
    const globalTarget = await createRepo(t, `/orgs/${other.org.id}`, other.admin, {
      canonical_url: url,
    });
    const ownTarget = await createRepo(t, `/orgs/${org.id}`, admin, { canonical_url: url });
    await createEntry('/', t.admin, { url, namespace: `/orgs/${other.org.id}/` });
    const lookup = (registry: string) =>
      request(t.app).post(`${registry}url-registry/$lookup/`).query({ url });
    expect((await lookup(`/orgs/${org.id}/`)).body.url).toBe(globalTarget.url);
    await createEntry(`/orgs/${org.id}/`, member, { url, namespace: `/orgs/${org.id}/` });
    expect((await lookup(`/orgs/${org.id}/`)).body.url).toBe(ownTarget.url);
    expect((await lookup('/')).body.url).toBe(globalTarget.url);
    // The body may carry the url too.
    const viaBody = await request(t.app)
      .post(`/orgs/${org.id}/url-registry/$lookup/`)
      .send({ url });
    expect(viaBody.body.url).toBe(ownTarget.url);
  });

  it('a private repository is found only by those who may see it', async () => {
    const { org, admin, member, outsider } = await orgWithPeople(t);
    const url = canonical();
    await createRepo(t, `/orgs/${org.id}`, admin, { canonical_url: url, public_access: 'None' });
    await createEntry('/', t.admin, { url, namespace: `/orgs/${org.id}/` });
    const lookup = (user?: TestUser) =>
      request(t.app).post('/url-registry/$lookup/').query({ url }).set(as(user));
    expect((await lookup()).status).toBe(404);
    expect((await lookup(outsider)).status).toBe(404);
    expect((await lookup(member)).status).toBe(200);
  });
});
