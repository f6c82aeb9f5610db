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
import { createRepo, createVersion } from '../factories/content';

/**
 * Who may do what with a repository (spec core §5.3–5.7, §7): an org-owned source at each
 * `public_access`, asked by anonymous callers, another user, a plain org member, an org
 * administrator and a superuser; then a user-owned private source.
 */
let t: TestApp;
let people: Record<'outsider' | 'member' | 'orgAdmin', TestUser>;
let org: { id: string };
const sources: Record<Access, { id: string; url: string }> = {} as never;

type Access = 'None' | 'View' | 'Edit';
type Caller = 'anonymous' | 'outsider' | 'member' | 'orgAdmin' | 'superuser';
const CALLERS: Caller[] = ['anonymous', 'outsider', 'member', 'orgAdmin', 'superuser'];
const ACCESS: Access[] = ['None', 'View', 'Edit'];

beforeAll(async () => {
  t = await createTestApp();
  const orgAdmin = await createUser(t);
  people = { orgAdmin, member: await createUser(t), outsider: await createUser(t) };
  org = await createOrg(t, orgAdmin);
  await addMember(t, org.id, orgAdmin, people.member);
  for (const access of ACCESS) {
    // Created by the superuser, so that the org administrator's rights come from the role alone.
    const fields = {
      id: uniqueId(`acc${access}`),
      name: `Access ${access}`,
      public_access: access,
    };
    const { id, url } = await createRepo(t, `/orgs/${org.id}`, t.admin, fields);
    sources[access] = { id, url };
    await createVersion(t, url, t.admin, 'v1');
  }
});
afterAll(async () => t.close());

function auth(caller: Caller): Record<string, string> {
  if (caller === 'anonymous') return {};
  if (caller === 'superuser') return { Authorization: t.admin };
  return { Authorization: people[caller].auth };
}

/** What a caller gets for a private (`None`) repository. */
const PRIVATE_READ: Record<Caller, number> = {
  anonymous: 401,
  outsider: 403,
  member: 200,
  orgAdmin: 200,
  superuser: 200,
};
/**
 * Metadata edits and version creation, whatever the public access (spec core §5 rule 7): the
 * repository's owners, here the owning org's administrators; plain members only view.
 */
const EDIT: Record<Caller, number> = {
  anonymous: 401,
  outsider: 403,
  member: 403,
  orgAdmin: 200,
  superuser: 200,
};

const matrix = ACCESS.flatMap((access) => CALLERS.map((caller) => [access, caller] as const));

