import type { Request } from 'express';
import type { OwnerRef } from '../../src/services';
import { param } from '../http';

/** The three `{owner}` path prefixes of the spec (`/orgs/:org`, `/users/:user`, `/user`). */
export const OWNER_PREFIXES: Array<{ prefix: string; ref: (req: Request) => OwnerRef }> = [
  { prefix: '/orgs/:org', ref: (req) => ({ type: 'org', id: param(req, 'org') }) },
  { prefix: '/users/:user', ref: (req) => ({ type: 'user', username: param(req, 'user') }) },
  { prefix: '/user', ref: () => ({ type: 'self' }) },
];
