import request from 'supertest';
import { openApiDocument, openApiPath } from '../../compat/openapi';
import { restRoutes } from '../../compat/rest';
import { conceptInput, mappingInput } from '../../src/services';
import { createTestApp, uniqueId, type TestApp } from '../factories';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[]; groups?: Map<string, { stack: Layer[] }> };
}

/** Every route the running app registered: `GET /orgs/:org/`, … (HEAD is GET's). */
function appRoutes(): string[] {
  const found: string[] = [];
  const walk = (stack: Layer[]): void => {
    for (const layer of stack) {
      if (layer.route) {
        for (const method of Object.keys(layer.route.methods)) {
          if (method !== '_all') found.push(`${method.toUpperCase()} ${layer.route.path}`);
        }
      } else if (layer.handle?.stack) walk(layer.handle.stack);
      // The REST table's groups of paths (`mountTable`).
      else if (layer.handle?.groups) {
        for (const router of layer.handle.groups.values()) walk(router.stack);
      }
    }
  };
  walk((t.app as unknown as { router: { stack: Layer[] } }).router.stack);
  return found;
}

interface JsonSchema {
  type?: string;
  description?: string;
  properties?: Record<string, unknown>;
  required?: string[];
}

/** The other edges and the documents themselves, which the REST document does not describe. */
const NOT_REST =
  /^\w+ \/(livez|readyz|graphql|fhir|openapi\.json|reference|$)|\/(CodeSystem|ValueSet|ConceptMap)\b/;

describe('GET /openapi.json', () => {
  let document: {
    openapi: string;
    info: { version: string };
    paths: Record<string, Record<string, { summary: string; security: unknown[] }>>;
    components: { schemas: Record<string, { type?: string; properties?: object }> };
  };
  beforeAll(async () => {
    const res = await request(t.app).get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/json');
    document = res.body as typeof document;
  });

  test('is OpenAPI 3.1 of this API version', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe('2.0.0');
  });

  test('describes every REST route the app registered, and nothing else', () => {
    const described = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const served = appRoutes()
      .filter((route) => !NOT_REST.test(route))
      .map((route) => {
        const [method, path] = route.split(' ');
        return `${method} ${openApiPath(path)}`;
      });
    expect(served.length).toBeGreaterThan(100);
    expect([...new Set(served)].sort()).toEqual([...described].sort());
  });

  test('is generated from the table: a row added to the table is described', () => {
    const rows = restRoutes(t.services);
    const extra = { ...rows[0], path: '/not-documented/' };
    const paths = Object.keys((openApiDocument(rows) as { paths: Record<string, unknown> }).paths);
    expect(paths).not.toContain('/not-documented/');
    expect(Object.keys((openApiDocument([...rows, extra]) as { paths: object }).paths)).toContain(
      '/not-documented/',
    );
  });

  test('states who may call each operation, as the table does', () => {
    const rows = restRoutes(t.services);
    for (const row of rows) {
      const operation = document.paths[openApiPath(row.path)][row.method.toLowerCase()];
      expect(operation.summary).toBe(row.summary);
      expect(operation.security).toEqual(
        row.access === 'public' ? [{}, { token: [] }] : [{ token: [] }],
      );
    }
  });

  test("describes a list's query parameters with the schema the list checks them with", async () => {
    const list = document.paths['/orgs/{org}/sources/'].get as unknown as {
      parameters: Array<{ name: string; in: string; schema: { pattern?: string } }>;
    };
    const limit = list.parameters.find((p) => p.name === 'limit');
    expect(limit).toMatchObject({ in: 'query', schema: { type: 'string' } });
    const pattern = new RegExp(limit!.schema.pattern!);
    expect(pattern.test('25')).toBe(true);
    expect(pattern.test('-1')).toBe(false);
    const refused = await request(t.app).get('/orgs/?limit=-1');
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual({
      limit: ["'limit' must be a whole number of at least 0."],
    });
    const page = await request(t.app).get('/orgs/?page=0');
    expect(page.status).toBe(400);
    expect(page.body.errors).toEqual({ page: ["'page' must be a whole number of at least 1."] });
  });

  test('every POST, PUT and PATCH says what body it takes: a schema, words, a file or none', () => {
    const writes = restRoutes(t.services).filter(
      (row) => row.method !== 'GET' && row.method !== 'DELETE',
    );
    expect(writes.length).toBeGreaterThan(100);
    const undescribed = writes
      .filter(
        (row) => [row.input, row.inputNote, row.noBody, row.body].filter(Boolean).length !== 1,
      )
      .map((row) => `${row.method} ${row.path}`);
    expect(undescribed).toEqual([]);
    for (const row of writes) {
      const operation = document.paths[openApiPath(row.path)][
        row.method.toLowerCase()
      ] as unknown as {
        requestBody?: { content: Record<string, { schema: JsonSchema }> };
      };
      if (row.noBody) {
        expect(operation.requestBody).toBeUndefined();
        continue;
      }
      expect(operation.requestBody).toBeDefined();
      if (!row.input) continue;
      const schema = operation.requestBody!.content['application/json'].schema;
      // Rendered as an object whose top-level names are the wire's snake_case.
      expect(Object.keys(schema.properties ?? {}).length).toBeGreaterThan(0);
      for (const name of [...Object.keys(schema.properties!), ...(schema.required ?? [])]) {
        expect(name).toMatch(/^[a-z][a-z0-9_]*$/);
      }
    }
  });

  test("describes a body with the service's own schema, its top-level names in snake_case", () => {
    const rows = restRoutes(t.services);
    const row = (method: string, path: string) =>
      rows.find((r) => r.method === method && r.path === path)!;
    // The same schema objects the services parse with, not copies.
    expect(row('POST', '/orgs/:org/sources/:source/concepts/').input).toBe(conceptInput.create);
    expect(row('POST', '/orgs/:org/sources/:source/mappings/').input).toBe(mappingInput.create);

    const bodyOf = (path: string) =>
      (
        document.paths[path].post as unknown as {
          requestBody: { required: boolean; content: Record<string, { schema: JsonSchema }> };
        }
      ).requestBody;
    const concept = bodyOf('/orgs/{org}/sources/{source}/concepts/');
    expect(concept.required).toBe(true);
    const conceptSchema = concept.content['application/json'].schema;
    expect(Object.keys(conceptSchema.properties!)).toEqual(
      expect.arrayContaining(['concept_class', 'names', 'datatype', 'parent_concept_urls', 'id']),
    );
    expect([...conceptSchema.required!].sort()).toEqual(['concept_class', 'names']);
    // Nested names stay as the schema takes them (OCL's snake_case).
    expect(conceptSchema.properties!.names).toMatchObject({
      type: 'array',
      minItems: 1,
      items: { required: ['name', 'locale'] },
    });
    expect(
      Object.keys((conceptSchema.properties!.names as { items: JsonSchema }).items.properties!),
    ).toContain('locale_preferred');

    const mapping = bodyOf('/orgs/{org}/sources/{source}/mappings/').content['application/json'];
    expect(Object.keys(mapping.schema.properties!)).toEqual(
      expect.arrayContaining(['map_type', 'from_concept_url', 'to_concept_url', 'sort_weight']),
    );
    expect(mapping.schema.required).toEqual(['map_type']);

    // A body read without a schema is described in words.
    const extra = document.paths['/orgs/{org}/extras/{name}/'].put as unknown as {
      requestBody: { content: Record<string, { schema: JsonSchema }> };
    };
    expect(extra.requestBody.content['application/json'].schema.description).toContain('<name>');

    // A bulk import's file: sent, uploaded or named by file_url.
    const upload = bodyOf('/importers/bulk-import/').content;
    expect(Object.keys(upload)).toEqual(
      expect.arrayContaining(['application/octet-stream', 'multipart/form-data', 'text/csv']),
    );
    expect(Object.keys(upload['multipart/form-data'].schema.properties!)).toEqual(
      expect.arrayContaining(['file', 'file_url', 'format', 'update_if_exists']),
    );
  });

  test('what the document says is required is what the service refuses without', async () => {
    const org = uniqueId('org');
    const made = await request(t.app)
      .post('/orgs/')
      .set('Authorization', t.admin)
      .send({ id: org, name: org });
    expect(made.status).toBe(201);
    const source = await request(t.app)
      .post(`/orgs/${org}/sources/`)
      .set('Authorization', t.admin)
      .send({ id: 'Src', name: 'Src' });
    expect(source.status).toBe(201);
    const refused = await request(t.app)
      .post(`/orgs/${org}/sources/Src/concepts/`)
      .set('Authorization', t.admin)
      .send({ id: 'C1', datatype: 'N/A' });
    expect(refused.status).toBe(400);
    expect(Object.keys(refused.body.errors as object).sort()).toEqual(['concept_class', 'names']);
    const concepts = await request(t.app)
      .get(`/orgs/${org}/sources/Src/concepts/`)
      .set('Authorization', t.admin);
    expect(concepts.body).toEqual([]);
  });

  test('describes the error body with a JSON schema', () => {
    expect(document.components.schemas.Error).toMatchObject({
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' } },
    });
  });
});

