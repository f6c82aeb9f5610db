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
import { createConcept, createMapping, createRepo } from '../factories/content';
import { gql } from '../graphql/gql';

/**
 * The rights table of docs/rights.md, one test per cell (spec core §4.2, §4.5, §4.6, §5, §9.3):
 * each action asked by each role, through REST and, where the mutation exists, GraphQL. A refused
 * write answers 401 (anonymous) or 403 (signed in) and changes nothing.
 */
type Role = 'anonymous' | 'outsider' | 'member' | 'orgAdmin' | 'superuser';
const ROLES: Role[] = ['anonymous', 'outsider', 'member', 'orgAdmin', 'superuser'];

let t: TestApp;
let people: Record<'outsider' | 'member' | 'orgAdmin', TestUser>;
/** A public org and a private one, with the same administrator and plain member. */
let org: string;
let privateOrg: string;

beforeAll(async () => {
  t = await createTestApp();
  const orgAdmin = await createUser(t);
  people = { orgAdmin, member: await createUser(t), outsider: await createUser(t) };
  org = (await createOrg(t, orgAdmin)).id;
  privateOrg = (await createOrg(t, orgAdmin, { public_access: 'None' })).id;
  for (const id of [org, privateOrg]) await addMember(t, id, orgAdmin, people.member);
});
afterAll(async () => t.close());

function auth(role: Role): string | undefined {
  if (role === 'anonymous') return undefined;
  return role === 'superuser' ? t.admin : people[role].auth;
}
const as = (role: Role) => {
  const header = auth(role);
  return header === undefined ? {} : { Authorization: header };
};

/** A refusal's status: 401 anonymous, 403 signed in. */
const refused = (role: Role) => (role === 'anonymous' ? 401 : 403);
/** Whether `role` has a right given to those listed. */
const status = (role: Role, allowed: Role[], ok: number) =>
  allowed.includes(role) ? ok : refused(role);

const MEMBERS: Role[] = ['member', 'orgAdmin', 'superuser'];
const OWNERS: Role[] = ['orgAdmin', 'superuser'];

const isMember = async (orgId: string, user: TestUser) =>
  (
    await request(t.app)
      .get(`/orgs/${orgId}/members/${user.username}/`)
      .set('Authorization', t.admin)
  ).status === 204;

