import {
  ownerUrl,
  repoUrl,
  type RepoView,
  type Resolution,
  type UrlRegistryEntryView,
} from '../../src/services';

/** spec operations §2.3: an entry of the global registry has no owner (`owner_url` `/`). */
export function registryEntry(view: UrlRegistryEntryView): object {
  const { entry, owner } = view;
  return {
    type: 'URLRegistryEntry',
    id: Number(entry.id),
    url: entry.url,
    namespace: entry.namespace,
    name: entry.name,
    extras: entry.extras,
    is_active: entry.isActive,
    owner: owner?.id ?? null,
    owner_type: owner?.type ?? null,
    owner_url: owner ? ownerUrl(owner) : '/',
    created_at: entry.createdAt.toISOString(),
    updated_at: entry.updatedAt.toISOString(),
    created_by: entry.createdBy,
    updated_by: entry.updatedBy,
  };
}

/** spec operations §2.5: one result of `$resolveReference`. */
export function resolutionResult(resolution: Resolution, timestamp: string): object {
  return {
    reference_type: resolution.referenceType,
    timestamp,
    resolved: resolution.resolved,
    request: resolution.request,
    resolution_url: resolution.resolutionUrl,
    url_registry_entry: resolution.registryEntryUrl,
    result: resolution.repo ? repoVersionSummary(resolution.repo) : null,
  };
}

/** A repository version summary (HEAD too is a version here: `…/HEAD/`). */
function repoVersionSummary(view: RepoView): object {
  const { repo, version, owner } = view;
  const meta = version.metadata ?? repo;
  return {
    type: repo.kind === 'source' ? 'Source Version' : 'Collection Version',
    id: version.mnemonic,
    short_code: repo.mnemonic,
    name: meta.name,
    url: repoUrl(owner, repo.kind, repo.mnemonic, version.mnemonic),
    version: version.mnemonic,
    released: version.released,
    canonical_url: meta.canonicalUrl,
    owner: owner.id,
    owner_type: owner.type,
    owner_url: ownerUrl(owner),
    ...(repo.kind === 'source'
      ? { source_type: meta.sourceType }
      : { collection_type: meta.collectionType }),
  };
}
