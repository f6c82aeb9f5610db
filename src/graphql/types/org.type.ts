import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { OrganizationEntity } from '../../db/entities';
import type { OrgCounts, OrgDetail } from '../../services';

export enum PublicAccess {
  View = 'View',
  Edit = 'Edit',
  None = 'None',
}
registerEnumType(PublicAccess, {
  name: 'PublicAccess',
  description:
    'View (default): anyone reads; Edit: any signed-in user edits content; None: private.',
});

export enum MemberRole {
  admin = 'admin',
  member = 'member',
}
registerEnumType(MemberRole, { name: 'MemberRole' });

@ObjectType('Organization', { description: 'An organization (spec core §2.3).' })
export class OrganizationType {
  entity: OrganizationEntity;
  /** Its counts, when the read that found it counted them. */
  counts?: OrgCounts;

  @Field(() => ID)
  uuid: string;

  @Field({ description: 'The org identifier used in URLs; never changes.' })
  id: string;

  @Field()
  name: string;

  @Field(() => String, { nullable: true })
  company: string | null;

  @Field(() => String, { nullable: true })
  website: string | null;

  @Field(() => String, { nullable: true })
  location: string | null;

  @Field(() => PublicAccess)
  publicAccess: PublicAccess;

  @Field(() => GraphQLJSONObject, { nullable: true })
  extras: Record<string, unknown> | null;

  @Field({ description: 'The REST URL of this org.' })
  url: string;

  @Field()
  createdOn: Date;

  @Field(() => String, { nullable: true })
  createdBy: string | null;

  @Field()
  updatedOn: Date;

  @Field(() => String, { nullable: true })
  updatedBy: string | null;

  /** An org with the counts its detail read brought along. */
  static of({ org, counts }: OrgDetail): OrganizationType {
    return Object.assign(OrganizationType.from(org), { counts });
  }

  static from(org: OrganizationEntity): OrganizationType {
    return Object.assign(new OrganizationType(), {
      entity: org,
      uuid: org.id,
      id: org.mnemonic,
      name: org.name,
      company: org.company,
      website: org.website,
      location: org.location,
      publicAccess: org.publicAccess as PublicAccess,
      extras: org.extras,
      url: `/orgs/${encodeURIComponent(org.mnemonic)}/`,
      createdOn: org.createdAt,
      createdBy: org.createdBy,
      updatedOn: org.updatedAt,
      updatedBy: org.updatedBy,
    });
  }
}

@ObjectType('OrganizationPage')
export class OrganizationPage {
  @Field(() => Int)
  totalCount: number;

  @Field(() => [OrganizationType])
  items: OrganizationType[];
}

@InputType('CreateOrganizationInput')
export class CreateOrganizationInput {
  @Field()
  id: string;

  @Field()
  name: string;

  @Field({ nullable: true })
  company?: string;

  @Field({ nullable: true })
  website?: string;

  @Field({ nullable: true })
  location?: string;

  @Field(() => GraphQLJSONObject, { nullable: true })
  extras?: Record<string, unknown>;

  @Field(() => PublicAccess, { nullable: true })
  publicAccess?: PublicAccess;
}

@InputType('UpdateOrganizationInput', { description: 'Only the fields sent change.' })
export class UpdateOrganizationInput {
  @Field({ nullable: true })
  name?: string;

  @Field(() => String, { nullable: true })
  company?: string | null;

  @Field(() => String, { nullable: true })
  website?: string | null;

  @Field(() => String, { nullable: true })
  location?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  extras?: Record<string, unknown> | null;

  @Field(() => PublicAccess, { nullable: true })
  publicAccess?: PublicAccess;
}
