import request from 'supertest';
import { createOrg, createTestApp, createUser, login, uniqueId, type TestApp } from '../factories';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe('GET /users/:user/', () => {
  it('answers the full user to anyone, profiles being public', async () => {
    const user = await createUser(t, {
      company: 'Acme',
      location: 'Kigali',
      preferred_locale: 'en,fr',
    });
    const res = await request(t.app).get(`/users/${user.username}/`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      type: 'User',
      username: user.username,
      name: `Name of ${user.username}`,
      email: user.email,
      company: 'Acme',
      location: 'Kigali',
      preferred_locale: 'en,fr',
      url: `/users/${user.username}/`,
      orgs_url: `/users/${user.username}/orgs/`,
      sources_url: `/users/${user.username}/sources/`,
      collections_url: `/users/${user.username}/collections/`,
      orgs: 0,
      public_sources: 0,
      public_collections: 0,
      created_by: 'ocladmin',
    });
    expect(typeof res.body.uuid).toBe('string');
    expect(new Date(res.body.created_on as string).toISOString()).toBe(res.body.created_on);
    expect(res.body).not.toHaveProperty('password_hash');
  });

  it('answers 404 for a user that does not exist', async () => {
    const res = await request(t.app).get(`/users/${uniqueId('nobody')}/`);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'Not Found' });
  });

  it('counts only the orgs the caller may see', async () => {
    const user = await createUser(t);
    await createOrg(t, user);
    await createOrg(t, user, { public_access: 'None' });
    const stranger = await createUser(t);
    const seenByStranger = await request(t.app)
      .get(`/users/${user.username}/`)
      .set('Authorization', stranger.auth);
    const seenBySelf = await request(t.app)
      .get(`/users/${user.username}/`)
      .set('Authorization', user.auth);
    expect(seenByStranger.body.orgs).toBe(1);
    expect(seenBySelf.body.orgs).toBe(2);
  });
});

describe('GET /user/', () => {
  it('answers the authenticated user', async () => {
    const user = await createUser(t);
    const res = await request(t.app).get('/user/').set('Authorization', user.auth);
    expect(res.status).toBe(200);
    expect(res.body.username).toBe(user.username);
  });

  it('answers 401 to an anonymous caller', async () => {
    const res = await request(t.app).get('/user/');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'Unauthorized' });
  });
});

