import crypto from 'node:crypto';
import request from 'supertest';
import { gql } from '../graphql/gql';
import { createTestApp, createUser, uniqueId, type TestApp } from '../factories';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  POST_LOGOUT_REDIRECT_URI,
  REDIRECT_URI,
  signInAtProvider,
  startProvider,
  type TestProvider,
} from '../oidc/provider';

let provider: TestProvider;
let t: TestApp;
beforeAll(async () => {
  provider = await startProvider();
  t = await createTestApp(provider.env);
});
afterAll(async () => {
  await t?.close();
  await provider?.stop();
});

/** What oclweb3 does: `GET /users/login/` here, then the provider's pages, back with a code. */
async function authorizationCode(
  login: string,
  app: TestApp = t,
  extra: Record<string, string> = {},
): Promise<string> {
  const state = uniqueId('state');
  const start = await request(app.app)
    .get('/users/login/')
    .query({
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      state,
      nonce: uniqueId('nonce'),
      ...extra,
    });
  expect(start.status).toBe(302);
  const back = await signInAtProvider(start.headers.location, login);
  expect(back.searchParams.get('state')).toBe(state);
  return back.searchParams.get('code')!;
}

/** The client's next step: the code for the provider's tokens, through our code exchange. */
async function exchange(code: string): Promise<request.Response> {
  return request(t.app)
    .post('/users/oidc/code-exchange/')
    .send({ code, redirect_uri: REDIRECT_URI, client_id: CLIENT_ID, client_secret: 'ignored' });
}

async function signIn(login: string): Promise<{ accessToken: string; idToken: string }> {
  const res = await exchange(await authorizationCode(login));
  expect(res.status).toBe(200);
  return { accessToken: res.body.access_token, idToken: res.body.id_token };
}

async function me(auth: string): Promise<request.Response> {
  return request(t.app).get('/user/').set('Authorization', auth);
}

describe('GET /users/login/', () => {
  it("redirects to the provider's authorization endpoint with the client's parameters", async () => {
    const res = await request(t.app).get('/users/login/').query({
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      state: 'the-state',
      nonce: 'the-nonce',
    });
    expect(res.status).toBe(302);
    const target = new URL(res.headers.location);
    expect(target.origin).toBe(provider.issuer);
    expect(Object.fromEntries(target.searchParams)).toMatchObject({
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: 'openid profile email',
      state: 'the-state',
      nonce: 'the-nonce',
    });
  });

  it('answers 400 without a redirect_uri or for another client', async () => {
    const none = await request(t.app).get('/users/login/').query({ client_id: CLIENT_ID });
    expect(none.status).toBe(400);
    expect(none.body.errors).toHaveProperty('redirect_uri');
    const other = await request(t.app)
      .get('/users/login/')
      .query({ client_id: 'someone-else', redirect_uri: REDIRECT_URI });
    expect(other.status).toBe(400);
    expect(other.body.errors).toHaveProperty('client_id');
  });
});

