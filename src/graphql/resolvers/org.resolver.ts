import { Arg, Args, Ctx, FieldResolver, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { GraphQLContext } from '../context';
import { facetsOf } from '../types/facets.type';
import { type DeletePayload, readableAfter } from '../types/payload.type';
import {
  AddMemberPayload,
  CreateOrgPayload,
  deleted,
  DeleteOrgPayload,
  type OrgPayload,
  orgPayload,
  RemoveMemberPayload,
  UpdateOrgPayload,
} from '../types/payloads';
import { listParamsOf, MemberListArgs, OrgListArgs } from '../types/list.args';
import {
  CreateOrganizationInput,
  MemberRole,
  OrganizationPage,
  OrganizationType,
  UpdateOrganizationInput,
} from '../types/org.type';
import { UserPage, UserType } from '../types/user.type';

const ORG_ID = 'The org id (as in `/orgs/:org/`).';

@Resolver(() => OrganizationType)
export class OrgResolver {
  @Query(() => OrganizationType, { nullable: true, description: 'An org by its id.' })
  async org(
    @Arg('id', { description: ORG_ID }) id: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<OrganizationType> {
    return OrganizationType.of(await ctx.services.orgs.detail(ctx, id));
  }

  @Query(() => OrganizationPage, { nullable: true, description: 'Orgs the caller may see.' })
  async orgs(@Args() args: OrgListArgs, @Ctx() ctx: GraphQLContext): Promise<OrganizationPage> {
    const page = await ctx.services.orgs.list(
      ctx,
      listParamsOf(args, { company: args.company, location: args.location }),
    );
    return {
      totalCount: page.total,
      items: page.items.map((o) => OrganizationType.from(o)),
      facets: facetsOf(page),
    };
  }

  @FieldResolver(() => UserPage, {
    description: "The org's members; readers of the org may list them.",
  })
  async members(
    @Root() org: OrganizationType,
    @Args() args: MemberListArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<UserPage> {
    const page = await ctx.services.orgs.members(ctx, org.entity, listParamsOf(args));
    return {
      totalCount: page.total,
      items: page.items.map((u) => UserType.from(u)),
      facets: facetsOf(page),
    };
  }

  @FieldResolver(() => Boolean, {
    description: 'Whether the user belongs to this org; members may ask.',
  })
  async hasMember(
    @Root() org: OrganizationType,
    @Arg('username', { description: 'The username.' }) username: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<boolean> {
    return ctx.services.orgs.isMember(ctx, org.entity, username);
  }

  @FieldResolver(() => MemberRole, {
    nullable: true,
    description: "The caller's role here; null if none.",
  })
  async myRole(
    @Root() org: OrganizationType,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MemberRole | null> {
    return await ctx.services.orgs.roleOf(ctx, org.entity);
  }

  @FieldResolver(() => Int, { description: 'Its members whose accounts are active.' })
  async membersCount(@Root() org: OrganizationType, @Ctx() ctx: GraphQLContext): Promise<number> {
    return (org.counts ?? (await ctx.services.orgs.counts(ctx, org.entity))).members;
  }

  @FieldResolver(() => Int, {
    description: 'Active sources it owns whose public access is not `None`.',
  })
  async publicSources(@Root() org: OrganizationType, @Ctx() ctx: GraphQLContext): Promise<number> {
    return (org.counts ?? (await ctx.services.orgs.counts(ctx, org.entity))).publicSources;
  }

  @FieldResolver(() => Int, {
    description: 'Active collections it owns whose public access is not `None`.',
  })
  async publicCollections(
    @Root() org: OrganizationType,
    @Ctx() ctx: GraphQLContext,
  ): Promise<number> {
    return (org.counts ?? (await ctx.services.orgs.counts(ctx, org.entity))).publicCollections;
  }

  @Mutation(() => CreateOrgPayload, {
    description: 'Creates an org; the caller becomes its administrator.',
  })
  async createOrg(
    @Arg('input', { description: 'The new org.' }) input: CreateOrganizationInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<OrgPayload> {
    const org = OrganizationType.of(await ctx.services.orgs.create(ctx, { ...input }));
    return orgPayload(CreateOrgPayload, org.id, org);
  }

  @Mutation(() => UpdateOrgPayload, { description: 'Updates an org; members may.' })
  async updateOrg(
    @Arg('id', { description: ORG_ID }) id: string,
    @Arg('input', { description: 'The fields to change.' }) input: UpdateOrganizationInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<OrgPayload> {
    const org = OrganizationType.of(await ctx.services.orgs.update(ctx, id, { ...input }));
    return orgPayload(UpdateOrgPayload, org.id, org);
  }

  @Mutation(() => DeleteOrgPayload, { description: 'Deletes an org (superusers only).' })
  async deleteOrg(
    @Arg('id', { description: ORG_ID }) id: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<DeletePayload> {
    await ctx.services.orgs.delete(ctx, id);
    return deleted(DeleteOrgPayload, id, `/orgs/${id}/`);
  }

  @Mutation(() => AddMemberPayload, {
    description: "Adds a member or changes a member's role; org administrators only.",
  })
  async addMember(
    @Arg('org', { description: ORG_ID }) org: string,
    @Arg('username', { description: 'The username of the member.' }) username: string,
    @Arg('role', () => MemberRole, {
      nullable: true,
      description:
        'The role to give; absent: a new member is a `member`, an existing one keeps their role (as REST).',
    })
    role: MemberRole | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<OrgPayload> {
    await ctx.services.orgs.addMember(ctx, org, username, role === null ? {} : { role });
    return orgPayload(AddMemberPayload, org, await orgAfter(ctx, org));
  }

  @Mutation(() => RemoveMemberPayload, {
    description: 'Removes a membership; org administrators only.',
  })
  async removeMember(
    @Arg('org', { description: ORG_ID }) org: string,
    @Arg('username', { description: 'The username of the member.' }) username: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<OrgPayload> {
    await ctx.services.orgs.removeMember(ctx, org, username);
    return orgPayload(RemoveMemberPayload, org, await orgAfter(ctx, org));
  }
}

/** The org as the caller may read it after a change; null when they no longer may. */
async function orgAfter(ctx: GraphQLContext, id: string): Promise<OrganizationType | null> {
  return readableAfter(async () => OrganizationType.from(await ctx.services.orgs.get(ctx, id)));
}
