import { ArgsType, Field, Int } from 'type-graphql';
import { DEFAULT_LIMIT, MAX_FIRST, type ListParams } from '../../services';
import { OFFSET } from './descriptions';
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

@ArgsType()
export class UserListArgs extends ListArgs {
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
export class OrgListArgs extends UserListArgs {}

export function listParamsOf(
  args: ListArgs & Partial<Pick<CursorListArgs, 'first' | 'after'>>,
  filters: ListParams['filters'] = {},
): ListParams {
  return {
    q: args.q?.trim() || undefined,
    sortField: args.sort,
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

@ArgsType()
export class RepoListArgs extends ListArgs {
  @Field(() => [String], { nullable: true, description: 'Sources of any of these source types.' })
  sourceType?: string[];

  @Field(() => [String], {
    nullable: true,
    description: 'Collections of any of these collection types.',
  })
  collectionType?: string[];

  @Field(() => [String], { nullable: true, description: 'Any of these supported locales.' })
  locale?: string[];

  @Field(() => [String], {
    nullable: true,
    description: 'Any of these custom validation schemas.',
  })
  customValidationSchema?: string[];

  @Field(() => [String], { nullable: true, description: 'Any of these canonical URLs.' })
  canonicalUrl?: string[];

  @Field(() => [String], {
    nullable: true,
    description: 'Collections referencing any of these URLs.',
  })
  contains?: string[];

  @Field({ nullable: true, description: '`Organization` or `User`.' })
  ownerType?: string;

  @Field({ nullable: true, description: '`Source` or `Collection`.' })
  repoType?: string;

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

export function repoListParamsOf(args: RepoListArgs): ListParams {
  const params = listParamsOf(args, {
    sourceType: args.sourceType,
    collectionType: args.collectionType,
    locale: args.locale,
    customValidationSchema: args.customValidationSchema,
    canonicalUrl: args.canonicalUrl,
    contains: args.contains,
    ownerType: args.ownerType ? [args.ownerType] : undefined,
    repoType: args.repoType ? [args.repoType] : undefined,
  });
  return {
    ...params,
    allVersions: args.allVersions,
    extras: extrasFilterOf(args.extras, args.extrasExists),
  };
}

@ArgsType()
export class ConceptListArgs extends CursorListArgs {
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
