import { GraphQLJSON } from 'graphql-scalars';
import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { AppError } from '../../errors';
import { parseOwnerUrl, type OwnerRef } from '../../services';
import type { GraphQLContext } from '../context';
import { type DeletePayload } from '../types/payload.type';
import {
  CreateUrlRegistryEntryPayload,
  deleted,
  DeleteUrlRegistryEntryPayload,
  type EntryPayload,
  entryPayload,
  UpdateUrlRegistryEntryPayload,
} from '../types/payloads';
import { listParamsOf } from '../types/list.args';
import { RepositoryObject, repositoryObject } from '../types/repository.type';
import {
  ReferenceResolutionType,
  UrlRegistryEntryInput,
  UrlRegistryEntryType,
  entryInputOf,
  UrlRegistryListArgs,
  UrlRegistryPage,
} from '../types/url-registry.type';

const OWNER_DESCRIPTION =
  'The registry: an owner URL (`/orgs/:org/`, `/users/:user/`, `/user/`); none or `/` is the global one.';

/** The canonical URL registries (spec operations §4.6) and reference resolution (§4.4). */
@Resolver()
export class UrlRegistryResolver {
  @Query(() => UrlRegistryPage, {
    nullable: true,
    description: 'Entries of a registry; `q` searches url, name, namespace and extras.',
  })
  async urlRegistry(
    @Args() args: UrlRegistryListArgs,
    @Arg('owner', () => String, { nullable: true, description: OWNER_DESCRIPTION })
    owner: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<UrlRegistryPage> {
    if (args.url != null && args.canonicalUrl != null) {
      throw AppError.field('canonicalUrl', 'Not with `url`; `url` is deprecated.');
    }
    const url = (args.canonicalUrl ?? args.url)?.trim();
    const params = listParamsOf(args, {
      url: url ? [url] : undefined,
      namespace: args.namespace?.trim() ? [args.namespace.trim()] : undefined,
    });
    const page = await ctx.services.urlRegistry.list(ctx, registryOf(owner), params);
    return { totalCount: page.total, items: page.items.map((v) => UrlRegistryEntryType.from(v)) };
  }

  @Query(() => UrlRegistryEntryType, { nullable: true, description: 'One entry of a registry.' })
  async urlRegistryEntry(
    @Arg('id', () => ID, { description: 'The entry id.' }) id: string,
    @Arg('owner', () => String, { nullable: true, description: OWNER_DESCRIPTION })
    owner: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<UrlRegistryEntryType> {
    return UrlRegistryEntryType.from(
      await ctx.services.urlRegistry.get(ctx, registryOf(owner), id),
    );
  }

  @Query(() => RepositoryObject, {
    nullable: true,
    description:
      'The repository (at HEAD) a canonical URL is registered to in this registry (an owner registry falls back on the global one); null when none.',
  })
  async lookupUrl(
    @Arg('url', { description: 'The canonical URL.' }) url: string,
    @Arg('owner', () => String, { nullable: true, description: OWNER_DESCRIPTION })
    owner: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RepositoryObject | null> {
    const repo = await ctx.services.urlRegistry.lookup(ctx, registryOf(owner), url);
    return repo ? repositoryObject(repo) : null;
  }

  @Query(() => [ReferenceResolutionType], {
    nullable: true,
    description:
      'Resolves references (URL strings or `{url, version, namespace}` objects) as `$resolveReference` does; `namespace` defaults to global.',
  })
  async resolveReference(
    @Arg('references', () => [GraphQLJSON], {
      description: 'URL strings or `{url, version, namespace}` objects.',
    })
    references: unknown[],
    @Arg('namespace', () => String, {
      nullable: true,
      description: 'The owner URL whose registry resolves them (`/orgs/:org/`); none: global.',
    })
    namespace: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ReferenceResolutionType[]> {
    const { results } = await ctx.services.resolver.resolveRequest(ctx, references, namespace);
    const timestamp = new Date();
    return results.map((r) => ReferenceResolutionType.from(r, timestamp));
  }

  @Mutation(() => CreateUrlRegistryEntryPayload, {
    description:
      'Global registry: superusers; an org registry: its members; a user registry: that user.',
  })
  async createUrlRegistryEntry(
    @Arg('input', { description: 'The new entry.' }) input: UrlRegistryEntryInput,
    @Arg('owner', () => String, { nullable: true, description: OWNER_DESCRIPTION })
    owner: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<EntryPayload> {
    return entryPayload(
      CreateUrlRegistryEntryPayload,
      UrlRegistryEntryType.from(
        await ctx.services.urlRegistry.create(ctx, registryOf(owner), entryInputOf(input)),
      ),
    );
  }

  @Mutation(() => UpdateUrlRegistryEntryPayload, {
    description: 'Changes an entry; who may is as for creating one.',
  })
  async updateUrlRegistryEntry(
    @Arg('id', () => ID, { description: 'The entry id.' }) id: string,
    @Arg('input', { description: 'The fields to change.' }) input: UrlRegistryEntryInput,
    @Arg('owner', () => String, { nullable: true, description: OWNER_DESCRIPTION })
    owner: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<EntryPayload> {
    return entryPayload(
      UpdateUrlRegistryEntryPayload,
      UrlRegistryEntryType.from(
        await ctx.services.urlRegistry.update(ctx, registryOf(owner), id, entryInputOf(input)),
      ),
    );
  }

  @Mutation(() => DeleteUrlRegistryEntryPayload, {
    description: 'Deactivates the entry; its URL is free again.',
  })
  async deleteUrlRegistryEntry(
    @Arg('id', () => ID, { description: 'The entry id.' }) id: string,
    @Arg('owner', () => String, { nullable: true, description: OWNER_DESCRIPTION })
    owner: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<DeletePayload> {
    await ctx.services.urlRegistry.delete(ctx, registryOf(owner), id);
    return deleted(DeleteUrlRegistryEntryPayload, id, null);
  }
}

function registryOf(owner: string | null): OwnerRef | null {
  const text = owner?.trim();
  return text && text !== '/' ? parseOwnerUrl(text) : null;
}