describe("GET /users/signup/ and /users/password/reset/ (the web client's SSO links)", () => {
  it("sends sign-up to the provider's authorization endpoint asking it to create an account", async () => {
    const res = await request(t.app).get('/users/signup/').query({
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      state: 'the-state',
      nonce: 'the-nonce',
    });
    expect(res.status).toBe(302);
    const target = new URL(res.headers.location);
    expect(target.origin).toBe(provider.issuer);
    expect(Object.fromEntries(target.searchParams)).toMatchObject({
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      prompt: 'create',
      state: 'the-state',
      nonce: 'the-nonce',
    });
  });

  it("sends a password reset to the provider with Keycloak's action, as OCL does", async () => {
    const res = await request(t.app)
      .get('/users/password/reset/')
      .query({ client_id: CLIENT_ID, redirect_uri: REDIRECT_URI });
    expect(res.status).toBe(302);
    const target = new URL(res.headers.location);
    expect(target.origin).toBe(provider.issuer);
    expect(Object.fromEntries(target.searchParams)).toMatchObject({
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: 'openid',
      kc_action: 'UPDATE_PASSWORD',
    });
  });

  it('uses the registration and reset pages the configuration names', async () => {
    const named = await createTestApp({
      ...provider.env,
      OIDC_REGISTRATION_URL: `${provider.issuer}/register?theme=ocl`,
      OIDC_PASSWORD_RESET_URL: `${provider.issuer}/reset`,
    });
    try {
      const signup = await request(named.app)
        .get('/users/signup/')
        .query({ client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, state: 's' });
      const to = new URL(signup.headers.location);
      expect(`${to.origin}${to.pathname}`).toBe(`${provider.issuer}/register`);
      expect(Object.fromEntries(to.searchParams)).toMatchObject({
        theme: 'ocl',
        client_id: CLIENT_ID,
        redirect_uri: REDIRECT_URI,
        state: 's',
      });
      const reset = await request(named.app)
        .get('/users/password/reset/')
        .query({ redirect_uri: REDIRECT_URI });
      expect(new URL(reset.headers.location).pathname).toBe(
        new URL(`${provider.issuer}/reset`).pathname,
      );
    } finally {
      await named.close();
    }
  });

  it('answers 400 without a redirect_uri or for another client', async () => {
    for (const path of ['/users/signup/', '/users/password/reset/']) {
      const none = await request(t.app).get(path).query({ client_id: CLIENT_ID });
      expect(none.status).toBe(400);
      expect(none.body.errors).toHaveProperty('redirect_uri');
      const other = await request(t.app)
        .get(path)
        .query({ client_id: 'someone-else', redirect_uri: REDIRECT_URI });
      expect(other.status).toBe(400);
    }
  });
});

