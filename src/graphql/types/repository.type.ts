import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, InterfaceType, ObjectType } from 'type-graphql';
import { HEAD } from '../../db/entities';
import { hierarchyRootUrl, repoUrl, ownerUrl, type RepoView } from '../../services';
import { EXTERNAL_ID, EXTRAS } from './descriptions';
import { OwnerType } from './enums';
import { FACETS, FacetObject } from './facets.type';
import { PublicAccess } from './org.type';

const COLLECTION_TYPE = 'A free descriptor of its kind, e.g. a subset or a value set.';
const PREFERRED_SOURCE = 'Its preferred source, stored as given.';

/** The auto-id settings (spec core §4.6): how ids missing on create are assigned. */
const AUTOID = {
  conceptMnemonic:
    'How ids of concepts created without one are assigned: `sequential`, `uuid` or null.',
  conceptExternalId:
    'How external ids of concepts created without one are assigned: `sequential`, `uuid` or null.',
  mappingMnemonic:
    'How ids of mappings created without one are assigned: `sequential`, `uuid` or null.',
  mappingExternalId:
    'How external ids of mappings created without one are assigned: `sequential`, `uuid` or null.',
  conceptMnemonicStartFrom: 'The lowest sequential concept id tried.',
  conceptExternalIdStartFrom: 'The lowest sequential concept external id tried.',
  mappingMnemonicStartFrom: 'The lowest sequential mapping id tried.',
  mappingExternalIdStartFrom: 'The lowest sequential mapping external id tried.',
  conceptNameExternalId:
    'How external ids of new concept names are assigned: `uuid` or null (none).',
  conceptDescriptionExternalId:
    'How external ids of new concept descriptions are assigned: `uuid` or null (none).',
};

@InterfaceType('Repository', {
  description: 'A source or a collection at one of its versions (HEAD included).',
  resolveType: (value: RepositoryObject) =>
    value.view.repo.kind === 'source' ? 'Source' : 'Collection',
})
export abstract class RepositoryObject {
  view: RepoView;

  @Field(() => ID, { description: 'The id of the repository for HEAD, else of this version.' })
  uuid: string;

  @Field({ description: 'The short code used in URLs; never changes.' })
  id: string;

  @Field({ description: '`HEAD` or the version id.' })
  version: string;

  @Field({ description: 'The REST URL of this repository at this version.' })
  url: string;

  @Field({ description: 'Its name.' })
  name: string;

  @Field(() => String, {
    nullable: true,
    description: 'Its full name (`name` when none was given).',
  })
  fullName: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'For a version: its own description if it has one.',
  })
  description: string | null;

  @Field(() => String, { nullable: true, description: 'Its website URL.' })
  website: string | null;

  @Field(() => String, { nullable: true, description: EXTERNAL_ID })
  externalId: string | null;

  @Field(() => PublicAccess, {
    description: 'What the public may do with it; the same for every version as for HEAD.',
  })
  publicAccess: PublicAccess;

  @Field({ description: 'Its default locale code, e.g. `en`.' })
  defaultLocale: string;

  @Field(() => [String], { description: 'Its supported locale codes, the default one included.' })
  supportedLocales: string[];

  @Field(() => String, {
    nullable: true,
    description: 'The name of its custom validation schema.',
  })
  customValidationSchema: string | null;

  @Field(() => String, { nullable: true, description: 'Its canonical URL.' })
  canonicalUrl: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: EXTRAS })
  extras: Record<string, unknown> | null;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description:
      "OCL's `meta`: how clients show it (`display.default_filter`); a version has its own.",
  })
  meta: Record<string, unknown> | null;

  @Field(() => OwnerType, { description: 'The kind of owner.' })
  ownerType: OwnerType;

  @Field({ description: 'The org id or username of the owner.' })
  owner: string;

  @Field({ description: 'The REST URL of the owner.' })
  ownerUrl: string;

  @Field({ description: 'False once a collection is deactivated (seen only by superusers).' })
  isActive: boolean;

  @Field({ description: 'Versions only: marked released (the newest released one is `latest`).' })
  released: boolean;

  @Field({ description: 'Versions only: marked retired.' })
  retired: boolean;

  @Field(() => String, {
    nullable: true,
    description: 'Versions only: the id of the version made before it; null for none.',
  })
  previousVersion: string | null;

  @Field({ description: 'Versions only: true while the version is still being prepared.' })
  processing: boolean;

  @Field({ description: 'When the repository (for HEAD) or this version was created.' })
  createdOn: Date;

  @Field(() => String, {
    nullable: true,
    description: 'Who created the repository (for HEAD) or this version.',
  })
  createdBy: string | null;

  @Field({ description: 'When the repository (for HEAD) or this version was last updated.' })
  updatedOn: Date;

  @Field(() => String, {
    nullable: true,
    description: 'Who last updated the repository (for HEAD) or this version.',
  })
  updatedBy: string | null;
}

