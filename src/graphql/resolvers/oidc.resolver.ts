import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../context';
import { OidcSignIn } from '../types/oidc.type';
import { UserType } from '../types/user.type';

const optional = { nullable: true } as const;

/** Single sign-on (OCL's `/users/login/`, `/users/oidc/code-exchange/`, `/users/logout/`). */
@Resolver()
export class OidcResolver {
  @Query(() => String, {
    nullable: true,
    description: "Where to send the browser to sign in: the identity provider's login page.",
  })
  async oidcLoginUrl(
    @Arg('redirectUri') redirectUri: string,
    @Arg('state', () => String, optional) state: string | null,
    @Arg('nonce', () => String, optional) nonce: string | null,
    @Arg('codeChallenge', () => String, optional) codeChallenge: string | null,
    @Arg('codeChallengeMethod', () => String, optional) codeChallengeMethod: string | null,
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
    description: "Where to send the browser to sign out: the identity provider's logout page.",
  })
  async oidcLogoutUrl(
    @Arg('idTokenHint', () => String, optional) idTokenHint: string | null,
    @Arg('postLogoutRedirectUri', () => String, optional) postLogoutRedirectUri: string | null,
    @Arg('state', () => String, optional) state: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<string> {
    return ctx.services.oidc.logoutUrl({
      idTokenHint: idTokenHint ?? undefined,
      post_logout_redirectUri: postLogoutRedirectUri ?? undefined,
      state: state ?? undefined,
    });
  }

  @Mutation(() => OidcSignIn, {
    description:
      "Trades the identity provider's authorization code for its tokens; the user is created or linked on first sign-in.",
  })
  async exchangeOidcCode(
    @Arg('code') code: string,
    @Arg('redirectUri') redirectUri: string,
    @Arg('codeVerifier', () => String, optional) codeVerifier: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<OidcSignIn> {
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
