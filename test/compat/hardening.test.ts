import crypto from 'node:crypto';
import request from 'supertest';
import { Repositories } from '../../src/repositories';
import { ensureAdmin } from '../../src/services/accounts/bootstrap';
import {
  addMember,
  createOrg,
  createTestApp,
  createUser,
  recordingLog,
  uniqueId,
  type TestApp,
} from '../factories';
import { createCollection, createSource } from '../factories/content';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe('logs never hold credentials', () => {
  it('redacts the Authorization header of every request', async () => {
    const recorded = recordingLog('info');
    const logged = await createTestApp({ LOG_LEVEL: 'info' }, { log: recorded.log });
    try {
      const user = await createUser(logged);
      await request(logged.app).get('/user/').set('Authorization', user.auth);
      await request(logged.app).get('/user/').auth(user.username, user.password);
      const log = recorded.lines.join('');
      expect(log).toContain('"authorization":"[redacted]"');
      expect(log).not.toContain(user.auth.slice('Token '.length));
      expect(log).not.toContain(
        Buffer.from(`${user.username}:${user.password}`).toString('base64'),
      );
    } finally {
      await logged.close();
    }
  });
});

describe('input the database cannot hold is a 400, never a 500', () => {
  it.each([
    ['a query value', '/users/?q=a%00b'],
    ['a filter value', '/orgs/?company=a%00'],
    ['a path segment', '/users/a%00b/'],
    ['an org id in the path', '/orgs/a%00b/'],
  ])('a NUL character in %s', async (_where, path) => {
    const res = await request(t.app).get(path);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/invalid character \(U\+0000\)/);
  });

  it('a NUL character in a body field or extras changes nothing', async () => {
    const user = await createUser(t);
    const name = await request(t.app)
      .post('/user/')
      .set('Authorization', user.auth)
      .send({ name: 'x\u0000y' });
    expect(name.status).toBe(400);
    const extras = await request(t.app)
      .post('/orgs/')
      .set('Authorization', user.auth)
      .send({ id: uniqueId('nul'), name: 'N', extras: { k: 'x\u0000y' } });
    expect(extras.status).toBe(400);
    expect((await request(t.app).get('/user/').set('Authorization', user.auth)).body.name).toBe(
      `Name of ${user.username}`,
    );
  });

  it('a NUL character in GraphQL variables', async () => {
    const res = await request(t.app)
      .post('/graphql')
      .send({
        query: 'query($u: String!) { user(username: $u) { username } }',
        variables: { u: 'a\u0000b' },
      });
    expect(res.status).toBe(400);
  });

  it('a NUL character in Basic credentials is a 401, and other requests are unaffected', async () => {
    const header = `Basic ${Buffer.from('a\u0000b:c').toString('base64')}`;
    expect((await request(t.app).get('/version/').set('Authorization', header)).status).toBe(401);
    expect((await request(t.app).get('/version/')).status).toBe(200);
  });

  it('JSON nested deeper than 32 levels', async () => {
    const user = await createUser(t);
    let deep: unknown = 'leaf';
    for (let i = 0; i < 3000; i += 1) deep = [deep];
    const id = uniqueId('deep');
    const res = await request(t.app)
      .post('/orgs/')
      .set('Authorization', user.auth)
      .send({ id, name: 'Deep', extras: { deep } });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/nested deeper/);
    expect((await request(t.app).get(`/orgs/${id}/`)).status).toBe(404);
  });

  it('a malformed Host header still gets paging links, on localhost', async () => {
    for (const host of ['bad host', '[::1', 'a:99999']) {
      const res = await request(t.app).get('/users/').query({ limit: 1 }).set('Host', host);
      expect(res.status).toBe(200);
      if (res.headers.next) expect(new URL(String(res.headers.next)).host).toBe('localhost');
    }
  });

  it('a filter with more than 100 values, through REST and GraphQL', async () => {
    const values = Array.from({ length: 101 }, (_, i) => `c${i}`);
    const rest = await request(t.app)
      .get('/orgs/')
      .query({ company: values.join(',') });
    expect(rest.status).toBe(400);
    expect(rest.body.errors.company).toBeDefined();
    const many = Array.from({ length: 70000 }, (_, i) => `c${i}`);
    const gql = await request(t.app)
      .post('/graphql')
      .send({
        query: 'query($c: [String!]) { orgs(company: $c) { totalCount } }',
        variables: { c: many },
      });
    expect(gql.body.errors[0].extensions.code).toBe('INVALID');
  });
});

describe('signup is all or nothing', () => {
  it('answers 503 and creates no account when the verification mail cannot be sent', async () => {
    const failing = await createTestApp(
      {},
      {
        mailer: {
          send: async () => {
            throw new Error('SMTP connection refused');
          },
        },
      },
    );
    try {
      const username = uniqueId('nomail');
      const res = await request(failing.app)
        .post('/users/signup/')
        .send({
          username,
          name: 'No Mail',
          email: `${username}@example.org`,
          password: 'signup-password',
        });
      expect(res.status).toBe(503);
      expect((await request(failing.app).get(`/users/${username}/`)).status).toBe(404);
      const again = await request(failing.app)
        .post('/users/signup/')
        .send({
          username,
          name: 'No Mail',
          email: `${username}@example.org`,
          password: 'signup-password',
        });
      expect(again.status).toBe(503);
    } finally {
      await failing.close();
    }
  });
});

