import express from 'express';
import request from 'supertest';
import { restRouter, restRoutes, type RouteRow } from '../../compat/rest';
import { bySpecificity, checkTable, shapeOf } from '../../compat/rest/table';
import { ok } from '../../compat/http';
import { attachContext } from '../../src/context';
import { createTestApp, type TestApp } from '../factories';

let t: TestApp;
let rows: RouteRow[];
beforeAll(async () => {
  t = await createTestApp();
  rows = restRoutes(t.services);
});
afterAll(async () => t.close());

/** The table mounted on a bare app, each handler answering which row it is. */
function echoApp(table: RouteRow[]): express.Express {
  const app = express();
  app.use(attachContext(t.services));
  app.use(
    restRouter(
      t.services,
      table.map((row) => ({ ...row, handler: async () => ok({ path: row.path }) })),
    ),
  );
  return app;
}

/** A request path for a pattern: each parameter replaced by a sample value. */
const sample = (path: string): string =>
  path.replace(/:([A-Za-z]+)/g, (_, name: string) => `x-${name}`);

/**
 * Paths from the endpoint tables of spec core §4 and operations §4, in its `{owner}` forms
 * spelled out with `/orgs/:org` (the other owner forms are checked below).
 */
const SPEC_PATHS: Array<[string, string]> = [
  ['GET', '/users/:user/'],
  ['GET', '/user/'],
  ['POST', '/user/'],
  ['GET', '/users/'],
  ['POST', '/users/'],
  ['POST', '/users/signup/'],
  ['GET', '/user/orgs/'],
  ['GET', '/users/:user/orgs/'],
  ['POST', '/users/login/'],
  ['GET', '/orgs/:org/'],
  ['GET', '/orgs/'],
  ['POST', '/orgs/'],
  ['POST', '/orgs/:org/'],
  ['GET', '/orgs/:org/members/'],
  ['GET', '/orgs/:org/members/:user/'],
  ['GET', '/orgs/:org/sources/:source/concepts/:concept/'],
  ['GET', '/orgs/:org/sources/:source/:version/concepts/:concept/'],
  ['GET', '/orgs/:org/sources/:source/concepts/:concept/:conceptVersion/'],
  ['GET', '/orgs/:org/sources/:source/concepts/'],
  ['GET', '/orgs/:org/sources/:source/:version/concepts/'],
  ['GET', '/concepts/'],
  ['POST', '/orgs/:org/sources/:source/concepts/'],
  ['POST', '/orgs/:org/sources/:source/concepts/:concept/'],
  ['PUT', '/user/sources/:source/concepts/:concept/'],
  ['POST', '/orgs/:org/sources/:source/concepts/:concept/names/'],
  ['GET', '/orgs/:org/sources/:source/mappings/:mapping/'],
  ['GET', '/orgs/:org/sources/:source/:version/mappings/:mapping/'],
  ['GET', '/orgs/:org/sources/:source/concepts/:concept/mappings/'],
  ['GET', '/orgs/:org/sources/:source/mappings/'],
  ['GET', '/mappings/'],
  ['GET', '/orgs/:org/collections/:collection/'],
  ['GET', '/orgs/:org/collections/:collection/:version/'],
  ['GET', '/orgs/:org/collections/'],
  ['GET', '/users/:user/orgs/collections/'],
  ['GET', '/user/orgs/collections/'],
  ['GET', '/collections/'],
  ['POST', '/user/collections/'],
  ['POST', '/orgs/:org/collections/:collection/'],
  ['POST', '/orgs/:org/collections/:collection/versions/'],
  ['GET', '/orgs/:org/collections/:collection/:version/concepts/'],
  ['GET', '/orgs/:org/sources/:source/'],
  ['GET', '/orgs/:org/sources/'],
  ['GET', '/users/:user/orgs/sources/'],
  ['GET', '/sources/'],
  ['POST', '/orgs/:org/sources/'],
  ['GET', '/orgs/:org/sources/:source/versions/'],
  ['POST', '/orgs/:org/sources/:source/versions/'],
  ['POST', '/orgs/:org/sources/:source/:version/'],
  ['GET', '/repos/'],
  ['GET', '/orgs/:org/repos/'],
  ['GET', '/users/:user/repos/'],
  ['GET', '/user/repos/'],
  ['GET', '/orgs/:org/sources/:source/concepts/:concept/$cascade/'],
  ['POST', '/orgs/:org/sources/:source/concepts/$clone/'],
  ['POST', '/$resolveReference/'],
  ['POST', '/concepts/$match/'],
  ['POST', '/url-registry/$lookup/'],
  ['GET', '/orgs/:org/sources/:source/:version/export/'],
  ['GET', '/orgs/:org/extras/'],
  ['PUT', '/orgs/:org/sources/:source/extras/:name/'],
];

