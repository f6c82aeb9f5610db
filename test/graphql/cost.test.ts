import request from 'supertest';
import { createTestApp, type TestApp } from '../factories';
import { createConcepts, createSource } from '../factories/content';

/**
 * Issue 23: one request of many aliased searches stayed under the cost limit, counted once
 * against the rate limit, and held the database for seconds.
 */

/** `n` aliased searches, each asking for its match count. */
function aliasedSearches(sourceUrl: string, n: number): string {
  const fields = Array.from(
    { length: n },
    (_, i) => `s${i}: concepts(source: "${sourceUrl}", q: "alpha", limit: 1) { totalCount }`,
  );
  return `{ ${fields.join(' ')} }`;
}

describe('aliases and searches', () => {
  let t: TestApp;
  let sourceUrl: string;
  beforeAll(async () => {
    t = await createTestApp();
    const source = await createSource(t);
    sourceUrl = source.url;
    await createConcepts(t, sourceUrl, source.owner, [['A1', 'alpha one', 'Misc']]);
  });
  afterAll(async () => t.close());

  test('1,000 aliases are refused with a 400 before the database is asked', async () => {
    t.queries.count = 0;
    const res = await request(t.app)
      .post('/graphql')
      .send({ query: aliasedSearches(sourceUrl, 1000) });
    expect(t.queries.count).toBe(0);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('TOO_MANY_ALIASES');
    expect(res.body.errors[0].message).toMatch(/Aliases limit of 100 exceeded, found 1000/);
  });

  test('50 aliased searches run', async () => {
    const res = await request(t.app)
      .post('/graphql')
      .send({ query: aliasedSearches(sourceUrl, 50) });
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.s49.totalCount).toBe(1);
  });

  test('a search, or counting facets, costs more than the item it returns', async () => {
    const cheap = await createTestApp({ GRAPHQL_MAX_COST: '100' });
    try {
      const one = `{ concepts(source: "${sourceUrl}", limit: 1) { items { id } } }`;
      expect((await request(cheap.app).post('/graphql').send({ query: one })).status).toBe(200);
      const search = `{ concepts(source: "${sourceUrl}", q: "alpha", limit: 1) { items { id } } }`;
      const res = await request(cheap.app).post('/graphql').send({ query: search });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toMatch(/cost limit of 100 exceeded, found 1\d\d\b/);
      const facets = `{ concepts(source: "${sourceUrl}", includeFacets: true, limit: 1) { facets { field } } }`;
      const counted = await request(cheap.app).post('/graphql').send({ query: facets });
      expect(counted.status).toBe(400);
      expect(counted.body.errors[0].message).toMatch(/cost limit of 100 exceeded, found 1\d\d\b/);
    } finally {
      await cheap.close();
    }
  });
});

describe('rate limits count a GraphQL request by its cost', () => {
  let t: TestApp;
  let sourceUrl: string;
  beforeAll(async () => {
    // One unit per 100 of cost; 30 units a minute from one address.
    t = await createTestApp({
      RATE_LIMITS: 'on',
      TRUST_PROXY: 'true',
      RATE_LIMIT_ANON_PER_MINUTE: '30',
      GRAPHQL_COST_PER_RATE_UNIT: '100',
    });
    const source = await createSource(t);
    sourceUrl = source.url;
    await createConcepts(t, sourceUrl, source.owner, [['A1', 'alpha one', 'Misc']]);
  });
  afterAll(async () => t.close());

  function post(query: string, from: string): request.Test {
    return request(t.app).post('/graphql').set('X-Forwarded-For', from).send({ query });
  }

  test('a cheap query counts as one request', async () => {
    const from = '10.23.0.1';
    for (let i = 0; i < 30; i++) expect((await post('{ me { username } }', from)).status).toBe(200);
    expect((await post('{ me { username } }', from)).status).toBe(429);
  });

  test('ten aliased searches use up the budget of many requests', async () => {
    const from = '10.23.0.2';
    // 10 × (1 + 100 search + 1 count) = 1,020: 11 units, the request itself being one of them.
    const first = await post(aliasedSearches(sourceUrl, 10), from);
    expect(first.status).toBe(200);
    expect((await post(aliasedSearches(sourceUrl, 10), from)).status).toBe(200);
    const third = await post(aliasedSearches(sourceUrl, 10), from);
    expect(third.status).toBe(429);
    expect(third.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
    expect((await post('{ me { username } }', from)).status).toBe(429);
  });
});
