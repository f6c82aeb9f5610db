import path from 'node:path';
import type { DataSource } from 'typeorm';
import type { Logger } from '../logger';
import { Notifications } from '../db/notifications';
import { Repositories } from '../repositories';
import { AuthService } from './accounts/auth.service';
import type { OidcSettings } from '../config';
import { OidcService } from './accounts/oidc.service';
export type { OidcSignIn, OidcTokens } from './accounts/oidc.service';
import { RateLimitService } from './accounts/rate-limit.service';
import { CascadeService, DEFAULT_CASCADE_MAX_RESOURCES } from './collections/cascade.service';
import { CloneService } from './collections/clone.service';
import { CollectionService } from './collections/collection.service';
import { CollectionExpansions } from './collections/expansions';
import {
  ADD_REFERENCES_TASK,
  CollectionReferences,
  type AddReferencesJob,
} from './collections/references';
import { ConceptService } from './content/concept.service';
import { MappingService } from './content/mapping.service';
import { ensureAdmin } from './accounts/bootstrap';
import type { Actor, ServiceContext } from './shared/context';
import { createLoaders, type Loaders } from './shared/loaders';
import type { Mailer } from './accounts/mailer';
import { OrgService } from './accounts/org.service';
export type { OrgDetail, OrgItem } from './accounts/org.service';
import { PathResolver } from './shared/paths';
import { RepositoryService, type VersionEvents } from './content/repository.service';
import { RepositoryDetailService } from './content/repository-detail.service';
import { VersionComparisonService } from './content/version-compare.service';
export { hierarchyRootOf, hierarchyRootUrl, refOf } from './content/repository.service';
import { UserService } from './accounts/user.service';
export type { UserDetail, UserItem } from './accounts/user.service';
import { JobQueue } from '../jobs';
import { TaskService } from './community/task.service';
import { ReferenceResolver } from './collections/reference-resolver';
import { UrlRegistryService } from './collections/url-registry.service';
import {
  FHIR_WRITE_TASK,
  FhirResourceService,
  type FhirWriteJob,
} from './terminology/fhir-resource.service';
import { TerminologyService } from './terminology/terminology.service';
import { MatchService } from './matching/match.service';
export type { MatchOptions, MatchRowResult } from './matching/match.service';
import {
  BULK_IMPORT_TASK,
  BulkImportService,
  type BulkImportJob,
} from './transfer/bulk-import.service';
import {
  DEFAULT_EXPORT_URL_TTL_SECONDS,
  EXPORT_TASK,
  ExportService,
  type ExportJob,
} from './transfer/export.service';
import type { ExportStorageSettings } from '../config';
import { createExportStorage } from './transfer/export-storage';
export type { ExportSerializer, ExportStatus } from './transfer/export.service';
export { writeTo } from './transfer/export.service';
export { jsonZip, zipText, ZIP_ENTRY } from './transfer/zip';
export type { ExportStorageSettings } from '../config';
import { SummaryService } from './community/summary.service';
import { EventService } from './community/event.service';
import { PinService } from './community/pin.service';
import { FollowService } from './community/follow.service';
import { ProfileService } from './accounts/profile.service';
import { LookupService } from './community/lookup.service';
import { WatchService } from './community/watch.service';

