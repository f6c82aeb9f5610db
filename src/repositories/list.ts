import type { EntityManager, SelectQueryBuilder } from 'typeorm';

/** Who is looking: a list never returns what this viewer may not see. */
/**
 * Who a list is scoped for: a superuser, or a user (null: anonymous) who may also see the
 * private repositories of one `owner`, an org's or a user's (an owner reader, see `Actor`).
 */
export type Viewer =
  | { superuser: true }
  | {
      superuser: false;
      userId: string | null;
      owner?: { orgId: string } | { userId: string };
    };

/** SQL that holds when the repository `alias` is the viewer's owner's; '' for no owner. */
function ownedByReaderOwner(alias: string, viewer: Viewer, bind: Bind): string {
  if (viewer.superuser || !viewer.owner) return '';
  const { owner } = viewer;
  const id = bind('orgId' in owner ? owner.orgId : owner.userId);
  const column = 'orgId' in owner ? 'owner_org_id' : 'owner_user_id';
  return `\n    OR ${alias}.${column} = ${id}::bigint`;
}

/** Binds a value into a statement, answering its placeholder. */
export type Bind = (value: unknown) => string;

/** Binds by position: pushes the value onto `params` and answers `$n`. */
function positional(params: unknown[]): Bind {
  return (value) => {
    params.push(value);
    return `$${params.length}`;
  };
}

/** Binds by name for a query builder: sets `prefix0`, `prefix1`, … in `parameters`, answers `:name`. */
export function named(prefix: string, parameters: Record<string, unknown>): Bind {
  return (value) => {
    const name = `${prefix}${Object.keys(parameters).length}`;
    parameters[name] = value;
    return `:${name}`;
  };
}

export interface SortSpec<K extends string> {
  key: K;
  desc: boolean;
}

/** `limit` 0 means no limit. */
export interface Window {
  limit: number;
  offset: number;
  /**
   * Keyset paging (cursor lists): only the rows after the row with these sort keys, in the
   * list's order (`offset` is then 0). What a row inserted before that row cannot shift.
   */
  after?: KeyValues;
  /**
   * Cursor pages (`first`/`after`): the count of the whole list only when asked for (`Slice.count`),
   * not read with the page; `Slice.total` is then NaN.
   */
  countLazily?: boolean;
  /**
   * Count exactly up to this many rows (0 or absent: all of them); when more match, the count is
   * the cap, not exact (`Counted.exact`), and the window reads one row more to know whether rows
   * follow it (`Slice.more`). The count reads no further than the cap.
   */
  countCap?: number;
}

/** A list's count: exact, or (`exact` false) the count cap, with more rows matching. */
export interface Counted {
  total: number;
  exact: boolean;
}

export interface Slice<T> {
  rows: T[];
  total: number;
  /** false when `total` is the window's count cap and more rows match; absent: exact. */
  exact?: boolean;
  /** With a count cap: whether rows follow the window (one more row was read). */
  more?: boolean;
  /** With `Window.countLazily`: counts the whole list (once, when first called). */
  count?: () => Promise<Counted>;
  /** Each row's sort keys (`KeyValues`), in the order of `rows`: on the lists cursors page. */
  keys?: KeyValues[];
}

/**
 * How a sort key is compared and carried in a cursor: text as it is; ids as their digits; times
 * as microseconds since 1970 (digits: what a JavaScript date, to the millisecond, would lose);
 * numbers as float8 (a JSON number, or `NaN`/`Infinity`/`-Infinity` as text).
 */
export type KeyType = 'text' | 'id' | 'time' | 'number';

/** The sort keys of one row, in the order of its list's `KeyColumn`s; null for SQL NULL. */
export type KeyValues = Array<string | number | null>;

/** One column (or expression) of a list's order, as keyset paging compares it. */
export interface KeyColumn {
  sql: string;
  type: KeyType;
  desc: boolean;
  nullable: boolean;
}

/** Per column of a list's `ORDER` table: its key type, and whether it may be NULL. */
export type KeyTypes = Record<string, { type: KeyType; nullable?: boolean }>;

/**
 * The key columns of the order `orderBy` gives (the same columns, directions and rank), for
 * keyset paging: every column a cursor must carry so that its position survives inserts.
 */
export function keyColumns<K extends string>(
  sort: SortSpec<K | 'bestMatch'>,
  columns: Record<K | 'bestMatch', string[]>,
  types: KeyTypes,
  rank?: { expression: string },
): KeyColumn[] {
  const keys: KeyColumn[] = [];
  if (sort.key === 'bestMatch' && rank) {
    keys.push({ sql: `(${rank.expression})`, type: 'number', desc: true, nullable: false });
  }
  const desc = sort.key !== 'bestMatch' && sort.desc;
  for (const column of columns[sort.key]) {
    const type = types[column];
    if (!type) throw new Error(`No key type for ${column}`);
    keys.push({ sql: column, type: type.type, desc, nullable: type.nullable ?? false });
  }
  return keys;
}

