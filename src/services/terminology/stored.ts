import { HEAD, type ConceptVersionEntity, type RepositorySnapshot } from '../../db/entities';
import type { RepoView } from '../shared/paths';
import { repoUrl } from '../shared/urls';
import type {
  CodeSystemConcept,
  CodeSystemResource,
  ConceptMapResource,
  ConceptProperty,
  ConceptSetComponent,
  Designation,
  Json,
  JsonObject,
  PropertyDefinition,
  ValueSetResource,
} from './fhir';
import { markUnreleased, type StoredTerminology } from './library';

/**
 * OCL content as FHIR R4 resources (spec operations §2.8): a source version as a CodeSystem and a
 * ConceptMap, a collection version as a ValueSet. Pure mapping: what to read, and who may read
 * it, is decided by `FhirResourceService`.
 */

export type FhirResourceType = 'CodeSystem' | 'ValueSet' | 'ConceptMap';

/** What the mapping needs to know of the server and the namespace a resource is read through. */
export interface RenderContext {
  /** Absolute base of the service (`https://host`), for absolute repository URLs. */
  baseUrl: string;
  /** The resource's `id`: the repository id in an owner namespace, the server-wide id under /fhir/. */
  idOf: (view: RepoView) => string;
}

/** The hosted FHIR server's address (spec operations §4.7 accession identifier `system`). */
export function fhirBaseOf(baseUrl: string): string {
  return `${baseUrl}/fhir`;
}

/** `{fhir_extension_base}` of spec operations §2.8. */
export function extensionBaseOf(baseUrl: string): string {
  return `${fhirBaseOf(baseUrl)}/StructureDefinition`;
}

const IDENTIFIER_TYPES = 'http://terminology.hl7.org/CodeSystem/v2-0203';
const CONCEPT_PROPERTIES = 'http://hl7.org/fhir/concept-properties';

/** What a view shows of the repository's metadata: HEAD's live row, a version's snapshot. */
export function metadataOf(view: RepoView): RepositorySnapshot {
  return view.version.metadata ?? view.repo;
}

/** The URL a repository is known by: its canonical URL, else its own URL made absolute. */
export function systemOf(view: RepoView, baseUrl: string): string {
  return (
    metadataOf(view).canonicalUrl ??
    `${baseUrl}${repoUrl(view.owner, view.repo.kind, view.repo.mnemonic)}`
  );
}

/** The resource URI of spec operations §4.7: `/:ownerType/:owner/X/:id/version/:version/`. */
export function resourceUri(view: RepoView, type: FhirResourceType): string {
  return resourceUriOf(view.owner, type, view.repo.mnemonic, view.version.mnemonic);
}

export function resourceUriOf(
  owner: { type: 'Organization' | 'User'; id: string },
  type: FhirResourceType,
  id: string,
  version: string,
): string {
  const e = encodeURIComponent;
  const owners = owner.type === 'Organization' ? 'orgs' : 'users';
  return `/${owners}/${e(owner.id)}/${type}/${e(id)}/version/${e(version)}/`;
}

/** The accession identifier (spec operations §4.7). */
export function accessionIdentifier(
  view: RepoView,
  type: FhirResourceType,
  baseUrl: string,
): JsonObject {
  return {
    type: {
      coding: [{ system: IDENTIFIER_TYPES, code: 'ACSN', display: 'Accession ID' }],
      text: 'Accession ID',
    },
    system: fhirBaseOf(baseUrl),
    value: resourceUri(view, type),
  };
}

/** released → active, else draft; retired wins over both. */
export function statusOf(view: RepoView): 'active' | 'draft' | 'retired' {
  if (view.version.retired) return 'retired';
  return view.version.released ? 'active' : 'draft';
}

/** The date a version stands for: when it was made; HEAD's is its latest change. */
function dateOf(view: RepoView): string {
  return (
    view.version.mnemonic === HEAD ? view.repo.updatedAt : view.version.createdAt
  ).toISOString();
}

/**
 * FHIR fields our model has no column for (`publisher`, `contact`, `jurisdiction`, `purpose`,
 * `copyright`, `experimental`, `caseSensitive`, …) are kept as extras of the same name; a FHIR
 * create stores them there.
 */
