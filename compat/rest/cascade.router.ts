import { Router, type Request } from 'express';
import type { CascadeInput, RepoRef, Services } from '../../src/services';
import { bodyOf, ok, onlyMethods, param, queryString, route, statusOf } from '../http';
import { cascadeBundle, cloneResponse } from './cascade.mapper';
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
 * under collections; §4.3: `…/sources/:source/concepts/$clone/`. Mounted before the concept routes, whose `:conceptVersion/` would take
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
  // spec operations §4.3: copies concepts into a source (its HEAD).
  for (const owner of OWNER_PREFIXES) {
    router
      .route(`${owner.prefix}/sources/:source/concepts/$clone/`)
      .post(
        route(async (req, ctx) => {
          const result = await services.clone.clone(
            ctx,
            { owner: owner.ref(req), kind: 'source', id: param(req, 'source') },
            bodyOf(req),
          );
          return ok(cloneResponse(result, statusOf));
        }),
      )
      .all(onlyMethods('POST'));
  }
  return router;
}

function inputOf(req: Request): CascadeInput {
  return Object.fromEntries(PARAMETERS.map((name) => [name, queryString(req, name)]));
}
