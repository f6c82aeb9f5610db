import DataLoader from 'dataloader';
import type {
  ConceptEntity,
  ConceptVersionEntity,
  MappingEntity,
  MappingVersionEntity,
  MemberRole,
  OrganizationEntity,
  RepositoryEntity,
  RepositoryVersionEntity,
  UserEntity,
} from '../../db/entities';
import type {
  ConceptSortKey,
  ContentCounts,
  Slice,
  SortSpec,
  Window,
  HolderRow,
  OrgCounts,
  Repositories,
  RepositoryHead,
  UserCounts,
  VersionTotals,
} from '../../repositories';
import { viewerOf, type Actor } from './actor';

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
  /**
   * A page of a source version's plain concept list (no `q`, no filter), by `plainPageKey`: the
   * pages sibling sources ask for in one tick are read in one statement, their totals with the
   * other counts asked (`contentCounts`).
   */
  plainConceptPage: DataLoader<string, Slice<ConceptVersionEntity>>;
  /** Versions of a concept, by concept (versioned object) id. */
  conceptVersionCounts: DataLoader<string, number>;
  /** Versions of a mapping, by mapping (versioned object) id. */
  mappingVersionCounts: DataLoader<string, number>;
  /**
   * Whether a concept has children (not retired) in its source as of a change, by
   * `hierarchyKey(repositoryId, seq, code)`: one statement per source version asked about.
   */
  conceptHasChildren: DataLoader<string, boolean>;
  /**
   * The newest repository version holding a concept or mapping version, by
   * `repositoryId:validFromSeq:validToSeq` (`holdingKey`).
   */
  latestSourceVersion: DataLoader<string, string | null>;
  repositoryById: DataLoader<string, RepositoryEntity | null>;
  /** The HEAD version row of a repository, by repository id. */
  headVersion: DataLoader<string, RepositoryVersionEntity | null>;
  /**
   * A repository with its HEAD version and owner, by repository id (one statement for all three;
   * what it finds also answers `repositoryById`, `headVersion`, `orgById` and `userById`).
   */
  repositoryHead: DataLoader<string, RepositoryHead | null>;
  conceptById: DataLoader<string, ConceptEntity | null>;
  /** The current (HEAD) version of a concept, by concept id. */
  currentConceptVersion: DataLoader<string, ConceptVersionEntity | null>;
  /** The display name of a concept's current version (what a mapping end shows), by concept id. */
  currentConceptName: DataLoader<string, string | null>;
  mappingById: DataLoader<string, MappingEntity | null>;
  /**
   * Mappings of a concept held in one source as of a change: key
   * `${repositoryId}|${seq or ''}|${conceptId}|from|to` (`to` = inverse mappings).
   */
  conceptMappings: DataLoader<string, MappingVersionEntity[]>;
  /** A repository's versions (HEAD not counted) and released ones, by repository id. */
  versionTotals: DataLoader<string, VersionTotals>;
  /**
   * The repository versions holding a concept or mapping version (collections the actor may not
   * see left out): key `concept|${versionId}` or `mapping|${versionId}`.
   */
  versionHolders: DataLoader<string, HolderRow[]>;
}

/** The key of `conceptMappings`. */
export function conceptMappingsKey(
  repositoryId: string,
  seq: string | null,
  conceptId: string,
  inverse: boolean,
): string {
  return `${repositoryId}|${seq ?? ''}|${conceptId}|${inverse ? 'to' : 'from'}`;
}

function byIds<T extends { id: string }>(find: (ids: readonly string[]) => Promise<T[]>) {
  return new DataLoader<string, T | null>(async (ids) => {
    const found = new Map((await find(ids)).map((row) => [row.id, row]));
    return ids.map((id) => found.get(id) ?? null);
  });
}

const EMPTY_USER_COUNTS: UserCounts = { orgs: 0, publicSources: 0, publicCollections: 0 };
const EMPTY_ORG_COUNTS: OrgCounts = { members: 0, publicSources: 0, publicCollections: 0 };

