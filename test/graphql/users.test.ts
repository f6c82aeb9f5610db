import request from 'supertest';
import {
  ADMIN_PASSWORD,
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

const USER_FIELDS = `uuid username name email company location preferredLocale website extras
  isSuperuser isActive verified url createdBy updatedBy createdOn updatedOn`;

const ME = `{ me { username isSuperuser } }`;
const USER = `query($u: String!) { user(username: $u) { ${USER_FIELDS} } }`;
const USERS = `query($q: String, $limit: Int!, $offset: Int!, $sort: String, $sortDesc: Boolean!,
    $company: [String!], $location: [String!]) {
  users(q: $q, limit: $limit, offset: $offset, sort: $sort, sortDesc: $sortDesc,
        company: $company, location: $location) { totalCount items { username } }
}`;
const LOGIN = `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token user { username } } }`;
const CREATE_USER = `mutation($input: CreateUserInput!) { createUser(input: $input) { user { ${USER_FIELDS} } } }`;
const SIGNUP = `mutation($input: SignupInput!) { signup(input: $input) { user { username verified isActive } } }`;
const UPDATE_USER = `mutation($u: String, $input: UpdateUserInput!) {
  updateUser(username: $u, input: $input) { user { username name company location website updatedBy } }
}`;
const DEACTIVATE = `mutation($u: String!) { deactivateUser(username: $u) { id } }`;
const REACTIVATE = `mutation($u: String!) { reactivateUser(username: $u) { id } }`;

interface ListVars {
  q?: string;
  limit?: number;
  offset?: number;
  sort?: string;
  sortDesc?: boolean;
  company?: string[];
  location?: string[];
}

async function listUsers(auth: string | undefined, vars: ListVars) {
  const res = await gql(t, auth, USERS, { limit: 10, offset: 0, sortDesc: false, ...vars });
  const page = dataOf(res).users as { totalCount: number; items: Array<{ username: string }> };
  return { totalCount: page.totalCount, usernames: page.items.map((u) => u.username) };
}

/** The `/users/<u>/verify/<token>/` path of the last link mailed to `email`. */
function verificationPath(email: string): string {
  const mail = t.mailer.lastTo(email);
  expect(mail).toBeDefined();
  const match = /https?:\/\/[^/\s]+(\/users\/[^/\s]+\/verify\/[^/\s]+\/)/.exec(mail!.text);
  expect(match).not.toBeNull();
  return match![1];
}

describe('me', () => {
  test('me is null for an anonymous caller', async () => {
    const res = await gql(t, undefined, ME);
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ me: null });
  });

  test('me is the signed-in user', async () => {
    const user = await createUser(t);
    expect(dataOf(await gql(t, user.auth, ME)).me).toEqual({
      username: user.username,
      isSuperuser: false,
    });
    expect(dataOf(await gql(t, t.admin, ME)).me).toEqual({
      username: 'ocladmin',
      isSuperuser: true,
    });
  });
});

describe('user(username)', () => {
  test('returns the public profile fields, also to an anonymous caller', async () => {
    const user = await createUser(t, {
      company: 'Acme Health',
      location: 'Kigali',
      website: 'https://example.org/me',
      preferred_locale: 'en,fr',
      extras: { team: 'terminology' },
    });
    const res = await gql(t, undefined, USER, { u: user.username });
    const profile = dataOf(res).user;
    expect(profile).toMatchObject({
      username: user.username,
      name: `Name of ${user.username}`,
      email: user.email,
      company: 'Acme Health',
      location: 'Kigali',
      website: 'https://example.org/me',
      preferredLocale: 'en,fr',
      extras: { team: 'terminology' },
      isSuperuser: false,
      isActive: true,
      verified: true,
      url: `/users/${user.username}/`,
      createdBy: 'ocladmin',
    });
    expect(typeof profile.uuid).toBe('string');
    expect(Number.isNaN(Date.parse(profile.createdOn))).toBe(false);
    expect(Number.isNaN(Date.parse(profile.updatedOn))).toBe(false);
  });

  test('an unknown username is NOT_FOUND', async () => {
    const res = await gql(t, t.admin, USER, { u: uniqueId('nobody') });
    expect(res.status).toBe(200);
    expect(errorCode(res)).toBe('NOT_FOUND');
    expect(res.data).toEqual({ user: null });
  });

  test('a deactivated user is NOT_FOUND to ordinary users and anonymous, visible to the superuser', async () => {
    const gone = await createUser(t);
    const other = await createUser(t);
    dataOf(await gql(t, t.admin, DEACTIVATE, { u: gone.username }));

    expect(errorCode(await gql(t, other.auth, USER, { u: gone.username }))).toBe('NOT_FOUND');
    expect(errorCode(await gql(t, undefined, USER, { u: gone.username }))).toBe('NOT_FOUND');
    const seen = dataOf(await gql(t, t.admin, USER, { u: gone.username })).user;
    expect(seen).toMatchObject({ username: gone.username, isActive: false });
  });
});