describe.each(ROLES)('org rights, asked by %s', (role) => {
  it(`viewing a private org, its members and a membership answers ${status(role, MEMBERS, 200)}`, async () => {
    const expected = status(role, MEMBERS, 200);
    for (const path of [`/orgs/${privateOrg}/`, `/orgs/${privateOrg}/members/`]) {
      const res = await request(t.app).get(path).set(as(role));
      expect({ path, status: res.status }).toEqual({ path, status: expected });
    }
    const check = await request(t.app)
      .get(`/orgs/${privateOrg}/members/${people.member.username}/`)
      .set(as(role));
    expect(check.status).toBe(status(role, MEMBERS, 204));
  });

  it(`editing the org answers ${status(role, MEMBERS, 200)} (spec core §4.2: a member)`, async () => {
    const name = `Named by ${role} ${uniqueId('n')}`;
    const res = await request(t.app).post(`/orgs/${org}/`).set(as(role)).send({ name });
    expect(res.status).toBe(status(role, MEMBERS, 200));
    const after = await request(t.app).get(`/orgs/${org}/`).set('Authorization', t.admin);
    expect(after.body.name === name).toBe(MEMBERS.includes(role));
  });

  it(`deleting the org answers ${status(role, ['superuser'], 204)} (superuser only)`, async () => {
    const own = (await createOrg(t, people.orgAdmin)).id;
    await addMember(t, own, people.orgAdmin, people.member);
    const res = await request(t.app).delete(`/orgs/${own}/`).set(as(role));
    expect(res.status).toBe(status(role, ['superuser'], 204));
    const after = await request(t.app).get(`/orgs/${own}/`).set('Authorization', t.admin);
    expect(after.status).toBe(role === 'superuser' ? 404 : 200);
  });

  it(`adding a member answers ${status(role, OWNERS, 204)} (REST)`, async () => {
    const newcomer = await createUser(t);
    const res = await request(t.app)
      .put(`/orgs/${org}/members/${newcomer.username}/`)
      .set(as(role));
    expect(res.status).toBe(status(role, OWNERS, 204));
    expect(await isMember(org, newcomer)).toBe(OWNERS.includes(role));
  });

  it(`adding a member answers ${OWNERS.includes(role) ? 'true' : refused(role)} (GraphQL)`, async () => {
    const newcomer = await createUser(t);
    const res = await gql(
      t,
      auth(role),
      `mutation($org: String!, $u: String!) { addMember(org: $org, username: $u) { id } }`,
      { org, u: newcomer.username },
    );
    if (OWNERS.includes(role)) expect(res.data).toEqual({ addMember: { id: expect.any(String) } });
    else
      expect(res.errors?.[0].extensions?.code).toBe(
        role === 'anonymous' ? 'UNAUTHENTICATED' : 'FORBIDDEN',
      );
    expect(await isMember(org, newcomer)).toBe(OWNERS.includes(role));
  });

  it(`removing a member answers ${status(role, OWNERS, 204)}`, async () => {
    const leaving = await createUser(t);
    await addMember(t, org, people.orgAdmin, leaving);
    const res = await request(t.app)
      .delete(`/orgs/${org}/members/${leaving.username}/`)
      .set(as(role));
    expect(res.status).toBe(status(role, OWNERS, 204));
    expect(await isMember(org, leaving)).toBe(!OWNERS.includes(role));
  });

  it(`making a member an administrator answers ${status(role, OWNERS, 204)}`, async () => {
    const promoted = await createUser(t);
    await addMember(t, org, people.orgAdmin, promoted);
    const res = await request(t.app)
      .put(`/orgs/${org}/members/${promoted.username}/`)
      .set(as(role))
      .send({ role: 'admin' });
    expect(res.status).toBe(status(role, OWNERS, 204));
    // An administrator adds members; a plain member does not.
    const probe = await createUser(t);
    const add = await request(t.app)
      .put(`/orgs/${org}/members/${probe.username}/`)
      .set('Authorization', promoted.auth);
    expect(add.status).toBe(OWNERS.includes(role) ? 204 : 403);
  });

  it.each(['sources', 'collections'])(
    `creating %s in the org answers ${status(role, OWNERS, 201)} (REST)`,
    async (kind) => {
      const id = uniqueId('new');
      const res = await request(t.app)
        .post(`/orgs/${org}/${kind}/`)
        .set(as(role))
        .send({ id, short_code: id, name: id });
      expect(res.status).toBe(status(role, OWNERS, 201));
      const after = await request(t.app)
        .get(`/orgs/${org}/${kind}/${id}/`)
        .set('Authorization', t.admin);
      expect(after.status).toBe(OWNERS.includes(role) ? 200 : 404);
    },
  );

  it.each(['Source', 'Collection'])(
    `creating a %s in the org is ${OWNERS.includes(role) ? 'done' : 'refused'} (GraphQL)`,
    async (kind) => {
      const id = uniqueId('gq');
      const res = await gql(
        t,
        auth(role),
        `mutation($owner: String!, $input: ${kind}Input!) { create${kind}(owner: $owner, input: $input) { id } }`,
        { owner: `/orgs/${org}/`, input: { id, name: id } },
      );
      if (OWNERS.includes(role)) expect(res.data).toEqual({ [`create${kind}`]: { id } });
      else
        expect(res.errors?.[0].extensions?.code).toBe(
          role === 'anonymous' ? 'UNAUTHENTICATED' : 'FORBIDDEN',
        );
      const after = await request(t.app)
        .get(`/orgs/${org}/${kind.toLowerCase()}s/${id}/`)
        .set('Authorization', t.admin);
      expect(after.status).toBe(OWNERS.includes(role) ? 200 : 404);
    },
  );
});

type Access = 'None' | 'View' | 'Edit';
const ACCESS: Access[] = ['None', 'View', 'Edit'];
const sources = {} as Record<Access, string>;
const collections = {} as Record<Access, string>;