describe('the instance cannot lock itself out', () => {
  it('refuses with 409 to deactivate the last active superuser', async () => {
    const res = await request(t.app).delete('/users/ocladmin/').set('Authorization', t.admin);
    expect(res.status).toBe(409);
    expect((await request(t.app).get('/user/').set('Authorization', t.admin)).status).toBe(200);
  });

  it('ADMIN_PASSWORD at start restores a deactivated bootstrap administrator', async () => {
    const rollback = new Error('rollback');
    await expect(
      t.dataSource.transaction(async (em) => {
        await em.query(
          `UPDATE users SET is_active = false, is_superuser = false WHERE username = 'ocladmin'`,
        );
        await ensureAdmin(new Repositories(em), 'restored-password');
        const [row] = await em.query<Array<{ is_active: boolean; is_superuser: boolean }>>(
          `SELECT is_active, is_superuser FROM users WHERE username = 'ocladmin'`,
        );
        expect(row).toEqual({ is_active: true, is_superuser: true });
        throw rollback;
      }),
    ).rejects.toBe(rollback);
  });
});

describe('identifiers the URL space already uses are refused', () => {
  it.each(['.', '..', '...'])('the org id %j', async (id) => {
    const user = await createUser(t);
    const res = await request(t.app)
      .post('/orgs/')
      .set('Authorization', user.auth)
      .send({ id, name: 'Dots' });
    expect(res.status).toBe(400);
  });

  it.each(['login', 'SignUp'])('the username %j', async (username) => {
    const res = await request(t.app)
      .post('/users/')
      .set('Authorization', t.admin)
      .send({ username, name: 'R', email: 'r@example.org' });
    expect(res.status).toBe(400);
    expect(res.body.errors.username).toBeDefined();
  });

  it.each(['concepts', 'versions', 'Latest', 'HEAD'])('the version id %j', async (id) => {
    const source = await createSource(t);
    const res = await request(t.app)
      .post(`${source.url}versions/`)
      .set('Authorization', source.owner.auth)
      .send({ id });
    expect(res.status).toBe(400);
  });
});

describe('a known path with the wrong method is a 405 (spec core §7)', () => {
  it.each([
    ['delete', '/orgs/', 'GET, HEAD, POST'],
    ['put', '/users/login/', 'GET, HEAD, POST'],
    ['delete', '/users/signup/', 'GET, HEAD, POST'],
    ['patch', '/version/', 'GET, HEAD'],
    ['delete', '/users/someone/reactivate/', 'PUT'],
    ['delete', '/orgs/x/sources/y/versions/', 'GET, HEAD, POST'],
  ] as const)('%s %s', async (method, path, allow) => {
    const res = await request(t.app)[method](path);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(res.body.code).toBe('Method Not Allowed');
  });

  it('an unknown path is still a 404', async () => {
    expect((await request(t.app).delete('/no/such/thing/')).status).toBe(404);
  });
});

describe('membership edge cases', () => {
  it('a failed membership check answers the error body', async () => {
    const owner = await createUser(t);
    const outsider = await createUser(t);
    const org = await createOrg(t, owner);
    const res = await request(t.app)
      .get(`/orgs/${org.id}/members/${outsider.username}/`)
      .set('Authorization', owner.auth);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('Not Found');
  });

  it("a deactivated user's membership can still be removed", async () => {
    const owner = await createUser(t);
    const member = await createUser(t);
    const org = await createOrg(t, owner);
    await addMember(t, org.id, owner, member);
    await request(t.app).delete(`/users/${member.username}/`).set('Authorization', t.admin);
    const res = await request(t.app)
      .delete(`/orgs/${org.id}/members/${member.username}/`)
      .set('Authorization', owner.auth);
    expect(res.status).toBe(204);
    await request(t.app).put(`/users/${member.username}/reactivate/`).set('Authorization', t.admin);
    expect(
      (
        await request(t.app)
          .get(`/orgs/${org.id}/members/${member.username}/`)
          .set('Authorization', owner.auth)
      ).status,
    ).toBe(404);
  });
});

describe('repository input and lists', () => {
  it('a create with several bad fields names every one of them, under the names sent', async () => {
    const user = await createUser(t);
    const org = await createOrg(t, user);
    const res = await request(t.app)
      .post(`/orgs/${org.id}/sources/`)
      .set('Authorization', user.auth)
      .send({ id: 'a/b', public_access: 'x', supported_locales: 'en,not a locale' });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.errors).sort()).toEqual([
      'id',
      'name',
      'public_access',
      'supported_locales',
    ]);
  });

  it('the public lists show the latest updated first when there is no search', async () => {
    const tag = uniqueId('tag');
    const first = await createSource(t, { id: 'First', extras: { tag } });
    await createSource(
      t,
      { id: 'Second', extras: { tag } },
      { owner: first.owner, org: first.org },
    );
    await request(t.app)
      .post(first.url)
      .set('Authorization', first.owner.auth)
      .send({ website: 'https://a.example.org' });
    const res = await request(t.app).get('/sources/').query({ 'extras.tag': tag });
    expect(res.body.map((s: { short_code: string }) => s.short_code)).toEqual(['First', 'Second']);
  });

  it('an unknown repoType is a 400', async () => {
    const res = await request(t.app).get('/repos/').query({ repoType: 'Foo' });
    expect(res.status).toBe(400);
    expect(res.body.errors.repoType).toBeDefined();
  });
});