describe('users list', () => {
  let tag: string;
  let names: string[];
  beforeAll(async () => {
    tag = uniqueId('ul');
    // Created out of order, so that sorting is really exercised.
    const specs = [
      { suffix: 'c', company: `North-${tag}`, location: `Town-${tag}` },
      { suffix: 'a', company: `North-${tag}`, location: `City-${tag}` },
      { suffix: 'e', company: `South-${tag}`, location: `City-${tag}` },
      { suffix: 'b', company: `South-${tag}`, location: `Town-${tag}` },
      { suffix: 'd', company: `North-${tag}`, location: `City-${tag}` },
    ];
    for (const s of specs) {
      await createUser(t, {
        username: `${tag}-${s.suffix}`,
        company: s.company,
        location: s.location,
      });
    }
    names = ['a', 'b', 'c', 'd', 'e'].map((s) => `${tag}-${s}`);
  });

  test('q finds exactly the matching users with their totalCount', async () => {
    const page = await listUsers(undefined, { q: tag, sort: 'username' });
    expect(page.totalCount).toBe(5);
    expect(page.usernames).toEqual(names);
  });

  test('limit and offset page through the results while totalCount stays whole', async () => {
    const first = await listUsers(undefined, { q: tag, sort: 'username', limit: 2, offset: 0 });
    const second = await listUsers(undefined, { q: tag, sort: 'username', limit: 2, offset: 2 });
    const third = await listUsers(undefined, { q: tag, sort: 'username', limit: 2, offset: 4 });
    const past = await listUsers(undefined, { q: tag, sort: 'username', limit: 2, offset: 10 });
    expect([first.totalCount, second.totalCount, third.totalCount, past.totalCount]).toEqual([
      5, 5, 5, 5,
    ]);
    expect(first.usernames).toEqual(names.slice(0, 2));
    expect(second.usernames).toEqual(names.slice(2, 4));
    expect(third.usernames).toEqual(names.slice(4));
    expect(past.usernames).toEqual([]);
  });

  test('limit 0 returns every match', async () => {
    const page = await listUsers(undefined, { q: tag, sort: 'username', limit: 0 });
    expect(page.usernames).toEqual(names);
  });

  test('sortDesc reverses the order', async () => {
    const page = await listUsers(undefined, { q: tag, sort: 'username', sortDesc: true });
    expect(page.usernames).toEqual([...names].reverse());
  });

  test('company and location filter case-insensitively and combine', async () => {
    const north = await listUsers(undefined, {
      q: tag,
      sort: 'username',
      company: [`NORTH-${tag}`],
    });
    expect(north.usernames).toEqual([`${tag}-a`, `${tag}-c`, `${tag}-d`]);
    expect(north.totalCount).toBe(3);

    const town = await listUsers(undefined, {
      q: tag,
      sort: 'username',
      location: [`town-${tag}`],
    });
    expect(town.usernames).toEqual([`${tag}-b`, `${tag}-c`]);

    const both = await listUsers(undefined, {
      q: tag,
      sort: 'username',
      company: [`North-${tag}`],
      location: [`City-${tag}`],
    });
    expect(both.usernames).toEqual([`${tag}-a`, `${tag}-d`]);

    const either = await listUsers(undefined, {
      sort: 'username',
      company: [`North-${tag}`, `South-${tag}`],
    });
    expect(either.usernames).toEqual(names);
  });

  test('updatedSince keeps only users updated at or after the given time', async () => {
    const UPDATED = `query($q: String!, $since: DateTimeISO!) {
      users(q: $q, updatedSince: $since) { totalCount }
    }`;
    const past = new Date(Date.now() - 3_600_000).toISOString();
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(dataOf(await gql(t, undefined, UPDATED, { q: tag, since: past })).users.totalCount).toBe(
      5,
    );
    expect(
      dataOf(await gql(t, undefined, UPDATED, { q: tag, since: future })).users.totalCount,
    ).toBe(0);
  });

  test('a deactivated user is left out of the list', async () => {
    const extra = await createUser(t, { username: `${tag}-z` });
    expect((await listUsers(undefined, { q: tag, limit: 0 })).usernames).toContain(extra.username);
    dataOf(await gql(t, t.admin, DEACTIVATE, { u: extra.username }));
    const after = await listUsers(t.admin, { q: tag, limit: 0 });
    expect(after.usernames).not.toContain(extra.username);
    expect(after.totalCount).toBe(5);
  });

  test('an unknown sort is INVALID naming the sort argument', async () => {
    const res = await gql(t, undefined, USERS, {
      q: tag,
      limit: 10,
      offset: 0,
      sort: 'shoeSize',
      sortDesc: false,
    });
    expect(errorCode(res)).toBe('INVALID');
    expect(res.errors![0].extensions!.fieldErrors).toHaveProperty('sort');
  });

  test('a negative limit is INVALID', async () => {
    const res = await gql(t, undefined, USERS, { q: tag, limit: -1, offset: 0, sortDesc: false });
    expect(errorCode(res)).toBe('INVALID');
    expect(res.errors![0].extensions!.fieldErrors).toHaveProperty('limit');
  });
});

