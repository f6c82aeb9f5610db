import request from 'supertest';
import {
  addMember,
  createTestApp,
  createUser,
  uniqueId,
  type TestApp,
  type TestUser,
} from '../factories';
import {
  createConcept,
  createMappingBetween,
  createRepo,
  createVersion,
  retire,
  type Caller,
  type TestRepo,
} from '../factories/content';
import { as } from '../factories/http';
import { orgWithPeople } from '../factories/people';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/** A source created through the API; `owner` is the path prefix (`/orgs/x`, `/users/u`, `/user`). */
const createSource = (owner: string, by: Caller, fields: Record<string, unknown> = {}) =>
  createRepo(t, owner, by, fields);

const AUTO_ID_FIELDS = [
  'autoid_concept_mnemonic',
  'autoid_concept_external_id',
  'autoid_mapping_mnemonic',
  'autoid_mapping_external_id',
  'autoid_concept_mnemonic_start_from',
  'autoid_concept_external_id_start_from',
  'autoid_mapping_mnemonic_start_from',
  'autoid_mapping_external_id_start_from',
  'autoid_concept_name_external_id',
  'autoid_concept_description_external_id',
];

describe('POST {owner}/sources/ (spec core §4.6)', () => {
  it('creates an org source with 201, Location and the detail with its defaults', async () => {
    const { org, admin } = await orgWithPeople(t);
    const id = uniqueId('src');
    const res = await request(t.app)
      .post(`/orgs/${org.id}/sources/`)
      .set(as(admin))
      .send({ id, name: 'Diagnoses' });
    expect(res.status).toBe(201);
    const url = `/orgs/${org.id}/sources/${id}/`;
    expect(res.headers.location).toBe(url);
    expect(res.body).toMatchObject({
      type: 'Source',
      id,
      short_code: id,
      name: 'Diagnoses',
      full_name: 'Diagnoses',
      source_type: 'dictionary',
      public_access: 'View',
      default_locale: 'en',
      supported_locales: 'en',
      external_id: null,
      website: null,
      description: null,
      custom_validation_schema: null,
      canonical_url: null,
      extras: null,
      owner: org.id,
      owner_type: 'Organization',
      owner_url: `/orgs/${org.id}/`,
      url,
      versions_url: `${url}versions/`,
      concepts_url: `${url}concepts/`,
      mappings_url: `${url}mappings/`,
      versions: 1,
      active_concepts: 0,
      active_mappings: 0,
      version: 'HEAD',
      created_by: admin.username,
      updated_by: admin.username,
    });
    for (const field of AUTO_ID_FIELDS) expect(res.body[field]).toBeNull();
    expect(typeof res.body.uuid).toBe('string');
    expect(new Date(res.body.created_on as string).toISOString()).toBe(res.body.created_on);
    expect(res.body).not.toHaveProperty('collection_type');
    const get = await request(t.app).get(url);
    expect(get.status).toBe(200);
    expect(get.body).toEqual(res.body);
  });

  it('keeps every documented field it is given', async () => {
    const { org, admin } = await orgWithPeople(t);
    const fields = {
      id: uniqueId('src'),
      name: 'Labs',
      full_name: 'Laboratory Tests',
      external_id: 'ext-77',
      source_type: 'reference',
      public_access: 'Edit',
      default_locale: 'es',
      supported_locales: 'es,en',
      website: 'https://labs.example.org',
      description: 'All the lab tests',
      custom_validation_schema: 'OpenMRS',
      canonical_url: 'http://example.org/fhir/CodeSystem/labs',
      extras: { program: 'FY19', nested: { level: 2 } },
      autoid_concept_mnemonic: 'sequential',
      autoid_concept_external_id: 'uuid',
      autoid_mapping_mnemonic: 'uuid',
      autoid_mapping_external_id: 'sequential',
      autoid_concept_mnemonic_start_from: 1000,
      autoid_concept_external_id_start_from: 5,
      autoid_mapping_mnemonic_start_from: 0,
      autoid_mapping_external_id_start_from: 42,
      autoid_concept_name_external_id: 'uuid',
      autoid_concept_description_external_id: 'uuid',
    };
    const res = await request(t.app).post(`/orgs/${org.id}/sources/`).set(as(admin)).send(fields);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ ...fields, short_code: fields.id });
    const get = await request(t.app).get(res.headers.location);
    expect(get.body).toMatchObject(fields);
  });

  it('always lists the default locale among the supported ones', async () => {
    const { org, admin } = await orgWithPeople(t);
    const fr = await createSource(`/orgs/${org.id}`, admin, {
      default_locale: 'fr',
      supported_locales: 'en,es',
    });
    expect(fr.body).toMatchObject({ default_locale: 'fr', supported_locales: 'fr,en,es' });
    const list = await createSource(`/orgs/${org.id}`, admin, { supported_locales: ['es', 'en'] });
    expect(list.body).toMatchObject({ default_locale: 'en', supported_locales: 'es,en' });
    const onlyDefault = await createSource(`/orgs/${org.id}`, admin, { default_locale: 'pt-BR' });
    expect(onlyDefault.body).toMatchObject({
      default_locale: 'pt-BR',
      supported_locales: 'pt-BR',
    });
  });

  it('creates in the caller’s own space through /user/sources/ and /users/:user/sources/', async () => {
    const user = await createUser(t);
    const viaSelf = uniqueId('src');
    const res = await request(t.app)
      .post('/user/sources/')
      .set(as(user))
      .send({ id: viaSelf, name: 'Mine' });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/users/${user.username}/sources/${viaSelf}/`);
    expect(res.body).toMatchObject({
      owner: user.username,
      owner_type: 'User',
      owner_url: `/users/${user.username}/`,
    });
    const viaName = await createSource(`/users/${user.username}`, user);
    expect(viaName.url).toBe(`/users/${user.username}/sources/${viaName.id}/`);
    expect((await request(t.app).get(`/users/${user.username}/sources/${viaSelf}/`)).status).toBe(
      200,
    );
  });

  it('accepts short_code in place of id, and refuses both when they differ', async () => {
    const { org, admin } = await orgWithPeople(t);
    const id = uniqueId('src');
    const res = await request(t.app)
      .post(`/orgs/${org.id}/sources/`)
      .set(as(admin))
      .send({ short_code: id, name: 'By short code' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ id, short_code: id });
    const other = uniqueId('src');
    const differ = await request(t.app)
      .post(`/orgs/${org.id}/sources/`)
      .set(as(admin))
      .send({ id: other, short_code: `${other}-x`, name: 'Differ' });
    expect(differ.status).toBe(400);
    expect(differ.body.errors.short_code).toBeDefined();
    expect((await request(t.app).get(`/orgs/${org.id}/sources/${other}/`)).status).toBe(404);
  });

  it('refuses an id the owner already uses for a source or a collection, in any letter case', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    const dup = await request(t.app)
      .post(`/orgs/${org.id}/sources/`)
      .set(as(admin))
      .send({ id: source.id.toUpperCase(), name: 'Dup' });
    expect(dup.status).toBe(400);
    expect(dup.body.errors.id[0]).toMatch(/already has/);
    const collectionId = uniqueId('col');
    const col = await request(t.app)
      .post(`/orgs/${org.id}/collections/`)
      .set(as(admin))
      .send({ short_code: collectionId, name: 'A collection' });
    expect(col.status).toBe(201);
    const clash = await request(t.app)
      .post(`/orgs/${org.id}/sources/`)
      .set(as(admin))
      .send({ id: collectionId, name: 'Clash' });
    expect(clash.status).toBe(400);
    expect(clash.body.errors.id).toBeDefined();
    expect((await request(t.app).get(`/orgs/${org.id}/sources/${collectionId}/`)).status).toBe(404);
  });

  it('lets another owner reuse the id', async () => {
    const first = await orgWithPeople(t);
    const second = await orgWithPeople(t);
    const source = await createSource(`/orgs/${first.org.id}`, first.admin);
    const again = await createSource(`/orgs/${second.org.id}`, second.admin, { id: source.id });
    expect(again.url).toBe(`/orgs/${second.org.id}/sources/${source.id}/`);
    const mine = await createSource(`/users/${first.admin.username}`, first.admin, {
      id: source.id,
    });
    expect(mine.body.owner_type).toBe('User');
  });

  it('rejects bad fields with 400 and a message per field, creating nothing', async () => {
    const { org, admin } = await orgWithPeople(t);
    const id = uniqueId('src');
    const res = await request(t.app).post(`/orgs/${org.id}/sources/`).set(as(admin)).send({
      id,
      name: '   ',
      public_access: 'Sometimes',
      website: 'ftp://files.example.org',
      default_locale: 'x',
      canonical_url: 'not a uri',
      extras: 'not an object',
      source_type: 7,
      autoid_concept_mnemonic: 'random',
      autoid_mapping_mnemonic_start_from: -1,
      autoid_concept_external_id_start_from: 1.5,
      autoid_concept_name_external_id: 'sequential',
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('Bad Request');
    expect(Object.keys(res.body.errors).sort()).toEqual(
      [
        'autoid_concept_external_id_start_from',
        'autoid_concept_mnemonic',
        'autoid_concept_name_external_id',
        'autoid_mapping_mnemonic_start_from',
        'canonical_url',
        'default_locale',
        'extras',
        'name',
        'public_access',
        'source_type',
        'website',
      ].sort(),
    );
    expect((await request(t.app).get(`/orgs/${org.id}/sources/${id}/`)).status).toBe(404);
  });

  it.each([
    ['a missing id', { name: 'No id' }, 'id'],
    ['an id with a slash', { id: 'a/b', name: 'Slash' }, 'id'],
    ['an id over 100 characters', { id: 'x'.repeat(101), name: 'Long' }, 'id'],
    ['a missing name', { id: 'no-name-here' }, 'name'],
  ])('answers 400 for %s', async (_what, body, field) => {
    const { org, admin } = await orgWithPeople(t);
    const res = await request(t.app).post(`/orgs/${org.id}/sources/`).set(as(admin)).send(body);
    expect(res.status).toBe(400);
    expect(res.body.errors[field]).toBeDefined();
    expect((await request(t.app).get(`/orgs/${org.id}/sources/`)).body).toEqual([]);
  });

  it('answers 400 for a malformed supported locale, creating nothing', async () => {
    const { org, admin } = await orgWithPeople(t);
    const id = uniqueId('src');
    const res = await request(t.app)
      .post(`/orgs/${org.id}/sources/`)
      .set(as(admin))
      .send({ id, name: 'Locales', supported_locales: 'en,not a locale' });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/locale/);
    expect((await request(t.app).get(`/orgs/${org.id}/sources/${id}/`)).status).toBe(404);
  });

  it("only the org's administrators and superusers create in an org (spec core §4.6)", async () => {
    const { org, admin, member, outsider } = await orgWithPeople(t);
    const send = (by: TestUser | string | undefined) =>
      request(t.app)
        .post(`/orgs/${org.id}/sources/`)
        .set(as(by))
        .send({ id: uniqueId('src'), name: 'Try' });
    expect((await send(undefined)).status).toBe(401);
    expect((await send(outsider)).status).toBe(403);
    expect((await send(member)).status).toBe(403);
    expect((await send(admin)).status).toBe(201);
    const bySuperuser = await send(t.admin);
    expect(bySuperuser.status).toBe(201);
    expect(bySuperuser.body.created_by).toBe('ocladmin');
    expect((await request(t.app).get(`/orgs/${org.id}/sources/`)).body).toHaveLength(2);
  });

  it('only the user (or a superuser) creates in a user’s space', async () => {
    const user = await createUser(t);
    const other = await createUser(t);
    const send = (by: TestUser | string | undefined) =>
      request(t.app)
        .post(`/users/${user.username}/sources/`)
        .set(as(by))
        .send({ id: uniqueId('src'), name: 'Try' });
    expect((await send(undefined)).status).toBe(401);
    expect((await send(other)).status).toBe(403);
    expect((await send(user)).status).toBe(201);
    const bySuperuser = await send(t.admin);
    expect(bySuperuser.status).toBe(201);
    expect(bySuperuser.body.owner).toBe(user.username);
    const anonymousSelf = await request(t.app)
      .post('/user/sources/')
      .send({ id: uniqueId('src'), name: 'Nobody' });
    expect(anonymousSelf.status).toBe(401);
  });

  it('answers 404 for an owner that does not exist', async () => {
    const res = await request(t.app)
      .post(`/orgs/${uniqueId('ghost')}/sources/`)
      .set('Authorization', t.admin)
      .send({ id: uniqueId('src'), name: 'Nowhere' });
    expect(res.status).toBe(404);
    const user = await request(t.app)
      .post(`/users/${uniqueId('ghost')}/sources/`)
      .set('Authorization', t.admin)
      .send({ id: uniqueId('src'), name: 'Nowhere' });
    expect(user.status).toBe(404);
  });
});

describe('GET {owner}/sources/:source/[:version/] (spec core §4.6, §9.2)', () => {
  it('HEAD is the same at the source URL and at /HEAD/', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin, { description: 'Current' });
    const plain = await request(t.app).get(source.url);
    const head = await request(t.app).get(`${source.url}HEAD/`);
    expect(head.status).toBe(200);
    expect(head.body).toEqual(plain.body);
    expect(head.body).toMatchObject({ version: 'HEAD', url: source.url, id: source.id });
  });

  it('a version URL shows the version, with its fields and the repository’s', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    await createVersion(t, source.url, admin, 'v1');
    const created = await createVersion(t, source.url, admin, 'v2', {
      description: 'Second release',
      external_id: 'ext-v2',
      extras: { batch: 7 },
    });
    const res = await request(t.app).get(`${source.url}v2/`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created);
    expect(res.body).toMatchObject({
      type: 'Source Version',
      id: 'v2',
      short_code: source.id,
      name: source.body.name,
      version: 'v2',
      url: `${source.url}v2/`,
      version_url: `${source.url}v2/`,
      versions_url: `${source.url}versions/`,
      concepts_url: `${source.url}v2/concepts/`,
      mappings_url: `${source.url}v2/mappings/`,
      previous_version: 'v1',
      previous_version_url: `${source.url}v1/`,
      released: false,
      retired: false,
      description: 'Second release',
      version_external_id: 'ext-v2',
      version_extras: { batch: 7 },
      _svc_processing: false,
      versions: 3,
      created_by: admin.username,
      owner: org.id,
    });
    expect(res.body.uuid).not.toBe(source.body.uuid);
  });

  it('latest is the newest released version, and 404 while none is released', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    expect((await request(t.app).get(`${source.url}latest/`)).status).toBe(404);
    await createVersion(t, source.url, admin, 'v1', { released: true });
    await createVersion(t, source.url, admin, 'v2', { released: true });
    await createVersion(t, source.url, admin, 'v3');
    const latest = await request(t.app).get(`${source.url}latest/`);
    expect(latest.status).toBe(200);
    expect(latest.body).toMatchObject({ id: 'v2', released: true });
    await request(t.app).patch(`${source.url}v2/`).set(as(admin)).send({ released: false });
    expect((await request(t.app).get(`${source.url}latest/`)).body.id).toBe('v1');
    await request(t.app).post(`${source.url}v3/`).set(as(admin)).send({ released: true });
    expect((await request(t.app).get(`${source.url}latest/`)).body.id).toBe('v3');
  });

  it('answers 404 for an unknown source, version or owner, and for a collection under /sources/', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    const collectionId = uniqueId('col');
    await createRepo(
      t,
      `/orgs/${org.id}`,
      admin,
      { short_code: collectionId, name: 'C' },
      'collections',
    );
    for (const url of [
      `/orgs/${org.id}/sources/${uniqueId('none')}/`,
      `${source.url}nope/`,
      `/orgs/${uniqueId('ghost')}/sources/${source.id}/`,
      `/users/${admin.username}/sources/${source.id}/`,
      `/orgs/${org.id}/sources/${collectionId}/`,
      `/orgs/${org.id}/sources/${collectionId}/versions/`,
    ]) {
      const res = await request(t.app).get(url).set('Authorization', t.admin);
      expect({ url, status: res.status }).toEqual({ url, status: 404 });
    }
    expect((await request(t.app).get(`/orgs/${org.id}/collections/${source.id}/`)).status).toBe(
      404,
    );
  });
});

describe('editing a source (POST/PUT/PATCH {owner}/sources/:source/)', () => {
  it.each(['post', 'put', 'patch'] as const)(
    '%s changes only the fields sent, at HEAD',
    async (method) => {
      const { org, admin } = await orgWithPeople(t);
      const source = await createSource(`/orgs/${org.id}`, admin, {
        full_name: 'Full',
        description: 'Before',
        website: 'https://before.example.org',
        extras: { a: 1 },
        source_type: 'reference',
      });
      const editor = await createUser(t);
      await addMember(t, org.id, admin, editor, 'admin');
      const agent = request(t.app);
      const res = await agent[method](source.url)
        .set(as(editor))
        .send({ description: 'After', extras: { b: 2 } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        name: source.body.name,
        full_name: 'Full',
        description: 'After',
        website: 'https://before.example.org',
        extras: { b: 2 },
        source_type: 'reference',
        updated_by: editor.username,
        created_by: admin.username,
        versions: 1,
      });
      expect((await request(t.app).get(source.url)).body).toEqual(res.body);
    },
  );

  it('changes every editable field, and clears optional ones with null', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin, {
      website: 'https://w.example.org',
      canonical_url: 'http://example.org/cs',
      autoid_concept_mnemonic: 'sequential',
      autoid_concept_mnemonic_start_from: 10,
    });
    const changes = {
      name: 'Renamed',
      full_name: 'Renamed In Full',
      external_id: 'e-1',
      source_type: 'externalDictionary',
      public_access: 'Edit',
      default_locale: 'fr',
      supported_locales: 'fr,en',
      custom_validation_schema: 'OpenMRS',
      autoid_mapping_mnemonic: 'uuid',
    };
    const res = await request(t.app).patch(source.url).set(as(admin)).send(changes);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      ...changes,
      autoid_concept_mnemonic: 'sequential',
      autoid_concept_mnemonic_start_from: 10,
    });
    const cleared = await request(t.app).patch(source.url).set(as(admin)).send({
      website: null,
      canonical_url: null,
      autoid_concept_mnemonic: null,
      autoid_concept_mnemonic_start_from: null,
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({
      website: null,
      canonical_url: null,
      autoid_concept_mnemonic: null,
      autoid_concept_mnemonic_start_from: null,
      autoid_mapping_mnemonic: 'uuid',
      name: 'Renamed',
    });
    const read = await request(t.app).get(source.url).set(as(admin));
    expect(read.body).toEqual(cleared.body);
  });

  it('a blank full_name falls back to the name', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin, { full_name: 'Long Form' });
    const res = await request(t.app).patch(source.url).set(as(admin)).send({ full_name: '' });
    expect(res.status).toBe(200);
    expect(res.body.full_name).toBe(source.body.name);
  });

  it('a new default locale joins the supported locales', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin, { supported_locales: 'en,es' });
    const res = await request(t.app)
      .patch(source.url)
      .set(as(admin))
      .send({ default_locale: 'sw' });
    expect(res.body).toMatchObject({ default_locale: 'sw', supported_locales: 'sw,en,es' });
  });

  it('the id and short_code never change (400); sending them unchanged is accepted', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    for (const field of ['id', 'short_code']) {
      const res = await request(t.app)
        .put(source.url)
        .set(as(admin))
        .send({ [field]: `${source.id}-renamed`, name: 'Should not apply' });
      expect(res.status).toBe(400);
      expect(res.body.errors[field]).toBeDefined();
    }
    const same = await request(t.app)
      .put(source.url)
      .set(as(admin))
      .send({ id: source.id, short_code: source.id, name: 'Same id' });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ id: source.id, name: 'Same id' });
    expect((await request(t.app).get(`/orgs/${org.id}/sources/${source.id}-renamed/`)).status).toBe(
      404,
    );
  });

  it('rejects bad fields with 400 and changes nothing', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    const res = await request(t.app)
      .patch(source.url)
      .set(as(admin))
      .send({ name: '', description: 'Not applied', public_access: 'Open', website: 'nope' });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.errors).sort()).toEqual(['name', 'public_access', 'website']);
    expect((await request(t.app).get(source.url)).body).toEqual(source.body);
  });

  it('POST on /HEAD/ edits the source metadata', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    const res = await request(t.app)
      .post(`${source.url}HEAD/`)
      .set(as(admin))
      .send({ description: 'Via HEAD' });
    expect(res.status).toBe(200);
    expect((await request(t.app).get(source.url)).body.description).toBe('Via HEAD');
  });

  it('versions keep the metadata they froze; edits go to HEAD only', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin, {
      name: 'Original',
      description: 'Original description',
      extras: { edition: 1 },
      supported_locales: 'en',
    });
    await createVersion(t, source.url, admin, 'v1');
    await request(t.app)
      .patch(source.url)
      .set(as(admin))
      .send({
        name: 'Renamed',
        description: 'New description',
        extras: { edition: 2 },
        supported_locales: 'en,fr',
        source_type: 'reference',
      });
    const v1 = await request(t.app).get(`${source.url}v1/`);
    expect(v1.body).toMatchObject({
      name: 'Original',
      description: 'Original description',
      extras: { edition: 1 },
      supported_locales: 'en',
      source_type: 'dictionary',
    });
    const head = await request(t.app).get(source.url);
    expect(head.body).toMatchObject({ name: 'Renamed', supported_locales: 'en,fr' });
    const v2 = await createVersion(t, source.url, admin, 'v2');
    expect(v2).toMatchObject({ name: 'Renamed', extras: { edition: 2 } });
    const list = await request(t.app).get(`${source.url}versions/`);
    expect(list.body.map((v: { id: string; name: string }) => [v.id, v.name])).toEqual([
      ['v2', 'Renamed'],
      ['v1', 'Original'],
      ['HEAD', 'Renamed'],
    ]);
  });
});

describe('DELETE {owner}/sources/:source/', () => {
  it('204, then 404 for the source and its versions; the id is free again', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    await createVersion(t, source.url, admin, 'v1');
    const res = await request(t.app).delete(source.url).set(as(admin));
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    for (const url of [source.url, `${source.url}v1/`, `${source.url}versions/`]) {
      expect((await request(t.app).get(url).set('Authorization', t.admin)).status).toBe(404);
    }
    expect((await request(t.app).get(`/orgs/${org.id}/sources/`)).body).toEqual([]);
    expect((await request(t.app).delete(source.url).set(as(admin))).status).toBe(404);
    const again = await createSource(`/orgs/${org.id}`, admin, { id: source.id });
    expect(again.body.versions).toBe(1);
  });

  it('is refused to anonymous callers (401), outsiders and plain members (403); administrators may (spec core §5 rule 7)', async () => {
    const { org, admin, member, outsider } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    expect((await request(t.app).delete(source.url)).status).toBe(401);
    expect((await request(t.app).delete(source.url).set(as(outsider))).status).toBe(403);
    expect((await request(t.app).delete(source.url).set(as(member))).status).toBe(403);
    expect((await request(t.app).get(source.url)).status).toBe(200);
    expect((await request(t.app).delete(source.url).set(as(admin))).status).toBe(204);
    expect((await request(t.app).get(source.url)).status).toBe(404);
  });

  it('the owning user deletes a user source', async () => {
    const user = await createUser(t);
    const source = await createSource('/user', user);
    expect((await request(t.app).delete(source.url).set(as(user))).status).toBe(204);
    expect((await request(t.app).get(source.url)).status).toBe(404);
  });
});

describe('source versions (spec core §4.6, §9)', () => {
  it('a new source lists only HEAD', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    const res = await request(t.app).get(`${source.url}versions/`);
    expect(res.status).toBe(200);
    expect(res.headers.num_found).toBe('1');
    expect(res.body).toEqual([
      {
        type: 'Source',
        id: 'HEAD',
        short_code: source.id,
        name: source.body.name,
        url: source.url,
        version_url: `${source.url}HEAD/`,
        description: null,
        released: false,
        retired: false,
        previous_version: null,
        owner: org.id,
        owner_type: 'Organization',
        owner_url: `/orgs/${org.id}/`,
        created_on: expect.any(String),
        created_by: admin.username,
      },
    ]);
  });

  it('creates a version: 201, Location, unreleased, previous_version the newest one', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    const first = await request(t.app)
      .post(`${source.url}versions/`)
      .set(as(admin))
      .send({ id: 'v1', description: 'First' });
    expect(first.status).toBe(201);
    expect(first.headers.location).toBe(`${source.url}v1/`);
    expect(first.body).toMatchObject({
      type: 'Source Version',
      id: 'v1',
      released: false,
      retired: false,
      previous_version: null,
      previous_version_url: null,
      description: 'First',
      versions: 2,
    });
    const second = await createVersion(t, source.url, admin, 'v2');
    expect(second).toMatchObject({ previous_version: 'v1', versions: 3 });
    const third = await createVersion(t, source.url, admin, '2024-01.a');
    expect(third.previous_version).toBe('v2');
    const list = await request(t.app).get(`${source.url}versions/`);
    expect(list.body.map((v: { id: string }) => v.id)).toEqual(['2024-01.a', 'v2', 'v1', 'HEAD']);
    // As OCL lists versions: `url` is the source's, `version_url` the version's.
    expect(list.body[0]).toMatchObject({
      type: 'Source Version',
      url: source.url,
      version_url: `${source.url}2024-01.a/`,
      previous_version: 'v2',
    });
    expect((await request(t.app).get(source.url)).body.versions).toBe(4);
  });

  it('keeps a previous_version that is given, and released true when asked', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    await createVersion(t, source.url, admin, 'v1');
    await createVersion(t, source.url, admin, 'v2');
    const branch = await createVersion(t, source.url, admin, 'v1.1', {
      previous_version: 'v1',
      released: true,
    });
    expect(branch).toMatchObject({ previous_version: 'v1', released: true });
    expect((await request(t.app).get(`${source.url}latest/`)).body.id).toBe('v1.1');
  });

  it('answers 400 when previous_version names no version, creating nothing', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    const res = await request(t.app)
      .post(`${source.url}versions/`)
      .set(as(admin))
      .send({ id: 'v1', previous_version: 'v0' });
    expect(res.status).toBe(400);
    expect(res.body.errors.previous_version).toBeDefined();
    expect((await request(t.app).get(`${source.url}v1/`)).status).toBe(404);
  });

  it.each([
    ['no id', {}],
    ['a blank id', { id: ' ' }],
    ['the reserved id HEAD', { id: 'HEAD' }],
    ['the reserved id head', { id: 'head' }],
    ['the reserved id latest', { id: 'latest' }],
    ['the reserved id LATEST', { id: 'LATEST' }],
    ['an id with a slash', { id: 'v1/2' }],
  ])('answers 400 with errors.id for %s', async (_what, body) => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    const res = await request(t.app).post(`${source.url}versions/`).set(as(admin)).send(body);
    expect(res.status).toBe(400);
    expect(res.body.errors.id).toBeDefined();
    expect((await request(t.app).get(`${source.url}versions/`)).body).toHaveLength(1);
  });

  it('answers 400 for bad version fields', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    const res = await request(t.app)
      .post(`${source.url}versions/`)
      .set(as(admin))
      .send({ id: 'v1', released: 'yes', retired: 1, extras: [] });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.errors).sort()).toEqual(['extras', 'released', 'retired']);
  });

  it('answers 409 for a version id already used, in any letter case', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    await createVersion(t, source.url, admin, 'v1', { description: 'Original' });
    for (const id of ['v1', 'V1']) {
      const res = await request(t.app)
        .post(`${source.url}versions/`)
        .set(as(admin))
        .send({ id, description: 'Duplicate' });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('Conflict');
    }
    expect((await request(t.app).get(`${source.url}v1/`)).body.description).toBe('Original');
    expect((await request(t.app).get(`${source.url}versions/`)).body).toHaveLength(2);
  });

  it('the same version id may be used by another source', async () => {
    const { org, admin } = await orgWithPeople(t);
    const a = await createSource(`/orgs/${org.id}`, admin);
    const b = await createSource(`/orgs/${org.id}`, admin);
    await createVersion(t, a.url, admin, 'v1');
    expect(
      (await request(t.app).post(`${b.url}versions/`).set(as(admin)).send({ id: 'v1' })).status,
    ).toBe(201);
  });

  it('edits a version’s released, retired and description; its content and id stay', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin, { name: 'Frozen name' });
    await createVersion(t, source.url, admin, 'v1', { description: 'Draft' });
    const res = await request(t.app)
      .post(`${source.url}v1/`)
      .set(as(admin))
      .send({ released: true, description: 'Final', name: 'Ignored at a version' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: 'v1',
      released: true,
      retired: false,
      description: 'Final',
      name: 'Frozen name',
      updated_by: admin.username,
    });
    const retired = await request(t.app)
      .put(`${source.url}v1/`)
      .set(as(admin))
      .send({ retired: true });
    expect(retired.body).toMatchObject({ released: true, retired: true, description: 'Final' });
    const list = await request(t.app).get(`${source.url}versions/`);
    expect(list.body[0]).toMatchObject({
      id: 'v1',
      released: true,
      retired: true,
      description: 'Final',
    });
    expect((await request(t.app).get(source.url)).body.name).toBe('Frozen name');
  });

  it('a version’s id never changes (400)', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    await createVersion(t, source.url, admin, 'v1');
    const res = await request(t.app)
      .patch(`${source.url}v1/`)
      .set(as(admin))
      .send({ id: 'v9', released: true });
    expect(res.status).toBe(400);
    expect(res.body.errors.id).toBeDefined();
    expect((await request(t.app).get(`${source.url}v1/`)).body.released).toBe(false);
    expect((await request(t.app).get(`${source.url}v9/`)).status).toBe(404);
    const bad = await request(t.app)
      .patch(`${source.url}v1/`)
      .set(as(admin))
      .send({ released: 'no' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.released).toBeDefined();
  });

  it('editing an unknown version answers 404', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    const res = await request(t.app)
      .post(`${source.url}v7/`)
      .set(as(admin))
      .send({ released: true });
    expect(res.status).toBe(404);
  });

  it('DELETE of a version: 204 then 404, and its id may be reused', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    await createVersion(t, source.url, admin, 'v1');
    const res = await request(t.app).delete(`${source.url}v1/`).set(as(admin));
    expect(res.status).toBe(204);
    expect((await request(t.app).get(`${source.url}v1/`)).status).toBe(404);
    expect((await request(t.app).delete(`${source.url}v1/`).set(as(admin))).status).toBe(404);
    const list = await request(t.app).get(`${source.url}versions/`);
    expect(list.body.map((v: { id: string }) => v.id)).toEqual(['HEAD']);
    expect((await request(t.app).get(source.url)).body.versions).toBe(1);
    expect(
      (await request(t.app).post(`${source.url}versions/`).set(as(admin)).send({ id: 'v1' }))
        .status,
    ).toBe(201);
  });

  it('DELETE of HEAD answers 405', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    const res = await request(t.app).delete(`${source.url}HEAD/`).set(as(admin));
    expect(res.status).toBe(405);
    expect((await request(t.app).get(source.url)).status).toBe(200);
  });

  it('refuses with 409 to delete a version another is based on, until that one goes', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    await createVersion(t, source.url, admin, 'v1');
    await createVersion(t, source.url, admin, 'v2');
    const refused = await request(t.app).delete(`${source.url}v1/`).set(as(admin));
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/v2/);
    expect((await request(t.app).get(`${source.url}v1/`)).status).toBe(200);
    expect((await request(t.app).delete(`${source.url}v2/`).set(as(admin))).status).toBe(204);
    expect((await request(t.app).delete(`${source.url}v1/`).set(as(admin))).status).toBe(204);
  });

  it('version edits and deletes are refused to outsiders (403) and anonymous callers (401)', async () => {
    const { org, admin, outsider } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    await createVersion(t, source.url, admin, 'v1');
    expect(
      (await request(t.app).post(`${source.url}v1/`).set(as(outsider)).send({ released: true }))
        .status,
    ).toBe(403);
    expect((await request(t.app).post(`${source.url}v1/`).send({ released: true })).status).toBe(
      401,
    );
    expect((await request(t.app).delete(`${source.url}v1/`).set(as(outsider))).status).toBe(403);
    expect((await request(t.app).delete(`${source.url}v1/`)).status).toBe(401);
    expect((await request(t.app).get(`${source.url}v1/`)).body.released).toBe(false);
  });

  it('lists versions page by page, newest first, with verbose details', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    for (const id of ['v1', 'v2', 'v3', 'v4']) await createVersion(t, source.url, admin, id);
    const page1 = await request(t.app).get(`${source.url}versions/`).query({ limit: 2 });
    expect(page1.body.map((v: { id: string }) => v.id)).toEqual(['v4', 'v3']);
    expect(page1.headers).toMatchObject({
      num_found: '5',
      num_returned: '2',
      pages: '3',
      page_number: '1',
    });
    expect(new URL(page1.headers.next).searchParams.get('page')).toBe('2');
    const page3 = await request(t.app).get(`${source.url}versions/`).query({ limit: 2, page: 3 });
    expect(page3.body.map((v: { id: string }) => v.id)).toEqual(['HEAD']);
    expect(page3.headers.next).toBeUndefined();
    const verbose = await request(t.app)
      .get(`${source.url}versions/`)
      .query({ verbose: 'true', limit: 0 });
    expect(verbose.body).toHaveLength(5);
    expect(verbose.body[0]).toMatchObject({
      type: 'Source Version',
      id: 'v4',
      previous_version: 'v3',
      versions: 5,
      active_concepts: 0,
      version_url: `${source.url}v4/`,
    });
    expect(verbose.body[4]).toMatchObject({
      type: 'Source',
      id: 'HEAD',
      short_code: source.id,
      version: 'HEAD',
      version_url: `${source.url}HEAD/`,
    });
  });
});

describe('active_concepts and active_mappings (frozen by versions)', () => {
  /** A concept `id` of the source, made through the API. */
  const addConcept = (source: TestRepo, by: Caller, id: string) =>
    createConcept(t, source.url, by, { id });

  /** A mapping `id` between two concepts of the source, made through the API. */
  const addMapping = (source: TestRepo, by: Caller, id: string, from: string, to: string) =>
    createMappingBetween(t, source.url, by, [
      id,
      'SAME-AS',
      `${source.url}concepts/${from}/`,
      `${source.url}concepts/${to}/`,
    ]);

  const counts = async (url: string): Promise<[number, number]> => {
    const res = await request(t.app).get(url);
    const body = res.body as { active_concepts: number; active_mappings: number };
    return [body.active_concepts, body.active_mappings];
  };

  it('HEAD follows content changes; a version keeps the counts of the moment it was made', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createSource(`/orgs/${org.id}`, admin);
    await createVersion(t, source.url, admin, 'empty');

    await addConcept(source, admin, 'C1');
    await addConcept(source, admin, 'C2');
    await addMapping(source, admin, 'M1', 'C1', 'C2');
    await addMapping(source, admin, 'M2', 'C2', 'C1');
    expect(await counts(source.url)).toEqual([2, 2]);
    await createVersion(t, source.url, admin, 'v1');
    expect(await counts(`${source.url}v1/`)).toEqual([2, 2]);

    // Then: C1 retired (a new retired version), C3 added, M1 retired.
    await retire(t, source.url, admin, 'concepts', 'C1');
    await addConcept(source, admin, 'C3');
    await retire(t, source.url, admin, 'mappings', 'M1');

    expect(await counts(source.url)).toEqual([2, 1]);
    expect(await counts(`${source.url}HEAD/`)).toEqual([2, 1]);
    expect(await counts(`${source.url}v1/`)).toEqual([2, 2]);
    expect(await counts(`${source.url}empty/`)).toEqual([0, 0]);
    await createVersion(t, source.url, admin, 'v2');
    expect(await counts(`${source.url}v2/`)).toEqual([2, 1]);

    // Then C4 added; only HEAD sees it, v2 keeps its count.
    await addConcept(source, admin, 'C4');
    expect(await counts(source.url)).toEqual([3, 1]);
    expect(await counts(`${source.url}v2/`)).toEqual([2, 1]);

    const verbose = await request(t.app).get(`${source.url}versions/`).query({ verbose: 'true' });
    expect(
      verbose.body.map(
        (v: { version: string; active_concepts: number; active_mappings: number }) => [
          v.version,
          v.active_concepts,
          v.active_mappings,
        ],
      ),
    ).toEqual([
      ['v2', 2, 1],
      ['v1', 2, 2],
      ['empty', 0, 0],
      ['HEAD', 3, 1],
    ]);
  });

  it('counts only the source’s own content', async () => {
    const { org, admin } = await orgWithPeople(t);
    const a = await createSource(`/orgs/${org.id}`, admin);
    const b = await createSource(`/orgs/${org.id}`, admin);
    await addConcept(a, admin, 'only-in-a');
    expect(await counts(a.url)).toEqual([1, 0]);
    expect(await counts(b.url)).toEqual([0, 0]);
  });
});
