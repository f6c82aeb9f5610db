import request from 'supertest';
import {
  createTestApp,
  createUser,
  dropListeningConnections,
  until,
  type TestApp,
  type TestUser,
} from '../factories';

/**
 * A process keeps the holders of the API tokens it has checked, so that a signed-in request
 * costs no statement; every change to a user or their tokens reaches every process through
 * `LISTEN/NOTIFY` (issue 27). Two apps on one database stand for two server processes.
 */
let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  a = await createTestApp();
  b = await createTestApp();
}, 60_000);
afterAll(async () => {
  await a.close();
  await b.close();
});

/** The statements `GET /version/` (which reads nothing itself) sends with `auth`, and its status. */
async function versionWith(
  t: TestApp,
  auth: string,
): Promise<{ status: number; statements: number }> {
  t.queries.count = 0;
  const res = await request(t.app).get('/version/').set('Authorization', auth);
  return { status: res.status, statements: t.queries.count };
}

describe('API tokens checked once per process, changes heard at once', () => {
  let user: TestUser;
  beforeEach(async () => {
    user = await createUser(a);
  });

  it('a token checked before costs no statement; an anonymous request none either', async () => {
    expect((await versionWith(a, '')).statements).toBe(0);
    expect(await versionWith(a, user.auth)).toEqual({ status: 200, statements: 1 });
    expect(await versionWith(a, user.auth)).toEqual({ status: 200, statements: 0 });
    // A wrong token is asked of the database every time (and refused every time).
    expect((await versionWith(a, 'Token not-a-token')).status).toBe(401);
    expect((await versionWith(a, 'Token not-a-token')).status).toBe(401);
  });

  it('a user deactivated through the API is refused by that process from the answer on', async () => {
    expect((await versionWith(a, user.auth)).status).toBe(200);
    expect((await versionWith(a, user.auth)).statements).toBe(0);
    const res = await request(a.app)
      .delete(`/users/${user.username}/`)
      .set('Authorization', a.admin);
    expect(res.status).toBe(204);
    expect((await versionWith(a, user.auth)).status).toBe(401);
  });

  it('another process hears of the deactivation: refused once its notifications are in', async () => {
    expect((await versionWith(b, user.auth)).status).toBe(200);
    expect((await versionWith(b, user.auth)).statements).toBe(0);
    await request(a.app)
      .delete(`/users/${user.username}/`)
      .set('Authorization', a.admin)
      .expect(204);
    await b.services.notifications.settle();
    expect((await versionWith(b, user.auth)).status).toBe(401);
    // Reactivated: accepted again (asked of the database once more).
    await request(a.app)
      .put(`/users/${user.username}/reactivate/`)
      .set('Authorization', a.admin)
      .expect(204);
    expect(await versionWith(b, user.auth)).toEqual({ status: 200, statements: 1 });
  });

  it('changes made outside the API are heard too: a token deleted, a user deactivated in SQL', async () => {
    const other = await createUser(a);
    for (const t of [a, b]) {
      expect((await versionWith(t, user.auth)).statements).toBe(1);
      expect((await versionWith(t, other.auth)).statements).toBe(1);
    }
    await a.dataSource.query(
      'DELETE FROM api_tokens WHERE user_id = (SELECT id FROM users WHERE username = $1)',
      [user.username],
    );
    await a.dataSource.query('UPDATE users SET is_active = false WHERE username = $1', [
      other.username,
    ]);
    for (const t of [a, b]) {
      await t.services.notifications.settle();
      expect((await versionWith(t, user.auth)).status).toBe(401);
      expect((await versionWith(t, other.auth)).status).toBe(401);
    }
  });

  it('a change rolled back announces nothing: the token stays kept', async () => {
    expect((await versionWith(b, user.auth)).statements).toBe(1);
    await expect(
      a.dataSource.transaction(async (em) => {
        await em.query('UPDATE users SET is_active = false WHERE username = $1', [user.username]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await b.services.notifications.settle();
    expect(await versionWith(b, user.auth)).toEqual({ status: 200, statements: 0 });
  });

  it('while the listening connection is lost nothing is kept; once back, tokens are kept again', async () => {
    expect((await versionWith(a, user.auth)).statements).toBe(1);
    await dropListeningConnections(a);
    await until(() => !a.services.notifications.live && !b.services.notifications.live);
    // Deactivated while no process listens: no process may answer from what it kept.
    await a.dataSource.query('UPDATE users SET is_active = false WHERE username = $1', [
      user.username,
    ]);
    expect((await versionWith(a, user.auth)).status).toBe(401);
    await a.dataSource.query('UPDATE users SET is_active = true WHERE username = $1', [
      user.username,
    ]);
    expect((await versionWith(a, user.auth)).statements).toBe(1);
    expect((await versionWith(a, user.auth)).statements).toBe(1); // not kept meanwhile
    await until(() => a.services.notifications.live && b.services.notifications.live);
    expect((await versionWith(a, user.auth)).statements).toBe(1);
    expect((await versionWith(a, user.auth)).statements).toBe(0);
  }, 30_000);

  it('parallel requests while the user is deactivated: none hangs, none after the answer passes', async () => {
    expect((await versionWith(b, user.auth)).status).toBe(200);
    const during = Array.from({ length: 40 }, () =>
      request(b.app).get('/version/').set('Authorization', user.auth),
    );
    const deactivated = request(a.app)
      .delete(`/users/${user.username}/`)
      .set('Authorization', a.admin);
    const [answers, res] = await Promise.all([Promise.all(during), deactivated]);
    expect(res.status).toBe(204);
    for (const answer of answers) expect([200, 401]).toContain(answer.status);
    await b.services.notifications.settle();
    const after = await Promise.all(
      Array.from({ length: 20 }, () =>
        request(b.app).get('/version/').set('Authorization', user.auth),
      ),
    );
    expect(after.map((r) => r.status)).toEqual(after.map(() => 401));
  });
});
