import { ArgsType, Field, Int } from 'type-graphql';
import { DEFAULT_LIMIT, MAX_FIRST, type ListParams } from '../../services';
import { AppError } from '../../errors';
import { enumTyped, OFFSET } from './descriptions';
import {
  ConceptSort,
  MappingSort,
  OrgSort,
  OwnerType,
  RepositorySort,
  RepositoryType,
  UserSort,
} from './enums';
import { ExtrasFilterInput } from './repository.type';

const EXTRAS_DESCRIPTION = 'Conditions on `extras` attributes, all of which must hold.';

/** The list arguments every GraphQL list takes; they mean what the REST list parameters mean. */
@ArgsType()
export class ListArgs {
  @Field({ nullable: true, description: 'Search text.' })
  q?: string;

  @Field(() => Int, {
    defaultValue: DEFAULT_LIMIT,
    description: 'Page size; 0 returns everything.',
  })
  limit: number;

  @Field(() => Int, {
    defaultValue: 0,
    description: OFFSET,
  })
  offset: number;

  @Field({
    nullable: true,
    description: 'A sort field, as in REST `sortAsc`/`sortDesc` (e.g. `bestMatch`, `name`).',
    deprecationReason:
      'Use `sortBy` (an enum of the sort keys the list accepts; a list without `sortBy` has one order); this argument goes in the next release.',
  })
  sort?: string;

  @Field({ defaultValue: false, description: 'Sort descending.' })
  sortDesc: boolean;

  @Field({ nullable: true, description: 'Only records updated at or after this time.' })
  updatedSince?: Date;
}

/**
 * The list arguments of the lists cursors page too (Relay connections): `first`/`after` beside
 * `limit`/`offset`.
 */
@ArgsType()
export class CursorListArgs extends ListArgs {
  @Field(() => Int, {
    nullable: true,
    description: `Cursor paging: the page size (0 to ${MAX_FIRST}; more is INVALID), instead of \`limit\`. Alone: the first page. Not with \`offset\`.`,
  })
  first?: number;

  @Field(() => String, {
    nullable: true,
    description:
      "Cursor paging: the page after the item with this cursor (an edge `cursor` or `pageInfo.endCursor` of this same list and arguments). Not with `offset`; another list's cursor is INVALID.",
  })
  after?: string;
}

const SORT_BY = 'What to sort by (`sortDesc`: descending).';

@ArgsType()
class OwnerListArgs extends ListArgs {
  @Field(() => [String], { nullable: true, description: 'Any of these companies.' })
  company?: string[];

  @Field({
    defaultValue: false,
    description: "Count the list's facets (REST `includeFacets`), answered in the page's `facets`.",
  })
  includeFacets: boolean;

  @Field(() => [String], { nullable: true, description: 'Any of these locations.' })
  location?: string[];
}

@ArgsType()
export class UserListArgs extends OwnerListArgs {
  @Field(() => UserSort, { nullable: true, description: SORT_BY })
  sortBy?: UserSort;
}

@ArgsType()
export class OrgListArgs extends OwnerListArgs {
  @Field(() => OrgSort, { nullable: true, description: SORT_BY })
  sortBy?: OrgSort;
}

/** An org's members. */
@ArgsType()
export class MemberListArgs extends ListArgs {
  @Field(() => UserSort, { nullable: true, description: SORT_BY })
  sortBy?: UserSort;
}

/** A user's orgs. */
@ArgsType()
export class UserOrgListArgs extends ListArgs {
  @Field(() => OrgSort, { nullable: true, description: SORT_BY })
  sortBy?: OrgSort;
}

/** The sort asked for: `sortBy`, or the deprecated `sort` string; not both. */
function sortFieldOf(args: ListArgs & { sortBy?: string | null }): string | undefined {
  if (args.sortBy != null && args.sort != null) {
    throw AppError.field('sort', 'Not with `sortBy`; `sort` is deprecated.');
  }
  return args.sortBy ?? args.sort ?? undefined;
}

export function listParamsOf(
  args: ListArgs & Partial<Pick<CursorListArgs, 'first' | 'after'>> & { sortBy?: string | null },
  filters: ListParams['filters'] = {},
): ListParams {
  return {
    q: args.q?.trim() || undefined,
    sortField: sortFieldOf(args),
    sortDesc: args.sortDesc,
    limit: args.limit,
    offset: args.offset,
    filters,
    updatedSince: args.updatedSince,
    first: args.first ?? undefined,
    after: args.after ?? undefined,
    withCursors: args instanceof CursorListArgs,
    // The lists that count facets take `includeFacets` (issue 28 parity).
    includeFacets: (args as { includeFacets?: boolean }).includeFacets === true || undefined,
  };
}