@ObjectType('Source', { implements: RepositoryObject, description: 'A source (spec core §2.4).' })
export class SourceObject extends RepositoryObject {
  @Field(() => String, {
    nullable: true,
    description: 'Its source type, e.g. `dictionary`, `reference` or `externalDictionary`.',
  })
  sourceType: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'The URL of the concept its hierarchy view starts at (one of its own concepts); as frozen by a version.',
  })
  hierarchyRootUrl: string | null;

  @Field(() => String, { nullable: true, description: AUTOID.conceptMnemonic })
  autoidConceptMnemonic: string | null;

  @Field(() => String, { nullable: true, description: AUTOID.conceptExternalId })
  autoidConceptExternalId: string | null;

  @Field(() => String, { nullable: true, description: AUTOID.mappingMnemonic })
  autoidMappingMnemonic: string | null;

  @Field(() => String, { nullable: true, description: AUTOID.mappingExternalId })
  autoidMappingExternalId: string | null;

  @Field(() => Int, { nullable: true, description: AUTOID.conceptMnemonicStartFrom })
  autoidConceptMnemonicStartFrom: number | null;

  @Field(() => Int, { nullable: true, description: AUTOID.conceptExternalIdStartFrom })
  autoidConceptExternalIdStartFrom: number | null;

  @Field(() => Int, { nullable: true, description: AUTOID.mappingMnemonicStartFrom })
  autoidMappingMnemonicStartFrom: number | null;

  @Field(() => Int, { nullable: true, description: AUTOID.mappingExternalIdStartFrom })
  autoidMappingExternalIdStartFrom: number | null;

  @Field(() => String, { nullable: true, description: AUTOID.conceptNameExternalId })
  autoidConceptNameExternalId: string | null;

  @Field(() => String, { nullable: true, description: AUTOID.conceptDescriptionExternalId })
  autoidConceptDescriptionExternalId: string | null;
}

@ObjectType('Collection', {
  implements: RepositoryObject,
  description: 'A collection (spec core §2.5).',
})
export class CollectionObject extends RepositoryObject {
  @Field(() => String, { nullable: true, description: COLLECTION_TYPE })
  collectionType: string | null;

  @Field(() => String, { nullable: true, description: PREFERRED_SOURCE })
  preferredSource: string | null;
}

