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
