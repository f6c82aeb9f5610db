import crypto from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { ipKeyGenerator } from 'express-rate-limit';
import request, { type Response } from 'supertest';
import { COUNT_FLUSH_MS } from '../../src/services';
import { createTestApp, createUser, uniqueId, type TestApp, type TestUser } from '../factories';

/**
 * Rate limits (spec core §8.2) and login hardening. Limits are off in every other test file;
 * here each app turns them on with small figures, and every test calls from addresses of its own
 * (X-Forwarded-For, trusted here), so counters shared through the database never meet.
 */
let setup: TestApp; // limits off: creates users and changes them
const apps: TestApp[] = [];

beforeAll(async () => {
  setup = await createTestApp();
});
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await setup.close();
});

async function limitedApp(env: Record<string, string>): Promise<TestApp> {
  const app = await createTestApp({ RATE_LIMITS: 'on', TRUST_PROXY: 'true', ...env });
  apps.push(app);
  return app;
}

/** A random address of a private IPv6 range; counted by its /56, which is random too. */
function newAddress(): string {
  const hex = crypto.randomBytes(6).toString('hex');
  return `fd${hex.slice(0, 2)}:${hex.slice(2, 6)}:${hex.slice(6, 10)}:${hex.slice(10)}00::1`;
}

function get(t: TestApp, path: string, from: string, auth?: string): Promise<Response> {
  const req = request(t.app).get(path).set('X-Forwarded-For', from);
  return auth ? req.set('Authorization', auth) : req;
}

function loginFrom(t: TestApp, from: string, username: string, password: string) {
  return request(t.app)
    .post('/users/login/')
    .set('X-Forwarded-For', from)
    .send({ username, password });
}

function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/** `r` of one window in the draft-8 `RateLimit` header (`"minute"; r=2; t=60, "day"; …`). */
function remaining(res: Response, window: string): number | undefined {
  const header = String(res.headers.ratelimit ?? '');
  const match = new RegExp(`"${window}"; r=(\\d+); t=(\\d+)`).exec(header);
  return match ? Number(match[1]) : undefined;
}

function retryAfter(res: Response): number {
  return Number(res.headers['retry-after']);
}

async function setLimits(user: TestUser, limits: Record<string, number | null>): Promise<void> {
  const res = await request(setup.app)
    .patch(`/users/${user.username}/`)
    .set('Authorization', setup.admin)
    .send(limits);
  expect(res.status).toBe(200);
}

describe('request limits per address (anonymous callers)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await limitedApp({
      RATE_LIMIT_ANON_PER_MINUTE: '3',
      RATE_LIMIT_ANON_PER_DAY: '1000',
      RATE_LIMIT_USER_PER_MINUTE: '1000',
    });
  });

  it('sends RateLimit headers and answers 429 with Retry-After and the error body once over', async () => {
    const from = newAddress();
    const answers = [];
    for (let i = 0; i < 3; i += 1) answers.push(await get(t, '/version/', from));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(answers.map((r) => remaining(r, 'minute'))).toEqual([2, 1, 0]);
    expect(answers.map((r) => remaining(r, 'day'))).toEqual([999, 998, 997]);
    expect(answers[0].headers['ratelimit-policy']).toMatch(/"minute"; q=3; w=60; pk=:[^:]+:/);
    expect(answers[0].headers['ratelimit-policy']).toMatch(/"day"; q=1000; w=86400/);
    expect(answers[0].headers['retry-after']).toBeUndefined();

    const refused = await get(t, '/version/', from);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      code: 'Too Many Requests',
      message: expect.stringMatching(/3 per minute .* from this address; try again in \d+ s/),
    });
    expect(retryAfter(refused)).toBeGreaterThanOrEqual(1);
    expect(retryAfter(refused)).toBeLessThanOrEqual(60);
    expect(remaining(refused, 'minute')).toBe(0);

    // Another address has a count of its own.
    expect((await get(t, '/version/', newAddress())).status).toBe(200);
  });

  it('refuses GraphQL in the GraphQL error shape', async () => {
    const from = newAddress();
    const query = (): request.Test =>
      request(t.app)
        .post('/graphql')
        .set('X-Forwarded-For', from)
        .send({ query: '{ me { username } }' });
    for (let i = 0; i < 3; i += 1) expect((await query()).status).toBe(200);
    const refused = await query();
    expect(refused.status).toBe(429);
    expect(refused.body.errors[0].extensions).toEqual({
      code: 'RATE_LIMITED',
      retryAfterSeconds: retryAfter(refused),
    });
  });

  it('never refuses the health check', async () => {
    const from = newAddress();
    for (let i = 0; i < 5; i += 1) expect((await get(t, '/healthz/', from)).status).toBe(200);
    expect((await get(t, '/version/', from)).status).toBe(200);
  });

  it('counts a caller whose credentials are refused by its address', async () => {
    const from = newAddress();
    for (let i = 0; i < 3; i += 1) {
      expect((await get(t, '/user/', from, 'Token not-a-token')).status).toBe(401);
    }
    expect((await get(t, '/version/', from)).status).toBe(429);
  });
});

