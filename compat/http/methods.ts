import type { RequestHandler } from 'express';
import { errorBody } from './errors';

/**
 * 405 with an `Allow` header for a path served with other methods (spec core §7: 404 is only for
 * what does not exist); the REST table puts one after each path's methods.
 */
export function onlyMethods(...allowed: string[]): RequestHandler {
  const list = [...allowed, ...(allowed.includes('GET') ? ['HEAD'] : [])].sort().join(', ');
  return (req, res) => {
    res.setHeader('Allow', list);
    res
      .status(405)
      .json(errorBody(405, `${req.method} is not allowed on ${req.path}; allowed: ${list}.`));
  };
}
