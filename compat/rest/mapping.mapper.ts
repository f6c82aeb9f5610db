import { HEAD } from '../../src/db/entities';
import {
  ownerUrl,
  repoUrl,
  type Ends,
  type MappingDetail,
  type MappingItem,
  type MappingView,
  type ResolvedEnd,
  type VersionHolders,
} from '../../src/services';

/** `source_versions` and `collection_versions` (version URLs), when they were read. */
export function holderFields(holders: VersionHolders | undefined): object {
  if (!holders) return {};
  return {
    source_versions: holders.sourceVersions,
    collection_versions: holders.collectionVersions,
  };
}

/** The version-less URL of a mapping. */
export function mappingUrl(view: MappingView): string {
  const { source, mapping } = view;
  return `${repoUrl(source.owner, 'source', source.repo.mnemonic)}mappings/${encodeURIComponent(mapping.mnemonic)}/`;
}

/** The `from_*` or `to_*` fields of spec core §2.7. */
export function endFields(
  view: MappingView,
  side: 'from' | 'to',
  end: ResolvedEnd,
): Record<string, unknown> {
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
    [`${side}_source_owner`]: end.source?.owner.id ?? null,
    [`${side}_source_owner_type`]: end.source?.owner.type ?? null,
    [`${side}_source_name`]: end.source?.repo.mnemonic ?? null,
    [`${side}_source_url`]: sourceUrl,
    [`${side}_source_version`]: v[`${side}SourceVersion`],
    [`${side}_concept_code`]: code,
    [`${side}_concept_name`]: v[`${side}ConceptName`],
    [`${side}_concept_url`]: base && code ? `${base}concepts/${encodeURIComponent(code)}/` : null,
    [`${side}_concept_name_resolved`]: end.conceptName,
  };
}

/** spec core §2.7 summary view. */
export function mappingSummary(view: MappingView, ends: Ends): object {
  const { source, mapping, version } = view;
  return {
    type: 'Mapping',
    id: mapping.mnemonic,
    map_type: version.mapType,
    retired: version.retired,
    source: source.repo.mnemonic,
    owner: source.owner.id,
    owner_type: source.owner.type,
    ...endFields(view, 'from', ends.from),
    ...endFields(view, 'to', ends.to),
    url: mappingUrl(view),
    version: version.id,
    sort_weight: version.sortWeight,
  };
}

/** spec core §2.7 detail view. */
export function mappingDetail(view: MappingView, ends: Ends, versions: number): object {
  return { ...mappingContent(view, ends), versions };
}

/** The detail view without the version count: how a repository detail lists its mappings. */
export function mappingContent(view: MappingView, ends: Ends): object {
  const { source, mapping, version } = view;
  const url = mappingUrl(view);
  return {
    ...mappingSummary(view, ends),
    uuid: version.id,
    external_id: version.externalId,
    owner_url: ownerUrl(source.owner),
    version_url: `${url}${version.id}/`,
    versioned_object_id: mapping.id,
    versioned_object_url: url,
    is_latest_version: version.validToSeq === null,
    update_comment: version.updateComment,
    extras: version.extras ?? {},
    checksums: { standard: version.checksumStandard, smart: version.checksumSmart },
    public_can_view: source.repo.publicAccess !== 'None',
    latest_source_version: source.version.mnemonic === HEAD ? null : source.version.mnemonic,
    created_on: mapping.createdAt.toISOString(),
    created_by: mapping.createdBy,
    updated_on: version.createdAt.toISOString(),
    updated_by: version.createdBy,
    version_created_on: version.createdAt.toISOString(),
    version_updated_on: version.createdAt.toISOString(),
    version_updated_by: version.createdBy,
  };
}

/** An entry of a mapping's version list (as `conceptVersionEntry`). */
export function mappingVersionEntry({
  view,
  ends,
  holders,
}: MappingItem & { holders?: VersionHolders }): object {
  const { version } = view;
  return {
    ...mappingSummary(view, ends),
    uuid: version.id,
    version_url: `${mappingUrl(view)}${version.id}/`,
    update_comment: version.updateComment,
    is_latest_version: version.validToSeq === null,
    version_created_on: version.createdAt.toISOString(),
    version_created_by: version.createdBy,
    ...holderFields(holders),
  };
}

/** A mapping detail as read or written (spec core §2.7). */
export function mappingDetailOf(detail: MappingDetail): object {
  return mappingDetail(detail.view, detail.ends, detail.versionCount);
}
