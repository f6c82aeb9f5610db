import type { Services } from '../../src/services';
import { ok, queryString } from '../http';
import { handlers } from './table';
import { resolutionResult } from './url-registry.mapper';

/**
 * spec operations §4.4: `POST /$resolveReference/` with one reference (a string or an object) or
 * a list; a list answers a list of results, one reference one result.
 */
export function referenceHandlers(services: Services) {
  return handlers({
    resolve: async (req, ctx) => {
      const { many, results } = await services.resolver.resolveRequest(
        ctx,
        req.body,
        queryString(req, 'namespace'),
      );
      const timestamp = new Date().toISOString();
      const body = results.map((r) => resolutionResult(r, timestamp));
      return ok(many ? body : body[0]);
    },
  });
}
