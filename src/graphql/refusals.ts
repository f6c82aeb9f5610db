import type { GraphqlRefusal } from '../metrics/registry';

/**
 * The `extensions.code` of a query refused before it runs (HTTP 400), one per reason, so that a
 * client can tell a query to split (cost) from one to flatten (depth) or to de-alias.
 */
export const REFUSAL_CODES: Record<GraphqlRefusal, string> = {
  depth: 'QUERY_TOO_DEEP',
  aliases: 'TOO_MANY_ALIASES',
  cost: 'QUERY_TOO_COSTLY',
};
