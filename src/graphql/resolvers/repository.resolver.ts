import { Arg, Args, Ctx, FieldResolver, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { RepositoryKind } from '../../db/entities';
import {
  parseOwnerUrl,
  parseRepoUrl,
  refOf,
  type Page,
  type RepoScope,
  type RepoDetail,
  type RepoView,
} from '../../services';
import type { GraphQLContext } from '../context';
import { facetsOf } from '../types/facets.type';
import { HEAD } from '../../db/entities';
import { type DeletePayload, slashed } from '../types/payload.type';
import {
  type CollectionPayload,
  collectionPayload,
  CreateCollectionPayload,
  CreateCollectionVersionPayload,
  CreateSourcePayload,
  CreateSourceVersionPayload,
  DeleteCollectionPayload,
  DeleteCollectionVersionPayload,
  deleted,
  DeleteSourcePayload,
  DeleteSourceVersionPayload,
  type SourcePayload,
  sourcePayload,
  UpdateCollectionPayload,
  UpdateCollectionVersionPayload,
  UpdateSourcePayload,
  UpdateSourceVersionPayload,
} from '../types/payloads';
import {
  type AnyRepoListArgs,
  CollectionListArgs,
  ListArgs,
  listParamsOf,
  RepoListArgs,
  repoListParamsOf,
  SourceListArgs,
} from '../types/list.args';
import { OrganizationType } from '../types/org.type';
import {
  CollectionInput,
  CollectionObject,
  CollectionPage,
  RepositoryObject,
  repositoryObject,
  RepositoryPage,
  SourceInput,
  SourceObject,
  SourcePage,
  VersionInput,
  VersionUpdateInput,
} from '../types/repository.type';
import { UserType } from '../types/user.type';

/** A repository as a write answered it, its counts included. */
function detailObject({ view, counts }: RepoDetail): RepositoryObject {
  return repositoryObject({ ...view, counts });
}

function pageOf(page: Page<RepoView>): RepositoryPage {
  return {
    totalCount: page.total,
    items: page.items.map((view) => repositoryObject(view)),
    facets: facetsOf(page),
  };
}

/** Fields every source and collection has, resolved through per-request loaders. */
@Resolver(() => RepositoryObject)
export class RepositoryFieldsResolver {
  @FieldResolver(() => Int, { description: 'Version records, HEAD included.' })
  async versionsCount(@Root() r: RepositoryObject, @Ctx() ctx: GraphQLContext): Promise<number> {
    return (r.view.counts ?? (await ctx.services.repositories.counts(ctx, r.view))).versions;
  }

  @FieldResolver(() => Int, { description: 'Concepts not retired, as this version sees them.' })
  async activeConcepts(@Root() r: RepositoryObject, @Ctx() ctx: GraphQLContext): Promise<number> {
    return (r.view.counts ?? (await ctx.services.repositories.counts(ctx, r.view))).activeConcepts;
  }

  @FieldResolver(() => Int, { description: 'Mappings not retired, as this version sees them.' })
  async activeMappings(@Root() r: RepositoryObject, @Ctx() ctx: GraphQLContext): Promise<number> {
    return (r.view.counts ?? (await ctx.services.repositories.counts(ctx, r.view))).activeMappings;
  }

  @FieldResolver(() => RepositoryPage, {
    description: 'Versions, newest first; HEAD is the oldest.',
  })
  async versions(
    @Root() r: RepositoryObject,
    @Args() args: ListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RepositoryPage> {
    const page = await ctx.services.repositories.listVersions(
      ctx,
      refOf(r.view),
      listParamsOf(args),
    );
    return pageOf(page);
  }

  @FieldResolver(() => OrganizationType, {
    nullable: true,
    description: 'The owning org, if an org owns it.',
  })
  ownerOrg(@Root() r: RepositoryObject): OrganizationType | null {
    return r.view.owner.org ? OrganizationType.from(r.view.owner.org) : null;
  }

  @FieldResolver(() => UserType, {
    nullable: true,
    description: 'The owning user, if a user owns it.',
  })
  ownerUser(@Root() r: RepositoryObject): UserType | null {
    return r.view.owner.user ? UserType.from(r.view.owner.user) : null;
  }
}

const SOURCE_URL = 'The REST URL of the source, e.g. `/orgs/CIEL/sources/CIEL/`.';
const COLLECTION_URL = 'The REST URL of the collection, e.g. `/orgs/O/collections/C/`.';
const VERSION_URL = 'The REST URL of the version, e.g. `…/v1/`.';
const OWNER = 'The owner URL: `/orgs/:org/`, `/users/:user/` or `/user/` (the caller).';
const LIST_OWNER = 'An owner URL (`/orgs/:org/`, `/users/:user/`, `/user/`) to list only its own.';
const DELETE_VERSION =
  'Deletes a version (not HEAD, nor one another version is based on); repository owners only.';

@Resolver()
export class RepositoryResolver {
  @Query(() => SourceObject, {
    nullable: true,
    description: 'A source by its REST URL, e.g. `/orgs/CIEL/sources/CIEL/` or `…/v1/`.',
  })
  async source(
    @Arg('url', { description: SOURCE_URL }) url: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RepositoryObject> {
    return repositoryObject(await ctx.services.repositories.get(ctx, parseRepoUrl(url, 'source')));
  }

  @Query(() => CollectionObject, {
    nullable: true,
    description: 'A collection by its REST URL (version URLs included).',
  })
  async collection(
    @Arg('url', { description: COLLECTION_URL }) url: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RepositoryObject> {
    return repositoryObject(
      await ctx.services.repositories.get(ctx, parseRepoUrl(url, 'collection')),
    );
  }

  @Query(() => SourcePage, {
    nullable: true,
    description: "An owner's sources, or with no owner the public ones.",
  })
  async sources(
    @Args() args: SourceListArgs,
    @Arg('owner', () => String, { nullable: true, description: LIST_OWNER }) owner: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RepositoryPage> {
    return this.list(ctx, args, owner, 'source');
  }

  @Query(() => CollectionPage, {
    nullable: true,
    description: "An owner's collections, or with no owner the public ones.",
  })
  async collections(
    @Args() args: CollectionListArgs,
    @Arg('owner', () => String, { nullable: true, description: LIST_OWNER }) owner: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RepositoryPage> {
    return this.list(ctx, args, owner, 'collection');
  }

  @Query(() => RepositoryPage, {
    nullable: true,
    description: 'Sources and collections together that the caller may see.',
  })
  async repos(
    @Args() args: RepoListArgs,
    @Arg('owner', () => String, { nullable: true, description: LIST_OWNER }) owner: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RepositoryPage> {
    return this.list(ctx, args, owner, undefined);
  }

  @Mutation(() => CreateSourcePayload, {
    description: 'Creates a source for an owner URL (`/orgs/:org/`, `/users/:user/`, `/user/`).',
  })
  async createSource(
    @Arg('owner', { description: OWNER }) owner: string,
    @Arg('input', { description: 'The fields of the source.' }) input: SourceInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<SourcePayload> {
    return sourcePayload(
      CreateSourcePayload,
      detailObject(
        await ctx.services.repositories.create(ctx, parseOwnerUrl(owner), 'source', { ...input }),
      ),
    );
  }

  @Mutation(() => UpdateSourcePayload, {
    description: 'Edits a source (its HEAD); only what is sent changes.',
  })
  async updateSource(
    @Arg('url', { description: SOURCE_URL }) url: string,
    @Arg('input', { description: 'The fields of the source.' }) input: SourceInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<SourcePayload> {
    return sourcePayload(
      UpdateSourcePayload,
      detailObject(
        await ctx.services.repositories.update(ctx, parseRepoUrl(url, 'source'), { ...input }),
      ),
    );
  }

  @Mutation(() => DeleteSourcePayload, { description: 'Deletes a source and everything in it.' })
  async deleteSource(
    @Arg('url', { description: SOURCE_URL }) url: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<DeletePayload> {
    const ref = parseRepoUrl(url, 'source');
    await ctx.services.repositories.delete(ctx, ref);
    return deleted(DeleteSourcePayload, ref.id, slashed(url));
  }

  @Mutation(() => CreateCollectionPayload, {
    description:
      'Creates a collection for an owner URL (`/orgs/:org/`, `/users/:user/`, `/user/`).',
  })
  async createCollection(
    @Arg('owner', { description: OWNER }) owner: string,
    @Arg('input', { description: 'The fields of the collection.' }) input: CollectionInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CollectionPayload> {
    return collectionPayload(
      CreateCollectionPayload,
      detailObject(
        await ctx.services.repositories.create(ctx, parseOwnerUrl(owner), 'collection', {
          ...input,
        }),
      ),
    );
  }

  @Mutation(() => UpdateCollectionPayload, {
    description: 'Edits a collection (its HEAD); only what is sent changes.',
  })
  async updateCollection(
    @Arg('url', { description: COLLECTION_URL }) url: string,
    @Arg('input', { description: 'The fields of the collection.' }) input: CollectionInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CollectionPayload> {
    return collectionPayload(
      UpdateCollectionPayload,
      detailObject(
        await ctx.services.repositories.update(ctx, parseRepoUrl(url, 'collection'), { ...input }),
      ),
    );
  }

  @Mutation(() => DeleteCollectionPayload, {
    description: 'Deactivates a collection: hidden with its data, not deleted.',
  })
  async deleteCollection(
    @Arg('url', { description: COLLECTION_URL }) url: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<DeletePayload> {
    const ref = parseRepoUrl(url, 'collection');
    await ctx.services.repositories.delete(ctx, ref);
    return deleted(DeleteCollectionPayload, ref.id, slashed(url));
  }

  @Mutation(() => CreateSourceVersionPayload, {
    description: 'Freezes the source as it is now under a new version id.',
  })
  async createSourceVersion(
    @Arg('url', { description: SOURCE_URL }) url: string,
    @Arg('input', { description: 'The new version.' }) input: VersionInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<SourcePayload> {
    return sourcePayload(
      CreateSourceVersionPayload,
      await this.createVersion(ctx, url, 'source', input),
    );
  }

  @Mutation(() => UpdateSourceVersionPayload, {
    description: 'Edits a version by its URL (`…/sources/:source/:version/`).',
  })
  async updateSourceVersion(
    @Arg('url', { description: VERSION_URL }) url: string,
    @Arg('input', { description: 'The fields to change.' }) input: VersionUpdateInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<SourcePayload> {
    return sourcePayload(
      UpdateSourceVersionPayload,
      detailObject(
        await ctx.services.repositories.updateVersion(ctx, parseRepoUrl(url, 'source'), {
          ...input,
        }),
      ),
    );
  }

  @Mutation(() => DeleteSourceVersionPayload, { description: DELETE_VERSION })
  async deleteSourceVersion(
    @Arg('url', { description: VERSION_URL }) url: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<DeletePayload> {
    const ref = parseRepoUrl(url, 'source');
    await ctx.services.repositories.deleteVersion(ctx, ref);
    return deleted(DeleteSourceVersionPayload, ref.version ?? HEAD, slashed(url));
  }

  @Mutation(() => CreateCollectionVersionPayload, {
    description: 'Freezes the collection as it is now under a new version id.',
  })
  async createCollectionVersion(
    @Arg('url', { description: COLLECTION_URL }) url: string,
    @Arg('input', { description: 'The new version.' }) input: VersionInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CollectionPayload> {
    return collectionPayload(
      CreateCollectionVersionPayload,
      await this.createVersion(ctx, url, 'collection', input),
    );
  }

  @Mutation(() => UpdateCollectionVersionPayload, {
    description: 'Edits a version by its URL (`…/collections/:collection/:version/`).',
  })
  async updateCollectionVersion(
    @Arg('url', { description: VERSION_URL }) url: string,
    @Arg('input', { description: 'The fields to change.' }) input: VersionUpdateInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CollectionPayload> {
    return collectionPayload(
      UpdateCollectionVersionPayload,
      detailObject(
        await ctx.services.repositories.updateVersion(ctx, parseRepoUrl(url, 'collection'), {
          ...input,
        }),
      ),
    );
  }

  @Mutation(() => DeleteCollectionVersionPayload, { description: DELETE_VERSION })
  async deleteCollectionVersion(
    @Arg('url', { description: VERSION_URL }) url: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<DeletePayload> {
    const ref = parseRepoUrl(url, 'collection');
    await ctx.services.repositories.deleteVersion(ctx, ref);
    return deleted(DeleteCollectionVersionPayload, ref.version ?? HEAD, slashed(url));
  }

  private async createVersion(
    ctx: GraphQLContext,
    url: string,
    kind: RepositoryKind,
    input: VersionInput,
  ): Promise<RepositoryObject> {
    return detailObject(
      await ctx.services.repositories.createVersion(ctx, parseRepoUrl(url, kind), { ...input }),
    );
  }

  private async list(
    ctx: GraphQLContext,
    args: AnyRepoListArgs,
    owner: string | null,
    kind: RepositoryKind | undefined,
  ): Promise<RepositoryPage> {
    const scope: RepoScope = owner
      ? { kind, owner: parseOwnerUrl(owner) }
      : { kind, publicOnly: kind !== undefined };
    return pageOf(await ctx.services.repositories.list(ctx, repoListParamsOf(args), scope));
  }
}

/** An org's and a user's repositories, as nested fields. */
@Resolver(() => OrganizationType)
export class OrgRepositoriesResolver {
  @FieldResolver(() => SourcePage, {
    description: 'Sources this owner holds that the caller may see.',
  })
  async sources(
    @Root() org: OrganizationType,
    @Args() args: SourceListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RepositoryPage> {
    return ownerList(ctx, args, { kind: 'source', owner: { type: 'org', id: org.id } });
  }

  @FieldResolver(() => CollectionPage, {
    description: 'Collections this owner holds that the caller may see.',
  })
  async collections(
    @Root() org: OrganizationType,
    @Args() args: CollectionListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RepositoryPage> {
    return ownerList(ctx, args, { kind: 'collection', owner: { type: 'org', id: org.id } });
  }
}

@Resolver(() => UserType)
export class UserRepositoriesResolver {
  @FieldResolver(() => SourcePage, {
    description: 'Sources this owner holds that the caller may see.',
  })
  async sources(
    @Root() user: UserType,
    @Args() args: SourceListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RepositoryPage> {
    return ownerList(ctx, args, {
      kind: 'source',
      owner: { type: 'user', username: user.username },
    });
  }

  @FieldResolver(() => CollectionPage, {
    description: 'Collections this owner holds that the caller may see.',
  })
  async collections(
    @Root() user: UserType,
    @Args() args: CollectionListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RepositoryPage> {
    return ownerList(ctx, args, {
      kind: 'collection',
      owner: { type: 'user', username: user.username },
    });
  }

  @FieldResolver(() => SourcePage, {
    description:
      "Sources of this user's organizations that the caller may see, as REST `/users/:user/orgs/sources/`.",
  })
  async orgSources(
    @Root() user: UserType,
    @Args() args: RepoListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RepositoryPage> {
    return ownerList(ctx, args, {
      kind: 'source',
      ofOrgsOf: { type: 'user', username: user.username },
    });
  }

  @FieldResolver(() => CollectionPage, {
    description:
      "Collections of this user's organizations that the caller may see, as REST `/users/:user/orgs/collections/`.",
  })
  async orgCollections(
    @Root() user: UserType,
    @Args() args: RepoListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RepositoryPage> {
    return ownerList(ctx, args, {
      kind: 'collection',
      ofOrgsOf: { type: 'user', username: user.username },
    });
  }
}

async function ownerList(
  ctx: GraphQLContext,
  args: AnyRepoListArgs,
  scope: RepoScope,
): Promise<RepositoryPage> {
  return pageOf(await ctx.services.repositories.list(ctx, repoListParamsOf(args), scope));
}