export function createLoaders(repos: Repositories, actor: Actor): Loaders {
  const viewerId = actor.kind === 'user' ? actor.id : null;
  const superuser = actor.kind === 'user' && actor.isSuperuser;
  const loaders: Loaders = {
    userById: new DataLoader(async (ids) => {
      const byId = new Map((await repos.users.findByIds(ids)).map((u) => [u.id, u]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
    orgById: new DataLoader(async (ids) => {
      const byId = new Map((await repos.orgs.findByIds(ids)).map((o) => [o.id, o]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
    actorRole: new DataLoader(async (orgIds) => {
      if (actor.kind === 'ownerReader') {
        const { owner } = actor;
        return orgIds.map((id) => ('orgId' in owner && owner.orgId === id ? 'member' : null));
      }
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
    repositoryById: byIds((ids) => repos.repos.findByIds(ids)),
    headVersion: new DataLoader(async (ids) => {
      const heads = new Map((await repos.repos.findHeads(ids)).map((v) => [v.repositoryId, v]));
      return ids.map((id) => heads.get(id) ?? null);
    }),
    repositoryHead: new DataLoader(async (ids) => {
      const rows = await repos.repos.findRepositoryHeads(ids);
      for (const row of rows) primeRepositoryHead(loaders, row, false);
      const byId = new Map(rows.map((row) => [row.repo.id, row]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
    conceptById: byIds((ids) => repos.concepts.findConceptsByIds(ids)),
    currentConceptVersion: new DataLoader(async (ids) => {
      const current = new Map(
        (await repos.concepts.currentVersions(ids)).map((v) => [v.conceptId, v]),
      );
      return ids.map((id) => current.get(id) ?? null);
    }),
    currentConceptName: new DataLoader(async (ids) => {
      const names = await repos.concepts.currentNames(ids);
      return ids.map((id) => names.get(id) ?? null);
    }),
    mappingById: byIds((ids) => repos.mappings.findMappingsByIds(ids)),
    conceptMappings: new DataLoader(async (keys) => {
      // One statement for every (source, change, direction) asked in this tick.
      const groups = new Map<
        string,
        { repositoryId: string; seq: string | null; inverse: boolean; conceptIds: string[] }
      >();
      for (const key of keys) {
        const [repositoryId, seq, conceptId, side] = key.split('|');
        const group = `${repositoryId}|${seq}|${side}`;
        const entry = groups.get(group) ?? {
          repositoryId,
          seq: seq || null,
          inverse: side === 'to',
          conceptIds: [],
        };
        entry.conceptIds.push(conceptId);
        groups.set(group, entry);
      }
      const asked = [...groups.values()];
      const partsOf = await repos.mappings.ofConceptGroups(asked);
      const found = new Map<string, MappingVersionEntity[]>();
      asked.forEach((g, i) => {
        // Read with their versions: what the page asks next (`mappingById`) is at hand.
        for (const mapping of partsOf[i].parents) loaders.mappingById.prime(mapping.id, mapping);
        for (const row of partsOf[i].rows) {
          const conceptId = (g.inverse ? row.toConceptId : row.fromConceptId) as string;
          const key = conceptMappingsKey(g.repositoryId, g.seq, conceptId, g.inverse);
          found.set(key, [...(found.get(key) ?? []), row]);
        }
      });
      return keys.map((key) => found.get(key) ?? []);
    }),
    latestSourceVersion: new DataLoader(async (keys) => {
      const found = await repos.repos.latestVersionsHolding(keys);
      return keys.map((key) => found.get(key) ?? null);
    }),
    mappingVersionCounts: new DataLoader(async (ids) => {
      const counts = await repos.mappings.countVersions(ids);
      return ids.map((id) => counts.get(id) ?? 0);
    }),
    conceptHasChildren: new DataLoader(async (keys) => {
      const asked = new Map<
        string,
        { repositoryId: string; seq: string | null; codes: string[] }
      >();
      for (const key of keys) {
        const { repositoryId, seq, code } = JSON.parse(key) as HierarchyKey;
        const at = `${repositoryId}:${seq}`;
        const group = asked.get(at) ?? { repositoryId, seq, codes: [] };
        group.codes.push(code);
        asked.set(at, group);
      }
      const found = new Set<string>();
      for (const { repositoryId, seq, codes } of asked.values()) {
        for (const code of await repos.concepts.codesWithChildren(repositoryId, seq, codes))
          found.add(hierarchyKey(repositoryId, seq, code));
      }
      return keys.map((key) => found.has(key));
    }),
    plainConceptPage: new DataLoader(async (keys) => {
      const pages = keys.map((key) => JSON.parse(key) as PlainPageKey);
      const [rows, totals] = await Promise.all([
        repos.concepts.plainPages(
          pages.map((p) => ({
            where: { repositoryId: p.repositoryId, seq: p.seq, headSeq: p.headSeq },
            sort: p.sort,
            window: p.window,
          })),
        ),
        loaders.contentCounts.loadMany(pages.map((p) => p.versionId)),
      ]);
      return pages.map((_, i) => {
        // Read with their versions: what the page asks next (`conceptById`) is at hand.
        for (const concept of rows[i].concepts) loaders.conceptById.prime(concept.id, concept);
        const total = totals[i];
        const { rows: found, keys } = rows[i];
        return total instanceof Error ? total : { rows: found, keys, total: total.activeConcepts };
      });
    }),
    conceptVersionCounts: new DataLoader(async (ids) => {
      const counts = await repos.concepts.countVersions(ids);
      return ids.map((id) => counts.get(id) ?? 0);
    }),
    contentCounts: new DataLoader(async (ids) => {
      const counts = await repos.repos.contentCounts(ids, viewerOf(actor));
      return ids.map((id) => counts.get(id) ?? { activeConcepts: 0, activeMappings: 0 });
    }),
    versionTotals: new DataLoader(async (ids) => {
      const totals = await repos.summaries.versionTotals(ids);
      return ids.map((id) => totals.get(id) ?? { total: 0, released: 0 });
    }),
    versionHolders: new DataLoader(async (keys) => {
      // One query per kind of object asked.
      const found = new Map<string, HolderRow[]>();
      for (const object of ['concept', 'mapping'] as const) {
        const ids = keys.filter((k) => k.startsWith(`${object}|`)).map((k) => k.split('|')[1]);
        if (ids.length === 0) continue;
        const rows = await repos.summaries.holders(object, ids, viewerOf(actor));
        for (const [id, held] of rows) found.set(`${object}|${id}`, held);
      }
      return keys.map((key) => found.get(key) ?? []);
    }),
  };
  return loaders;
}

/**
 * What one statement found of a repository at HEAD, kept for the request's other questions: its
 * row, HEAD version and owner (`head`, unless the `repositoryHead` loader itself is answering).
 */
export function primeRepositoryHead(loaders: Loaders, row: RepositoryHead, head = true): void {
  if (head) loaders.repositoryHead.prime(row.repo.id, row);
  loaders.repositoryById.prime(row.repo.id, row.repo);
  loaders.headVersion.prime(row.repo.id, row.version);
  if (row.org) loaders.orgById.prime(row.org.id, row.org);
  if (row.user) loaders.userById.prime(row.user.id, row.user);
}

/** The key of `latestSourceVersion` for a concept or mapping version row. */
export function holdingKey(version: {
  repositoryId: string;
  validFromSeq: string;
  validToSeq: string | null;
}): string {
  return `${version.repositoryId}:${version.validFromSeq}:${version.validToSeq ?? ''}`;
}

interface PlainPageKey {
  repositoryId: string;
  /** The source version row whose active count is the total. */
  versionId: string;
  seq: string | null;
  /** At HEAD, the source's change number as the caller read it (what anchors a deep page). */
  headSeq?: string;
  sort: SortSpec<ConceptSortKey>;
  window: Window;
}

/** The key of `Loaders.plainConceptPage`. */
export function plainPageKey(key: PlainPageKey): string {
  return JSON.stringify(key);
}

interface HierarchyKey {
  repositoryId: string;
  seq: string | null;
  code: string;
}

/** The key of `Loaders.conceptHasChildren`: a code in a source as of a change (null: HEAD). */
export function hierarchyKey(repositoryId: string, seq: string | null, code: string): string {
  return JSON.stringify({ repositoryId, seq, code } satisfies HierarchyKey);
}
