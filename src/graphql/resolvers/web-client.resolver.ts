import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import {
  defaultListParams,
  parseOwnerUrl,
  parseRepoUrl,
  refOf,
  type OwnerRef,
} from '../../services';
import { AppError } from '../../errors';
import { ReferenceObject } from '../types/collection.type';
import type { GraphQLContext } from '../context';
import { type DeletePayload, payloadOf, slashed } from '../types/payload.type';
import {
  ApiTokenPayload,
  RefreshSummaryPayload,
  deleted,
  FollowPayload,
  followPayload,
  type FollowPayloadValue,
  MovePinPayload,
  PinPayload,
  pinPayload,
  type PinPayloadValue,
  UnfollowPayload,
  UnpinPayload,
} from '../types/payloads';
import { ConceptObject } from '../types/concept.type';
import { enumTyped, OFFSET } from '../types/descriptions';
import { PinResourceType } from '../types/enums';
import { MappingObject } from '../types/mapping.type';
import { OrganizationType } from '../types/org.type';
import { CollectionObject, RepositoryObject } from '../types/repository.type';
import { UserType } from '../types/user.type';
import {
  CollectionConceptObject,
  CollectionMappingObject,
  EventObject,
  EventPage,
  FollowObject,
  LocaleObject,
  PinObject,
  RepositorySummaryObject,
} from '../types/web-client.type';

/** Whose: the caller when no username is given. */
const PIN_OWNER = 'The owner URL: `/orgs/:org/` or `/users/:user/`.';
const FOLLOWER = 'The username of the follower; none: the caller.';
const VERBOSE = 'Add the content distributions (`content`).';
const MEMBER_ID = 'The id within its source.';
const EXPANSION = 'The mnemonic of the expansion to read; none: the default one.';

const userRef = (username: string | null | undefined): OwnerRef =>
  username ? { type: 'user', username } : { type: 'self' };

/** What the OCL web client reads besides content (issue 15), as the REST edge serves it. */
@Resolver()
export class WebClientResolver {
  @Query(() => EventPage, {
    nullable: true,
    description:
      "Events, newest first. Without `username`: public creations and releases (the guest dashboard). With it: that user's, by `scopes` (`self` (default), `orgs`, `following`, `all`).",
  })
  async events(
    @Arg('username', () => String, {
      nullable: true,
      description: 'The user whose events to read; none: the public highlights.',
    })
    username: string | null,
    @Arg('scopes', () => [String], {
      defaultValue: [],
      description: 'With `username`: `self`, `orgs`, `following` or `all`; none: `self`.',
    })
    scopes: string[],
    @Arg('limit', () => Int, { defaultValue: 10, description: 'Page size.' }) limit: number,
    @Arg('offset', () => Int, { defaultValue: 0, description: OFFSET }) offset: number,
    @Ctx() ctx: GraphQLContext,
  ): Promise<EventPage> {
    const params = defaultListParams({ limit, offset });
    const page = !username
      ? await ctx.services.events.highlights(ctx, params)
      : await ctx.services.events.ofUser(
          ctx,
          await ctx.services.users.get(ctx, username),
          scopes,
          params,
        );
    return { totalCount: page.total, items: page.items.map((e) => EventObject.from(e)) };
  }

