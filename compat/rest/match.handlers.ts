import type { Request } from 'express';
import type { MatchOptions, Services } from '../../src/services';
import { AppError } from '../../src/errors';
import { flag, ok, queryString } from '../http';
import { handlers } from './table';

/** spec operations §4.5: `POST /concepts/$match/` (GET is not supported: 405). */
export function matchHandlers(services: Services) {
  return handlers({
    match: async (req, ctx) => ok(await services.matches.match(ctx, matchOptions(req), req.body)),
  });
}

function matchOptions(req: Request): MatchOptions {
  const int = (name: string): number | undefined => {
    const value = queryString(req, name);
    if (value === undefined || value.trim() === '') return undefined;
    if (!/^-?\d+$/.test(value.trim())) throw AppError.field(name, `${name} must be an integer.`);
    return Number(value);
  };
  const bool = (name: string): boolean | undefined => {
    const value = queryString(req, name);
    return value === undefined ? undefined : flag(value);
  };
  return {
    verbose: bool('verbose'),
    brief: bool('brief'),
    limit: int('limit'),
    offset: int('offset'),
    page: int('page'),
    includeRetired: bool('includeRetired'),
    bestMatch: bool('bestMatch'),
    semantic: bool('semantic'),
    numCandidates: int('numCandidates'),
    kNearest: int('kNearest'),
    encoderModel: queryString(req, 'encoder_model'),
    reranker: bool('reranker'),
  };
}