describe('login', () => {
  test('login returns a token that works as `Authorization: Token <token>`', async () => {
    const user = await createUser(t);
    const login = dataOf(
      await gql(t, undefined, LOGIN, { u: user.username, p: user.password }),
    ).login;
    expect(login.user).toEqual({ username: user.username });
    // 40 hex characters, the token shape OCL clients expect.
    expect(login.token).toMatch(/^[0-9a-f]{40}$/);
    const me = dataOf(await gql(t, `Token ${login.token}`, ME)).me;
    expect(me.username).toBe(user.username);
  });

  test('each login issues a new token', async () => {
    const user = await createUser(t);
    const a = dataOf(await gql(t, undefined, LOGIN, { u: user.username, p: user.password }));
    const b = dataOf(await gql(t, undefined, LOGIN, { u: user.username, p: user.password }));
    expect(a.login.token).not.toBe(b.login.token);
  });

  test('a wrong password is INVALID and gives no token', async () => {
    const user = await createUser(t);
    const res = await gql(t, undefined, LOGIN, { u: user.username, p: 'not-the-password' });
    expect(res.status).toBe(200);
    expect(errorCode(res)).toBe('INVALID');
    expect(res.data).toBeNull();
  });

  test('an unknown username is INVALID', async () => {
    const res = await gql(t, undefined, LOGIN, { u: uniqueId('ghost'), p: 'whatever-123' });
    expect(errorCode(res)).toBe('INVALID');
  });
});