export const EXTRA_FIELDS = [
  'publisher',
  'contact',
  'jurisdiction',
  'purpose',
  'copyright',
  'experimental',
  'useContext',
] as const;
/** Every FHIR field a create keeps in extras (`caseSensitive` is read on its own). */
export const STORED_EXTRA_FIELDS: readonly string[] = [...EXTRA_FIELDS, 'caseSensitive'];

function extrasFields(meta: RepositorySnapshot): JsonObject {
  const extras = (meta.extras ?? {}) as Record<string, Json | undefined>;
  const fields: JsonObject = {};
  for (const name of EXTRA_FIELDS) {
    const value = extras[name];
    if (value !== undefined && value !== null) fields[name] = value;
  }
  return fields;
}

/** The fields every resource of a repository version shares. */
function common(view: RepoView, r: RenderContext) {
  const meta = metadataOf(view);
  return {
    id: r.idOf(view),
    // The repository version a resource is read at is its version (FHIR `meta.versionId`).
    meta: { versionId: view.version.mnemonic, lastUpdated: view.version.updatedAt.toISOString() },
    url: systemOf(view, r.baseUrl),
    version: view.version.mnemonic,
    name: meta.name,
    title: meta.fullName ?? meta.name,
    status: statusOf(view),
    date: dateOf(view),
    ...(meta.description ? { description: meta.description } : {}),
    ...extrasFields(meta),
  };
}

/** The concept properties every CodeSystem defines (spec operations §2.8). */
export const CODE_SYSTEM_PROPERTIES: PropertyDefinition[] = [
  {
    code: 'conceptclass',
    uri: 'https://openconceptlab.org/fhir/concept-properties#conceptclass',
    description: 'Standard list of concept classes.',
    type: 'string',
  },
  {
    code: 'datatype',
    uri: 'https://openconceptlab.org/fhir/concept-properties#datatype',
    description: 'Standard list of concept datatypes.',
    type: 'string',
  },
  {
    code: 'inactive',
    uri: `${CONCEPT_PROPERTIES}#inactive`,
    description: 'True if the concept is not considered active.',
    type: 'boolean',
  },
  {
    code: 'parent',
    uri: `${CONCEPT_PROPERTIES}#parent`,
    description: 'A parent of the concept (parent_concept_urls).',
    type: 'code',
  },
  {
    code: 'child',
    uri: `${CONCEPT_PROPERTIES}#child`,
    description: 'A child of the concept (a concept naming it in parent_concept_urls).',
    type: 'code',
  },
];

/** The concepts of a CodeSystem: some or all of the version's, with their children's codes. */
export interface CodeSystemContent {
  concepts: ConceptVersionEntity[];
  /** Codes of the concepts naming each code as a parent. */
  children: ReadonlyMap<string, string[]>;
}

/** A source version as a CodeSystem; definition only without `content`; `count` when known. */
export function codeSystemOf(
  view: RepoView,
  r: RenderContext,
  count: number | undefined,
  content?: CodeSystemContent,
): CodeSystemResource {
  const meta = metadataOf(view);
  const extras: Record<string, unknown> = meta.extras ?? {};
  const { id, meta: resourceMeta, url, ...rest } = common(view, r);
  return {
    resourceType: 'CodeSystem',
    id,
    meta: resourceMeta,
    language: meta.defaultLocale,
    url,
    identifier: [accessionIdentifier(view, 'CodeSystem', r.baseUrl)],
    ...rest,
    content: 'complete',
    ...(count !== undefined ? { count } : {}),
    caseSensitive: typeof extras.caseSensitive === 'boolean' ? extras.caseSensitive : true,
    property: CODE_SYSTEM_PROPERTIES,
    ...(content ? { concept: content.concepts.map((c) => conceptOf(c, content.children)) } : {}),
  };
}

