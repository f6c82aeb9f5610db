import { Router, type Request } from 'express';
import type { CascadeInput, RepoRef, Services } from '../../src/services';
import { ok, onlyMethods, param, queryString, route } from '../http';
import { cascadeBundle } from './cascade.mapper';
import { OWNER_PREFIXES } from './owners';

/** The parameters of spec operations §4.2 (and the singular spellings its examples use). */
const PARAMETERS = [
  'mapTypes',
  'mapType',
  'excludeMapTypes',
  'excludeMapType',
  'returnMapTypes',
  'returnMapType',
  'method',
  'cascadeHierarchy',
  'cascadeMappings',
  'cascadeLevels',
  'reverse',
  'view',
  'omitIfExistsIn',
  'equivalencyMapType',
  'includeMappings',
  'includeRetired',
];

/**
 * spec operations §4.2: `…/sources/:source/[:version/]concepts/:concept/$cascade/` and the same
 * under collections. Mounted before the concept routes, whose `:conceptVersion/` would take
 * `$cascade`. The web client's `uri` (the repository it browses) names nothing the path does not.
 */
export function cascadeRouter(services: Services): Router {
  const router = Router();
  for (const owner of OWNER_PREFIXES) {
    for (const kind of ['source', 'collection'] as const) {
      const base = `${owner.prefix}/${kind}s/:repo`;
      for (const path of [`${base}/concepts/:concept/`, `${base}/:version/concepts/:concept/`]) {
        router
          .route(`${path}$cascade/`)
          .get(
            route(async (req, ctx) => {
              const ref: RepoRef = {
                owner: owner.ref(req),
                kind,
                id: param(req, 'repo'),
                version: req.params.version === undefined ? undefined : param(req, 'version'),
              };
              const result = await services.cascade.cascade(
                ctx,
                ref,
                param(req, 'concept'),
                inputOf(req),
              );
              return ok(cascadeBundle(result, req.originalUrl));
            }),
          )
          .all(onlyMethods('GET'));
      }
    }
  }
  return router;
}

function inputOf(req: Request): CascadeInput {
  return Object.fromEntries(PARAMETERS.map((name) => [name, queryString(req, name)]));
}
