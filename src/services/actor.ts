import type { Viewer } from '../repositories';

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
    };

/** Requests a user may make per window; null: the instance's limit, 0: no limit. */
export interface UserRateLimits {
  perMinute: number | null;
  perDay: number | null;
}

export const ANONYMOUS: Actor = { kind: 'anonymous' };

/** The list-scoping form of an actor. */
export function viewerOf(actor: Actor): Viewer {
  if (actor.kind === 'user' && actor.isSuperuser) return { superuser: true };
  return { superuser: false, userId: actor.kind === 'user' ? actor.id : null };
}