/** The arguments of every list of repositories (sources, collections or both). */
@ArgsType()
class RepoCommonListArgs extends ListArgs {
  @Field(() => RepositorySort, { nullable: true, description: SORT_BY })
  sortBy?: RepositorySort;

  @Field(() => [String], { nullable: true, description: 'Any of these supported locales.' })
  locale?: string[];

  @Field(() => [String], { nullable: true, description: 'Any of these canonical URLs.' })
  canonicalUrl?: string[];

  @Field(() => [String], {
    nullable: true,
    description: 'Any of these custom validation schemas.',
  })
  customValidationSchema?: string[];

  @Field({
    nullable: true,
    description: '`Organization` or `User`.',
    deprecationReason: enumTyped('ownerTypes'),
  })
  ownerType?: string;

  @Field(() => [OwnerType], {
    nullable: true,
    description: 'Owned by any of these kinds of owner (none or empty: any).',
  })
  ownerTypes?: OwnerType[];

  @Field({ defaultValue: false, description: 'Every version, not only HEAD.' })
  allVersions: boolean;

  @Field({
    defaultValue: false,
    description: "Count the list's facets (REST `includeFacets`), answered in the page's `facets`.",
  })
  includeFacets: boolean;

  @Field(() => [ExtrasFilterInput], { nullable: true, description: EXTRAS_DESCRIPTION })
  extras?: ExtrasFilterInput[];

  @Field(() => [String], { nullable: true, description: 'Attributes that must be present.' })
  extrasExists?: string[];
}

/** `sources(...)`: no collection-only argument (issue 28). */
@ArgsType()
export class SourceListArgs extends RepoCommonListArgs {
  @Field(() => [String], { nullable: true, description: 'Sources of any of these source types.' })
  sourceType?: string[];
}

/** The collection-only arguments, on `collections` and on `repos` (sources and collections). */
const COLLECTION_TYPE = 'Collections of any of these collection types.';
const CONTAINS = 'Collections referencing any of these URLs.';

/** `collections(...)`: no source-only argument (issue 28). */
@ArgsType()
export class CollectionListArgs extends RepoCommonListArgs {
  @Field(() => [String], { nullable: true, description: COLLECTION_TYPE })
  collectionType?: string[];

  @Field(() => [String], { nullable: true, description: CONTAINS })
  contains?: string[];
}

/** `repos(...)`: sources and collections, so the arguments of both and `repoTypes`. */
@ArgsType()
export class RepoListArgs extends SourceListArgs {
  @Field(() => [String], { nullable: true, description: COLLECTION_TYPE })
  collectionType?: string[];

  @Field(() => [String], { nullable: true, description: CONTAINS })
  contains?: string[];

  @Field({
    nullable: true,
    description: '`Source` or `Collection`.',
    deprecationReason: enumTyped('repoTypes'),
  })
  repoType?: string;

  @Field(() => [RepositoryType], {
    nullable: true,
    description: 'Repositories of any of these kinds (none or empty: both).',
  })
  repoTypes?: RepositoryType[];
}

/** One of the deprecated string and its enum list, as the filter values the services take. */
function oneOf(
  name: string,
  old: string | undefined,
  values: string[] | undefined,
): string[] | undefined {
  if (old != null && values != null) {
    throw AppError.field(name, `Not with \`${name}s\`; \`${name}\` is deprecated.`);
  }
  return old ? [old] : values?.length ? values : undefined;
}

/** The arguments of any list of repositories. */
export type AnyRepoListArgs = SourceListArgs | CollectionListArgs | RepoListArgs;

export function repoListParamsOf(args: AnyRepoListArgs): ListParams {
  const all: Partial<RepoListArgs> = args;
  const params = listParamsOf(args, {
    sourceType: all.sourceType,
    collectionType: all.collectionType,
    locale: args.locale,
    customValidationSchema: all.customValidationSchema,
    canonicalUrl: args.canonicalUrl,
    contains: all.contains,
    ownerType: oneOf('ownerType', args.ownerType, args.ownerTypes),
    repoType: oneOf('repoType', all.repoType, all.repoTypes),
  });
  return {
    ...params,
    allVersions: args.allVersions,
    extras: extrasFilterOf(args.extras, args.extrasExists),
  };
}

@ArgsType()
export class ConceptListArgs extends CursorListArgs {
  @Field(() => ConceptSort, { nullable: true, description: SORT_BY })
  sortBy?: ConceptSort;

