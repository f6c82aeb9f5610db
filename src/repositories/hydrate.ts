import type { EntityManager, EntityMetadata, EntityTarget } from 'typeorm';

/** A table row as `to_json` writes it: column names, bigints as numbers, timestamps as text. */
export type Raw = Record<string, unknown> | null;

type Conversion = 'text' | 'date' | 'same';
const conversions = new WeakMap<EntityMetadata, Array<[string, string, Conversion]>>();

/**
 * An entity from a `to_json` row, with the values the driver would give: bigints as text,
 * timestamps as dates (to the millisecond, as the driver parses them). Lets one statement
 * answer several tables' rows as JSON columns.
 */
export function hydrate<T>(em: EntityManager, target: EntityTarget<T>, raw: Raw): T | null {
  if (raw === null) return null;
  const metadata = em.dataSource.getMetadata(target);
  let columns = conversions.get(metadata);
  if (!columns) {
    columns = metadata.columns.map((column) => {
      const type =
        typeof column.type === 'string' ? column.type : column.type === Date ? 'date' : '';
      const conversion: Conversion = /^(bigint|int8)$/.test(type)
        ? 'text'
        : /^(timestamp|date)/.test(type)
          ? 'date'
          : 'same';
      return [column.databaseName, column.propertyName, conversion];
    });
    conversions.set(metadata, columns);
  }
  const entity = metadata.create() as Record<string, unknown>;
  for (const [name, property, conversion] of columns) {
    const value = raw[name];
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

const objectSql = new WeakMap<EntityMetadata, Map<string, string>>();

/**
 * The SQL of a JSON object holding the selected columns of an entity's row `alias` (a table
 * alias, or a composite value such as `(m.mv)`), as `hydrate` reads it: what a statement answers
 * instead of `to_json(row)`, which would also carry columns never read (search text).
 */
export function jsonColumns<T>(em: EntityManager, target: EntityTarget<T>, alias: string): string {
  const metadata = em.dataSource.getMetadata(target);
  let byAlias = objectSql.get(metadata);
  if (!byAlias) {
    byAlias = new Map();
    objectSql.set(metadata, byAlias);
  }
  let sql = byAlias.get(alias);
  if (sql === undefined) {
    const pairs = metadata.columns
      .filter((column) => column.isSelect)
      .map((column) => `'${column.databaseName}', ${alias}.${column.databaseName}`);
    sql = `json_build_object(${pairs.join(', ')})`;
    byAlias.set(alias, sql);
  }
  return sql;
}
