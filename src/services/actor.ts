import type { Viewer } from '../repositories';

/** Who is making a request. */
export type Actor =
  { kind: 'anonymous' } | { kind: 'user'; id: string; username: string; isSuperuser: boolean };

export const ANONYMOUS: Actor = { kind: 'anonymous' };

/** The list-scoping form of an actor. */
export function viewerOf(actor: Actor): Viewer {
  if (actor.kind === 'user' && actor.isSuperuser) return { superuser: true };
  return { superuser: false, userId: actor.kind === 'user' ? actor.id : null };
}
