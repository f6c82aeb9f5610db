import { ArgsType, Field, Int, ObjectType } from 'type-graphql';
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

/** What a sign-in, sign-up or password reset at the identity provider is started with. */
@ArgsType()
export class OidcSignInArgs {
  @Field({ description: 'Where the provider sends the browser back with a code.' })
  redirectUri: string;

  @Field(() => String, {
    nullable: true,
    description: 'An opaque value the provider sends back with the redirect.',
  })
  state?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'A value the ID token must carry; the client checks it.',
  })
  nonce?: string | null;

  @Field(() => String, { nullable: true, description: 'The PKCE code challenge.' })
  codeChallenge?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The PKCE code challenge method, e.g. `S256`.',
  })
  codeChallengeMethod?: string | null;
}

/** The arguments as the service reads them (absent for null). */
export function oidcSignInInput(args: OidcSignInArgs): Record<string, string | undefined> {
  return {
    redirectUri: args.redirectUri,
    state: args.state ?? undefined,
    nonce: args.nonce ?? undefined,
    codeChallenge: args.codeChallenge ?? undefined,
    codeChallengeMethod: args.codeChallengeMethod ?? undefined,
  };
}
