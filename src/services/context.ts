import type { Logger } from '../logger';
import type { Actor } from './actor';
import type { Loaders } from './loaders';

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
