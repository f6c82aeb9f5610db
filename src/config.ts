import path from 'node:path';
import { z } from 'zod';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8000),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: z.string().url().optional(),
  DATA_DIR: z.string().default('.data'),
  ADMIN_PASSWORD: z.string().min(8).optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  PROCESS_ROLE: z.enum(['server', 'worker']).default('server'),
  PUBLIC_URL: z.string().url().optional(),
  MAX_BODY_SIZE: z.string().default('5mb'),
  TRUST_PROXY: z
    .string()
    .regex(/^(true|false|\d{1,2})$/, "Use 'true', 'false' or a number of proxies.")
    .default('false'),
  SMTP_URL: z.string().optional(),
  MAIL_FROM: z.string().default('Terminology Registry <no-reply@localhost>'),
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().min(1).default(12),
  GRAPHQL_MAX_COST: z.coerce.number().int().min(1).default(20000),
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().min(0).default(100),
  GRAPHQL_SEARCH_COST: z.coerce.number().int().min(0).default(100),
  GRAPHQL_COUNT_COST: z.coerce.number().int().min(0).default(1),
  GRAPHQL_COST_PER_RATE_UNIT: z.coerce.number().int().min(1).default(1000),
  GRAPHQL_MAX_SUBSCRIPTIONS: z.coerce.number().int().min(1).max(1000).default(20),
  JOBS_WORKERS: z.coerce.number().int().min(0).max(64).default(2),
  JOBS_STOP_SECONDS: z.coerce.number().int().min(0).max(3600).default(5),
  DRAIN_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  TASKS_KEEP_DAYS: z.coerce.number().int().min(0).max(36500).default(30),
  CASCADE_MAX_RESOURCES: z.coerce.number().int().min(1).max(1_000_000).default(1_000),
  LIST_COUNT_CAP: z.coerce.number().int().min(0).max(100_000_000).default(10_000),
  SEARCH_COMMON_SHARE: z.coerce.number().min(0).max(1).default(0.25),
  EXPANSION_MAX_CODES: z.coerce.number().int().min(1).max(10_000_000).default(10_000),
  EXPANSION_MAX_UNPAGED_CODES: z.coerce.number().int().min(1).max(10_000_000).default(1_000),
  FHIR_CACHE_CONCEPTS: z.coerce.number().int().min(0).max(100_000_000).default(200_000),
  ANSWER_CACHE_MB: z.coerce.number().int().min(0).max(100_000).default(64),
  MATCH_REQUIRES_APPROVAL: z.enum(['true', 'false']).default('true'),
  MATCH_BRIDGE_SOURCE: z
    .string()
    .regex(
      /^$|^\/(orgs|users)\/[^/]+\/sources\/[^/]+\/?$/,
      'Use a source URL such as /orgs/CIEL/sources/CIEL/, or nothing for no bridge.',
    )
    .default('/orgs/CIEL/sources/CIEL/'),
  IMPORT_MAX_SIZE: z
    .string()
    .regex(/^\d+(kb|mb|gb)?$/i, "Use a size such as '512mb'.")
    .default('256mb'),
  IMPORT_FILE_URL_HOSTS: z.string().default(''),
  DB_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(10),
  DB_ACQUIRE_TIMEOUT_MS: z.coerce.number().int().min(1).default(10_000),
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(60_000),
  DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: z.coerce.number().int().min(0).default(60_000),
  DB_REQUEST_TRANSACTION_MS: z.coerce.number().int().min(0).default(15_000),
  RATE_LIMITS: z.enum(['on', 'off']).default('on'),
  LOOKUP_SOURCES: z.enum(['on', 'off']).default('on'),
  RATE_LIMIT_ANON_PER_MINUTE: z.coerce.number().int().min(0).default(400),
  RATE_LIMIT_ANON_PER_DAY: z.coerce.number().int().min(0).default(10_000),
  RATE_LIMIT_USER_PER_MINUTE: z.coerce.number().int().min(0).default(500),
  RATE_LIMIT_USER_PER_DAY: z.coerce.number().int().min(0).default(20_000),
  EXPORT_STORAGE: z.enum(['local', 's3']).default('local'),
  EXPORT_S3_BUCKET: z.string().optional(),
  EXPORT_S3_PREFIX: z.string().default('exports/'),
  EXPORT_S3_REGION: z.string().default('us-east-1'),
  EXPORT_S3_ENDPOINT: z.string().url().optional(),
  EXPORT_S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).default('false'),
  EXPORT_URL_TTL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300),
  LOGIN_FAILURES_PER_ACCOUNT: z.coerce.number().int().min(0).default(10),
  LOGIN_FAILURES_PER_IP: z.coerce.number().int().min(0).default(50),
  LOGIN_FAILURE_WINDOW_MINUTES: z.coerce.number().int().min(1).max(10_080).default(15),
  OIDC_ISSUER: z
    .string()
    .url()
    .refine(secureOrLoopback, 'Use https (plain http only for a loopback address).')
    .optional(),
  OIDC_CLIENT_ID: z.string().optional(),
  OIDC_CLIENT_SECRET: z.string().optional(),
  OIDC_SCOPES: z.string().default('openid profile email'),
  OIDC_TOKEN_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(60),
  OIDC_REGISTRATION_URL: z
    .string()
    .url()
    .refine(secureOrLoopback, 'Use https (plain http only for a loopback address).')
    .optional(),
  OIDC_PASSWORD_RESET_URL: z
    .string()
    .url()
    .refine(secureOrLoopback, 'Use https (plain http only for a loopback address).')
    .optional(),
  METRICS_TOKEN: z.string().min(16, 'Use a token of at least 16 characters.').optional(),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
});

