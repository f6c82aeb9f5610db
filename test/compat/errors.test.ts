import request from 'supertest';
import { createOrg, createTestApp, createUser, uniqueId, type TestApp } from '../factories';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ MAX_BODY_SIZE: '10kb' });
});
afterAll(async () => t.close());

describe('bad input gets a 4xx with the error body and changes nothing (spec core §7)', () => {
  it('malformed JSON is a 400', async () => {
    const user = await createUser(t);
    const res = await request(t.app)
      .post('/orgs/')
      .set('Authorization', user.auth)
      .set('Content-Type', 'application/json')
      .send('{"id": "broken",');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'Bad Request',
      message: 'Malformed JSON in the request body.',
    });
    expect((await request(t.app).get('/orgs/broken/')).status).toBe(404);
  });

  it('a body over the size limit is a 413', async () => {
    const user = await createUser(t);
    const id = uniqueId('big');
    const res = await request(t.app)
      .post('/orgs/')
      .set('Authorization', user.auth)
      .send({ id, name: 'Big', extras: { blob: 'x'.repeat(20_000) } });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('Payload Too Large');
    expect((await request(t.app).get(`/orgs/${id}/`)).status).toBe(404);
  });

  it('a body that is not JSON is a 415', async () => {
    const user = await createUser(t);
    const res = await request(t.app)
      .post('/orgs/')
      .set('Authorization', user.auth)
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .send('id=form&name=Form');
    expect(res.status).toBe(415);
    expect((await request(t.app).get('/orgs/form/')).status).toBe(404);
  });

  it.each([
    ['a JSON array', [{ id: 'x' }]],
    ['a JSON string', 'org'],
    ['a JSON number', 42],
  ])('a body that is %s is a 400', async (_what, body) => {
    const user = await createUser(t);
    const res = await request(t.app)
      .post('/orgs/')
      .set('Authorization', user.auth)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(body));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('Bad Request');
  });

  it('wrong types are a 400 naming each field', async () => {
    const user = await createUser(t);
    const res = await request(t.app)
      .post('/orgs/')
      .set('Authorization', user.auth)
      .send({
        id: 12,
        name: ['x'],
        company: { a: 1 },
        website: 5,
        public_access: true,
        extras: [1],
      });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.errors).sort()).toEqual(
      ['company', 'extras', 'id', 'name', 'public_access', 'website'].sort(),
    );
  });

  it.each(['../etc', 'a b', 'semi;colon', "quote'", '%00', 'x'.repeat(101)])(
    'a hostile org id %j is a 400',
    async (id) => {
      const user = await createUser(t);
      const res = await request(t.app)
        .post('/orgs/')
        .set('Authorization', user.auth)
        .send({ id, name: 'Hostile' });
      expect(res.status).toBe(400);
      expect(res.body.errors.id).toBeDefined();
    },
  );

  it('hostile ids in paths are a plain 404', async () => {
    for (const id of [
      "x' OR '1'='1",
      '%27%3B%20DROP%20TABLE%20users%3B--',
      'ünïcödé',
      '..%2F..%2F',
    ]) {
      const res = await request(t.app).get(`/orgs/${id}/`);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('Not Found');
    }
  });

  it('an unknown owner is a 404, not a 400 or a 500', async () => {
    const res = await request(t.app).get(`/orgs/${uniqueId('nope')}/members/`);
    expect(res.status).toBe(404);
    const put = await request(t.app)
      .put(`/orgs/${uniqueId('nope')}/members/${uniqueId('nobody')}/`)
      .set('Authorization', t.admin);
    expect(put.status).toBe(404);
  });

  it('an unknown path is a 404 with the error body', async () => {
    const res = await request(t.app).get('/no/such/endpoint/');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'Not Found' });
  });

  it('an edit with bad fields changes nothing, not even the fields that were fine', async () => {
    const owner = await createUser(t);
    const org = await createOrg(t, owner, { company: 'Kept' });
    const res = await request(t.app)
      .post(`/orgs/${org.id}/`)
      .set('Authorization', owner.auth)
      .send({ company: 'Changed', website: 'not a url' });
    expect(res.status).toBe(400);
    expect((await request(t.app).get(`/orgs/${org.id}/`)).body.company).toBe('Kept');
  });
});

