import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { OrganizationEntity } from '../../db/entities';
import type { OrgCounts, OrgDetail } from '../../services';
import {
  CREATED_BY,
  CREATED_ON,
  EXTRAS,
  respelled,
  TOTAL_COUNT,
  UPDATED_BY,
  UPDATED_ON,
} from './descriptions';
import { FACETS, FacetObject } from './facets.type';

/**
 * The three levels of public access (spec core §2.3). The values were spelled as REST spells them
 * (`View`) until issue 28; those spellings are still accepted, deprecated, for one release. Each
 * old name comes before its new one: graphql answers a value under the last name that has it (an
 * object, not a TypeScript enum, as two names share each value).
 */
export const PublicAccess = {
  View: 'View',
  Edit: 'Edit',
  None: 'None',
  VIEW: 'View',
  EDIT: 'Edit',
  NONE: 'None',
} as const;
export type PublicAccess = (typeof PublicAccess)[keyof typeof PublicAccess];
registerEnumType(PublicAccess, {
  name: 'PublicAccess',
  description:
    'VIEW (default): anyone reads; EDIT: any signed-in user edits content; NONE: private (REST `View`, `Edit`, `None`).',
  valuesConfig: {
    VIEW: { description: 'Anyone may read it.' },
    EDIT: { description: 'Anyone may read it and any signed-in user may edit its content.' },
    NONE: { description: "Private: seen by its owning user or the owning org's members only." },
    View: { description: 'Anyone may read it.', deprecationReason: respelled('VIEW') },
    Edit: {
      description: 'Anyone may read it and any signed-in user may edit its content.',
      deprecationReason: respelled('EDIT'),
    },
    None: {
      description: "Private: seen by its owning user or the owning org's members only.",
      deprecationReason: respelled('NONE'),
    },
  },
});

/** A member's role; `admin` and `member` (REST's spellings) are still accepted, deprecated. */
export const MemberRole = {
  admin: 'admin',
  member: 'member',
  ADMIN: 'admin',
  MEMBER: 'member',
} as const;
export type MemberRole = (typeof MemberRole)[keyof typeof MemberRole];
const ADMIN_ROLE =
  "A member who also manages members and creates, edits and deletes the org's repositories.";
const MEMBER_ROLE = "Sees the org's private repositories and edits the org's profile.";
registerEnumType(MemberRole, {
  name: 'MemberRole',
  description: "A member's role in an organization (REST `admin`, `member`).",
  valuesConfig: {
    ADMIN: { description: ADMIN_ROLE },
    MEMBER: { description: MEMBER_ROLE },
    admin: { description: ADMIN_ROLE, deprecationReason: respelled('ADMIN') },
    member: { description: MEMBER_ROLE, deprecationReason: respelled('MEMBER') },
  },
});

@ObjectType('Organization', { description: 'An organization (spec core §2.3).' })
export class OrganizationType {
  entity: OrganizationEntity;
  /** Its counts, when the read that found it counted them. */
  counts?: OrgCounts;

  @Field(() => ID, { description: 'Its internal id.' })
  uuid: string;

  @Field({ description: 'The org identifier used in URLs; never changes.' })
  id: string;

  @Field({ description: 'Its name.' })
  name: string;

  @Field(() => String, { nullable: true, description: 'Its company.' })
  company: string | null;

  @Field(() => String, { nullable: true, description: 'Its website URL.' })
  website: string | null;

  @Field(() => String, { nullable: true, description: 'Its location.' })
  location: string | null;

  @Field(() => PublicAccess, { description: 'What the public may do with it.' })
  publicAccess: PublicAccess;

  @Field(() => GraphQLJSONObject, { nullable: true, description: EXTRAS })
  extras: Record<string, unknown> | null;

  @Field({ description: 'The REST URL of this org.' })
  url: string;

  @Field({ description: CREATED_ON })
  createdOn: Date;

  @Field(() => String, { nullable: true, description: CREATED_BY })
  createdBy: string | null;

  @Field({ description: UPDATED_ON })
  updatedOn: Date;

  @Field(() => String, { nullable: true, description: UPDATED_BY })
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
      publicAccess: org.publicAccess,
      extras: org.extras,
      url: `/orgs/${encodeURIComponent(org.mnemonic)}/`,
      createdOn: org.createdAt,
      createdBy: org.createdBy,
      updatedOn: org.updatedAt,
      updatedBy: org.updatedBy,
    });
  }
}

@ObjectType('OrganizationPage', { description: 'A page of organizations.' })
export class OrganizationPage {
  @Field(() => Int, { description: TOTAL_COUNT })
  totalCount: number;

  @Field(() => [OrganizationType], { description: 'The organizations of this page.' })
  items: OrganizationType[];

  @Field(() => [FacetObject], { nullable: true, description: FACETS })
  facets?: FacetObject[] | null;
}

@InputType('CreateOrganizationInput', { description: 'A new organization.' })
export class CreateOrganizationInput {
  @Field({ description: 'The org identifier used in URLs; never changes.' })
  id: string;

  @Field({ description: 'Its name.' })
  name: string;

  @Field({ nullable: true, description: 'Its company.' })
  company?: string;

  @Field({ nullable: true, description: 'Its website URL.' })
  website?: string;

  @Field({ nullable: true, description: 'Its location.' })
  location?: string;

  @Field(() => GraphQLJSONObject, { nullable: true, description: EXTRAS })
  extras?: Record<string, unknown>;

  @Field(() => PublicAccess, { nullable: true, description: 'Defaults to `View`.' })
  publicAccess?: PublicAccess;
}

@InputType('UpdateOrganizationInput', { description: 'Only the fields sent change.' })
export class UpdateOrganizationInput {
  @Field({ nullable: true, description: 'Its name.' })
  name?: string;

  @Field(() => String, { nullable: true, description: 'Its company.' })
  company?: string | null;

  @Field(() => String, { nullable: true, description: 'Its website URL.' })
  website?: string | null;

  @Field(() => String, { nullable: true, description: 'Its location.' })
  location?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: EXTRAS })
  extras?: Record<string, unknown> | null;

  @Field(() => PublicAccess, { nullable: true, description: 'What the public may do with it.' })
  publicAccess?: PublicAccess;
}