/** An identity provider is reached over TLS, unless it runs on this very machine (tests, dev). */
function secureOrLoopback(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  return protocol === 'https:' || ['localhost', '127.0.0.1', '[::1]'].includes(hostname);
}

export interface Config {
  port: number;
  host: string;
  /** An external Postgres; when absent the embedded one under `dataDir` is used. */
  databaseUrl?: string;
  dataDir: string;
  adminPassword?: string;
  logLevel: (typeof LOG_LEVELS)[number];
  /**
   * `server`: the HTTP edges, and background tasks when `jobsWorkers` > 0; `worker`: background
   * tasks only (at least one at a time), no HTTP listener but the metrics one (`metricsPort`).
   */
  role: 'server' | 'worker';
  /** Base of absolute links sent in mails (never taken from a Host header when set). */
  publicUrl?: string;
  maxBodySize: string;
  /** Whether X-Forwarded-* is believed: every hop (true), none, or the nearest n proxies. */
  trustProxy: boolean | number;
  smtpUrl?: string;
  mailFrom: string;
  graphqlMaxDepth: number;
  graphqlMaxCost: number;
  /** Aliased fields one GraphQL operation may have (`__typename` aside). */
  graphqlMaxAliases: number;
  /** What a list searched with `q`, and a `totalCount`, add to a query's cost. */
  graphqlSearchCost: number;
  graphqlCountCost: number;
  /** A GraphQL request counts ceil(cost / this) requests against the rate limits. */
  graphqlCostPerRateUnit: number;
  /** Subscriptions one WebSocket connection may hold open at once. */
  graphqlMaxSubscriptions: number;
  /** Background tasks this process runs at once; 0: it only enqueues them. */
  jobsWorkers: number;
  /** On shutdown, how long running tasks may take to finish before they are aborted. */
  jobsStopSeconds: number;
  /** On shutdown, how long requests in flight may take before their connections are closed. */
  drainSeconds: number;
  /** Finished tasks are deleted this many days after they finished; 0 keeps them. */
  tasksKeepDays: number;
  /** Whether the `OCL` org with OCL's lookup sources is created at start when missing. */
  lookupSources: boolean;
  /** `/metrics` answers only with `Authorization: Bearer <this>`; absent: no `/metrics` (404). */
  metricsToken?: string;
  /**
   * `/metrics` on a listener of its own on this port (of `host`; 0: any free one), in any role,
   * and not on the main listener; absent: on the main listener (a worker has none).
   */
  metricsPort?: number;
  /** Bytes of GET answers each process keeps (`ANSWER_CACHE_MB`, compat/http/answer-cache.ts); 0: none. */
  answerCacheBytes: number;
  /** Settings the services read (limits of the operations, the FHIR content cache). */
  services: {
    /** The most concepts and mappings one `$cascade` answers (spec operations §4.2). */
    cascadeMaxResources: number;
    /** Concept and mapping lists count exactly up to this many (`LIST_COUNT_CAP`); 0: always. */
    listCountCap: number;
    /**
     * A concept search whose words are held by at least this share of the concept versions
     * counts its matches from the index of searched text (`SEARCH_COMMON_SHARE`); 0: every one.
     */
    searchCommonShare: number;
    /** The most codes one FHIR expansion may hold. */
    expansionMaxCodes: number;
    /** The most codes an expansion without `count`/`offset` answers (more must be paged). */
    expansionMaxUnpagedCodes: number;
    /** Concepts of stored code systems the FHIR operations keep rendered; 0: none. */
    fhirCacheConcepts: number;
    /** `$match` only for users an administrator approved (spec operations §5.1). */
    matchRequiresApproval: boolean;
    /** `$match`'s bridging reference source (`MATCH_BRIDGE_SOURCE`); null: no bridge. */
    matchBridgeSource: string | null;
    /** The largest bulk import file, in bytes (`IMPORT_MAX_SIZE`). */
    importMaxBytes: number;
    /** Hosts a bulk import's `file_url` may name (`IMPORT_FILE_URL_HOSTS`); none: refused. */
    importFileUrlHosts: string[];
    /** Where export files live (spec operations §4.8). */
    exportStorage: ExportStorageSettings;
    /** How long a download address in `exportURL` is valid. */
    exportUrlTtlSeconds: number;
    /** Single sign-on with an OpenID Connect provider; absent: password login only. */
    oidc?: OidcSettings;
  };
  /** The connection pool and the limits that keep one stuck request from holding the service. */
  database: {
    poolSize: number;
    acquireTimeoutMs: number;
    statementTimeoutMs: number;
    idleInTransactionTimeoutMs: number;
    /** How long a transaction of an HTTP request may run (0: no limit beyond the statement's). */
    requestTransactionMs: number;
  };
  /** spec core §8.2 request limits and the failed-login limits; a limit of 0 is off. */
  rateLimits: {
    /** False (`RATE_LIMITS=off`): nothing is counted, e.g. behind a gateway that limits. */
    enabled: boolean;
    anonymous: { perMinute: number; perDay: number };
    user: { perMinute: number; perDay: number };
    failedLogins: { perAccount: number; perIp: number; windowMinutes: number };
  };
}

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  /** Scopes asked for at sign-in (space-separated). */
  scopes: string;
  /** How long a provider's verdict on an access token is trusted before it is asked again. */
  tokenCacheSeconds: number;
  /** Where sign-up starts (Keycloak: `…/protocol/openid-connect/registrations`); else `prompt=create`. */
  registrationUrl?: string;
  /** Where a password is reset; else the authorization endpoint with Keycloak's `kc_action`. */
  passwordResetUrl?: string;
}