describe('the day window', () => {
  it('refuses once the day limit is used, until the day ends', async () => {
    const t = await limitedApp({ RATE_LIMIT_ANON_PER_MINUTE: '100', RATE_LIMIT_ANON_PER_DAY: '2' });
    const from = newAddress();
    expect((await get(t, '/version/', from)).status).toBe(200);
    expect((await get(t, '/version/', from)).status).toBe(200);
    const refused = await get(t, '/version/', from);
    expect(refused.status).toBe(429);
    expect(refused.body.message).toMatch(/2 per day/);
    expect(retryAfter(refused)).toBeGreaterThan(86_000);
    expect(remaining(refused, 'minute')).toBe(97);
  });
});

describe('request limits per user', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await limitedApp({
      RATE_LIMIT_ANON_PER_MINUTE: '1000',
      RATE_LIMIT_USER_PER_MINUTE: '3',
      RATE_LIMIT_USER_PER_DAY: '1000',
    });
  });

  it('counts a signed-in user wherever they call from', async () => {
    const user = await createUser(setup);
    const answers = [];
    for (let i = 0; i < 3; i += 1) answers.push(await get(t, '/user/', newAddress(), user.auth));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(answers.map((r) => remaining(r, 'minute'))).toEqual([2, 1, 0]);
    const refused = await get(t, '/user/', newAddress(), user.auth);
    expect(refused.status).toBe(429);
    expect(refused.body.message).toMatch(/3 per minute .* for this user/);
    // Other users, and anonymous callers from the same address, are not held back.
    const from = newAddress();
    expect((await get(t, '/user/', from, (await createUser(setup)).auth)).status).toBe(200);
    expect((await get(t, '/version/', from)).status).toBe(200);
  });

  it('counts HTTP Basic callers as the same user as their tokens', async () => {
    const user = await createUser(setup);
    expect((await get(t, '/user/', newAddress(), user.auth)).status).toBe(200);
    expect((await get(t, '/user/', newAddress(), basic(user.username, user.password))).status).toBe(
      200,
    );
    expect((await get(t, '/user/', newAddress(), user.auth)).status).toBe(200);
    expect((await get(t, '/user/', newAddress(), basic(user.username, user.password))).status).toBe(
      429,
    );
  });

  it('applies the limits an administrator set for a user, and 0 as no limit', async () => {
    const user = await createUser(setup);
    await setLimits(user, { rate_limit_per_minute: 5 });
    const answers = [];
    for (let i = 0; i < 6; i += 1) answers.push(await get(t, '/user/', newAddress(), user.auth));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(answers[0].headers['ratelimit-policy']).toMatch(/"minute"; q=5; w=60/);

    await setLimits(user, { rate_limit_per_minute: 0 });
    const unlimited = await get(t, '/user/', newAddress(), user.auth);
    expect(unlimited.status).toBe(200);
    expect(remaining(unlimited, 'minute')).toBeUndefined();
    expect(remaining(unlimited, 'day')).toBeDefined();

    // Back to the instance's limit, already used up in this window.
    await setLimits(user, { rate_limit_per_minute: null });
    expect((await get(t, '/user/', newAddress(), user.auth)).status).toBe(429);
  });

  it('applies a per-user day limit', async () => {
    const user = await createUser(setup);
    await setLimits(user, { rate_limit_per_day: 1 });
    expect((await get(t, '/user/', newAddress(), user.auth)).status).toBe(200);
    const refused = await get(t, '/user/', newAddress(), user.auth);
    expect(refused.status).toBe(429);
    expect(refused.body.message).toMatch(/1 per day/);
  });
});

