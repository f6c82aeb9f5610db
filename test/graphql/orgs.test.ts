import {
  addMember,
  createOrg,
  createTestApp,
  createUser,
  uniqueId,
  type TestApp,
  type TestUser,
} from '../factories';
import { dataOf, errorCode, gql } from './gql';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const ORG_FIELDS = `uuid id name company website location publicAccess extras url
  createdBy updatedBy createdOn updatedOn membersCount publicSources publicCollections myRole`;

const ORG = `query($id: String!) { org(id: $id) { ${ORG_FIELDS} } }`;
const ORGS = `query($q: String, $limit: Int! = 10, $offset: Int! = 0, $sort: String,
    $company: [String!], $location: [String!]) {
  orgs(q: $q, limit: $limit, offset: $offset, sort: $sort, company: $company, location: $location) {
    totalCount items { id }
  }
}`;
const CREATE_ORG = `mutation($input: CreateOrganizationInput!) { createOrg(input: $input) { org { ${ORG_FIELDS} } } }`;
const UPDATE_ORG = `mutation($id: String!, $input: UpdateOrganizationInput!) {
  updateOrg(id: $id, input: $input) { org { id name company website location publicAccess extras updatedBy } }
}`;
const DELETE_ORG = `mutation($id: String!) { deleteOrg(id: $id) { deletedId } }`;
const ADD_MEMBER = `mutation($org: String!, $u: String!, $role: MemberRole! = member) {
  addMember(org: $org, username: $u, role: $role) { id }
}`;
const REMOVE_MEMBER = `mutation($org: String!, $u: String!) { removeMember(org: $org, username: $u) { id } }`;
const MEMBERS = `query($id: String!, $limit: Int!, $offset: Int!) {
  org(id: $id) { membersCount members(limit: $limit, offset: $offset) { totalCount items { username } } }
}`;
const HAS_MEMBER = `query($id: String!, $u: String!) { org(id: $id) { hasMember(username: $u) } }`;

async function orgIds(auth: string | undefined, vars: Record<string, unknown>) {
  const page = dataOf(await gql(t, auth, ORGS, vars)).orgs;
  return {
    totalCount: page.totalCount as number,
    ids: (page.items as Array<{ id: string }>).map((o) => o.id),
  };
}

async function roleIn(auth: string, id: string): Promise<string | null> {
  const res = await gql(t, auth, `query($id: String!) { org(id: $id) { myRole } }`, { id });
  return dataOf(res).org.myRole as string | null;
}

async function membersOf(id: string): Promise<string[]> {
  const res = await gql(t, t.admin, MEMBERS, { id, limit: 0, offset: 0 });
  return (dataOf(res).org.members.items as Array<{ username: string }>)
    .map((u) => u.username)
    .sort();
}

