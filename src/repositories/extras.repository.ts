import type { EntityManager } from 'typeorm';

/** The tables whose rows keep their custom attributes in place (concepts and mappings version them). */
export type ExtrasTable = 'organizations' | 'users' | 'repositories';

type Extras = Record<string, unknown>;

/**
 * One custom attribute written or removed in one statement (spec operations §4.9), so that
 * parallel writes of different attributes of one resource all land.
 */
export class ExtrasRepository {
  constructor(private readonly em: EntityManager) {}

  /** Sets attribute `name` of row `id` to `value`; answers the row's extras after. */
  async set(
    table: ExtrasTable,
    id: string,
    name: string,
    value: unknown,
    by: string,
  ): Promise<Extras> {
    const rows = await this.em.query<Array<{ extras: Extras }>>(
      // As a CTE so that the driver answers plain rows, as for a SELECT.
      `WITH changed AS (
         UPDATE ${table}
         SET extras = coalesce(extras, '{}'::jsonb) || jsonb_build_object($2::text, $3::jsonb),
             updated_by = $4, updated_at = now()
         WHERE id = $1
         RETURNING extras)
       SELECT extras FROM changed`,
      [id, name, JSON.stringify(value ?? null), by],
    );
    return rows[0].extras;
  }

  /** Removes attribute `name` of row `id`; false when it had none such. */
  async remove(table: ExtrasTable, id: string, name: string, by: string): Promise<boolean> {
    const rows = await this.em.query<unknown[]>(
      `WITH changed AS (
         UPDATE ${table}
         SET extras = nullif(extras - $2::text, '{}'::jsonb), updated_by = $3, updated_at = now()
         WHERE id = $1 AND extras ? $2::text
         RETURNING id)
       SELECT id FROM changed`,
      [id, name, by],
    );
    return rows.length > 0;
  }
}