/** SQL of a JSON array of a row's key values as `KeyValues` carries them (numbers as text). */
export function keysJsonSql(keys: readonly KeyColumn[]): string {
  const value = (key: KeyColumn): string => {
    switch (key.type) {
      case 'text':
        return key.sql;
      case 'id':
        return `(${key.sql})::text`;
      case 'time':
        // Exact: extract answers numeric (PostgreSQL 14 and later).
        return `(extract(epoch from ${key.sql}) * 1000000)::bigint::text`;
      case 'number':
        return `(${key.sql})::float8::text`;
    }
  };
  return `json_build_array(${keys.map(value).join(', ')})`;
}

/** Key values as `keysJsonSql` gives them, numbers made numbers (as a cursor carries them). */
export function keyValuesOf(keys: readonly KeyColumn[], raw: unknown): KeyValues {
  const values = raw as Array<string | null>;
  return keys.map((key, i) => {
    const value = values[i];
    if (value === null || key.type !== 'number') return value;
    return /^-?Infinity$|^NaN$/.test(value) ? value : Number(value);
  });
}

/**
 * SQL that holds for the rows after the row whose keys are `values`, in the order of `keys`
 * (PostgreSQL's: NULLs last ascending, first descending); its parameters bound with `bind`. The
 * values must be valid for their types (the services check a cursor before it comes here).
 */
export function afterSql(keys: readonly KeyColumn[], values: KeyValues, bind: Bind): string {
  const params = values.map((value, i) => {
    if (value === null) return null;
    const p = bind(String(value));
    switch (keys[i].type) {
      case 'text':
        return `${p}::text`;
      case 'id':
        return `${p}::bigint`;
      case 'time':
        return `('epoch'::timestamptz + ${p}::bigint * interval '1 microsecond')`;
      case 'number':
        return `${p}::float8`;
    }
  });
  const desc = keys[0].desc;
  if (keys.every((key, i) => key.desc === desc && !key.nullable && params[i] !== null)) {
    // One row comparison: what a btree index on the columns answers.
    return `(${keys.map((k) => k.sql).join(', ')}) ${desc ? '<' : '>'} (${params.join(', ')})`;
  }
  const equal = (key: KeyColumn, p: string | null): string =>
    p === null ? `${key.sql} IS NULL` : `${key.sql} = ${p}`;
  const later = (key: KeyColumn, p: string | null): string | null => {
    if (key.desc) return p === null ? `${key.sql} IS NOT NULL` : `${key.sql} < ${p}`;
    if (p === null) return null;
    return key.nullable ? `(${key.sql} > ${p} OR ${key.sql} IS NULL)` : `${key.sql} > ${p}`;
  };
  const alternatives = keys.flatMap((key, i) => {
    const after = later(key, params[i]);
    if (after === null) return [];
    return [[...keys.slice(0, i).map((k, j) => equal(k, params[j])), after].join(' AND ')];
  });
  return alternatives.length ? `(${alternatives.map((a) => `(${a})`).join(' OR ')})` : 'false';
}

export type FacetCounts = Record<string, Array<[string, number]>>;

/** Text folded the way `registry_fold` folds it (accents stripped, lower case), as words. */
export function foldedWords(text: string): string[] {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w.length > 0);
}

/** The words of a search query: folded, at most 10 (stored search text is never capped). */
export function searchWords(q: string): string[] {
  return foldedWords(q).slice(0, 10);
}

/** Escapes LIKE wildcards so user text matches literally. */
export function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * How far a search word may be from what it matches: a substring only; or also with two
 * neighbouring letters swapped back (the commonest typo, which costs a word 3–4 of its trigrams,
 * often too many for similarity; a few more substring lookups); or also by trigram word
 * similarity (any typo).
 */
export type Tolerance = 'exact' | 'swaps' | 'similar';

/** Another spelling of a search word, and how like the word it is (1: as like as the word). */
export interface Spelling {
  spelling: string;
  weight: number;
}

/**
 * Per word of a search, the other spellings it may match by, when the caller found them among
 * the words some text holds (`ConceptRepository.spellingsInUse`); `undefined` for a word it
 * could not look up, which then matches by every transposition and, `similar`, by the trigram
 * similarity of the whole text (a scan).
 */
export type KnownSpellings = Array<Spelling[] | undefined>;

/**
 * What a word of a search is looked up by at a tolerance: its spellings (substrings: the word,
 * and its typos' corrections), and whether the text's trigram similarity to the word counts.
 * Typos are looked for in words of 6 letters or more for swaps (shorter swaps are too
 * unselective to look up), 4 for similarity. With the spellings in use (`known`), only those: the
 * word as written only when some text has it (else the first pass found it, or nothing does)
 * or when nothing else is in use.
 */
