import type { DataSource, EntityManager } from 'typeorm';
import { boundTransaction, insideTransaction } from '../db/transaction-scope';
import { CascadeRepository } from './cascade.repository';
import { CollectionRepository } from './collection.repository';
import { ConceptRepository } from './concept.repository';
import { ExtrasRepository } from './extras.repository';
import { MappingRepository } from './mapping.repository';
import { OrgRepository } from './org.repository';
import { RepoRepository } from './repo.repository';
import { TaskRepository } from './task.repository';
import { TokenRepository } from './token.repository';
export type { TokenHolder } from './token.repository';
import { IdentityRepository } from './identity.repository';
import { UserRepository } from './user.repository';
import { UrlRegistryRepository } from './url-registry.repository';
import { RateLimitRepository } from './rate-limit.repository';
import { PathRepository } from './path.repository';
import { FhirRepository } from './fhir.repository';
import { MatchRepository } from './match.repository';
import { BulkImportRepository } from './bulk-import.repository';
import { ExportRepository } from './export.repository';
import { ReadSnapshot } from './snapshot';
import { EventRepository } from './event.repository';
import { PinRepository } from './pin.repository';
import { FollowRepository } from './follow.repository';
import { SummaryRepository } from './summary.repository';
import { VersionDiffRepository } from './version-diff.repository';
import { NotificationRepository } from './notification.repository';

export { isUniqueViolation } from './list';
export { insertRows } from './bulk';
export type { BulkImportRecord, ImportFormat } from './bulk-import.repository';
export { AUTO_EXPANSION } from './repo.repository';
export type {
  Counted,
  ExtrasCondition,
  ExtrasFilter,
  FacetCounts,
  KeyType,
  KeyValues,
  Listing,
  Slice,
  SortSpec,
  Viewer,
  Window,
} from './list';
export type {
  ContainedVersion,
  ContentCounts,
  OwnerKey,
  RepoSearch,
  RepoSortKey,
  RepositoryHead,
} from './repo.repository';
export type {
  ExpansionCounts,
  ExpansionRow,
  FilterOp,
  NewReference,
  PropertyFilter,
  ReferenceFilter,
  ReferenceRow,
  ResolvedSystem,
  ResourceType,
  Selection,
} from './collection.repository';
export { FILTER_PROPERTIES, referenceKey } from './collection.repository';
export { isPlainSearch } from './concept.repository';
export type {
  ConceptRead,
  ConceptReadKey,
  EndRepository,
  MappingRow,
  ConceptScope,
  ConceptSearch,
  ConceptSortKey,
  MemberCode,
} from './concept.repository';
export type { MappingScope, MappingSearch, MappingSortKey } from './mapping.repository';
export type { OrgCounts, OrgSearch, OrgSortKey } from './org.repository';
export type { UserCounts, UserSearch, UserSortKey } from './user.repository';
export type {
  NewTask,
  SqlExecutor,
  TaskProgress,
  TaskRecord,
  TaskRunner,
  TaskState,
} from './task.repository';
export type { ExtrasTable } from './extras.repository';
export type { RegistryKey, UrlRegistrySearch, UrlRegistrySortKey } from './url-registry.repository';
export type { CounterHit, CounterState } from './rate-limit.repository';
export type { PathKey, PathRow } from './path.repository';
export type { MatchHit, MatchQuery, MatchTarget } from './match.repository';
export type {
  FhirRepoRow,
  FhirRepoSearch,
  FhirRepository,
  RepoName,
  VersionChoice,
} from './fhir.repository';
export type {
  CascadeConcept,
  CascadeMapping,
  CascadeScope,
  WalkConcept,
  WalkMapping,
} from './cascade.repository';
export type { CascadeRepository } from './cascade.repository';
export type { ReadSnapshot } from './snapshot';
export type { Raw } from './hydrate';
export type { Audience, DownloadRow, ExportRow, ExportState } from './export.repository';
export type { EventRow, EventScope, NewEvent } from './event.repository';
export { decodeNotice } from './notification.repository';
export type { Notice, RepositoryNotice, TaskNotice } from './notification.repository';
export type { PinOwner, PinResourceType, PinRow } from './pin.repository';
export type { FollowedType, FollowRow } from './follow.repository';
export type {
  ContentSummary,
  Distribution,
  HolderRow,
  SummaryScope,
  VersionTotals,
} from './summary.repository';
export type { IdentityKey } from './identity.repository';
export type {
  ConceptDiffDetail,
  DiffKind,
  DiffRow,
  DiffSide,
  DiffSpan,
  MappingDiffDetail,
} from './version-diff.repository';