describe('createOrg', () => {
  test('the creator becomes its administrator and only member', async () => {
    const owner = await createUser(t);
    const id = uniqueId('org');
    const org = dataOf(
      await gql(t, owner.auth, CREATE_ORG, {
        input: {
          id,
          name: 'Ministry of Health',
          company: 'MoH',
          website: 'https://moh.example.org',
          location: 'Nairobi',
          extras: { region: 'east' },
        },
      }),
    ).createOrg.org;
    expect(org).toMatchObject({
      id,
      name: 'Ministry of Health',
      company: 'MoH',
      website: 'https://moh.example.org',
      location: 'Nairobi',
      extras: { region: 'east' },
      publicAccess: 'VIEW',
      url: `/orgs/${id}/`,
      createdBy: owner.username,
      updatedBy: owner.username,
      membersCount: 1,
      publicSources: 0,
      publicCollections: 0,
      myRole: 'ADMIN',
    });
    expect(await membersOf(id)).toEqual([owner.username]);
    // The org is readable by id afterwards, with the same uuid.
    const read = dataOf(await gql(t, undefined, ORG, { id })).org;
    expect(read.uuid).toBe(org.uuid);
    expect(read.myRole).toBeNull();
  });

  test('publicAccess may be set at creation', async () => {
    const owner = await createUser(t);
    const org = dataOf(
      await gql(t, owner.auth, CREATE_ORG, {
        input: { id: uniqueId('org'), name: 'Private', publicAccess: 'None' },
      }),
    ).createOrg.org;
    expect(org.publicAccess).toBe('NONE');
  });

  test('anonymous createOrg is refused with UNAUTHENTICATED and nothing is created', async () => {
    const id = uniqueId('org');
    const res = await gql(t, undefined, CREATE_ORG, { input: { id, name: 'Nope' } });
    expect(res.status).toBe(200);
    expect(errorCode(res)).toBe('UNAUTHENTICATED');
    expect(errorCode(await gql(t, t.admin, ORG, { id }))).toBe('NOT_FOUND');
  });

  test('a duplicate id, in any letter case, is INVALID with a field error on id', async () => {
    const owner = await createUser(t);
    const other = await createUser(t);
    const { id } = await createOrg(t, owner);
    for (const dup of [id, id.toUpperCase()]) {
      const res = await gql(t, other.auth, CREATE_ORG, { input: { id: dup, name: 'Again' } });
      expect(errorCode(res)).toBe('INVALID');
      expect(Object.keys(res.errors![0].extensions!.fieldErrors!)).toEqual(['id']);
    }
    const org = dataOf(await gql(t, owner.auth, ORG, { id })).org;
    expect(org).toMatchObject({ name: `Org ${id}`, membersCount: 1, myRole: 'ADMIN' });
    expect(await roleIn(other.auth, id)).toBeNull();
  });

  test('a malformed id, blank name and bad website are INVALID with field errors', async () => {
    const owner = await createUser(t);
    const res = await gql(t, owner.auth, CREATE_ORG, {
      input: { id: 'has spaces/and slash', name: ' ', website: 'example.org' },
    });
    expect(errorCode(res)).toBe('INVALID');
    expect(Object.keys(res.errors![0].extensions!.fieldErrors!).sort()).toEqual([
      'id',
      'name',
      'website',
    ]);
  });
});

describe('org(id)', () => {
  let owner: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let privateId: string;
  beforeAll(async () => {
    owner = await createUser(t);
    member = await createUser(t);
    stranger = await createUser(t);
    privateId = (await createOrg(t, owner, { public_access: 'None' })).id;
    await addMember(t, privateId, owner, member);
  });

  test('a private org is refused to an anonymous caller with UNAUTHENTICATED', async () => {
    const res = await gql(t, undefined, ORG, { id: privateId });
    expect(res.status).toBe(200);
    expect(errorCode(res)).toBe('UNAUTHENTICATED');
    expect(res.data).toEqual({ org: null });
  });

  test('a private org is refused to a signed-in non-member with FORBIDDEN', async () => {
    const res = await gql(t, stranger.auth, ORG, { id: privateId });
    expect(errorCode(res)).toBe('FORBIDDEN');
    expect(res.data).toEqual({ org: null });
  });

  test('a private org is readable by a member and by the superuser', async () => {
    const byMember = dataOf(await gql(t, member.auth, ORG, { id: privateId })).org;
    expect(byMember).toMatchObject({
      id: privateId,
      publicAccess: 'NONE',
      membersCount: 2,
      myRole: 'MEMBER',
    });
    const bySuperuser = dataOf(await gql(t, t.admin, ORG, { id: privateId })).org;
    expect(bySuperuser).toMatchObject({ id: privateId, membersCount: 2, myRole: null });
  });

  test('a public org is readable by anyone', async () => {
    const { id } = await createOrg(t, owner);
    for (const auth of [undefined, stranger.auth]) {
      const org = dataOf(await gql(t, auth, ORG, { id })).org;
      expect(org).toMatchObject({ id, publicAccess: 'VIEW', myRole: null, membersCount: 1 });
    }
  });

  test('an unknown org is NOT_FOUND, even to the superuser', async () => {
    expect(errorCode(await gql(t, t.admin, ORG, { id: uniqueId('noorg') }))).toBe('NOT_FOUND');
    expect(errorCode(await gql(t, undefined, ORG, { id: uniqueId('noorg') }))).toBe('NOT_FOUND');
  });
});

