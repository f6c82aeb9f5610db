import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, InterfaceType, ObjectType } from 'type-graphql';
import { HEAD } from '../../db/entities';
import { hierarchyRootUrl, repoUrl, ownerUrl, type RepoView } from '../../services';
import { PublicAccess } from './org.type';

@InterfaceType('Repository', {
  description: 'A source or a collection at one of its versions (HEAD included).',
  resolveType: (value: RepositoryObject) =>
    value.view.repo.kind === 'source' ? 'Source' : 'Collection',
})
export abstract class RepositoryObject {
  view: RepoView;

  @Field(() => ID)
  uuid: string;

  @Field({ description: 'The short code used in URLs; never changes.' })
  id: string;

  @Field({ description: '`HEAD` or the version id.' })
  version: string;

  @Field({ description: 'The REST URL of this repository at this version.' })
  url: string;

  @Field()
  name: string;

  @Field(() => String, { nullable: true })
  fullName: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'For a version: its own description if it has one.',
  })
  description: string | null;

  @Field(() => String, { nullable: true })
  website: string | null;

  @Field(() => String, { nullable: true })
  externalId: string | null;

  @Field(() => PublicAccess)
  publicAccess: PublicAccess;

  @Field()
  defaultLocale: string;

  @Field(() => [String])
  supportedLocales: string[];

  @Field(() => String, { nullable: true })
  customValidationSchema: string | null;

  @Field(() => String, { nullable: true })
  canonicalUrl: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  extras: Record<string, unknown> | null;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description:
      "OCL's `meta`: how clients show it (`display.default_filter`); a version has its own.",
  })
  meta: Record<string, unknown> | null;

  @Field({ description: '`Organization` or `User`.' })
  ownerType: string;

  @Field({ description: 'The org id or username of the owner.' })
  owner: string;

  @Field()
  ownerUrl: string;

  @Field({ description: 'False once a collection is deactivated (seen only by superusers).' })
  isActive: boolean;

  @Field({ description: 'Versions only: marked released (the newest released one is `latest`).' })
  released: boolean;

  @Field()
  retired: boolean;

  @Field(() => String, { nullable: true })
  previousVersion: string | null;

  @Field({ description: 'Versions only: true while the version is still being prepared.' })
  processing: boolean;

  @Field()
  createdOn: Date;

  @Field(() => String, { nullable: true })
  createdBy: string | null;

  @Field()
  updatedOn: Date;

  @Field(() => String, { nullable: true })
  updatedBy: string | null;
}

@ObjectType('Source', { implements: RepositoryObject, description: 'A source (spec core §2.4).' })
export class SourceObject extends RepositoryObject {
  @Field(() => String, { nullable: true })
  sourceType: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'The URL of the concept its hierarchy view starts at (one of its own concepts); as frozen by a version.',
  })
  hierarchyRootUrl: string | null;

  @Field(() => String, { nullable: true })
  autoidConceptMnemonic: string | null;

  @Field(() => String, { nullable: true })
  autoidConceptExternalId: string | null;

  @Field(() => String, { nullable: true })
  autoidMappingMnemonic: string | null;

  @Field(() => String, { nullable: true })
  autoidMappingExternalId: string | null;

  @Field(() => Int, { nullable: true })
  autoidConceptMnemonicStartFrom: number | null;

  @Field(() => Int, { nullable: true })
  autoidConceptExternalIdStartFrom: number | null;

  @Field(() => Int, { nullable: true })
  autoidMappingMnemonicStartFrom: number | null;

  @Field(() => Int, { nullable: true })
  autoidMappingExternalIdStartFrom: number | null;

  @Field(() => String, { nullable: true })
  autoidConceptNameExternalId: string | null;

  @Field(() => String, { nullable: true })
  autoidConceptDescriptionExternalId: string | null;
}

@ObjectType('Collection', {
  implements: RepositoryObject,
  description: 'A collection (spec core §2.5).',
})
export class CollectionObject extends RepositoryObject {
  @Field(() => String, { nullable: true })
  collectionType: string | null;

  @Field(() => String, { nullable: true })
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
    publicAccess: repo.publicAccess as PublicAccess, // access follows HEAD, whatever a version froze
    defaultLocale: meta.defaultLocale,
    supportedLocales: meta.supportedLocales,
    customValidationSchema: meta.customValidationSchema,
    canonicalUrl: meta.canonicalUrl,
    extras: meta.extras,
    meta: (isHead ? repo.meta : version.meta) ?? null,
    ownerType: owner.type,
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