/** The GraphQL object of a repository view: a Source or a Collection. */
export function repositoryObject(view: RepoView): SourceObject | CollectionObject {
  const { repo, version, owner } = view;
  const meta = version.metadata ?? repo;
  const isHead = version.mnemonic === HEAD;
  const common = {
    view,
    uuid: isHead ? repo.id : version.id,
    id: repo.mnemonic,
    version: version.mnemonic,
    url: isHead
      ? repoUrl(owner, repo.kind, repo.mnemonic)
      : repoUrl(owner, repo.kind, repo.mnemonic, version.mnemonic),
    name: meta.name,
    fullName: meta.fullName,
    description: (isHead ? null : version.description) ?? meta.description,
    website: meta.website,
    externalId: meta.externalId,
    publicAccess: repo.publicAccess, // access follows HEAD, whatever a version froze
    defaultLocale: meta.defaultLocale,
    supportedLocales: meta.supportedLocales,
    customValidationSchema: meta.customValidationSchema,
    canonicalUrl: meta.canonicalUrl,
    extras: meta.extras,
    meta: (isHead ? repo.meta : version.meta) ?? null,
    ownerType: owner.type as OwnerType,
    owner: owner.id,
    ownerUrl: ownerUrl(owner),
    isActive: repo.isActive,
    released: version.released,
    retired: version.retired,
    previousVersion: version.previousVersion,
    processing: version.processing,
    createdOn: isHead ? repo.createdAt : version.createdAt,
    createdBy: isHead ? repo.createdBy : version.createdBy,
    updatedOn: isHead ? repo.updatedAt : version.updatedAt,
    updatedBy: isHead ? repo.updatedBy : version.updatedBy,
  };
  if (repo.kind === 'collection') {
    return Object.assign(new CollectionObject(), common, {
      collectionType: meta.collectionType,
      preferredSource: meta.preferredSource,
    });
  }
  const s = repo.settings;
  return Object.assign(new SourceObject(), common, {
    sourceType: meta.sourceType,
    hierarchyRootUrl: hierarchyRootUrl(view),
    autoidConceptMnemonic: s.autoidConceptMnemonic ?? null,
    autoidConceptExternalId: s.autoidConceptExternalId ?? null,
    autoidMappingMnemonic: s.autoidMappingMnemonic ?? null,
    autoidMappingExternalId: s.autoidMappingExternalId ?? null,
    autoidConceptMnemonicStartFrom: s.autoidConceptMnemonicStartFrom ?? null,
    autoidConceptExternalIdStartFrom: s.autoidConceptExternalIdStartFrom ?? null,
    autoidMappingMnemonicStartFrom: s.autoidMappingMnemonicStartFrom ?? null,
    autoidMappingExternalIdStartFrom: s.autoidMappingExternalIdStartFrom ?? null,
    autoidConceptNameExternalId: s.autoidConceptNameExternalId ?? null,
    autoidConceptDescriptionExternalId: s.autoidConceptDescriptionExternalId ?? null,
  });
}

@ObjectType('RepositoryPage', { description: 'A page of sources and collections together.' })
export class RepositoryPage {
  @Field(() => Int, { description: 'Every match, not only this page.' })
  totalCount: number;

  @Field(() => [RepositoryObject], { description: 'The sources and collections of this page.' })
  items: RepositoryObject[];

  @Field(() => [FacetObject], { nullable: true, description: FACETS })
  facets?: FacetObject[] | null;
}

@ObjectType('SourcePage', {
  description: 'A page of sources: each item is a `Source`, with its concepts and mappings.',
})
export class SourcePage {
  @Field(() => Int, { description: 'Every match, not only this page.' })
  totalCount: number;

  @Field(() => [SourceObject], { description: 'The sources of this page.' })
  items: RepositoryObject[];

  @Field(() => [FacetObject], { nullable: true, description: FACETS })
  facets?: FacetObject[] | null;
}

@ObjectType('CollectionPage', {
  description:
    'A page of collections: each item is a `Collection`, with its references and expansions.',
})
export class CollectionPage {
  @Field(() => Int, { description: 'Every match, not only this page.' })
  totalCount: number;

  @Field(() => [CollectionObject], { description: 'The collections of this page.' })
  items: RepositoryObject[];

  @Field(() => [FacetObject], { nullable: true, description: FACETS })
  facets?: FacetObject[] | null;
}

@InputType('ExtrasFilterInput', { description: '`extras.<name>` filter (spec operations §4.9).' })
export class ExtrasFilterInput {
  @Field({ description: 'Attribute name; a dot reaches into nested attributes.' })
  name: string;

  @Field(() => [String], {
    description: 'Any of these values (case-insensitive; `*` is a wildcard).',
  })
  values: string[];

  @Field({ defaultValue: false, description: 'Match what does not have any of the values.' })
  negate: boolean;
}

/** Fields of a source or collection; required ones (id, name) are checked on create. */
@InputType('RepositoryInput', { description: 'Only the fields sent change on update.' })
export class RepositoryInput {
  @Field({ nullable: true, description: 'The short code (create only).' })
  id?: string;

  @Field({ nullable: true, description: 'Its name (required on create).' })
  name?: string;

  @Field(() => String, { nullable: true, description: 'Its full name; defaults to `name`.' })
  fullName?: string | null;

  @Field(() => String, { nullable: true, description: 'What it holds, in prose.' })
  description?: string | null;

  @Field(() => String, { nullable: true, description: 'Its website URL.' })
  website?: string | null;

  @Field(() => String, { nullable: true, description: EXTERNAL_ID })
  externalId?: string | null;

  @Field(() => PublicAccess, { nullable: true, description: 'Defaults to `View` on create.' })
  publicAccess?: PublicAccess;

  @Field({ nullable: true, description: 'Its default locale code; defaults to `en` on create.' })
  defaultLocale?: string;