describe('the API reference and the index', () => {
  test('GET /reference/ is a page that loads Swagger UI from this server', async () => {
    const res = await request(t.app).get('/reference/').set('Accept', 'text/html');
    expect(res.status).toBe(200);
    expect(res.type).toBe('text/html');
    expect(res.text).toContain('/openapi.json');
    const scripts = [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)].map(([, url]) => url);
    expect(scripts.length).toBeGreaterThan(0);
    for (const url of scripts) {
      expect(url.startsWith('/')).toBe(true);
      const asset = await request(t.app).get(url);
      expect(asset.status).toBe(200);
    }
  });

  test('GET / answers JSON links when asked for JSON', async () => {
    const res = await request(t.app).get('/').set('Accept', 'application/json');
    expect(res.status).toBe(200);
    expect(res.body.links).toMatchObject({
      openapi: '/openapi.json',
      reference: '/reference/',
      graphql: '/graphql',
      fhirMetadata: '/fhir/metadata',
    });
  });

  test('GET / answers a page linking the reference, GraphQL and FHIR metadata otherwise', async () => {
    const res = await request(t.app).get('/').set('Accept', 'text/html');
    expect(res.status).toBe(200);
    expect(res.type).toBe('text/html');
    for (const link of ['/reference/', '/openapi.json', '/graphql', '/fhir/metadata']) {
      expect(res.text).toContain(`href="${link}"`);
    }
    const metadata = await request(t.app).get('/fhir/metadata');
    expect(metadata.status).toBe(200);
  });
});
