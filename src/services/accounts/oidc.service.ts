import { LRUCache } from 'lru-cache';
import * as oidc from 'openid-client';
import { z } from 'zod';
import type { OidcSettings } from '../../config';
import type { UserEntity } from '../../db/entities';
import { AppError } from '../../errors';
import { isUniqueViolation, type IdentityKey, type Repositories } from '../../repositories';
import type { Actor, ServiceContext } from '../shared/context';
import { hashSecret } from './credentials';
import { RESERVED_USERNAMES } from './user.service';
import { parseInput } from '../shared/validation';

const required = z
  .string({ error: 'This field is required.' })
  .trim()
  .min(1, 'This field is required.');
const optional = z.string({ error: 'Must be a string.' }).trim().min(1).optional();
const httpUrl = required.regex(/^https?:\/\/\S+$/i, 'Must be an http(s) URL.');

/** What a client sends to start a sign-in (`GET /users/login/`), as oclweb3 sends it. */
const loginSchema = z.object({
  redirectUri: httpUrl,
  clientId: optional,
  state: optional,
  nonce: optional,
  codeChallenge: optional,
  codeChallengeMethod: optional,
});

/** `POST /users/oidc/code-exchange/`; the client's `client_secret` is not needed (we hold ours). */
const exchangeSchema = z.object({
  code: required,
  redirectUri: httpUrl,
  clientId: optional,
  codeVerifier: optional,
});

/** The form of an ID token (a compact JWS: three base64url parts). */
const COMPACT_JWT = /^[\w-]+\.[\w-]+\.[\w-]*$/;

const logoutSchema = z.object({
  idTokenHint: optional,
  postLogoutRedirectUri: httpUrl.optional(),
  state: optional,
  clientId: optional,
});

/** The schemas the service validates its input with, for the API reference. */
export const oidcInput = { codeExchange: exchangeSchema };

export type OidcLoginInput = z.input<typeof loginSchema>;
export type OidcExchangeInput = z.input<typeof exchangeSchema>;
export type OidcLogoutInput = z.input<typeof logoutSchema>;

/** The provider's token response, as OCL's code exchange passes it on. */
export interface OidcTokens {
  access_token: string;
  token_type: string;
  expires_in?: number;
  id_token?: string;
  refresh_token?: string;
  scope?: string;
}

export interface OidcSignIn {
  tokens: OidcTokens;
  /** The user signed in: linked, or created on this first sign-in. */
  user: UserEntity;
}

/** A provider's verdict on an access token: whose it is, or refused. */
type Verdict = { userId: string } | { refused: true };

/** Refusals are remembered briefly, so that a stream of bad tokens does not flood the provider. */
const REFUSAL_CACHE_MS = 10_000;

/**
 * Single sign-on with an OpenID Connect provider (OCL's Keycloak set-up): the sign-in redirect,
 * the code exchange, logout, and the provider's access tokens accepted as credentials. Users are
 * created or linked on first sign-in and known by the provider's subject afterwards.
 */
export class OidcService {
  private discovered?: Promise<oidc.Configuration>;
  private readonly verdicts = new LRUCache<string, Verdict>({ max: 10_000 });

  constructor(
    private readonly repos: Repositories,
    private readonly settings: OidcSettings | undefined,
  ) {}

  get enabled(): boolean {
    return this.settings !== undefined;
  }

  /** Where `GET /users/login/` sends the browser: the provider's authorization endpoint. */
  async loginUrl(input: unknown): Promise<string> {
    const { parameters } = this.signInParameters(input);
    return oidc.buildAuthorizationUrl(await this.configuration(), parameters).href;
  }

  /**
   * Where `GET /users/signup/` sends the browser (OCL's SSO sign-up): the provider's registration
   * page with the sign-in parameters (`OIDC_REGISTRATION_URL`), else its authorization endpoint
   * asking it to create an account (`prompt=create`, OpenID Connect Prompt Create).
   */
  async signupUrl(input: unknown): Promise<string> {
    const { settings, parameters } = this.signInParameters(input);
    if (settings.registrationUrl) return withQuery(settings.registrationUrl, parameters);
    return oidc.buildAuthorizationUrl(await this.configuration(), {
      ...parameters,
      prompt: 'create',
    }).href;
  }

  /**
   * Where `GET /users/password/reset/` sends the browser (OCL's SSO password reset):
   * `OIDC_PASSWORD_RESET_URL`, else the authorization endpoint with Keycloak's required action
   * (`kc_action=UPDATE_PASSWORD`, as OCL sends it); the person comes back signed in.
   */
  async passwordResetUrl(input: unknown): Promise<string> {
    const { settings, parameters } = this.signInParameters(input);
    const reset = { ...parameters, scope: 'openid' };
    if (settings.passwordResetUrl) return withQuery(settings.passwordResetUrl, reset);
    return oidc.buildAuthorizationUrl(await this.configuration(), {
      ...reset,
      kc_action: 'UPDATE_PASSWORD',
    }).href;
  }

