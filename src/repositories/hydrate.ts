import type { EntityManager, EntityMetadata, EntityTarget } from 'typeorm';
import { preparedQuery } from './prepared';

/**
 * A table row as JSON: an object as `to_json` writes it (column names, bigints as numbers,
 * timestamps as text), or an array as `jsonColumns` writes it (the selected columns' values, in
 * their order).
 */
export type Raw = Record<string, unknown> | unknown[] | null;

type Conversion = 'text' | 'date' | 'same';
/** A column as `hydrate` reads it: its JSON name, the entity's property, how to convert. */
type Column = [name: string, property: string, conversion: Conversion];

interface Layout {
  /** Every column (what `to_json` writes). */
  all: Column[];
  /** The selected columns, in `jsonColumns`' order (what its arrays hold). */
  selected: Column[];
  /** `jsonColumns`' SQL per alias and columns read instead. */
  sql: Map<string, string>;
}

const layouts = new WeakMap<EntityMetadata, Layout>();

function layoutOf(metadata: EntityMetadata): Layout {
  let layout = layouts.get(metadata);
  if (!layout) {
    const columnOf = (column: EntityMetadata['columns'][number]): Column => {
      const type =
        typeof column.type === 'string' ? column.type : column.type === Date ? 'date' : '';
      const conversion: Conversion = /^(bigint|int8)$/.test(type)
        ? 'text'
        : /^(timestamp|date)/.test(type)
          ? 'date'
          : 'same';
      return [column.databaseName, column.propertyName, conversion];
    };
    layout = {
      all: metadata.columns.map(columnOf),
      selected: metadata.columns.filter((column) => column.isSelect).map(columnOf),
      sql: new Map(),
    };
    layouts.set(metadata, layout);
  }
  return layout;
}

/**
 * An entity from a JSON row (`to_json`'s object or `jsonColumns`' array), with the values the
 * driver would give: bigints as text, timestamps as dates (to the millisecond, as the driver
 * parses them). Lets one statement answer several tables' rows as JSON columns.
 */
export function hydrate<T>(em: EntityManager, target: EntityTarget<T>, raw: Raw): T | null {
  if (raw === null) return null;
  const metadata = em.dataSource.getMetadata(target);
  const layout = layoutOf(metadata);
  const entity = metadata.create() as Record<string, unknown>;
  const positional = Array.isArray(raw);
  const columns = positional ? layout.selected : layout.all;
  for (let i = 0; i < columns.length; i++) {
    const [name, property, conversion] = columns[i];
    const value = positional ? raw[i] : raw[name];
    entity[property] =
      value === null || value === undefined
        ? null
        : conversion === 'text'
          ? (value as number | string).toString()
          : conversion === 'date'
            ? new Date(value as string)
            : value;
  }
  return entity as T;
}

/**
 * The SQL of a JSON array holding the selected columns of an entity's row `alias` (a table
 * alias, or a composite value such as `(m.mv)`), as `hydrate` reads it: what a statement answers
 * instead of `to_json(row)`, which would also carry columns never read (search text). An array,
 * not an object: without a name per value, PostgreSQL builds it and the driver parses it in
 * about two thirds of the time (an export of CIEL's 300,000 mappings: 8.6 → 5.5 s of database).
 */
export function jsonColumns<T>(
  em: EntityManager,
  target: EntityTarget<T>,
  alias: string,
  /** Columns (by database name) read as these expressions instead: a value the reader will not use. */
  instead: Readonly<Record<string, string>> = {},
): string {
  const layout = layoutOf(em.dataSource.getMetadata(target));
  const key = `${alias} ${JSON.stringify(instead)}`;
  let sql = layout.sql.get(key);
  if (sql === undefined) {
    const value = (name: string) => instead[name] ?? `${alias}.${name}`;
    sql = `json_build_array(${layout.selected.map(([name]) => value(name)).join(', ')})`;
    layout.sql.set(key, sql);
  }
  return sql;
}

/**
 * The versioned object each row belongs to (a concept version's concept), read in the same
 * statement: `column` of the row holds its id.
 */
export interface PartsParent<P> {
  target: EntityTarget<P>;
  column: string;
}

/** One part's rows, in its order, with their sort keys (keyed parts) and their parents. */
export interface Part<T, P> {
  rows: T[];
  keys: unknown[];
  /** `parent`'s rows, one a row (when asked). */
  parents: P[];
}