export { ANONYMOUS } from './shared/context';
export { isFinished } from '../jobs';
export type { JobQueue, TaskHandle, TaskHandler, TaskState, TaskView } from '../jobs';
export type { Actor, ServiceContext } from './shared/context';
export type { UserRateLimits } from './shared/actor';
export type {
  FailedLoginLimits,
  LimitedWindow,
  RateLimitService,
  RateWindow,
  WindowCount,
} from './accounts/rate-limit.service';
export { COUNT_FLUSH_MS } from './accounts/rate-limit.service';
export { parseCascadeParameters } from './collections/cascade-parameters';
export type { CascadeInput, CascadeParameters } from './collections/cascade-parameters';
export type { CascadeNode, CascadeResult, CascadeStep } from './collections/cascade.service';
export type { CloneOutcome, CloneResult } from './collections/clone.service';
export { isAuthenticated, isSuperuser } from './shared/access';
export { ADMIN_USERNAME } from './accounts/bootstrap';
export { createMailer } from './accounts/mailer';
export { extraOf, withExtra, withoutExtra } from './shared/extras';
export type { Mail, Mailer } from './accounts/mailer';
export { DEFAULT_LIMIT, defaultListParams } from './shared/list';
export { MAX_FIRST } from './shared/cursor';
export type { ListParams, Page } from './shared/list';
export type { ExtrasCondition, ExtrasFilter, OrgCounts, UserCounts } from '../repositories';
export type {
  Owner,
  RepoCounts,
  RepoDetail,
  RepoScope,
  RepoView,
} from './content/repository.service';
export type { RepoContentVisitor, RepoDetailInclude } from './content/repository-detail.service';
export { CHANGE_KINDS, compareInput } from './content/version-compare.service';
export { changelogMarkdown } from './content/changelog-markdown';
export type {
  ChangeKind,
  Changelog,
  ComparedVersion,
  ConceptChange,
  ContentChanges,
  MappingChange,
  VersionComparison,
} from './content/version-compare.service';
export type {
  ConceptDetail,
  ConceptInclude,
  ConceptView,
  EditMode,
} from './content/concept.service';
export type { AddedReference, AddOutcome, ReferenceView } from './collections/references';
export type { ExpansionDetail, ExpansionView } from './collections/expansions';
export type { ExpansionCounts, ExpansionRow, ReferenceRow } from '../repositories';
export type {
  Ends,
  MappingDetail,
  MappingItem,
  MappingView,
  ResolvedEnd,
} from './content/mapping.service';
export { mappingEnd, type MappingEnd } from './content/mapping-views';
export type { ReferenceInput, Resolution } from './collections/reference-resolver';
export type { RepoSummary, VersionHolders } from './community/summary.service';
export type { PinnedResource, PinView } from './community/pin.service';
export type { FollowView } from './community/follow.service';
export type { ProfileInclude, UserProfile } from './accounts/profile.service';
export type { LocaleView } from './community/lookup.service';
export type { RepositoryChange, WatchService } from './community/watch.service';
export { MAX_WAITING_DELIVERIES } from './community/watch.service';
export { REPOSITORY_CHANGE_KINDS } from './shared/changes';
export type { RepositoryChangeKind } from './shared/changes';
export type { Delivery } from './shared/feed';
export { MAX_PINS } from './community/pin.service';
export type { ReferenceResult } from './collections/references';
export type { ContentSummary, Distribution, EventRow, PinRow, FollowRow } from '../repositories';
export { registryEntryUrl } from './collections/url-registry.service';
export type { UrlRegistryEntryView } from './collections/url-registry.service';
export {
  ownerUrl,
  parseConceptUrl,
  parseMappingUrl,
  parseOwnerUrl,
  parseRepoUrl,
  repoUrl,
} from './shared/urls';
export type { ConceptRef, MappingRef, OwnerRef, RepoRef } from './shared/urls';
export { API_VERSION } from './shared/version';

// The schemas the services validate request bodies with (the API reference describes them).
export { authInput } from './accounts/auth.service';
export { oidcInput } from './accounts/oidc.service';
export { orgInput } from './accounts/org.service';
export { userInput } from './accounts/user.service';
export { cloneInput } from './collections/clone.service';
export { expansionInput } from './collections/expansions';
export { urlRegistryInput } from './collections/url-registry.service';
export { followInput } from './community/follow.service';
export { pinInput } from './community/pin.service';
export { conceptInput } from './content/concept.service';
export { mappingInput } from './content/mapping.service';
export { repositoryInput } from './content/repository.service';
export { matchInput } from './matching/match.service';

/** The default most codes of one FHIR expansion (`EXPANSION_MAX_CODES`). */
export const DEFAULT_EXPANSION_MAX_CODES = 10_000;
/** The default size of the FHIR operations' cache of stored code systems (`FHIR_CACHE_CONCEPTS`). */
export const DEFAULT_FHIR_CACHE_CONCEPTS = 200_000;
/** The default most codes of one expansion that is not paged (`EXPANSION_MAX_UNPAGED_CODES`). */
export const DEFAULT_EXPANSION_MAX_UNPAGED_CODES = 1_000;
/**
 * Lists count exactly up to 10,000 items, as OCL's search engine (Elasticsearch tracks total hits
 * exactly up to 10,000 by default and reports more as at least that many).
 */
