import type { Viewer } from '../../repositories';

/** Who is making a request. */
export type Actor =
  | { kind: 'anonymous' }
  | {
      kind: 'user';
      id: string;
      username: string;
      isSuperuser: boolean;
      /** Limits an administrator set for this user (spec core §8.2); null: the instance's. */
      rateLimits?: UserRateLimits;
    }
  /**
   * Reads as the one reader a private repository is sure to have, with nothing more: the public
   * content and the private repositories of one owner (an org's, as a plain member with no other
   * memberships; a user's own); no account, no rights to change anything. What an export is
   * written as, so that the file holds only what every reader of it may see.
   */
  | { kind: 'ownerReader'; owner: ReaderOwner };

/** The owner whose private repositories an owner reader sees. */
export type ReaderOwner = { orgId: string } | { userId: string };

/** Requests a user may make per window; null: the instance's limit, 0: no limit. */
export interface UserRateLimits {
  perMinute: number | null;
  perDay: number | null;
}

export const ANONYMOUS: Actor = { kind: 'anonymous' };

/** The list-scoping form of an actor. */
export function viewerOf(actor: Actor): Viewer {
  if (actor.kind === 'user' && actor.isSuperuser) return { superuser: true };
  if (actor.kind === 'ownerReader') return { superuser: false, userId: null, owner: actor.owner };
  return { superuser: false, userId: actor.kind === 'user' ? actor.id : null };
}
