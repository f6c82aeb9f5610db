import request from 'supertest';
import { addMember, createTestApp, createUser, type TestApp, type TestUser } from '../factories';
import { createConcept, createSource, createVersion } from '../factories/content';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const MALARIA = {
  id: 'C1',
  concept_class: 'Diagnosis',
  names: [{ name: 'Malaria', locale: 'en', locale_preferred: true, name_type: 'FULLY_SPECIFIED' }],
  descriptions: [{ description: 'A mosquito-borne disease', locale: 'en' }],
};

interface Fixture {
  /** The concept's version-less URL, `…/concepts/C1/`. */
  url: string;
  sourceUrl: string;
  owner: TestUser;
  org: string;
  /** The id of the concept's first version. */
  first: string;
  nameUuid: string;
  descriptionUuid: string;
}

/** A fresh org source holding one concept, created by the org's administrator. */
async function concept(body: Record<string, unknown> = MALARIA): Promise<Fixture> {
  const { url: sourceUrl, owner, org } = await createSource(t);
  const created = (await createConcept(t, sourceUrl, owner, body)) as {
    version: string;
    names: Array<{ uuid: string }>;
    descriptions: Array<{ uuid: string }>;
  };
  return {
    url: `${sourceUrl}concepts/C1/`,
    sourceUrl,
    owner,
    org,
    first: created.version,
    nameUuid: created.names[0].uuid,
    descriptionUuid: created.descriptions[0]?.uuid,
  };
}

async function versionCount(url: string): Promise<number> {
  const res = await request(t.app).get(`${url}versions/`).query({ limit: 0 });
  expect(res.status).toBe(200);
  return (res.body as unknown[]).length;
}

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

function call(method: Method, path: string, user?: TestUser, body?: unknown) {
  const req = request(t.app)[method](path);
  if (user) req.set('Authorization', user.auth);
  return body === undefined ? req : req.send(body as object);
}

async function freezeVersion(f: Fixture, id = 'v1'): Promise<void> {
  await createVersion(t, f.sourceUrl, f.owner, id);
}