export const DEFAULT_LIST_COUNT_CAP = 10_000;

/** The default `ServiceOptions.searchCommonShare` (`SEARCH_COMMON_SHARE`). */
export const DEFAULT_SEARCH_COMMON_SHARE = 0.25;

/** `$match`'s default bridging reference source (`MATCH_BRIDGE_SOURCE`), as OCL's. */
export const DEFAULT_MATCH_BRIDGE_SOURCE = '/orgs/CIEL/sources/CIEL/';
export { appErrorOf, TerminologyError, isTerminologyError } from './terminology/issues';
export type { IssueSpec } from './terminology/issues';
export type * from './terminology/fhir';
export type {
  TerminologyService,
  ValidateRequest,
  ValueSetTarget,
} from './terminology/terminology.service';
export type { CodeInput, ValidateOptions, ValidateResult } from './terminology/validate';
export type {
  ExpandedProperty,
  ExpansionEntry,
  ExpansionOptions,
  ExpansionPage,
  ExpansionPropertyDefinition,
} from './terminology/expand';
export { parseLanguages } from './terminology/languages';
export { inlineValueSet, terminologyResources } from './terminology/input';
export type { ImportReport, LineFailure, StartImport } from './transfer/bulk-import.service';
export type { ImportFormat } from '../repositories';

/** The default largest bulk import file (`IMPORT_MAX_SIZE`), in bytes. */
export const DEFAULT_IMPORT_MAX_BYTES = 256 * 1024 * 1024;

/** Settings of the services (from the configuration). */
export interface ServiceOptions {
  cascadeMaxResources?: number;
  /**
   * Concept and mapping lists count exactly up to this many items (`LIST_COUNT_CAP`); beyond,
   * the count is the cap and said to be a lower bound. 0: always exact.
   */
  listCountCap?: number;
  /**
   * A concept search whose words are held by at least this share of the concept versions
   * (PostgreSQL's statistics) counts its matches from the index of searched text
   * (`SEARCH_COMMON_SHARE`); 0: every search.
   */
  searchCommonShare?: number;
  /** The most codes a FHIR expansion may hold before it is refused as too costly. */
  expansionMaxCodes?: number;
  /** Concepts of stored code systems kept rendered for the FHIR operations; 0: none. */
  fhirCacheConcepts?: number;
  /** The most codes an expansion without `count`/`offset` answers. */
  expansionMaxUnpagedCodes?: number;
  /** `$match` only for users an administrator approved (spec operations §5.1); true by default. */
  matchRequiresApproval?: boolean;
  /**
   * The bridging reference source of `$match` (`ocl-ciel-bridge`, spec operations §4.5), a source
   * URL; default `/orgs/CIEL/sources/CIEL/`; null: no bridge.
   */
  matchBridgeSource?: string | null;
  /** The largest bulk import file, in bytes. */
  importMaxBytes?: number;
  /** Hosts a bulk import's `file_url` may name; none: `file_url` is refused. */
  importFileUrlHosts?: string[];
  /** Where export files live; default: `.data/exports` under the working directory. */
  exportStorage?: ExportStorageSettings;
  /** How long a download address in `exportURL` is valid. */
  exportUrlTtlSeconds?: number;
  /** Single sign-on with an OpenID Connect provider; absent: password login only. */
  oidc?: OidcSettings;
}

