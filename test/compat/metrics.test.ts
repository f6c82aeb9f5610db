import type { Server } from 'node:http';
import request from 'supertest';
import { createTestApp, tasksSettled, uniqueId, type TestApp } from '../factories';
import { createConcept, createSource, createVersion } from '../factories/content';

/**
 * `/metrics` (issue 24 part 6): Prometheus's text format behind `METRICS_TOKEN`, with every
 * family the operations guide names, labelled by route templates and never by raw paths.
 */
const TOKEN = 'metrics-test-token-0123456789';
let t: TestApp;
let off: TestApp;
/** With METRICS_PORT: /metrics is served on that port (by src/main.ts), not by the app. */
let apart: TestApp;
/** One listener, so that both FHIR reads see one base URL (part of the cache's key). */
let server: Server;

beforeAll(async () => {
  // Rate limits on (one request a minute per address) so that a refusal can be counted; GraphQL
  // limits low, and each unit of a query's cost counted as a request, so that GraphQL refusals
  // take small queries.
  t = await createTestApp({
    METRICS_TOKEN: TOKEN,
    RATE_LIMITS: 'on',
    TRUST_PROXY: 'true',
    RATE_LIMIT_ANON_PER_MINUTE: '1',
    GRAPHQL_MAX_DEPTH: '4',
    GRAPHQL_MAX_ALIASES: '2',
    GRAPHQL_MAX_COST: '500',
    GRAPHQL_COST_PER_RATE_UNIT: '1',
  });
  // Running no tasks, so that the tasks `t` queues are run (and timed) by `t`; `off` also makes
  // the fixtures' users, whose sign-in would count against `t`'s anonymous limit.
  off = await createTestApp({ JOBS_WORKERS: '0' });
  apart = await createTestApp({ METRICS_TOKEN: TOKEN, METRICS_PORT: '0', JOBS_WORKERS: '0' });
  server = t.app.listen(0);
});
afterAll(async () => {
  server.close();
  await t.close();
  await off.close();
  await apart.close();
});

