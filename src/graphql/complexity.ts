import type { ApolloServerPlugin } from '@apollo/server';
import {
  GraphQLError,
  getVariableValues,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { getComplexity, simpleEstimator, type ComplexityEstimator } from 'graphql-query-complexity';
import { graphqlRefusals } from '../metrics/registry';
import { REFUSAL_CODES } from './refusals';

/** What `limit: 0` (everything) is assumed to fetch when costing a query. */
const UNBOUNDED_LIST = 1000;

export interface CostRules {
  /** Highest cost accepted. */
  maxCost: number;
  /** What searching a list (`q`) adds: a text search reads far more than the items it returns. */
  searchCost: number;
  /** What a `totalCount` costs: it counts every match, not one item. */
  countCost: number;
  /** A request counts ceil(cost / this) requests against the caller's rate limits. */
  costPerRateUnit: number;
}

/**
 * Counts `units` more requests of the caller against its rate limits; answers the seconds to
 * wait when that puts it over a limit.
 */
export type ChargeRequests = (units: number) => Promise<number | undefined>;

/**
 * A list field costs its items times the cost of one item: `first` items on a cursor page, else
 * `limit` (or `UNBOUNDED_LIST` for `limit: 0`), so nesting lists multiplies as their database
 * work does; searching it or counting its facets costs `searchCost` more (each).
 */
function listEstimator(searchCost: number): ComplexityEstimator {
  return ({ args, childComplexity }) => {
    if (typeof args.limit !== 'number') return undefined;
    const items =
      typeof args.first === 'number'
        ? Math.max(args.first, 1)
        : args.limit === 0
          ? UNBOUNDED_LIST
          : Math.max(args.limit, 1);
    const search = typeof args.q === 'string' && args.q.trim() !== '' ? searchCost : 0;
    // Facets count every match of the list, field by field: a search's work.
    const facets = args.includeFacets === true ? searchCost : 0;
    return 1 + search + facets + items * Math.max(childComplexity, 1);
  };
}

function countEstimator(countCost: number): ComplexityEstimator {
  return ({ field }) => (field.name === 'totalCount' ? countCost : undefined);
}

/**
 * Refuses, before anything runs, an operation whose estimated cost is above `maxCost` (HTTP 400,
 * counted in `registry_graphql_refusals_total`), and counts what it costs beyond one request
 * against the caller's rate limits (HTTP 429 once over).
 */
export function costLimit<T extends { chargeRequests?: ChargeRequests }>(
  rules: CostRules,
): ApolloServerPlugin<T> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, document, schema, operation, contextValue }) {
          // Without its operation there is no cost to estimate (the request fails in execution).
          if (!operation) return;
          const cost = refuseCostly(rules, {
            schema,
            document,
            operation,
            operationName: request.operationName,
            variables: request.variables,
          });
          if (cost === undefined) return;
          // The rate limiter counted the request itself already.
          const units = Math.ceil(cost / rules.costPerRateUnit);
          if (units <= 1 || !contextValue.chargeRequests) return;
          const retryAfter = await contextValue.chargeRequests(units - 1);
          if (retryAfter === undefined) return;
          throw new GraphQLError(
            `Too many requests: this query costs ${cost}, counted as ${units} requests; ` +
              `try again in ${retryAfter} seconds.`,
            {
              extensions: {
                code: 'RATE_LIMITED',
                retryAfterSeconds: retryAfter,
                http: { status: 429, headers: new Map([['retry-after', String(retryAfter)]]) },
              },
            },
          );
        },
      };
    },
  };
}

/**
 * Throws the refusal (counted in `registry_graphql_refusals_total`) of an operation whose
 * estimated cost is above `rules.maxCost`; answers its cost, or undefined when its variables are
 * of the wrong type (it then fails in execution with GraphQL's own error: nothing to estimate).
 * Every transport's operations pass here (HTTP, and subscriptions over WebSocket).
 */
export function refuseCostly(
  rules: Pick<CostRules, 'maxCost' | 'searchCost' | 'countCost'>,
  {
    schema,
    document,
    operation,
    operationName,
    variables,
  }: {
    schema: GraphQLSchema;
    document: DocumentNode;
    operation: OperationDefinitionNode;
    operationName?: string | null;
    variables?: Record<string, unknown> | null;
  },
): number | undefined {
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {}, {
    maxErrors: 1,
  });
  if (coerced.errors) return undefined;
  let cost: number;
  try {
    cost = getComplexity({
      schema,
      query: document,
      operationName: operationName ?? undefined,
      variables: variables ?? {},
      estimators: [
        countEstimator(rules.countCost),
        listEstimator(rules.searchCost),
        simpleEstimator({ defaultComplexity: 1 }),
      ],
    });
  } catch {
    // The estimator gives up on operations with more nodes than it will walk.
    cost = Number.POSITIVE_INFINITY;
  }
  if (cost > rules.maxCost) {
    graphqlRefusals.inc({ reason: 'cost' });
    const found = Number.isFinite(cost) ? `found ${cost}` : 'the operation is too large to cost';
    throw new GraphQLError(`Query cost limit of ${rules.maxCost} exceeded, ${found}.`, {
      extensions: { code: REFUSAL_CODES.cost, http: { status: 400 } },
    });
  }
  return cost;
}
