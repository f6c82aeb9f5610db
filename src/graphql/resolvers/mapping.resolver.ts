import { Arg, Args, Ctx, FieldResolver, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { AppError } from '../../errors';
import { parseMappingUrl, parseRepoUrl, refOf } from '../../services';
import type { GraphQLContext } from '../context';
import { facetsOf } from '../types/facets.type';
import {
  CreateMappingPayload,
  type MappingPayload,
  mappingPayload,
  ReactivateMappingPayload,
  RetireMappingPayload,
  UpdateMappingPayload,
} from '../types/payloads';
import { ConceptObject } from '../types/concept.type';
import {
  CursorListArgs,
  listParamsOf,
  MappingListArgs,
  mappingListParamsOf,
} from '../types/list.args';
import {
  GlobalMappingArgs,
  globalMappingParamsOf,
  refuseGlobalFilters,
} from '../types/global-list.args';
import { MappingEndObject, MappingInput, MappingObject, MappingPage } from '../types/mapping.type';
import { SourceObject } from '../types/repository.type';

/**
 * One end of a mapping: as read with it, else resolved (batched across the request) without its
 * concept's name, which is read only when the query asks for it.
 */
async function endOf(
  ctx: GraphQLContext,
  mapping: MappingObject,
  side: 'from' | 'to',
): Promise<MappingEndObject> {
  if (mapping.ends) return MappingEndObject.from(mapping.view, side, mapping.ends[side]);
  const ends = await ctx.services.mappings.resolveEnds(ctx, [mapping.view], false);
  const end = ends.get(mapping.view.version.id)![side];
  return MappingEndObject.from(mapping.view, side, end, () =>
    ctx.services.mappings.endName(ctx, mapping.view, side, end),
  );
}

const MAPPING_URL = 'The REST URL of the mapping (`/orgs/O/sources/S/mappings/M/`).';

@Resolver(() => MappingObject)
export class MappingResolver {
  @Query(() => MappingObject, {
    nullable: true,
    description:
      'A mapping by its REST URL (`…/mappings/M/`, `…/v1/mappings/M/`, `…/mappings/M/123/`).',
  })
  async mapping(
    @Arg('url', { description: 'The REST URL of the mapping.' }) url: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MappingObject> {
    const ref = parseMappingUrl(url);
    return MappingObject.from(
      await ctx.services.mappings.get(ctx, ref.source, ref.id, ref.mappingVersion),
    );
  }

  @Query(() => MappingPage, {
    nullable: true,
    description:
      'The mappings of a source (its URL; a version URL lists that version), or without `source` the current mappings of every public source, as REST `/mappings/` (spec core §4.4).',
  })
  async mappings(
    @Arg('source', () => String, {
      nullable: true,
      description:
        'The REST URL of the source, or of one of its versions; none: every public source (`/mappings/`).',
    })
    source: string | null,
    @Args() args: MappingListArgs,
    @Args() global: GlobalMappingArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MappingPage> {
    if (source === null || source === undefined) {
      return MappingPage.of(
        await ctx.services.mappings.listPublic(ctx, globalMappingParamsOf(args, global)),
      );
    }
    refuseGlobalFilters(global, 'source');
    return MappingPage.of(
      await ctx.services.mappings.list(
        ctx,
        parseRepoUrl(source, 'source'),
        mappingListParamsOf(args),
      ),
    );
  }

  @FieldResolver(() => MappingEndObject, { description: 'Its from end.' })
  async from(
    @Root() mapping: MappingObject,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MappingEndObject> {
    return endOf(ctx, mapping, 'from');
  }

  @FieldResolver(() => MappingEndObject, { description: 'Its to end.' })
  async to(@Root() mapping: MappingObject, @Ctx() ctx: GraphQLContext): Promise<MappingEndObject> {
    return endOf(ctx, mapping, 'to');
  }

  @FieldResolver(() => ConceptObject, {
    nullable: true,
    description: 'Null when the end lies outside the service (or out of sight).',
  })
  async fromConcept(
    @Root() mapping: MappingObject,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConceptObject | null> {
    const view = await ctx.services.mappings.endConcept(ctx, mapping.view, 'from');
    return view ? ConceptObject.from(view) : null;
  }

  @FieldResolver(() => ConceptObject, {
    nullable: true,
    description: 'Null when the end lies outside the service (or out of sight).',
  })
  async toConcept(
    @Root() mapping: MappingObject,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConceptObject | null> {
    const view = await ctx.services.mappings.endConcept(ctx, mapping.view, 'to');
    return view ? ConceptObject.from(view) : null;
  }

  @FieldResolver(() => Int, { description: 'Versions of this mapping.' })
  async versionsCount(@Root() mapping: MappingObject, @Ctx() ctx: GraphQLContext): Promise<number> {
    return mapping.versionCount ?? ctx.services.mappings.versionCount(ctx, mapping.view);
  }

  @FieldResolver(() => MappingPage, { description: 'Versions of this mapping, newest first.' })
  async versions(
    @Root() mapping: MappingObject,
    @Args() args: CursorListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MappingPage> {
    return MappingPage.of(
      await ctx.services.mappings.listVersions(
        ctx,
        refOf(mapping.view.source),
        mapping.id,
        listParamsOf(args),
      ),
    );
  }

  @Mutation(() => CreateMappingPayload, {
    description: 'Creates a mapping in a source (its URL) at HEAD.',
  })
  async createMapping(
    @Arg('source', { description: 'The REST URL of the source.' }) source: string,
    @Arg('input', { description: 'The new mapping.' }) input: MappingInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MappingPayload> {
    return mappingPayload(
      CreateMappingPayload,
      MappingObject.of(
        await ctx.services.mappings.create(ctx, parseRepoUrl(source, 'source'), { ...input }),
      ),
    );
  }

  @Mutation(() => UpdateMappingPayload, {
    description: 'A new version of the mapping; an identical edit is refused with UNCHANGED.',
  })
  async updateMapping(
    @Arg('url', { description: MAPPING_URL }) url: string,
    @Arg('input', { description: 'The fields to change.' }) input: MappingInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MappingPayload> {
    const ref = parseMappingUrl(url);
    return mappingPayload(
      UpdateMappingPayload,
      MappingObject.of(await ctx.services.mappings.update(ctx, ref.source, ref.id, { ...input })),
    );
  }

  @Mutation(() => RetireMappingPayload, {
    description: 'Retires the mapping: a new, retired version.',
  })
  async retireMapping(
    @Arg('url', { description: MAPPING_URL }) url: string,
    @Arg('comment', () => String, {
      nullable: true,
      description: 'The comment the new version records.',
    })
    comment: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MappingPayload> {
    const ref = parseMappingUrl(url);
    return mappingPayload(
      RetireMappingPayload,
      MappingObject.from(
        await ctx.services.mappings.retire(ctx, ref.source, ref.id, comment ?? undefined),
      ),
    );
  }

  @Mutation(() => ReactivateMappingPayload, {
    description: 'Reactivates a retired mapping: a new, active version.',
  })
  async reactivateMapping(
    @Arg('url', { description: MAPPING_URL }) url: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MappingPayload> {
    const ref = parseMappingUrl(url);
    return mappingPayload(
      ReactivateMappingPayload,
      MappingObject.from(await ctx.services.mappings.reactivate(ctx, ref.source, ref.id)),
    );
  }
}

/** `Concept.mappings` and `Concept.inverseMappings`, batched across concepts. */
@Resolver(() => ConceptObject)
export class ConceptMappingsResolver {
  @FieldResolver(() => [MappingObject], {
    description: 'Mappings its source holds from this concept.',
  })
  async mappings(
    @Root() concept: ConceptObject,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MappingObject[]> {
    if (concept.detail?.mappings) return concept.detail.mappings.map((m) => MappingObject.of(m));
    return (await ctx.services.mappings.ofConcept(ctx, concept.view, false)).map((view) =>
      MappingObject.from(view),
    );
  }

  @FieldResolver(() => [MappingObject], {
    description: 'Mappings its source holds to this concept.',
  })
  async inverseMappings(
    @Root() concept: ConceptObject,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MappingObject[]> {
    if (concept.detail?.inverseMappings)
      return concept.detail.inverseMappings.map((m) => MappingObject.of(m));
    return (await ctx.services.mappings.ofConcept(ctx, concept.view, true)).map((view) =>
      MappingObject.from(view),
    );
  }

  @FieldResolver(() => MappingPage, {
    description:
      'Its mappings as a page with the list filters, as REST `…/concepts/C/mappings/`: those its source (at the version it was read through) holds from it, and with `includeInverseMappings` those to it after them (then paged by `limit`/`offset` only, its `edges` empty: read `items`).',
  })
  async mappingList(
    @Root() concept: ConceptObject,
    @Arg('includeInverseMappings', {
      defaultValue: false,
      description: 'Also the mappings to this concept, after those from it.',
    })
    includeInverseMappings: boolean,
    @Args() args: MappingListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MappingPage> {
    const { source } = concept.view;
    const ref = {
      ...refOf(source),
      version: source.version.mnemonic === 'HEAD' ? undefined : source.version.mnemonic,
    };
    const params = mappingListParamsOf(args);
    if (!includeInverseMappings) {
      return MappingPage.of(
        await ctx.services.mappings.listForConcept(ctx, ref, concept.id, false, params),
      );
    }
    // Two lists in one (REST pages it by offset only): no keyset, so no cursors.
    if (params.first !== undefined || params.after !== undefined) {
      throw AppError.field(
        params.after !== undefined ? 'after' : 'first',
        'With includeInverseMappings this list pages by limit/offset only.',
      );
    }
    const page = await ctx.services.mappings.listForConcept(ctx, ref, concept.id, true, {
      ...params,
      withCursors: false,
    });
    const items = page.items.map((item) => MappingObject.of(item));
    return {
      totalCount: page.total,
      totalCountExact: page.totalExact !== false,
      items,
      edges: [],
      pageInfo: {
        hasNextPage: page.limit > 0 && page.offset + page.items.length < page.total,
        hasPreviousPage: page.offset > 0,
        startCursor: null,
        endCursor: null,
      },
      facets: facetsOf(page),
    };
  }
}

/** `Source.mappings`: as the source at this version sees them. */
@Resolver(() => SourceObject)
export class SourceMappingsResolver {
  @FieldResolver(() => MappingPage, {
    description: 'Its mappings, as the source at this version holds them.',
  })
  async mappings(
    @Root() source: SourceObject,
    @Args() args: MappingListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MappingPage> {
    const { version } = source.view;
    const ref = {
      ...refOf(source.view),
      version: version.mnemonic === 'HEAD' ? undefined : version.mnemonic,
    };
    return MappingPage.of(await ctx.services.mappings.list(ctx, ref, mappingListParamsOf(args)));
  }
}

@Resolver(() => MappingEndObject)
export class MappingEndResolver {
  @FieldResolver(() => String, {
    nullable: true,
    description: "The target concept's display name, when resolved.",
  })
  async conceptNameResolved(@Root() end: MappingEndObject): Promise<string | null> {
    return typeof end.resolvedName === 'function' ? end.resolvedName() : end.resolvedName;
  }
}