describe('createUser', () => {
  const input = (username: string, extra: Record<string, unknown> = {}) => ({
    username,
    name: `Name ${username}`,
    email: `${username}@example.org`,
    password: 'created-password-1',
    ...extra,
  });

  test('the superuser creates a verified user who can log in at once', async () => {
    const username = uniqueId('new');
    const created = dataOf(
      await gql(t, t.admin, CREATE_USER, {
        input: input(username, { company: 'Partners', preferredLocale: 'es, en' }),
      }),
    ).createUser.user;
    expect(created).toMatchObject({
      username,
      name: `Name ${username}`,
      email: `${username}@example.org`,
      company: 'Partners',
      preferredLocale: 'es,en',
      verified: true,
      isActive: true,
      isSuperuser: false,
      createdBy: 'ocladmin',
      url: `/users/${username}/`,
    });
    const login = await gql(t, undefined, LOGIN, { u: username, p: 'created-password-1' });
    expect(dataOf(login).login.user.username).toBe(username);
  });

  test('a user created without a password cannot log in', async () => {
    const username = uniqueId('new');
    const withoutPassword: Record<string, unknown> = input(username);
    delete withoutPassword.password;
    dataOf(await gql(t, t.admin, CREATE_USER, { input: withoutPassword }));
    const res = await gql(t, undefined, LOGIN, { u: username, p: 'created-password-1' });
    expect(errorCode(res)).toBe('INVALID');
  });

  test('the preferred locale defaults to en', async () => {
    const username = uniqueId('new');
    const created = dataOf(await gql(t, t.admin, CREATE_USER, { input: input(username) }));
    expect(created.createUser.user.preferredLocale).toBe('en');
  });

  test('an ordinary user is refused with FORBIDDEN and nothing is created', async () => {
    const user = await createUser(t);
    const username = uniqueId('new');
    expect(errorCode(await gql(t, user.auth, CREATE_USER, { input: input(username) }))).toBe(
      'FORBIDDEN',
    );
    expect(errorCode(await gql(t, t.admin, USER, { u: username }))).toBe('NOT_FOUND');
  });

  test('an anonymous caller is refused with UNAUTHENTICATED', async () => {
    const username = uniqueId('new');
    const res = await gql(t, undefined, CREATE_USER, { input: input(username) });
    expect(res.status).toBe(200);
    expect(errorCode(res)).toBe('UNAUTHENTICATED');
    expect(errorCode(await gql(t, t.admin, USER, { u: username }))).toBe('NOT_FOUND');
  });

  test('a bad email is INVALID with a field error on email', async () => {
    const res = await gql(t, t.admin, CREATE_USER, {
      input: input(uniqueId('new'), { email: 'not-an-email' }),
    });
    expect(errorCode(res)).toBe('INVALID');
    expect(Object.keys(res.errors![0].extensions!.fieldErrors!)).toEqual(['email']);
  });

  test('several bad fields are all reported', async () => {
    const res = await gql(t, t.admin, CREATE_USER, {
      input: input('bad name!', {
        email: 'someone@example.org',
        website: 'example.org',
        password: 'short',
      }),
    });
    expect(errorCode(res)).toBe('INVALID');
    expect(Object.keys(res.errors![0].extensions!.fieldErrors!).sort()).toEqual([
      'password',
      'username',
      'website',
    ]);
  });

  test('a duplicate username, in any letter case, is INVALID with a field error on username', async () => {
    const existing = await createUser(t);
    for (const username of [existing.username, existing.username.toUpperCase()]) {
      const res = await gql(t, t.admin, CREATE_USER, { input: input(username) });
      expect(errorCode(res)).toBe('INVALID');
      expect(res.errors![0].extensions!.fieldErrors).toHaveProperty('username');
    }
    expect(errorCode(await gql(t, t.admin, USER, { u: existing.username.toUpperCase() }))).toBe(
      'NOT_FOUND',
    );
  });
});