describe.each(matrix)('an org source with public_access %s, asked by %s', (access, caller) => {
  const readStatus = access === 'None' ? PRIVATE_READ[caller] : 200;
  const seesIt = readStatus === 200;

  it(`GET of the source, a version and its versions list answers ${readStatus}`, async () => {
    const { url } = sources[access];
    for (const path of [url, `${url}HEAD/`, `${url}v1/`, `${url}versions/`]) {
      const res = await request(t.app).get(path).set(auth(caller));
      expect({ path, status: res.status }).toEqual({ path, status: readStatus });
    }
    const head = await request(t.app).head(url).set(auth(caller));
    expect(head.status).toBe(readStatus);
  });

  it(`is ${seesIt ? '' : 'not '}listed in the org's lists`, async () => {
    const { id } = sources[access];
    for (const path of [`/orgs/${org.id}/sources/`, `/orgs/${org.id}/repos/`]) {
      const res = await request(t.app).get(path).query({ limit: 0 }).set(auth(caller));
      expect(res.status).toBe(200);
      const ids = res.body.map((r: { id: string }) => r.id);
      expect({ path, listed: ids.includes(id) }).toEqual({ path, listed: seesIt });
    }
    const orgsOf = await request(t.app)
      .get(`/users/${people.orgAdmin.username}/orgs/sources/`)
      .query({ q: id })
      .set(auth(caller));
    expect(orgsOf.body.some((r: { id: string }) => r.id === id)).toBe(seesIt);
    const repos = await request(t.app).get('/repos/').query({ q: id }).set(auth(caller));
    expect(repos.body.some((r: { id: string }) => r.id === id)).toBe(seesIt);
  });

  it(`is ${access === 'None' ? 'never' : 'always'} in the public /sources/ list`, async () => {
    const { id } = sources[access];
    const res = await request(t.app).get('/sources/').query({ q: id }).set(auth(caller));
    expect(res.body.some((r: { id: string }) => r.id === id)).toBe(access !== 'None');
  });

  const editStatus = access === 'None' && !seesIt ? readStatus : EDIT[caller];

  it(`editing the metadata answers ${editStatus}`, async () => {
    const { url } = sources[access];
    const description = `edited by ${caller} ${uniqueId('d')}`;
    const res = await request(t.app).patch(url).set(auth(caller)).send({ description });
    expect(res.status).toBe(editStatus);
    const after = await request(t.app).get(url).set('Authorization', t.admin);
    expect(after.body.description === description).toBe(editStatus === 200);
  });

  it(`creating a version answers ${editStatus === 200 ? 201 : editStatus}`, async () => {
    const { url } = sources[access];
    const versionId = uniqueId(caller);
    const res = await request(t.app)
      .post(`${url}versions/`)
      .set(auth(caller))
      .send({ id: versionId });
    expect(res.status).toBe(editStatus === 200 ? 201 : editStatus);
    const after = await request(t.app).get(`${url}${versionId}/`).set('Authorization', t.admin);
    expect(after.status).toBe(editStatus === 200 ? 200 : 404);
  });

  it(`editing a version answers ${editStatus}`, async () => {
    const { url } = sources[access];
    const description = `version edited by ${caller} ${uniqueId('d')}`;
    const res = await request(t.app).post(`${url}v1/`).set(auth(caller)).send({ description });
    expect(res.status).toBe(editStatus);
    const after = await request(t.app).get(`${url}v1/`).set('Authorization', t.admin);
    expect(after.body.description === description).toBe(editStatus === 200);
  });

  it(`deleting is refused unless the caller may edit (${editStatus === 200 ? 'allowed' : editStatus})`, async () => {
    if (editStatus === 200) {
      // A throwaway source of the same access, so the shared one stays.
      const throwaway = await createRepo(t, `/orgs/${org.id}`, t.admin, {
        id: uniqueId('tmp'),
        name: 'Throwaway',
        public_access: access,
      });
      const res = await request(t.app).delete(throwaway.url).set(auth(caller));
      expect(res.status).toBe(204);
      // Gone, even to a superuser (a deleted source is removed, not hidden).
      const after = await request(t.app).get(throwaway.url).set('Authorization', t.admin);
      expect(after.status).toBe(404);
      const listed = await request(t.app)
        .get(`/orgs/${org.id}/sources/`)
        .query({ limit: 0 })
        .set('Authorization', t.admin);
      expect(listed.body.map((s: { id: string }) => s.id)).not.toContain(throwaway.id);
      return;
    }
    const res = await request(t.app).delete(sources[access].url).set(auth(caller));
    expect(res.status).toBe(editStatus);
    expect(
      (await request(t.app).get(sources[access].url).set('Authorization', t.admin)).status,
    ).toBe(200);
  });
});

describe('a private source owned by a user', () => {
  let owner: TestUser;
  let other: TestUser;
  let source: { id: string; url: string };

  beforeAll(async () => {
    owner = await createUser(t);
    other = await createUser(t);
    const id = uniqueId('mine');
    const res = await request(t.app)
      .post('/user/sources/')
      .set('Authorization', owner.auth)
      .send({ id, name: 'Private notes', public_access: 'None' });
    if (res.status !== 201) throw new Error(`${res.status}`);
    source = { id, url: res.body.url as string };
  });

  const who = (caller: 'anonymous' | 'owner' | 'other' | 'superuser') =>
    caller === 'anonymous'
      ? {}
      : { Authorization: caller === 'superuser' ? t.admin : { owner, other }[caller].auth };

  it.each([
    ['anonymous', 401],
    ['other', 403],
    ['owner', 200],
    ['superuser', 200],
  ] as const)('GET by %s answers %i, for the source and its versions', async (caller, status) => {
    expect((await request(t.app).get(source.url).set(who(caller))).status).toBe(status);
    expect((await request(t.app).get(`${source.url}versions/`).set(who(caller))).status).toBe(
      status,
    );
  });

  it.each([
    ['anonymous', false],
    ['other', false],
    ['owner', true],
    ['superuser', true],
  ] as const)('the user’s lists show it to %s: %s', async (caller, shown) => {
    for (const path of [
      `/users/${owner.username}/sources/`,
      `/users/${owner.username}/repos/`,
      '/repos/',
    ]) {
      const res = await request(t.app).get(path).query({ q: source.id }).set(who(caller));
      expect({ path, shown: res.body.some((r: { id: string }) => r.id === source.id) }).toEqual({
        path,
        shown,
      });
    }
    const own = await request(t.app).get('/user/sources/').set(who('owner'));
    expect(own.body.map((r: { id: string }) => r.id)).toEqual([source.id]);
    const publicList = await request(t.app)
      .get('/sources/')
      .query({ q: source.id })
      .set(who(caller));
    expect(publicList.body).toEqual([]);
  });

  it.each([
    ['anonymous', 401],
    ['other', 403],
    ['owner', 200],
    ['superuser', 200],
  ] as const)('editing and versioning by %s answers %i', async (caller, status) => {
    const edit = await request(t.app)
      .post(source.url)
      .set(who(caller))
      .send({ description: `by ${caller}` });
    expect(edit.status).toBe(status);
    const version = await request(t.app)
      .post(`${source.url}versions/`)
      .set(who(caller))
      .send({ id: uniqueId(caller) });
    expect(version.status).toBe(status === 200 ? 201 : status);
  });
});