describe('repository rights', () => {
  beforeAll(async () => {
    for (const access of ACCESS) {
      const fields = { id: uniqueId(`s${access}`), name: `S ${access}`, public_access: access };
      sources[access] = (await createRepo(t, `/orgs/${org}`, t.admin, fields)).url;
      await createConcept(t, sources[access], t.admin, { id: 'A' });
      await createConcept(t, sources[access], t.admin, { id: 'B' });
      await createMapping(t, sources[access], t.admin, {
        id: 'M',
        map_type: 'SAME-AS',
        from_concept_url: `${sources[access]}concepts/A/`,
        to_concept_url: `${sources[access]}concepts/B/`,
      });
      const collection = { id: uniqueId(`c${access}`), name: `C ${access}`, public_access: access };
      collections[access] = (
        await createRepo(t, `/orgs/${org}`, t.admin, collection, 'collections')
      ).url;
    }
  });

  const cells = ACCESS.flatMap((access) => ROLES.map((role) => [access, role] as const));

  describe.each(cells)('public_access %s, asked by %s', (access, role) => {
    /** Who reads: everyone for a public repository, the org's members for a private one. */
    const readers: Role[] = access === 'None' ? MEMBERS : ROLES;
    /** spec core §5 rule 5: `Edit` lets any signed-in user edit content; else its owners. */
    const contentEditors: Role[] = access === 'Edit' ? ['outsider', ...MEMBERS] : OWNERS;
    /** A caller who may not read a private repository is refused before any other right. */
    const expect_ = (allowed: Role[], ok: number) =>
      readers.includes(role) ? status(role, allowed, ok) : refused(role);

    it(`editing the source's metadata answers ${expect_(OWNERS, 200)}`, async () => {
      const description = `by ${role} ${uniqueId('d')}`;
      const res = await request(t.app).post(sources[access]).set(as(role)).send({ description });
      expect(res.status).toBe(expect_(OWNERS, 200));
      const after = await request(t.app).get(sources[access]).set('Authorization', t.admin);
      expect(after.body.description === description).toBe(OWNERS.includes(role));
    });

    it(`creating a version answers ${expect_(OWNERS, 201)}`, async () => {
      const id = uniqueId('v');
      const res = await request(t.app)
        .post(`${sources[access]}versions/`)
        .set(as(role))
        .send({ id });
      expect(res.status).toBe(expect_(OWNERS, 201));
      const after = await request(t.app)
        .get(`${sources[access]}${id}/`)
        .set('Authorization', t.admin);
      expect(after.status).toBe(OWNERS.includes(role) ? 200 : 404);
    });

    it(`deleting a collection answers ${expect_(OWNERS, 204)}`, async () => {
      const url = OWNERS.includes(role)
        ? (
            await createRepo(
              t,
              `/orgs/${org}`,
              t.admin,
              { id: uniqueId('tmp'), name: 'Throwaway', public_access: access },
              'collections',
            )
          ).url
        : collections[access];
      const res = await request(t.app).delete(url).set(as(role));
      expect(res.status).toBe(expect_(OWNERS, 204));
      // Deactivated: hidden from the org's members (a superuser still reads it).
      const after = await request(t.app).get(url).set('Authorization', people.member.auth);
      expect(after.status).toBe(OWNERS.includes(role) ? 404 : 200);
    });

    it(`creating a concept answers ${expect_(contentEditors, 201)}`, async () => {
      const id = uniqueId('c');
      const res = await request(t.app)
        .post(`${sources[access]}concepts/`)
        .set(as(role))
        .send({
          id,
          concept_class: 'Misc',
          datatype: 'N/A',
          names: [{ name: id, locale: 'en', locale_preferred: true }],
        });
      expect(res.status).toBe(expect_(contentEditors, 201));
      const after = await request(t.app)
        .get(`${sources[access]}concepts/${id}/`)
        .set('Authorization', t.admin);
      expect(after.status).toBe(contentEditors.includes(role) ? 200 : 404);
    });

    it(`editing a mapping answers ${expect_(contentEditors, 200)}`, async () => {
      const comment = uniqueId('note');
      const res = await request(t.app)
        .put(`${sources[access]}mappings/M/`)
        .set(as(role))
        .send({ extras: { comment } });
      expect(res.status).toBe(expect_(contentEditors, 200));
      const after = await request(t.app)
        .get(`${sources[access]}mappings/M/`)
        .set('Authorization', t.admin);
      expect(after.body.extras?.comment === comment).toBe(contentEditors.includes(role));
    });

    it(`reading a mapping version by its id answers ${expect_(OWNERS, 200)} (spec core §9.3)`, async () => {
      const versions = await request(t.app)
        .get(`${sources[access]}mappings/M/versions/`)
        .set('Authorization', t.admin);
      const version = versions.body[versions.body.length - 1].version as string;
      const url = `${sources[access]}mappings/M/${version}/`;
      const res = await request(t.app).get(url).set(as(role));
      expect(res.status).toBe(expect_(OWNERS, 200));
      const viaGraphql = await gql(
        t,
        auth(role),
        `query($url: String!) { mapping(url: $url) { id } }`,
        {
          url,
        },
      );
      if (expect_(OWNERS, 200) === 200) expect(viaGraphql.data).toEqual({ mapping: { id: 'M' } });
      else
        expect(viaGraphql.errors?.[0].extensions?.code).toBe(
          role === 'anonymous' ? 'UNAUTHENTICATED' : 'FORBIDDEN',
        );
    });

    it(`reading a concept version by its id answers ${expect_(ROLES, 200)} (spec core §9.3: readers)`, async () => {
      const versions = await request(t.app)
        .get(`${sources[access]}concepts/A/versions/`)
        .set('Authorization', t.admin);
      const version = versions.body[0].version as string;
      const res = await request(t.app)
        .get(`${sources[access]}concepts/A/${version}/`)
        .set(as(role));
      expect(res.status).toBe(expect_(ROLES, 200));
    });
  });
});
