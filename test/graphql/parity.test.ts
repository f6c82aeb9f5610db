import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { buildSchema, isInterfaceType, isObjectType, type GraphQLSchema } from 'graphql';
import { fhirRouter } from '../../compat/fhir';
import { restRoutes } from '../../compat/rest';
import { createTestApp, createUser, uniqueId, type TestApp, type TestUser } from '../factories';
import {
  createConcept,
  createMappingBetween,
  createSource,
  createVersion,
  type TestSource,
} from '../factories/content';
import { dataOf, errorCode, gql } from './gql';

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

/**
 * How GraphQL says each query parameter the table's rows declare (`query`): the arguments of the
 * twin that carry it, or, in words, why none is needed (GraphQL answers the fields selected).
 */
const REST_PARAMS: Record<string, string[] | string> = {
  q: ['q'],
  limit: ['limit'],
  page: ['offset'],
  offset: ['offset'],
  sortAsc: ['sort'],
  sortDesc: ['sort', 'sortDesc'],
  updatedSince: ['updatedSince'],
  onlyHierarchyRoot: ['onlyHierarchyRoot'],
  verbose: 'summaries or details: GraphQL answers the fields selected',
  includeMappings: 'select `mappings` on each concept',
  includeInverseMappings: 'select `inverseMappings` on each concept',
  facetsOnly: 'select `facets` without `items` (with `includeFacets: true`)',
  verbosity: 'the fields selected, and `includeSameCodes` for the unchanged codes (verbosity 3)',
  output: 'select `changelog { markdown }` for the Markdown release note',
};

/**
 * Twins whose service pages by window only: REST accepts `q`, `sortAsc`/`sortDesc` and
 * `updatedSince` on them and ignores them, as GraphQL does by not taking them.
 */