describe('POST /users/oidc/code-exchange/', () => {
  it("answers the provider's tokens; the first sign-in creates the user from the claims", async () => {
    const login = uniqueId('alice');
    const res = await exchange(await authorizationCode(login));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: expect.stringMatching(/^bearer$/i) });
    expect(typeof res.body.access_token).toBe('string');
    expect(typeof res.body.id_token).toBe('string');
    expect(res.body.expires_in).toBeGreaterThan(0);
    const user = await me(`Bearer ${res.body.access_token}`);
    expect(user.status).toBe(200);
    expect(user.body).toMatchObject({
      username: login,
      email: `${login}@sso.test`,
      name: `Given ${login}`,
    });
  });

  it('links a second sign-in of the same person to the same user', async () => {
    const login = uniqueId('bob');
    const first = await signIn(login);
    const second = await signIn(login);
    expect(second.accessToken).not.toBe(first.accessToken);
    const a = await me(`Bearer ${first.accessToken}`);
    const b = await me(`Bearer ${second.accessToken}`);
    expect(b.body.uuid).toBe(a.body.uuid);
    expect(b.body.username).toBe(login);
  });

  it('links a first sign-in to the existing user with the same verified email', async () => {
    const login = uniqueId('carol');
    const existing = await createUser(t, {
      username: uniqueId('local'),
      email: `${login}@sso.test`,
    });
    const { accessToken } = await signIn(login);
    const user = await me(`Bearer ${accessToken}`);
    expect(user.body.username).toBe(existing.username);
    // The API token of the password login still works, for the same user.
    expect((await me(existing.auth)).body.uuid).toBe(user.body.uuid);
  });

  it('does not link by an email the provider did not verify', async () => {
    const login = uniqueId('unverified-dan');
    const existing = await createUser(t, {
      username: uniqueId('local'),
      email: `${login}@sso.test`,
    });
    const { accessToken } = await signIn(login);
    const user = await me(`Bearer ${accessToken}`);
    expect(user.body.username).toBe(login);
    expect(user.body.username).not.toBe(existing.username);
  });

  it('names the new user after the next free username when the wanted one is taken', async () => {
    const login = uniqueId('erin');
    await createUser(t, { username: login });
    const { accessToken } = await signIn(login);
    expect((await me(`Bearer ${accessToken}`)).body.username).toBe(`${login}-2`);
  });

  it('makes a valid username of a preferred_username our rules do not allow', async () => {
    const base = uniqueId('ann');
    const odd = await signIn(`${base} o'neil`);
    expect((await me(`Bearer ${odd.accessToken}`)).body.username).toBe(`${base}-o-neil`);
    // `logout` names an endpoint (GET /users/logout/), so nobody may be called that.
    const reserved = await signIn('logout');
    expect((await me(`Bearer ${reserved.accessToken}`)).body.username).toMatch(/^user(-\d+)?$/);
    const made = await request(t.app)
      .post('/users/')
      .set('Authorization', t.admin)
      .send({ username: 'logout', name: 'L', email: 'l@example.org', password: 'password-1' });
    expect(made.status).toBe(400);
    expect(made.body.errors).toHaveProperty('username');
  });

  it('creates exactly one user for parallel first sign-ins of the same person', async () => {
    const login = uniqueId('frank');
    const codes = await Promise.all([1, 2, 3, 4].map(() => authorizationCode(login)));
    const answers = await Promise.all(codes.map((code) => exchange(code)));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const users = await Promise.all(answers.map((r) => me(`Bearer ${r.body.access_token}`)));
    expect(new Set(users.map((u) => u.body.uuid as string)).size).toBe(1);
    const [{ count }] = await t.dataSource.query<{ count: string }[]>(
      `SELECT count(*) FROM users WHERE username LIKE $1`,
      [`${login}%`],
    );
    expect(Number(count)).toBe(1);
  });

  it('answers 400 for a code the provider refuses, and for a code used twice', async () => {
    const bogus = await exchange('not-a-code');
    expect(bogus.status).toBe(400);
    expect(bogus.body.errors).toHaveProperty('code');
    const code = await authorizationCode(uniqueId('gina'));
    expect((await exchange(code)).status).toBe(200);
    expect((await exchange(code)).status).toBe(400);
  });

  it('passes PKCE through: the verifier of the challenge works, another is refused', async () => {
    const verifier = crypto.randomBytes(32).toString('base64url');
    const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
    const pkce = { code_challenge: challenge, code_challenge_method: 'S256' };
    const send = async (code: string, codeVerifier: string) =>
      request(t.app).post('/users/oidc/code-exchange/').send({
        code,
        redirect_uri: REDIRECT_URI,
        client_id: CLIENT_ID,
        code_verifier: codeVerifier,
      });
    const login = uniqueId('pkce');
    const wrong = await send(await authorizationCode(login, t, pkce), 'x'.repeat(43));
    expect(wrong.status).toBe(400);
    const right = await send(await authorizationCode(login, t, pkce), verifier);
    expect(right.status).toBe(200);
    expect((await me(`Bearer ${right.body.access_token}`)).body.username).toBe(login);
  });

  it('answers 400 without a code or redirect_uri and creates nothing', async () => {
    const before = await t.dataSource.query<{ count: string }[]>(`SELECT count(*) FROM users`);
    const res = await request(t.app)
      .post('/users/oidc/code-exchange/')
      .send({ client_id: CLIENT_ID });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.errors as object).sort()).toEqual(['code', 'redirect_uri']);
    const after = await t.dataSource.query<{ count: string }[]>(`SELECT count(*) FROM users`);
    expect(after[0].count).toBe(before[0].count);
  });

  it('answers 401 for a user an administrator deactivated', async () => {
    const login = uniqueId('hank');
    const { accessToken } = await signIn(login);
    await request(t.app).delete(`/users/${login}/`).set('Authorization', t.admin).expect(204);
    expect((await me(`Bearer ${accessToken}`)).status).toBe(401);
    expect((await exchange(await authorizationCode(login))).status).toBe(401);
  });
});