describe('orgs list', () => {
  let owner: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let company: string;
  let publicId: string;
  let privateId: string;
  beforeAll(async () => {
    owner = await createUser(t);
    member = await createUser(t);
    stranger = await createUser(t);
    company = uniqueId('co');
    // Unrelated ids, so that a search for one never fuzzily finds the other.
    publicId = (await createOrg(t, owner, { id: uniqueId('pub'), company })).id;
    privateId = (
      await createOrg(t, owner, { id: uniqueId('priv'), company, public_access: 'None' })
    ).id;
    await addMember(t, privateId, owner, member);
  });

  test('a private org is never listed to a non-member or an anonymous caller', async () => {
    for (const auth of [undefined, stranger.auth]) {
      expect((await orgIds(auth, { q: privateId, limit: 0 })).ids).not.toContain(privateId);
      expect((await orgIds(auth, { q: publicId, limit: 0 })).ids).toContain(publicId);
      expect(await orgIds(auth, { company: [company] })).toEqual({
        totalCount: 1,
        ids: [publicId],
      });
    }
  });

  test('a private org is listed to its members and to the superuser', async () => {
    for (const auth of [member.auth, owner.auth, t.admin]) {
      expect((await orgIds(auth, { q: privateId, limit: 0 })).ids).toContain(privateId);
      expect(await orgIds(auth, { company: [company.toUpperCase()], sort: 'name' })).toEqual({
        totalCount: 2,
        // Names are `Org <id>`, so by name is by id.
        ids: [privateId, publicId].sort(),
      });
    }
  });

  test('q ranks the org whose id matches exactly first', async () => {
    const page = await orgIds(undefined, { q: publicId });
    expect(page.ids[0]).toBe(publicId);
  });

  test('orgs pages with limit and offset, totalCount staying whole', async () => {
    const sorted = [privateId, publicId].sort();
    const first = await orgIds(t.admin, { company: [company], sort: 'id', limit: 1, offset: 0 });
    const second = await orgIds(t.admin, { company: [company], sort: 'id', limit: 1, offset: 1 });
    expect(first).toEqual({ totalCount: 2, ids: [sorted[0]] });
    expect(second).toEqual({ totalCount: 2, ids: [sorted[1]] });
  });

  test('an unknown sort is INVALID', async () => {
    const res = await gql(t, undefined, ORGS, { company: [company], sort: 'popularity' });
    expect(errorCode(res)).toBe('INVALID');
    expect(res.errors![0].extensions!.fieldErrors).toHaveProperty('sort');
  });
});

describe('updateOrg', () => {
  test('a plain member updates the org; only the fields sent change', async () => {
    const owner = await createUser(t);
    const member = await createUser(t);
    const { id } = await createOrg(t, owner, { company: 'Keep Co', location: 'Accra' });
    await addMember(t, id, owner, member);
    const updated = dataOf(
      await gql(t, member.auth, UPDATE_ORG, {
        id,
        input: { name: 'Renamed', website: 'https://renamed.example.org' },
      }),
    ).updateOrg.org;
    expect(updated).toEqual({
      id,
      name: 'Renamed',
      company: 'Keep Co',
      location: 'Accra',
      website: 'https://renamed.example.org',
      publicAccess: 'VIEW',
      extras: null,
      updatedBy: member.username,
    });
    expect(dataOf(await gql(t, undefined, ORG, { id })).org.name).toBe('Renamed');
  });

  test('making an org private hides it from non-members', async () => {
    const owner = await createUser(t);
    const stranger = await createUser(t);
    const { id } = await createOrg(t, owner);
    dataOf(await gql(t, owner.auth, UPDATE_ORG, { id, input: { publicAccess: 'None' } }));
    expect(errorCode(await gql(t, stranger.auth, ORG, { id }))).toBe('FORBIDDEN');
    expect((await orgIds(stranger.auth, { q: id, limit: 0 })).ids).not.toContain(id);
    expect((await orgIds(owner.auth, { q: id, limit: 0 })).ids).toContain(id);
  });

  test('a non-member is refused with FORBIDDEN and nothing changes', async () => {
    const owner = await createUser(t);
    const stranger = await createUser(t);
    const { id } = await createOrg(t, owner);
    const res = await gql(t, stranger.auth, UPDATE_ORG, { id, input: { name: 'Taken over' } });
    expect(errorCode(res)).toBe('FORBIDDEN');
    expect(dataOf(await gql(t, undefined, ORG, { id })).org.name).toBe(`Org ${id}`);
  });

  test('an anonymous caller is refused with UNAUTHENTICATED', async () => {
    const owner = await createUser(t);
    const { id } = await createOrg(t, owner);
    expect(errorCode(await gql(t, undefined, UPDATE_ORG, { id, input: { name: 'X' } }))).toBe(
      'UNAUTHENTICATED',
    );
  });

  test('invalid values are INVALID with field errors; an unknown org is NOT_FOUND', async () => {
    const owner = await createUser(t);
    const { id } = await createOrg(t, owner);
    const res = await gql(t, owner.auth, UPDATE_ORG, {
      id,
      input: { name: '', website: 'nope' },
    });
    expect(errorCode(res)).toBe('INVALID');
    expect(Object.keys(res.errors![0].extensions!.fieldErrors!).sort()).toEqual([
      'name',
      'website',
    ]);
    const missing = await gql(t, t.admin, UPDATE_ORG, {
      id: uniqueId('noorg'),
      input: { name: 'X' },
    });
    expect(errorCode(missing)).toBe('NOT_FOUND');
  });
});