describe("a user's own limits", () => {
  it('are shown to the user and to superusers only', async () => {
    const user = await createUser(setup);
    const other = await createUser(setup);
    await setLimits(user, { rate_limit_per_minute: 50, rate_limit_per_day: 5000 });
    const bySelf = await request(setup.app).get('/user/').set('Authorization', user.auth);
    expect(bySelf.body).toMatchObject({ rate_limit_per_minute: 50, rate_limit_per_day: 5000 });
    const byAdmin = await request(setup.app)
      .get(`/users/${user.username}/`)
      .set('Authorization', setup.admin);
    expect(byAdmin.body).toMatchObject({ rate_limit_per_minute: 50, rate_limit_per_day: 5000 });
    const byOther = await request(setup.app)
      .get(`/users/${user.username}/`)
      .set('Authorization', other.auth);
    expect(byOther.body).not.toHaveProperty('rate_limit_per_minute');
    const byAnyone = await request(setup.app).get(`/users/${user.username}/`);
    expect(byAnyone.body).not.toHaveProperty('rate_limit_per_day');
    const fresh = await request(setup.app).get('/user/').set('Authorization', other.auth);
    expect(fresh.body).toMatchObject({ rate_limit_per_minute: null, rate_limit_per_day: null });
  });

  it('are changed by superusers only (403 for anyone else), unchanged values pass', async () => {
    const user = await createUser(setup);
    const other = await createUser(setup);
    for (const path of [`/users/${user.username}/`, '/user/']) {
      const res = await request(setup.app)
        .patch(path)
        .set('Authorization', user.auth)
        .send({ rate_limit_per_minute: 100000 });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        code: 'Forbidden',
        message: "Only an administrator can change a user's rate limits.",
      });
    }
    const byOther = await request(setup.app)
      .put(`/users/${user.username}/`)
      .set('Authorization', other.auth)
      .send({ rate_limit_per_day: 100000 });
    expect(byOther.status).toBe(403);
    const unchanged = await request(setup.app).get('/user/').set('Authorization', user.auth);
    expect(unchanged.body).toMatchObject({ rate_limit_per_minute: null, rate_limit_per_day: null });
    const put = await request(setup.app)
      .put('/user/')
      .set('Authorization', user.auth)
      .send({ name: 'Renamed', rate_limit_per_minute: null, rate_limit_per_day: null });
    expect(put.status).toBe(200);
    expect(put.body.name).toBe('Renamed');
  });

  it('refuses values that are not whole numbers of at least 0', async () => {
    const user = await createUser(setup);
    for (const value of [-1, 1.5, '100', true]) {
      const res = await request(setup.app)
        .put(`/users/${user.username}/`)
        .set('Authorization', setup.admin)
        .send({ rate_limit_per_minute: value });
      expect(res.status).toBe(400);
      expect(res.body.errors).toHaveProperty('rate_limit_per_minute');
    }
  });

  it('are set and read through GraphQL the same way', async () => {
    const user = await createUser(setup);
    const other = await createUser(setup);
    const gql = (auth: string, query: string) =>
      request(setup.app).post('/graphql').set('Authorization', auth).send({ query });
    const set = await gql(
      setup.admin,
      `mutation { updateUser(username: "${user.username}", input: { rateLimitPerMinute: 7, rateLimitPerDay: 70 }) { user { rateLimitPerMinute rateLimitPerDay } } }`,
    );
    expect(set.body).toEqual({
      data: { updateUser: { user: { rateLimitPerMinute: 7, rateLimitPerDay: 70 } } },
    });
    const refused = await gql(
      user.auth,
      `mutation { updateUser(input: { rateLimitPerMinute: 1000 }) { user { username } } }`,
    );
    expect(refused.body.errors[0].extensions.code).toBe('FORBIDDEN');
    const own = await gql(user.auth, '{ me { rateLimitPerMinute rateLimitPerDay } }');
    expect(own.body.data.me).toEqual({ rateLimitPerMinute: 7, rateLimitPerDay: 70 });
    const seen = await gql(
      other.auth,
      `{ user(username: "${user.username}") { rateLimitPerMinute rateLimitPerDay } }`,
    );
    expect(seen.body.data.user).toEqual({ rateLimitPerMinute: null, rateLimitPerDay: null });
  });
});

