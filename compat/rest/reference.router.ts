import { Router } from 'express';
import type { Services } from '../../src/services';
import { ok, queryString, route } from '../http';
import { resolutionResult } from './url-registry.mapper';

/**
 * spec operations §4.4: `POST /$resolveReference/` with one reference (a string or an object) or
 * a list; a list answers a list of results, one reference one result.
 */
export function referenceRouter(services: Services): Router {
  const router = Router();
  const resolve = route(async (req, ctx) => {
    const { many, results } = await services.resolver.resolveRequest(
      ctx,
      req.body,
      queryString(req, 'namespace'),
    );
    const timestamp = new Date().toISOString();
    const body = results.map((r) => resolutionResult(r, timestamp));
    return ok(many ? body : body[0]);
  });
  // The OCL path ends with a slash; clients also send it without one.
  router.post('/$resolveReference/', resolve);
  router.post('/$resolveReference', resolve);
  return router;
}
