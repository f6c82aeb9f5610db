import type { Request } from 'express';
import type { CascadeInput, Services } from '../../src/services';
import { bodyOf, ok, param, queryString, statusOf } from '../http';
import { cascadeBundle, cloneResponse } from './cascade.mapper';
import { repoOf } from './owners';
import { handlers } from './table';

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
 * under collections; §4.3: `…/sources/:source/concepts/$clone/`. The web client's `uri` (the
 * repository it browses) names nothing the path does not.
 */
export function cascadeHandlers(services: Services) {
  return handlers({
    cascade: async (req, ctx) => {
      const result = await services.cascade.cascade(
        ctx,
        repoOf(req),
        param(req, 'concept'),
        inputOf(req),
      );
      return ok(cascadeBundle(result, req.originalUrl));
    },
    // spec operations §4.3: copies concepts into a source (its HEAD).
    clone: async (req, ctx) => {
      const result = await services.clone.clone(ctx, repoOf(req), bodyOf(req));
      return ok(cloneResponse(result, statusOf));
    },
  });
}

function inputOf(req: Request): CascadeInput {
  return Object.fromEntries(PARAMETERS.map((name) => [name, queryString(req, name)]));
}