  /** The parameters of a sign-in at the provider, from the client's query (checked). */
  private signInParameters(input: unknown): {
    settings: OidcSettings;
    parameters: Record<string, string>;
  } {
    const settings = this.require();
    const data = parseInput(loginSchema, input);
    this.assertClient(settings, data.clientId);
    return {
      settings,
      parameters: definedOnly({
        response_type: 'code',
        client_id: settings.clientId,
        scope: settings.scopes,
        redirect_uri: data.redirectUri,
        state: data.state,
        nonce: data.nonce,
        code_challenge: data.codeChallenge,
        code_challenge_method: data.codeChallengeMethod,
      }),
    };
  }

  /**
   * Trades the code the provider gave the client for the provider's tokens and signs the person
   * in (creating or linking their user), so the client's next call with the token is theirs.
   * The nonce is the client's to check against the ID token: it made it and kept it.
   */
  async exchangeCode(_ctx: ServiceContext, input: unknown): Promise<OidcSignIn> {
    const settings = this.require();
    const data = parseInput(exchangeSchema, input);
    this.assertClient(settings, data.clientId);
    const parameters = definedOnly({
      code: data.code,
      redirect_uri: data.redirectUri,
      code_verifier: data.codeVerifier,
    });
    const config = await this.configuration();
    let tokens: oidc.TokenEndpointResponse;
    try {
      tokens = await oidc.genericGrantRequest(config, 'authorization_code', parameters);
    } catch (error) {
      throw refusalOrOutage(error, 'code', 'The identity provider refused the code');
    }
    const user = await this.userForToken(tokens.access_token, tokens.expires_in);
    if (!user)
      throw new AppError('UNAUTHENTICATED', 'The identity provider refused its own token.');
    const found = await this.repos.users.findByIds([user]);
    if (!found[0]?.isActive) throw new AppError('UNAUTHENTICATED', 'This account is deactivated.');
    return {
      tokens: {
        access_token: tokens.access_token,
        token_type: tokens.token_type,
        expires_in: tokens.expires_in,
        id_token: tokens.id_token,
        refresh_token: tokens.refresh_token,
        scope: tokens.scope,
      },
      user: found[0],
    };
  }

  /**
   * Where `/users/logout/` sends the browser: the provider's end-session endpoint, or straight
   * back to `post_logout_redirect_uri` when the provider has none.
   */
  async logoutUrl(input: unknown): Promise<string> {
    const settings = this.require();
    const data = parseInput(logoutSchema, input);
    this.assertClient(settings, data.clientId);
    const config = await this.configuration();
    if (!config.serverMetadata().end_session_endpoint) {
      if (data.postLogoutRedirectUri) return data.postLogoutRedirectUri;
      throw AppError.invalid('The identity provider has no logout endpoint.');
    }
    const params = definedOnly({
      // oclweb3 keeps no id token (the provider returns a code only) and sends the string
      // "null": a hint that is no token at all is left out, the client id names the client.
      id_token_hint:
        data.idTokenHint && COMPACT_JWT.test(data.idTokenHint) ? data.idTokenHint : undefined,
      client_id: settings.clientId,
      post_logout_redirect_uri: data.postLogoutRedirectUri,
      state: data.state,
    });
    return oidc.buildEndSessionUrl(config, params).href;
  }

  /**
   * The actor behind a provider's access token, or null when the provider refuses it. The
   * provider's userinfo endpoint decides (it knows revoked and expired tokens, opaque or JWT);
   * its verdict is kept for OIDC_TOKEN_CACHE_SECONDS, never past the token's known expiry.
   */
  async actorFor(token: string): Promise<Actor | null> {
    if (!this.enabled) return null;
    const userId = await this.userForToken(token);
    const holder = userId ? await this.repos.tokens.findActiveUser(userId) : null;
    return holder ? { kind: 'user', ...holder } : null;
  }

  private async userForToken(token: string, expiresIn?: number): Promise<string | null> {
    const key = hashSecret(token);
    const known = this.verdicts.get(key);
    if (known) return 'userId' in known ? known.userId : null;
    const config = await this.configuration();
    let claims: oidc.UserInfoResponse;
    try {
      claims = await oidc.fetchUserInfo(config, token, oidc.skipSubjectCheck);
    } catch (error) {
      if (providerStatus(error) === undefined) throw outage(error);
      this.remember(key, { refused: true }, REFUSAL_CACHE_MS);
      return null;
    }
    const issuer = config.serverMetadata().issuer;
    const userId = await this.signIn({ issuer, subject: claims.sub }, claims);
    this.remember(key, { userId }, expiresIn === undefined ? Infinity : expiresIn * 1000);
    return userId;
  }

  /** Keeps a verdict for at most `ttl` ms and never longer than the configured time. */
  private remember(key: string, verdict: Verdict, ttl: number): void {
    const cached = Math.min(ttl, (this.settings?.tokenCacheSeconds ?? 0) * 1000);
    if (cached > 0) this.verdicts.set(key, verdict, { ttl: cached });
  }