describe('RATE_LIMITS=off', () => {
  it('counts nothing and sends no RateLimit headers, failed logins included', async () => {
    const t = await limitedApp({
      RATE_LIMITS: 'off',
      RATE_LIMIT_ANON_PER_MINUTE: '1',
      LOGIN_FAILURES_PER_ACCOUNT: '1',
      LOGIN_FAILURES_PER_IP: '1',
    });
    const user = await createUser(setup);
    const from = newAddress();
    for (let i = 0; i < 4; i += 1) {
      const res = await get(t, '/version/', from);
      expect(res.status).toBe(200);
      expect(res.headers.ratelimit).toBeUndefined();
    }
    for (let i = 0; i < 3; i += 1) {
      expect((await loginFrom(t, from, user.username, 'wrong-password')).status).toBe(400);
    }
    expect((await loginFrom(t, from, user.username, user.password)).status).toBe(200);
  });
});

describe('counting', () => {
  /** The shared count of an address in a window, as the counters table holds it. */
  async function sharedHits(t: TestApp, window: string, from: string): Promise<number | null> {
    const rows = await t.dataSource.query<Array<{ hits: number }>>(
      `SELECT hits FROM rate_limit_counters WHERE key = $1 AND reset_at > now()`,
      [`${window}:ip:${ipKeyGenerator(from)}`],
    );
    return rows[0]?.hits ?? null;
  }

  /** A flush interval and a little more: what a process counted alone is shared by then. */
  const shared = () => new Promise((resolve) => setTimeout(resolve, 3 * COUNT_FLUSH_MS));

  it('loses no request counted in parallel, by two apps with pools of their own', async () => {
    const env = { RATE_LIMIT_ANON_PER_MINUTE: '1000', RATE_LIMIT_ANON_PER_DAY: '5000' };
    const [a, b] = [await limitedApp(env), await limitedApp(env)];
    const from = newAddress();
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => get(i % 2 === 0 ? a : b, '/version/', from)),
    );
    expect(answers.every((r) => r.status === 200)).toBe(true);
    const more = await Promise.all(
      Array.from({ length: 40 }, (_, i) => get(i % 2 === 0 ? a : b, '/version/', from)),
    );
    expect(more.every((r) => r.status === 200)).toBe(true);
    await shared();
    expect(await sharedHits(a, 'minute', from)).toBe(80);
    expect(await sharedHits(a, 'day', from)).toBe(80);
  });

  it('far below the limit counts in the process (no statement), near it one statement per request', async () => {
    const t = await limitedApp({
      RATE_LIMIT_ANON_PER_MINUTE: '100',
      RATE_LIMIT_ANON_PER_DAY: '100000',
    });
    const from = newAddress();
    // The timer's flushes are statements of their own, at any moment: held back while the
    // requests' own statements are counted, then let through to check what was shared.
    const flush = jest.spyOn(t.services.rateLimits, 'flush').mockResolvedValue();
    const statements: number[] = [];
    for (let i = 0; i < 60; i += 1) {
      t.queries.count = 0;
      const res = await get(t, '/version/', from);
      expect(res.status).toBe(200);
      expect(remaining(res, 'minute')).toBe(99 - i);
      statements.push(t.queries.count);
    }
    // The first request meets the shared counter; up to half the limit the process counts alone
    // (re-reading the shared count once its view is a second old, on a slow machine); past half,
    // each request is counted exactly.
    expect(statements[0]).toBe(1);
    expect(statements.slice(1, 50).filter((n) => n > 0).length).toBeLessThan(10);
    expect(statements.slice(50)).toEqual(Array.from({ length: 10 }, () => 1));
    flush.mockRestore();
    await shared();
    expect(await sharedHits(t, 'minute', from)).toBe(60);
  });

  it('holds a limit exactly across two apps: exactly the limit is served, then nothing', async () => {
    const env = { RATE_LIMIT_ANON_PER_MINUTE: '400', RATE_LIMIT_ANON_PER_DAY: '100000' };
    const [a, b] = [await limitedApp(env), await limitedApp(env)];
    const from = newAddress();
    const answers: Response[] = [];
    for (let i = 0; i < 600; i += 1)
      answers.push(await get(i % 2 === 0 ? a : b, '/version/', from));
    const served = answers.filter((r) => r.status === 200);
    expect(served).toHaveLength(400);
    expect(answers.slice(400).every((r) => r.status === 429)).toBe(true);
    // Past half the limit both count on the shared counter: each answer's count is exact.
    expect(served.slice(300).map((r) => remaining(r, 'minute'))).toEqual(
      Array.from({ length: 100 }, (_, i) => 99 - i),
    );
    await shared();
    expect(await sharedHits(a, 'minute', from)).toBe(600);
  });

  it('a small limit is counted exactly on every request', async () => {
    const t = await limitedApp({ RATE_LIMIT_ANON_PER_MINUTE: '50' });
    const from = newAddress();
    await get(t, '/version/', from);
    t.queries.count = 0;
    expect((await get(t, '/version/', from)).status).toBe(200);
    expect(t.queries.count).toBe(1);
  });
});