describe('POST /users/ (administrator create)', () => {
  it('creates a user who can log in at once, with 201 and a Location header', async () => {
    const username = uniqueId('made');
    const res = await request(t.app)
      .post('/users/')
      .set('Authorization', t.admin)
      .send({
        username,
        name: 'Made User',
        email: `${username}@example.org`,
        password: 'a-good-password',
      });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/users/${username}/`);
    expect(res.body).toMatchObject({ username, name: 'Made User', verified: true });
    await expect(login(t.app, username, 'a-good-password')).resolves.toMatch(/^[0-9a-f]{40}$/);
  });

  it('answers 400 when the username exists, in any letter case, and creates nothing', async () => {
    const user = await createUser(t);
    const res = await request(t.app)
      .post('/users/')
      .set('Authorization', t.admin)
      .send({ username: user.username.toUpperCase(), name: 'Dup', email: 'dup@example.org' });
    expect(res.status).toBe(400);
    expect(res.body.errors.username[0]).toMatch(/already exists/);
    const original = await request(t.app).get(`/users/${user.username}/`);
    expect(original.body.name).toBe(`Name of ${user.username}`);
  });

  it('answers 400 with a message per field for missing and malformed fields', async () => {
    const res = await request(t.app).post('/users/').set('Authorization', t.admin).send({
      username: 'bad name!',
      email: 'not-an-email',
      website: 'example',
      preferred_locale: 12,
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.errors).sort()).toEqual(
      ['email', 'name', 'preferred_locale', 'username', 'website'].sort(),
    );
  });

  it('refuses an ordinary user with 403 and an anonymous one with 401', async () => {
    const user = await createUser(t);
    const body = { username: uniqueId('x'), name: 'X', email: 'x@example.org' };
    expect(
      (await request(t.app).post('/users/').set('Authorization', user.auth).send(body)).status,
    ).toBe(403);
    expect((await request(t.app).post('/users/').send(body)).status).toBe(401);
    expect((await request(t.app).get(`/users/${body.username}/`)).status).toBe(404);
  });
});

describe('POST /users/signup/ and email verification', () => {
  it('refuses login until the mailed link is followed, then redirects to the success URL', async () => {
    const username = uniqueId('signup');
    const email = `${username}@example.org`;
    const res = await request(t.app).post('/users/signup/').send({
      username,
      name: 'Signed Up',
      email,
      password: 'signup-password',
      email_verify_success_url: 'https://app.example.org/verified',
      email_verify_failure_url: 'https://app.example.org/failed',
    });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/users/${username}/`);
    expect(res.body.verified).toBe(false);

    const refused = await request(t.app)
      .post('/users/login/')
      .send({ username, password: 'signup-password' });
    expect(refused.status).toBe(401);
    expect(refused.body.message).toMatch(/not verified/);

    const mail = t.mailer.lastTo(email);
    const link = /\/users\/[^/]+\/verify\/[0-9a-f]{40}\//.exec(mail?.text ?? '')?.[0];
    expect(link).toBeDefined();
    const followed = await request(t.app).get(link!);
    expect(followed.status).toBe(302);
    expect(followed.headers.location).toBe('https://app.example.org/verified');
    await expect(login(t.app, username, 'signup-password')).resolves.toMatch(/^[0-9a-f]{40}$/);
  });

  it('sends a wrong link to the failure URL and keeps the account unverified', async () => {
    const username = uniqueId('signup');
    await request(t.app)
      .post('/users/signup/')
      .send({
        username,
        name: 'Signed Up',
        email: `${username}@example.org`,
        password: 'signup-password',
        email_verify_failure_url: 'https://app.example.org/failed',
      });
    const wrong = await request(t.app).get(`/users/${username}/verify/${'0'.repeat(40)}/`);
    expect(wrong.status).toBe(302);
    expect(wrong.headers.location).toBe('https://app.example.org/failed');
    const refused = await request(t.app)
      .post('/users/login/')
      .send({ username, password: 'signup-password' });
    expect(refused.status).toBe(401);
  });

  it('answers 400 to a wrong link when no failure URL was given', async () => {
    const username = uniqueId('signup');
    await request(t.app)
      .post('/users/signup/')
      .send({ username, name: 'S', email: `${username}@example.org`, password: 'signup-password' });
    expect((await request(t.app).get(`/users/${username}/verify/${'1'.repeat(40)}/`)).status).toBe(
      400,
    );
  });

  it('answers 400 when the password is missing and creates nothing', async () => {
    const username = uniqueId('signup');
    const res = await request(t.app)
      .post('/users/signup/')
      .send({ username, name: 'S', email: `${username}@example.org` });
    expect(res.status).toBe(400);
    expect(res.body.errors.password).toBeDefined();
    expect((await request(t.app).get(`/users/${username}/`)).status).toBe(404);
  });
});