describe('names (spec core §2.6)', () => {
  it('lists and gets names in the ConceptName shape', async () => {
    const f = await concept();
    const list = await request(t.app).get(`${f.url}names/`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual([
      {
        type: 'ConceptName',
        uuid: f.nameUuid,
        name: 'Malaria',
        locale: 'en',
        locale_preferred: true,
        name_type: 'FULLY_SPECIFIED',
        external_id: null,
      },
    ]);
    const one = await request(t.app).get(`${f.url}names/${f.nameUuid}/`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(list.body[0]);
  });

  it('POST adds a name as a new version: 201, Location, the old version keeps the old names', async () => {
    const f = await concept();
    const res = await call('post', `${f.url}names/`, f.owner, {
      name: 'Paludisme',
      locale: 'fr',
      name_type: 'SYNONYM',
      external_id: 'ext-1',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      type: 'ConceptName',
      uuid: expect.any(String),
      name: 'Paludisme',
      locale: 'fr',
      locale_preferred: false,
      name_type: 'SYNONYM',
      external_id: 'ext-1',
    });
    expect(res.headers.location).toBe(`${f.url}names/${res.body.uuid}/`);
    expect((await request(t.app).get(res.headers.location)).body.name).toBe('Paludisme');
    expect(await versionCount(f.url)).toBe(2);

    const latest = await request(t.app).get(f.url);
    expect(latest.body.names.map((n: { name: string }) => n.name)).toEqual([
      'Malaria',
      'Paludisme',
    ]);
    expect(latest.body.update_comment).toBe('Added to names: Paludisme.');
    const old = await request(t.app).get(`${f.url}${f.first}/`);
    expect(old.body.names.map((n: { name: string }) => n.name)).toEqual(['Malaria']);
    const oldNames = await request(t.app).get(`${f.url}${f.first}/names/`);
    expect(oldNames.body).toHaveLength(1);
    expect((await request(t.app).get(`${f.url}${f.first}/names/${res.body.uuid}/`)).status).toBe(
      404,
    );
  });

  it('PUT and PATCH edit the fields sent, keep the others and the uuid, and make versions', async () => {
    const f = await concept();
    const patched = await call('patch', `${f.url}names/${f.nameUuid}/`, f.owner, {
      name: 'Malaria (disease)',
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      uuid: f.nameUuid,
      name: 'Malaria (disease)',
      locale: 'en',
      locale_preferred: true,
      name_type: 'FULLY_SPECIFIED',
    });
    const latest = await request(t.app).get(f.url);
    expect(latest.body).toMatchObject({ display_name: 'Malaria (disease)', versions: 2 });

    const put = await call('put', `${f.url}names/${f.nameUuid}/`, f.owner, {
      name_type: 'SHORT',
      localePreferred: false,
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      uuid: f.nameUuid,
      name: 'Malaria (disease)',
      name_type: 'SHORT',
      locale_preferred: false,
    });
    expect(await versionCount(f.url)).toBe(3);
    const old = await request(t.app).get(`${f.url}${f.first}/names/${f.nameUuid}/`);
    expect(old.body).toMatchObject({ name: 'Malaria', name_type: 'FULLY_SPECIFIED' });
  });

  it('an edit that changes nothing answers 208 and creates no version', async () => {
    const f = await concept();
    for (const body of [{}, { name: 'Malaria', locale: 'en' }]) {
      const res = await call('patch', `${f.url}names/${f.nameUuid}/`, f.owner, body);
      expect(res.status).toBe(208);
    }
    expect(await versionCount(f.url)).toBe(1);
  });

  it('answers 400 for bad input and creates nothing', async () => {
    const f = await concept();
    const missing = await call('post', `${f.url}names/`, f.owner, { name: 'No locale' });
    expect(missing.status).toBe(400);
    expect(Object.keys(missing.body.errors)).toEqual(['locale']);
    const bad = await call('post', `${f.url}names/`, f.owner, {
      name: '  ',
      locale: 'not a locale',
      locale_preferred: 'yes',
    });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['locale', 'locale_preferred', 'name']);
    const edit = await call('put', `${f.url}names/${f.nameUuid}/`, f.owner, { locale: 'x y' });
    expect(edit.status).toBe(400);
    expect(edit.body.errors.locale).toBeDefined();
    const notObject = await call('post', `${f.url}names/`, f.owner, [{ name: 'A', locale: 'en' }]);
    expect(notObject.status).toBe(400);
    expect(await versionCount(f.url)).toBe(1);
    expect((await request(t.app).get(`${f.url}names/`)).body).toHaveLength(1);
  });

  it('DELETE removes a name in a new version (204); the last name cannot go (400)', async () => {
    const f = await concept();
    const added = await call('post', `${f.url}names/`, f.owner, { name: 'Palu', locale: 'fr' });
    const del = await call('delete', `${f.url}names/${f.nameUuid}/`, f.owner);
    expect(del.status).toBe(204);
    expect(await versionCount(f.url)).toBe(3);
    const latest = await request(t.app).get(f.url);
    expect(latest.body).toMatchObject({ display_name: 'Palu', display_locale: 'fr' });
    expect(latest.body.names.map((n: { uuid: string }) => n.uuid)).toEqual([added.body.uuid]);
    expect((await request(t.app).get(`${f.url}names/${f.nameUuid}/`)).status).toBe(404);

    const last = await call('delete', `${f.url}names/${added.body.uuid}/`, f.owner);
    expect(last.status).toBe(400);
    expect(last.body.message).toBe('A concept must have at least one name.');
    expect(await versionCount(f.url)).toBe(3);
  });

  it('answers 404 for an unknown uuid or concept', async () => {
    const f = await concept();
    const unknown = `${f.url}names/00000000-0000-0000-0000-000000000000/`;
    expect((await request(t.app).get(unknown)).status).toBe(404);
    expect((await call('put', unknown, f.owner, { name: 'X' })).status).toBe(404);
    expect((await call('patch', unknown, f.owner, { name: 'X' })).status).toBe(404);
    expect((await call('delete', unknown, f.owner)).status).toBe(404);
    expect((await request(t.app).get(`${f.sourceUrl}concepts/Nope/names/`)).status).toBe(404);
    const post = await call('post', `${f.sourceUrl}concepts/Nope/names/`, f.owner, {
      name: 'X',
      locale: 'en',
    });
    expect(post.status).toBe(404);
    expect(await versionCount(f.url)).toBe(1);
  });
});

describe('descriptions (spec core §2.6)', () => {
  it('list, get, add, edit and delete, each write a new version; the last one may go', async () => {
    const f = await concept();
    const list = await request(t.app).get(`${f.url}descriptions/`);
    expect(list.body).toEqual([
      {
        type: 'ConceptDescription',
        uuid: f.descriptionUuid,
        description: 'A mosquito-borne disease',
        locale: 'en',
        locale_preferred: false,
        description_type: null,
        external_id: null,
      },
    ]);
    const added = await call('post', `${f.url}descriptions/`, f.owner, {
      description: 'Une maladie',
      locale: 'fr',
      description_type: 'Definition',
    });
    expect(added.status).toBe(201);
    expect(added.headers.location).toBe(`${f.url}descriptions/${added.body.uuid}/`);
    expect(added.body).toMatchObject({ type: 'ConceptDescription', locale: 'fr' });

    const got = await request(t.app).get(`${f.url}descriptions/${added.body.uuid}/`);
    expect(got.body.description).toBe('Une maladie');

    const edited = await call('patch', `${f.url}descriptions/${added.body.uuid}/`, f.owner, {
      description: 'Une maladie parasitaire',
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({
      uuid: added.body.uuid,
      description: 'Une maladie parasitaire',
      description_type: 'Definition',
    });
    const same = await call('put', `${f.url}descriptions/${added.body.uuid}/`, f.owner, {
      description: 'Une maladie parasitaire',
    });
    expect(same.status).toBe(208);

    const bad = await call('post', `${f.url}descriptions/`, f.owner, { locale: 'en' });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors)).toEqual(['description']);

    for (const uuid of [f.descriptionUuid, added.body.uuid]) {
      expect((await call('delete', `${f.url}descriptions/${uuid}/`, f.owner)).status).toBe(204);
    }
    expect((await request(t.app).get(`${f.url}descriptions/`)).body).toEqual([]);
    expect(await versionCount(f.url)).toBe(5);
    expect(
      (await call('delete', `${f.url}descriptions/${f.descriptionUuid}/`, f.owner)).status,
    ).toBe(404);
    const first = await request(t.app).get(`${f.url}${f.first}/descriptions/`);
    expect(first.body.map((d: { uuid: string }) => d.uuid)).toEqual([f.descriptionUuid]);
  });
});

describe('extras (spec operations §4.9)', () => {
  it('PUT creates and updates one attribute, GET reads it and the whole object, DELETE removes it', async () => {
    const f = await concept();
    expect((await request(t.app).get(`${f.url}extras/`)).body).toEqual({});
    expect((await request(t.app).get(`${f.url}extras/IHTSDO_code/`)).status).toBe(404);

    const created = await call('put', `${f.url}extras/IHTSDO_code/`, f.owner, {
      IHTSDO_code: '61462000',
    });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ IHTSDO_code: '61462000' });
    const updated = await call('put', `${f.url}extras/IHTSDO_code/`, f.owner, {
      IHTSDO_code: { code: 61462000, active: true },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ IHTSDO_code: { code: 61462000, active: true } });
    await call('put', `${f.url}extras/is set/`, f.owner, { 'is set': false });

    const one = await request(t.app).get(`${f.url}extras/IHTSDO_code/`);
    expect(one.body).toEqual({ IHTSDO_code: { code: 61462000, active: true } });
    expect((await request(t.app).get(`${f.url}extras/is%20set/`)).body).toEqual({
      'is set': false,
    });
    expect((await request(t.app).get(`${f.url}extras/`)).body).toEqual({
      IHTSDO_code: { code: 61462000, active: true },
      'is set': false,
    });
    expect(await versionCount(f.url)).toBe(4);
    const detail = await request(t.app).get(f.url);
    expect(detail.body.update_comment).toBe('Updated extras: is set.');

    expect((await call('delete', `${f.url}extras/IHTSDO_code/`, f.owner)).status).toBe(204);
    expect((await request(t.app).get(`${f.url}extras/`)).body).toEqual({ 'is set': false });
    expect((await call('delete', `${f.url}extras/IHTSDO_code/`, f.owner)).status).toBe(404);
    expect(await versionCount(f.url)).toBe(5);

    // The first version, read through its own path, still has none.
    expect((await request(t.app).get(`${f.url}${f.first}/extras/`)).body).toEqual({});
    expect((await request(t.app).get(`${f.url}${f.first}/extras/IHTSDO_code/`)).status).toBe(404);
  });

  it('a PUT of the value it already has answers 208 and creates no version', async () => {
    const f = await concept({ ...MALARIA, extras: { shelf: 3 } });
    const res = await call('put', `${f.url}extras/shelf/`, f.owner, { shelf: 3 });
    expect(res.status).toBe(208);
    expect(await versionCount(f.url)).toBe(1);
  });

  it('answers 400 for a body that is not {"<name>": value}, changing nothing', async () => {
    const f = await concept({ ...MALARIA, extras: { shelf: 3 } });
    for (const body of [{}, { other: 1 }, { shelf: 4, other: 1 }, [4], '4']) {
      const res = await request(t.app)
        .put(`${f.url}extras/shelf/`)
        .set('Authorization', f.owner.auth)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify(body));
      expect(res.status).toBe(400);
    }
    const empty = await call('put', `${f.url}extras/shelf/`, f.owner);
    expect(empty.status).toBe(400);
    expect((await request(t.app).get(`${f.url}extras/`)).body).toEqual({ shelf: 3 });
    expect(await versionCount(f.url)).toBe(1);
  });
});

