import DataLoader from 'dataloader';
import type { MemberRole, OrganizationEntity, UserEntity } from '../db/entities';
import type { ContentCounts, OrgCounts, Repositories, UserCounts } from '../repositories';
import type { Actor } from './actor';

/** Per-request batch loaders: one query per kind of question, however many records ask it. */
export interface Loaders {
  userById: DataLoader<string, UserEntity | null>;
  orgById: DataLoader<string, OrganizationEntity | null>;
  /** The actor's role in an org, or null. */
  actorRole: DataLoader<string, MemberRole | null>;
  userCounts: DataLoader<string, UserCounts>;
  orgCounts: DataLoader<string, OrgCounts>;
  /** Version records of a repository (HEAD included), by repository id. */
  versionCounts: DataLoader<string, number>;
  /** Active concepts and mappings as a repository version sees them, by version row id. */
  contentCounts: DataLoader<string, ContentCounts>;
  /** Versions of a concept, by concept (versioned object) id. */
  conceptVersionCounts: DataLoader<string, number>;
}

const EMPTY_USER_COUNTS: UserCounts = { orgs: 0, publicSources: 0, publicCollections: 0 };
const EMPTY_ORG_COUNTS: OrgCounts = { members: 0, publicSources: 0, publicCollections: 0 };

export function createLoaders(repos: Repositories, actor: Actor): Loaders {
  const viewerId = actor.kind === 'user' ? actor.id : null;
  const superuser = actor.kind === 'user' && actor.isSuperuser;
  return {
    userById: new DataLoader(async (ids) => {
      const byId = new Map((await repos.users.findByIds(ids)).map((u) => [u.id, u]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
    orgById: new DataLoader(async (ids) => {
      const byId = new Map((await repos.orgs.findByIds(ids)).map((o) => [o.id, o]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
    actorRole: new DataLoader(async (orgIds) => {
      if (viewerId === null) return orgIds.map(() => null);
      const roles = await repos.orgs.rolesOf(viewerId, orgIds);
      return orgIds.map((id) => roles.get(id) ?? null);
    }),
    userCounts: new DataLoader(async (ids) => {
      const counts = await repos.users.countsFor(ids, viewerId, superuser);
      return ids.map((id) => counts.get(id) ?? EMPTY_USER_COUNTS);
    }),
    orgCounts: new DataLoader(async (ids) => {
      const counts = await repos.orgs.countsFor(ids);
      return ids.map((id) => counts.get(id) ?? EMPTY_ORG_COUNTS);
    }),
    versionCounts: new DataLoader(async (ids) => {
      const counts = await repos.repos.versionCounts(ids);
      return ids.map((id) => counts.get(id) ?? 0);
    }),
    conceptVersionCounts: new DataLoader(async (ids) => {
      const counts = await repos.concepts.countVersions(ids);
      return ids.map((id) => counts.get(id) ?? 0);
    }),
    contentCounts: new DataLoader(async (ids) => {
      const counts = await repos.repos.contentCounts(ids);
      return ids.map((id) => counts.get(id) ?? { activeConcepts: 0, activeMappings: 0 });
    }),
  };
}