describe("the provider's access token as a Bearer credential", () => {
  it('works on REST, GraphQL and FHIR, and writes as the user', async () => {
    const login = uniqueId('ivy');
    const { accessToken } = await signIn(login);
    const auth = `Bearer ${accessToken}`;
    const org = uniqueId('org');
    const made = await request(t.app)
      .post('/orgs/')
      .set('Authorization', auth)
      .send({ id: org, name: 'Signed on' });
    expect(made.status).toBe(201);
    expect(made.body.created_by).toBe(login);
    const viewer = await gql(t, auth, '{ me { username } }');
    expect(viewer.data.me).toEqual({ username: login });
    const fhir = await request(t.app).get('/fhir/CodeSystem/').set('Authorization', auth);
    expect(fhir.status).toBe(200);
    expect(fhir.headers['x-ocl-request-user']).toBe(login);
  });

  it('answers 401 for a token the provider never issued, on every edge', async () => {
    const auth = `Bearer ${uniqueId('forged')}`;
    expect((await me(auth)).status).toBe(401);
    expect((await gql(t, auth, '{ me { username } }')).status).toBe(401);
    expect((await request(t.app).get('/fhir/CodeSystem/').set('Authorization', auth)).status).toBe(
      401,
    );
  });

  it("answers 401 for another provider's token", async () => {
    const foreign = await startProvider();
    const elsewhere = await createTestApp(foreign.env);
    try {
      const code = await authorizationCode(uniqueId('mallory'), elsewhere);
      const tokens = await request(elsewhere.app)
        .post('/users/oidc/code-exchange/')
        .send({ code, redirect_uri: REDIRECT_URI });
      expect(tokens.status).toBe(200);
      const auth = `Bearer ${tokens.body.access_token}`;
      expect((await request(elsewhere.app).get('/user/').set('Authorization', auth)).status).toBe(
        200,
      );
      expect((await me(auth)).status).toBe(401);
    } finally {
      await elsewhere.close();
      await foreign.stop();
    }
  });

  it('answers 401 once the token has expired', async () => {
    const short = await exchange(await authorizationCode(uniqueId('short-judy')));
    expect(short.body.expires_in).toBe(2);
    const accessToken = short.body.access_token as string;
    const auth = `Bearer ${accessToken}`;
    expect((await me(auth)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await me(auth)).status).toBe(401);
  });

  it('shows the signed-in user their private org, and nobody else', async () => {
    const login = uniqueId('olga');
    const { accessToken } = await signIn(login);
    const org = uniqueId('private');
    await request(t.app)
      .post('/orgs/')
      .set('Authorization', `Bearer ${accessToken}`)
      .send({ id: org, name: 'Private', public_access: 'None' })
      .expect(201);
    const own = await request(t.app)
      .get(`/orgs/${org}/`)
      .set('Authorization', `Bearer ${accessToken}`);
    expect(own.status).toBe(200);
    const other = await signIn(uniqueId('pete'));
    const stranger = await request(t.app)
      .get(`/orgs/${org}/`)
      .set('Authorization', `Bearer ${other.accessToken}`);
    expect(stranger.status).toBe(403);
  });

  it('leaves API tokens and password login working', async () => {
    const local = await createUser(t);
    expect((await me(local.auth)).body.username).toBe(local.username);
    const login = await request(t.app)
      .post('/users/login/')
      .send({ username: local.username, password: local.password });
    expect(login.status).toBe(200);
    expect((await me(`Bearer ${login.body.token}`)).body.username).toBe(local.username);
  });
});

describe('GET /users/logout/', () => {
  it("redirects to the provider's end-session endpoint with the hint and return address", async () => {
    const { idToken } = await signIn(uniqueId('kim'));
    const res = await request(t.app)
      .get('/users/logout/')
      .query({ id_token_hint: idToken, post_logout_redirect_uri: POST_LOGOUT_REDIRECT_URI });
    expect(res.status).toBe(302);
    const target = new URL(res.headers.location);
    expect(target.origin).toBe(provider.issuer);
    expect(target.searchParams.get('id_token_hint')).toBe(idToken);
    expect(target.searchParams.get('post_logout_redirect_uri')).toBe(POST_LOGOUT_REDIRECT_URI);
    // The provider accepts it: its logout page, not an error.
    const page = await fetch(target, { redirect: 'manual' });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('logout');
  });
});