/** One concept version as a CodeSystem concept. */
export function conceptOf(
  version: ConceptVersionEntity,
  children: ReadonlyMap<string, string[]>,
): CodeSystemConcept {
  const designation: Designation[] = version.names.map((name) => ({
    language: name.locale,
    ...(name.name_type ? { use: { code: name.name_type } } : {}),
    value: name.name,
  }));
  const property: ConceptProperty[] = [];
  if (version.conceptClass)
    property.push({ code: 'conceptclass', valueString: version.conceptClass });
  if (version.datatype) property.push({ code: 'datatype', valueString: version.datatype });
  property.push({ code: 'inactive', valueBoolean: version.retired });
  for (const parent of version.parentCodes) property.push({ code: 'parent', valueCode: parent });
  for (const child of children.get(version.mnemonic) ?? [])
    property.push({ code: 'child', valueCode: child });
  const definition = version.descriptions[0]?.description;
  return {
    code: version.mnemonic,
    ...(version.displayName !== null ? { display: version.displayName } : {}),
    ...(definition ? { definition } : {}),
    ...(designation.length ? { designation } : {}),
    property,
  };
}

/** Codes of the concepts naming each code as a parent, among these concepts. */
export function childrenAmong(concepts: ConceptVersionEntity[]): Map<string, string[]> {
  const children = new Map<string, string[]>();
  for (const concept of concepts) {
    for (const parent of concept.parentCodes) {
      children.set(parent, [...(children.get(parent) ?? []), concept.mnemonic]);
    }
  }
  return children;
}

/** One member of a ValueSet: a concept of a system (at a version when known). */
export interface ValueSetMember {
  system: string;
  version?: string;
  code: string;
  display?: string;
}

/** A collection version as a ValueSet; definition only without `members`. */
export function valueSetOf(
  view: RepoView,
  r: RenderContext,
  members?: ValueSetMember[],
): ValueSetResource {
  const { id, meta, url, ...rest } = common(view, r);
  return {
    resourceType: 'ValueSet',
    id,
    meta,
    language: metadataOf(view).defaultLocale,
    url,
    identifier: [accessionIdentifier(view, 'ValueSet', r.baseUrl)],
    ...rest,
    immutable: view.version.released,
    ...(members ? { compose: { include: includesOf(members) } } : {}),
  };
}

/** Members grouped by system and version, in the order they come. */
export function includesOf(members: ValueSetMember[]): ConceptSetComponent[] {
  const groups = new Map<string, ConceptSetComponent>();
  for (const member of members) {
    const key = `${member.system}|${member.version ?? ''}`;
    let group = groups.get(key);
    if (!group) {
      group = {
        system: member.system,
        ...(member.version !== undefined ? { version: member.version } : {}),
        concept: [],
      };
      groups.set(key, group);
    }
    group.concept!.push({
      code: member.code,
      ...(member.display !== undefined ? { display: member.display } : {}),
    });
  }
  return [...groups.values()];
}

/** One mapping of a ConceptMap, its ends as systems and codes. */
export interface ConceptMapEntry {
  source: string;
  sourceVersion?: string;
  target: string;
  targetVersion?: string;
  fromCode: string;
  fromDisplay?: string;
  toCode: string;
  toDisplay?: string;
  mapType: string;
}

/**
 * A ConceptMap as R4 has it: `identifier` is one Identifier there, not a list (the shared
 * `ConceptMapResource` type reads it as the other canonical resources do).
 */
export type StoredConceptMap = {
  [K in keyof ConceptMapResource as K extends 'identifier' ? never : K]: ConceptMapResource[K];
} & { identifier: JsonObject };

/** A source version's mappings as a ConceptMap; definition only without `entries`. */
export function conceptMapOf(
  view: RepoView,
  r: RenderContext,
  entries?: ConceptMapEntry[],
): StoredConceptMap {
  const { id, meta, url, ...rest } = common(view, r);
  return {
    resourceType: 'ConceptMap',
    id,
    meta,
    url,
    identifier: accessionIdentifier(view, 'ConceptMap', r.baseUrl),
    ...rest,
    ...(entries ? { group: groupsOf(entries, extensionBaseOf(r.baseUrl)) } : {}),
  };
}

type Group = NonNullable<ConceptMapResource['group']>[number];
type Element = NonNullable<Group['element']>[number];