/** Every service, wired once per process and shared by all three edges. */
export class Services {
  private readonly repos: Repositories;
  /** Background work: register handlers here; `createApp` starts and stops it. */
  readonly jobs: JobQueue;
  /** This process's `LISTEN` connection: what other processes changed; `createApp` starts it. */
  readonly notifications: Notifications;
  readonly tasks: TaskService;
  readonly users: UserService;
  readonly orgs: OrgService;
  readonly auth: AuthService;
  readonly oidc: OidcService;
  readonly rateLimits: RateLimitService;
  readonly repositories: RepositoryService;
  /** Repository details with their first concepts, mappings and references (one call). */
  readonly repositoryDetails: RepositoryDetailService;
  /** OCL's `$compare` and `$changelog` of two versions of a source. */
  readonly versionComparisons: VersionComparisonService;
  readonly concepts: ConceptService;
  readonly mappings: MappingService;
  /** A collection's references: adding (now or as a task), listing, removing. */
  readonly references: CollectionReferences;
  /** A collection version's expansions, made with their parameters. */
  readonly expansions: CollectionExpansions;
  /** The members of a collection version's expansion, as the caller may read them. */
  readonly collections: CollectionService;
  readonly resolver: ReferenceResolver;
  readonly urlRegistry: UrlRegistryService;
  readonly cascade: CascadeService;
  readonly clone: CloneService;
  readonly fhirResources: FhirResourceService;
  readonly terminology: TerminologyService;
  readonly matches: MatchService;
  readonly bulkImports: BulkImportService;
  /** Exports of repository versions (spec operations §4.8). */
  readonly exports: ExportService;
  /** Repository summaries and version histories as the web client reads them. */
  readonly summaries: SummaryService;
  readonly events: EventService;
  readonly pins: PinService;
  readonly follows: FollowService;
  /** User details with the orgs, pins and follows the web client reads. */
  readonly profiles: ProfileService;
  /** OCL's lookup sources (the `OCL` org) and the pick lists read from them. */
  readonly lookups: LookupService;
  /**
   * Watches of tasks and repositories (GraphQL subscriptions), told of changes in any process
   * through the database; `createApp` gives it its logger and stops it.
   */
  readonly watches: WatchService;