describe('the REST route table', () => {
  test('has each method once per path, and one spelling per path shape', () => {
    const keys = rows.map((row) => `${row.method} ${row.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    const spellings = new Map<string, Set<string>>();
    for (const row of rows) {
      const shape = shapeOf(row.path).join('/');
      spellings.set(shape, (spellings.get(shape) ?? new Set()).add(row.path));
    }
    expect([...spellings.values()].filter((paths) => paths.size > 1)).toEqual([]);
    expect(() => checkTable(rows)).not.toThrow();
  });

  test('refuses a table with a row twice, two spellings of one shape, or a path starting with a parameter', () => {
    const row = rows[0];
    expect(() => checkTable([row, { ...row }])).toThrow(/twice/);
    const a = { ...row, path: '/users/:user/x/' };
    const b = { ...row, path: '/users/:username/x/' };
    expect(() => checkTable([a, b])).toThrow(/match the same requests/);
    expect(() => checkTable([{ ...row, path: '/:owner/x/' }])).toThrow(/starts with a parameter/);
  });

  test('routes a request for every path to that path, whatever its case and last slash', async () => {
    const app = echoApp(rows);
    const paths = new Map(rows.map((row) => [row.path, row.method]));
    expect(paths.size).toBeGreaterThan(300);
    const misrouted: string[] = [];
    for (const [path, method] of paths) {
      const asked = sample(path);
      const [first, ...rest] = asked.slice(1).split('/');
      for (const variant of [
        asked,
        `/${first.toUpperCase()}/${rest.join('/')}`.replace(/\/$/, ''),
      ]) {
        const res = await request(app)[method.toLowerCase() as 'get'](variant);
        if ((res.body as { path?: string }).path !== path) misrouted.push(`${method} ${variant}`);
      }
    }
    expect(misrouted).toEqual([]);
  });

  test('writes every path literally: each ends with a slash and has no template left', () => {
    for (const row of rows) {
      expect(row.path).toMatch(/^\/.*\/$/);
      expect(row.path).not.toMatch(/\$\{|\/\//);
    }
  });

  test.each(SPEC_PATHS)('resolves the spec path %s %s to its own row', async (method, path) => {
    const row = rows.find((r) => r.method === method && r.path === path);
    expect(row).toBeDefined();
    const res = await request(echoApp(rows))[method.toLowerCase() as 'get'](sample(path));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ path });
  });

  test('spells out all three owner forms of an owner-scoped path', () => {
    const owned = rows.filter((r) => r.path.startsWith('/orgs/:org/sources/'));
    for (const row of owned) {
      for (const prefix of ['/users/:user', '/user']) {
        const path = row.path.replace('/orgs/:org', prefix);
        expect(rows.some((r) => r.method === row.method && r.path === path)).toBe(true);
      }
    }
  });

  test('a literal segment wins over a parameter, whatever the order of the rows', async () => {
    const cases: Array<[string, string]> = [
      ['/users/login/', '/users/login/'],
      ['/users/x-user/', '/users/:user/'],
      ['/orgs/o/sources/s/concepts/', '/orgs/:org/sources/:source/concepts/'],
      ['/orgs/o/sources/s/v1/', '/orgs/:org/sources/:source/:version/'],
      [
        '/orgs/o/sources/s/concepts/c/names/',
        '/orgs/:org/sources/:source/concepts/:concept/names/',
      ],
      ['/url-registry/$lookup/', '/url-registry/$lookup/'],
    ];
    for (const table of [rows, [...rows].reverse()]) {
      const app = echoApp(table);
      for (const [url, path] of cases) {
        const method = path.endsWith('$lookup/') ? 'post' : 'get';
        const res = await request(app)[method](url);
        expect({ url, body: res.body as unknown }).toEqual({ url, body: { path } });
      }
    }
    expect(bySpecificity('/users/login/', '/users/:user/')).toBeLessThan(0);
    expect(bySpecificity('/users/:user/', '/users/login/')).toBeGreaterThan(0);
  });

  test('answers 405 with Allow for a known path asked with another method', async () => {
    const res = await request(t.app).delete('/users/login/');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    const version = await request(t.app).patch('/orgs/o/sources/s/v1/export/');
    expect(version.status).toBe(405);
    expect(version.headers.allow).toBe('DELETE, GET, HEAD, POST');
  });

  test('is the only place the app registers REST routes', () => {
    interface Layer {
      route?: { path: string; methods: Record<string, boolean> };
      handle?: { stack?: Layer[]; groups?: Map<string, { stack: Layer[] }> };
    }
    const found: Array<{ path: string; methods: string[] }> = [];
    /** Each group of the table's paths (`mountTable`), in order. */
    const groups: string[][] = [];
    const walk = (stack: Layer[], group?: string[]): void => {
      for (const layer of stack) {
        if (layer.route) {
          const methods = Object.keys(layer.route.methods)
            .filter((m) => m !== '_all')
            .map((m) => m.toUpperCase())
            .sort();
          found.push({ path: layer.route.path, methods });
          group?.push(layer.route.path);
        } else if (layer.handle?.stack) walk(layer.handle.stack, group);
        else if (layer.handle?.groups) {
          for (const router of layer.handle.groups.values()) {
            const paths: string[] = [];
            groups.push(paths);
            walk(router.stack, paths);
          }
        }
      }
    };
    walk((t.app as unknown as { router: { stack: Layer[] } }).router.stack);
    // The other edges: probes, GraphQL, FHIR (its own table), and the API's documents.
    const otherEdges =
      /^\/(livez|readyz|graphql|fhir|openapi\.json|reference|$)|\/(CodeSystem|ValueSet|ConceptMap)\b/;
    const rest = found.filter(({ path }) => !otherEdges.test(path));
    const table = new Map<string, string[]>();
    for (const row of rows) table.set(row.path, [...(table.get(row.path) ?? []), row.method]);
    expect(rest.map(({ path }) => path).sort()).toEqual([...table.keys()].sort());
    // A request is matched within its group, most specific path first.
    for (const paths of groups) expect(paths).toEqual([...paths].sort(bySpecificity));
    for (const { path, methods } of rest) {
      expect({ path, methods }).toEqual({ path, methods: [...table.get(path)!].sort() });
    }
  });
});