const WINDOW_ONLY = new Set(['Collection.expansions', 'Query.tasks', 'Query.events']);
const IGNORED_BY_WINDOW_ONLY = new Set(['q', 'sort', 'sortDesc', 'updatedSince']);

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

  it('every query parameter a row declares is an argument of its twin, or answered by selection', () => {
    const missing: string[] = [];
    for (const row of rows()) {
      if (!row.graphql || !row.query) continue;
      const [typeName, fieldName] = row.graphql.split('.');
      const type = schema.getType(typeName);
      if (!type || !(isObjectType(type) || isInterfaceType(type))) continue;
      const args = new Set(type.getFields()[fieldName]?.args.map((arg) => arg.name) ?? []);
      for (const param of Object.keys(row.query.shape)) {
        const said = REST_PARAMS[param];
        if (said === undefined) missing.push(`${keyOf(row)}: ${param} is not in REST_PARAMS`);
        else if (Array.isArray(said)) {
          for (const arg of said) {
            if (args.has(arg)) continue;
            if (WINDOW_ONLY.has(row.graphql) && IGNORED_BY_WINDOW_ONLY.has(arg)) continue;
            missing.push(`${keyOf(row)}: ${param} → ${row.graphql}(${arg})`);
          }
        }
      }
    }
    expect(missing).toEqual([]);
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

/** REST's JSON answer of a GET that must succeed. */
async function restGet(url: string, auth?: string): Promise<Array<Record<string, unknown>>> {
  const req = request(t.app).get(url);
  if (auth !== undefined) void req.set('Authorization', auth);
  const res = await req;
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Array<Record<string, unknown>>;
}

const ids = (items: Array<{ id?: unknown }>) => items.map((item) => String(item.id)).sort();

describe('the twins built for parity answer as REST does', () => {
  let pub: TestSource;
  let priv: TestSource;
  let stranger: TestUser;
  beforeAll(async () => {
    pub = await createSource(t, { id: uniqueId('PUB'), public_access: 'View' });
    priv = await createSource(t, { id: uniqueId('PRIV'), public_access: 'None' });
    stranger = await createUser(t);
    for (const source of [pub, priv]) {
      for (const id of ['A', 'B', 'C']) await createConcept(t, source.url, source.owner, { id });
      await createMappingBetween(t, source.url, source.owner, [
        'M1',
        'SAME-AS',
        `${source.url}concepts/A/`,
        `${source.url}concepts/B/`,
      ]);
      await createMappingBetween(t, source.url, source.owner, [
        'M2',
        'NARROWER-THAN',
        `${source.url}concepts/C/`,
        `${source.url}concepts/A/`,
      ]);
    }
  });

  const CONCEPTS = `query($s: [String!], $q: String) {
    concepts(sourceIds: $s, q: $q, limit: 0) { totalCount items { id url } } }`;
  const MAPPINGS = `query($s: [String!], $t: [String!], $u: [String!]) {
    mappings(sourceIds: $s, mapType: $t, updatedBy: $u, limit: 0) { totalCount items { id url } } }`;

  it('concepts without a source: the public concepts REST /concepts/ lists, private ones hidden', async () => {
    for (const auth of [undefined, pub.owner.auth, priv.owner.auth]) {
      const rest = await restGet(`/concepts/?source=${pub.id},${priv.id}&limit=0`, auth);
      const page = dataOf(await gql(t, auth, CONCEPTS, { s: [pub.id, priv.id] })).concepts;
      expect(ids(page.items)).toEqual(ids(rest));
      expect(page.totalCount).toBe(rest.length);
      expect(ids(page.items)).toEqual(['A', 'B', 'C']);
      expect(page.items.every((c: { url: string }) => c.url.startsWith(pub.url))).toBe(true);
    }
    // The filters across sources mean nothing within one.
    const within = await gql(
      t,
      undefined,
      `{ concepts(source: "${pub.url}", org: ["X"]) { totalCount } }`,
    );
    expect(errorCode(within)).toBe('INVALID');
  });

  it('includeFacets counts the facets REST answers with the includeFacets header', async () => {
    const rest = await request(t.app)
      .get(`${pub.url}concepts/?limit=1`)
      .set('includeFacets', 'true');
    expect(rest.status).toBe(200);
    const fields = (rest.body as { facets: { fields: Record<string, Array<[string, number]>> } })
      .facets.fields;
    const query = `query($u: String!) { concepts(source: $u, limit: 1, includeFacets: true) {
      facets { field values { value count } } } plain: concepts(source: $u, limit: 1) { facets { field } } }`;
    const data = dataOf(await gql(t, undefined, query, { u: pub.url }));
    const asRest = Object.fromEntries(
      data.concepts.facets.map(
        (f: { field: string; values: Array<{ value: string; count: number }> }) => [
          f.field,
          f.values.map((v) => [v.value, v.count]),
        ],
      ),
    );
    expect(asRest).toEqual(fields);
    expect(asRest.conceptClass).toEqual([['Misc', 3]]);
    expect(data.plain.facets).toBeNull();
  });

  it('mappings without a source: REST /mappings/ with the same filters (mapType, updatedBy)', async () => {
    const rest = await restGet(
      `/mappings/?source=${pub.id},${priv.id}&mapType=SAME-AS&updatedBy=${pub.owner.username}&limit=0`,
    );
    const page = dataOf(
      await gql(t, undefined, MAPPINGS, {
        s: [pub.id, priv.id],
        t: ['SAME-AS'],
        u: [pub.owner.username],
      }),
    ).mappings;
    expect(ids(page.items)).toEqual(ids(rest));
    expect(ids(page.items)).toEqual(['M1']);
    const nobody = dataOf(
      await gql(t, undefined, MAPPINGS, { s: [pub.id], u: [stranger.username] }),
    ).mappings;
    expect(nobody.totalCount).toBe(0);
  });

  it('Concept.mappingList pages a concept’s mappings as REST …/concepts/C/mappings/', async () => {
    const rest = await restGet(
      `${pub.url}concepts/A/mappings/?includeInverseMappings=true&limit=0`,
    );
    const query = `query($u: String!) { concept(url: $u) {
      direct: mappingList(limit: 0) { totalCount items { id } }
      both: mappingList(includeInverseMappings: true, limit: 0) { totalCount items { id } }
      paged: mappingList(includeInverseMappings: true, limit: 1, offset: 1) { totalCount items { id } } } }`;
    const concept = dataOf(await gql(t, undefined, query, { u: `${pub.url}concepts/A/` })).concept;
    expect(ids(concept.both.items)).toEqual(ids(rest));
    expect(ids(concept.direct.items)).toEqual(['M1']);
    const restPaged = await restGet(
      `${pub.url}concepts/A/mappings/?includeInverseMappings=true&limit=1&offset=1`,
    );
    expect(concept.paged.totalCount).toBe(2);
    expect(ids(concept.paged.items)).toEqual(ids(restPaged));
    const cursor = await gql(
      t,
      undefined,
      `query($u: String!) { concept(url: $u) { mappingList(includeInverseMappings: true, first: 1) { totalCount } } }`,
      { u: `${pub.url}concepts/A/` },
    );
    expect(errorCode(cursor)).toBe('INVALID');
    // A private source's concept stays out of sight.
    const hidden = await gql(t, stranger.auth, query, { u: `${priv.url}concepts/A/` });
    expect(['FORBIDDEN', 'NOT_FOUND']).toContain(errorCode(hidden));
  });

  it('setExtra and deleteExtra write one attribute, keep parallel writes of others, refuse non-members', async () => {
    const SET = `mutation($u: String!, $n: String!, $v: JSON) {
      setExtra(url: $u, name: $n, value: $v) { url name value } }`;
    const [one, two] = await Promise.all([
      gql(t, pub.owner.auth, SET, { u: pub.url, n: 'one', v: 1 }),
      gql(t, pub.owner.auth, SET, { u: pub.url, n: 'two', v: { deep: [2] } }),
    ]);
    expect(dataOf(one).setExtra).toEqual({ url: pub.url, name: 'one', value: 1 });
    expect(dataOf(two).setExtra.value).toEqual({ deep: [2] });
    expect(await restGet(`${pub.url}extras/`)).toEqual({ one: 1, two: { deep: [2] } });

    const concept = `${pub.url}concepts/B/`;
    dataOf(await gql(t, pub.owner.auth, SET, { u: concept, n: 'flag', v: true }));
    expect(await restGet(`${concept}extras/flag/`)).toEqual({ flag: true });

    const refused = await gql(t, stranger.auth, SET, { u: pub.url, n: 'one', v: 9 });
    expect(errorCode(refused)).toBe('FORBIDDEN');
    const anonymous = await gql(t, undefined, SET, { u: pub.url, n: 'one', v: 9 });
    expect(errorCode(anonymous)).toBe('UNAUTHENTICATED');

    const DELETE = `mutation($u: String!, $n: String!) { deleteExtra(url: $u, name: $n) { deletedId url } }`;
    expect(
      dataOf(await gql(t, pub.owner.auth, DELETE, { u: pub.url, n: 'one' })).deleteExtra,
    ).toEqual({ deletedId: 'one', url: pub.url });
    expect(await restGet(`${pub.url}extras/`)).toEqual({ two: { deep: [2] } });
    expect(errorCode(await gql(t, pub.owner.auth, DELETE, { u: pub.url, n: 'one' }))).toBe(
      'NOT_FOUND',
    );
  });

  it('concept name writes: add, update and delete one name as REST …/names/[:uuid/] does', async () => {
    const url = `${pub.url}concepts/C/`;
    const ADD = `mutation($u: String!) {
      addConceptName(url: $u, input: { name: "Gamma", locale: "fr" }) { id url item { uuid name locale } concept { names { name } } } }`;
    const added = dataOf(await gql(t, pub.owner.auth, ADD, { u: url })).addConceptName;
    expect(added.item).toMatchObject({ name: 'Gamma', locale: 'fr' });
    expect(added.url).toBe(`${url}names/${added.id}/`);
    expect(await restGet(added.url)).toMatchObject({ name: 'Gamma', locale: 'fr' });

    const UPDATE = `mutation($u: String!, $id: String!) {
      updateConceptName(url: $u, uuid: $id, input: { name: "Gamma 2" }) { item { name locale } } }`;
    const updated = dataOf(await gql(t, pub.owner.auth, UPDATE, { u: url, id: added.id }));
    expect(updated.updateConceptName.item).toEqual({ name: 'Gamma 2', locale: 'fr' });
    expect(await restGet(added.url)).toMatchObject({ name: 'Gamma 2' });

    expect(errorCode(await gql(t, stranger.auth, UPDATE, { u: url, id: added.id }))).toBe(
      'FORBIDDEN',
    );

    const DELETE = `mutation($u: String!, $id: String!) { deleteConceptName(url: $u, uuid: $id) { deletedId url } }`;
    const removed = dataOf(await gql(t, pub.owner.auth, DELETE, { u: url, id: added.id }));
    expect(removed.deleteConceptName).toEqual({ deletedId: added.id, url: added.url });
    expect((await request(t.app).get(added.url)).status).toBe(404);
  });

  it('concept description writes go through the same service as REST', async () => {
    const url = `${pub.url}concepts/A/`;
    const ADD = `mutation($u: String!) {
      addConceptDescription(url: $u, input: { description: "First letter", locale: "en" }) { id url item { description } } }`;
    const added = dataOf(await gql(t, pub.owner.auth, ADD, { u: url })).addConceptDescription;
    expect(await restGet(`${url}descriptions/`)).toEqual([
      expect.objectContaining({ uuid: added.id, description: 'First letter' }),
    ]);
    expect(errorCode(await gql(t, stranger.auth, ADD, { u: url }))).toBe('FORBIDDEN');
  });

  it('apiVersion, toggles and refreshSummary answer as /version/, /toggles/ and PUT …/summary/', async () => {
    const version = await request(t.app).get('/version/');
    const data = dataOf(await gql(t, undefined, '{ apiVersion toggles }'));
    expect(data.apiVersion).toBe(version.body);
    expect(data.toggles).toEqual((await request(t.app).get('/toggles/')).body);

    const REFRESH = `mutation($u: String!) { refreshSummary(url: $u) { url } }`;
    expect(dataOf(await gql(t, pub.owner.auth, REFRESH, { u: pub.url })).refreshSummary).toEqual({
      url: pub.url,
    });
    const rest = await request(t.app).put(`${pub.url}summary/`).set('Authorization', stranger.auth);
    expect(rest.status).toBe(403);
    expect(errorCode(await gql(t, stranger.auth, REFRESH, { u: pub.url }))).toBe('FORBIDDEN');
  });

  it('startBulkImport takes fileUrl, refused as REST refuses file_url from a host not allowed', async () => {
    const fileUrl = 'http://elsewhere.example/x.json';
    const rest = await request(t.app)
      .post('/importers/bulk-import/')
      .set('Authorization', pub.owner.auth)
      .send({ file_url: fileUrl });
    expect(rest.status).toBe(400);
    const START = `mutation($f: String, $c: String) { startBulkImport(fileUrl: $f, content: $c) { task { id } } }`;
    const refused = await gql(t, pub.owner.auth, START, { f: fileUrl });
    expect(errorCode(refused)).toBe('INVALID');
    expect(refused.errors?.[0].message).toBe(rest.body.message);
    expect(errorCode(await gql(t, undefined, START, { f: fileUrl }))).toBe('UNAUTHENTICATED');
    const both = await gql(t, pub.owner.auth, START, { f: fileUrl, c: '{}' });
    expect(errorCode(both)).toBe('INVALID');
  });

  it('compareSourceVersions: includeSameCodes as $compare verbosity 3, changelog.markdown as output=markdown', async () => {
    const src = await createSource(t, { id: uniqueId('CMP') });
    for (const id of ['X', 'Y', 'Z']) await createConcept(t, src.url, src.owner, { id });
    await createVersion(t, src.url, src.owner, 'v1');
    const edit = await request(t.app)
      .patch(`${src.url}concepts/Y/`)
      .set('Authorization', src.owner.auth)
      .send({ concept_class: 'Drug' });
    expect(edit.status).toBe(200);
    const versions = { version1: `${src.url}v1/`, version2: src.url };
    const rest = await request(t.app)
      .post('/sources/$compare/?verbosity=3')
      .set('Authorization', src.owner.auth)
      .send(versions);
    expect(rest.status).toBe(200);
    const query = `query($a: String!, $b: String!) { compareSourceVersions(version1: $a, version2: $b, includeSameCodes: true) {
      concepts { major same sameCodes } } }`;
    const compared = dataOf(
      await gql(t, src.owner.auth, query, { a: versions.version1, b: versions.version2 }),
    ).compareSourceVersions.concepts;
    expect(compared.major).toEqual(rest.body.concepts.changed_major.mnemonic);
    expect([...compared.sameCodes].sort()).toEqual(
      [...rest.body.concepts.same_major.mnemonic].sort(),
    );
    expect([...compared.sameCodes].sort()).toEqual(['X', 'Z']);
    const markdown = await request(t.app)
      .post('/sources/$changelog/?output=markdown')
      .set('Authorization', src.owner.auth)
      .send(versions);
    expect(markdown.status).toBe(200);
    const log = `query($a: String!, $b: String!) { compareSourceVersions(version1: $a, version2: $b) { changelog { markdown } } }`;
    const note = dataOf(
      await gql(t, src.owner.auth, log, { a: versions.version1, b: versions.version2 }),
    ).compareSourceVersions.changelog.markdown;
    expect(note).toBe(markdown.body.markdown);
    expect(note).toContain('Changed in meaning concepts (1)');
    const plain = `query($a: String!, $b: String!) { compareSourceVersions(version1: $a, version2: $b) { concepts { sameCodes } } }`;
    const without = dataOf(
      await gql(t, src.owner.auth, plain, { a: versions.version1, b: versions.version2 }),
    );
    expect(without.compareSourceVersions.concepts.sameCodes).toBeNull();
  });

  it('lookupValues, verifyEmail and oidcSignupUrl answer or refuse as their REST routes do', async () => {
    const rest = await restGet(`${pub.url}concepts/lookup/`);
    const values = dataOf(
      await gql(t, undefined, `query($s: String!) { lookupValues(source: $s) { id } }`, {
        s: pub.url,
      }),
    ).lookupValues;
    expect(ids(values)).toEqual(ids(rest));
    const hidden = await gql(
      t,
      stranger.auth,
      `query($s: String!) { lookupValues(source: $s) { id } }`,
      {
        s: priv.url,
      },
    );
    expect(['FORBIDDEN', 'NOT_FOUND']).toContain(errorCode(hidden));

    // verifyEmail: a wrong token refused (400 / INVALID) unless the signup named a failure page.
    const username = uniqueId('signup');
    const email = `${username}@example.org`;
    const signedUp = await request(t.app)
      .post('/users/signup/')
      .send({ username, name: 'S', email, password: 'signup-password' });
    expect(signedUp.status).toBe(201);
    const wrong = '1'.repeat(40);
    expect((await request(t.app).get(`/users/${username}/verify/${wrong}/`)).status).toBe(400);
    const VERIFY = `mutation($u: String!, $t: String!) { verifyEmail(username: $u, token: $t) { id verified redirectTo } }`;
    expect(errorCode(await gql(t, undefined, VERIFY, { u: username, t: wrong }))).toBe('INVALID');
    const token = /\/verify\/([0-9a-f]{40})\//.exec(t.mailer.lastTo(email)?.text ?? '')?.[1];
    expect(dataOf(await gql(t, undefined, VERIFY, { u: username, t: token })).verifyEmail).toEqual({
      id: username,
      verified: true,
      redirectTo: null,
    });

    // Single sign-on is not configured here: both edges refuse alike.
    const signup = await request(t.app).get('/users/signup/?redirect_uri=http://localhost/cb');
    expect(signup.status).toBe(405);
    const url = await gql(t, undefined, `{ oidcSignupUrl(redirectUri: "http://localhost/cb") }`);
    expect(errorCode(url)).toBe('NOT_ALLOWED');
    expect(url.errors?.[0].message).toBe(signup.body.message);
  });

  it('User.orgSources lists the sources of the user’s orgs, as REST /users/:user/orgs/sources/', async () => {
    const rest = await restGet(`/users/${priv.owner.username}/orgs/sources/`, stranger.auth);
    const query = `query($u: String!) { user(username: $u) { orgSources { totalCount items { id } } } }`;
    const page = dataOf(await gql(t, stranger.auth, query, { u: priv.owner.username })).user
      .orgSources;
    expect(ids(page.items)).toEqual(ids(rest));
    expect(ids(page.items)).not.toContain(priv.id);
  });
});
