import { Field, Int, ObjectType } from 'type-graphql';
import { UserType } from './user.type';

@ObjectType('ExchangeOidcCodePayload', {
  description: "The identity provider's tokens for a signed-in user (single sign-on).",
})
export class ExchangeOidcCodePayload {
  @Field({ description: 'Send it as `Authorization: Bearer <token>` on every edge.' })
  accessToken: string;

  @Field({ description: "The provider's token type, e.g. `Bearer`." })
  tokenType: string;

  @Field(() => Int, { nullable: true, description: 'Seconds the access token stays valid.' })
  expiresIn: number | null;

  @Field(() => String, { nullable: true, description: 'For the logout redirect (`idTokenHint`).' })
  idToken: string | null;

  @Field(() => String, {
    nullable: true,
    description: "The provider's refresh token, when it gave one.",
  })
  refreshToken: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The scopes granted, space-separated, when the provider said.',
  })
  scope: string | null;

  @Field(() => UserType, { description: 'The user signed in, created or linked on first sign-in.' })
  user: UserType;
}
