import { auditServer } from 'graphql-http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createOrg, createTestApp, createUser, type TestApp, type TestUser } from '../factories';
import { dataOf, gql } from './gql';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/**
 * A query of exactly `depth` levels: user → orgs → items → members → items → orgs → …, ending in
 * a scalar of whatever type the chain reached.
 */
function nestedQuery(username: string, depth: number): string {
  const chain = ['orgs', 'items', 'members', 'items'];
  const scalarAfter = ['totalCount', 'id', 'totalCount', 'username'];
  const fields = ['user'];
  let scalar = 'username';
  for (let i = 0; i < depth - 2; i++) {
    fields.push(chain[i % 4]);
    scalar = scalarAfter[i % 4];
  }
  let body = scalar;
  for (const field of fields.reverse()) {
    // One item per list, so that only depth (not cost) decides.
    const call = field === 'orgs' || field === 'members' ? `${field}(limit: 1)` : field;
    body = field === 'user' ? `user(username: "${username}") { ${body} }` : `${call} { ${body} }`;
  }
  return `{ ${body} }`;
}

describe('depth limit', () => {
  let user: TestUser;
  beforeAll(async () => {
    user = await createUser(t);
    await createOrg(t, user);
  });

  test('the default depth limit is 12', () => {
    expect(t.config.graphqlMaxDepth).toBe(12);
  });

  test('a query at the depth limit runs', async () => {
    const res = await gql(t, user.auth, nestedQuery(user.username, t.config.graphqlMaxDepth));
    const data = dataOf(res);
    // user → orgs → items → members → items → orgs → items → members → items → orgs → items → id
    const innerUser = data.user.orgs.items[0].members.items[0].orgs.items[0].members.items[0];
    expect(innerUser.orgs.items).toHaveLength(1);
    expect(typeof innerUser.orgs.items[0].id).toBe('string');
  });

  test('a query deeper than the limit is rejected with an error, no data, and no SQL run', async () => {
    const query = nestedQuery(user.username, t.config.graphqlMaxDepth + 1);
    t.queries.count = 0;
    const res = await request(t.app).post('/graphql').send({ query });
    expect(t.queries.count).toBe(0);
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors[0].extensions.code).toBe('QUERY_TOO_DEEP');
    expect(res.body.errors[0].message).toMatch(/depth limit of 12 exceeded/);
  });

  test('nested lists multiply their cost by their limit, so limit:0 fan-outs are refused', async () => {
    const query = `{ users(limit: 0) { items { orgs(limit: 0) { items { members(limit: 0) { items { username } } } } } } }`;
    t.queries.count = 0;
    const res = await request(t.app).post('/graphql').send({ query });
    expect(t.queries.count).toBe(0);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toMatch(/cost limit of 20000 exceeded/);
    const small = await request(t.app)
      .post('/graphql')
      .send({ query: `{ users(limit: 5) { items { orgs(limit: 5) { items { id } } } } }` });
    expect(small.status).toBe(200);
  });

  test('a query costlier than the cost limit is rejected before it runs', async () => {
    // Within the alias cap: 100 lists of 1,000 users each.
    const wide = Array.from(
      { length: 100 },
      (_, i) => `u${i}: users(limit: 0) { items { username name email } }`,
    );
    t.queries.count = 0;
    const res = await request(t.app)
      .post('/graphql')
      .send({ query: `{ ${wide.join(' ')} }` });
    expect(t.queries.count).toBe(0);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('QUERY_TOO_COSTLY');
    expect(res.body.errors[0].message).toMatch(/cost limit/i);
  });

  test('paths below /graphql are not GraphQL endpoints', async () => {
    const post = await request(t.app)
      .post('/graphql/whatever')
      .send({ query: '{ me { username } }' });
    expect(post.status).toBe(404);
    expect((await request(t.app).get('/graphql/assets/evil.js')).status).toBe(404);
  });

  test('a much deeper query is rejected too', async () => {
    const res = await gql(t, user.auth, nestedQuery(user.username, 40));
    expect(res.data).toBeUndefined();
    expect(res.errors!.length).toBeGreaterThan(0);
  });
});