/**
 * The rows of several id-selecting statements (each `[sql, parameters]` selecting one id column of
 * `target`'s table, in its own order) read in one statement: per statement, its rows in its order
 * (with their `parent` rows, when asked). Their parameters are renumbered into one list. What lets
 * the sibling lists of one GraphQL query be read together. The statement is prepared: the parts'
 * texts hold no values (a window, a list of ids), only parameters.
 */
export function rowsOfParts<T, P = never>(
  em: EntityManager,
  target: EntityTarget<T>,
  parts: ReadonlyArray<[string, unknown[]]>,
  parent?: PartsParent<P>,
): Promise<Array<Part<T, P>>> {
  return partsOf(em, target, parts, false, parent);
}

/**
 * `rowsOfParts` for statements that select, instead of an id, `json_build_array(id, keys)`: each
 * row with its sort keys (a JSON array, as `keysJsonSql` builds it), for the lists cursors page.
 */
export function keyedRowsOfParts<T, P = never>(
  em: EntityManager,
  target: EntityTarget<T>,
  parts: ReadonlyArray<[string, unknown[]]>,
  parent?: PartsParent<P>,
): Promise<Array<Part<T, P>>> {
  return partsOf(em, target, parts, true, parent);
}

/** The most parts of one `partsOf` statement sent prepared. */
const PREPARED_PARTS = 4;

async function partsOf<T, P>(
  em: EntityManager,
  target: EntityTarget<T>,
  parts: ReadonlyArray<[string, unknown[]]>,
  keyed: boolean,
  parent?: PartsParent<P>,
): Promise<Array<Part<T, P>>> {
  if (parts.length === 0) return [];
  const params: unknown[] = [];
  const selects = parts.map(([sql, values], n) => {
    const shift = params.length;
    params.push(...values);
    const numbered = sql.replace(/\$(\d+)/g, (_, i: string) => `$${Number(i) + shift}`);
    // ARRAY(…) keeps the statement's order; WITH ORDINALITY numbers it.
    return keyed
      ? `SELECT ${n} AS part, u.ord, (u.k->>0)::bigint AS id, u.k->1 AS keys
         FROM unnest(ARRAY(${numbered})) WITH ORDINALITY AS u(k, ord)`
      : `SELECT ${n} AS part, u.ord, u.id, NULL::json AS keys
         FROM unnest(ARRAY(${numbered})) WITH ORDINALITY AS u(id, ord)`;
  });
  const table = em.dataSource.getMetadata(target).tableName;
  const parentSql = parent
    ? `(SELECT ${jsonColumns(em, parent.target, 'o')}
        FROM ${em.dataSource.getMetadata(parent.target).tableName} o
        WHERE o.id = t.${parent.column})`
    : 'NULL::json';
  // A lateral lookup per id (its LIMIT keeps it a nested loop over the primary key): joined,
  // the planner, which cannot know how few ids there are, may hash the whole table. Each row as
  // the selected columns' array (no search text), which the driver parses fastest.
  const sql = `SELECT p.part, l.row, l.parent, p.keys
     FROM (${selects.join('\n UNION ALL ')}) p
     CROSS JOIN LATERAL (SELECT ${jsonColumns(em, target, 't')} AS row, ${parentSql} AS parent
       FROM ${table} t WHERE t.id = p.id LIMIT 1) l
     ORDER BY p.part, p.ord`;
  // The callers' statements differ only in their values (windows and id lists are parameters),
  // so a few texts serve every request: each planned once per connection. Many siblings make a
  // text of their own; past a few, they are planned as they come.
  type Found = { part: number; row: Raw; parent: Raw; keys: unknown };
  const rows =
    parts.length <= PREPARED_PARTS
      ? await preparedQuery<Found>(em, sql, params)
      : await em.query<Found[]>(sql, params);
  const found = parts.map((): Part<T, P> => ({ rows: [], keys: [], parents: [] }));
  for (const row of rows) {
    const part = found[row.part];
    part.rows.push(hydrate(em, target, row.row)!);
    part.keys.push(row.keys);
    if (parent) part.parents.push(hydrate(em, parent.target, row.parent)!);
  }
  return found;
}

/** Rows of `target`'s table by their (bigint) ids, in one prepared statement; any order. */
export async function entitiesByIds<T>(
  em: EntityManager,
  target: EntityTarget<T>,
  ids: readonly string[],
): Promise<T[]> {
  if (ids.length === 0) return [];
  const table = em.dataSource.getMetadata(target).tableName;
  const rows = await preparedQuery<{ row: Raw }>(
    em,
    `SELECT ${jsonColumns(em, target, 't')} AS row FROM ${table} t WHERE t.id = ANY($1::bigint[])`,
    [ids],
  );
  return rows.map((r) => hydrate(em, target, r.row)!);
}
