import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { Args, ArgsType, Ctx, Field, Int, ObjectType, Query, Resolver } from 'type-graphql';
import type { MatchRowResult } from '../../services';
import type { GraphQLContext } from '../context';

@ArgsType()
class MatchArgs {
  @Field(() => String, {
    nullable: true,
    description: 'The source (version) URL to match against.',
  })
  targetRepoUrl?: string | null;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: '`{owner, source, source_version, owner_type}` instead of `targetRepoUrl`.',
  })
  targetRepo?: Record<string, unknown> | null;

  @Field(() => [GraphQLJSONObject], {
    description:
      'Rows of free keys: `id`, `name`, `synonyms`, `description`, `concept_class`, `datatype`, `mapping_code`, `property:<name>`…',
  })
  rows: Array<Record<string, unknown>>;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description:
      '`conceptClass`, `datatype`, `locale`, `target_repo` (a source URL: concepts mapped to it; on the bridging source, the bridge: its concepts reached through the mappings) and `target_repo_map_type`.',
  })
  filter?: Record<string, unknown> | null;

  @Field(() => [GraphQLJSONObject], { nullable: true, description: '`map_config` entries.' })
  mapConfig?: Array<Record<string, unknown>> | null;

  @Field(() => Int, { nullable: true, description: 'Results per row (default 1).' })
  limit?: number | null;

  @Field(() => Int, {
    nullable: true,
    description: 'Results of each row to skip (0 to 10000); by default from `page`.',
  })
  offset?: number | null;

  @Field(() => Int, {
    nullable: true,
    description: 'The page of results of each row, from 1 (default 1).',
  })
  page?: number | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'Full concept details, mappings and names included (default false).',
  })
  verbose?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: 'Minimal fields (default false).' })
  brief?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: 'Retired concepts too (default false).' })
  includeRetired?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: 'Drop `low` matches.' })
  bestMatch?: boolean | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'Semantic matching; refused, as only lexical matching is available.',
  })
  semantic?: boolean | null;

  @Field(() => Int, { nullable: true, description: 'With semantic only: 1 to 3000.' })
  numCandidates?: number | null;

  @Field(() => Int, { nullable: true, description: 'With semantic only: 1 to 100.' })
  kNearest?: number | null;

  @Field(() => String, {
    nullable: true,
    description: 'A custom encoder model; refused, as only lexical matching is available.',
  })
  encoderModel?: string | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'Cross-encoder reranking; with semantic only.',
  })
  reranker?: boolean | null;
}

@ObjectType({
  description: 'One row of a `$match`: the input with `__index`, and its ranked results.',
})
class MatchRowType {
  @Field(() => GraphQLJSONObject, {
    description: 'The input row, with its zero-based `__index` added.',
  })
  row: Record<string, unknown>;

  @Field(() => [GraphQLJSONObject], {
    description: 'The concepts as `$match` answers them over REST, `search_meta` included.',
  })
  results: Array<Record<string, unknown>>;

  @Field(() => [GraphQLJSON], { description: 'The `map_config` given, echoed.' })
  mapConfig: unknown[];

  @Field(() => GraphQLJSONObject, { description: 'The `filter` given, echoed.' })
  filter: Record<string, unknown>;
}

const some = <T>(value: T | null | undefined): T | undefined => value ?? undefined;

/** spec operations §4.5 `$match`, through the same service as `POST /concepts/$match/`. */
@Resolver()
export class MatchResolver {
  @Query(() => [MatchRowType], {
    nullable: true,
    description:
      'Matches rows of local terms to the concepts of a source (lexical, `ocl-search`), or through the bridging source to the concepts of `filter.target_repo` (`ocl-ciel-bridge`).',
  })
  async matchConcepts(
    @Args() args: MatchArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MatchRowType[]> {
    const rows: MatchRowResult[] = await ctx.services.matches.match(
      ctx,
      {
        verbose: some(args.verbose),
        brief: some(args.brief),
        limit: some(args.limit),
        offset: some(args.offset),
        page: some(args.page),
        includeRetired: some(args.includeRetired),
        bestMatch: some(args.bestMatch),
        semantic: some(args.semantic),
        numCandidates: some(args.numCandidates),
        kNearest: some(args.kNearest),
        encoderModel: some(args.encoderModel),
        reranker: some(args.reranker),
      },
      {
        target_repo_url: some(args.targetRepoUrl),
        target_repo: some(args.targetRepo),
        rows: args.rows,
        filter: some(args.filter),
        map_config: some(args.mapConfig),
      },
    );
    return rows.map((r) => ({
      row: r.row,
      results: r.results,
      mapConfig: r.map_config,
      filter: r.filter,
    }));
  }
}
