import type { Request } from 'express';
import type { OwnerRef, RepoRef } from '../../src/services';
import { param } from '../http';

/**
 * The owner a path names, read from its parameters: `/orgs/:org/…` an org, `/users/:user/…` a
 * user, `/user/…` (no owner parameter) the signed-in user. The route table spells each of the
 * three prefixes out; handlers stay the same for all of them.
 */
export function ownerOf(req: Request): OwnerRef {
  if (req.params.org !== undefined) return { type: 'org', id: param(req, 'org') };
  if (req.params.user !== undefined) return { type: 'user', username: param(req, 'user') };
  return { type: 'self' };
}

/**
 * The source (`:source`) or collection (`:collection`) a path names, at its `:version` when the
 * path has one (HEAD otherwise), or at `version` when given.
 */
export function repoOf(req: Request, version?: string): RepoRef {
  const isSource = req.params.source !== undefined;
  return {
    owner: ownerOf(req),
    kind: isSource ? 'source' : 'collection',
    id: param(req, isSource ? 'source' : 'collection'),
    version: version ?? (req.params.version === undefined ? undefined : param(req, 'version')),
  };
}

/** An optional path parameter (present in some of a handler's paths only). */
export function optionalParam(req: Request, name: string): string | undefined {
  return req.params[name] === undefined ? undefined : param(req, name);
}
