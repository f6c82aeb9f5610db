import { Router, type RequestHandler } from 'express';
import type { z } from 'zod';
import { cacheable, onlyMethods, route, type Handler } from '../http';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Who may call a route, as spec core §5 says (the services enforce it; the table documents it
 * and the OpenAPI document's `security` comes from it):
 * - `public`: anyone; private content stays hidden from callers who may not see it;
 * - `signed-in`: credentials required; the service checks the caller's rights on what it touches;
 * - `admin`: an administrator (superuser) only.
 */
export type Access = 'public' | 'signed-in' | 'admin';

export interface RouteRow {
  method: Method;
  /** Express path syntax, written out literally (no prefixes built in loops). */
  path: string;
  handler: Handler;
  /**
   * Its GraphQL twin (issue 28 parity): the field answering the same with the same parameters and
   * rules through the same service call, as `Type.field` (`Query.concepts`,
   * `Mutation.updateConcept`, `Concept.names`). test/graphql/parity.test.ts checks it exists.
   */
  graphql?: string;
  /** Why a route has no GraphQL twin: it is about the transport only (a probe, file bytes). */
  transportOnly?: string;
  /**
   * A read of stored content whose answer each process may keep for the caller until content
   * changes (`AnswerCache`, compat/http/answer-cache.ts).
   */
  cached?: true;
  access: Access;
  /** One line for the API reference. */
  summary: string;
  /** The body a route reads before its handler (bulk import: the file, not JSON). */
  body?: RequestHandler;
  /** The query parameters the route reads with a schema (lists: `LIST_QUERY`). */
  query?: z.ZodObject;
  /**
   * The schema the service validates this route's JSON body with (one the service exports, e.g.
   * `conceptInput.create`), for the API reference only: the table never parses a body with it.
   * It takes the body as `bodyOf` hands it over, its top-level keys in camelCase.
   */
  input?: z.ZodType;
  /** A JSON body the service reads without a schema (it has its own checks), in words. */
  inputNote?: string;
  /** A POST/PUT/PATCH that reads no body: an action such as reactivate or a refresh. */
  noBody?: true;
}

/** Names a group of handlers and checks their types; the table refers to them by name. */
export function handlers<T extends Record<string, Handler>>(group: T): T {
  return group;
}

/** `/orgs/:org/sources/` → ['orgs', ':', 'sources']: a path's shape, parameter names dropped. */
export function shapeOf(path: string): string[] {
  return segmentsOf(path).map((s) => (s.startsWith(':') ? ':' : s.toLowerCase()));
}

function segmentsOf(path: string): string[] {
  return path.split('/').filter((s) => s.length > 0);
}

/**
 * Literal segments before parameters, compared left to right: of two paths that both match a
 * request, the one with a literal where the other has a parameter comes first (and so answers).
 */
export function bySpecificity(a: string, b: string): number {
  const x = shapeOf(a);
  const y = shapeOf(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] === y[i]) continue;
    if (x[i] === ':') return 1;
    if (y[i] === ':') return -1;
    return x[i] < y[i] ? -1 : 1;
  }
  return x.length - y.length;
}

/**
 * Refuses a table no request could be routed by deterministically: a method twice on one path,
 * two spellings of one shape (`/users/:user/` and `/users/:username/` would match the same
 * requests, and which answered would depend on order), or a path starting with a parameter.
 */
export function checkTable(rows: readonly RouteRow[]): void {
  const seen = new Set<string>();
  const spelling = new Map<string, string>();
  for (const row of rows) {
    const key = `${row.method} ${row.path}`;
    if (seen.has(key)) throw new Error(`The REST route table has ${key} twice.`);
    seen.add(key);
    const shape = shapeOf(row.path).join('/');
    const other = spelling.get(shape);
    if (other !== undefined && other !== row.path) {
      throw new Error(`The REST paths ${other} and ${row.path} match the same requests.`);
    }
    spelling.set(shape, row.path);
    // Requests are matched within the group of their first segment (`mountTable`).
    if (shapeOf(row.path)[0] === ':') {
      throw new Error(`The REST path ${row.path} starts with a parameter.`);
    }
  }
}

/** The table's paths, most specific first, each with its rows. */
export function pathsOf(rows: readonly RouteRow[]): Array<{ path: string; rows: RouteRow[] }> {
  const byPath = new Map<string, RouteRow[]>();
  for (const row of rows) byPath.set(row.path, [...(byPath.get(row.path) ?? []), row]);
  return [...byPath.keys()].sort(bySpecificity).map((path) => ({ path, rows: byPath.get(path)! }));
}

/**
 * The one place REST routes are registered: each path once, most specific first, with its
 * methods and a 405 naming them (`Allow`) for any other method. Because every path answers every
 * method, a request never falls through to a less specific path.
 *
 * An Express router tries its paths one after the other: with the table's 342 paths in one
 * router, a request for one of the last (`/version/`) paid for matching all the others, 0.25 ms
 * of CPU. So the paths are grouped by what every request they match shares, their first segment
 * (a literal, `checkTable`) and their number of segments, and a request is matched against its
 * group's few paths only, in the same order.
 */
export function mountTable(rows: readonly RouteRow[]): TableHandler {
  checkTable(rows);
  const groups = new Map<string, Router>();
  for (const { path, rows: methods } of pathsOf(rows)) {
    const key = groupOf(path);
    let router = groups.get(key);
    if (!router) {
      router = Router();
      groups.set(key, router);
    }
    const at = router.route(path);
    for (const row of methods) {
      const handle = route(row.handler);
      const chain = [...(row.body ? [row.body] : []), ...(row.cached ? [cacheable] : []), handle];
      switch (row.method) {
        case 'GET':
          at.get(chain);
          break;
        case 'POST':
          at.post(chain);
          break;
        case 'PUT':
          at.put(chain);
          break;
        case 'PATCH':
          at.patch(chain);
          break;
        case 'DELETE':
          at.delete(chain);
          break;
      }
    }
    at.all(onlyMethods(...methods.map((row) => row.method)));
  }
  const handler: RequestHandler = (req, res, next) => {
    const group = groups.get(groupOf(req.path));
    if (group) group(req, res, next);
    else next();
  };
  return Object.assign(handler, { groups });
}

/** The table mounted: a request handler, and its groups of paths (for whoever inspects it). */
export interface TableHandler extends RequestHandler {
  readonly groups: ReadonlyMap<string, Router>;
}

/**
 * The group of a path or of a request's path: its number of segments and its first one (as
 * Express compares paths: whatever the case, with or without the last slash).
 */
function groupOf(path: string): string {
  const segments = segmentsOf(path);
  return `${segments.length} ${segments[0]?.toLowerCase() ?? ''}`;
}