  @Field(() => [String], {
    nullable: true,
    description: 'Its supported locale codes; the default locale is added when missing.',
  })
  supportedLocales?: string[];

  @Field(() => String, {
    nullable: true,
    description: 'The name of its custom validation schema.',
  })
  customValidationSchema?: string | null;

  @Field(() => String, { nullable: true, description: 'Its canonical URL.' })
  canonicalUrl?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: EXTRAS })
  extras?: Record<string, unknown> | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: "OCL's `meta` (display)." })
  meta?: Record<string, unknown> | null;
}

@InputType('SourceInput', { description: 'A source; only the fields sent change on update.' })
export class SourceInput extends RepositoryInput {
  @Field(() => String, {
    nullable: true,
    description: 'E.g. `dictionary` (the default on create), `reference` or `externalDictionary`.',
  })
  sourceType?: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'The URL of one of its concepts, where its hierarchy view starts; null or blank clears it (edits only).',
  })
  hierarchyRootUrl?: string | null;

  @Field(() => String, { nullable: true, description: '`sequential`, `uuid` or null.' })
  autoidConceptMnemonic?: string | null;

  @Field(() => String, { nullable: true, description: AUTOID.conceptExternalId })
  autoidConceptExternalId?: string | null;

  @Field(() => String, { nullable: true, description: AUTOID.mappingMnemonic })
  autoidMappingMnemonic?: string | null;

  @Field(() => String, { nullable: true, description: AUTOID.mappingExternalId })
  autoidMappingExternalId?: string | null;

  @Field(() => Int, { nullable: true, description: AUTOID.conceptMnemonicStartFrom })
  autoidConceptMnemonicStartFrom?: number | null;

  @Field(() => Int, { nullable: true, description: AUTOID.conceptExternalIdStartFrom })
  autoidConceptExternalIdStartFrom?: number | null;

  @Field(() => Int, { nullable: true, description: AUTOID.mappingMnemonicStartFrom })
  autoidMappingMnemonicStartFrom?: number | null;

  @Field(() => Int, { nullable: true, description: AUTOID.mappingExternalIdStartFrom })
  autoidMappingExternalIdStartFrom?: number | null;

  @Field(() => String, { nullable: true, description: AUTOID.conceptNameExternalId })
  autoidConceptNameExternalId?: string | null;

  @Field(() => String, { nullable: true, description: AUTOID.conceptDescriptionExternalId })
  autoidConceptDescriptionExternalId?: string | null;
}

@InputType('CollectionInput', {
  description: 'A collection; only the fields sent change on update.',
})
export class CollectionInput extends RepositoryInput {
  @Field(() => String, { nullable: true, description: COLLECTION_TYPE })
  collectionType?: string | null;

  @Field(() => String, { nullable: true, description: PREFERRED_SOURCE })
  preferredSource?: string | null;
}

@InputType('VersionInput', { description: 'A new version freezes HEAD as it is now.' })
export class VersionInput {
  @Field({ description: 'The version id; not `HEAD`, `latest` or another reserved word.' })
  id: string;

  @Field(() => String, { nullable: true, description: 'What the version holds, in prose.' })
  description?: string | null;

  @Field({ nullable: true, description: 'Mark it released (default false).' })
  released?: boolean;

  @Field({ nullable: true, description: 'Mark it retired (default false).' })
  retired?: boolean;

  @Field(() => String, { nullable: true, description: 'Defaults to the newest version.' })
  previousVersion?: string | null;

  @Field(() => String, { nullable: true, description: EXTERNAL_ID })
  externalId?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: EXTRAS })
  extras?: Record<string, unknown> | null;
}

@InputType('VersionUpdateInput', { description: 'Only the fields sent change.' })
export class VersionUpdateInput {
  @Field(() => String, { nullable: true, description: 'What the version holds, in prose.' })
  description?: string | null;

  @Field({ nullable: true, description: 'Mark it released, or not.' })
  released?: boolean;

  @Field({ nullable: true, description: 'Mark it retired, or not.' })
  retired?: boolean;

  @Field(() => String, { nullable: true, description: EXTERNAL_ID })
  externalId?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: EXTRAS })
  extras?: Record<string, unknown> | null;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: "The version's own `meta` (display).",
  })
  meta?: Record<string, unknown> | null;
}