export function spellingsOf(
  word: string,
  i: number,
  tolerance: Tolerance,
  known?: KnownSpellings,
): { spellings: Spelling[]; similar: boolean } {
  const asWritten = [{ spelling: word, weight: 1 }];
  const typos = (tolerance === 'swaps' && word.length >= 6) || tolerance === 'similar';
  if (!typos) return { spellings: asWritten, similar: false };
  const given = known?.[i];
  if (given) return { spellings: given.length > 0 ? given : asWritten, similar: false };
  return {
    spellings: [
      ...asWritten,
      ...(word.length >= 6 ? transpositions(word) : []).map((spelling) => ({
        spelling,
        weight: 1,
      })),
    ],
    similar: tolerance === 'similar' && word.length >= 4,
  };
}

/**
 * Whether a search at this tolerance matches any word by other than the word as written (a
 * spelling, or similarity): else it finds what the search without typos found.
 */
export function widened(words: string[], tolerance: Tolerance, known?: KnownSpellings): boolean {
  return words.some((word, i) => {
    const { spellings, similar } = spellingsOf(word, i, tolerance, known);
    return similar || spellings.some(({ spelling }) => spelling !== word);
  });
}

/**
 * Every word must occur in the haystack, within the tolerance (typos for longer words only). A
 * spelling that holds another is not looked up (`patients` where `patient` is): each alternative
 * the planner weighs as more rows, and with enough of them it read a whole source instead of
 * the trigram index.
 */
export function whereWordsMatch<T extends object>(
  qb: SelectQueryBuilder<T>,
  haystack: string,
  words: string[],
  tolerance: Tolerance = 'similar',
  known?: KnownSpellings,
): void {
  words.forEach((word, i) => {
    const { spellings, similar } = spellingsOf(word, i, tolerance, known);
    // The likest first: a row stops at the first spelling it has (most rows have the likest).
    const looked = withoutHolders(
      [...spellings].sort((a, b) => b.weight - a.weight).map(({ spelling }) => spelling),
    );
    const stem = looked.length > 1 && !similar ? commonPrefix(looked) : '';
    if (stem.length >= STEM_AT_LEAST) {
      // Looked up once by the stem they begin with, each row then tested against them all
      // (`|| ''` keeps that test out of the index): a trigram index lookup per spelling read
      // the stem's trigrams' entries once each (eight spellings of `pancreas`: 23 ms, now 3).
      qb.andWhere(`${haystack} LIKE :s${i} AND (${haystack} || '') LIKE ANY (:l${i}::text[])`, {
        [`s${i}`]: `%${likeLiteral(stem)}%`,
        [`l${i}`]: looked.map((spelling) => `%${likeLiteral(spelling)}%`),
      });
      return;
    }
    const parameters: Record<string, string> = {};
    const alternatives = looked.map((spelling, j) => {
      parameters[`l${i}_${j}`] = `%${likeLiteral(spelling)}%`;
      return `${haystack} LIKE :l${i}_${j}`;
    });
    if (similar) {
      parameters[`w${i}`] = word;
      alternatives.push(`:w${i} <% ${haystack}`);
    }
    qb.andWhere(`(${alternatives.join(' OR ')})`, parameters);
  });
}

/**
 * The shortest stem the spellings of a word are looked up by together. A stem they begin with
 * (a word's root: `pancrea`), not any part they hold: an ending they share (`enosis` of
 * `duodenosis` and `dermostenosis`) is often far commoner than they are (`stenosis`).
 */
const STEM_AT_LEAST = 5;

/** The longest text every one of `spellings` begins with. */
function commonPrefix(spellings: readonly string[]): string {
  let prefix = spellings[0];
  for (const spelling of spellings) {
    while (!spelling.startsWith(prefix)) prefix = prefix.slice(0, -1);
  }
  return prefix;
}

/** The spellings but those that hold another of them, and but the first of each repeated one. */
function withoutHolders(spellings: string[]): string[] {
  return spellings.filter(
    (one, j) =>
      !spellings.some((other, k) => k !== j && one.includes(other) && (other !== one || k < j)),
  );
}

/** The word with each pair of neighbouring letters swapped (different words only). */
export function transpositions(word: string): string[] {
  const found = new Set<string>();
  for (let at = 0; at + 1 < word.length; at += 1) {
    if (word[at] === word[at + 1]) continue;
    found.add(word.slice(0, at) + word[at + 1] + word[at] + word.slice(at + 2));
  }
  return [...found];
}

/** Case-insensitive exact match against any of the values (comma = OR). */
export function whereAnyOf<T extends object>(
  qb: SelectQueryBuilder<T>,
  column: string,
  values: string[] | undefined,
  param: string,
): void {
  if (!values || values.length === 0) return;
  qb.andWhere(`lower(${column}) IN (:...${param})`, {
    [param]: values.map((v) => v.toLowerCase()),
  });
}

/**
 * Orders by a resource's columns for a sort key (`columns[key]`, ties broken by the later ones),
 * or, for best match with a search, by the rank expression first.
 */