describe('updating users', () => {
  it('POST /user/ changes only the fields sent', async () => {
    const user = await createUser(t, { company: 'Before' });
    const res = await request(t.app)
      .post('/user/')
      .set('Authorization', user.auth)
      .send({ location: 'Nairobi', extras: { team: 'lab' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      company: 'Before',
      location: 'Nairobi',
      extras: { team: 'lab' },
    });
    expect(res.body.updated_by).toBe(user.username);
  });

  it('POST /users/:user/ is for administrators (and the user); others get 403', async () => {
    const user = await createUser(t);
    const other = await createUser(t);
    const byOther = await request(t.app)
      .post(`/users/${user.username}/`)
      .set('Authorization', other.auth)
      .send({ name: 'Hijacked' });
    expect(byOther.status).toBe(403);
    const read = () => request(t.app).get(`/users/${user.username}/`).set('Authorization', t.admin);
    expect((await read()).body.name).toBe(`Name of ${user.username}`);
    const byAdmin = await request(t.app)
      .post(`/users/${user.username}/`)
      .set('Authorization', t.admin)
      .send({ name: 'Renamed' });
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.name).toBe('Renamed');
    expect(byAdmin.body.updated_by).toBe('ocladmin');
    expect((await read()).body).toMatchObject({ name: 'Renamed', updated_by: 'ocladmin' });
  });

  it('accepts PUT and PATCH as the reference clients send them', async () => {
    const user = await createUser(t);
    const put = await request(t.app)
      .put('/user/')
      .set('Authorization', user.auth)
      .send({ company: 'Put Co' });
    const patch = await request(t.app)
      .patch(`/users/${user.username}/`)
      .set('Authorization', user.auth)
      .send({ location: 'Patch Town' });
    expect(put.status).toBe(200);
    expect(patch.body).toMatchObject({ company: 'Put Co', location: 'Patch Town' });
  });

  it('refuses a username change with 400', async () => {
    const user = await createUser(t);
    const res = await request(t.app)
      .post('/user/')
      .set('Authorization', user.auth)
      .send({ username: 'other' });
    expect(res.status).toBe(400);
    expect(res.body.errors.username).toBeDefined();
    const me = await request(t.app).get('/user/').set('Authorization', user.auth);
    expect(me.body.username).toBe(user.username);
  });

  it('a new password replaces the old one for login', async () => {
    const user = await createUser(t);
    await request(t.app)
      .post('/user/')
      .set('Authorization', user.auth)
      .send({ password: 'brand-new-password' });
    expect(
      (
        await request(t.app)
          .post('/users/login/')
          .send({ username: user.username, password: user.password })
      ).status,
    ).toBe(400);
    await expect(login(t.app, user.username, 'brand-new-password')).resolves.toBeTruthy();
  });
});

describe('deactivate and reactivate (spec core §3)', () => {
  it('DELETE answers 204, hides the user, and a second DELETE answers 404', async () => {
    const user = await createUser(t);
    const first = await request(t.app)
      .delete(`/users/${user.username}/`)
      .set('Authorization', t.admin);
    expect(first.status).toBe(204);
    expect((await request(t.app).get(`/users/${user.username}/`)).status).toBe(404);
    const list = await request(t.app).get('/users/').query({ q: user.username });
    expect(list.body).toEqual([]);
    expect((await request(t.app).get('/user/').set('Authorization', user.auth)).status).toBe(401);
    const second = await request(t.app)
      .delete(`/users/${user.username}/`)
      .set('Authorization', t.admin);
    expect(second.status).toBe(404);
  });

  it('reactivation answers 204 and restores access; 404 for a user that never existed', async () => {
    const user = await createUser(t);
    await request(t.app).delete(`/users/${user.username}/`).set('Authorization', t.admin);
    const res = await request(t.app)
      .put(`/users/${user.username}/reactivate/`)
      .set('Authorization', t.admin);
    expect(res.status).toBe(204);
    expect((await request(t.app).get('/user/').set('Authorization', user.auth)).status).toBe(200);
    const missing = await request(t.app)
      .put(`/users/${uniqueId('ghost')}/reactivate/`)
      .set('Authorization', t.admin);
    expect(missing.status).toBe(404);
  });

  it('only an administrator may deactivate or reactivate', async () => {
    const user = await createUser(t);
    const other = await createUser(t);
    expect(
      (await request(t.app).delete(`/users/${user.username}/`).set('Authorization', other.auth))
        .status,
    ).toBe(403);
    expect((await request(t.app).delete(`/users/${user.username}/`)).status).toBe(401);
    expect(
      (
        await request(t.app)
          .put(`/users/${user.username}/reactivate/`)
          .set('Authorization', other.auth)
      ).status,
    ).toBe(403);
    expect((await request(t.app).get(`/users/${user.username}/`)).status).toBe(200);
  });

  it('a superuser still sees a deactivated profile, marked inactive', async () => {
    const user = await createUser(t);
    await request(t.app).delete(`/users/${user.username}/`).set('Authorization', t.admin);
    const res = await request(t.app).get(`/users/${user.username}/`).set('Authorization', t.admin);
    expect(res.status).toBe(200);
    expect(res.body.is_active).toBe(false);
  });
});