describe('failed logins', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await limitedApp({
      RATE_LIMIT_ANON_PER_MINUTE: '1000',
      LOGIN_FAILURES_PER_ACCOUNT: '3',
      LOGIN_FAILURES_PER_IP: '5',
      LOGIN_FAILURE_WINDOW_MINUTES: '15',
    });
  });

  it('refuse an account after too many failures, even with the right password', async () => {
    const user = await createUser(setup);
    for (const name of [user.username, user.username.toUpperCase(), user.username]) {
      expect((await loginFrom(t, newAddress(), name, 'wrong-password')).status).toBe(400);
    }
    const refused = await loginFrom(t, newAddress(), user.username, user.password);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      code: 'Too Many Requests',
      message: expect.stringMatching(/Too many failed logins.*try again in \d+ seconds/),
    });
    expect(retryAfter(refused)).toBeGreaterThan(800);
    expect(retryAfter(refused)).toBeLessThanOrEqual(900);
    // Basic credentials of that account are refused the same way.
    const byBasic = await get(t, '/user/', newAddress(), basic(user.username, user.password));
    expect(byBasic.status).toBe(429);
    expect(retryAfter(byBasic)).toBeGreaterThan(800);
    // A token issued before still works; other accounts log in from the same addresses.
    expect((await get(t, '/user/', newAddress(), user.auth)).status).toBe(200);
    const other = await createUser(setup);
    expect((await loginFrom(t, newAddress(), other.username, other.password)).status).toBe(200);
  });

  it('refuse an address after too many failures, whatever the account', async () => {
    const from = newAddress();
    for (let i = 0; i < 5; i += 1) {
      expect((await loginFrom(t, from, uniqueId('nobody'), 'wrong-password')).status).toBe(400);
    }
    const user = await createUser(setup);
    const refused = await loginFrom(t, from, user.username, user.password);
    expect(refused.status).toBe(429);
    expect(retryAfter(refused)).toBeGreaterThan(800);
    expect((await get(t, '/user/', from, basic(user.username, user.password))).status).toBe(429);
    expect((await loginFrom(t, newAddress(), user.username, user.password)).status).toBe(200);
  });

  it("a successful login clears the account's failures", async () => {
    const user = await createUser(setup);
    for (let i = 0; i < 2; i += 1) {
      expect((await loginFrom(t, newAddress(), user.username, 'wrong-password')).status).toBe(400);
    }
    expect((await loginFrom(t, newAddress(), user.username, user.password)).status).toBe(200);
    for (let i = 0; i < 2; i += 1) {
      expect((await loginFrom(t, newAddress(), user.username, 'wrong-password')).status).toBe(400);
    }
    expect((await loginFrom(t, newAddress(), user.username, user.password)).status).toBe(200);
  });

  it('count failed HTTP Basic credentials, per account and per address', async () => {
    const user = await createUser(setup);
    for (let i = 0; i < 3; i += 1) {
      const res = await get(t, '/user/', newAddress(), basic(user.username, `wrong-${i}`));
      expect(res.status).toBe(401);
    }
    const refused = await get(t, '/user/', newAddress(), basic(user.username, user.password));
    expect(refused.status).toBe(429);
    expect(retryAfter(refused)).toBeGreaterThan(800);
    expect((await loginFrom(t, newAddress(), user.username, user.password)).status).toBe(429);

    const from = newAddress();
    for (let i = 0; i < 5; i += 1) {
      const res = await get(t, '/version/', from, basic(uniqueId('nobody'), 'wrong-password'));
      expect(res.status).toBe(401);
    }
    const other = await createUser(setup);
    expect((await get(t, '/user/', from, basic(other.username, other.password))).status).toBe(429);
  });

  it('count malformed Basic credentials against the address', async () => {
    const from = newAddress();
    for (let i = 0; i < 5; i += 1) {
      expect((await get(t, '/user/', from, 'Basic bm90LWEtcGFpcg==')).status).toBe(401);
    }
    const user = await createUser(setup);
    expect((await loginFrom(t, from, user.username, user.password)).status).toBe(429);
  });

  it('throttle the GraphQL login mutation and Basic credentials sent to GraphQL', async () => {
    const user = await createUser(setup);
    const mutation = (password: string, from = newAddress()) =>
      request(t.app)
        .post('/graphql')
        .set('X-Forwarded-For', from)
        .send({
          query: `mutation { login(username: "${user.username}", password: "${password}") { token } }`,
        });
    for (let i = 0; i < 3; i += 1) {
      const res = await mutation('wrong-password');
      expect(res.body.errors[0].extensions.code).toBe('INVALID');
    }
    const refused = await mutation(user.password);
    expect(refused.body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED' });
    expect(refused.body.errors[0].extensions.retryAfterSeconds).toBeGreaterThan(800);

    const byBasic = await request(t.app)
      .post('/graphql')
      .set('X-Forwarded-For', newAddress())
      .set('Authorization', basic(user.username, user.password))
      .send({ query: '{ me { username } }' });
    expect(byBasic.status).toBe(429);
    expect(retryAfter(byBasic)).toBeGreaterThan(800);
    expect(byBasic.body.errors[0].extensions.code).toBe('RATE_LIMITED');
  });
});

