import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import type { UserEntity } from '../../db/entities';
import type { UserCounts, UserDetail } from '../../services';

@ObjectType('User', { description: 'A user account (spec core §2.2); profiles are public.' })
export class UserType {
  /** The record behind this object, for field resolvers. */
  entity: UserEntity;
  /** Its counts, when the read that found it counted them. */
  counts?: UserCounts;

  @Field(() => ID)
  uuid: string;

  @Field()
  username: string;

  @Field()
  name: string;

  @Field(() => String, { nullable: true })
  firstName: string | null;

  @Field(() => String, { nullable: true })
  lastName: string | null;

  @Field()
  email: string;

  @Field(() => String, { nullable: true })
  company: string | null;

  @Field(() => String, { nullable: true })
  location: string | null;

  @Field({ description: 'Ordered comma-separated locales, e.g. `en,es`.' })
  preferredLocale: string;

  @Field(() => String, { nullable: true })
  website: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  extras: Record<string, unknown> | null;

  @Field()
  isSuperuser: boolean;

  @Field({ description: "OCL's staff flag: superusers are this service's staff." })
  isStaff: boolean;

  @Field()
  isActive: boolean;

  @Field({ description: 'False after signup until the emailed link is followed.' })
  verified: boolean;

  @Field({ description: 'The REST URL of this user.' })
  url: string;

  @Field()
  createdOn: Date;

  @Field(() => String, { nullable: true })
  createdBy: string | null;

  @Field()
  updatedOn: Date;

  @Field(() => String, { nullable: true })
  updatedBy: string | null;

  /** A user with the counts its detail read brought along. */
  static of({ user, counts }: UserDetail): UserType {
    return Object.assign(UserType.from(user), { counts });
  }

  static from(user: UserEntity): UserType {
    return Object.assign(new UserType(), {
      entity: user,
      uuid: user.id,
      username: user.username,
      name: user.name,
      firstName: user.firstName,
      lastName: user.lastName,
      email: user.email,
      company: user.company,
      location: user.location,
      preferredLocale: user.preferredLocale,
      website: user.website,
      extras: user.extras,
      isSuperuser: user.isSuperuser,
      isStaff: user.isSuperuser,
      isActive: user.isActive,
      verified: user.verified,
      url: `/users/${encodeURIComponent(user.username)}/`,
      createdOn: user.createdAt,
      createdBy: user.createdBy,
      updatedOn: user.updatedAt,
      updatedBy: user.updatedBy,
    });
  }
}

@ObjectType('UserPage')
export class UserPage {
  @Field(() => Int)
  totalCount: number;

  @Field(() => [UserType])
  items: UserType[];
}

@ObjectType('LoginResult')
export class LoginResult {
  @Field({
    description: 'A new API token; send it as `Authorization: Token <token>`. Shown only once.',
  })
  token: string;

  @Field(() => UserType)
  user: UserType;
}

@InputType('CreateUserInput')
export class CreateUserInput {
  @Field()
  username: string;

  @Field()
  name: string;

  @Field(() => String, { nullable: true })
  firstName?: string | null;

  @Field(() => String, { nullable: true })
  lastName?: string | null;

  @Field()
  email: string;

  @Field({ nullable: true })
  password?: string;

  @Field({ nullable: true })
  company?: string;

  @Field({ nullable: true })
  location?: string;

  @Field({ nullable: true })
  preferredLocale?: string;

  @Field({ nullable: true })
  website?: string;

  @Field(() => GraphQLJSONObject, { nullable: true })
  extras?: Record<string, unknown>;
}

@InputType('SignupInput')
export class SignupInput {
  @Field()
  username: string;

  @Field()
  name: string;

  @Field(() => String, { nullable: true })
  firstName?: string | null;

  @Field(() => String, { nullable: true })
  lastName?: string | null;

  @Field()
  email: string;

  @Field()
  password: string;

  @Field({ nullable: true })
  company?: string;

  @Field({ nullable: true })
  location?: string;

  @Field({ nullable: true })
  preferredLocale?: string;

  @Field({ nullable: true })
  website?: string;

  @Field(() => GraphQLJSONObject, { nullable: true })
  extras?: Record<string, unknown>;

  @Field({
    nullable: true,
    description: 'Where the confirmation link sends the browser on success.',
  })
  emailVerifySuccessUrl?: string;

  @Field({
    nullable: true,
    description: 'Where the confirmation link sends the browser on failure.',
  })
  emailVerifyFailureUrl?: string;
}

@InputType('UpdateUserInput', { description: 'Only the fields sent change.' })
export class UpdateUserInput {
  @Field({ nullable: true })
  name?: string;

  @Field(() => String, { nullable: true })
  firstName?: string | null;

  @Field(() => String, { nullable: true })
  lastName?: string | null;

  @Field({ nullable: true })
  email?: string;

  @Field(() => String, { nullable: true })
  company?: string | null;

  @Field(() => String, { nullable: true })
  location?: string | null;

  @Field({ nullable: true })
  preferredLocale?: string;

  @Field(() => String, { nullable: true })
  website?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  extras?: Record<string, unknown> | null;

  @Field({ nullable: true })
  password?: string;

  @Field(() => Int, {
    nullable: true,
    description:
      "Superusers only: this user's requests per minute (0: no limit); null: the instance's limit.",
  })
  rateLimitPerMinute?: number | null;

  @Field(() => Int, {
    nullable: true,
    description:
      "Superusers only: this user's requests per day (0: no limit); null: the instance's limit.",
  })
  rateLimitPerDay?: number | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'Superusers only: approved for `$match` (when the instance requires approval).',
  })
  matchApproved?: boolean | null;
}
