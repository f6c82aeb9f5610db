import { Arg, Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../context';
import { ExchangeOidcCodePayload, OidcSignInArgs, oidcSignInInput } from '../types/oidc.type';
import { UserType } from '../types/user.type';

const STATE = 'An opaque value the provider sends back with the redirect.';

/** Single sign-on (OCL's `/users/login/`, `/users/oidc/code-exchange/`, `/users/logout/`). */
@Resolver()
export class OidcResolver {
  @Query(() => String, {
    nullable: true,
    description: "Where to send the browser to sign in: the identity provider's login page.",
  })
  async oidcLoginUrl(
    @Arg('redirectUri', { description: 'Where the provider sends the browser back with a code.' })
    redirectUri: string,
    @Arg('state', () => String, { nullable: true, description: STATE }) state: string | null,
    @Arg('nonce', () => String, {
      nullable: true,
      description: 'A value the ID token must carry; the client checks it.',
    })
    nonce: string | null,
    @Arg('codeChallenge', () => String, { nullable: true, description: 'The PKCE code challenge.' })
    codeChallenge: string | null,
    @Arg('codeChallengeMethod', () => String, {
      nullable: true,
      description: 'The PKCE code challenge method, e.g. `S256`.',
    })
    codeChallengeMethod: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<string> {
    return ctx.services.oidc.loginUrl({
      redirectUri: redirectUri,
      state: state ?? undefined,
      nonce: nonce ?? undefined,
      codeChallenge: codeChallenge ?? undefined,
      codeChallengeMethod: codeChallengeMethod ?? undefined,
    });
  }

  @Query(() => String, {
    nullable: true,
    description:
      "Where to send the browser to sign up: the identity provider's registration page (REST `/users/signup/`).",
  })
  async oidcSignupUrl(@Args() args: OidcSignInArgs, @Ctx() ctx: GraphQLContext): Promise<string> {
    return ctx.services.oidc.signupUrl(oidcSignInInput(args));
  }

  @Query(() => String, {
    nullable: true,
    description:
      "Where to send the browser to reset a password: the identity provider's page (REST `/users/password/reset/`).",
  })
  async oidcPasswordResetUrl(
    @Args() args: OidcSignInArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<string> {
    return ctx.services.oidc.passwordResetUrl(oidcSignInInput(args));
  }

  @Query(() => String, {
    nullable: true,
    description: "Where to send the browser to sign out: the identity provider's logout page.",
  })
  async oidcLogoutUrl(
    @Arg('idTokenHint', () => String, {
      nullable: true,
      description: 'The ID token the sign-in gave (`ExchangeOidcCodePayload.idToken`).',
    })
    idTokenHint: string | null,
    @Arg('postLogoutRedirectUri', () => String, {
      nullable: true,
      description: 'Where the browser goes after signing out.',
    })
    postLogoutRedirectUri: string | null,
    @Arg('state', () => String, { nullable: true, description: STATE }) state: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<string> {
    return ctx.services.oidc.logoutUrl({
      idTokenHint: idTokenHint ?? undefined,
      post_logout_redirectUri: postLogoutRedirectUri ?? undefined,
      state: state ?? undefined,
    });
  }

  @Mutation(() => ExchangeOidcCodePayload, {
    description:
      "Trades the identity provider's authorization code for its tokens; the user is created or linked on first sign-in.",
  })
  async exchangeOidcCode(
    @Arg('code', { description: 'The authorization code the provider redirected with.' })
    code: string,
    @Arg('redirectUri', { description: 'The `redirectUri` the sign-in was started with.' })
    redirectUri: string,
    @Arg('codeVerifier', () => String, {
      nullable: true,
      description: 'The PKCE code verifier, when the sign-in sent a code challenge.',
    })
    codeVerifier: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ExchangeOidcCodePayload> {
    const { tokens, user } = await ctx.services.oidc.exchangeCode(ctx, {
      code,
      redirectUri: redirectUri,
      codeVerifier: codeVerifier ?? undefined,
    });
    return {
      accessToken: tokens.access_token,
      tokenType: tokens.token_type,
      expiresIn: tokens.expires_in ?? null,
      idToken: tokens.id_token ?? null,
      refreshToken: tokens.refresh_token ?? null,
      scope: tokens.scope ?? null,
      user: UserType.from(user),
    };
  }
}