describe('GET /users/logout/ without an id token', () => {
  it('leaves out a hint that is no token (oclweb3 sends "null") and names the client instead', async () => {
    for (const hint of ['null', 'undefined']) {
      const res = await request(t.app)
        .get('/users/logout/')
        .query({ id_token_hint: hint, post_logout_redirect_uri: POST_LOGOUT_REDIRECT_URI });
      expect(res.status).toBe(302);
      const target = new URL(res.headers.location);
      expect(target.searchParams.has('id_token_hint')).toBe(false);
      expect(target.searchParams.get('client_id')).toBe(CLIENT_ID);
      const page = await fetch(target, { redirect: 'manual' });
      expect(page.status).toBe(200);
    }
  });
});

describe('GraphQL single sign-on', () => {
  it('gives the login and logout addresses and exchanges a code', async () => {
    const login = uniqueId('leo');
    const urls = await gql(
      t,
      undefined,
      `query($r: String!, $p: String!) {
         oidcLoginUrl(redirectUri: $r, state: "s1", nonce: "n1")
         oidcLogoutUrl(postLogoutRedirectUri: $p) }`,
      { r: REDIRECT_URI, p: POST_LOGOUT_REDIRECT_URI },
    );
    expect(urls.errors).toBeUndefined();
    expect(new URL(urls.data.oidcLoginUrl as string).searchParams.get('state')).toBe('s1');
    expect(new URL(urls.data.oidcLogoutUrl as string).origin).toBe(provider.issuer);
    const back = await signInAtProvider(urls.data.oidcLoginUrl as string, login);
    const res = await gql(
      t,
      undefined,
      `mutation($c: String!, $r: String!) {
         exchangeOidcCode(code: $c, redirectUri: $r) { accessToken idToken user { username } } }`,
      { c: back.searchParams.get('code'), r: REDIRECT_URI },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.exchangeOidcCode.user).toEqual({ username: login });
    const viewer = await gql(
      t,
      `Bearer ${res.data.exchangeOidcCode.accessToken}`,
      '{ me { username } }',
    );
    expect(viewer.data.me).toEqual({ username: login });
  });

  it('answers a refused code as a validation error', async () => {
    const res = await gql(
      t,
      undefined,
      `mutation { exchangeOidcCode(code: "nope", redirectUri: "${REDIRECT_URI}") { accessToken } }`,
    );
    expect(res.errors?.[0].extensions?.code).toBe('INVALID');
  });
});

describe('with the provider unreachable', () => {
  it('answers 503 to SSO requests and keeps API tokens working', async () => {
    const gone = await startProvider();
    await gone.stop();
    const down = await createTestApp(gone.env);
    try {
      const login = await request(down.app)
        .get('/users/login/')
        .query({ redirect_uri: REDIRECT_URI });
      expect(login.status).toBe(503);
      expect(login.body.message).toMatch(/identity provider could not be reached/);
      const bearer = await request(down.app)
        .get('/user/')
        .set('Authorization', `Bearer ${uniqueId('token')}`);
      expect(bearer.status).toBe(503);
      expect((await request(down.app).get('/user/').set('Authorization', down.admin)).status).toBe(
        200,
      );
    } finally {
      await down.close();
    }
  });
});

describe('without single sign-on configured', () => {
  it('answers 405 to the SSO endpoints, as OCL does, and keeps password login', async () => {
    const plain = await createTestApp();
    try {
      const res = await request(plain.app)
        .get('/users/login/')
        .query({ redirect_uri: REDIRECT_URI });
      expect(res.status).toBe(405);
      expect(res.body.message).toMatch(/not configured/);
      const exchanged = await request(plain.app)
        .post('/users/oidc/code-exchange/')
        .send({ code: 'x', redirect_uri: REDIRECT_URI });
      expect(exchanged.status).toBe(405);
      const logout = await request(plain.app).get('/users/logout/');
      expect(logout.status).toBe(405);
      for (const path of ['/users/signup/', '/users/password/reset/']) {
        const sso = await request(plain.app).get(path).query({ redirect_uri: REDIRECT_URI });
        expect(sso.status).toBe(405);
      }
      const forged = await request(plain.app)
        .get('/user/')
        .set('Authorization', `Bearer ${CLIENT_SECRET}`);
      expect(forged.status).toBe(401);
      expect(
        (await request(plain.app).get('/user/').set('Authorization', plain.admin)).status,
      ).toBe(200);
    } finally {
      await plain.close();
    }
  });
});