  @Field(() => [String], { nullable: true, description: 'Any of these concept classes.' })
  conceptClass?: string[];

  @Field(() => [String], { nullable: true, description: 'Any of these datatypes.' })
  datatype?: string[];

  @Field(() => [String], {
    nullable: true,
    description: 'Concepts with a name in any of these locales.',
  })
  locale?: string[];

  @Field({ defaultValue: false, description: 'Retired concepts too.' })
  includeRetired: boolean;

  @Field({
    defaultValue: false,
    description: "Count the list's facets (REST `includeFacets`), answered in the page's `facets`.",
  })
  includeFacets: boolean;

  @Field(() => [ExtrasFilterInput], { nullable: true, description: EXTRAS_DESCRIPTION })
  extras?: ExtrasFilterInput[];

  @Field(() => [String], { nullable: true, description: 'Attributes that must be present.' })
  extrasExists?: string[];
}

export function conceptListParamsOf(args: ConceptListArgs): ListParams {
  const params = listParamsOf(args, {
    conceptClass: args.conceptClass,
    datatype: args.datatype,
    locale: args.locale,
    includeRetired: args.includeRetired ? ['true'] : undefined,
  });
  return { ...params, extras: extrasFilterOf(args.extras, args.extrasExists) };
}

function extrasFilterOf(
  extras: ExtrasFilterInput[] | undefined,
  exists: string[] | undefined,
): ListParams['extras'] {
  const conditions = (extras ?? []).map((e) => ({
    path: e.name.split('.'),
    values: e.values,
    negate: e.negate,
  }));
  const present = (exists ?? []).map((name) => name.split('.'));
  return conditions.length || present.length ? { conditions, exists: present } : undefined;
}

@ArgsType()
export class MappingListArgs extends CursorListArgs {
  @Field(() => MappingSort, { nullable: true, description: SORT_BY })
  sortBy?: MappingSort;

  @Field(() => [String], { nullable: true, description: 'Any of these map types.' })
  mapType?: string[];

  @Field({ defaultValue: false, description: 'Retired mappings too.' })
  includeRetired: boolean;

  @Field({
    defaultValue: false,
    description: "Count the list's facets (REST `includeFacets`), answered in the page's `facets`.",
  })
  includeFacets: boolean;

  @Field(() => [String], { nullable: true, description: 'Codes of either end.' })
  concept?: string[];

  @Field(() => [String], { nullable: true, description: 'Codes of the from end.' })
  fromConcept?: string[];

  @Field(() => [String], { nullable: true, description: 'Codes of the to end.' })
  toConcept?: string[];

  @Field(() => [String], { nullable: true, description: 'Source ids of either end.' })
  conceptSource?: string[];

  @Field(() => [String], { nullable: true, description: 'Source ids of the from end.' })
  fromConceptSource?: string[];

  @Field(() => [String], { nullable: true, description: 'Source ids of the to end.' })
  toConceptSource?: string[];

  @Field(() => [String], {
    nullable: true,
    description: "Owners (org ids or usernames) of the from end's source.",
  })
  fromConceptOwner?: string[];

  @Field(() => [String], {
    nullable: true,
    description: "Owners (org ids or usernames) of the to end's source.",
  })
  toConceptOwner?: string[];

  @Field(() => [String], {
    nullable: true,
    description: "`Organization` or `User`: the kind of owner of the from end's source.",
  })
  fromConceptOwnerType?: string[];

  @Field(() => [String], {
    nullable: true,
    description: "`Organization` or `User`: the kind of owner of the to end's source.",
  })
  toConceptOwnerType?: string[];

  @Field(() => [String], {
    nullable: true,
    description: 'Only versions written by these users (usernames), as REST `updatedBy`.',
  })
  updatedBy?: string[];
}

export function mappingListParamsOf(args: MappingListArgs): ListParams {
  return listParamsOf(args, {
    mapType: args.mapType,
    includeRetired: args.includeRetired ? ['true'] : undefined,
    concept: args.concept,
    fromConcept: args.fromConcept,
    toConcept: args.toConcept,
    conceptSource: args.conceptSource,
    fromConceptSource: args.fromConceptSource,
    toConceptSource: args.toConceptSource,
    fromConceptOwner: args.fromConceptOwner,
    toConceptOwner: args.toConceptOwner,
    fromConceptOwnerType: args.fromConceptOwnerType,
    toConceptOwnerType: args.toConceptOwnerType,
    updatedBy: args.updatedBy,
  });
}