describe('signup', () => {
  const signupInput = (username: string, extra: Record<string, unknown> = {}) => ({
    username,
    name: `Signed ${username}`,
    email: `${username}@example.net`,
    password: 'signup-password-1',
    ...extra,
  });

  test('signup creates an unverified user whose login is refused until the mailed link is followed', async () => {
    const username = uniqueId('signup');
    const email = `${username}@example.net`;
    const created = dataOf(await gql(t, undefined, SIGNUP, { input: signupInput(username) })).signup
      .user;
    expect(created).toEqual({ username, verified: false, isActive: true });
    expect(t.mailer.lastTo(email)?.subject).toMatch(/confirm/i);

    const refused = await gql(t, undefined, LOGIN, { u: username, p: 'signup-password-1' });
    expect(errorCode(refused)).toBe('UNAUTHENTICATED');
    expect(refused.data).toBeNull();

    // A refused login mails a fresh link; follow the newest one.
    const verify = await request(t.app).get(verificationPath(email));
    expect(verify.status).toBe(200);

    const login = dataOf(await gql(t, undefined, LOGIN, { u: username, p: 'signup-password-1' }));
    expect(login.login.user.username).toBe(username);
    const me = dataOf(await gql(t, `Token ${login.login.token}`, `{ me { username verified } }`));
    expect(me.me).toEqual({ username, verified: true });
  });

  test('a refused login mails a fresh link and the earlier one stops working', async () => {
    const username = uniqueId('signup');
    const email = `${username}@example.net`;
    dataOf(await gql(t, undefined, SIGNUP, { input: signupInput(username) }));
    const first = verificationPath(email);
    const sentBefore = t.mailer.sent.filter((m) => m.to === email).length;

    expect(errorCode(await gql(t, undefined, LOGIN, { u: username, p: 'signup-password-1' }))).toBe(
      'UNAUTHENTICATED',
    );
    expect(t.mailer.sent.filter((m) => m.to === email).length).toBe(sentBefore + 1);
    const second = verificationPath(email);
    expect(second).not.toBe(first);

    expect((await request(t.app).get(first)).status).toBe(400);
    expect((await request(t.app).get(second)).status).toBe(200);
    dataOf(await gql(t, undefined, LOGIN, { u: username, p: 'signup-password-1' }));
  });

  test('a forged verification token does not verify the user', async () => {
    const username = uniqueId('signup');
    dataOf(await gql(t, undefined, SIGNUP, { input: signupInput(username) }));
    const res = await request(t.app).get(`/users/${username}/verify/forged-token/`);
    expect(res.status).toBe(400);
    const user = dataOf(
      await gql(t, undefined, `query($u: String!) { user(username: $u) { verified } }`, {
        u: username,
      }),
    );
    expect(user.user.verified).toBe(false);
  });

  test('the mailed link redirects to emailVerifySuccessUrl when one was given', async () => {
    const username = uniqueId('signup');
    dataOf(
      await gql(t, undefined, SIGNUP, {
        input: signupInput(username, { emailVerifySuccessUrl: 'https://app.example.org/welcome' }),
      }),
    );
    const res = await request(t.app).get(verificationPath(`${username}@example.net`));
    expect(res.status).toBeGreaterThanOrEqual(300);
    expect(res.status).toBeLessThan(400);
    expect(res.headers.location).toBe('https://app.example.org/welcome');
  });

  test('signup with a taken username or a bad email is INVALID', async () => {
    const existing = await createUser(t);
    const dup = await gql(t, undefined, SIGNUP, { input: signupInput(existing.username) });
    expect(errorCode(dup)).toBe('INVALID');
    expect(dup.errors![0].extensions!.fieldErrors).toHaveProperty('username');

    const username = uniqueId('signup');
    const bad = await gql(t, undefined, SIGNUP, {
      input: signupInput(username, { email: 'nope' }),
    });
    expect(errorCode(bad)).toBe('INVALID');
    expect(bad.errors![0].extensions!.fieldErrors).toHaveProperty('email');
    expect(t.mailer.lastTo('nope')).toBeUndefined();
  });
});

describe('updateUser', () => {
  test('a user updates their own profile; only the fields sent change', async () => {
    const user = await createUser(t, { company: 'Before Co', location: 'Here' });
    const updated = dataOf(
      await gql(t, user.auth, UPDATE_USER, {
        input: { name: 'New Name', website: 'https://example.com/new' },
      }),
    ).updateUser.user;
    expect(updated).toEqual({
      username: user.username,
      name: 'New Name',
      company: 'Before Co',
      location: 'Here',
      website: 'https://example.com/new',
      updatedBy: user.username,
    });
    const read = dataOf(await gql(t, undefined, USER, { u: user.username })).user;
    expect(read).toMatchObject({ name: 'New Name', company: 'Before Co' });
  });

  test('a user may name themselves explicitly and clear a field with null', async () => {
    const user = await createUser(t, { company: 'Gone Co' });
    const updated = dataOf(
      await gql(t, user.auth, UPDATE_USER, { u: user.username, input: { company: null } }),
    ).updateUser.user;
    expect(updated.company).toBeNull();
  });

  test('a password change takes effect at the next login', async () => {
    const user = await createUser(t);
    dataOf(await gql(t, user.auth, UPDATE_USER, { input: { password: 'brand-new-password' } }));
    expect(errorCode(await gql(t, undefined, LOGIN, { u: user.username, p: user.password }))).toBe(
      'INVALID',
    );
    dataOf(await gql(t, undefined, LOGIN, { u: user.username, p: 'brand-new-password' }));
  });

  test('the superuser updates another user', async () => {
    const user = await createUser(t);
    const updated = dataOf(
      await gql(t, t.admin, UPDATE_USER, { u: user.username, input: { location: 'Lusaka' } }),
    ).updateUser.user;
    expect(updated).toMatchObject({ username: user.username, location: 'Lusaka' });
    expect(updated.updatedBy).toBe('ocladmin');
  });

  test('another user is refused with FORBIDDEN and nothing changes', async () => {
    const victim = await createUser(t);
    const other = await createUser(t);
    const res = await gql(t, other.auth, UPDATE_USER, {
      u: victim.username,
      input: { name: 'Hijacked' },
    });
    expect(errorCode(res)).toBe('FORBIDDEN');
    const read = dataOf(await gql(t, undefined, USER, { u: victim.username })).user;
    expect(read.name).toBe(`Name of ${victim.username}`);
  });

  test('an anonymous caller is refused with UNAUTHENTICATED', async () => {
    const victim = await createUser(t);
    const res = await gql(t, undefined, UPDATE_USER, {
      u: victim.username,
      input: { name: 'Hijacked' },
    });
    expect(errorCode(res)).toBe('UNAUTHENTICATED');
  });

  test('a bad website or a blank name is INVALID with field errors', async () => {
    const user = await createUser(t);
    const res = await gql(t, user.auth, UPDATE_USER, {
      input: { website: 'ftp://example.org', name: '  ' },
    });
    expect(errorCode(res)).toBe('INVALID');
    expect(Object.keys(res.errors![0].extensions!.fieldErrors!).sort()).toEqual([
      'name',
      'website',
    ]);
  });

  test('updating an unknown user is NOT_FOUND', async () => {
    const res = await gql(t, t.admin, UPDATE_USER, { u: uniqueId('ghost'), input: { name: 'X' } });
    expect(errorCode(res)).toBe('NOT_FOUND');
  });
});