/** Reads the whole configuration from the environment once; a bad value stops the start. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable (as compose files pass an unset one) means "not set".
  const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = envSchema.safeParse(given);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  }
  const e = parsed.data;
  if (e.OIDC_ISSUER && !e.OIDC_CLIENT_ID) {
    throw new Error('Invalid configuration: OIDC_CLIENT_ID is required with OIDC_ISSUER');
  }
  if (e.METRICS_PORT !== undefined && !e.METRICS_TOKEN) {
    throw new Error(
      'Invalid configuration: METRICS_TOKEN is required with METRICS_PORT (metrics are only served to its bearer)',
    );
  }
  if (e.PROCESS_ROLE === 'server' && e.METRICS_PORT === e.PORT && e.PORT !== 0) {
    throw new Error(
      'Invalid configuration: METRICS_PORT must differ from PORT (unset it to serve /metrics on PORT)',
    );
  }
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir: path.resolve(e.DATA_DIR),
    adminPassword: e.ADMIN_PASSWORD,
    logLevel: e.LOG_LEVEL,
    role: e.PROCESS_ROLE,
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ''),
    maxBodySize: e.MAX_BODY_SIZE,
    trustProxy: /^\d+$/.test(e.TRUST_PROXY) ? Number(e.TRUST_PROXY) : e.TRUST_PROXY === 'true',
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    graphqlMaxDepth: e.GRAPHQL_MAX_DEPTH,
    graphqlMaxCost: e.GRAPHQL_MAX_COST,
    graphqlMaxAliases: e.GRAPHQL_MAX_ALIASES,
    graphqlSearchCost: e.GRAPHQL_SEARCH_COST,
    graphqlCountCost: e.GRAPHQL_COUNT_COST,
    graphqlCostPerRateUnit: e.GRAPHQL_COST_PER_RATE_UNIT,
    graphqlMaxSubscriptions: e.GRAPHQL_MAX_SUBSCRIPTIONS,
    jobsWorkers: e.PROCESS_ROLE === 'worker' ? Math.max(e.JOBS_WORKERS, 1) : e.JOBS_WORKERS,
    jobsStopSeconds: e.JOBS_STOP_SECONDS,
    drainSeconds: e.DRAIN_SECONDS,
    tasksKeepDays: e.TASKS_KEEP_DAYS,
    lookupSources: e.LOOKUP_SOURCES === 'on',
    metricsToken: e.METRICS_TOKEN,
    metricsPort: e.METRICS_PORT,
    answerCacheBytes: e.ANSWER_CACHE_MB * 1024 * 1024,
    services: {
      cascadeMaxResources: e.CASCADE_MAX_RESOURCES,
      listCountCap: e.LIST_COUNT_CAP,
      searchCommonShare: e.SEARCH_COMMON_SHARE,
      expansionMaxCodes: e.EXPANSION_MAX_CODES,
      expansionMaxUnpagedCodes: e.EXPANSION_MAX_UNPAGED_CODES,
      fhirCacheConcepts: e.FHIR_CACHE_CONCEPTS,
      matchRequiresApproval: e.MATCH_REQUIRES_APPROVAL === 'true',
      matchBridgeSource: e.MATCH_BRIDGE_SOURCE || null,
      importMaxBytes: bytesOf(e.IMPORT_MAX_SIZE),
      importFileUrlHosts: e.IMPORT_FILE_URL_HOSTS.split(',')
        .map((host) => host.trim().toLowerCase())
        .filter(Boolean),
      exportStorage: exportStorageOf(e),
      exportUrlTtlSeconds: e.EXPORT_URL_TTL_SECONDS,
      oidc:
        e.OIDC_ISSUER && e.OIDC_CLIENT_ID
          ? {
              issuer: e.OIDC_ISSUER,
              clientId: e.OIDC_CLIENT_ID,
              clientSecret: e.OIDC_CLIENT_SECRET,
              scopes: e.OIDC_SCOPES,
              tokenCacheSeconds: e.OIDC_TOKEN_CACHE_SECONDS,
              registrationUrl: e.OIDC_REGISTRATION_URL,
              passwordResetUrl: e.OIDC_PASSWORD_RESET_URL,
            }
          : undefined,
    },
    database: {
      poolSize: e.DB_POOL_SIZE,
      acquireTimeoutMs: e.DB_ACQUIRE_TIMEOUT_MS,
      statementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS,
      idleInTransactionTimeoutMs: e.DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      // A request's budget never lifts the statement limit every session has.
      requestTransactionMs:
        e.DB_STATEMENT_TIMEOUT_MS > 0 && e.DB_REQUEST_TRANSACTION_MS > 0
          ? Math.min(e.DB_REQUEST_TRANSACTION_MS, e.DB_STATEMENT_TIMEOUT_MS)
          : e.DB_REQUEST_TRANSACTION_MS || e.DB_STATEMENT_TIMEOUT_MS,
    },
    rateLimits: {
      enabled: e.RATE_LIMITS === 'on',
      anonymous: { perMinute: e.RATE_LIMIT_ANON_PER_MINUTE, perDay: e.RATE_LIMIT_ANON_PER_DAY },
      user: { perMinute: e.RATE_LIMIT_USER_PER_MINUTE, perDay: e.RATE_LIMIT_USER_PER_DAY },
      failedLogins: {
        perAccount: e.LOGIN_FAILURES_PER_ACCOUNT,
        perIp: e.LOGIN_FAILURES_PER_IP,
        windowMinutes: e.LOGIN_FAILURE_WINDOW_MINUTES,
      },
    },
  };
}

/** `512mb` → bytes. */
function bytesOf(size: string): number {
  const match = /^(\d+)(kb|mb|gb)?$/i.exec(size)!;
  const unit = { kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[match[2]?.toLowerCase() as 'kb'] ?? 1;
  return Number(match[1]) * unit;
}

/** `EXPORT_STORAGE=local` (files under `DATA_DIR/exports`) or `s3` (a bucket, which is required). */
function exportStorageOf(e: z.infer<typeof envSchema>): ExportStorageSettings {
  if (e.EXPORT_STORAGE === 'local') {
    return { kind: 'local', directory: path.join(path.resolve(e.DATA_DIR), 'exports') };
  }
  if (!e.EXPORT_S3_BUCKET) {
    throw new Error('Invalid configuration: EXPORT_S3_BUCKET is required with EXPORT_STORAGE=s3');
  }
  return {
    kind: 's3',
    bucket: e.EXPORT_S3_BUCKET,
    prefix: e.EXPORT_S3_PREFIX,
    region: e.EXPORT_S3_REGION,
    endpoint: e.EXPORT_S3_ENDPOINT,
    forcePathStyle: e.EXPORT_S3_FORCE_PATH_STYLE === 'true',
  };
}

/** Settings of the export storage (the configuration's `EXPORT_*` variables). */
export type ExportStorageSettings =
  | { kind: 'local'; directory: string }
  | {
      kind: 's3';
      bucket: string;
      prefix: string;
      region: string;
      endpoint?: string;
      forcePathStyle: boolean;
    };
