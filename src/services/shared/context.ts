import type { Logger } from '../../logger';
import type { Repositories } from '../../repositories';
import type { Actor } from './actor';
import { createLoaders, type Loaders } from './loaders';

export type { Actor } from './actor';
export { ANONYMOUS } from './actor';

/** What every service method receives first: who is asking, and this request's loaders. */
export interface ServiceContext {
  actor: Actor;
  loaders: Loaders;
  log: Logger;
  /** Absolute base (`https://host`) for links sent outside the API, e.g. in mails. */
  baseUrl: string;
  /** The caller's address as limits count it (an IPv6 address by its /56); absent outside HTTP. */
  client?: string;
}

/**
 * The caller's context inside an open transaction: the same caller, with loaders that read on
 * the transaction's connection (`within`, the repositories its work received), never the pool's.
 */
export function contextOn(ctx: ServiceContext, within: Repositories): ServiceContext {
  return { ...ctx, loaders: createLoaders(within, ctx.actor) };
}