describe('credentials', () => {
  test('an invalid token gives HTTP 401 with UNAUTHENTICATED', async () => {
    const res = await gql(t, 'Token not-a-real-token', '{ me { username } }');
    expect(res.status).toBe(401);
    expect(res.errors![0].extensions!.code).toBe('UNAUTHENTICATED');
    expect(res.data).toBeUndefined();
  });

  test('an invalid token is not treated as anonymous, even for a public query', async () => {
    const res = await gql(t, 'Bearer not-a-real-token', '{ users(limit: 1) { totalCount } }');
    expect(res.status).toBe(401);
    expect(res.errors![0].extensions!.code).toBe('UNAUTHENTICATED');
  });

  test('wrong Basic credentials and an unknown scheme give HTTP 401 with UNAUTHENTICATED', async () => {
    const user = await createUser(t);
    const basic = `Basic ${Buffer.from(`${user.username}:wrong-password`).toString('base64')}`;
    for (const header of [basic, 'Digest abc']) {
      const res = await gql(t, header, '{ me { username } }');
      expect(res.status).toBe(401);
      expect(res.errors![0].extensions!.code).toBe('UNAUTHENTICATED');
    }
  });

  test('valid Basic credentials are accepted', async () => {
    const user = await createUser(t);
    const basic = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`;
    expect(dataOf(await gql(t, basic, '{ me { username } }')).me.username).toBe(user.username);
  });

  test('a refused resolver is HTTP 200 with the error in the body, not 401', async () => {
    const res = await gql(
      t,
      undefined,
      'mutation { createOrg(input: { id: "x1", name: "X" }) { id } }',
    );
    expect(res.status).toBe(200);
    expect(res.errors![0].extensions!.code).toBe('UNAUTHENTICATED');
    expect(res.errors![0].path).toEqual(['createOrg']);
  });

  test('an unknown root field is not reachable', async () => {
    const res = await gql(t, t.admin, '{ secrets }');
    expect(res.data).toBeUndefined();
    expect(res.errors!.length).toBeGreaterThan(0);
  });
});

describe('GraphiQL', () => {
  test('a browser GET /graphql gets the GraphiQL page with only local assets, each served', async () => {
    const page = await request(t.app).get('/graphql').set('Accept', 'text/html');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('GraphiQL');

    const urls = [...page.text.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]*)"/g)].map(
      (m) => m[1],
    );
    expect(urls.length).toBeGreaterThanOrEqual(3);
    for (const url of urls) expect(url).toMatch(/^\/graphql\/assets\//);
    expect(page.text).not.toMatch(/https?:\/\//);

    for (const url of urls) {
      const asset = await request(t.app)
        .get(url)
        .buffer(true)
        .parse((res, done) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => done(null, Buffer.concat(chunks)));
        });
      expect(asset.status).toBe(200);
      expect((asset.body as Buffer).length).toBeGreaterThan(1000);
    }
  });

  test('a GET /graphql with a query in the URL runs the query instead of serving the page', async () => {
    const res = await request(t.app)
      .get('/graphql')
      .query({ query: '{ me { username } }' })
      .set('Accept', 'text/html, application/json')
      // Apollo's CSRF prevention wants a preflight-forcing header on GET.
      .set('apollo-require-preflight', 'true');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { me: null } });
  });
});

test('the graphql-http conformance audit reports no error', async () => {
  const server = t.app.listen(0);
  try {
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const { port } = server.address() as AddressInfo;
    const results = await auditServer({ url: `http://127.0.0.1:${port}/graphql` });
    expect(results.length).toBeGreaterThan(10);
    const errors = results
      .filter((r) => r.status === 'error')
      .map((r) => `${r.name}: ${r.status === 'error' ? r.reason : ''}`);
    expect(errors).toEqual([]);
  } finally {
    await new Promise<void>((resolve, reject) =>
      server.close((error) => (error ? reject(error) : resolve())),
    );
  }
});

describe('batching', () => {
  const QUERY = `query($u: String!) {
    user(username: $u) { orgs(limit: 0) { items { id membersCount publicSources myRole } } }
  }`;

  async function statementsFor(user: TestUser, orgCount: number): Promise<number> {
    t.queries.count = 0;
    const res = await gql(t, user.auth, QUERY, { u: user.username });
    const statements = t.queries.count;
    const items = dataOf(res).user.orgs.items as Array<Record<string, unknown>>;
    expect(items).toHaveLength(orgCount);
    for (const item of items) {
      expect(item).toMatchObject({ membersCount: 1, publicSources: 0, myRole: 'ADMIN' });
    }
    return statements;
  }

  test('the SQL statements of a user and their orgs do not grow with the number of orgs', async () => {
    const few = await createUser(t);
    const many = await createUser(t);
    for (let i = 0; i < 3; i++) await createOrg(t, few);
    for (let i = 0; i < 12; i++) await createOrg(t, many);

    const withFew = await statementsFor(few, 3);
    const withMany = await statementsFor(many, 12);
    console.log(`SQL statements: 3 orgs → ${withFew}, 12 orgs → ${withMany}`);
    expect(withMany).toBe(withFew);
    expect(withFew).toBeLessThan(10);
  });
});