describe('deleteOrg', () => {
  test('the superuser deletes an org, which is then NOT_FOUND', async () => {
    const owner = await createUser(t);
    const { id } = await createOrg(t, owner);
    expect(dataOf(await gql(t, t.admin, DELETE_ORG, { id }))).toEqual({
      deleteOrg: { deletedId: expect.any(String) },
    });
    expect(errorCode(await gql(t, owner.auth, ORG, { id }))).toBe('NOT_FOUND');
    const user = dataOf(
      await gql(t, owner.auth, `query($u: String!) { user(username: $u) { orgsCount } }`, {
        u: owner.username,
      }),
    );
    expect(user.user.orgsCount).toBe(0);
  });

  test("the org's own administrator is refused with FORBIDDEN and the org stays", async () => {
    const owner = await createUser(t);
    const { id } = await createOrg(t, owner);
    expect(errorCode(await gql(t, owner.auth, DELETE_ORG, { id }))).toBe('FORBIDDEN');
    expect(dataOf(await gql(t, owner.auth, ORG, { id })).org.id).toBe(id);
  });

  test('an anonymous caller is refused with UNAUTHENTICATED', async () => {
    const owner = await createUser(t);
    const { id } = await createOrg(t, owner);
    expect(errorCode(await gql(t, undefined, DELETE_ORG, { id }))).toBe('UNAUTHENTICATED');
    expect(dataOf(await gql(t, undefined, ORG, { id })).org.id).toBe(id);
  });

  test('deleting an unknown org is NOT_FOUND', async () => {
    expect(errorCode(await gql(t, t.admin, DELETE_ORG, { id: uniqueId('noorg') }))).toBe(
      'NOT_FOUND',
    );
  });
});

