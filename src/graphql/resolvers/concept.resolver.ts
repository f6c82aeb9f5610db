import { Kind, type GraphQLResolveInfo } from 'graphql';
import {
  Arg,
  Args,
  Ctx,
  FieldResolver,
  Info,
  Int,
  Mutation,
  Query,
  Resolver,
  Root,
} from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { HEAD } from '../../db/entities';
import { AppError } from '../../errors';
import { parseConceptUrl, parseRepoUrl, refOf, type RepoRef, type RepoView } from '../../services';
import type { GraphQLContext } from '../context';
import { payloadOf, slashed, userError } from '../types/payload.type';
import {
  CloneConceptsPayload,
  type ConceptPayload,
  conceptPayload,
  CreateConceptPayload,
  ReactivateConceptPayload,
  RetireConceptPayload,
  UpdateConceptPayload,
} from '../types/payloads';
import {
  CascadeArgs,
  cascadeInputOf,
  CascadeResultObject,
  CloneOutcomeObject,
} from '../types/cascade.type';
import { ConceptInput, ConceptObject, ConceptPage } from '../types/concept.type';
import {
  ConceptListArgs,
  conceptListParamsOf,
  CursorListArgs,
  listParamsOf,
} from '../types/list.args';
import {
  GlobalConceptArgs,
  globalConceptParamsOf,
  refuseGlobalFilters,
} from '../types/global-list.args';
import { repositoryObject, SourceObject, type RepositoryObject } from '../types/repository.type';

/** Whether the query selects this field directly on the resolved object (fragments aside). */
function selects(info: GraphQLResolveInfo, field: string): boolean {
  return info.fieldNodes.some((node) =>
    node.selectionSet?.selections.some(
      (selection) => selection.kind === Kind.FIELD && selection.name.value === field,
    ),
  );
}

/** `Concept.cascade(repository:)`: a source or collection (version) URL. */
function repositoryArg(url: string): RepoRef {
  try {
    return parseRepoUrl(url);
  } catch {
    throw AppError.field('repository', `'${url}' is not a source or collection URL.`);
  }
}

const CONCEPT_URL = 'The REST URL of the concept (`/orgs/O/sources/S/concepts/C/`).';

const ONLY_HIERARCHY_ROOT =
  "true: only the source's hierarchy root (`hierarchyRootUrl`), none without one.";

/** A source version (a concept's, a `Source` object's), as a reference reading it again. */
function viewRef(view: RepoView): RepoRef {
  const { version } = view;
  return {
    ...refOf(view),
    version: version.mnemonic === HEAD ? undefined : version.mnemonic,
  };
}

