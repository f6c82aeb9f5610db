import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import type { UserEntity } from '../../db/entities';
import type { UserCounts, UserDetail } from '../../services';
import { CREATED_ON, EXTRAS, TOTAL_COUNT, UPDATED_BY, UPDATED_ON } from './descriptions';
import { FACETS, FacetObject } from './facets.type';

const PREFERRED_LOCALE = 'Ordered comma-separated locales, e.g. `en,es`; defaults to `en`.';

@ObjectType('User', { description: 'A user account (spec core §2.2); profiles are public.' })
export class UserType {
  /** The record behind this object, for field resolvers. */
  entity: UserEntity;
  /** Its counts, when the read that found it counted them. */
  counts?: UserCounts;

  @Field(() => ID, { description: 'Its internal id.' })
  uuid: string;

  @Field({ description: 'The unique username used in URLs.' })
  username: string;

  @Field({ description: 'The public name.' })
  name: string;

  @Field(() => String, { nullable: true, description: 'First name.' })
  firstName: string | null;

  @Field(() => String, { nullable: true, description: 'Last name.' })
  lastName: string | null;

  @Field({ description: 'The email address.' })
  email: string;

  @Field(() => String, { nullable: true, description: 'Company.' })
  company: string | null;

  @Field(() => String, { nullable: true, description: 'Location.' })
  location: string | null;

  @Field({ description: 'Ordered comma-separated locales, e.g. `en,es`.' })
  preferredLocale: string;

  @Field(() => String, { nullable: true, description: 'Website URL.' })
  website: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: EXTRAS })
  extras: Record<string, unknown> | null;

  @Field({ description: 'Whether the user is a superuser (may do anything).' })
  isSuperuser: boolean;

  @Field({ description: "OCL's staff flag: superusers are this service's staff." })
  isStaff: boolean;

  @Field({ description: 'False once the account is deactivated.' })
  isActive: boolean;

  @Field({ description: 'False after signup until the emailed link is followed.' })
  verified: boolean;

  @Field({ description: 'The REST URL of this user.' })
  url: string;

  @Field({ description: CREATED_ON })
  createdOn: Date;

  @Field(() => String, {
    nullable: true,
    description: 'Who created the account (a username); null when made by the system.',
  })
  createdBy: string | null;

  @Field({ description: UPDATED_ON })
  updatedOn: Date;

  @Field(() => String, { nullable: true, description: UPDATED_BY })
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

@ObjectType('UserPage', { description: 'A page of users.' })
export class UserPage {
  @Field(() => Int, { description: TOTAL_COUNT })
  totalCount: number;

  @Field(() => [UserType], { description: 'The users of this page.' })
  items: UserType[];

  @Field(() => [FacetObject], { nullable: true, description: FACETS })
  facets?: FacetObject[] | null;
}

@ObjectType('LoginPayload', { description: 'What a successful login returns.' })
export class LoginPayload {
  @Field({
    description: 'A new API token; send it as `Authorization: Token <token>`. Shown only once.',
  })
  token: string;

  @Field(() => UserType, { description: 'The user logged in.' })
  user: UserType;
}

@InputType('CreateUserInput', {
  description: 'A new account made by a superuser; it is verified at once.',
})
export class CreateUserInput {
  @Field({ description: 'The unique username used in URLs.' })
  username: string;

  @Field({ description: 'The public name.' })
  name: string;

  @Field(() => String, { nullable: true, description: 'First name.' })
  firstName?: string | null;

  @Field(() => String, { nullable: true, description: 'Last name.' })
  lastName?: string | null;

  @Field({ description: 'The email address.' })
  email: string;

  @Field({
    nullable: true,
    description: 'The password; without one the account cannot log in with a password.',
  })
  password?: string;

  @Field({ nullable: true, description: 'Company.' })
  company?: string;

  @Field({ nullable: true, description: 'Location.' })
  location?: string;

  @Field({ nullable: true, description: PREFERRED_LOCALE })
  preferredLocale?: string;

  @Field({ nullable: true, description: 'Website URL.' })
  website?: string;

  @Field(() => GraphQLJSONObject, { nullable: true, description: EXTRAS })
  extras?: Record<string, unknown>;
}

@InputType('SignupInput', {
  description: 'A self-made account; it logs in once the emailed link is followed.',
})
export class SignupInput {
  @Field({ description: 'The unique username used in URLs.' })
  username: string;

  @Field({ description: 'The public name.' })
  name: string;

  @Field(() => String, { nullable: true, description: 'First name.' })
  firstName?: string | null;

  @Field(() => String, { nullable: true, description: 'Last name.' })
  lastName?: string | null;

  @Field({ description: 'The email address the confirmation link is sent to.' })
  email: string;

  @Field({ description: 'The password.' })
  password: string;

  @Field({ nullable: true, description: 'Company.' })
  company?: string;

  @Field({ nullable: true, description: 'Location.' })
  location?: string;

  @Field({ nullable: true, description: PREFERRED_LOCALE })
  preferredLocale?: string;

  @Field({ nullable: true, description: 'Website URL.' })
  website?: string;

  @Field(() => GraphQLJSONObject, { nullable: true, description: EXTRAS })
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
  @Field({ nullable: true, description: 'The public name.' })
  name?: string;

  @Field(() => String, { nullable: true, description: 'First name.' })
  firstName?: string | null;

  @Field(() => String, { nullable: true, description: 'Last name.' })
  lastName?: string | null;

  @Field({ nullable: true, description: 'The email address.' })
  email?: string;

  @Field(() => String, { nullable: true, description: 'Company.' })
  company?: string | null;

  @Field(() => String, { nullable: true, description: 'Location.' })
  location?: string | null;

  @Field({ nullable: true, description: 'Ordered comma-separated locales, e.g. `en,es`.' })
  preferredLocale?: string;

  @Field(() => String, { nullable: true, description: 'Website URL.' })
  website?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: EXTRAS })
  extras?: Record<string, unknown> | null;

  @Field({ nullable: true, description: 'A new password.' })
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

@ObjectType('VerifyEmailPayload', {
  description: "A user's mail address confirmed by the token the signup mail carried.",
})
export class VerifyEmailPayload {
  @Field(() => ID, { description: 'The username.' })
  id: string;

  @Field({
    description:
      'Whether the address is confirmed (true: now or before; false: a wrong token, see `redirectTo`).',
  })
  verified: boolean;

  @Field(() => String, {
    nullable: true,
    description:
      'The page the signup named for this outcome, where a browser goes next; null: none.',
  })
  redirectTo: string | null;
}