describe('login timing', () => {
  const median = (values: number[]): number => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  };

  /**
   * Timings of requests refused without a password hash (`floor`), for an unknown name
   * (`unknown`) and for a wrong password (`known`), taken in turn so that each sees the same load
   * (other test files run beside this one). Without a hash for unknown names, their time above
   * the floor is a statement or two against the hash's tens of milliseconds; with one, about the
   * wrong password's.
   */
  async function hashedToo(
    floor: () => Promise<number>,
    unknown: () => Promise<number>,
    known: () => Promise<number>,
  ): Promise<void> {
    await Promise.all([floor(), unknown()]); // warm-up
    const times = { floor: [] as number[], unknown: [] as number[], known: [] as number[] };
    for (let i = 0; i < 9; i += 1) {
      times.floor.push(await floor());
      times.unknown.push(await unknown());
      times.known.push(await known());
    }
    const base = median(times.floor);
    expect(median(times.unknown) - base).toBeGreaterThanOrEqual((median(times.known) - base) / 2);
  }

  async function timed(send: () => Promise<Response>, status: number): Promise<number> {
    const start = performance.now();
    const res = await send();
    const ms = performance.now() - start;
    expect(res.status).toBe(status);
    return ms;
  }

  it('takes as long to refuse an unknown username as a wrong password', async () => {
    const user = await createUser(setup);
    const login = (username: string, password: string) => () =>
      request(setup.app).post('/users/login/').send({ username, password });
    await hashedToo(
      () => timed(login(user.username, ''), 400),
      () => timed(login(uniqueId('nobody'), 'wrong-password'), 400),
      () => timed(login(user.username, 'wrong-password'), 400),
    );
  });

  it('takes as long to refuse Basic credentials of an unknown user as a wrong password', async () => {
    const user = await createUser(setup);
    const call = (authorization: string) => () =>
      request(setup.app).get('/user/').set('Authorization', authorization);
    await hashedToo(
      () => timed(call(`Token ${uniqueId('no-such-token')}`), 401),
      () => timed(call(basic(uniqueId('nobody'), 'wrong-password')), 401),
      () => timed(call(basic(user.username, 'wrong-password')), 401),
    );
  });
});