export function orderBy<T extends object, K extends string>(
  qb: SelectQueryBuilder<T>,
  sort: SortSpec<K | 'bestMatch'>,
  columns: Record<K | 'bestMatch', string[]>,
  rank?: { expression: string; parameters: Record<string, unknown> },
): void {
  if (sort.key === 'bestMatch' && rank) {
    qb.addSelect(rank.expression, 'rank').setParameters(rank.parameters).addOrderBy('rank', 'DESC');
  }
  // Best match is best first whichever way it is asked; other keys follow the direction.
  const dir = sort.key === 'bestMatch' || !sort.desc ? 'ASC' : 'DESC';
  for (const column of columns[sort.key]) qb.addOrderBy(column, dir);
}

/**
 * A window of a query's rows and the count of them all; with `keys` (the query's order as
 * `keyColumns` gives it), each row's sort keys too, and `window.after` read as a keyset (the
 * rows after that position; the count still of them all).
 */
export async function sliceOf<T extends object>(
  qb: SelectQueryBuilder<T>,
  window: Window,
  keys?: readonly KeyColumn[],
): Promise<Slice<T>> {
  const counting = await windowCount(qb, window, keys !== undefined);
  if (window.limit > 0) qb.limit(window.limit + (counting.peek ? 1 : 0));
  if (window.offset > 0) qb.offset(window.offset);
  if (!keys) {
    const rows = counting.empty ? [] : await qb.getMany();
    return sliceFrom(counting, window, rows);
  }
  if (counting.empty) return { rows: [], total: counting.total, keys: [] };
  if (window.after) {
    const parameters: Record<string, unknown> = {};
    qb.andWhere(afterSql(keys, window.after, named('keyset', parameters)), parameters);
  }
  qb.addSelect(keysJsonSql(keys), 'cursor_keys');
  const { raw, entities } = await qb.getRawAndEntities<{ cursor_keys: unknown }>();
  const id = `${qb.alias}_id`;
  const byId = new Map(raw.map((row) => [String((row as Record<string, unknown>)[id]), row]));
  const keysOfRow = (entity: T): KeyValues =>
    keyValuesOf(keys, byId.get(String((entity as { id?: unknown }).id))!.cursor_keys);
  return sliceFrom(counting, window, entities, keysOfRow);
}

/** How a window counts its list, as `Window` asks (`countCap`, `countLazily`). */
interface WindowCount {
  total: number;
  exact: boolean;
  /** Counts the whole list (once); on a lazily counted window, `Slice.count`. */
  count: () => Promise<Counted>;
  lazily: boolean;
  /** Past the cap, the window reads one row more, which says whether rows follow it. */
  peek: boolean;
  /** Nothing to read: the count says the window is past the end. */
  empty: boolean;
}

/** The count of `qb`'s rows for `window` (deferred when `lazyAllowed` and the window asks). */
async function windowCount<T extends object>(
  qb: SelectQueryBuilder<T>,
  window: Window,
  lazyAllowed: boolean,
): Promise<WindowCount> {
  const counter = qb.clone().orderBy();
  let counted: Promise<Counted> | undefined;
  const count = (): Promise<Counted> => (counted ??= countUpTo(counter, window.countCap ?? 0));
  const lazily = lazyAllowed && window.countLazily === true;
  const { total, exact } = lazily ? { total: Number.NaN, exact: true } : await count();
  return {
    total,
    exact,
    count,
    lazily,
    peek: !exact && window.limit > 0,
    empty: !lazily && exact && (total === 0 || window.offset >= total),
  };
}

/**
 * The slice of the rows read for a window (one more when it peeked, cut off here), with their
 * sort keys when `keysOfRow` is given.
 */
function sliceFrom<T>(
  counting: WindowCount,
  window: Window,
  read: T[],
  keysOfRow?: (row: T) => KeyValues,
): Slice<T> {
  const rows = counting.peek ? read.slice(0, window.limit) : read;
  return {
    rows,
    total: counting.total,
    ...(counting.exact ? {} : { exact: false }),
    ...(counting.peek ? { more: read.length > window.limit } : {}),
    ...(keysOfRow ? { keys: rows.map(keysOfRow) } : {}),
    ...(counting.lazily ? { count: counting.count } : {}),
  };
}

/**
 * The number of rows of `qb` (no order), exactly up to `cap` (0: no cap): the count stops at the
 * cap's next row, so a list of a million rows costs what one of the cap's does.
 */
export async function countUpTo<T extends object>(
  qb: SelectQueryBuilder<T>,
  cap: number,
): Promise<Counted> {
  const capped = qb.clone().select('1', 'one');
  if (cap > 0) capped.limit(cap + 1);
  // Counted over the rows as selected (`qb` may read from a subquery, which has no entity).
  const row = await qb
    .createQueryBuilder()
    .select('count(*)::int', 'n')
    .from(`(${capped.getQuery()})`, 'capped')
    .setParameters(capped.getParameters())
    .getRawOne<{ n: number }>();
  const n = row?.n ?? 0;
  return cap > 0 && n > cap ? { total: cap, exact: false } : { total: n, exact: true };
}

