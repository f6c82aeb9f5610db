import request from 'supertest';
import { openApiDocument, openApiPath } from '../../compat/openapi';
import { restRoutes } from '../../compat/rest';
import { createTestApp, type TestApp } from '../factories';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
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
    }
  };
  walk((t.app as unknown as { router: { stack: Layer[] } }).router.stack);
  return found;
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
