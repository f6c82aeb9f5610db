import type { TestUser } from './index';

/**
 * The request headers of a caller: none for an anonymous one (`undefined`), otherwise its
 * `Authorization` (a test user's, or a raw header value given as a string).
 */
export const as = (user?: TestUser | string): { Authorization?: string } =>
  user === undefined ? {} : { Authorization: typeof user === 'string' ? user : user.auth };