/**
 * `sliceOf` for lists of wide rows (concept and mapping versions): the window is picked on the
 * narrow id and sort keys, which an index can give alone, and only its rows are then read whole
 * (`load`, by id). Picked on whole rows, a page whose filter an index cannot answer read every row
 * it skipped (the newest French concepts of every public source: 55 ms, 9 ms narrow). `em` runs
 * it (the caller's transaction, if any).
 */
export async function narrowSliceOf<T extends { id: string }>(
  em: EntityManager,
  qb: SelectQueryBuilder<T>,
  window: Window,
  keys: readonly KeyColumn[],
  load: (ids: string[]) => Promise<T[]>,
): Promise<Slice<T>> {
  const counting = await windowCount(qb, window, true);
  if (counting.empty) return { rows: [], total: counting.total, keys: [] };
  const found = await windowKeys(em, qb.clone(), keys, {
    after: window.after,
    offset: window.offset,
    limit: window.limit > 0 ? window.limit + (counting.peek ? 1 : 0) : 0,
  });
  const shown = sliceFrom(counting, window, found);
  const ids = shown.rows.map((row) => row.id);
  const rows = ids.length > 0 ? await load(ids) : [];
  const byId = new Map(rows.map((row) => [String(row.id), row]));
  return {
    ...shown,
    rows: ids.map((id) => byId.get(id)!),
    keys: shown.rows.map((row) => row.keys),
  };
}

/**
 * The ids and sort keys of a window of `page` (in its order, which `keys` are), picked narrow:
 * only the id and the keys are read; `limit` 0 is every row.
 */
async function windowKeys<T extends object>(
  em: EntityManager,
  page: SelectQueryBuilder<T>,
  keys: readonly KeyColumn[],
  window: { after?: KeyValues; offset: number; limit: number },
): Promise<Array<{ id: string; keys: KeyValues }>> {
  page.select(`(${page.alias}.id)`, 'id');
  selectKeys(page, keys);
  if (window.after) {
    const parameters: Record<string, unknown> = {};
    page.andWhere(afterSql(keys, window.after, named('keyset', parameters)), parameters);
  }
  if (window.limit > 0) page.limit(window.limit);
  if (window.offset > 0) page.offset(window.offset);
  const [sql, parameters] = page.getQueryAndParameters();
  const inPage = keysOf(keys, 'p');
  const found = await em.query<Array<{ id: string; keys: unknown }>>(
    `SELECT p.id::text AS id, ${keysJsonSql(inPage)} AS keys FROM (${sql}) p
     ORDER BY ${orderSql(inPage)}`,
    parameters,
  );
  return found.map((row) => ({ id: row.id, keys: keyValuesOf(keys, row.keys) }));
}

/**
 * Selects each of `keys` as `k0`, `k1`, … for a query that wraps this one (in parentheses:
 * TypeORM reads a bare `alias.column` as an entity property and selects it twice).
 */
export function selectKeys<T extends object>(
  qb: SelectQueryBuilder<T>,
  keys: readonly KeyColumn[],
): void {
  keys.forEach((key, i) => qb.addSelect(`(${key.sql})`, `k${i}`));
}

/** `keys` as the wrapping query reads them: the columns `k0`, `k1`, … of `alias`. */
export function keysOf(keys: readonly KeyColumn[], alias: string): KeyColumn[] {
  return keys.map((key, i) => ({ ...key, sql: `${alias}.k${i}` }));
}

/** The ORDER BY list of `keys`, each in its direction (nulls where PostgreSQL puts them). */
export function orderSql(keys: readonly KeyColumn[]): string {
  return keys.map((key) => `${key.sql} ${key.desc ? 'DESC' : 'ASC'}`).join(', ');
}

/**
 * The rows a rank's best matches are among: `sql` holds for every row that can rank above
 * `outside`, and no row outside it ranks higher than `outside` (`ConceptRepository.search`).
 * `columns`: the columns of the query's alias its sort keys (the rank among them) are computed
 * from, and no other: the matches counted carry these, and are ranked only when they number no
 * more than the cap (without them, each match's keys are computed as it is read, which a cheap
 * rank prefers). `covered`: a condition under which an index holds those columns and every
 * column the matches are found by (a partial index's predicate), so that the matches counted
 * past the cap are read apart, those rows from the index alone, and the rest from the table.
 * `flat`, when every row outside ranks `outside` exactly: those rows (the query's matches not in
 * the top), so that past the top's rows a window goes on with them in the order of the other
 * sort keys, none of them ranked. Written so that PostgreSQL walks that order to them (an index
 * of the list's order), as a first page of a common word wants.
 */
export interface RankTop<T extends object = object> {
  sql: string;
  outside: number;
  columns?: readonly string[];
  covered?: string;
  flat?: SelectQueryBuilder<T>;
}

