import request from 'supertest';
import { createTestApp, createUser, uniqueId, type TestApp, type TestUser } from '../factories';
import { createRepo, createVersion, type Caller } from '../factories/content';
import { as } from '../factories/http';
import { orgWithPeople } from '../factories/people';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const createCollection = (owner: string, by: Caller, fields: Record<string, unknown> = {}) =>
  createRepo(t, owner, by, fields, 'collections');

const ids = (body: Array<{ id: string }>) => body.map((r) => r.id);

describe('POST {owner}/collections/ (spec core §4.5)', () => {
  it('creates an org collection from short_code with 201, Location and the detail', async () => {
    const { org, admin } = await orgWithPeople(t);
    const id = uniqueId('col');
    const res = await request(t.app)
      .post(`/orgs/${org.id}/collections/`)
      .set(as(admin))
      .send({ short_code: id, name: 'Starter Set', collection_type: 'Subset' });
    expect(res.status).toBe(201);
    const url = `/orgs/${org.id}/collections/${id}/`;
    expect(res.headers.location).toBe(url);
    expect(res.body).toMatchObject({
      type: 'Collection',
      id,
      short_code: id,
      name: 'Starter Set',
      full_name: 'Starter Set',
      collection_type: 'Subset',
      preferred_source: null,
      public_access: 'View',
      default_locale: 'en',
      supported_locales: 'en',
      external_id: null,
      website: null,
      description: null,
      extras: null,
      owner: org.id,
      owner_type: 'Organization',
      owner_url: `/orgs/${org.id}/`,
      url,
      versions_url: `${url}versions/`,
      concepts_url: `${url}concepts/`,
      mappings_url: `${url}mappings/`,
      references_url: `${url}references/`,
      expansions_url: `${url}expansions/`,
      versions: 1,
      active_concepts: 0,
      active_mappings: 0,
      version: 'HEAD',
      is_active: true,
      created_by: admin.username,
      updated_by: admin.username,
    });
    expect(res.body).not.toHaveProperty('source_type');
    expect(res.body).not.toHaveProperty('autoid_concept_mnemonic');
    // The detail read also names the default expansion (what the web client opens).
    expect((await request(t.app).get(url)).body).toEqual({
      ...res.body,
      expansion_url: `${url}HEAD/expansions/autoexpand-HEAD/`,
    });
  });

  it('keeps every documented field it is given', async () => {
    const { org, admin } = await orgWithPeople(t);
    const fields = {
      short_code: uniqueId('col'),
      name: 'HIV Set',
      full_name: 'HIV Indicators',
      external_id: 'x-9',
      collection_type: 'Value Set',
      public_access: 'Edit',
      preferred_source: 'CIEL',
      supported_locales: 'en,fr',
      website: 'https://hiv.example.org',
      description: 'Indicators',
      custom_validation_schema: 'OpenMRS',
      canonical_url: 'http://example.org/ValueSet/hiv',
      extras: { program: 'PEPFAR' },
    };
    const res = await request(t.app)
      .post(`/orgs/${org.id}/collections/`)
      .set(as(admin))
      .send(fields);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ ...fields, id: fields.short_code });
  });

  it('accepts id in place of short_code', async () => {
    const { org, admin } = await orgWithPeople(t);
    const id = uniqueId('col');
    const res = await request(t.app)
      .post(`/orgs/${org.id}/collections/`)
      .set(as(admin))
      .send({ id, name: 'By id' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ id, short_code: id });
  });

  it('creates in the caller’s space through /user/collections/', async () => {
    const user = await createUser(t);
    const id = uniqueId('col');
    const res = await request(t.app)
      .post('/user/collections/')
      .set(as(user))
      .send({ short_code: id, name: 'Mine' });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/users/${user.username}/collections/${id}/`);
    expect(res.body).toMatchObject({ owner: user.username, owner_type: 'User' });
  });

  it('refuses an id the owner already uses for a source or a collection, in any letter case', async () => {
    const { org, admin } = await orgWithPeople(t);
    const collection = await createCollection(`/orgs/${org.id}`, admin);
    const dup = await request(t.app)
      .post(`/orgs/${org.id}/collections/`)
      .set(as(admin))
      .send({ short_code: collection.id.toUpperCase(), name: 'Dup' });
    expect(dup.status).toBe(400);
    expect(dup.body.errors.id).toBeDefined();
    const sourceId = uniqueId('src');
    await createRepo(t, `/orgs/${org.id}`, admin, { id: sourceId, name: 'Source' });
    const clash = await request(t.app)
      .post(`/orgs/${org.id}/collections/`)
      .set(as(admin))
      .send({ short_code: sourceId, name: 'Clash' });
    expect(clash.status).toBe(400);
    expect(clash.body.errors.id).toBeDefined();
    expect((await request(t.app).get(`/orgs/${org.id}/collections/`)).body).toHaveLength(1);
  });

  it('rejects bad fields with 400 and a message per field, creating nothing', async () => {
    const { org, admin } = await orgWithPeople(t);
    const id = uniqueId('col');
    const res = await request(t.app)
      .post(`/orgs/${org.id}/collections/`)
      .set(as(admin))
      .send({
        short_code: id,
        name: '',
        public_access: 'Everyone',
        collection_type: ['Subset'],
        preferred_source: 12,
        website: 'example.org',
        extras: [1, 2],
      });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.errors).sort()).toEqual([
      'collection_type',
      'extras',
      'name',
      'preferred_source',
      'public_access',
      'website',
    ]);
    expect((await request(t.app).get(`/orgs/${org.id}/collections/${id}/`)).status).toBe(404);
  });

  it('answers 400 for a missing short_code and for one with a space', async () => {
    const { org, admin } = await orgWithPeople(t);
    for (const body of [{ name: 'No id' }, { short_code: 'two words', name: 'Space' }]) {
      const res = await request(t.app)
        .post(`/orgs/${org.id}/collections/`)
        .set(as(admin))
        .send(body);
      expect(res.status).toBe(400);
      expect(res.body.errors.id).toBeDefined();
    }
  });

  it("only the org's administrators and superusers create in an org (spec core §4.5)", async () => {
    const { org, admin, member, outsider } = await orgWithPeople(t);
    const send = (by: TestUser | string | undefined) =>
      request(t.app)
        .post(`/orgs/${org.id}/collections/`)
        .set(as(by))
        .send({ short_code: uniqueId('col'), name: 'Try' });
    expect((await send(undefined)).status).toBe(401);
    expect((await send(outsider)).status).toBe(403);
    expect((await send(member)).status).toBe(403);
    expect((await request(t.app).get(`/orgs/${org.id}/collections/`)).body).toHaveLength(0);
    expect((await send(admin)).status).toBe(201);
    expect((await send(t.admin)).status).toBe(201);
  });

  it('another user may not create in a user’s space', async () => {
    const user = await createUser(t);
    const other = await createUser(t);
    const res = await request(t.app)
      .post(`/users/${user.username}/collections/`)
      .set(as(other))
      .send({ short_code: uniqueId('col'), name: 'Intruder' });
    expect(res.status).toBe(403);
    expect((await request(t.app).get(`/users/${user.username}/collections/`)).body).toEqual([]);
  });
});

describe('GET {owner}/collections/:collection/[:version/]', () => {
  it('HEAD is the same at the collection URL and at /HEAD/; latest needs a released version', async () => {
    const { org, admin } = await orgWithPeople(t);
    const collection = await createCollection(`/orgs/${org.id}`, admin);
    const head = await request(t.app).get(`${collection.url}HEAD/`);
    expect(head.status).toBe(200);
    expect(head.body).toEqual((await request(t.app).get(collection.url)).body);
    expect((await request(t.app).get(`${collection.url}latest/`)).status).toBe(404);
    await createVersion(t, collection.url, admin, 'v1', { released: true });
    await createVersion(t, collection.url, admin, 'v2');
    const latest = await request(t.app).get(`${collection.url}latest/`);
    expect(latest.body).toMatchObject({ type: 'Collection Version', id: 'v1', released: true });
  });

  it('answers 404 for an unknown collection or version, and for a source under /collections/', async () => {
    const { org, admin } = await orgWithPeople(t);
    const collection = await createCollection(`/orgs/${org.id}`, admin);
    const sourceId = uniqueId('src');
    await createRepo(t, `/orgs/${org.id}`, admin, { id: sourceId, name: 'S' });
    for (const url of [
      `/orgs/${org.id}/collections/${uniqueId('none')}/`,
      `${collection.url}v404/`,
      `/orgs/${org.id}/collections/${sourceId}/`,
      `/orgs/${org.id}/collections/${sourceId}/versions/`,
    ]) {
      expect((await request(t.app).get(url).set('Authorization', t.admin)).status).toBe(404);
    }
  });
});

describe('editing a collection', () => {
  it('POST, PUT and PATCH change only the fields sent', async () => {
    const { org, admin } = await orgWithPeople(t);
    const collection = await createCollection(`/orgs/${org.id}`, admin, {
      collection_type: 'Subset',
      preferred_source: 'CIEL',
      description: 'Before',
    });
    const post = await request(t.app)
      .post(collection.url)
      .set(as(admin))
      .send({ description: 'After' });
    expect(post.status).toBe(200);
    const put = await request(t.app)
      .put(collection.url)
      .set(as(admin))
      .send({ collection_type: 'Value Set' });
    expect(put.status).toBe(200);
    const patch = await request(t.app)
      .patch(collection.url)
      .set(as(admin))
      .send({ supported_locales: 'en,sw', extras: { x: true } });
    expect(patch.status).toBe(200);
    expect(patch.body).toMatchObject({
      name: collection.body.name,
      description: 'After',
      collection_type: 'Value Set',
      preferred_source: 'CIEL',
      supported_locales: 'en,sw',
      extras: { x: true },
      updated_by: admin.username,
    });
  });

  it('short_code and id never change (400)', async () => {
    const { org, admin } = await orgWithPeople(t);
    const collection = await createCollection(`/orgs/${org.id}`, admin);
    for (const field of ['short_code', 'id']) {
      const res = await request(t.app)
        .patch(collection.url)
        .set(as(admin))
        .send({ [field]: 'other', name: 'Not applied' });
      expect(res.status).toBe(400);
      expect(res.body.errors[field]).toBeDefined();
    }
    expect((await request(t.app).get(collection.url)).body.name).toBe(collection.body.name);
  });

  it('an outsider may not edit (403), an anonymous caller neither (401)', async () => {
    const { org, admin, outsider } = await orgWithPeople(t);
    const collection = await createCollection(`/orgs/${org.id}`, admin);
    expect(
      (await request(t.app).post(collection.url).set(as(outsider)).send({ name: 'M' })).status,
    ).toBe(403);
    expect((await request(t.app).post(collection.url).send({ name: 'A' })).status).toBe(401);
    expect((await request(t.app).get(collection.url).set(as(admin))).body).toMatchObject(
      collection.body,
    );
  });

  it('versions keep the metadata they froze', async () => {
    const { org, admin } = await orgWithPeople(t);
    const collection = await createCollection(`/orgs/${org.id}`, admin, {
      name: 'Before',
      collection_type: 'Subset',
    });
    await createVersion(t, collection.url, admin, 'v1');
    await request(t.app)
      .patch(collection.url)
      .set(as(admin))
      .send({ name: 'After', collection_type: 'Value Set' });
    const v1 = await request(t.app).get(`${collection.url}v1/`);
    expect(v1.body).toMatchObject({ name: 'Before', collection_type: 'Subset' });
    expect((await request(t.app).get(collection.url)).body).toMatchObject({
      name: 'After',
      collection_type: 'Value Set',
    });
  });
});

describe('collection versions', () => {
  it('creates, lists newest first with HEAD last, and chains previous_version', async () => {
    const { org, admin } = await orgWithPeople(t);
    const collection = await createCollection(`/orgs/${org.id}`, admin);
    const res = await request(t.app)
      .post(`${collection.url}versions/`)
      .set(as(admin))
      .send({ id: 'v1', description: 'First' });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`${collection.url}v1/`);
    expect(res.body).toMatchObject({
      type: 'Collection Version',
      id: 'v1',
      short_code: collection.id,
      released: false,
      previous_version: null,
      description: 'First',
      versions: 2,
      references_url: `${collection.url}v1/references/`,
    });
    await createVersion(t, collection.url, admin, 'v2');
    const list = await request(t.app).get(`${collection.url}versions/`);
    expect(
      list.body.map((v: { id: string; type: string; previous_version: string | null }) => [
        v.id,
        v.type,
        v.previous_version,
      ]),
    ).toEqual([
      ['v2', 'Collection Version', 'v1'],
      ['v1', 'Collection Version', null],
      ['HEAD', 'Collection', null],
    ]);
  });

  it('answers 400 for reserved or missing ids and unknown previous versions, 409 for duplicates', async () => {
    const { org, admin } = await orgWithPeople(t);
    const collection = await createCollection(`/orgs/${org.id}`, admin);
    await createVersion(t, collection.url, admin, 'v1');
    const post = (body: object) =>
      request(t.app).post(`${collection.url}versions/`).set(as(admin)).send(body);
    for (const body of [{}, { id: 'HEAD' }, { id: 'Latest' }]) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(res.body.errors.id).toBeDefined();
    }
    const unknownPrevious = await post({ id: 'v2', previous_version: 'v0' });
    expect(unknownPrevious.status).toBe(400);
    expect(unknownPrevious.body.errors.previous_version).toBeDefined();
    expect((await post({ id: 'V1' })).status).toBe(409);
    expect((await request(t.app).get(`${collection.url}versions/`)).body).toHaveLength(2);
  });

  it('edits released, retired and description of a version; its id stays', async () => {
    const { org, admin } = await orgWithPeople(t);
    const collection = await createCollection(`/orgs/${org.id}`, admin);
    await createVersion(t, collection.url, admin, 'v1');
    const res = await request(t.app)
      .patch(`${collection.url}v1/`)
      .set(as(admin))
      .send({ released: true, retired: true, description: 'Done' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ released: true, retired: true, description: 'Done' });
    const renamed = await request(t.app)
      .patch(`${collection.url}v1/`)
      .set(as(admin))
      .send({ id: 'v2' });
    expect(renamed.status).toBe(400);
    expect(renamed.body.errors.id).toBeDefined();
    const read = await request(t.app).get(`${collection.url}v1/`).set(as(admin));
    expect(read.body).toMatchObject({
      id: 'v1',
      released: true,
      retired: true,
      description: 'Done',
    });
    expect((await request(t.app).get(`${collection.url}v2/`).set(as(admin))).status).toBe(404);
  });

  it('deletes a version (204), never HEAD (405), never one another is based on (409)', async () => {
    const { org, admin } = await orgWithPeople(t);
    const collection = await createCollection(`/orgs/${org.id}`, admin);
    await createVersion(t, collection.url, admin, 'v1');
    await createVersion(t, collection.url, admin, 'v2');
    expect((await request(t.app).delete(`${collection.url}HEAD/`).set(as(admin))).status).toBe(405);
    expect((await request(t.app).delete(`${collection.url}v1/`).set(as(admin))).status).toBe(409);
    expect((await request(t.app).delete(`${collection.url}v2/`).set(as(admin))).status).toBe(204);
    expect((await request(t.app).get(`${collection.url}v2/`)).status).toBe(404);
    expect((await request(t.app).delete(`${collection.url}v1/`).set(as(admin))).status).toBe(204);
    const list = await request(t.app).get(`${collection.url}versions/`);
    expect(ids(list.body)).toEqual(['HEAD']);
  });

  it('an outsider may not create versions (403)', async () => {
    const { org, admin, outsider } = await orgWithPeople(t);
    const collection = await createCollection(`/orgs/${org.id}`, admin);
    const res = await request(t.app)
      .post(`${collection.url}versions/`)
      .set(as(outsider))
      .send({ id: 'v1' });
    expect(res.status).toBe(403);
    expect((await request(t.app).get(`${collection.url}v1/`)).status).toBe(404);
  });
});

describe('DELETE {owner}/collections/:collection/ deactivates (spec core §3)', () => {
  it('204, then 404 to everyone but a superuser, who sees is_active false', async () => {
    const { org, admin, member } = await orgWithPeople(t);
    const collection = await createCollection(`/orgs/${org.id}`, admin);
    await createVersion(t, collection.url, admin, 'v1');
    const res = await request(t.app).delete(collection.url).set(as(admin));
    expect(res.status).toBe(204);
    for (const caller of [undefined, member, admin]) {
      expect((await request(t.app).get(collection.url).set(as(caller))).status).toBe(404);
      expect((await request(t.app).get(`${collection.url}versions/`).set(as(caller))).status).toBe(
        404,
      );
      expect((await request(t.app).get(`${collection.url}v1/`).set(as(caller))).status).toBe(404);
    }
    const seen = await request(t.app).get(collection.url).set('Authorization', t.admin);
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ id: collection.id, is_active: false });
    expect(
      (await request(t.app).get(`${collection.url}v1/`).set('Authorization', t.admin)).status,
    ).toBe(200);
  });

  it('a deactivated collection leaves every list, even a superuser’s', async () => {
    const { org, admin } = await orgWithPeople(t);
    const kept = await createCollection(`/orgs/${org.id}`, admin);
    const gone = await createCollection(`/orgs/${org.id}`, admin);
    await request(t.app).delete(gone.url).set(as(admin));
    for (const caller of [undefined, admin, t.admin]) {
      const owned = await request(t.app).get(`/orgs/${org.id}/collections/`).set(as(caller));
      expect(ids(owned.body)).toEqual([kept.id]);
      const repos = await request(t.app).get(`/orgs/${org.id}/repos/`).set(as(caller));
      expect(ids(repos.body)).toEqual([kept.id]);
      const global = await request(t.app)
        .get('/collections/')
        .query({ q: gone.id })
        .set(as(caller));
      expect(global.body).toEqual([]);
    }
    const versions = await request(t.app)
      .get(`/orgs/${org.id}/collections/`)
      .query({ allVersions: 'true' })
      .set('Authorization', t.admin);
    expect(ids(versions.body)).toEqual([kept.id]);
  });

  it('its id stays taken by the owner', async () => {
    const { org, admin } = await orgWithPeople(t);
    const collection = await createCollection(`/orgs/${org.id}`, admin);
    await request(t.app).delete(collection.url).set(as(admin));
    const again = await request(t.app)
      .post(`/orgs/${org.id}/collections/`)
      .set(as(admin))
      .send({ short_code: collection.id, name: 'Again' });
    expect(again.status).toBe(400);
    expect(again.body.errors.id).toBeDefined();
    const asSource = await request(t.app)
      .post(`/orgs/${org.id}/sources/`)
      .set(as(admin))
      .send({ id: collection.id, name: 'Again' });
    expect(asSource.status).toBe(400);
  });

  it('a second DELETE by the org administrator answers 404', async () => {
    const { org, admin } = await orgWithPeople(t);
    const collection = await createCollection(`/orgs/${org.id}`, admin);
    expect((await request(t.app).delete(collection.url).set(as(admin))).status).toBe(204);
    expect((await request(t.app).delete(collection.url).set(as(admin))).status).toBe(404);
    expect((await request(t.app).get(collection.url).set(as(admin))).status).toBe(404);
    const seen = await request(t.app).get(collection.url).set('Authorization', t.admin);
    expect(seen.body.is_active).toBe(false);
  });

  it('is refused to outsiders (403) and anonymous callers (401)', async () => {
    const { org, admin, outsider } = await orgWithPeople(t);
    const collection = await createCollection(`/orgs/${org.id}`, admin);
    expect((await request(t.app).delete(collection.url).set(as(outsider))).status).toBe(403);
    expect((await request(t.app).delete(collection.url)).status).toBe(401);
    expect((await request(t.app).get(collection.url)).body.is_active).toBe(true);
  });

  it('the owning user deactivates a user collection', async () => {
    const user = await createUser(t);
    const collection = await createCollection('/user', user);
    expect((await request(t.app).delete(collection.url).set(as(user))).status).toBe(204);
    expect((await request(t.app).get(collection.url).set(as(user))).status).toBe(404);
    expect((await request(t.app).get('/user/collections/').set(as(user))).body).toEqual([]);
  });
});

describe('collection lists', () => {
  it('contains filters out collections that reference nothing, without error', async () => {
    const { org, admin } = await orgWithPeople(t);
    const collection = await createCollection(`/orgs/${org.id}`, admin);
    const contains = `/orgs/${org.id}/sources/S/concepts/1/`;
    for (const url of [`/orgs/${org.id}/collections/`, '/collections/', '/repos/']) {
      const res = await request(t.app).get(url).query({ contains, q: collection.id });
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    }
    const without = await request(t.app).get(`/orgs/${org.id}/collections/`);
    expect(ids(without.body)).toEqual([collection.id]);
  });

  it('collection summaries carry the collection fields', async () => {
    const { org, admin } = await orgWithPeople(t);
    const collection = await createCollection(`/orgs/${org.id}`, admin, {
      collection_type: 'Subset',
    });
    const res = await request(t.app).get(`/orgs/${org.id}/collections/`);
    expect(res.body).toEqual([
      {
        type: 'Collection',
        id: collection.id,
        short_code: collection.id,
        name: collection.body.name,
        url: collection.url,
        owner: org.id,
        owner_type: 'Organization',
        owner_url: `/orgs/${org.id}/`,
        version: 'HEAD',
        collection_type: 'Subset',
      },
    ]);
  });
});
