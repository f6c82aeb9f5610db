import { AppError } from '../../errors';
import type { ExtrasTable, Repositories } from '../../repositories';

type Extras = Record<string, unknown> | null;

/**
 * Custom attributes as sub-resources (spec operations §4.9), for every resource that has them.
 * `PUT …/extras/:name/` sends `{"<name>": value}`: the value of that one attribute.
 */
export function extraValue(name: string, input: unknown): unknown {
  if (
    typeof input !== 'object' ||
    input === null ||
    Array.isArray(input) ||
    !Object.hasOwn(input, name)
  ) {
    throw AppError.invalid(`Send the attribute in the body as {"${name}": <value>}.`);
  }
  const others = Object.keys(input).filter((k) => k !== name);
  if (others.length > 0) {
    throw AppError.invalid(
      `Only the attribute '${name}' may be sent to its own URL; found also: ${others.join(', ')}.`,
    );
  }
  return (input as Record<string, unknown>)[name];
}

/** One attribute's value; 404 when there is none such. */
export function extraOf(extras: Extras, name: string, owner: string): unknown {
  if (!extras || !Object.hasOwn(extras, name)) throw extraNotFound(name, owner);
  return extras[name];
}

/** The extras with one attribute set from a `{"<name>": value}` body. */
export function withExtra(extras: Extras, name: string, input: unknown): Record<string, unknown> {
  return { ...extras, [name]: extraValue(name, input) };
}

/** The extras without one attribute (null when none remain); 404 when there is none such. */
export function withoutExtra(extras: Extras, name: string, owner: string): Extras {
  extraOf(extras, name, owner);
  const rest = Object.fromEntries(Object.entries(extras ?? {}).filter(([k]) => k !== name));
  return Object.keys(rest).length > 0 ? rest : null;
}

export function extraNotFound(name: string, owner: string): AppError {
  return AppError.notFound(`Extra '${name}' of ${owner}`);
}

/**
 * `PUT …/extras/:name/` on an org, user or repository: one attribute set in place, in one
 * statement (parallel writes of different attributes all land). Answers the value stored.
 */
export async function setRowExtra(
  repos: Repositories,
  row: { table: ExtrasTable; id: string },
  name: string,
  input: unknown,
  by: string,
): Promise<unknown> {
  const extras = await repos.extras.set(row.table, row.id, name, extraValue(name, input), by);
  return extras[name];
}

/** `DELETE …/extras/:name/` on an org, user or repository; 404 when it has none such. */
export async function removeRowExtra(
  repos: Repositories,
  row: { table: ExtrasTable; id: string; label: string },
  name: string,
  by: string,
): Promise<void> {
  if (!(await repos.extras.remove(row.table, row.id, name, by))) {
    throw extraNotFound(name, row.label);
  }
}