describe('a task whose worker was killed', () => {
  it('reads as FAILURE on every path and is recorded so in the database at once', async () => {
    const user = await createUser(t);
    const ids = [crypto.randomUUID(), crypto.randomUUID()];
    for (const id of ids) {
      // STARTED, its heartbeat silent for longer than the 60 s threshold: its process was killed.
      await t.dataSource.query(
        `INSERT INTO tasks (id, kind, state, created_by, started_at, heartbeat_at)
         VALUES ($1, 'test.killed', 'STARTED', $2, now() - interval '5 minutes',
                 now() - interval '2 minutes')`,
        [id, user.username],
      );
    }
    const stored = async (id: string) =>
      (
        await t.dataSource.query<Array<{ state: string; finished_at: Date | null }>>(
          `SELECT state, finished_at FROM tasks WHERE id = $1`,
          [id],
        )
      )[0];

    const one = await request(t.app).get(`/tasks/${ids[0]}/`).set('Authorization', user.auth);
    expect(one.body).toMatchObject({ state: 'FAILURE', error: expect.stringMatching(/stopped/) });
    expect(one.body.finished_at).not.toBeNull();
    expect(await stored(ids[0])).toMatchObject({ state: 'FAILURE', finished_at: expect.any(Date) });

    const gql = await request(t.app)
      .post('/graphql')
      .set('Authorization', user.auth)
      .send({ query: '{ tasks { items { id state error } } }' });
    const items = gql.body.data.tasks.items as Array<{ id: string; state: string }>;
    expect(items.map((i) => i.state)).toEqual(['FAILURE', 'FAILURE']);
    expect(await stored(ids[1])).toMatchObject({ state: 'FAILURE' });
    const list = await request(t.app).get('/tasks/').set('Authorization', user.auth);
    expect(list.body.map((task: { state: string }) => task.state)).toEqual(['FAILURE', 'FAILURE']);
  });

  it('a STARTED task with a fresh heartbeat still reads STARTED', async () => {
    const user = await createUser(t);
    const id = crypto.randomUUID();
    await t.dataSource.query(
      `INSERT INTO tasks (id, kind, state, created_by, started_at, heartbeat_at)
       VALUES ($1, 'test.alive', 'STARTED', $2, now() - interval '5 minutes', now())`,
      [id, user.username],
    );
    const res = await request(t.app)
      .post('/graphql')
      .set('Authorization', user.auth)
      .send({ query: `{ task(id: "${id}") { state error } }` });
    expect(res.body.data.task).toEqual({ state: 'STARTED', error: null });
  });
});

describe('an expansion needs its mnemonic and its parameters (as the reference implementation)', () => {
  async function collection(): Promise<{ auth: string; url: string }> {
    const made = await createCollection(t);
    return { auth: made.owner.auth, url: made.url };
  }

  it('REST: no parameters is a 400 naming the field, and creates nothing', async () => {
    const c = await collection();
    const res = await request(t.app)
      .post(`${c.url}HEAD/expansions/`)
      .set('Authorization', c.auth)
      .send({ mnemonic: 'e1' });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.errors)).toEqual(['parameters']);
    expect(res.body.message).toMatch(/parameters: This field is required/);
    const noMnemonic = await request(t.app)
      .post(`${c.url}HEAD/expansions/`)
      .set('Authorization', c.auth)
      .send({ parameters: {} });
    expect(Object.keys(noMnemonic.body.errors)).toEqual(['mnemonic']);
    await request(t.app)
      .get(`${c.url}HEAD/expansions/e1/`)
      .set('Authorization', c.auth)
      .expect(404);
    await request(t.app)
      .post(`${c.url}HEAD/expansions/`)
      .set('Authorization', c.auth)
      .send({ mnemonic: 'e1', parameters: {} })
      .expect(201);
  });

  it('GraphQL: createExpansion without parameters is a 400 naming the argument', async () => {
    const c = await collection();
    const res = await request(t.app)
      .post('/graphql')
      .set('Authorization', c.auth)
      .send({
        query: `mutation($c: String!) { createExpansion(collection: $c, mnemonic: "e1") { expansion { id } } }`,
        variables: { c: c.url },
      });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toMatch(/argument "parameters" of type "JSONObject!"/);
    await request(t.app)
      .get(`${c.url}HEAD/expansions/e1/`)
      .set('Authorization', c.auth)
      .expect(404);
  });
});
