import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { ArgsType, Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { AppError } from '../../errors';
import {
  ownerUrl,
  registryEntryUrl,
  type Resolution,
  type UrlRegistryEntryView,
} from '../../services';
import {
  CREATED_BY,
  CREATED_ON,
  EXTRAS,
  renamedTo,
  TOTAL_COUNT,
  UPDATED_BY,
  UPDATED_ON,
} from './descriptions';
import { OwnerType, UrlRegistrySort } from './enums';
import { ListArgs } from './list.args';
import { RepositoryObject, repositoryObject } from './repository.type';

/**
 * `url` is a REST URL everywhere else (issue 28); an entry's own REST URL is `entryUrl`.
 */
const CANONICAL_URL_RENAMED =
  'Renamed `canonicalUrl` (`url` is a REST URL everywhere else; this entry’s is `entryUrl`); this name goes in the next release.';

@ObjectType('UrlRegistryEntry', {
  description: 'An entry of a canonical URL registry (spec operations §2.3).',
})
export class UrlRegistryEntryType {
  @Field(() => ID, { description: 'The entry id.' })
  id: string;

  @Field({
    description: 'The canonical URL.',
    deprecationReason: CANONICAL_URL_RENAMED,
  })
  url: string;

  @Field({ description: 'The canonical URL it registers.' })
  get canonicalUrl(): string {
    return this.url;
  }

  @Field(() => String, {
    nullable: true,
    description:
      'Where the repository registered under the URL lives: `/orgs/:org/` or `/users/:user/`.',
  })
  namespace: string | null;

  @Field(() => String, { nullable: true, description: 'A name for the entry.' })
  name: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: EXTRAS })
  extras: Record<string, unknown> | null;

  @Field({ description: 'False once the entry is deleted (deactivated).' })
  isActive: boolean;

  @Field(() => String, { nullable: true, description: 'Org id or username; null: global.' })
  owner: string | null;

  @Field(() => OwnerType, { nullable: true, description: 'The kind of owner; null: global.' })
  ownerType: OwnerType | null;

  @Field({ description: '`/` for the global registry.' })
  ownerUrl: string;

  @Field({ description: 'The REST URL of this entry.' })
  entryUrl: string;

  @Field({ description: CREATED_ON, deprecationReason: renamedTo('createdOn') })
  createdAt: Date;

  @Field({ description: CREATED_ON })
  get createdOn(): Date {
    return this.createdAt;
  }

  @Field(() => String, { nullable: true, description: CREATED_BY })
  createdBy: string | null;

  @Field({ description: UPDATED_ON, deprecationReason: renamedTo('updatedOn') })
  updatedAt: Date;

  @Field({ description: UPDATED_ON })
  get updatedOn(): Date {
    return this.updatedAt;
  }

  @Field(() => String, { nullable: true, description: UPDATED_BY })
  updatedBy: string | null;

  static from(view: UrlRegistryEntryView): UrlRegistryEntryType {
    const { entry, owner } = view;
    return Object.assign(new UrlRegistryEntryType(), {
      id: entry.id,
      url: entry.url,
      namespace: entry.namespace,
      name: entry.name,
      extras: entry.extras,
      isActive: entry.isActive,
      owner: owner?.id ?? null,
      ownerType: (owner?.type as OwnerType | undefined) ?? null,
      ownerUrl: owner ? ownerUrl(owner) : '/',
      entryUrl: registryEntryUrl(view),
      createdAt: entry.createdAt,
      createdBy: entry.createdBy,
      updatedAt: entry.updatedAt,
      updatedBy: entry.updatedBy,
    });
  }
}

@ObjectType('UrlRegistryPage', { description: 'A page of URL registry entries.' })
export class UrlRegistryPage {
  @Field(() => Int, { description: TOTAL_COUNT })
  totalCount: number;

  @Field(() => [UrlRegistryEntryType], { description: 'The entries of this page.' })
  items: UrlRegistryEntryType[];
}

@InputType('UrlRegistryEntryInput', { description: 'Only the fields sent change on update.' })
export class UrlRegistryEntryInput {
  @Field({
    nullable: true,
    description: 'The canonical URL.',
    deprecationReason: CANONICAL_URL_RENAMED,
  })
  url?: string;

  @Field({ nullable: true, description: 'The canonical URL it registers (required on create).' })
  canonicalUrl?: string;

  @Field(() => String, {
    nullable: true,
    description:
      'Where the repository registered under the URL lives: `/orgs/:org/` or `/users/:user/`.',
  })
  namespace?: string | null;

  @Field(() => String, { nullable: true, description: 'A name for the entry.' })
  name?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: EXTRAS })
  extras?: Record<string, unknown> | null;
}

/** An entry input as the service takes it: `canonicalUrl` (or the deprecated `url`) as `url`. */
export function entryInputOf(input: UrlRegistryEntryInput): Record<string, unknown> {
  const { canonicalUrl, ...rest } = input;
  if (canonicalUrl == null) return { ...rest };
  if (rest.url != null) {
    throw AppError.field('canonicalUrl', 'Not with `url`; `url` is deprecated.');
  }
  return { ...rest, url: canonicalUrl };
}

@ArgsType()
export class UrlRegistryListArgs extends ListArgs {
  @Field(() => UrlRegistrySort, {
    nullable: true,
    description: 'What to sort by (`sortDesc`: descending).',
  })
  sortBy?: UrlRegistrySort;

  @Field({
    nullable: true,
    description: 'Entries for exactly this canonical URL.',
    deprecationReason: CANONICAL_URL_RENAMED,
  })
  url?: string;

  @Field({ nullable: true, description: 'Entries for exactly this canonical URL.' })
  canonicalUrl?: string;

  @Field({ nullable: true, description: 'Entries pointing at this namespace (`/orgs/:org/`).' })
  namespace?: string;
}

@ObjectType('ReferenceResolution', {
  description: 'What one reference resolved to (spec operations §2.5).',
})
export class ReferenceResolutionType {
  @Field({ description: '`relative` or `canonical`.' })
  referenceType: string;

  @Field({ description: 'When it was resolved.', deprecationReason: renamedTo('resolvedOn') })
  timestamp: Date;

  @Field({ description: 'When it was resolved.' })
  get resolvedOn(): Date {
    return this.timestamp;
  }

  @Field({ description: 'Whether it resolved to a repository.' })
  resolved: boolean;

  @Field(() => GraphQLJSON, { description: 'The reference as given.' })
  request: unknown;

  @Field(() => String, {
    nullable: true,
    description: 'The repository URL without concept path, parameters or piped version.',
  })
  resolutionUrl: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The REST URL of the registry entry used, if one was.',
  })
  urlRegistryEntry: string | null;

  @Field(() => RepositoryObject, {
    nullable: true,
    description: 'The repository at the version the reference resolved to.',
  })
  result: RepositoryObject | null;

  static from(resolution: Resolution, timestamp: Date): ReferenceResolutionType {
    return Object.assign(new ReferenceResolutionType(), {
      referenceType: resolution.referenceType,
      timestamp,
      resolved: resolution.resolved,
      request: resolution.request,
      resolutionUrl: resolution.resolutionUrl,
      urlRegistryEntry: resolution.registryEntryUrl,
      result: resolution.repo ? repositoryObject(resolution.repo) : null,
    });
  }
}
