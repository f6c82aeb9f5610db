import { Foundation1763700000000 } from './1763700000000-foundation';
import { RepositoryVersions1763800000000 } from './1763800000000-repository-versions';
import { ConceptContent1763900000000 } from './1763900000000-concept-content';
import { MappingContent1764000000000 } from './1764000000000-mapping-content';
import { VersionLookups1764100000000 } from './1764100000000-version-lookups';
import { UrlRegistry1764200000000 } from './1764200000000-url-registry';
import { Tasks1764250000000 } from './1764250000000-tasks';
import { CollectionContent1764300000000 } from './1764300000000-collection-content';
import { RateLimits1764400000000 } from './1764400000000-rate-limits';
import { MemberLookups1764500000000 } from './1764500000000-member-lookups';
import { CascadeLookups1764600000000 } from './1764600000000-cascade-lookups';
import { Match1764700000000 } from './1764700000000-match';
import { Exports1764710000000 } from './1764710000000-exports';
import { BulkImports1764720000000 } from './1764720000000-bulk-imports';
import { WebClient1764730000000 } from './1764730000000-web-client';
import { OidcIdentities1764740000000 } from './1764740000000-oidc-identities';
import { SyncChanges1764760000000 } from './1764760000000-sync-changes';
import { BulkImportSpeed1764770000000 } from './1764770000000-bulk-import-speed';
import { ExpansionMemberTotals1764790000000 } from './1764790000000-expansion-member-totals';
import { RetiredHeadKeys1764800000000 } from './1764800000000-retired-head-keys';
import { DerivedRepositoryKeys1764810000000 } from './1764810000000-derived-repository-keys';
import { TaskWorkers1764820000000 } from './1764820000000-task-workers';
import { ExportAudiences1764900000000 } from './1764900000000-export-audiences';
import { MappingEndNames1765000000000 } from './1765000000000-mapping-end-names';
import { HierarchyRoot1765100000000 } from './1765100000000-hierarchy-root';
import { RepositoryMeta1765200000000 } from './1765200000000-repository-meta';
import { VersionDiffs1765300000000 } from './1765300000000-version-diffs';
import { AccountNotifications1765400000000 } from './1765400000000-account-notifications';
import { ContentNotifications1765500000000 } from './1765500000000-content-notifications';
import { ListsFromIndexes1765600000000 } from './1765600000000-lists-from-indexes';
import { ListOrders1765700000000 } from './1765700000000-list-orders';
import { SearchBySource1765800000000 } from './1765800000000-search-by-source';
import { FoldedDisplayNames1765900000000 } from './1765900000000-folded-display-names';
import { MappingEndsBySource1766000000000 } from './1766000000000-mapping-ends-by-source';
import { SearchCovered1766100000000 } from './1766100000000-search-covered';
import { NameWordsFolded1766200000000 } from './1766200000000-name-words-folded';

/** Every migration, in order; listed by class so that tests and the build load the same code. */
export const migrations = [
  Foundation1763700000000,
  RepositoryVersions1763800000000,
  ConceptContent1763900000000,
  MappingContent1764000000000,
  VersionLookups1764100000000,
  UrlRegistry1764200000000,
  Tasks1764250000000,
  CollectionContent1764300000000,
  RateLimits1764400000000,
  MemberLookups1764500000000,
  CascadeLookups1764600000000,
  Match1764700000000,
  Exports1764710000000,
  BulkImports1764720000000,
  WebClient1764730000000,
  OidcIdentities1764740000000,
  SyncChanges1764760000000,
  BulkImportSpeed1764770000000,
  ExpansionMemberTotals1764790000000,
  RetiredHeadKeys1764800000000,
  DerivedRepositoryKeys1764810000000,
  TaskWorkers1764820000000,
  ExportAudiences1764900000000,
  MappingEndNames1765000000000,
  HierarchyRoot1765100000000,
  RepositoryMeta1765200000000,
  VersionDiffs1765300000000,
  AccountNotifications1765400000000,
  ContentNotifications1765500000000,
  ListsFromIndexes1765600000000,
  ListOrders1765700000000,
  SearchBySource1765800000000,
  FoldedDisplayNames1765900000000,
  MappingEndsBySource1766000000000,
  SearchCovered1766100000000,
  NameWordsFolded1766200000000,
];
