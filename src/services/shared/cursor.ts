import crypto from 'node:crypto';
import { AppError } from '../../errors';
import type { KeyType, KeyValues, Slice, Window } from '../../repositories';
import { pageOf, windowOf, type ListParams, type Page } from './list';

/**
 * The largest cursor page (`first`): what the GraphQL cost rules take an unbounded `limit` to
 * read. Above it a request is refused (INVALID), never cut short.
 */
export const MAX_FIRST = 1000;

/** Longest cursor accepted: a few keys of at most a few thousand characters each. */
const MAX_CURSOR = 20_000;

/** Longest text key a cursor may carry (names are at most 2,000 characters). */
const MAX_TEXT_KEY = 5_000;

/** How one list request pages: by offset (`limit`/`offset`) or by cursor (`first`/`after`). */
export interface Paging {
  /** What the repository reads: for a cursor page, one row more than asked, after the cursor. */
  window: Window;
  /** Whether it is a cursor page (`first` or `after` given). */
  cursor: boolean;
  /** A cursor page's size: `first`, else `limit`; null for no limit (`limit: 0`). */
  size: number | null;
  /** The list's identity, which its cursors carry a check of: another list's are refused. */
  list: string;
}

/**
 * The paging of a list request: its window checked (`windowOf`), and with `first` or `after` a
 * keyset window after the cursor's position, which must be a cursor of this `list` (its scope,
 * order and filters, as the service names them) with keys of `types`. Cursors go forward only
 * and never with an offset. `countCap`: the list is counted exactly up to that many (`Window`).
 */
export function pagingOf(
  params: ListParams,
  list: unknown,
  types: readonly KeyType[],
  countCap = 0,
): Paging {
  // A list asked whole (`limit` 0) counts what it reads anyway.
  const window = { ...windowOf(params), ...(countCap > 0 && params.limit > 0 ? { countCap } : {}) };
  const identity = JSON.stringify(list);
  if (params.first === undefined && params.after === undefined) {
    return { window, cursor: false, size: null, list: identity };
  }
  if (params.offset > 0) {
    throw AppError.field(
      'offset',
      'offset cannot be combined with first/after: cursor pages start at the beginning or after a cursor.',
    );
  }
  const { first } = params;
  if (first !== undefined && !(Number.isInteger(first) && first >= 0 && first <= MAX_FIRST))
    throw AppError.field('first', `Must be from 0 to ${MAX_FIRST}.`);
  const size = first ?? (params.limit > 0 ? params.limit : null);
  const after =
    params.after === undefined ? undefined : decodeCursor(params.after, identity, types);
  return {
    window: {
      limit: size === null ? 0 : size + 1,
      offset: 0,
      after,
      countLazily: true,
      ...(countCap > 0 ? { countCap } : {}),
    },
    cursor: true,
    size,
    list: identity,
  };
}

/** A slice cut to the page it answers, and whether items follow that page. */
export interface PageSlice<T> extends Slice<T> {
  hasNextPage: boolean;
}

/**
 * The page of a slice read by `paging`: a cursor page reads one row more than it shows, which
 * says whether more follow (no count); an offset page knows from the count (or, past a count
 * cap, from the one row more it read).
 */
export function pageSlice<T>(slice: Slice<T>, paging: Paging, params: ListParams): PageSlice<T> {
  const { size } = paging;
  if (!paging.cursor) {
    const hasNextPage =
      slice.more ?? (params.limit > 0 && params.offset + slice.rows.length < slice.total);
    return { ...slice, hasNextPage };
  }
  if (size === null || slice.rows.length <= size) return { ...slice, hasNextPage: false };
  // The row read past the page only says another follows; the count stays as it was said.
  return {
    ...slice,
    rows: slice.rows.slice(0, size),
    keys: slice.keys?.slice(0, size),
    hasNextPage: true,
  };
}

/**
 * The page of `items` (a page slice's rows as the list shows them, in its order), each with its
 * cursor (of its row's keys) and where the page lies.
 */
export function keyedPage<T>(
  items: T[],
  slice: PageSlice<unknown>,
  params: ListParams,
  paging: Paging,
  facets?: Page<T>['facets'],
): Page<T> {
  return {
    ...pageOf(items, slice.total, params, facets),
    ...(slice.exact === false ? { totalExact: false } : {}),
    cursors:
      paging.cursor || params.withCursors
        ? slice.keys?.map((keys) => encodeCursor(paging.list, keys))
        : undefined,
    hasNextPage: slice.hasNextPage,
    hasPreviousPage: paging.window.after !== undefined || params.offset > 0,
    countTotal: slice.count,
  };
}

/** The check a cursor carries: of its list and its keys, so that neither can be swapped. */
function checkOf(list: string, keys: KeyValues): string {
  return crypto
    .createHash('sha256')
    .update(`${list}\n${JSON.stringify(keys)}`)
    .digest('base64url')
    .slice(0, 22);
}

/** A row's cursor: base64url JSON of its sort keys and their check. Opaque to clients. */
export function encodeCursor(list: string, keys: KeyValues): string {
  return Buffer.from(JSON.stringify({ k: keys, c: checkOf(list, keys) })).toString('base64url');
}

/**
 * The sort keys a cursor of `list` carries; INVALID (on `after`) for anything else: not base64url
 * JSON of the right shape, keys not of `types`, or a check that fails (another list's cursor, or
 * one edited).
 */
function decodeCursor(cursor: string, list: string, types: readonly KeyType[]): KeyValues {
  const refuse = (): AppError =>
    AppError.field(
      'after',
      'Not a cursor of this list: pass an edge `cursor` or `pageInfo.endCursor` this same list answered.',
    );
  if (cursor.length === 0 || cursor.length > MAX_CURSOR || !/^[A-Za-z0-9_-]+$/.test(cursor))
    throw refuse();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw refuse();
  }
  if (typeof parsed !== 'object' || parsed === null) throw refuse();
  const { k: keys, c: check } = parsed as { k?: unknown; c?: unknown };
  if (!Array.isArray(keys) || typeof check !== 'string' || keys.length !== types.length)
    throw refuse();
  if (!keys.every((value, i) => validKey(types[i], value))) throw refuse();
  if (check !== checkOf(list, keys as KeyValues)) throw refuse();
  return keys as KeyValues;
}

/** Whether a key value is one PostgreSQL reads as its type without error. */
function validKey(type: KeyType, value: unknown): boolean {
  if (value === null) return true;
  switch (type) {
    case 'text':
      return typeof value === 'string' && value.length <= MAX_TEXT_KEY && !value.includes('\0');
    case 'id':
      return typeof value === 'string' && /^\d{1,18}$/.test(value);
    case 'time':
      // Microseconds since 1970 within about 3,000 years of it: within timestamptz's range.
      return typeof value === 'string' && /^-?\d{1,17}$/.test(value);
    case 'number':
      return typeof value === 'number'
        ? Number.isFinite(value)
        : value === 'NaN' || value === 'Infinity' || value === '-Infinity';
  }
}

/**
 * What of a list request decides which items its list holds (with the list's scope and order,
 * its identity): a cursor is of the same search, filters and all.
 */
export function listFilterOf(params: ListParams): unknown {
  return {
    q: params.q ?? null,
    filters: params.filters,
    updatedSince: params.updatedSince?.toISOString() ?? null,
    extras: params.extras ?? null,
  };
}