describe('who may change sub-resources', () => {
  it('401 without credentials and 403 for users who may not edit (plain members too); administrators may', async () => {
    const f = await concept({ ...MALARIA, extras: { shelf: 3 } });
    const outsider = await createUser(t);
    const writes: Array<[Method, string, unknown]> = [
      ['post', `${f.url}names/`, { name: 'X', locale: 'en' }],
      ['put', `${f.url}names/${f.nameUuid}/`, { name: 'X' }],
      ['patch', `${f.url}names/${f.nameUuid}/`, { name: 'X' }],
      ['delete', `${f.url}names/${f.nameUuid}/`, undefined],
      ['post', `${f.url}descriptions/`, { description: 'X', locale: 'en' }],
      ['patch', `${f.url}descriptions/${f.descriptionUuid}/`, { description: 'X' }],
      ['delete', `${f.url}descriptions/${f.descriptionUuid}/`, undefined],
      ['put', `${f.url}extras/shelf/`, { shelf: 4 }],
      ['delete', `${f.url}extras/shelf/`, undefined],
    ];
    for (const [method, path, body] of writes) {
      expect([method, path, (await call(method, path, undefined, body)).status]).toEqual([
        method,
        path,
        401,
      ]);
      expect([method, path, (await call(method, path, outsider, body)).status]).toEqual([
        method,
        path,
        403,
      ]);
    }
    expect(await versionCount(f.url)).toBe(1);

    // spec core §5 rules 5, 7: a plain member views; the org's administrators edit content.
    const member = await createUser(t);
    await addMember(t, f.org, f.owner, member);
    const refused = await call('post', `${f.url}names/`, member, { name: 'X', locale: 'en' });
    expect(refused.status).toBe(403);
    expect(await versionCount(f.url)).toBe(1);
    const admin = await createUser(t);
    await addMember(t, f.org, f.owner, admin, 'admin');
    const res = await call('post', `${f.url}names/`, admin, { name: 'X', locale: 'en' });
    expect(res.status).toBe(201);
    expect((await request(t.app).get(f.url)).body.updated_by).toBe(admin.username);
  });

  it('a private source hides its sub-resources: 401 anonymous, 403 outsiders', async () => {
    const owner = await createUser(t);
    const src = await request(t.app)
      .post('/user/sources/')
      .set('Authorization', owner.auth)
      .send({ id: 'P', name: 'P', public_access: 'None' });
    expect(src.status).toBe(201);
    const url = `/users/${owner.username}/sources/P/concepts/C1/`;
    expect((await call('post', '/user/sources/P/concepts/', owner, MALARIA)).status).toBe(201);
    const outsider = await createUser(t);
    for (const path of [`${url}names/`, `${url}descriptions/`, `${url}extras/`]) {
      expect((await request(t.app).get(path)).status).toBe(401);
      expect((await call('get', path, outsider)).status).toBe(403);
      expect((await call('get', path, owner)).status).toBe(200);
    }
  });
});