  @Field(() => [RepositoryObject])
  items: RepositoryObject[];
}

@ObjectType('SourcePage', {
  description: 'A page of sources: each item is a `Source`, with its concepts and mappings.',
})
export class SourcePage {
  @Field(() => Int, { description: 'Every match, not only this page.' })
  totalCount: number;

  @Field(() => [SourceObject])
  items: RepositoryObject[];
}

@ObjectType('CollectionPage', {
  description:
    'A page of collections: each item is a `Collection`, with its references and expansions.',
})
export class CollectionPage {
  @Field(() => Int, { description: 'Every match, not only this page.' })
  totalCount: number;

  @Field(() => [CollectionObject])
  items: RepositoryObject[];
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

  @Field({ nullable: true })
  name?: string;

  @Field(() => String, { nullable: true })
  fullName?: string | null;

  @Field(() => String, { nullable: true })
  description?: string | null;

  @Field(() => String, { nullable: true })
  website?: string | null;

  @Field(() => String, { nullable: true })
  externalId?: string | null;

  @Field(() => PublicAccess, { nullable: true })
  publicAccess?: PublicAccess;

  @Field({ nullable: true })
  defaultLocale?: string;

  @Field(() => [String], { nullable: true })
  supportedLocales?: string[];

  @Field(() => String, { nullable: true })
  customValidationSchema?: string | null;

  @Field(() => String, { nullable: true })
  canonicalUrl?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  extras?: Record<string, unknown> | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: "OCL's `meta` (display)." })
  meta?: Record<string, unknown> | null;
}

@InputType('SourceInput')
export class SourceInput extends RepositoryInput {
  @Field(() => String, { nullable: true })
  sourceType?: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'The URL of one of its concepts, where its hierarchy view starts; null or blank clears it (edits only).',
  })
  hierarchyRootUrl?: string | null;

  @Field(() => String, { nullable: true, description: '`sequential`, `uuid` or null.' })
  autoidConceptMnemonic?: string | null;

  @Field(() => String, { nullable: true })
  autoidConceptExternalId?: string | null;

  @Field(() => String, { nullable: true })
  autoidMappingMnemonic?: string | null;

  @Field(() => String, { nullable: true })
  autoidMappingExternalId?: string | null;

  @Field(() => Int, { nullable: true })
  autoidConceptMnemonicStartFrom?: number | null;

  @Field(() => Int, { nullable: true })
  autoidConceptExternalIdStartFrom?: number | null;

  @Field(() => Int, { nullable: true })
  autoidMappingMnemonicStartFrom?: number | null;

  @Field(() => Int, { nullable: true })
  autoidMappingExternalIdStartFrom?: number | null;

  @Field(() => String, { nullable: true })
  autoidConceptNameExternalId?: string | null;

  @Field(() => String, { nullable: true })
  autoidConceptDescriptionExternalId?: string | null;
}

@InputType('CollectionInput')
export class CollectionInput extends RepositoryInput {
  @Field(() => String, { nullable: true })
  collectionType?: string | null;

  @Field(() => String, { nullable: true })
  preferredSource?: string | null;
}

@InputType('VersionInput', { description: 'A new version freezes HEAD as it is now.' })
export class VersionInput {
  @Field()
  id: string;

  @Field(() => String, { nullable: true })
  description?: string | null;

  @Field({ nullable: true })
  released?: boolean;

  @Field({ nullable: true })
  retired?: boolean;

  @Field(() => String, { nullable: true, description: 'Defaults to the newest version.' })
  previousVersion?: string | null;

  @Field(() => String, { nullable: true })
  externalId?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  extras?: Record<string, unknown> | null;
}

@InputType('VersionUpdateInput', { description: 'Only the fields sent change.' })
export class VersionUpdateInput {
  @Field(() => String, { nullable: true })
  description?: string | null;

  @Field({ nullable: true })
  released?: boolean;

  @Field({ nullable: true })
  retired?: boolean;

  @Field(() => String, { nullable: true })
  externalId?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  extras?: Record<string, unknown> | null;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: "The version's own `meta` (display).",
  })
  meta?: Record<string, unknown> | null;
}