  /**
   * The user of an identity: the one it was linked to; on first sign-in, the one user whose
   * email is the identity's verified email, else a new user. One transaction, serialized per
   * identity, so parallel first sign-ins create one user; a username taken meanwhile by another
   * person's first sign-in is retried with the next free name.
   */
  private async signIn(key: IdentityKey, claims: oidc.UserInfoResponse): Promise<string> {
    const known = await this.repos.identities.findUserId(key);
    if (known) return known;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.repos.transaction(async (repos) => {
          await repos.identities.lock(key);
          const linked = await repos.identities.findUserId(key);
          if (linked) return linked;
          const email = typeof claims.email === 'string' ? claims.email : null;
          const byEmail =
            email && claims.email_verified === true
              ? await repos.identities.userIdsWithEmail(email)
              : [];
          const userId =
            byEmail.length === 1 ? byEmail[0] : (await createUser(repos, claims, email)).id;
          await repos.identities.link(userId, key, email);
          return userId;
        });
      } catch (error) {
        if (!isUniqueViolation(error) || attempt >= 5) throw error;
      }
    }
  }

  private configuration(): Promise<oidc.Configuration> {
    const settings = this.require();
    this.discovered ??= discover(settings).catch((error: unknown) => {
      this.discovered = undefined; // the next request tries again
      throw outage(error);
    });
    return this.discovered;
  }

  private require(): OidcSettings {
    if (!this.settings) {
      // OCL answers 405 to its SSO endpoints where single sign-on is off.
      throw new AppError(
        'NOT_ALLOWED',
        'Single sign-on is not configured on this server; log in with POST /users/login/.',
      );
    }
    return this.settings;
  }

  private assertClient(settings: OidcSettings, clientId: string | undefined): void {
    if (clientId !== undefined && clientId !== settings.clientId) {
      throw AppError.field('clientId', `Unknown client '${clientId}'.`);
    }
  }
}

/** The parameters that have a value, as the provider's protocol names them. */
function definedOnly(params: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

function discover(settings: OidcSettings): Promise<oidc.Configuration> {
  const insecure = new URL(settings.issuer).protocol === 'http:';
  return oidc.discovery(
    new URL(settings.issuer),
    settings.clientId,
    undefined,
    settings.clientSecret ? oidc.ClientSecretBasic(settings.clientSecret) : oidc.None(),
    // Plain http is allowed by the configuration for a loopback provider only.
    insecure ? { execute: [oidc.allowInsecureRequests] } : undefined,
  );
}

/** A new user for a first sign-in, named after the identity's preferred username. */
async function createUser(
  repos: Repositories,
  claims: oidc.UserInfoResponse,
  email: string | null,
): Promise<UserEntity> {
  const base = usernameBase(claims);
  let username = base;
  for (let n = 2; await repos.users.usernameTaken(username); n += 1) {
    username = `${base}-${n}`;
  }
  const fullName = [claims.given_name, claims.family_name].filter(Boolean).join(' ');
  return repos.users.insert({
    username,
    name: claims.name ?? (fullName || username),
    email: email ?? '',
    passwordHash: null,
    verified: true,
    preferredLocale: 'en',
    createdBy: username,
    updatedBy: username,
  });
}

/** A username our rules accept (letters, digits, `-._@`), from the identity's claims. */
function usernameBase(claims: oidc.UserInfoResponse): string {
  const wanted = claims.preferred_username ?? claims.email?.split('@')[0] ?? claims.sub;
  const cleaned = wanted
    .replace(/[^a-zA-Z0-9\-._@]+/g, '-')
    .replace(/^\.+$/, '')
    .slice(0, 90);
  return cleaned && !RESERVED_USERNAMES.includes(cleaned.toLowerCase()) ? cleaned : 'user';
}

/** The HTTP status of the provider's refusal, or undefined when it did not answer at all. */
function providerStatus(error: unknown): number | undefined {
  if (error instanceof oidc.ResponseBodyError) return error.status;
  if (error instanceof oidc.WWWAuthenticateChallengeError) return error.status;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause instanceof Response && cause.status >= 400 && cause.status < 500
    ? cause.status
    : undefined;
}

function refusalOrOutage(error: unknown, field: string, what: string): AppError {
  if (providerStatus(error) === undefined) return outage(error);
  const detail = error instanceof oidc.ResponseBodyError ? error.error_description : undefined;
  return AppError.field(field, detail ? `${what}: ${detail}` : `${what}.`);
}

function outage(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new AppError('UNAVAILABLE', `The identity provider could not be reached (${reason}).`);
}

/** `base` with `parameters` added to its query (those it has already kept). */
function withQuery(base: string, parameters: Record<string, string>): string {
  const url = new URL(base);
  for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
  return url.href;
}