describe('owners and version paths', () => {
  it('works under /users/:user/ and /user/ alike', async () => {
    const owner = await createUser(t);
    await call('post', '/user/sources/', owner, { id: 'U', name: 'U' });
    expect((await call('post', '/user/sources/U/concepts/', owner, MALARIA)).status).toBe(201);
    const added = await call('post', '/user/sources/U/concepts/C1/names/', owner, {
      name: 'Palu',
      locale: 'fr',
    });
    expect(added.status).toBe(201);
    expect(added.headers.location).toBe(
      `/users/${owner.username}/sources/U/concepts/C1/names/${added.body.uuid}/`,
    );
    const byUser = await request(t.app).get(added.headers.location);
    expect(byUser.body.name).toBe('Palu');
    const put = await call(
      'put',
      `/users/${owner.username}/sources/U/concepts/C1/extras/a/`,
      owner,
      {
        a: 1,
      },
    );
    expect(put.status).toBe(200);
    expect((await call('get', '/user/sources/U/concepts/C1/extras/a/', owner)).body).toEqual({
      a: 1,
    });
  });

  it('reads through a source version show the content it froze', async () => {
    const f = await concept();
    await freezeVersion(f);
    await call('post', `${f.url}names/`, f.owner, { name: 'Palu', locale: 'fr' });
    await call('put', `${f.url}extras/a/`, f.owner, { a: 1 });
    const frozen = `${f.sourceUrl}v1/concepts/C1/`;
    expect((await request(t.app).get(`${frozen}names/`)).body).toHaveLength(1);
    expect((await request(t.app).get(`${frozen}extras/`)).body).toEqual({});
    expect((await request(t.app).get(`${frozen}extras/a/`)).status).toBe(404);
    expect((await request(t.app).get(`${frozen}names/${f.nameUuid}/`)).body.name).toBe('Malaria');
    expect((await request(t.app).get(`${frozen}descriptions/`)).body).toHaveLength(1);
    expect((await request(t.app).get(`${f.url}names/`)).body).toHaveLength(2);
  });

  it('writes through a source version or a concept version answer 405', async () => {
    const f = await concept({ ...MALARIA, extras: { shelf: 3 } });
    await freezeVersion(f);
    for (const base of [`${f.sourceUrl}v1/concepts/C1/`, `${f.url}${f.first}/`]) {
      const writes: Array<[Method, string, unknown]> = [
        ['post', `${base}names/`, { name: 'X', locale: 'en' }],
        ['put', `${base}names/${f.nameUuid}/`, { name: 'X' }],
        ['patch', `${base}names/${f.nameUuid}/`, { name: 'X' }],
        ['delete', `${base}names/${f.nameUuid}/`, undefined],
        ['post', `${base}descriptions/`, { description: 'X', locale: 'en' }],
        ['delete', `${base}descriptions/${f.descriptionUuid}/`, undefined],
        ['put', `${base}extras/shelf/`, { shelf: 4 }],
        ['delete', `${base}extras/shelf/`, undefined],
        ['post', `${base}extras/`, { shelf: 4 }],
      ];
      for (const [method, path, body] of writes) {
        expect([method, path, (await call(method, path, f.owner, body)).status]).toEqual([
          method,
          path,
          405,
        ]);
      }
    }
    // Methods no sub-resource serves are 405 on the latest version too.
    expect((await call('post', `${f.url}extras/`, f.owner, { a: 1 })).status).toBe(405);
    expect((await call('post', `${f.url}extras/shelf/`, f.owner, { shelf: 1 })).status).toBe(405);
    expect((await call('put', `${f.url}names/`, f.owner, [])).status).toBe(405);
    expect(await versionCount(f.url)).toBe(1);
  });

  it('an extra or name may be called like a route segment', async () => {
    const f = await concept();
    const res = await call('put', `${f.url}extras/names/`, f.owner, { names: 'x' });
    expect(res.status).toBe(200);
    expect((await request(t.app).get(`${f.url}extras/names/`)).body).toEqual({ names: 'x' });
    expect((await request(t.app).get(`${f.url}names/extras/`)).status).toBe(404);
  });
});