/**
 * `sliceOf` for an order led by a computed rank (a `q` search by best match), in one scan: the
 * matches are found once, narrow (id and sort keys, `MATERIALIZED`), counted, and the window's
 * ids picked from them; only those rows are then read whole (`load`, by id). A rank must be
 * computed for every match anyway, so a separate count found them all a second time (for a
 * common word at CIEL scale, 100 of the search's 250 ms). `em` runs it (the caller's
 * transaction, if any).
 *
 * With a count cap and the rows of the rank's top (`top`), a search that matches more than the
 * cap stops ranking there (its count is the cap, as lists count) and ranks its top's rows only:
 * their window is the list's when it is full and its last row ranks above any row outside the
 * top. When it is not (a window deeper than the top, or a top too small), every match is ranked;
 * unless the rows outside the top all rank the same (`RankTop.flat`): then the window's rest is
 * theirs in the list's order (`flatWindow`).
 */
export async function rankedSliceOf<T extends { id: string }>(
  em: EntityManager,
  qb: SelectQueryBuilder<T>,
  window: Window,
  keys: readonly KeyColumn[],
  load: (ids: string[]) => Promise<T[]>,
  top?: RankTop<T>,
): Promise<Slice<T>> {
  const cap = window.countCap ?? 0;
  const bounded =
    top !== undefined && cap > 0 && window.limit > 0 && window.offset + window.limit <= cap;
  const read = async (found: RankedWindow, counted: Counted & { more?: boolean }) => {
    const ids = found.page.map((row) => row.id);
    const rows = ids.length > 0 ? await load(ids) : [];
    const byId = new Map(rows.map((row) => [String(row.id), row]));
    return {
      rows: ids.map((id) => byId.get(id)!),
      total: counted.total,
      ...(counted.exact ? {} : { exact: false, more: counted.more ?? true }),
      keys: found.page.map((row) => row.keys),
    };
  };
  if (bounded) {
    // Ranked only when there are no more matches than the cap: else the top's window is the
    // list's (or every match is ranked below), and ranking the first cap + 1 was wasted (13 of
    // a common word's 46 ms).
    const first = await rankedWindow(em, qb, window, keys, {
      upTo: cap + 1,
      rankedIfAtMost: top.columns ? { count: cap, columns: top.columns } : undefined,
      covered: top.covered,
    });
    if (first.total <= cap) return read(first, { total: first.total, exact: true });
    const best = await rankedWindow(em, qb.clone().andWhere(`(${top.sql})`), window, keys);
    const last = best.page.at(-1);
    if (best.page.length === window.limit && Number(last!.keys[0]) > top.outside) {
      return read(best, { total: cap, exact: false });
    }
    if (top.flat && best.page.length < window.limit && (window.offset === 0 || !window.after)) {
      const rest = await flatWindow(em, top.flat, keys, top.outside, {
        // Past the top's rows: from the start, or after the cursor when it is past them too.
        after: window.after && Number(window.after[0]) <= top.outside ? window.after : undefined,
        offset: window.after ? 0 : Math.max(0, window.offset - best.total),
        limit: window.limit - best.page.length,
      });
      return read(
        { total: best.total, page: [...best.page, ...rest] },
        { total: cap, exact: false },
      );
    }
  }
  const all = await rankedWindow(em, qb, window, keys);
  if (cap > 0 && all.total > cap) {
    // Counted whole, said as every list says a count past its cap.
    return read(all, {
      total: cap,
      exact: false,
      more: window.offset + all.page.length < all.total,
    });
  }
  return read(all, { total: all.total, exact: true });
}

/**
 * The window of `qb`'s rows when they all rank `rank` (`keys[0]`, a flat `RankTop`'s outside):
 * in the order of the other keys, which a list's index gives, none ranked and none counted.
 */
async function flatWindow<T extends object>(
  em: EntityManager,
  qb: SelectQueryBuilder<T>,
  keys: readonly KeyColumn[],
  rank: number,
  window: { after?: KeyValues; offset: number; limit: number },
): Promise<RankedWindow['page']> {
  const rest = keys.slice(1);
  const page = qb.clone().orderBy();
  for (const key of rest) page.addOrderBy(key.sql, key.desc ? 'DESC' : 'ASC');
  const found = await windowKeys(em, page, rest, { ...window, after: window.after?.slice(1) });
  return found.map((row) => ({ id: row.id, keys: [rank, ...row.keys] }));
}

/** The count of a ranked search's matches (up to `upTo`, when given) and its window's ids. */
interface RankedWindow {
  total: number;
  page: Array<{ id: string; keys: KeyValues }>;
}

/**
 * How `rankedWindow` reads the matches: at most `upTo` of them; with `rankedIfAtMost`, each
 * match's `columns` (those its keys are computed from) rather than its keys, which are computed
 * (and a window picked) only when the matches read number at most `count`; with `covered`
 * (`RankTop`), the matches it holds for and the others as two queries, one after the other.
 */
interface RankedReading {
  upTo?: number;
  rankedIfAtMost?: { count: number; columns: readonly string[] };
  covered?: string;
}