@Resolver(() => ConceptObject)
export class ConceptResolver {
  @Query(() => ConceptObject, {
    nullable: true,
    description:
      'A concept by its REST URL: at HEAD, as of a source version (`…/v1/concepts/C/`), or a concept version (`…/concepts/C/123/`).',
  })
  async concept(
    @Arg('url', { description: CONCEPT_URL }) url: string,
    @Ctx() ctx: GraphQLContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<ConceptObject> {
    const ref = parseConceptUrl(url);
    // The mappings the query selects come with the concept's one read (its detail).
    const include = {
      mappings: selects(info, 'mappings'),
      inverseMappings: selects(info, 'inverseMappings'),
    };
    return ConceptObject.of(
      await ctx.services.concepts.detail(ctx, ref.source, ref.id, ref.conceptVersion, include),
    );
  }

  @Query(() => ConceptPage, {
    nullable: true,
    description:
      'The concepts of a source (its URL; a version URL lists that version), or without `source` the current concepts of every public source, as REST `/concepts/` (spec core §4.3).',
  })
  async concepts(
    @Arg('source', () => String, {
      nullable: true,
      description:
        'The REST URL of the source, or of one of its versions; none: every public source (`/concepts/`).',
    })
    source: string | null,
    @Args() args: ConceptListArgs,
    @Arg('onlyHierarchyRoot', { defaultValue: false, description: ONLY_HIERARCHY_ROOT })
    onlyHierarchyRoot: boolean,
    @Args() global: GlobalConceptArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConceptPage> {
    if (source === null || source === undefined) {
      if (onlyHierarchyRoot) {
        throw AppError.field('onlyHierarchyRoot', "Only with `source`: a source's hierarchy root.");
      }
      return ConceptPage.of(
        await ctx.services.concepts.listPublic(ctx, globalConceptParamsOf(args, global)),
      );
    }
    refuseGlobalFilters(global, 'source');
    return ConceptPage.of(
      await ctx.services.concepts.list(
        ctx,
        parseRepoUrl(source, 'source'),
        conceptListParamsOf(args),
        { onlyHierarchyRoot },
      ),
    );
  }

  @FieldResolver(() => Boolean, {
    description:
      'Whether concepts (not retired) of the source version it was read through name it among their parents.',
  })
  async hasChildren(@Root() concept: ConceptObject, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    return concept.view.hasChildren ?? ctx.services.concepts.hasChildren(ctx, concept.view);
  }

  @FieldResolver(() => ConceptPage, {
    description:
      'Its children in the source version it was read through: the concepts naming it among their parents.',
  })
  async children(
    @Root() concept: ConceptObject,
    @Args() args: ConceptListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConceptPage> {
    return ConceptPage.of(
      await ctx.services.concepts.children(
        ctx,
        viewRef(concept.view.source),
        concept.id,
        conceptListParamsOf(args),
      ),
    );
  }

  @FieldResolver(() => ConceptPage, {
    description: 'Its parents, as the source version it was read through holds them.',
  })
  async parents(
    @Root() concept: ConceptObject,
    @Args() args: ConceptListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConceptPage> {
    return ConceptPage.of(
      await ctx.services.concepts.parents(
        ctx,
        viewRef(concept.view.source),
        concept.id,
        conceptListParamsOf(args),
      ),
    );
  }

  @FieldResolver(() => Int, { description: 'Versions of this concept.' })
  async versionsCount(@Root() concept: ConceptObject, @Ctx() ctx: GraphQLContext): Promise<number> {
    if (concept.detail) return concept.detail.versionCount;
    return ctx.services.concepts.versionCount(ctx, concept.view);
  }

  @FieldResolver(() => ConceptPage, { description: 'Versions of this concept, newest first.' })
  async versions(
    @Root() concept: ConceptObject,
    @Args() args: CursorListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConceptPage> {
    const { source } = concept.view;
    return ConceptPage.of(
      await ctx.services.concepts.listVersions(ctx, refOf(source), concept.id, listParamsOf(args)),
    );
  }

  @FieldResolver(() => CascadeResultObject, {
    description:
      '`$cascade` from this concept (spec operations §4.2), in the source version it was read through.',
  })
  async cascade(
    @Root() concept: ConceptObject,
    @Args() args: CascadeArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CascadeResultObject> {
    const { source } = concept.view;
    const repository = args.repository
      ? repositoryArg(args.repository)
      : { ...refOf(source), version: source.version.mnemonic };
    return CascadeResultObject.from(
      await ctx.services.cascade.cascade(ctx, repository, concept.id, cascadeInputOf(args)),
    );
  }

  @Mutation(() => CloneConceptsPayload, {
    description:
      'Copies concepts (each expression and what the cascade reaches from it) into a source (its URL), as REST `$clone` (spec operations §4.3).',
  })
  async cloneConcepts(
    @Arg('destination', { description: 'The REST URL of the source to copy into (at HEAD).' })
    destination: string,
    @Arg('expressions', () => [String], {
      description: 'The concepts to copy, as references (concept URLs); at least one.',
    })
    expressions: string[],
    @Arg('parameters', () => GraphQLJSONObject, {
      nullable: true,
      description: 'Cascade parameters, as `$cascade` names them.',
    })
    parameters: Record<string, unknown> | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CloneConceptsPayload> {
    const ref = parseRepoUrl(destination, 'source');
    const outcomes = CloneOutcomeObject.list(
      await ctx.services.clone.clone(ctx, ref, {
        expressions,
        ...(parameters ? { parameters } : {}),
      }),
    );
    return payloadOf(CloneConceptsPayload, {
      url: slashed(destination),
      outcomes,
      concepts: outcomes.flatMap((o) => o.concepts),
      userErrors: outcomes.flatMap((o, index) =>
        o.code === null ? [] : [userError(['expressions', index], o.message ?? o.code, o.code)],
      ),
    });
  }

  @FieldResolver(() => SourceObject, {
    description: 'The source (at the version) this concept was read through.',
  })
  source(@Root() concept: ConceptObject): RepositoryObject {
    return repositoryObject(concept.view.source);
  }

  @Mutation(() => CreateConceptPayload, {
    description: 'Creates a concept in a source (its URL) at HEAD.',
  })
  async createConcept(
    @Arg('source', { description: 'The REST URL of the source.' }) source: string,
    @Arg('input', { description: 'The new concept.' }) input: ConceptInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConceptPayload> {
    return conceptPayload(
      CreateConceptPayload,
      ConceptObject.of(
        await ctx.services.concepts.create(ctx, parseRepoUrl(source, 'source'), { ...input }),
      ),
    );
  }

  @Mutation(() => UpdateConceptPayload, {
    description:
      'A new version of the concept; an identical edit is refused with UNCHANGED. `replace` requires the names, as REST PUT does.',
  })
  async updateConcept(
    @Arg('url', { description: CONCEPT_URL }) url: string,
    @Arg('input', { description: 'The fields to change.' }) input: ConceptInput,
    @Arg('replace', {
      defaultValue: false,
      description: 'Replace the whole concept, as REST PUT does; false: change what is sent.',
    })
    replace: boolean,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConceptPayload> {
    const ref = parseConceptUrl(url);
    return conceptPayload(
      UpdateConceptPayload,
      ConceptObject.of(
        await ctx.services.concepts.update(
          ctx,
          ref.source,
          ref.id,
          { ...input },
          replace ? 'replace' : 'partial',
        ),
      ),
    );
  }

  @Mutation(() => RetireConceptPayload, {
    description: 'Retires the concept: a new, retired version.',
  })
  async retireConcept(
    @Arg('url', { description: CONCEPT_URL }) url: string,
    @Arg('comment', () => String, {
      nullable: true,
      description: 'The comment the new version records.',
    })
    comment: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConceptPayload> {
    const ref = parseConceptUrl(url);
    return conceptPayload(
      RetireConceptPayload,
      ConceptObject.from(
        await ctx.services.concepts.retire(ctx, ref.source, ref.id, comment ?? undefined),
      ),
    );
  }

  @Mutation(() => ReactivateConceptPayload, {
    description: 'Reactivates a retired concept: a new, active version.',
  })
  async reactivateConcept(
    @Arg('url', { description: CONCEPT_URL }) url: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConceptPayload> {
    const ref = parseConceptUrl(url);
    return conceptPayload(
      ReactivateConceptPayload,
      ConceptObject.from(await ctx.services.concepts.reactivate(ctx, ref.source, ref.id)),
    );
  }
}

/** `Source.concepts`: the concepts as the source at this version sees them. */
@Resolver(() => SourceObject)
export class SourceConceptsResolver {
  @FieldResolver(() => ConceptPage, {
    description: 'Its concepts, as the source at this version holds them.',
  })
  async concepts(
    @Root() source: SourceObject,
    @Args() args: ConceptListArgs,
    @Arg('onlyHierarchyRoot', { defaultValue: false, description: ONLY_HIERARCHY_ROOT })
    onlyHierarchyRoot: boolean,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConceptPage> {
    return ConceptPage.of(
      // The source as this request resolved it (its access decided): not looked up again.
      await ctx.services.concepts.list(ctx, source.view, conceptListParamsOf(args), {
        onlyHierarchyRoot,
      }),
    );
  }
}
