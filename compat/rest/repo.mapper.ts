import { HEAD } from '../../src/db/entities';
import {
  hierarchyRootUrl,
  ownerUrl,
  repoUrl,
  type RepoCounts,
  type RepoDetail,
  type RepoView,
} from '../../src/services';

/** What a view shows of the repository's metadata: HEAD's live row, a version's snapshot. */
function metadataOf(view: RepoView) {
  const { repo, version } = view;
  return version.metadata ?? repo;
}

function urlsOf(view: RepoView) {
  const { repo, version, owner } = view;
  const base = repoUrl(owner, repo.kind, repo.mnemonic);
  const at =
    version.mnemonic === HEAD ? base : repoUrl(owner, repo.kind, repo.mnemonic, version.mnemonic);
  return { base, at };
}

/** spec core §2.4/§2.5 summary view (plus `type`, `id` and `version` for mixed lists). */
export function repoSummary(view: RepoView): object {
  const { repo, version, owner } = view;
  const meta = metadataOf(view);
  const { at } = urlsOf(view);
  return {
    type: typeName(view),
    id: version.mnemonic === HEAD ? repo.mnemonic : version.mnemonic,
    short_code: repo.mnemonic,
    name: meta.name,
    url: at,
    owner: owner.id,
    owner_type: owner.type,
    owner_url: ownerUrl(owner),
    version: version.mnemonic,
    ...(repo.kind === 'source'
      ? { source_type: meta.sourceType }
      : { collection_type: meta.collectionType }),
  };
}

/**
 * spec core §2.4/§2.5 detail view. At HEAD it describes the repository; at a version it adds the
 * version fields (spec core §4.6), with the metadata the version froze.
 */
/** OCL's `summary` of a repository or version: its active content and versions. */
export function summaryOf(counts: RepoCounts): object {
  return {
    active_concepts: counts.activeConcepts,
    active_mappings: counts.activeMappings,
    versions: counts.versions,
  };
}

/**
 * A repository detail as a get answers it: its fields, a collection's `expansion_url` (the
 * version's default expansion), and `summary` with `includeSummary=true`.
 */
export function repoDetailBody(
  { view, counts, expansionUrl }: RepoDetail,
  summary: boolean,
): object {
  const body = repoDetail(view, counts) as Record<string, unknown>;
  if (expansionUrl !== undefined) body.expansion_url = expansionUrl;
  if (summary) body.summary = summaryOf(counts);
  return body;
}

export function repoDetail(view: RepoView, counts: RepoCounts): object {
  const { repo, version, owner } = view;
  const meta = metadataOf(view);
  const { base, at } = urlsOf(view);
  const isHead = version.mnemonic === HEAD;
  const common = {
    type: typeName(view),
    uuid: isHead ? repo.id : version.id,
    id: isHead ? repo.mnemonic : version.mnemonic,
    short_code: repo.mnemonic,
    external_id: meta.externalId,
    name: meta.name,
    full_name: meta.fullName,
    // Access always follows HEAD, whatever a version froze.
    public_access: repo.publicAccess,
    default_locale: meta.defaultLocale,
    supported_locales: meta.supportedLocales.join(','),
    website: meta.website,
    description: meta.description,
    custom_validation_schema: meta.customValidationSchema,
    canonical_url: meta.canonicalUrl,
    extras: meta.extras,
    // HEAD's on the repository; a version's its own.
    meta: (isHead ? repo.meta : version.meta) ?? null,
    owner: owner.id,
    owner_type: owner.type,
    owner_url: ownerUrl(owner),
    url: at,
    versions_url: `${base}versions/`,
    concepts_url: `${at}concepts/`,
    mappings_url: `${at}mappings/`,
    versions: counts.versions,
    active_concepts: counts.activeConcepts,
    active_mappings: counts.activeMappings,
    version: version.mnemonic,
    is_active: repo.isActive,
  };
  const kindFields =
    repo.kind === 'source'
      ? {
          source_type: meta.sourceType,
          hierarchy_root_url: hierarchyRootUrl(view),
          ...autoIdFields(view),
        }
      : {
          collection_type: meta.collectionType,
          preferred_source: meta.preferredSource,
          references_url: `${at}references/`,
          expansions_url: `${at}expansions/`,
        };
  const versionFields = isHead
    ? {}
    : {
        version_url: at,
        previous_version: version.previousVersion,
        previous_version_url:
          version.previousVersion === null
            ? null
            : repoUrl(owner, repo.kind, repo.mnemonic, version.previousVersion),
        released: version.released,
        retired: version.retired,
        description: version.description ?? meta.description,
        version_external_id: version.externalId,
        version_extras: version.extras,
        _svc_processing: version.processing,
        is_processing: version.processing,
      };
  return {
    ...common,
    ...kindFields,
    ...versionFields,
    created_on: (isHead ? repo.createdAt : version.createdAt).toISOString(),
    created_by: isHead ? repo.createdBy : version.createdBy,
    updated_on: (isHead ? repo.updatedAt : version.updatedAt).toISOString(),
    updated_by: isHead ? repo.updatedBy : version.updatedBy,
  };
}

