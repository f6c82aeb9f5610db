/** Who is making a request. */
export type Actor =
  { kind: 'anonymous' } | { kind: 'user'; id: string; username: string; isSuperuser: boolean };

export const ANONYMOUS: Actor = { kind: 'anonymous' };
