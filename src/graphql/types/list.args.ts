import { ArgsType, Field, Int } from 'type-graphql';
import { DEFAULT_LIMIT, type ListParams } from '../../services';

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

  @Field(() => Int, { defaultValue: 0 })
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

@ArgsType()
export class UserListArgs extends ListArgs {
  @Field(() => [String], { nullable: true, description: 'Any of these companies.' })
  company?: string[];

  @Field(() => [String], { nullable: true, description: 'Any of these locations.' })
  location?: string[];
}

@ArgsType()
export class OrgListArgs extends UserListArgs {}

export function listParamsOf(args: ListArgs, filters: ListParams['filters'] = {}): ListParams {
  return {
    q: args.q?.trim() || undefined,
    sortField: args.sort,
    sortDesc: args.sortDesc,
    limit: args.limit,
    offset: args.offset,
    filters,
    updatedSince: args.updatedSince,
  };
}