const scrape = () => request(t.app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`);

const FAMILIES = [
  'registry_http_request_duration_seconds',
  'registry_http_requests_in_flight',
  'registry_db_pool_connections',
  'registry_db_pool_waiting',
  'registry_tasks',
  'registry_task_duration_seconds',
  'registry_rate_limit_refusals_total',
  'registry_graphql_refusals_total',
  'registry_fhir_render_cache_lookups_total',
  'registry_fhir_render_cache_size',
];

describe('/metrics', () => {
  it('is a 404 when METRICS_TOKEN is not set', async () => {
    const res = await request(off.app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
    expect(res.status).toBe(404);
  });

  it('is not on the main listener when METRICS_PORT is set (it is served on that port)', async () => {
    const res = await request(apart.app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
    expect(res.status).toBe(404);
  });

  it('answers 401 without the token or with another one', async () => {
    expect((await request(t.app).get('/metrics')).status).toBe(401);
    const wrong = await request(t.app).get('/metrics').set('Authorization', 'Bearer not-it');
    expect(wrong.status).toBe(401);
    expect(wrong.text).not.toContain('registry_');
  });

  it('serves every family, labelled by route templates and never by raw ids', async () => {
    // Signed in (user limits are the defaults). A source with a concept, read through FHIR twice (a cache miss, then a hit), and a version,
    // whose export runs as a background task here.
    const system = `http://example.org/metrics/${uniqueId('cs')}`;
    const source = await createSource(off, { canonical_url: system });
    const conceptId = uniqueId('rawid');
    await createConcept(t, source.url, source.owner, { id: conceptId });
    // An $expand of an inline value set over the stored code system renders it through the render
    // cache ($lookup reads by code and never fills it).
    const expand = () =>
      request(server)
        .post('/fhir/ValueSet/$expand')
        .set('Authorization', source.owner.auth)
        .set('Content-Type', 'application/fhir+json')
        .send({
          resourceType: 'Parameters',
          parameter: [
            {
              name: 'valueSet',
              resource: { resourceType: 'ValueSet', compose: { include: [{ system }] } },
            },
          ],
        });
    expect((await expand()).status).toBe(200);
    expect((await expand()).status).toBe(200);
    await createVersion(t, source.url, source.owner, 'v1');
    await tasksSettled(t, source.owner.username);
    const concept = await request(t.app)
      .get(`${source.url}concepts/${conceptId}/`)
      .set('Authorization', source.owner.auth);
    expect(concept.status).toBe(200);
    // Anonymous, over the one-a-minute limit from one address: the second is refused.
    const from = `fd00:${Math.floor(Math.random() * 0xffff).toString(16)}::1`;
    await request(t.app).get('/orgs/').set('X-Forwarded-For', from);
    const refused = await request(t.app).get('/orgs/').set('X-Forwarded-For', from);
    expect(refused.status).toBe(429);
    const missing = request(t.app).get(`/no-such-path/${conceptId}/`);
    expect((await missing.set('Authorization', source.owner.auth)).status).toBe(404);

    const res = await scrape();
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    for (const family of FAMILIES) expect(res.text).toContain(`# TYPE ${family} `);
    const samples = res.text.split('\n').filter((line) => !line.startsWith('#'));
    const sample = (re: RegExp) => samples.filter((line) => re.test(line));

    // The concept read is labelled by its route's template, not by its path.
    expect(
      sample(
        /^registry_http_request_duration_seconds_count\{method="GET",route="[^"]*:concept[^"]*",status="2xx"\} [1-9]/,
      ),
    ).not.toHaveLength(0);
    expect(
      sample(/^registry_http_request_duration_seconds_count\{.*route="unmatched",status="4xx"\}/),
    ).not.toHaveLength(0);
    expect(res.text).not.toContain(conceptId);
    expect(res.text).not.toContain(source.owner.username);
    expect(res.text).not.toContain(source.org);

    expect(sample(/^registry_http_requests_in_flight \d+$/)).toHaveLength(1);
    expect(sample(/^registry_db_pool_connections\{state="total"\} [1-9]/)).toHaveLength(1);
    expect(sample(/^registry_db_pool_connections\{state="idle"\} \d+/)).toHaveLength(1);
    expect(sample(/^registry_db_pool_waiting \d+$/)).toHaveLength(1);
    expect(sample(/^registry_tasks\{state="PENDING"\} \d+$/)).toHaveLength(1);
    expect(sample(/^registry_tasks\{state="SUCCESS"\} [1-9]/)).toHaveLength(1);
    expect(
      sample(/^registry_task_duration_seconds_count\{kind="[\w.-]+",state="SUCCESS"\} [1-9]/),
    ).not.toHaveLength(0);
    expect(sample(/^registry_rate_limit_refusals_total\{window="minute"\} [1-9]/)).toHaveLength(1);
    expect(sample(/^registry_fhir_render_cache_lookups_total\{result="hit"\} [1-9]/)).toHaveLength(
      1,
    );
    expect(sample(/^registry_fhir_render_cache_lookups_total\{result="miss"\} [1-9]/)).toHaveLength(
      1,
    );
    expect(sample(/^registry_fhir_render_cache_size [1-9]/)).toHaveLength(1);
  });

  it('counts GraphQL requests refused for their depth, aliases or cost, and costed past a rate limit', async () => {
    const auth = t.admin;
    const gql = (query: string, headers: Record<string, string>) =>
      request(t.app).post('/graphql').set(headers).send({ query });
    const counts = async () => {
      const text = (await scrape()).text;
      const count = (re: RegExp) => Number(re.exec(text)?.[1] ?? 0);
      return {
        depth: count(/^registry_graphql_refusals_total\{reason="depth"\} (\d+)$/m),
        aliases: count(/^registry_graphql_refusals_total\{reason="aliases"\} (\d+)$/m),
        cost: count(/^registry_graphql_refusals_total\{reason="cost"\} (\d+)$/m),
        minute: count(/^registry_rate_limit_refusals_total\{window="minute"\} (\d+)$/m),
      };
    };
    const before = await counts();

    // Signed in (the default user limits, not the anonymous one): refused for what they are, before anything runs.
    const deep =
      '{ user(username: "x") { orgs(limit: 1) { items { members(limit: 1) { items { username } } } } } }';
    const res1 = await gql(deep, { Authorization: auth });
    expect(res1.status).toBe(400);
    expect(res1.body.errors[0].message).toMatch(/depth limit of 4 exceeded/);
    const aliased =
      '{ a: users(limit: 1) { totalCount } b: users(limit: 1) { totalCount } c: users(limit: 1) { totalCount } }';
    const res2 = await gql(aliased, { Authorization: auth });
    expect(res2.status).toBe(400);
    expect(res2.body.errors[0].message).toMatch(/Aliases limit of 2 exceeded/);
    const costly = '{ users(limit: 0) { items { username } } }';
    const res3 = await gql(costly, { Authorization: auth });
    expect(res3.status).toBe(400);
    expect(res3.body.errors[0].message).toMatch(/cost limit of 500 exceeded/);
    // Anonymous, one request a minute, a query costing several: over the limit by its cost.
    const from = `fd00:${Math.floor(Math.random() * 0xffff).toString(16)}::2`;
    const res4 = await gql('{ orgs(limit: 5) { items { id } } }', { 'X-Forwarded-For': from });
    expect(res4.status).toBe(429);
    expect(res4.body.errors[0].extensions.code).toBe('RATE_LIMITED');

    const after = await counts();
    expect(after).toEqual({
      depth: before.depth + 1,
      aliases: before.aliases + 1,
      cost: before.cost + 1,
      minute: before.minute + 1,
    });
  });
});