describe('GET /users/', () => {
  it('searches username, name, company and location, accent- and case-insensitively', async () => {
    const tag = uniqueId('zq').replace('-', '');
    const a = await createUser(t, { username: `${tag}-alpha`, company: 'Hôpital Central' });
    const b = await createUser(t, { username: `${tag}-beta`, location: 'São Paulo' });
    const byCompany = await request(t.app)
      .get('/users/')
      .query({ q: `${tag} hopital` });
    expect(byCompany.body.map((u: { username: string }) => u.username)).toEqual([a.username]);
    const byLocation = await request(t.app)
      .get('/users/')
      .query({ q: `SAO PAULO ${tag}` });
    expect(byLocation.body.map((u: { username: string }) => u.username)).toEqual([b.username]);
    expect(byLocation.body[0]).toEqual({
      username: b.username,
      name: `Name of ${b.username}`,
      url: `/users/${b.username}/`,
    });
  });

  it('puts the exact username first in best-match order', async () => {
    const tag = uniqueId('bm').replace('-', '');
    await createUser(t, { username: `${tag}x`, name: `Someone ${tag}` });
    const exact = await createUser(t, { username: tag });
    const res = await request(t.app).get('/users/').query({ q: tag });
    expect(res.body[0].username).toBe(exact.username);
    expect(res.body).toHaveLength(2);
  });

  it('sorts by username, both ways', async () => {
    const tag = uniqueId('srt').replace('-', '');
    for (const s of ['b', 'c', 'a']) await createUser(t, { username: `${tag}-${s}` });
    const asc = await request(t.app).get('/users/').query({ q: tag, sortAsc: 'username' });
    const desc = await request(t.app).get('/users/').query({ q: tag, sortDesc: 'username' });
    expect(asc.body.map((u: { username: string }) => u.username.slice(-1))).toEqual([
      'a',
      'b',
      'c',
    ]);
    expect(desc.body.map((u: { username: string }) => u.username.slice(-1))).toEqual([
      'c',
      'b',
      'a',
    ]);
  });

  it('gives details with verbose=true', async () => {
    const user = await createUser(t);
    const res = await request(t.app).get('/users/').query({ q: user.username, verbose: 'true' });
    expect(res.body[0]).toMatchObject({
      type: 'User',
      username: user.username,
      orgs: 0,
      email: user.email,
    });
  });
});

describe('org lists of a user', () => {
  it('/user/orgs/ lists public and private orgs of the caller', async () => {
    const user = await createUser(t);
    const pub = await createOrg(t, user);
    const priv = await createOrg(t, user, { public_access: 'None' });
    const res = await request(t.app).get('/user/orgs/').set('Authorization', user.auth);
    expect(res.status).toBe(200);
    expect(res.body.map((o: { id: string }) => o.id).sort()).toEqual([pub.id, priv.id].sort());
    expect(res.body[0]).toEqual({
      id: expect.any(String),
      name: expect.any(String),
      url: expect.stringMatching(/^\/orgs\//),
    });
  });

  it('/users/:user/orgs/ hides the private ones from others', async () => {
    const user = await createUser(t);
    const pub = await createOrg(t, user);
    await createOrg(t, user, { public_access: 'None' });
    const anonymous = await request(t.app).get(`/users/${user.username}/orgs/`);
    expect(anonymous.body.map((o: { id: string }) => o.id)).toEqual([pub.id]);
    expect(anonymous.headers.num_found).toBe('1');
    const admin = await request(t.app)
      .get(`/users/${user.username}/orgs/`)
      .set('Authorization', t.admin);
    expect(admin.body).toHaveLength(2);
  });

  it('/users/:user/orgs/ answers 404 for an unknown user', async () => {
    expect((await request(t.app).get(`/users/${uniqueId('nobody')}/orgs/`)).status).toBe(404);
  });
});

describe('mailed links with PUBLIC_URL', () => {
  it('point at the configured public address, not the Host header of the request', async () => {
    const pub = await createTestApp({ PUBLIC_URL: 'https://registry.example.org/' });
    try {
      const username = uniqueId('pub');
      const email = `${username}@example.org`;
      await request(pub.app)
        .post('/users/signup/')
        .set('Host', 'evil.example.com')
        .send({ username, name: 'P', email, password: 'signup-password' });
      expect(pub.mailer.lastTo(email)?.text).toMatch(
        new RegExp(`https://registry\\.example\\.org/users/${username}/verify/[0-9a-f]{40}/`),
      );
      expect(pub.mailer.lastTo(email)?.text).not.toMatch(/evil/);
    } finally {
      await pub.close();
    }
  });
});
