import DataLoader from 'dataloader';
import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { AppError } from '../../errors';
import {
  parseRepoUrl,
  refOf,
  type ExpansionCounts,
  type ExpansionView,
  type RepoRef,
  type RepoView,
} from '../../services';
import type { GraphQLContext } from '../context';
import { type DeletePayload, payloadOf, slashed, userError } from '../types/payload.type';
import {
  AddReferencesPayload,
  CreateExpansionPayload,
  deleted,
  DeleteExpansionPayload,
  type ExpansionPayload,
  expansionPayload,
  ReevaluateExpansionPayload,
  RemoveReferencesPayload,
} from '../types/payloads';
import {
  ExpansionListArgs,
  ExpansionObject,
  ExpansionPage,
  ExpansionRepoUpdateObject,
  ExpansionSummaryObject,
  ReferenceListArgs,
  resourceTypeFilterOf,
  ReferenceObject,
  ReferencePage,
  ReferencesAddedObject,
} from '../types/collection.type';
import { ConceptPage } from '../types/concept.type';
import {
  ConceptListArgs,
  conceptListParamsOf,
  listParamsOf,
  MappingListArgs,
  mappingListParamsOf,
} from '../types/list.args';
import { MappingPage } from '../types/mapping.type';
import { CollectionObject } from '../types/repository.type';

const COLLECTION_URL =
  'The collection URL (`/orgs/:org/collections/:collection/`); a version URL names that version.';

const MNEMONIC = 'The mnemonic that identifies the expansion in its URL.';

/** The collection at a version, by default the one it was read at. */
function versionRefOf(view: RepoView, version: string = view.version.mnemonic): RepoRef {
  return { ...refOf(view), version };
}

/** Per request (keyed by its loaders): every `Expansion.summary` asked is one service call. */
const summaryLoaders = new WeakMap<object, DataLoader<ExpansionView, ExpansionCounts, string>>();

function summaryLoader(ctx: GraphQLContext): DataLoader<ExpansionView, ExpansionCounts, string> {
  let loader = summaryLoaders.get(ctx.loaders);
  if (!loader) {
    loader = new DataLoader<ExpansionView, ExpansionCounts, string>(
      async (views) => {
        const counts = await ctx.services.expansions.summaries(ctx, [...views]);
        return views.map(
          (view) => counts.get(view.expansion.id) ?? { activeConcepts: 0, activeMappings: 0 },
        );
      },
      { cacheKeyFn: (view) => view.expansion.id },
    );
    summaryLoaders.set(ctx.loaders, loader);
  }
  return loader;
}

