import { Arg, Args, Ctx, FieldResolver, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { GraphQLContext } from '../context';
import { facetsOf } from '../types/facets.type';
import { AppError } from '../../errors';
import { payloadOf, readableAfter } from '../types/payload.type';
import {
  CreateUserPayload,
  DeactivateUserPayload,
  ReactivateUserPayload,
  SignupPayload,
  UpdateUserPayload,
  type UserPayload,
  userPayload,
} from '../types/payloads';
import { listParamsOf, UserListArgs, UserOrgListArgs } from '../types/list.args';
import { OrganizationPage, OrganizationType } from '../types/org.type';
import {
  CreateUserInput,
  LoginPayload,
  SignupInput,
  UpdateUserInput,
  UserPage,
  UserType,
  VerifyEmailPayload,
} from '../types/user.type';

const USERNAME = 'The username.';

@Resolver(() => UserType)
export class UserResolver {
  @Query(() => UserType, {
    nullable: true,
    description: 'The signed-in user; null when anonymous.',
  })
  async me(@Ctx() ctx: GraphQLContext): Promise<UserType | null> {
    if (ctx.actor.kind === 'anonymous') return null;
    return UserType.from(await ctx.services.users.me(ctx));
  }

  @Query(() => UserType, { nullable: true, description: 'A user by username.' })
  async user(
    @Arg('username', { description: USERNAME }) username: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<UserType> {
    return UserType.from(await ctx.services.users.get(ctx, username));
  }

  @Query(() => UserPage, { nullable: true, description: 'Users; `q` searches them.' })
  async users(@Args() args: UserListArgs, @Ctx() ctx: GraphQLContext): Promise<UserPage> {
    const page = await ctx.services.users.list(
      ctx,
      listParamsOf(args, { company: args.company, location: args.location }),
    );
    return {
      totalCount: page.total,
      items: page.items.map((u) => UserType.from(u)),
      facets: facetsOf(page),
    };
  }

  @FieldResolver(() => Int, { description: 'Orgs of this user that the caller may see.' })
  async orgsCount(@Root() user: UserType, @Ctx() ctx: GraphQLContext): Promise<number> {
    return (user.counts ?? (await ctx.services.users.counts(ctx, user.entity))).orgs;
  }

  @FieldResolver(() => Int, {
    description: 'Active sources this user owns whose public access is not `None`.',
  })
  async publicSources(@Root() user: UserType, @Ctx() ctx: GraphQLContext): Promise<number> {
    return (user.counts ?? (await ctx.services.users.counts(ctx, user.entity))).publicSources;
  }

  @FieldResolver(() => Int, {
    description: 'Active collections this user owns whose public access is not `None`.',
  })
  async publicCollections(@Root() user: UserType, @Ctx() ctx: GraphQLContext): Promise<number> {
    return (user.counts ?? (await ctx.services.users.counts(ctx, user.entity))).publicCollections;
  }

  @FieldResolver(() => Int, {
    nullable: true,
    description:
      "Requests per minute an administrator allowed this user (0: no limit); null: the instance's limit. Shown to the user themself and superusers, null for anyone else.",
  })
  rateLimitPerMinute(@Root() user: UserType, @Ctx() ctx: GraphQLContext): number | null {
    return ctx.services.users.rateLimitsOf(ctx, user.entity)?.perMinute ?? null;
  }

  @FieldResolver(() => Int, {
    nullable: true,
    description:
      "Requests per day an administrator allowed this user (0: no limit); null: the instance's limit. Shown to the user themself and superusers, null for anyone else.",
  })
  rateLimitPerDay(@Root() user: UserType, @Ctx() ctx: GraphQLContext): number | null {
    return ctx.services.users.rateLimitsOf(ctx, user.entity)?.perDay ?? null;
  }

  @FieldResolver(() => Boolean, {
    nullable: true,
    description:
      'Approved by an administrator for `$match` (spec operations §5.1; needed when the instance requires approval). Shown to the user themself and superusers, null for anyone else.',
  })
  matchApproved(@Root() user: UserType, @Ctx() ctx: GraphQLContext): boolean | null {
    return ctx.services.users.rateLimitsOf(ctx, user.entity) ? user.entity.matchApproved : null;
  }

  @FieldResolver(() => OrganizationPage, {
    description: 'Orgs of this user that the caller may see.',
  })
  async orgs(
    @Root() user: UserType,
    @Args() args: UserOrgListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<OrganizationPage> {
    const page = await ctx.services.orgs.list(ctx, listParamsOf(args), user.entity);
    return {
      totalCount: page.total,
      items: page.items.map((o) => OrganizationType.from(o)),
      facets: facetsOf(page),
    };
  }

  @Mutation(() => LoginPayload, {
    description: 'Exchanges a username and password for a new API token.',
  })
  async login(
    @Arg('username', { description: USERNAME }) username: string,
    @Arg('password', { description: 'The password.' }) password: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<LoginPayload> {
    const { token, user } = await ctx.services.auth.login(ctx, { username, password });
    return { token, user: UserType.from(user) };
  }

  @Mutation(() => CreateUserPayload, {
    description: 'Creates a user (administrators only); it can log in at once.',
  })
  async createUser(
    @Arg('input', { description: 'The new user.' }) input: CreateUserInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<UserPayload> {
    const user = UserType.of(await ctx.services.users.create(ctx, { ...input }));
    return userPayload(CreateUserPayload, user.username, user);
  }

  @Mutation(() => SignupPayload, {
    description: 'Open signup; login is refused until the emailed link is followed.',
  })
  async signup(
    @Arg('input', { description: 'The new account.' }) input: SignupInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<UserPayload> {
    const user = UserType.of(await ctx.services.users.signup(ctx, { ...input }));
    return userPayload(SignupPayload, user.username, user);
  }

  @Mutation(() => UpdateUserPayload, {
    description: 'Updates a user; without `username`, the caller.',
  })
  async updateUser(
    @Arg('input', { description: 'The fields to change.' }) input: UpdateUserInput,
    @Arg('username', () => String, {
      nullable: true,
      description: 'The user to update; none: the caller.',
    })
    username: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<UserPayload> {
    const user = UserType.of(
      await ctx.services.users.update(ctx, username ?? undefined, { ...input }),
    );
    return userPayload(UpdateUserPayload, user.username, user);
  }

  @Mutation(() => DeactivateUserPayload, {
    description: 'Deactivates a user (administrators only).',
  })
  async deactivateUser(
    @Arg('username', { description: USERNAME }) username: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<UserPayload> {
    await ctx.services.users.deactivate(ctx, username);
    return userPayload(DeactivateUserPayload, username, await userAfter(ctx, username));
  }

  @Mutation(() => ReactivateUserPayload, {
    description: 'Reactivates a user (administrators only).',
  })
  async reactivateUser(
    @Arg('username', { description: USERNAME }) username: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<UserPayload> {
    await ctx.services.users.reactivate(ctx, username);
    return userPayload(ReactivateUserPayload, username, await userAfter(ctx, username));
  }

  @Mutation(() => VerifyEmailPayload, {
    description:
      "Confirms a user's mail address with the token of the signup mail, as REST `/users/:user/verify/:token/`: `verified` and the signup's page for the outcome; a token that does not match answers `verified: false` with the failure page the signup named, else is INVALID.",
  })
  async verifyEmail(
    @Arg('username', { description: USERNAME }) username: string,
    @Arg('token', { description: 'The token the signup mail carried.' }) token: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<VerifyEmailPayload> {
    const outcome = await ctx.services.users.verifyEmail(username, token);
    // As REST: a wrong token goes to the signup's failure page when it named one, else is refused.
    if (!outcome.verified && outcome.redirectTo === null) {
      throw AppError.field('token', 'This verification link is not valid.');
    }
    return payloadOf(VerifyEmailPayload, { id: username, ...outcome });
  }
}

/** The user as the caller may read it after a change; null when they may not. */
async function userAfter(ctx: GraphQLContext, username: string): Promise<UserType | null> {
  return readableAfter(async () => UserType.from(await ctx.services.users.get(ctx, username)));
}
