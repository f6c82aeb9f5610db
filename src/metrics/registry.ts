import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The process's metrics (served at `/metrics` when `METRICS_TOKEN` is set: on the main listener,
 * or on `METRICS_PORT` when that is set). Families observed where things happen live here, with
 * no dependency on the rest of the app, so that the job queue, the rate limits, the GraphQL
 * limits and the FHIR cache can count without importing the composition root.
 * Labels never carry paths, user names or ids.
 */
export const registry = new Registry();

/** Tasks that ended, by kind and outcome (`SUCCESS`/`FAILURE`), and how long they ran. */
export const taskDuration = new Histogram({
  name: 'registry_task_duration_seconds',
  help: 'Duration of background tasks that ended, by kind and outcome.',
  labelNames: ['kind', 'state'] as const,
  buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
  registers: [registry],
});

/**
 * Requests refused with 429, by the window whose limit was reached (a GraphQL request counted as
 * several by its cost included).
 */
export const rateLimitRefusals = new Counter({
  name: 'registry_rate_limit_refusals_total',
  help: 'Requests refused because a rate limit was reached, by window.',
  labelNames: ['window'] as const,
  registers: [registry],
});

/** Why a GraphQL operation can be refused before it runs (the bounded `reason` label). */
export type GraphqlRefusal = 'depth' | 'aliases' | 'cost';

/**
 * GraphQL requests refused before anything ran because the operation is too deep, has too many
 * aliases or costs too much (HTTP 400); a request is counted once for each reason it broke.
 * Not a rate limit: a costly query that runs out the caller's budget is a rate-limit refusal.
 */
export const graphqlRefusals = new Counter({
  name: 'registry_graphql_refusals_total',
  help: 'GraphQL requests refused before running, by reason (depth, aliases, cost).',
  labelNames: ['reason'] as const,
  registers: [registry],
});

/** Look-ups of the FHIR rendered-resource cache that found a rendering, and those that did not. */
export const answerCacheLookups = new Counter({
  name: 'registry_answer_cache_lookups_total',
  help: 'Look-ups of the kept GET answers (ANSWER_CACHE_MB), by result (hit or miss).',
  labelNames: ['result'] as const,
  registers: [registry],
});

export const fhirCacheLookups = new Counter({
  name: 'registry_fhir_render_cache_lookups_total',
  help: 'Look-ups of the FHIR rendered-resource cache, by result (hit or miss).',
  labelNames: ['result'] as const,
  registers: [registry],
});

/** What the FHIR rendered-resource cache holds, in concepts (members, mappings) in all. */
export const fhirCacheSize = new Gauge({
  name: 'registry_fhir_render_cache_size',
  help: 'Size of the FHIR rendered-resource cache, in concepts, members and mappings.',
  registers: [registry],
});

/**
 * Watches open in this process (GraphQL subscriptions, each waiting for notices), by what they
 * watch: `task` (`taskProgress`) or `repository` (`repositoryChanged`).
 */
export const watchesOpen = new Gauge({
  name: 'registry_watches_open',
  help: 'GraphQL subscriptions open in this process, by what they watch (task, repository).',
  labelNames: ['topic'] as const,
  registers: [registry],
});