describe('deactivateUser and reactivateUser', () => {
  test("after deactivation the user's token stops working with HTTP 401, and reactivation restores access", async () => {
    const user = await createUser(t);
    expect(dataOf(await gql(t, user.auth, ME)).me.username).toBe(user.username);

    expect(dataOf(await gql(t, t.admin, DEACTIVATE, { u: user.username }))).toEqual({
      deactivateUser: { id: expect.any(String) },
    });
    const refused = await gql(t, user.auth, ME);
    expect(refused.status).toBe(401);
    expect(refused.errors![0].extensions!.code).toBe('UNAUTHENTICATED');
    expect(refused.data).toBeUndefined();

    const login = await gql(t, undefined, LOGIN, { u: user.username, p: user.password });
    expect(errorCode(login)).toBe('UNAUTHENTICATED');

    expect(dataOf(await gql(t, t.admin, REACTIVATE, { u: user.username }))).toEqual({
      reactivateUser: { id: expect.any(String) },
    });
    const read = dataOf(await gql(t, undefined, USER, { u: user.username })).user;
    expect(read.isActive).toBe(true);
    dataOf(await gql(t, undefined, LOGIN, { u: user.username, p: user.password }));
  });

  test('an ordinary user may neither deactivate nor reactivate (FORBIDDEN)', async () => {
    const user = await createUser(t);
    const target = await createUser(t);
    expect(errorCode(await gql(t, user.auth, DEACTIVATE, { u: target.username }))).toBe(
      'FORBIDDEN',
    );
    expect(errorCode(await gql(t, user.auth, DEACTIVATE, { u: user.username }))).toBe('FORBIDDEN');
    dataOf(await gql(t, t.admin, DEACTIVATE, { u: target.username }));
    expect(errorCode(await gql(t, user.auth, REACTIVATE, { u: target.username }))).toBe(
      'FORBIDDEN',
    );
    expect(errorCode(await gql(t, user.auth, USER, { u: target.username }))).toBe('NOT_FOUND');
  });

  test('an anonymous caller is refused with UNAUTHENTICATED', async () => {
    const target = await createUser(t);
    expect(errorCode(await gql(t, undefined, DEACTIVATE, { u: target.username }))).toBe(
      'UNAUTHENTICATED',
    );
    expect(errorCode(await gql(t, undefined, REACTIVATE, { u: target.username }))).toBe(
      'UNAUTHENTICATED',
    );
    expect(dataOf(await gql(t, target.auth, ME)).me.username).toBe(target.username);
  });

  test('deactivating an unknown or already deactivated user is NOT_FOUND; reactivating an unknown user is NOT_FOUND', async () => {
    const user = await createUser(t);
    dataOf(await gql(t, t.admin, DEACTIVATE, { u: user.username }));
    expect(errorCode(await gql(t, t.admin, DEACTIVATE, { u: user.username }))).toBe('NOT_FOUND');
    expect(errorCode(await gql(t, t.admin, DEACTIVATE, { u: uniqueId('ghost') }))).toBe(
      'NOT_FOUND',
    );
    expect(errorCode(await gql(t, t.admin, REACTIVATE, { u: uniqueId('ghost') }))).toBe(
      'NOT_FOUND',
    );
  });

  test('reactivating an active user succeeds and changes nothing', async () => {
    const user = await createUser(t);
    expect(dataOf(await gql(t, t.admin, REACTIVATE, { u: user.username }))).toEqual({
      reactivateUser: { id: expect.any(String) },
    });
    expect(dataOf(await gql(t, user.auth, ME)).me.username).toBe(user.username);
  });
});

