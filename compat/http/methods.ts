import type { RequestHandler, Router } from 'express';
import { match } from 'path-to-regexp';
import { errorBody } from './errors';

/** 405 for a static path that a parameter route would otherwise take (e.g. `/users/login/`). */
export function onlyMethods(...allowed: string[]): RequestHandler {
  const list = [...allowed, ...(allowed.includes('GET') ? ['HEAD'] : [])].sort().join(', ');
  return (req, res) => {
    res.setHeader('Allow', list);
    res
      .status(405)
      .json(errorBody(405, `${req.method} is not allowed on ${req.path}; allowed: ${list}.`));
  };
}

interface RouteEntry {
  matches: (path: string) => boolean;
  methods: string[];
}

/**
 * 405 with an `Allow` header for a path some route serves, asked with a method none of them
 * serves (spec core §7: 404 is only for what does not exist). Mount after the routers.
 */
export function methodNotAllowed(routers: Router[]): RequestHandler {
  let table: RouteEntry[] | undefined;
  return (req, res, next) => {
    table ??= routers.flatMap((router) => routesOf(router as unknown as { stack?: LayerLike[] }));
    const allowed = new Set<string>();
    for (const route of table) {
      if (route.matches(req.path)) route.methods.forEach((m) => allowed.add(m));
    }
    if (allowed.size === 0) {
      next();
      return;
    }
    if (allowed.has('GET')) allowed.add('HEAD');
    const list = [...allowed].sort().join(', ');
    res.setHeader('Allow', list);
    res
      .status(405)
      .json(errorBody(405, `${req.method} is not allowed on ${req.path}; allowed: ${list}.`));
  };
}

interface LayerLike {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: LayerLike[] };
}

function routesOf(router: { stack?: LayerLike[] }): RouteEntry[] {
  return (router.stack ?? []).flatMap((layer): RouteEntry[] => {
    if (layer.route) {
      const test = match(layer.route.path, { decode: false, end: true, sensitive: false });
      const methods = Object.keys(layer.route.methods)
        .filter((m) => m !== '_all')
        .map((m) => m.toUpperCase());
      return [{ matches: (path) => test(path) !== false, methods }];
    }
    return layer.handle?.stack ? routesOf(layer.handle) : [];
  });
}
