import { AppError } from '../../errors';
import type {
  Counted,
  ExtrasFilter,
  FacetCounts,
  Listing,
  SortSpec,
  Window,
} from '../../repositories';

/** Edge-neutral list request: what REST query strings and GraphQL arguments both become. */
export interface ListParams {
  q?: string;
  /** A sort name as clients send it (`bestMatch`, `best_match`, `lastUpdate`, …). */
  sortField?: string;
  sortDesc?: boolean;
  /** 0 = everything. */
  limit: number;
  offset: number;
  /** Filter name → accepted values (a comma in REST means OR). */
  filters: Record<string, string[] | undefined>;
  updatedSince?: Date;
  includeFacets?: boolean;
  /** `extras.<name>` filters (spec operations §4.9). */
  extras?: ExtrasFilter;
  /** Repository lists: every version, not only HEAD. */
  allVersions?: boolean;
  /** Items as their details show them (`verbose=true`): with their version counts. */
  verbose?: boolean;
  /** Repository lists: each item's counts without the detail (OCL's `includeSummary`). */
  withCounts?: boolean;
  /**
   * Cursor paging (GraphQL `first`/`after`, on the lists that offer it, `pagingOf`): a page of
   * `first` items (instead of `limit`) after the item whose cursor is `after`.
   */
  first?: number;
  after?: string;
  /** Each item's cursor wanted (GraphQL's connection lists; REST pages by offset only). */
  withCursors?: boolean;
}

export interface Page<T> {
  items: T[];
  /** NaN on a cursor page, whose count is `countTotal`. */
  total: number;
  /**
   * On a cursor page (`first`/`after`): counts the whole list, read only when called (GraphQL
   * `totalCount` when selected); `total` is then NaN.
   */
  countTotal?: () => Promise<Counted>;
  /**
   * false when `total` is the list's count cap (`LIST_COUNT_CAP`) and more items match; absent:
   * exact.
   */
  totalExact?: boolean;
  limit: number;
  offset: number;
  facets?: FacetCounts;
  /** On the lists cursors page: each item's cursor, what `after` takes to start after it. */
  cursors?: string[];
  /** On the lists cursors page: whether items follow this page. */
  hasNextPage?: boolean;
  /** On the lists cursors page: whether it starts after a cursor or an offset. */
  hasPreviousPage?: boolean;
}

export const DEFAULT_LIMIT = 10;

/**
 * A filter's values split by OCL's negation (a leading `!`, as oclweb3 sends `source=!X`): the
 * values wanted (none: no restriction) and the values excluded.
 */
export function negatable(values: string[] | undefined): { only?: string[]; not?: string[] } {
  const only = values?.filter((v) => !v.startsWith('!'));
  const not = values?.filter((v) => v.startsWith('!')).map((v) => v.slice(1));
  return { ...(only?.length ? { only } : {}), ...(not?.length ? { not } : {}) };
}

export function defaultListParams(overrides: Partial<ListParams> = {}): ListParams {
  return { limit: DEFAULT_LIMIT, offset: 0, filters: {}, ...overrides };
}

/** Bounds on what one list request may ask, so that none becomes an unbounded query. */
const MAX_FILTER_VALUES = 100;
const MAX_TEXT = 500;

/** The page window of a list request, after checking the whole request is within bounds. */
export function windowOf(params: ListParams): Window {
  if (!Number.isInteger(params.limit) || params.limit < 0)
    throw AppError.field('limit', 'Must be 0 or more.');
  if (!Number.isInteger(params.offset) || params.offset < 0)
    throw AppError.field('offset', 'Must be 0 or more.');
  if (params.q !== undefined && params.q.length > MAX_TEXT)
    throw AppError.field('q', `At most ${MAX_TEXT} characters.`);
  for (const [name, values] of Object.entries(params.filters)) {
    if (!values) continue;
    if (values.length > MAX_FILTER_VALUES)
      throw AppError.field(name, `At most ${MAX_FILTER_VALUES} values.`);
    if (values.some((v) => v.length > MAX_TEXT))
      throw AppError.field(name, `Values of at most ${MAX_TEXT} characters.`);
  }
  const extras = params.extras;
  if (extras && extras.conditions.length + extras.exists.length > MAX_FILTER_VALUES) {
    throw AppError.field('extras', `At most ${MAX_FILTER_VALUES} extras conditions.`);
  }
  if (extras?.conditions.some((c) => c.values.length > MAX_FILTER_VALUES)) {
    throw AppError.field('extras', `At most ${MAX_FILTER_VALUES} values per extras condition.`);
  }
  return { limit: params.limit, offset: params.offset };
}

/** `best_match`, `bestMatch` and `BestMatch` are one name. */
function normalizeSortName(name: string): string {
  return name.replace(/[_\s-]/g, '').toLowerCase();
}

/**
 * Resolves the requested sort against a resource's whitelist (normalized name → key).
 * An unknown field is a 400 naming the allowed ones.
 */
export function resolveSort<K extends string>(
  params: ListParams,
  allowed: Record<string, K>,
  fallback: SortSpec<K>,
): SortSpec<K> {
  if (!params.sortField) return fallback;
  const key = allowed[normalizeSortName(params.sortField)];
  if (!key) {
    const names = [...new Set(Object.values(allowed))].join(', ');
    throw AppError.field('sort', `Cannot sort by '${params.sortField}'. Allowed: ${names}.`);
  }
  return { key, desc: params.sortDesc ?? false };
}

export function pageOf<T>(
  rows: T[],
  total: number,
  params: ListParams,
  facets?: FacetCounts,
): Page<T> {
  return { items: rows, total, limit: params.limit, offset: params.offset, facets };
}

/**
 * Rows a walk through a cursor reads at a time (exports, whole synchronization answers). Small:
 * the next batch is read while this one is written (so round trips cost no time), and a batch
 * alive across V8's young-generation collections is promoted garbage that raises the process's
 * peak memory (a quarter-CIEL export peaked at ~250 MB with 100 rows, ~310 MB with 250 and
 * ~350 MB with 1,000; the same CPU).
 */
export const WALK_BATCH = 100;

/** A whole listing cut to a window (`limit` 0: all of it, from `offset`). */
export function windowedListing(listing: Listing, window: Window): Listing {
  const limit = window.limit > 0 ? ` LIMIT ${window.limit}` : '';
  const offset = window.offset > 0 ? ` OFFSET ${window.offset}` : '';
  return limit || offset
    ? { sql: `${listing.sql}${limit}${offset}`, params: listing.params }
    : listing;
}
