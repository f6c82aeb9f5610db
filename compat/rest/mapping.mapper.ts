import { HEAD } from '../../src/db/entities';
import {
  mappingEnd,
  ownerUrl,
  repoUrl,
  type Ends,
  type MappingDetail,
  type MappingItem,
  type MappingView,
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

/**
 * spec core §2.7 summary view. Every key is written out (no computed keys, no spreads): the
 * object keeps one shape, which JSON.stringify writes fastest (exports write it 300,000 times).
 */
export function mappingSummary(view: MappingView, ends: Ends): object {
  const { source, mapping, version } = view;
  const from = mappingEnd(view, 'from', ends.from);
  const to = mappingEnd(view, 'to', ends.to);
  return {
    type: 'Mapping',
    id: mapping.mnemonic,
    map_type: version.mapType,
    retired: version.retired,
    source: source.repo.mnemonic,
    owner: source.owner.id,
    owner_type: source.owner.type,
    from_source_owner: from.sourceOwner,
    from_source_owner_type: from.sourceOwnerType,
    from_source_name: from.sourceName,
    from_source_url: from.sourceUrl,
    from_source_version: from.sourceVersion,
    from_concept_code: from.conceptCode,
    from_concept_name: from.conceptName,
    from_concept_url: from.conceptUrl,
    from_concept_name_resolved: from.conceptNameResolved,
    to_source_owner: to.sourceOwner,
    to_source_owner_type: to.sourceOwnerType,
    to_source_name: to.sourceName,
    to_source_url: to.sourceUrl,
    to_source_version: to.sourceVersion,
    to_concept_code: to.conceptCode,
    to_concept_name: to.conceptName,
    to_concept_url: to.conceptUrl,
    to_concept_name_resolved: to.conceptNameResolved,
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
  // Object.assign, not a spread: V8 spreads an object this wide into a literal ~20 times slower.
  return Object.assign(mappingSummary(view, ends), {
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
  });
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
    version_updated_on: version.createdAt.toISOString(),
    version_updated_by: version.createdBy,
    ...holderFields(holders),
  };
}

/** A mapping detail as read or written (spec core §2.7). */
export function mappingDetailOf(detail: MappingDetail): object {
  return Object.assign(mappingDetail(detail.view, detail.ends, detail.versionCount), {
    latest_source_version: detail.latestSourceVersion,
  });
}