/** Mappings grouped per source and target system, then per source code. */
function groupsOf(entries: ConceptMapEntry[], extensionBase: string): Group[] {
  const groups = new Map<string, { group: Group; elements: Map<string, Element> }>();
  for (const entry of entries) {
    const key = [entry.source, entry.sourceVersion, entry.target, entry.targetVersion].join('|');
    let found = groups.get(key);
    if (!found) {
      found = {
        group: {
          source: entry.source,
          ...(entry.sourceVersion ? { sourceVersion: entry.sourceVersion } : {}),
          target: entry.target,
          ...(entry.targetVersion ? { targetVersion: entry.targetVersion } : {}),
          element: [],
        },
        elements: new Map(),
      };
      groups.set(key, found);
    }
    let element = found.elements.get(entry.fromCode);
    if (!element) {
      element = {
        code: entry.fromCode,
        ...(entry.fromDisplay ? { display: entry.fromDisplay } : {}),
        target: [],
      };
      found.elements.set(entry.fromCode, element);
      found.group.element!.push(element);
    }
    element.target!.push({
      code: entry.toCode,
      ...(entry.toDisplay ? { display: entry.toDisplay } : {}),
      equivalence: equivalenceOf(entry.mapType),
      extension: [{ url: `${extensionBase}/ConceptMap/equivalence`, valueString: entry.mapType }],
    });
  }
  return [...groups.values()].map((g) => g.group);
}

/**
 * The R4 equivalence of an OCL map type. R4 says how the *target* relates to the source: `A
 * NARROWER-THAN B` makes the target B wider than A (`wider`), `BROADER-THAN` the reverse.
 */
export function equivalenceOf(mapType: string): string {
  switch (
    mapType
      .trim()
      .toUpperCase()
      .replace(/[\s_]+/g, '-')
  ) {
    case 'SAME-AS':
      return 'equivalent';
    case 'NARROWER-THAN':
      return 'wider';
    case 'BROADER-THAN':
      return 'narrower';
    default:
      return 'relatedto';
  }
}

/** A stored repository version as a FHIR resource. */
export type StoredResource = CodeSystemResource | ValueSetResource | StoredConceptMap;

/**
 * What `StoredContent` reads: every version of the repositories known by a URL, as FHIR
 * resources with their content, that the caller may see. `FhirResourceService` answers it.
 */
export interface StoredReader {
  storedVersions(type: FhirResourceType, url: string): Promise<StoredResource[]>;
  /** The same code system versions as definitions, their concepts read by code on demand. */
  codeSystemDefinitions(url: string): Promise<CodeSystemResource[]>;
  /** The same value set versions as definitions, their members read a page at a time. */
  valueSetDefinitions(url: string): Promise<ValueSetResource[]>;
}

/**
 * Stored repositories for the terminology operations (`TerminologyLibrary`): by canonical URL (or
 * repository URL), every version other than HEAD, released or not (its `status` says which), and
 * HEAD (version `HEAD`) only for a repository without any other version. A version-less request
 * reads the newest released version (spec ops §2.8, §9.1; `markUnreleased`), else the newest
 * made, never the moving working copy while another exists.
 */
export class StoredContent implements StoredTerminology {
  constructor(private readonly reader: StoredReader) {}

  async codeSystems(url: string): Promise<CodeSystemResource[]> {
    return markUnreleased(
      (await this.reader.storedVersions('CodeSystem', url)) as CodeSystemResource[],
    );
  }

  async codeSystemDefinitions(url: string): Promise<CodeSystemResource[]> {
    return markUnreleased(await this.reader.codeSystemDefinitions(url));
  }

  async valueSets(url: string): Promise<ValueSetResource[]> {
    return markUnreleased(
      (await this.reader.storedVersions('ValueSet', url)) as ValueSetResource[],
    );
  }

  async valueSetDefinitions(url: string): Promise<ValueSetResource[]> {
    return markUnreleased(await this.reader.valueSetDefinitions(url));
  }

  async conceptMaps(url: string): Promise<ConceptMapResource[]> {
    // The operations read groups only; R4's single identifier is put back in a list for them.
    const maps = (await this.reader.storedVersions('ConceptMap', url)) as StoredConceptMap[];
    return markUnreleased(
      maps.map(({ identifier, ...map }) => ({ ...map, identifier: [identifier] })),
    );
  }
}
