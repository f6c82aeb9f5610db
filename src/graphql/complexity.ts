import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, getVariableValues } from 'graphql';
import { getComplexity, simpleEstimator, type ComplexityEstimator } from 'graphql-query-complexity';

/** What `limit: 0` (everything) is assumed to fetch when costing a query. */
const UNBOUNDED_LIST = 1000;

/**
 * A list field costs its items times the cost of one item: `limit` items (or `UNBOUNDED_LIST`
 * for `limit: 0`), so nesting lists multiplies as their database work does.
 */
const listEstimator: ComplexityEstimator = ({ args, childComplexity }) => {
  if (typeof args.limit !== 'number') return undefined;
  const items = args.limit === 0 ? UNBOUNDED_LIST : Math.max(args.limit, 1);
  return 1 + items * Math.max(childComplexity, 1);
};

/** Refuses, before anything runs, an operation whose estimated cost is above `maxCost` (HTTP 400). */
export function costLimit<T extends object>(maxCost: number): ApolloServerPlugin<T> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, document, schema, operation }) {
          // Without its operation, or with variables of the wrong type, the request fails in
          // execution with GraphQL's own error (HTTP 400); there is no cost to estimate.
          if (!operation) return;
          const coerced = getVariableValues(
            schema,
            operation.variableDefinitions ?? [],
            request.variables ?? {},
            { maxErrors: 1 },
          );
          if (coerced.errors) return;
          let cost: number;
          try {
            cost = getComplexity({
              schema,
              query: document,
              operationName: request.operationName ?? undefined,
              variables: request.variables ?? {},
              estimators: [listEstimator, simpleEstimator({ defaultComplexity: 1 })],
            });
          } catch {
            // The estimator gives up on operations with more nodes than it will walk.
            cost = Number.POSITIVE_INFINITY;
          }
          if (cost > maxCost) {
            const found = Number.isFinite(cost)
              ? `found ${cost}`
              : 'the operation is too large to cost';
            throw new GraphQLError(`Query cost limit of ${maxCost} exceeded, ${found}.`, {
              extensions: { code: 'GRAPHQL_VALIDATION_FAILED', http: { status: 400 } },
            });
          }
        },
      };
    },
  };
}
