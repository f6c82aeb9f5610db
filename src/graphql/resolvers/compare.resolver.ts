import { Arg, Ctx, FieldResolver, Query, Resolver, Root } from 'type-graphql';
import { changelogMarkdown } from '../../services';
import type { GraphQLContext } from '../context';
import {
  ChangelogObject,
  ConceptChangeObject,
  MappingChangeObject,
  VersionComparisonObject,
} from '../types/compare.type';

/** OCL's `$compare` and `$changelog` of two versions of one source, typed. */
@Resolver(() => VersionComparisonObject)
export class CompareResolver {
  @Query(() => VersionComparisonObject, {
    nullable: true,
    description:
      'Two versions of one source (their URLs, in either order; a source URL is HEAD) compared: REST `$compare`. Signed-in readers of the source.',
  })
  async compareSourceVersions(
    @Arg('version1', { description: 'The URL of one source version.' }) version1: string,
    @Arg('version2', { description: 'The URL of the other source version.' }) version2: string,
    @Arg('includeSameCodes', {
      defaultValue: false,
      description: 'List the unchanged codes too (`sameCodes`), as REST `verbosity` 3 and up.',
    })
    includeSameCodes: boolean,
    @Ctx() ctx: GraphQLContext,
  ): Promise<VersionComparisonObject> {
    const input = { version1, version2 };
    return VersionComparisonObject.from(
      await ctx.services.versionComparisons.compare(ctx, input, { sameCodes: includeSameCodes }),
      input,
    );
  }

  @FieldResolver(() => ChangelogObject, {
    description: 'Each changed concept and mapping described: REST `$changelog`.',
  })
  async changelog(
    @Root() comparison: VersionComparisonObject,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ChangelogObject> {
    const log = await ctx.services.versionComparisons.changelog(ctx, comparison.input);
    return {
      concepts: log.concepts.map((c) => ConceptChangeObject.from(c)),
      mappings: log.mappings.map((m) => MappingChangeObject.from(m)),
      markdown: changelogMarkdown(log),
    };
  }
}