  constructor(dataSource: DataSource, mailer: Mailer, options: ServiceOptions = {}) {
    this.repos = Repositories.of(dataSource);
    this.notifications = new Notifications((dataSource.options as { url?: string }).url);
    this.jobs = new JobQueue(dataSource, this.repos, this.notifications);
    this.tasks = new TaskService(this.jobs);
    this.users = new UserService(this.repos, mailer);
    this.orgs = new OrgService(this.repos, this.users);
    this.rateLimits = new RateLimitService(this.repos);
    this.oidc = new OidcService(this.repos, options.oidc);
    this.auth = new AuthService(
      this.repos,
      this.users,
      this.rateLimits,
      this.oidc,
      this.notifications,
    );
    // Named listeners of the versions the repository service makes; the services they call are
    // made below and are only called at run time.
    const versionEvents: VersionEvents = {
      versionMade: (ctx, made) => this.exports.versionMade(ctx, made),
      // The version's references are read and resolved inside its transaction, so references
      // that transaction adds first (a FHIR ValueSet write) need no resolving ahead.
      collectionVersion: (ctx, head, autoexpand) =>
        this.expansions.prepareVersionExpansion(ctx, head, autoexpand),
    };
    this.repositories = new RepositoryService(
      this.repos,
      new PathResolver(this.repos),
      versionEvents,
    );
    const countCap = options.listCountCap ?? DEFAULT_LIST_COUNT_CAP;
    this.concepts = new ConceptService(
      this.repos,
      this.repositories,
      countCap,
      options.searchCommonShare ?? DEFAULT_SEARCH_COMMON_SHARE,
    );
    this.resolver = new ReferenceResolver(this.repos);
    this.urlRegistry = new UrlRegistryService(this.repos, this.repositories, this.resolver);
    this.mappings = new MappingService(this.repos, this.repositories, this.resolver, countCap);
    this.cascade = new CascadeService(
      this.repos,
      this.repositories,
      this.mappings,
      options.cascadeMaxResources ?? DEFAULT_CASCADE_MAX_RESOURCES,
    );
    this.clone = new CloneService(
      this.repos,
      this.repositories,
      this.concepts,
      this.mappings,
      this.cascade,
      options.cascadeMaxResources ?? DEFAULT_CASCADE_MAX_RESOURCES,
    );
    this.references = new CollectionReferences(
      this.repos,
      this.repositories,
      this.resolver,
      this.tasks,
    );
    // Called at run time only: the export service is made below.
    this.expansions = new CollectionExpansions(this.repos, this.repositories, this.resolver, {
      defaultReevaluated: (r, versionId) => this.exports.contentReplaced(r, versionId),
    });
    this.collections = new CollectionService(
      this.repos,
      this.repositories,
      this.concepts,
      this.mappings,
      this.expansions,
    );
    this.versionComparisons = new VersionComparisonService(this.repos, this.repositories);
    this.repositoryDetails = new RepositoryDetailService(
      this.repos,
      this.repositories,
      this.concepts,
      this.mappings,
      this.collections,
      this.references,
      this.expansions,
    );
    this.summaries = new SummaryService(
      this.repos,
      this.repositories,
      this.concepts,
      this.mappings,
    );
    this.events = new EventService(this.repos);
    this.pins = new PinService(this.repos, this.users, this.orgs, this.repositories);
    this.follows = new FollowService(this.repos, this.users, this.orgs, this.repositories);
    this.profiles = new ProfileService(this.users, this.orgs, this.pins, this.follows);
    this.lookups = new LookupService(this.repos, this.concepts);
    this.watches = new WatchService(this.repos, this.notifications, this.tasks, (ctx, ref) =>
      this.repositories.get(ctx, ref),
    );
    this.fhirResources = new FhirResourceService(
      this.repos,
      this.repositories,
      this.concepts,
      this.mappings,
      this.collections,
      this.references,
      this.expansions,
      this.tasks,
      options.fhirCacheConcepts ?? DEFAULT_FHIR_CACHE_CONCEPTS,
    );
    this.jobs.register<FhirWriteJob>(FHIR_WRITE_TASK, (job, task) =>
      this.fhirResources.runWriteJob(this.context(task.actor, task.log, task.baseUrl), job),
    );
    this.terminology = new TerminologyService(
      (ctx) => this.fhirResources.stored(ctx),
      options.expansionMaxCodes ?? DEFAULT_EXPANSION_MAX_CODES,
      options.expansionMaxUnpagedCodes ?? DEFAULT_EXPANSION_MAX_UNPAGED_CODES,
    );
    this.matches = new MatchService(
      this.repos,
      this.repositories,
      options.matchRequiresApproval ?? true,
      options.matchBridgeSource === undefined
        ? DEFAULT_MATCH_BRIDGE_SOURCE
        : options.matchBridgeSource,
    );
    this.bulkImports = new BulkImportService(
      this.repos,
      this.tasks,
      this.orgs,
      this.users,
      this.repositories,
      this.concepts,
      this.mappings,
      this.references,
      {
        maxBytes: options.importMaxBytes ?? DEFAULT_IMPORT_MAX_BYTES,
        fileUrlHosts: options.importFileUrlHosts ?? [],
      },
    );
    this.jobs.register<BulkImportJob>(BULK_IMPORT_TASK, (job, task) =>
      this.bulkImports.run(
        this.context(task.actor, task.log, task.baseUrl),
        job,
        (done, total, m) => task.progress(done, total, m),
      ),
    );
    this.jobs.register<AddReferencesJob>(ADD_REFERENCES_TASK, (job, task) =>
      this.references.runAddReferencesJob(
        this.context(task.actor, task.log, task.baseUrl),
        job,
        (done, total, message) => task.progress(done, total, message),
      ),
    );
    this.exports = new ExportService(
      this.repos,
      this.repositories,
      this.jobs,
      createExportStorage(
        options.exportStorage ?? { kind: 'local', directory: path.resolve('.data', 'exports') },
      ),
      options.exportUrlTtlSeconds ?? DEFAULT_EXPORT_URL_TTL_SECONDS,
    );
    this.jobs.register<ExportJob>(EXPORT_TASK, (job, task) =>
      this.exports.run(this.context(task.actor, task.log, task.baseUrl), job, task),
    );
  }

  /** Creates the bootstrap superuser on first start; see `ensureAdmin`. */
  ensureAdmin(adminPassword: string | undefined): ReturnType<typeof ensureAdmin> {
    return ensureAdmin(this.repos, adminPassword);
  }

  /** Fails when the database does not answer. */
  ping(): Promise<void> {
    return this.repos.ping();
  }

  /**
   * A fresh context for one request: the actor and new per-request loaders, made at their first
   * use (a request answered without the database, such as a kept answer, makes none).
   */
  context(actor: Actor, log: Logger, baseUrl: string, client?: string): ServiceContext {
    const repos = this.repos;
    let loaders: Loaders | undefined;
    return {
      actor,
      get loaders() {
        return (loaders ??= createLoaders(repos, actor));
      },
      log,
      baseUrl,
      client,
    };
  }
}