describe('changes of access and of membership', () => {
  it('making a source private hides it at once from outsiders and public lists', async () => {
    const admin = await createUser(t);
    const outsider = await createUser(t);
    const own = await createOrg(t, admin);
    const id = uniqueId('flip');
    const { url } = await createRepo(t, `/orgs/${own.id}`, admin, { id, name: 'Flip' });
    expect((await request(t.app).get(url).set('Authorization', outsider.auth)).status).toBe(200);
    await request(t.app)
      .patch(url)
      .set('Authorization', admin.auth)
      .send({ public_access: 'None' });
    expect((await request(t.app).get(url).set('Authorization', outsider.auth)).status).toBe(403);
    expect((await request(t.app).get(url)).status).toBe(401);
    expect((await request(t.app).get('/sources/').query({ q: id })).body).toEqual([]);
    await request(t.app)
      .patch(url)
      .set('Authorization', admin.auth)
      .send({ public_access: 'View' });
    expect((await request(t.app).get(url)).status).toBe(200);
  });

  it('a member edits as an administrator only; a removed member no longer sees or edits private sources', async () => {
    const admin = await createUser(t);
    const member = await createUser(t);
    const own = await createOrg(t, admin);
    await addMember(t, own.id, admin, member);
    const { url } = await createRepo(t, `/orgs/${own.id}`, admin, {
      id: uniqueId('prom'),
      name: 'Promotion',
      public_access: 'None',
    });
    const edit = () =>
      request(t.app).patch(url).set('Authorization', member.auth).send({ description: 'x' });
    expect((await request(t.app).get(url).set('Authorization', member.auth)).status).toBe(200);
    expect((await edit()).status).toBe(403);
    await addMember(t, own.id, admin, member, 'admin');
    expect((await edit()).status).toBe(200);
    await addMember(t, own.id, admin, member, 'member');
    expect((await edit()).status).toBe(403);
    await request(t.app)
      .delete(`/orgs/${own.id}/members/${member.username}/`)
      .set('Authorization', admin.auth);
    expect((await request(t.app).get(url).set('Authorization', member.auth)).status).toBe(403);
    expect((await edit()).status).toBe(403);
  });

  it('the creator of a source no longer edits it after losing the administrator role (spec core §5 rule 7: its owners do)', async () => {
    const admin = await createUser(t);
    const creator = await createUser(t);
    const own = await createOrg(t, admin);
    await addMember(t, own.id, admin, creator, 'admin');
    const created = await createRepo(t, `/orgs/${own.id}`, creator, {
      id: uniqueId('made'),
      name: 'Made by creator',
    });
    await addMember(t, own.id, admin, creator, 'member');
    const res = await request(t.app)
      .patch(created.url)
      .set('Authorization', creator.auth)
      .send({ description: 'still mine' });
    expect(res.status).toBe(403);
    const after = await request(t.app).get(created.url).set('Authorization', creator.auth);
    expect(after.body.description).not.toBe('still mine');
  });

  it('the sources of a private org answer 401/403 to those outside it, even the public ones', async () => {
    const admin = await createUser(t);
    const member = await createUser(t);
    const outsider = await createUser(t);
    const own = await createOrg(t, admin, { public_access: 'None' });
    await addMember(t, own.id, admin, member);
    const { url } = await createRepo(t, `/orgs/${own.id}`, admin, {
      id: uniqueId('po'),
      name: 'In a private org',
    });
    for (const path of [
      url,
      `${url}versions/`,
      `/orgs/${own.id}/sources/`,
      `/orgs/${own.id}/repos/`,
    ]) {
      expect((await request(t.app).get(path)).status).toBe(401);
      expect((await request(t.app).get(path).set('Authorization', outsider.auth)).status).toBe(403);
      expect((await request(t.app).get(path).set('Authorization', member.auth)).status).toBe(200);
    }
  });
});
