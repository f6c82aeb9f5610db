import { HEAD, type ConceptDescription, type ConceptName } from '../../src/db/entities';
import {
  ownerUrl,
  repoUrl,
  type ConceptDetail,
  type ConceptView,
  type VersionHolders,
} from '../../src/services';
import { holderFields, mappingSummary } from './mapping.mapper';

function urlsOf(view: ConceptView) {
  const { source, concept, version } = view;
  const sourceUrl = repoUrl(source.owner, 'source', source.repo.mnemonic);
  const url = `${sourceUrl}concepts/${encodeURIComponent(concept.mnemonic)}/`;
  return { sourceUrl, url, versionUrl: `${url}${version.id}/` };
}

/** spec core §2.6 summary view. */
export function conceptSummary(view: ConceptView): object {
  const { source, concept, version } = view;
  const { url, versionUrl } = urlsOf(view);
  return {
    type: 'Concept',
    id: concept.mnemonic,
    concept_class: version.conceptClass,
    datatype: version.datatype,
    retired: version.retired,
    source: source.repo.mnemonic,
    owner: source.owner.id,
    owner_type: source.owner.type,
    owner_url: ownerUrl(source.owner),
    display_name: version.displayName,
    display_locale: version.displayLocale,
    version: version.id,
    url,
    version_url: versionUrl,
    // A hierarchy view's levels tell which concepts open further.
    ...(view.hasChildren !== undefined ? { has_children: view.hasChildren } : {}),
    // An expansion with includeDesignations / includeDefinition lists these too.
    ...(view.expansion?.designations
      ? { names: version.names.map((n) => conceptItem('names', n)) }
      : {}),
    ...(view.expansion?.definition
      ? { descriptions: version.descriptions.map((d) => conceptItem('descriptions', d)) }
      : {}),
  };
}

/**
 * An entry of a concept's version list: the summary with what the web client's history reads
 * (`uuid`, `version_created_on`, `version_updated_on`, `update_comment`) and, when asked, the repository versions that
 * hold the version (`includeSourceVersions` / `includeCollectionVersions`).
 */
export function conceptVersionEntry(view: ConceptView & { holders?: VersionHolders }): object {
  const { version } = view;
  return {
    ...conceptSummary(view),
    uuid: version.id,
    update_comment: version.updateComment,
    is_latest_version: version.validToSeq === null,
    version_created_on: version.createdAt.toISOString(),
    version_created_by: version.createdBy,
    // A version never changes after it is made (the web client's history shows these).
    version_updated_on: version.createdAt.toISOString(),
    version_updated_by: version.createdBy,
    ...holderFields(view.holders),
  };
}

/** spec core §2.6 detail view (mappings arrive with the mappings API). */
export function conceptDetail(view: ConceptView, versions: number): object {
  return Object.assign(
    conceptContent(view),
    { versions },
    view.hasChildren !== undefined ? { has_children: view.hasChildren } : {},
  );
}

/**
 * The detail view without the version count: how a repository detail lists its concepts
 * (`includeConcepts`), hence exports and synchronization (spec operations §4.8, §4.10).
 */
export function conceptContent(view: ConceptView): object {
  const { source, concept, version } = view;
  const { sourceUrl, url, versionUrl } = urlsOf(view);
  // Object.assign, not a spread: V8 spreads an object this wide into a literal ~20 times slower.
  return Object.assign(conceptSummary(view), {
    uuid: version.id,
    external_id: version.externalId,
    names: version.names.map((n) => conceptItem('names', n)),
    descriptions: version.descriptions.map((d) => conceptItem('descriptions', d)),
    extras: version.extras ?? {},
    parent_concept_urls: (version.parentCodes ?? []).map(
      (code) => `${sourceUrl}concepts/${encodeURIComponent(code)}/`,
    ),
    checksums: { standard: version.checksumStandard, smart: version.checksumSmart },
    update_comment: version.updateComment,
    is_latest_version: version.validToSeq === null,
    versioned_object_id: concept.id,
    source_url: sourceUrl,
    versions_url: `${url}versions/`,
    mappings_url: `${url}mappings/`,
    extras_url: `${url}extras/`,
    latest_source_version: source.version.mnemonic === HEAD ? null : source.version.mnemonic,
    created_on: concept.createdAt.toISOString(),
    created_by: concept.createdBy,
    updated_on: version.createdAt.toISOString(),
    updated_by: version.createdBy,
    version_created_on: version.createdAt.toISOString(),
    version_url: versionUrl,
  });
}

/** spec core §2.6 ConceptName and ConceptDescription. */
export function conceptItem(
  part: 'names' | 'descriptions',
  item: ConceptName | ConceptDescription,
): object {
  return { type: part === 'names' ? 'ConceptName' : 'ConceptDescription', ...item };
}

/** The version-less URL of a name or description: `…/concepts/:concept/names/:uuid/`. */
export function conceptItemUrl(
  view: ConceptView,
  part: 'names' | 'descriptions',
  uuid: string,
): string {
  return `${urlsOf(view).url}${part}/${encodeURIComponent(uuid)}/`;
}

/**
 * A concept detail as read (spec core §4.3): the detail view with the mappings its source holds
 * from the concept (`includeMappings`) and to it (`includeInverseMappings`) when they were read.
 */
export function conceptDetailOf(detail: ConceptDetail): object {
  const body = Object.assign(conceptDetail(detail.view, detail.versionCount), {
    latest_source_version: detail.latestSourceVersion,
  });
  if (detail.mappings) {
    Object.assign(body, {
      mappings: detail.mappings.map(({ view, ends }) => mappingSummary(view, ends)),
    });
  }
  if (detail.inverseMappings) {
    Object.assign(body, {
      inverse_mappings: detail.inverseMappings.map(({ view, ends }) => mappingSummary(view, ends)),
    });
  }
  return body;
}