describe('addMember and removeMember', () => {
  let admin: TestUser;
  let plain: TestUser;
  let id: string;
  beforeEach(async () => {
    admin = await createUser(t);
    plain = await createUser(t);
    id = (await createOrg(t, admin)).id;
    await addMember(t, id, admin, plain);
  });

  test('an org admin adds a member, who then sees the role member', async () => {
    const newcomer = await createUser(t);
    expect(dataOf(await gql(t, admin.auth, ADD_MEMBER, { org: id, u: newcomer.username }))).toEqual(
      { addMember: { id: expect.any(String) } },
    );
    expect(await membersOf(id)).toEqual([admin.username, plain.username, newcomer.username].sort());
    expect(await roleIn(newcomer.auth, id)).toBe('MEMBER');
    expect(dataOf(await gql(t, t.admin, ORG, { id })).org.membersCount).toBe(3);
  });

  test('an org admin promotes a member to admin, who may then manage members', async () => {
    dataOf(await gql(t, admin.auth, ADD_MEMBER, { org: id, u: plain.username, role: 'admin' }));
    expect(await roleIn(plain.auth, id)).toBe('ADMIN');
    const newcomer = await createUser(t);
    dataOf(await gql(t, plain.auth, ADD_MEMBER, { org: id, u: newcomer.username }));
    expect(await membersOf(id)).toContain(newcomer.username);
  });

  test('adding an existing member without a role keeps their role', async () => {
    dataOf(await gql(t, admin.auth, ADD_MEMBER, { org: id, u: plain.username, role: 'admin' }));
    const again = `mutation($org: String!, $u: String!) { addMember(org: $org, username: $u) { id } }`;
    expect(dataOf(await gql(t, admin.auth, again, { org: id, u: plain.username }))).toEqual({
      addMember: { id: expect.any(String) },
    });
    expect(await roleIn(plain.auth, id)).toBe('ADMIN');
    const newcomer = await createUser(t);
    dataOf(await gql(t, admin.auth, again, { org: id, u: newcomer.username }));
    expect(await roleIn(newcomer.auth, id)).toBe('MEMBER');
  });

  test('the superuser manages the members of any org', async () => {
    const newcomer = await createUser(t);
    dataOf(await gql(t, t.admin, ADD_MEMBER, { org: id, u: newcomer.username }));
    dataOf(await gql(t, t.admin, REMOVE_MEMBER, { org: id, u: plain.username }));
    expect(await membersOf(id)).toEqual([admin.username, newcomer.username].sort());
  });

  test('a plain member may neither add nor remove members nor grant the administrator role (FORBIDDEN; spec core §4.2)', async () => {
    const newcomer = await createUser(t);
    for (const role of ['admin', 'member']) {
      expect(
        errorCode(await gql(t, plain.auth, ADD_MEMBER, { org: id, u: newcomer.username, role })),
      ).toBe('FORBIDDEN');
    }
    expect(
      errorCode(
        await gql(t, plain.auth, ADD_MEMBER, { org: id, u: plain.username, role: 'admin' }),
      ),
    ).toBe('FORBIDDEN');
    expect(errorCode(await gql(t, plain.auth, REMOVE_MEMBER, { org: id, u: admin.username }))).toBe(
      'FORBIDDEN',
    );
    expect(await membersOf(id)).toEqual([admin.username, plain.username].sort());
    expect(await roleIn(plain.auth, id)).toBe('MEMBER');
  });

  test('a non-member is refused with FORBIDDEN and an anonymous caller with UNAUTHENTICATED', async () => {
    const stranger = await createUser(t);
    expect(
      errorCode(await gql(t, stranger.auth, ADD_MEMBER, { org: id, u: stranger.username })),
    ).toBe('FORBIDDEN');
    expect(errorCode(await gql(t, undefined, ADD_MEMBER, { org: id, u: stranger.username }))).toBe(
      'UNAUTHENTICATED',
    );
    expect(errorCode(await gql(t, undefined, REMOVE_MEMBER, { org: id, u: plain.username }))).toBe(
      'UNAUTHENTICATED',
    );
    expect(await membersOf(id)).toEqual([admin.username, plain.username].sort());
  });

  test('adding or removing an unknown user is NOT_FOUND', async () => {
    const ghost = uniqueId('ghost');
    expect(errorCode(await gql(t, admin.auth, ADD_MEMBER, { org: id, u: ghost }))).toBe(
      'NOT_FOUND',
    );
    expect(errorCode(await gql(t, admin.auth, REMOVE_MEMBER, { org: id, u: ghost }))).toBe(
      'NOT_FOUND',
    );
  });

  test('adding a member to an unknown org is NOT_FOUND', async () => {
    expect(
      errorCode(
        await gql(t, admin.auth, ADD_MEMBER, { org: uniqueId('noorg'), u: plain.username }),
      ),
    ).toBe('NOT_FOUND');
  });

  test('removing a user who is not a member is NOT_FOUND', async () => {
    const outsider = await createUser(t);
    expect(
      errorCode(await gql(t, admin.auth, REMOVE_MEMBER, { org: id, u: outsider.username })),
    ).toBe('NOT_FOUND');
  });

  test('an org admin removes a member, who loses access to a private org', async () => {
    dataOf(await gql(t, admin.auth, UPDATE_ORG, { id, input: { publicAccess: 'None' } }));
    expect(await roleIn(plain.auth, id)).toBe('MEMBER');
    expect(dataOf(await gql(t, admin.auth, REMOVE_MEMBER, { org: id, u: plain.username }))).toEqual(
      { removeMember: { id: expect.any(String) } },
    );
    expect(await membersOf(id)).toEqual([admin.username]);
    expect(errorCode(await gql(t, plain.auth, ORG, { id }))).toBe('FORBIDDEN');
  });

  test('removing the last admin is a CONFLICT, also for the superuser', async () => {
    expect(errorCode(await gql(t, admin.auth, REMOVE_MEMBER, { org: id, u: admin.username }))).toBe(
      'CONFLICT',
    );
    expect(errorCode(await gql(t, t.admin, REMOVE_MEMBER, { org: id, u: admin.username }))).toBe(
      'CONFLICT',
    );
    expect(await roleIn(admin.auth, id)).toBe('ADMIN');
  });

  test('demoting the last admin to member is a CONFLICT', async () => {
    const res = await gql(t, admin.auth, ADD_MEMBER, {
      org: id,
      u: admin.username,
      role: 'member',
    });
    expect(errorCode(res)).toBe('CONFLICT');
    expect(await roleIn(admin.auth, id)).toBe('ADMIN');
  });

  test('with a second admin, an admin may leave', async () => {
    dataOf(await gql(t, admin.auth, ADD_MEMBER, { org: id, u: plain.username, role: 'admin' }));
    dataOf(await gql(t, admin.auth, REMOVE_MEMBER, { org: id, u: admin.username }));
    expect(await membersOf(id)).toEqual([plain.username]);
    expect(await roleIn(plain.auth, id)).toBe('ADMIN');
    expect(await roleIn(admin.auth, id)).toBeNull();
  });
});