describe('User counts and orgs', () => {
  const USER_ORGS = `query($u: String!) {
    user(username: $u) {
      orgsCount publicSources publicCollections
      orgs(limit: 0) { totalCount items { id } }
    }
  }`;

  let owner: TestUser;
  let fellow: TestUser;
  let stranger: TestUser;
  let publicOrgs: string[];
  let privateOrg: string;
  beforeAll(async () => {
    owner = await createUser(t);
    fellow = await createUser(t);
    stranger = await createUser(t);
    publicOrgs = [(await createOrg(t, owner)).id, (await createOrg(t, owner)).id].sort();
    privateOrg = (await createOrg(t, owner, { public_access: 'None' })).id;
    await addMember(t, privateOrg, owner, fellow);
  });

  async function seenBy(auth: string | undefined) {
    const user = dataOf(await gql(t, auth, USER_ORGS, { u: owner.username })).user;
    return {
      orgsCount: user.orgsCount as number,
      publicSources: user.publicSources as number,
      publicCollections: user.publicCollections as number,
      totalCount: user.orgs.totalCount as number,
      ids: (user.orgs.items as Array<{ id: string }>).map((o) => o.id).sort(),
    };
  }

  test('a private org of the user is hidden from a third party and from anonymous callers', async () => {
    for (const auth of [stranger.auth, undefined]) {
      const seen = await seenBy(auth);
      expect(seen.ids).toEqual(publicOrgs);
      expect(seen.totalCount).toBe(2);
      expect(seen.orgsCount).toBe(2);
    }
  });

  test('a private org of the user is visible to a fellow member, the user and the superuser', async () => {
    const all = [...publicOrgs, privateOrg].sort();
    for (const auth of [fellow.auth, owner.auth, t.admin]) {
      const seen = await seenBy(auth);
      expect(seen.ids).toEqual(all);
      expect(seen.totalCount).toBe(3);
      expect(seen.orgsCount).toBe(3);
    }
  });

  test('a user without repositories has zero public sources and collections', async () => {
    const seen = await seenBy(stranger.auth);
    expect(seen.publicSources).toBe(0);
    expect(seen.publicCollections).toBe(0);
  });

  test("User.orgs pages through the user's orgs", async () => {
    const PAGE = `query($u: String!, $offset: Int!) {
      user(username: $u) { orgs(limit: 2, offset: $offset, sort: "id") { totalCount items { id } } }
    }`;
    const all = [...publicOrgs, privateOrg].sort();
    const first = dataOf(await gql(t, owner.auth, PAGE, { u: owner.username, offset: 0 }));
    const second = dataOf(await gql(t, owner.auth, PAGE, { u: owner.username, offset: 2 }));
    expect(first.user.orgs.totalCount).toBe(3);
    expect(first.user.orgs.items.map((o: { id: string }) => o.id)).toEqual(all.slice(0, 2));
    expect(second.user.orgs.items.map((o: { id: string }) => o.id)).toEqual(all.slice(2));
  });

  test('a user in no org has orgsCount 0 and an empty orgs page', async () => {
    const loner = await createUser(t);
    const user = dataOf(await gql(t, loner.auth, USER_ORGS, { u: loner.username })).user;
    expect(user.orgsCount).toBe(0);
    expect(user.orgs).toEqual({ totalCount: 0, items: [] });
  });
});

test('the bootstrap superuser logs in through the mutation too', async () => {
  const res = dataOf(await gql(t, undefined, LOGIN, { u: 'ocladmin', p: ADMIN_PASSWORD }));
  const me = dataOf(await gql(t, `Token ${res.login.token}`, ME)).me;
  expect(me).toEqual({ username: 'ocladmin', isSuperuser: true });
});
