import type { EntityManager } from 'typeorm';
import {
  HEAD,
  OrganizationEntity,
  RepositoryEntity,
  RepositoryVersionEntity,
  UserEntity,
  type MemberRole,
} from '../db/entities';
import { hydrate, type Raw } from './hydrate';
import { preparedQuery } from './prepared';

/** What a path names: an owner, and maybe one of its repositories at a version. */
export interface PathKey {
  owner: { org: string } | { username: string } | { userId: string };
  /** A source's or collection's id; none for the owner alone. */
  repo?: string;
  /** HEAD (the default), `latest` (the newest released version) or a version id. */
  version?: string;
  /** A signed-in reader, whose role in the owning org comes along. */
  viewerId: string | null;
}

/** What a path found; null where it names nothing. The caller decides what may be seen. */
export interface PathRow {
  org: OrganizationEntity | null;
  user: UserEntity | null;
  /** The reader's role in the owning org. */
  role: MemberRole | null;
  repo: RepositoryEntity | null;
  version: RepositoryVersionEntity | null;
}

export interface PathRaw {
  org: Raw;
  user: Raw;
  role: MemberRole | null;
  repo: Raw;
  version: Raw;
}

/**
 * The common table expressions `o`, `u`, `r` and `v` (owner, repository, version) of a path and
 * the columns that answer them (`org`, `user`, `role`, `repo`, `version`): the one statement
 * every path is resolved by, alone or as the first part of a larger read (a concept detail).
 * `p` adds a parameter and names its placeholder.
 */
export function pathQuery(
  key: PathKey,
  p: (value: unknown) => string,
): { ctes: string; columns: string } {
  const repo = key.repo === undefined ? 'false' : `mnemonic = ${p(key.repo)}`;
  const owner =
    'org' in key.owner
      ? `o AS (SELECT * FROM organizations WHERE mnemonic = ${p(key.owner.org)}),
         u AS (SELECT * FROM users WHERE false),
         r AS (SELECT * FROM repositories WHERE owner_org_id = (SELECT id FROM o) AND ${repo})`
      : `o AS (SELECT * FROM organizations WHERE false),
         u AS (SELECT * FROM users WHERE ${
           'username' in key.owner
             ? `username = ${p(key.owner.username)}`
             : `id = ${p(key.owner.userId)}`
         }),
         r AS (SELECT * FROM repositories WHERE owner_user_id = (SELECT id FROM u) AND ${repo})`;
  const version =
    key.version === 'latest'
      ? `SELECT * FROM repository_versions WHERE repository_id = (SELECT id FROM r) AND released
         ORDER BY created_at DESC, id DESC LIMIT 1`
      : `SELECT * FROM repository_versions
         WHERE repository_id = (SELECT id FROM r) AND mnemonic = ${p(key.version ?? HEAD)}`;
  const role =
    key.viewerId === null
      ? 'NULL::text'
      : `(SELECT role FROM org_memberships
          WHERE org_id = (SELECT id FROM o) AND user_id = ${p(key.viewerId)})`;
  return {
    ctes: `${owner}, v AS (${version})`,
    columns: `(SELECT to_json(o) FROM o) AS org, (SELECT to_json(u) FROM u) AS "user",
      ${role} AS role, (SELECT to_json(r) FROM r) AS repo, (SELECT to_json(v) FROM v) AS version`,
  };
}

/** The entities of a row that `pathQuery`'s columns answered. */
export function pathRowOf(em: EntityManager, raw: PathRaw): PathRow {
  return {
    org: hydrate(em, OrganizationEntity, raw.org),
    user: hydrate(em, UserEntity, raw.user),
    role: raw.role,
    repo: hydrate(em, RepositoryEntity, raw.repo),
    version: hydrate(em, RepositoryVersionEntity, raw.version),
  };
}

/** Paths (`/orgs/:org/sources/:source/:version/`…) resolved in one prepared statement. */
export class PathRepository {
  constructor(private readonly em: EntityManager) {}

  async resolve(key: PathKey): Promise<PathRow> {
    const params: unknown[] = [];
    const { ctes, columns } = pathQuery(key, (value) => `$${params.push(value)}`);
    const rows = await preparedQuery<PathRaw>(this.em, `WITH ${ctes} SELECT ${columns}`, params);
    return pathRowOf(this.em, rows[0]);
  }
}