/** One statement of `rankedSliceOf`: ranks `qb`'s matches (read as `reading` says). */
async function rankedWindow<T extends object>(
  em: EntityManager,
  qb: SelectQueryBuilder<T>,
  window: Window,
  keys: readonly KeyColumn[],
  reading: RankedReading = {},
): Promise<RankedWindow> {
  const { upTo = 0, rankedIfAtMost: lazy, covered } = reading;
  const alias = qb.alias;
  const hits = qb.clone().orderBy().select(`(${alias}.id)`, 'id');
  if (lazy) {
    for (const column of lazy.columns.filter((c) => c !== 'id'))
      hits.addSelect(`(${alias}.${column})`, column);
  } else {
    selectKeys(hits, keys);
  }
  // Apart, the covered rows are read from their index alone: a common word's first 10,001
  // matches at CIEL scale, 28 → 10–16 ms (`concept_versions_head_search`).
  const matches = covered
    ? [`(${covered})`, `NOT (${covered})`]
        .map((condition) => `(${hits.clone().andWhere(condition).getQuery()})`)
        .join(' UNION ALL ')
    : hits.getQuery();
  const inHits = keysOf(keys, 'h');
  const parameters: Record<string, unknown> = { ...hits.getParameters() };
  const after = window.after ? afterSql(inHits, window.after, named('keyset', parameters)) : 'true';
  const limit = window.limit > 0 ? ` LIMIT ${window.limit}` : '';
  const offset = window.offset > 0 ? ` OFFSET ${window.offset}` : '';
  const inPage = keysOf(keys, 'p');
  // At most `upTo` of the matches are read: the CTE is planned for all of them (a LIMIT inside
  // it made PostgreSQL walk every row of a source for a word it thought common), and computed
  // only as far as it is read. The window's keys are built as JSON after it is picked (before,
  // for each match: 45 of a common word's 200 ms).
  const read = upTo > 0 ? `(SELECT * FROM h LIMIT ${upTo})` : 'h';
  // Lazily: the keys computed over the read columns (named as the query's alias names them),
  // and not at all past the count (a one-time filter on it).
  const ranked = lazy
    ? `(SELECT ${alias}.id, ${keys.map((key, i) => `${key.sql} AS k${i}`).join(', ')}
        FROM ${read} ${alias} WHERE t.total <= ${lazy.count}) h`
    : `${read} h`;
  const [sql, values] = em.connection.driver.escapeQueryWithParameters(
    `WITH h AS MATERIALIZED (${matches})
     SELECT t.total, p.id::text AS id, ${keysJsonSql(inPage)} AS keys
     FROM (SELECT count(*)::int AS total FROM ${read} h) t
     LEFT JOIN LATERAL (
       SELECT h.id, ${inHits.map((key) => key.sql).join(', ')}
       FROM ${ranked} WHERE ${after} ORDER BY ${orderSql(inHits)}${limit}${offset}) p ON true
     ORDER BY ${orderSql(inPage)}`,
    parameters,
  );
  const found = await em.query<Array<{ total: number; id: string | null; keys: unknown }>>(
    sql,
    values,
  );
  return {
    total: found[0].total,
    page: found.flatMap((row) =>
      row.id === null ? [] : [{ id: row.id, keys: keyValuesOf(keys, row.keys) }],
    ),
  };
}

/**
 * One facet of a filtered list: `column`, an expression over its rows, counted per value; with
 * `each`, per element of that (array) column; with `label`, the counted values (a repository id)
 * are shown by another SQL expression over `g.value` (its name), and the counts of values shown
 * alike are added up.
 */
export interface Facet {
  column: string;
  each?: boolean;
  label?: string;
}

/**
 * A facet counted per repository id (`column`) and shown by `value`, an expression over that
 * repository `fr` and its owner (`fo`, an org, or `fu`, a user): its id, its owner's name.
 */
export function repositoryFacet(column: string, value: string): Facet {
  return {
    column,
    label: `(SELECT ${value} FROM repositories fr
       LEFT JOIN organizations fo ON fo.id = fr.owner_org_id
       LEFT JOIN users fu ON fu.id = fr.owner_user_id WHERE fr.id = g.value)`,
  };
}

/** How many values a facet shows, most frequent first. */
const FACET_VALUES = 100;

/**
 * `[value, count]` pairs of each facet over the filtered set of `qb`, most frequent first (then by
 * value), at most `FACET_VALUES` each. One statement and one pass over the filtered rows: they
 * are grouped by every facet column at once (`GROUPING SETS`, an array column by its whole
 * value), and each facet is then read from those few groups (an array's elements summed, values
 * shown alike summed). Before, each facet ran the filter again, and a facet shown by a
 * repository's name looked it up for every row (a CIEL-scale source's facets: 0.9 s; its
 * mappings': 2.3 s).
 */
