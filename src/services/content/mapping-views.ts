import type { MappingEntity, MappingVersionEntity, RepositoryEntity } from '../../db/entities';
import type { Owner, RepoView } from '../shared/paths';
import { repoUrl } from '../shared/urls';

/** A mapping at one of its versions, in the source (at HEAD or a version) it was read through. */
export interface MappingView {
  source: RepoView;
  mapping: MappingEntity;
  version: MappingVersionEntity;
}

/** The source an end lies in, as an end shows it: its id and its owner. */
export interface EndSource {
  repo: Pick<RepositoryEntity, 'id' | 'mnemonic'>;
  owner: Pick<Owner, 'type' | 'id'>;
}

/** What an end resolved to, for rendering (spec core §2.7 `*_source_owner`, `*_name_resolved`…). */
export interface ResolvedEnd {
  source: EndSource | null;
  conceptName: string | null;
}

export interface Ends {
  from: ResolvedEnd;
  to: ResolvedEnd;
}

/** A mapping with what its ends resolved to: how summaries and details show it. */
export interface MappingItem {
  view: MappingView;
  ends: Ends;
  /** How many versions the mapping has: on the items of a list read with `verbose`. */
  versionCount?: number;
}

/** A mapping as its detail shows it: one service call answers a detail request. */
export interface MappingDetail extends MappingItem {
  /** How many versions the mapping has (all of them). */
  versionCount: number;
  /** The newest source version (never HEAD) holding this mapping version; null for none. */
  latestSourceVersion: string | null;
}

/**
 * The ends of a mapping version from what was found about them: the HEAD view of each source an
 * end lies in that the caller may see (by repository id; absent or null otherwise) and the
 * current display name of each concept an end points to.
 */
export function endsOf(
  version: MappingVersionEntity,
  sources: ReadonlyMap<string, EndSource | null>,
  names: ReadonlyMap<string, string | null>,
): Ends {
  const end = (side: 'from' | 'to'): ResolvedEnd => {
    const repositoryId = version[`${side}RepositoryId`];
    const source = (repositoryId && sources.get(repositoryId)) || null;
    const conceptId = version[`${side}ConceptId`];
    return { source, conceptName: source && conceptId ? (names.get(conceptId) ?? null) : null };
  };
  return { from: end('from'), to: end('to') };
}

/** One end of a mapping as spec core §2.7 shows it (the `from_*` or `to_*` fields). */
export interface MappingEnd {
  sourceOwner: string | null;
  sourceOwnerType: string | null;
  sourceName: string | null;
  sourceUrl: string | null;
  sourceVersion: string | null;
  conceptCode: string | null;
  conceptName: string | null;
  conceptUrl: string | null;
  conceptNameResolved: string | null;
}

/** The `from_*` or `to_*` fields of spec core §2.7, by meaning. */
export function mappingEnd(view: MappingView, side: 'from' | 'to', end: ResolvedEnd): MappingEnd {
  const v = view.version;
  const sourceUrl = v[`${side}SourceUrl`];
  const code = v[`${side}ConceptCode`];
  // A concept URL exists for ends inside the service; an external canonical source has none.
  const base = end.source
    ? repoUrl(end.source.owner, 'source', end.source.repo.mnemonic)
    : sourceUrl?.startsWith('/')
      ? sourceUrl
      : null;
  return {
    sourceOwner: end.source?.owner.id ?? null,
    sourceOwnerType: end.source?.owner.type ?? null,
    sourceName: end.source?.repo.mnemonic ?? null,
    sourceUrl,
    sourceVersion: v[`${side}SourceVersion`],
    conceptCode: code,
    conceptName: v[`${side}ConceptName`],
    conceptUrl: base && code ? `${base}concepts/${encodeURIComponent(code)}/` : null,
    conceptNameResolved: end.conceptName,
  };
}