describe('Organization.members and hasMember', () => {
  let owner: TestUser;
  let others: TestUser[];
  let stranger: TestUser;
  let id: string;
  let all: string[];
  beforeAll(async () => {
    owner = await createUser(t);
    stranger = await createUser(t);
    id = (await createOrg(t, owner)).id;
    others = [];
    for (let i = 0; i < 4; i++) {
      const user = await createUser(t);
      await addMember(t, id, owner, user);
      others.push(user);
    }
    all = [owner, ...others].map((u) => u.username).sort();
  });

  test('members pages by username with a whole totalCount', async () => {
    const pages: string[][] = [];
    for (const offset of [0, 2, 4]) {
      const org = dataOf(await gql(t, owner.auth, MEMBERS, { id, limit: 2, offset })).org;
      expect(org.membersCount).toBe(5);
      expect(org.members.totalCount).toBe(5);
      pages.push(org.members.items.map((u: { username: string }) => u.username));
    }
    expect(pages).toEqual([all.slice(0, 2), all.slice(2, 4), all.slice(4)]);
  });

  test('limit 0 lists every member', async () => {
    const org = dataOf(await gql(t, owner.auth, MEMBERS, { id, limit: 0, offset: 0 })).org;
    expect(org.members.items.map((u: { username: string }) => u.username)).toEqual(all);
  });

  test('the members of a public org are visible to anyone', async () => {
    const org = dataOf(await gql(t, undefined, MEMBERS, { id, limit: 0, offset: 0 })).org;
    expect(org.members.totalCount).toBe(5);
  });

  test('a deactivated member leaves the list and the count', async () => {
    const leaver = await createUser(t);
    await addMember(t, id, owner, leaver);
    expect(
      dataOf(await gql(t, owner.auth, MEMBERS, { id, limit: 0, offset: 0 })).org.membersCount,
    ).toBe(6);
    dataOf(
      await gql(t, t.admin, `mutation($u: String!) { deactivateUser(username: $u) { id } }`, {
        u: leaver.username,
      }),
    );
    const org = dataOf(await gql(t, owner.auth, MEMBERS, { id, limit: 0, offset: 0 })).org;
    expect(org.membersCount).toBe(5);
    expect(org.members.items.map((u: { username: string }) => u.username)).toEqual(all);
  });

  test('members may ask hasMember, true for a member and false for anyone else', async () => {
    for (const asker of [owner, others[0]]) {
      const yes = await gql(t, asker.auth, HAS_MEMBER, { id, u: others[1].username });
      expect(dataOf(yes).org.hasMember).toBe(true);
      const no = await gql(t, asker.auth, HAS_MEMBER, { id, u: stranger.username });
      expect(dataOf(no).org.hasMember).toBe(false);
    }
    const bySuperuser = await gql(t, t.admin, HAS_MEMBER, { id, u: owner.username });
    expect(dataOf(bySuperuser).org.hasMember).toBe(true);
  });

  test('hasMember asked by a non-member is FORBIDDEN, by an anonymous caller UNAUTHENTICATED', async () => {
    const byStranger = await gql(t, stranger.auth, HAS_MEMBER, { id, u: owner.username });
    expect(errorCode(byStranger)).toBe('FORBIDDEN');
    expect(byStranger.errors![0].path).toEqual(['org', 'hasMember']);
    const byAnonymous = await gql(t, undefined, HAS_MEMBER, { id, u: owner.username });
    expect(errorCode(byAnonymous)).toBe('UNAUTHENTICATED');
  });

  test('hasMember for an unknown user is NOT_FOUND', async () => {
    const res = await gql(t, owner.auth, HAS_MEMBER, { id, u: uniqueId('ghost') });
    expect(errorCode(res)).toBe('NOT_FOUND');
  });
});