export async function facetsOf<T extends object>(
  em: EntityManager,
  qb: SelectQueryBuilder<T>,
  facets: Record<string, Facet>,
): Promise<FacetCounts> {
  const names = Object.keys(facets);
  // One grouping set per column (facets of one column, shown two ways, share it).
  const columns = [...new Set(names.map((name) => facets[name].column))];
  const f = columns.map((_, i) => `f${i}`);
  const rows = qb.clone().orderBy().select(columns[0], f[0]);
  columns.slice(1).forEach((column, i) => rows.addSelect(column, f[i + 1]));
  const [sql, params] = rows.getQueryAndParameters();
  const counted = names.map((name, facet) => {
    const { column, each, label } = facets[name];
    const i = columns.indexOf(column);
    // This facet's groups: those of the set grouped by its column alone.
    const own = `SELECT g.${f[i]} AS value, g.count FROM g WHERE g.g${i} = 0`;
    let shown: string;
    if (each) {
      shown = `SELECT e.value, sum(o.count) AS count FROM (${own}) o
        CROSS JOIN LATERAL unnest(o.value) e(value) WHERE e.value IS NOT NULL GROUP BY e.value`;
    } else if (label) {
      shown = `SELECT l.value, sum(g.count) AS count FROM (${own}) g
        CROSS JOIN LATERAL (SELECT ${label} AS value) l WHERE l.value IS NOT NULL GROUP BY l.value`;
    } else {
      shown = `${own} AND g.${f[i]} IS NOT NULL`;
    }
    return `(SELECT ${facet} AS facet, v.value::text AS value, v.count::int AS count,
        row_number() OVER (ORDER BY v.count DESC, v.value ASC) AS n
      FROM (${shown}) v ORDER BY n LIMIT ${FACET_VALUES})`;
  });
  const found = await em.query<Array<{ facet: number; value: string; count: number }>>(
    `WITH g AS (
       SELECT ${f.join(', ')}, ${f.map((c, i) => `GROUPING(${c}) AS g${i}`).join(', ')},
         count(*) AS count
       FROM (${sql}) r GROUP BY GROUPING SETS (${f.map((c) => `(${c})`).join(', ')}))
     SELECT c.facet, c.value, c.count FROM (${counted.join(' UNION ALL ')}) c
     ORDER BY c.facet, c.n`,
    params,
  );
  const result: FacetCounts = Object.fromEntries(names.map((name) => [name, []]));
  for (const row of found) result[names[row.facet]].push([row.value, row.count]);
  return result;
}

/** True for a Postgres unique-constraint violation (a concurrent insert won the race). */
export function isUniqueViolation(error: unknown): boolean {
  const driverError = (error as { driverError?: { code?: string } } | null)?.driverError;
  return driverError?.code === '23505';
}

/** One `extras.<name>` condition (spec operations §4.9): any of `values` (`*` = wildcard). */
export interface ExtrasCondition {
  path: string[];
  values: string[];
  negate: boolean;
}

export interface ExtrasFilter {
  conditions: ExtrasCondition[];
  /** `extras.exists`: these attributes must be present. */
  exists: string[][];
}

/** Applies extras conditions to a jsonb column: conditions AND, values OR, case-insensitive. */
export function whereExtras<T extends object>(
  qb: SelectQueryBuilder<T>,
  column: string,
  filter: ExtrasFilter | undefined,
): void {
  if (!filter) return;
  filter.exists.forEach((path, i) => {
    qb.andWhere(`${column} #> :exPath${i} IS NOT NULL`, { [`exPath${i}`]: path });
  });
  filter.conditions.forEach((condition, i) => {
    const text = `${column} #>> :ecPath${i}`;
    const params: Record<string, unknown> = { [`ecPath${i}`]: condition.path };
    const alternatives = condition.values.map((value, j) => {
      const name = `ec${i}v${j}`;
      if (value.includes('*')) {
        params[name] = likeLiteral(value.toLowerCase()).replace(/\*/g, '%');
        return `lower(${text}) LIKE :${name}`;
      }
      params[name] = value.toLowerCase();
      return `lower(${text}) = :${name}`;
    });
    const any = `(${alternatives.join(' OR ')})`;
    qb.andWhere(condition.negate ? `(${text} IS NULL OR NOT ${any})` : any, params);
  });
}

/**
 * SQL that holds when the viewer may see the repository `alias` (design §2: nothing private in
 * any list or count of a caller who may not see it); pushes its parameters onto `params`, or
 * binds them with `params` (a `Bind`).
 */
export function visibleRepository(alias: string, viewer: Viewer, params: unknown[] | Bind): string {
  if (viewer.superuser) return `${alias}.is_active`;
  const bind = Array.isArray(params) ? positional(params) : params;
  const me = bind(viewer.userId ?? '0');
  const readerOwner = ownedByReaderOwner(alias, viewer, bind);
  return `(${alias}.is_active AND ((${alias}.public_access <> 'None' AND (${alias}.owner_org_id IS NULL
    OR EXISTS (SELECT 1 FROM organizations po WHERE po.id = ${alias}.owner_org_id AND po.public_access <> 'None')))
    OR ${alias}.owner_user_id = ${me}::bigint
    OR EXISTS (SELECT 1 FROM org_memberships vm WHERE vm.org_id = ${alias}.owner_org_id AND vm.user_id = ${me}::bigint)${readerOwner}))`;
}

/** A whole list as one statement (no window), for a cursor to walk. */
export interface Listing {
  sql: string;
  params: unknown[];
}
