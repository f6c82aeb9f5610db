import type { Express, NextFunction, Request, Response } from 'express';
import type { IncomingMessage } from 'node:http';
import { ipKeyGenerator } from 'express-rate-limit';
import { isAppError, type AppError } from './errors';
import type { Logger } from './logger';
import { ANONYMOUS, type Actor, type ServiceContext, type Services } from './services';

interface Locals {
  ctx?: ServiceContext;
  authError?: AppError;
}

/**
 * Authenticates once per HTTP request and builds the context every edge uses (design §2). A bad
 * credential is kept, not thrown, so that each edge answers it in its own shape.
 */
export function attachContext(services: Services, publicUrl?: string) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const caller = callerOf(req, (req as Request & { log: Logger }).log, publicUrl);
    let ctx: ServiceContext;
    try {
      ctx = await authenticatedContext(services, req.get('authorization'), caller);
    } catch (error) {
      if (!isAppError(error)) throw error;
      (res.locals as Locals).authError = error;
      ctx = services.context(ANONYMOUS, caller.log, caller.baseUrl, caller.client);
    }
    (res.locals as Locals).ctx = ctx;
    if (ctx.actor.kind === 'user') res.setHeader('X-OCL-REQUEST-USER', ctx.actor.username);
    next();
  };
}

/** Where a request comes from, as its context records it. */
interface Caller {
  log: Logger;
  baseUrl: string;
  client?: string;
}

/**
 * The context of a caller presenting `authorization` (an `Authorization` header's value, or the
 * same carried by a WebSocket's `connection_init`): anonymous without one; throws the AppError
 * that refuses it (UNAUTHENTICATED, or RATE_LIMITED for a throttled Basic login).
 */
export async function authenticatedContext(
  services: Services,
  authorization: string | undefined,
  caller: Caller,
): Promise<ServiceContext> {
  const actor: Actor = await services.auth.authenticate(authorization, caller.client);
  return services.context(actor, caller.log, caller.baseUrl, caller.client);
}

/**
 * A WebSocket upgrade's caller, read as an HTTP request of `app` would be (the same client
 * address under TRUST_PROXY, the same base URL): the upgrade is given the app's request
 * prototype, as express gives every request it handles.
 */
export function upgradeCaller(
  app: Express,
  request: IncomingMessage,
  log: Logger,
  publicUrl?: string,
): Caller {
  const req = Object.setPrototypeOf(request, app.request as object) as Request;
  return callerOf(req, log, publicUrl);
}

function callerOf(req: Request, log: Logger, publicUrl?: string): Caller {
  // Mailed links use the configured public address; the Host header is the caller's to forge.
  return { log, baseUrl: publicUrl ?? baseUrlOf(req), client: clientOf(req) };
}

/**
 * The caller's address as limits count it: the peer, or with TRUST_PROXY what the proxies say;
 * an IPv6 address by its /56 network (one subscriber's usual allocation).
 */
function clientOf(req: Request): string | undefined {
  return req.ip ? ipKeyGenerator(req.ip) : undefined;
}

/** The request's context whether or not its credentials were accepted (anonymous if not). */
export function peekContext(res: Response): ServiceContext | undefined {
  return (res.locals as Locals).ctx;
}

/** The request's context; throws the authentication failure it carried, if any. */
export function requestContext(res: Response): ServiceContext {
  const locals = res.locals as Locals;
  if (locals.authError) throw locals.authError;
  if (!locals.ctx) throw new Error('attachContext did not run for this request');
  return locals.ctx;
}

/** A host name or address with an optional port, as a Host header may carry it. */
const HOST = /^(?:[A-Za-z0-9][A-Za-z0-9.-]{0,252}|\[[0-9A-Fa-f:.]{2,45}\])(?::(\d{1,5}))?$/;

/**
 * `scheme://host` of the request (honours X-Forwarded-* when TRUST_PROXY is on). A malformed
 * Host header cannot break the links built from it: it is replaced by `localhost`.
 */
export function baseUrlOf(req: Request): string {
  const host = req.get('host') ?? '';
  const match = HOST.exec(host);
  const valid = match !== null && (match[1] === undefined || Number(match[1]) <= 65535);
  return `${req.protocol}://${valid ? host : 'localhost'}`;
}