  @Query(() => [PinObject], {
    nullable: true,
    description: 'Pins of an owner (`/orgs/X/`, `/users/x/`), in order.',
  })
  async pins(
    @Arg('owner', { description: PIN_OWNER }) owner: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<PinObject[]> {
    return (await ctx.services.pins.list(ctx, parseOwnerUrl(owner))).map((p) => PinObject.from(p));
  }

  @Query(() => [FollowObject], {
    nullable: true,
    description: 'What a user follows; without `username`, the caller.',
  })
  async following(
    @Arg('username', () => String, { nullable: true, description: FOLLOWER })
    username: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<FollowObject[]> {
    return (await ctx.services.follows.following(ctx, userRef(username))).map((f) =>
      FollowObject.from(f),
    );
  }

  @Query(() => [LocaleObject], {
    nullable: true,
    description: 'Locales with a two-letter code (REST `/locales/`).',
  })
  async locales(@Ctx() ctx: GraphQLContext): Promise<LocaleObject[]> {
    return (await ctx.services.lookups.locales(ctx)).map((l) => LocaleObject.from(l));
  }

  @Query(() => RepositorySummaryObject, {
    nullable: true,
    description: 'The summary of a repository at HEAD or a version (its REST URL).',
  })
  async repositorySummary(
    @Arg('url', { description: 'The REST URL of the source or collection, or of a version.' })
    url: string,
    @Arg('verbose', { defaultValue: false, description: VERBOSE }) verbose: boolean,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RepositorySummaryObject> {
    return RepositorySummaryObject.from(
      await ctx.services.summaries.repoSummary(ctx, parseRepoUrl(url), { verbose }),
    );
  }

  @Mutation(() => RefreshSummaryPayload, {
    description:
      'Asks for the summary of a repository (its REST URL, at HEAD or a version) to be refreshed, as REST `PUT …/summary/` (editors only; summaries here are computed on each read).',
  })
  async refreshSummary(
    @Arg('url', { description: 'The REST URL of the source or collection, or of a version.' })
    url: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RefreshSummaryPayload> {
    await ctx.services.summaries.refresh(ctx, parseRepoUrl(url));
    return payloadOf(RefreshSummaryPayload, { url: slashed(url) });
  }

  @Query(() => [ConceptObject], {
    nullable: true,
    description:
      "A lookup source's values (its REST URL, at HEAD): all its concepts, as REST `…/concepts/lookup/`.",
  })
  async lookupValues(
    @Arg('source', { description: 'The REST URL of the lookup source.' }) source: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConceptObject[]> {
    return (await ctx.services.lookups.values(ctx, parseRepoUrl(source, 'source'))).map((view) =>
      ConceptObject.from(view),
    );
  }

  @Mutation(() => PinPayload, {
    description:
      'Pins a source, collection or org (`kind`, its `uuid`) for an owner (`/orgs/X/`, `/users/x/`); at most 4.',
  })
  async pin(
    @Arg('owner', { description: PIN_OWNER }) owner: string,
    @Arg('kind', () => PinResourceType, {
      nullable: true,
      description: 'What to pin (required; `resourceType` until the next release).',
    })
    kind: PinResourceType | null,
    @Arg('resourceType', () => String, {
      nullable: true,
      description: '`Source`, `Collection` or `Organization`.',
      deprecationReason: enumTyped('kind'),
    })
    resourceType: string | null,
    @Arg('resourceId', () => ID, { description: 'The `uuid` of what to pin.' }) resourceId: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<PinPayloadValue> {
    if (kind != null && resourceType != null) {
      throw AppError.field('kind', 'Not with `resourceType`; `resourceType` is deprecated.');
    }
    const type = kind ?? resourceType;
    if (type == null) throw AppError.field('kind', 'This field is required.');
    return pinPayload(
      PinPayload,
      PinObject.from(
        await ctx.services.pins.add(ctx, parseOwnerUrl(owner), {
          resourceType: type,
          resourceId,
        }),
      ),
    );
  }

  @Mutation(() => MovePinPayload, { description: 'Moves a pin to `order` (from 0).' })
  async movePin(
    @Arg('owner', { description: PIN_OWNER }) owner: string,
    @Arg('id', () => ID, { description: 'The pin id.' }) id: string,
    @Arg('order', () => Int, { description: 'Its new place, from 0.' }) order: number,
    @Ctx() ctx: GraphQLContext,
  ): Promise<PinPayloadValue> {
    return pinPayload(
      MovePinPayload,
      PinObject.from(await ctx.services.pins.move(ctx, parseOwnerUrl(owner), id, { order })),
    );
  }

  @Mutation(() => UnpinPayload, { description: 'Removes a pin; the pins after it move up.' })
  async unpin(
    @Arg('owner', { description: PIN_OWNER }) owner: string,
    @Arg('id', () => ID, { description: 'The pin id.' }) id: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<DeletePayload> {
    await ctx.services.pins.remove(ctx, parseOwnerUrl(owner), id);
    return deleted(UnpinPayload, id, `${slashed(owner)}pins/${id}/`);
  }

  @Mutation(() => FollowPayload, {
    description:
      'Follows a user, org, source or collection (its URL); without `username`, as the caller.',
  })
  async follow(
    @Arg('url', { description: 'The REST URL of the user, org, source or collection.' })
    url: string,
    @Arg('username', () => String, { nullable: true, description: FOLLOWER })
    username: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<FollowPayloadValue> {
    return followPayload(
      FollowPayload,
      FollowObject.from(await ctx.services.follows.follow(ctx, userRef(username), { follow: url })),
    );
  }

  @Mutation(() => UnfollowPayload, {
    description: 'Stops following; without `username`, as the caller.',
  })
  async unfollow(
    @Arg('id', () => ID, { description: 'The follow id.' }) id: string,
    @Arg('username', () => String, { nullable: true, description: FOLLOWER })
    username: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<DeletePayload> {
    await ctx.services.follows.unfollow(ctx, userRef(username), id);
    return deleted(
      UnfollowPayload,
      id,
      `${username ? `/users/${username}/` : '/user/'}following/${id}/`,
    );
  }

  @Mutation(() => ApiTokenPayload, {
    description:
      "The caller's API token (REST `/users/api-token/`): a new one, since GraphQL callers may have signed in otherwise.",
  })
  async apiToken(@Ctx() ctx: GraphQLContext): Promise<ApiTokenPayload> {
    return payloadOf(ApiTokenPayload, { token: await ctx.services.auth.apiToken(ctx, undefined) });
  }
}

/** A user's pins and follows, as `/user/?includePins=true&includeFollowing=true` reads them. */
@Resolver(() => UserType)
export class UserWebClientResolver {
  @FieldResolver(() => [PinObject], { description: 'Its pins the caller may see, in order.' })
  async pins(@Root() user: UserType, @Ctx() ctx: GraphQLContext): Promise<PinObject[]> {
    return (await ctx.services.pins.ofUser(ctx, user.entity)).map((p) => PinObject.from(p));
  }

  @FieldResolver(() => [FollowObject], { description: 'What it follows that the caller may see.' })
  async following(@Root() user: UserType, @Ctx() ctx: GraphQLContext): Promise<FollowObject[]> {
    return (await ctx.services.follows.ofUser(ctx, user.entity)).map((f) => FollowObject.from(f));
  }

  @FieldResolver(() => [String], { description: "OCL's auth groups: none here." })
  authGroups(): string[] {
    return [];
  }
}

/** An org's pins. */
@Resolver(() => OrganizationType)
export class OrgWebClientResolver {
  @FieldResolver(() => [PinObject], { description: 'Its pins the caller may see, in order.' })
  async pins(@Root() org: OrganizationType, @Ctx() ctx: GraphQLContext): Promise<PinObject[]> {
    return (await ctx.services.pins.list(ctx, { type: 'org', id: org.entity.mnemonic })).map((p) =>
      PinObject.from(p),
    );
  }
}

/** A repository's summary, on every source and collection read (OCL's `includeSummary`). */
@Resolver(() => RepositoryObject)
export class RepositorySummaryResolver {
  @FieldResolver(() => RepositorySummaryObject, {
    description:
      'Its summary at this version (REST `includeSummary`, and with `verbose` the summary panel of `summary/?verbose=true`); the version totals of a list are read together.',
  })
  async summary(
    @Root() r: RepositoryObject,
    @Arg('verbose', { defaultValue: false, description: VERBOSE }) verbose: boolean,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RepositorySummaryObject> {
    return RepositorySummaryObject.from(
      await ctx.services.summaries.summarize(ctx, r.view, verbose),
    );
  }
}

/** A collection version's default expansion and its members by id, as REST reads them. */
@Resolver(() => CollectionObject)
export class CollectionWebClientResolver {
  @FieldResolver(() => String, {
    nullable: true,
    description:
      'The REST URL of the default expansion of this version (REST `expansion_url`); null when it has none.',
  })
  async expansionUrl(
    @Root() c: CollectionObject,
    @Ctx() ctx: GraphQLContext,
  ): Promise<string | null> {
    return ctx.services.expansions.defaultExpansionUrl(c.view);
  }

  @FieldResolver(() => CollectionConceptObject, {
    description:
      "The concept of that id the default expansion (or `expansion`) holds, retired or not (REST `{collection}/concepts/:id/`); NOT_FOUND none, CONFLICT when two sources' concepts share the id.",
  })
  async memberConcept(
    @Root() c: CollectionObject,
    @Arg('id', { description: MEMBER_ID }) id: string,
    @Arg('expansion', () => String, { nullable: true, description: EXPANSION })
    expansion: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CollectionConceptObject> {
    const found = await ctx.services.collections.memberConcept(
      ctx,
      refOf(c.view),
      id,
      expansion ?? undefined,
    );
    return {
      concept: ConceptObject.from(found.view),
      references: found.references.map((r) => ReferenceObject.from(r)),
    };
  }

  @FieldResolver(() => CollectionMappingObject, {
    description:
      'The mapping of that id the default expansion (or `expansion`) holds, as `memberConcept`.',
  })
  async memberMapping(
    @Root() c: CollectionObject,
    @Arg('id', { description: MEMBER_ID }) id: string,
    @Arg('expansion', () => String, { nullable: true, description: EXPANSION })
    expansion: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CollectionMappingObject> {
    const found = await ctx.services.collections.memberMapping(
      ctx,
      refOf(c.view),
      id,
      expansion ?? undefined,
    );
    return {
      mapping: MappingObject.of(found.item),
      references: found.references.map((r) => ReferenceObject.from(r)),
    };
  }
}

/** The repository versions that hold a concept version (REST `includeSourceVersions`…). */
@Resolver(() => ConceptObject)
export class ConceptHoldersResolver {
  @FieldResolver(() => [String], {
    description: 'URLs of the source versions that froze this concept version.',
  })
  async sourceVersions(@Root() c: ConceptObject, @Ctx() ctx: GraphQLContext): Promise<string[]> {
    return (await ctx.services.summaries.versionHolders(ctx, 'concept', c.view.version.id))
      .sourceVersions;
  }

  @FieldResolver(() => [String], {
    description:
      'URLs of the collection versions whose default expansion holds this concept version (those the caller may see).',
  })
  async collectionVersions(
    @Root() c: ConceptObject,
    @Ctx() ctx: GraphQLContext,
  ): Promise<string[]> {
    return (await ctx.services.summaries.versionHolders(ctx, 'concept', c.view.version.id))
      .collectionVersions;
  }
}

/** The repository versions that hold a mapping version, as for concepts. */
@Resolver(() => MappingObject)
export class MappingHoldersResolver {
  @FieldResolver(() => [String], {
    description: 'URLs of the source versions that froze this mapping version.',
  })
  async sourceVersions(@Root() m: MappingObject, @Ctx() ctx: GraphQLContext): Promise<string[]> {
    return (await ctx.services.summaries.versionHolders(ctx, 'mapping', m.view.version.id))
      .sourceVersions;
  }

  @FieldResolver(() => [String], {
    description:
      'URLs of the collection versions whose default expansion holds this mapping version (those the caller may see).',
  })
  async collectionVersions(
    @Root() m: MappingObject,
    @Ctx() ctx: GraphQLContext,
  ): Promise<string[]> {
    return (await ctx.services.summaries.versionHolders(ctx, 'mapping', m.view.version.id))
      .collectionVersions;
  }
}