describe('authentication (spec core §5)', () => {
  it('accepts `Authorization: Token <token>`', async () => {
    const user = await createUser(t);
    const res = await request(t.app).get('/user/').set('Authorization', user.auth);
    expect(res.body.username).toBe(user.username);
    expect(res.headers['x-ocl-request-user']).toBe(user.username);
  });

  it('accepts HTTP Basic credentials', async () => {
    const user = await createUser(t);
    const res = await request(t.app).get('/user/').auth(user.username, user.password);
    expect(res.status).toBe(200);
    expect(res.body.username).toBe(user.username);
    const again = await request(t.app).get('/user/').auth(user.username, user.password);
    expect(again.status).toBe(200);
  });

  it('answers 401 for a wrong Basic password, even on a public endpoint', async () => {
    const user = await createUser(t);
    const res = await request(t.app).get('/orgs/').auth(user.username, 'wrong-password');
    expect(res.status).toBe(401);
  });

  it('stops remembering a Basic login once the password changes', async () => {
    const user = await createUser(t);
    expect((await request(t.app).get('/user/').auth(user.username, user.password)).status).toBe(
      200,
    );
    await request(t.app)
      .post('/user/')
      .set('Authorization', user.auth)
      .send({ password: 'changed-password' });
    expect((await request(t.app).get('/user/').auth(user.username, user.password)).status).toBe(
      401,
    );
    expect(
      (await request(t.app).get('/user/').auth(user.username, 'changed-password')).status,
    ).toBe(200);
  });

  it.each([
    'Token 0000000000000000000000000000000000000000',
    'Token',
    'Bearer nope',
    'Digest abc',
    'Basic !!!',
  ])('answers 401 for the header %j', async (header) => {
    const res = await request(t.app).get('/orgs/').set('Authorization', header);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('Unauthorized');
  });

  it('login answers a token for good credentials and 400 for bad ones', async () => {
    const user = await createUser(t);
    const good = await request(t.app)
      .post('/users/login/')
      .send({ username: user.username, password: user.password });
    expect(good.status).toBe(200);
    expect(good.body).toEqual({ token: expect.stringMatching(/^[0-9a-f]{40}$/) });
    const bad = await request(t.app)
      .post('/users/login/')
      .send({ username: user.username, password: 'nope' });
    expect(bad.status).toBe(400);
    const unknown = await request(t.app)
      .post('/users/login/')
      .send({ username: uniqueId('x'), password: 'nope' });
    expect(unknown.status).toBe(400);
    const missing = await request(t.app).post('/users/login/').send({});
    expect(missing.status).toBe(400);
    expect(Object.keys(missing.body.errors).sort()).toEqual(['password', 'username']);
  });

  it('every login issues a new token, and earlier ones keep working', async () => {
    const user = await createUser(t);
    const second = await request(t.app)
      .post('/users/login/')
      .send({ username: user.username, password: user.password });
    expect(`Token ${second.body.token}`).not.toBe(user.auth);
    expect((await request(t.app).get('/user/').set('Authorization', user.auth)).status).toBe(200);
    expect(
      (await request(t.app).get('/user/').set('Authorization', `Token ${second.body.token}`))
        .status,
    ).toBe(200);
  });

  it('a deactivated user can neither log in nor use a token', async () => {
    const user = await createUser(t);
    await request(t.app).delete(`/users/${user.username}/`).set('Authorization', t.admin);
    expect(
      (
        await request(t.app)
          .post('/users/login/')
          .send({ username: user.username, password: user.password })
      ).status,
    ).toBe(401);
    expect((await request(t.app).get('/orgs/').set('Authorization', user.auth)).status).toBe(401);
  });

  it('anonymous callers may not write anything', async () => {
    const owner = await createUser(t);
    const org = await createOrg(t, owner);
    const newOrg = uniqueId('a');
    const writes = [
      request(t.app).post('/orgs/').send({ id: newOrg, name: 'A' }),
      request(t.app).post(`/orgs/${org.id}/`).send({ name: 'A' }),
      request(t.app).delete(`/orgs/${org.id}/`),
      request(t.app).put(`/orgs/${org.id}/members/${owner.username}/`),
      request(t.app).post('/user/').send({ name: 'A' }),
      request(t.app).post(`/users/${owner.username}/`).send({ name: 'A' }),
    ];
    for (const res of await Promise.all(writes)) expect(res.status).toBe(401);
    const read = (path: string) => request(t.app).get(path).set('Authorization', t.admin);
    expect((await read(`/orgs/${newOrg}/`)).status).toBe(404);
    expect((await read(`/orgs/${org.id}/`)).body).toMatchObject({
      name: `Org ${org.id}`,
      members: 1,
    });
    expect((await read(`/users/${owner.username}/`)).body.name).toBe(`Name of ${owner.username}`);
  });
});

describe('operational basics', () => {
  it('answers CORS preflights allowing the OCL headers and exposing the paging headers', async () => {
    const res = await request(t.app)
      .options('/orgs/')
      .set('Origin', 'https://app.openconceptlab.org')
      .set('Access-Control-Request-Method', 'GET')
      .set('Access-Control-Request-Headers', 'authorization,x-ocl-client,includefacets');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.openconceptlab.org');
    expect(res.headers['access-control-allow-headers']).toMatch(/X-OCL-CLIENT/);
    const get = await request(t.app).get('/orgs/').set('Origin', 'https://app.openconceptlab.org');
    expect(get.headers['access-control-expose-headers']).toMatch(/num_found/);
    expect(get.headers['access-control-expose-headers']).toMatch(/next/);
  });

  it('gives every response a request id, reusing a sane incoming one', async () => {
    const fresh = await request(t.app).get('/version/');
    expect(fresh.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const given = await request(t.app).get('/version/').set('X-Request-Id', 'abc-123');
    expect(given.headers['x-request-id']).toBe('abc-123');
  });

  it('answers the health check when the database is up', async () => {
    const res = await request(t.app).get('/healthz/');
    expect(res.body).toEqual({ status: 'ok' });
  });
});