/** `Collection.references/expansions/concepts/mappings`, as the collection version read sees them. */
@Resolver(() => CollectionObject)
export class CollectionContentResolver {
  @FieldResolver(() => ReferencePage, {
    description: 'References of this version; `q` searches the expressions.',
  })
  async references(
    @Root() collection: CollectionObject,
    @Args() args: ReferenceListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ReferencePage> {
    const params = listParamsOf(args, {
      include: args.include === undefined ? undefined : [String(args.include)],
      resourceType: resourceTypeFilterOf(args),
    });
    const page = await ctx.services.references.listReferences(
      ctx,
      versionRefOf(collection.view),
      params,
    );
    return ReferencePage.of(page);
  }

  @FieldResolver(() => ExpansionPage, {
    description: 'Expansions of this version (with `allVersions`, of every version).',
  })
  async expansions(
    @Root() collection: CollectionObject,
    @Args() args: ExpansionListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ExpansionPage> {
    // The service lists across versions when the reference names none.
    const ref = args.allVersions
      ? { ...refOf(collection.view), version: undefined }
      : versionRefOf(collection.view);
    const page = await ctx.services.expansions.listExpansions(ctx, ref, {
      limit: args.limit,
      offset: args.offset,
      filters: {},
    });
    return { totalCount: page.total, items: page.items.map((view) => ExpansionObject.from(view)) };
  }

  @FieldResolver(() => ConceptPage, {
    description:
      "Concepts of this version's default expansion (HEAD: the auto-expansion that follows its references).",
  })
  async concepts(
    @Root() collection: CollectionObject,
    @Args() args: ConceptListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConceptPage> {
    return ConceptPage.of(
      await ctx.services.collections.listConcepts(
        ctx,
        versionRefOf(collection.view),
        conceptListParamsOf(args),
      ),
    );
  }

  @FieldResolver(() => MappingPage, {
    description: "Mappings of this version's default expansion.",
  })
  async mappings(
    @Root() collection: CollectionObject,
    @Args() args: MappingListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MappingPage> {
    return MappingPage.of(
      await ctx.services.collections.listMappings(
        ctx,
        versionRefOf(collection.view),
        mappingListParamsOf(args),
      ),
    );
  }
}

/** References and expansions: the reads and writes of spec operations §1.1, §4.1. */
@Resolver(() => ExpansionObject)
export class CollectionResolver {
  @Query(() => ReferenceObject, {
    nullable: true,
    description: 'One reference of a collection version.',
  })
  async collectionReference(
    @Arg('collection', { description: COLLECTION_URL }) collection: string,
    @Arg('id', () => ID, { description: 'The reference id.' }) id: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ReferenceObject> {
    return ReferenceObject.from(
      await ctx.services.references.getReference(ctx, parseRepoUrl(collection, 'collection'), id),
    );
  }

  @Query(() => ExpansionObject, {
    nullable: true,
    description: 'An expansion of a collection version.',
  })
  async expansion(
    @Arg('collection', { description: COLLECTION_URL }) collection: string,
    @Arg('mnemonic', { description: MNEMONIC }) mnemonic: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ExpansionObject> {
    return ExpansionObject.from(
      await ctx.services.expansions.getExpansion(
        ctx,
        parseRepoUrl(collection, 'collection'),
        mnemonic,
      ),
    );
  }

  @FieldResolver(() => ExpansionSummaryObject, {
    description: 'Active concepts and mappings (batched over every expansion of the request).',
  })
  async summary(
    @Root() expansion: ExpansionObject,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ExpansionSummaryObject> {
    return summaryLoader(ctx).load(expansion.view);
  }

  @FieldResolver(() => [ExpansionRepoUpdateObject], {
    description:
      'The repository versions it resolved whose repositories now resolve to another version (REST `resolved-repo-updates/`).',
  })
  async repoUpdates(
    @Root() expansion: ExpansionObject,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ExpansionRepoUpdateObject[]> {
    const { collection, expansion: e } = expansion.view;
    return ctx.services.expansions.repoUpdates(
      ctx,
      versionRefOf(collection, e.versionMnemonic),
      e.mnemonic,
    );
  }

  @FieldResolver(() => ConceptPage, { description: 'The concepts this expansion holds.' })
  async concepts(
    @Root() expansion: ExpansionObject,
    @Args() args: ConceptListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConceptPage> {
    const { collection, expansion: e } = expansion.view;
    return ConceptPage.of(
      await ctx.services.collections.listConcepts(
        ctx,
        versionRefOf(collection, e.versionMnemonic),
        conceptListParamsOf(args),
        e.mnemonic,
      ),
    );
  }

  @FieldResolver(() => MappingPage, { description: 'The mappings this expansion holds.' })
  async mappings(
    @Root() expansion: ExpansionObject,
    @Args() args: MappingListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MappingPage> {
    const { collection, expansion: e } = expansion.view;
    return MappingPage.of(
      await ctx.services.collections.listMappings(
        ctx,
        versionRefOf(collection, e.versionMnemonic),
        mappingListParamsOf(args),
        e.mnemonic,
      ),
    );
  }

  @Mutation(() => AddReferencesPayload, {
    description:
      'Adds references to HEAD: anything the REST `data` accepts (expressions, `{expressions}`, `{concepts, mappings, uri}`, expanded-form objects). Each answers on its own. An add of more than 2,000 references, or with `background: true`, runs as a task, exactly as `PUT …/references/` does.',
  })
  async addReferences(
    @Arg('collection', { description: COLLECTION_URL }) collection: string,
    @Arg('references', () => GraphQLJSON, {
      description: 'The references, in any form the REST `data` accepts.',
    })
    references: unknown,
    @Arg('cascade', () => String, {
      nullable: true,
      description: '`sourcemappings` or `sourcetoconcepts`, for the concept references.',
    })
    cascade: string | null,
    @Arg('background', {
      defaultValue: false,
      description: 'Queue the add as a task and answer the task at once (REST `?async=true`).',
    })
    background: boolean,
    @Ctx() ctx: GraphQLContext,
  ): Promise<AddReferencesPayload> {
    const ref = parseRepoUrl(collection, 'collection');
    const added = ReferencesAddedObject.from(
      await ctx.services.references.addReferencesOrQueue(
        ctx,
        ref,
        { data: references },
        { cascade, background },
      ),
    );
    const results = added.results ?? [];
    return payloadOf(AddReferencesPayload, {
      url: slashed(collection),
      results: added.results,
      task: added.task,
      addedCount: results.filter((r) => r.added).length,
      userErrors: results.flatMap((r, index) =>
        r.added ? [] : [userError(['references', index], r.message, 'NOT_ADDED')],
      ),
    });
  }

  @Mutation(() => RemoveReferencesPayload, {
    description:
      'Removes references from HEAD (versions keep theirs): by expression, by id, or `all`. Answers those removed, and in `userErrors` the expressions or ids that matched none.',
  })
  async removeReferences(
    @Arg('collection', { description: COLLECTION_URL }) collection: string,
    @Arg('expressions', () => [String], {
      nullable: true,
      description: 'Remove the references with these expressions.',
    })
    expressions: string[] | null,
    @Arg('ids', () => [ID], {
      nullable: true,
      description: 'Remove the references with these ids.',
    })
    ids: string[] | null,
    @Arg('all', { defaultValue: false, description: 'Remove every reference.' }) all: boolean,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RemoveReferencesPayload> {
    if ([expressions != null, ids != null, all].filter(Boolean).length > 1) {
      throw AppError.invalid('Give one of expressions, ids or all.');
    }
    const ref = parseRepoUrl(collection, 'collection');
    const body = all ? { expressions: '*' } : expressions ? { expressions } : { ids };
    const removed = await ctx.services.references.removeReferencesListed(ctx, ref, body);
    const removedIds = new Set(removed.map((r) => r.id));
    const removedExpressions = new Set(removed.map((r) => r.expression));
    const unmatched = all
      ? []
      : expressions
        ? expressions.flatMap((e, index) =>
            removedExpressions.has(e) ? [] : [{ field: ['expressions', index], name: e }],
          )
        : (ids ?? []).flatMap((id, index) =>
            removedIds.has(id) ? [] : [{ field: ['ids', index], name: id }],
          );
    return payloadOf(RemoveReferencesPayload, {
      url: slashed(collection),
      removedCount: removed.length,
      removedIds: [...removedIds],
      userErrors: unmatched.map((u) =>
        userError(u.field, `No reference '${u.name}' at HEAD.`, 'NOT_FOUND'),
      ),
    });
  }

  @Mutation(() => CreateExpansionPayload, {
    description: 'Evaluates a collection version (its URL; none: HEAD) under the parameters.',
  })
  async createExpansion(
    @Arg('collection', { description: COLLECTION_URL }) collection: string,
    @Arg('mnemonic', { description: MNEMONIC }) mnemonic: string,
    @Arg('parameters', () => GraphQLJSONObject, {
      description: 'The expansion parameters (spec operations §2.2); `{}` for the defaults.',
    })
    parameters: Record<string, unknown>,
    @Arg('canonicalUrl', () => String, {
      nullable: true,
      description: "The expansion's canonical URL; none: the collection's.",
    })
    canonicalUrl: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ExpansionPayload> {
    return expansionPayload(
      CreateExpansionPayload,
      ExpansionObject.from(
        await ctx.services.expansions.createExpansion(ctx, parseRepoUrl(collection, 'collection'), {
          mnemonic,
          parameters,
          canonicalUrl,
        }),
      ),
    );
  }

  @Mutation(() => ReevaluateExpansionPayload, {
    description:
      "Evaluates an expansion's references again with its parameters (REST `re-evaluate/`): references without a version read what their repositories resolve to now.",
  })
  async reevaluateExpansion(
    @Arg('collection', { description: COLLECTION_URL }) collection: string,
    @Arg('mnemonic', { description: MNEMONIC }) mnemonic: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ExpansionPayload> {
    return expansionPayload(
      ReevaluateExpansionPayload,
      ExpansionObject.from(
        await ctx.services.expansions.reevaluate(
          ctx,
          parseRepoUrl(collection, 'collection'),
          mnemonic,
        ),
      ),
    );
  }

  @Mutation(() => DeleteExpansionPayload, {
    description: "Deletes an expansion; never HEAD's auto-expansion.",
  })
  async deleteExpansion(
    @Arg('collection', { description: COLLECTION_URL }) collection: string,
    @Arg('mnemonic', { description: MNEMONIC }) mnemonic: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<DeletePayload> {
    const ref = parseRepoUrl(collection, 'collection');
    await ctx.services.expansions.deleteExpansion(ctx, ref, mnemonic);
    return deleted(
      DeleteExpansionPayload,
      mnemonic,
      `${slashed(collection)}expansions/${mnemonic}/`,
    );
  }
}