/**
 * An entry of a verbose versions list: the version's detail, named by its version id and URL at
 * HEAD too (oclweb3's history keeps HEAD apart by `id` `HEAD`); `url` is the repository's, as in
 * OCL's version lists (oclweb3's version comparison reads `url + id + '/summary/'`).
 */
export function versionDetail(view: RepoView, counts: RepoCounts): object {
  const { repo, version, owner } = view;
  return {
    ...repoDetail(view, counts),
    id: version.mnemonic,
    url: repoUrl(owner, repo.kind, repo.mnemonic),
    version_url: repoUrl(owner, repo.kind, repo.mnemonic, version.mnemonic),
  };
}

/**
 * An entry of a versions list (`id` is the version id; OpenMRS skips the one named HEAD); `url` is
 * the repository's and `version_url` the version's, as OCL lists them.
 */
export function versionSummary(view: RepoView): object {
  const { repo, version, owner } = view;
  return {
    type: typeName(view),
    id: version.mnemonic,
    short_code: repo.mnemonic,
    name: metadataOf(view).name,
    url: repoUrl(owner, repo.kind, repo.mnemonic),
    version_url: repoUrl(owner, repo.kind, repo.mnemonic, version.mnemonic),
    description: version.description,
    released: version.released,
    retired: version.retired,
    previous_version: version.previousVersion,
    owner: owner.id,
    owner_type: owner.type,
    owner_url: ownerUrl(owner),
    created_on: version.createdAt.toISOString(),
    created_by: version.createdBy,
  };
}

function typeName(view: RepoView): string {
  const base = view.repo.kind === 'source' ? 'Source' : 'Collection';
  return view.version.mnemonic === HEAD ? base : `${base} Version`;
}

function autoIdFields(view: RepoView): object {
  const s = view.repo.settings;
  return {
    autoid_concept_mnemonic: s.autoidConceptMnemonic ?? null,
    autoid_concept_external_id: s.autoidConceptExternalId ?? null,
    autoid_mapping_mnemonic: s.autoidMappingMnemonic ?? null,
    autoid_mapping_external_id: s.autoidMappingExternalId ?? null,
    autoid_concept_mnemonic_start_from: s.autoidConceptMnemonicStartFrom ?? null,
    autoid_concept_external_id_start_from: s.autoidConceptExternalIdStartFrom ?? null,
    autoid_mapping_mnemonic_start_from: s.autoidMappingMnemonicStartFrom ?? null,
    autoid_mapping_external_id_start_from: s.autoidMappingExternalIdStartFrom ?? null,
    autoid_concept_name_external_id: s.autoidConceptNameExternalId ?? null,
    autoid_concept_description_external_id: s.autoidConceptDescriptionExternalId ?? null,
  };
}