/** Every repository, bound to one connection or to one transaction. */
export class Repositories {
  readonly users: UserRepository;
  readonly orgs: OrgRepository;
  readonly tokens: TokenRepository;
  readonly identities: IdentityRepository;
  readonly repos: RepoRepository;
  readonly concepts: ConceptRepository;
  readonly mappings: MappingRepository;
  readonly tasks: TaskRepository;
  readonly collections: CollectionRepository;
  readonly urlRegistry: UrlRegistryRepository;
  readonly rateLimits: RateLimitRepository;
  readonly extras: ExtrasRepository;
  readonly paths: PathRepository;
  readonly cascade: CascadeRepository;
  readonly fhir: FhirRepository;
  readonly match: MatchRepository;
  readonly bulkImports: BulkImportRepository;
  readonly exports: ExportRepository;
  readonly events: EventRepository;
  readonly pins: PinRepository;
  readonly follows: FollowRepository;
  readonly summaries: SummaryRepository;
  readonly versionDiffs: VersionDiffRepository;
  /** Notices to every process's watchers (`pg_notify`), sent at this transaction's commit. */
  readonly notifications: NotificationRepository;

  constructor(
    private readonly em: EntityManager,
    private readonly dataSource?: DataSource,
  ) {
    this.users = new UserRepository(em);
    this.orgs = new OrgRepository(em);
    this.tokens = new TokenRepository(em);
    this.identities = new IdentityRepository(em);
    this.repos = new RepoRepository(em);
    this.concepts = new ConceptRepository(em);
    this.mappings = new MappingRepository(em);
    this.tasks = new TaskRepository(em);
    this.collections = new CollectionRepository(em);
    this.urlRegistry = new UrlRegistryRepository(em);
    this.rateLimits = new RateLimitRepository(em);
    this.extras = new ExtrasRepository(em);
    this.paths = new PathRepository(em);
    this.cascade = new CascadeRepository(em);
    this.fhir = new FhirRepository(em);
    this.match = new MatchRepository(em);
    this.bulkImports = new BulkImportRepository(em);
    this.exports = new ExportRepository(em);
    this.events = new EventRepository(em);
    this.pins = new PinRepository(em);
    this.follows = new FollowRepository(em);
    this.summaries = new SummaryRepository(em);
    this.versionDiffs = new VersionDiffRepository(em);
    this.notifications = new NotificationRepository(em);
  }

  static of(dataSource: DataSource): Repositories {
    return new Repositories(dataSource.manager, dataSource);
  }

  /**
   * Runs `work` in one transaction: every write in it lands, or none does. An HTTP request's
   * transaction keeps the request's bounds (see `boundTransaction`).
   */
  transaction<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    if (!this.dataSource) return work(this); // already inside a transaction
    return this.dataSource.transaction((em) =>
      insideTransaction(async () => {
        const unbind = await boundTransaction(em);
        try {
          return await work(new Repositories(em));
        } finally {
          unbind();
        }
      }),
    );
  }

  /** A consistent read of long lists through cursors, on a connection of its own; close it. */
  snapshot(): Promise<ReadSnapshot> {
    return ReadSnapshot.open(this.em);
  }

  /**
   * Holds a lock named `name` until the transaction ends (inside a transaction only): for work
   * that must run once however many processes start it at once.
   */
  async lockNamed(name: string): Promise<void> {
    await this.em.query('SELECT pg_advisory_xact_lock(hashtext($1))', [name]);
  }

  /** Liveness of the database, for health checks. */
  async ping(): Promise<void> {
    await this.em.query('SELECT 1');
  }
}
