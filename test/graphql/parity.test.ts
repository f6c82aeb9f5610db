import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { buildSchema, isInterfaceType, isObjectType, type GraphQLSchema } from 'graphql';
import { fhirRouter } from '../../compat/fhir';
import { restRoutes } from '../../compat/rest';
import { createTestApp, type TestApp } from '../factories';

/*
 * Issue 28 part 1, parity: every REST route has a GraphQL twin (the same parameters and rules,
 * one service call each) named in the route table (`graphql: 'Type.field'`), or says why it is
 * about the transport only (`transportOnly`). FHIR routes (those compat/fhir's router registers)
 * are left to the FHIR parity test.
 */

/**
 * Routes the app registers outside the REST table (and outside the FHIR router), each with why
 * it has no GraphQL twin.
 */
const OUTSIDE_TABLE: Record<string, string> = {
  'GET /livez/': 'liveness probe for orchestrators',
  'GET /readyz/': 'readiness probe for load balancers (503 while warming up or draining)',
  'GET /metrics': 'Prometheus scrape endpoint, guarded by its own token',
  'GET /': 'the index page linking the API documents',
  'GET /openapi.json': 'the REST API description itself',
  'GET /reference/': 'the HTML API reference of the REST edge',
  'GET /reference/assets/:file': 'static files of the HTML API reference',
  'GET /graphql': 'GraphiQL, or a GraphQL operation sent by GET: the GraphQL edge itself',
  'GET /graphql/assets/:file': 'static files of GraphiQL',
  'ALL /graphql': 'the GraphQL edge itself (POST, and GET for queries)',
};

/**
 * REST rows without a GraphQL twin yet, by `METHOD path`, with what the twin needs. Kept honest
 * by the tests below: a row listed here may not name a twin, and every row listed exists.
 */
const NOT_YET_TWINNED: Record<string, string> = {};

let t: TestApp;
let schema: GraphQLSchema;
beforeAll(async () => {
  t = await createTestApp({ METRICS_TOKEN: 'parity-test-metrics-token' });
  schema = buildSchema(
    fs.readFileSync(path.join(__dirname, '../../schema/schema.graphql'), 'utf8'),
  );
});
afterAll(async () => t.close());

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[]; groups?: Map<string, { stack: Layer[] }> };
}

/**
 * Every route a router registered: `GET /orgs/:org/`, … (HEAD is GET's); `ALL /graphql` for a
 * route answering every method, except the table's 405 answers (`mountTable`'s `all`).
 */
function routesOf(stack: Layer[]): string[] {
  const found: string[] = [];
  const walk = (layers: Layer[], table: boolean): void => {
    for (const layer of layers) {
      if (layer.route) {
        for (const method of Object.keys(layer.route.methods)) {
          if (method !== '_all') found.push(`${method.toUpperCase()} ${layer.route.path}`);
          else if (!table) found.push(`ALL ${layer.route.path}`);
        }
      } else if (layer.handle?.stack) walk(layer.handle.stack, table);
      // The REST table's groups of paths (`mountTable`).
      else if (layer.handle?.groups) {
        for (const router of layer.handle.groups.values()) walk(router.stack, true);
      }
    }
  };
  walk(stack, false);
  return found;
}

/** Whether the emitted schema has the field `Type.field`. */
function inSchema(twin: string): boolean {
  const [typeName, field, ...rest] = twin.split('.');
  if (!typeName || !field || rest.length > 0) return false;
  const type = schema.getType(typeName);
  if (!type || !(isObjectType(type) || isInterfaceType(type))) return false;
  return field in type.getFields();
}

describe('GraphQL parity with REST (issue 28)', () => {
  const rows = () => restRoutes(t.services);
  const keyOf = (row: { method: string; path: string }) => `${row.method} ${row.path}`;

  it('every REST row names a GraphQL twin or says why it is transport-only', () => {
    const bare = rows()
      .filter((row) => !row.graphql && !row.transportOnly)
      .map(keyOf)
      .filter((key) => !(key in NOT_YET_TWINNED));
    expect(bare).toEqual([]);
    const both = rows().filter((row) => row.graphql && row.transportOnly);
    expect(both.map(keyOf)).toEqual([]);
  });

  it('every twin a row names is a field of the emitted schema', () => {
    const missing = rows()
      .filter((row) => row.graphql !== undefined && !inSchema(row.graphql))
      .map((row) => `${keyOf(row)} → ${row.graphql}`);
    expect(missing).toEqual([]);
  });

  it('the rows not yet twinned exist and name no twin (the list shrinks as twins are built)', () => {
    const byKey = new Map(rows().map((row) => [keyOf(row), row]));
    const stale = Object.keys(NOT_YET_TWINNED).filter((key) => {
      const row = byKey.get(key);
      return !row || row.graphql !== undefined || row.transportOnly !== undefined;
    });
    expect(stale).toEqual([]);
    for (const need of Object.values(NOT_YET_TWINNED)) expect(need.length).toBeGreaterThan(10);
  });

  it('every transport-only reason says something', () => {
    for (const row of rows()) {
      if (row.transportOnly !== undefined) expect(row.transportOnly.length).toBeGreaterThan(10);
    }
  });

  it('every route of the app is a REST row, a FHIR route or allowed outside the table, with a reason', () => {
    const app = routesOf((t.app as unknown as { router: { stack: Layer[] } }).router.stack);
    // The FHIR parity test covers what compat/fhir's router registers.
    const fhir = new Set(routesOf((fhirRouter(t.services) as unknown as { stack: Layer[] }).stack));
    const table = new Set(rows().map(keyOf));
    const unexplained = [...new Set(app)].filter(
      (route) => !fhir.has(route) && !table.has(route) && !(route in OUTSIDE_TABLE),
    );
    expect(unexplained).toEqual([]);
    // The allow-list names routes that exist, each with its reason.
    const registered = new Set(app);
    expect(Object.keys(OUTSIDE_TABLE).filter((route) => !registered.has(route))).toEqual([]);
    // And every table row is registered (mountTable is the only registrar).
    expect([...table].filter((route) => !registered.has(route))).toEqual([]);
  });

  it('shows each twin in the OpenAPI document (x-graphql, x-transport-only)', async () => {
    const res = await request(t.app).get('/openapi.json');
    const doc = res.body as { paths: Record<string, Record<string, Record<string, unknown>>> };
    expect(doc.paths['/orgs/{org}/sources/{source}/concepts/']?.get?.['x-graphql']).toBe(
      'Query.concepts',
    );
    expect(doc.paths['/healthz/']?.get?.['x-transport-only']).toEqual(expect.any(String));
  });
});
