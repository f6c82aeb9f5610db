import type { EntityManager } from 'typeorm';

export type PinResourceType = 'Source' | 'Collection' | 'Organization';

/** Whose pins: a user's or an org's. */
export type PinOwner = { userId: string } | { orgId: string };

export interface PinRow {
  id: string;
  user_id: string | null;
  org_id: string | null;
  resource_type: PinResourceType;
  resource_id: string;
  position: number;
  created_by: string;
  created_at: Date;
}

const COLUMNS = `id::text AS id, user_id::text AS user_id, org_id::text AS org_id, resource_type,
  resource_id::text AS resource_id, position, created_by, created_at`;

function ownerColumn(owner: PinOwner): { column: string; id: string; table: string } {
  return 'userId' in owner
    ? { column: 'user_id', id: owner.userId, table: 'users' }
    : { column: 'org_id', id: owner.orgId, table: 'organizations' };
}

export class PinRepository {
  constructor(private readonly em: EntityManager) {}

  /** Pins of one owner, in their order. */
  list(owner: PinOwner): Promise<PinRow[]> {
    const { column, id } = ownerColumn(owner);
    return this.em.query<PinRow[]>(
      `SELECT ${COLUMNS} FROM pins WHERE ${column} = $1 ORDER BY position, id`,
      [id],
    );
  }

  /** Pins of many users at once (the `includePins` of a user detail). */
  async listForUsers(userIds: readonly string[]): Promise<Map<string, PinRow[]>> {
    const rows = await this.em.query<PinRow[]>(
      `SELECT ${COLUMNS} FROM pins WHERE user_id = ANY($1::bigint[]) ORDER BY position, id`,
      [userIds],
    );
    const byUser = new Map<string, PinRow[]>();
    for (const row of rows) byUser.set(row.user_id!, [...(byUser.get(row.user_id!) ?? []), row]);
    return byUser;
  }

  /**
   * Locks the owner's row until the transaction ends: every change of one owner's pins takes it
   * first, so parallel adds and moves see each other's positions (inside a transaction only).
   */
  async lockOwner(owner: PinOwner): Promise<void> {
    const { table, id } = ownerColumn(owner);
    await this.em.query(`SELECT 1 FROM ${table} WHERE id = $1 FOR UPDATE`, [id]);
  }

  async find(owner: PinOwner, pinId: string): Promise<PinRow | null> {
    const { column, id } = ownerColumn(owner);
    const rows = await this.em.query<PinRow[]>(
      `SELECT ${COLUMNS} FROM pins WHERE ${column} = $1 AND id = $2`,
      [id, pinId],
    );
    return rows[0] ?? null;
  }

  /** Appends a pin after the owner's others; null when that resource is pinned already. */
  async append(
    owner: PinOwner,
    resourceType: PinResourceType,
    resourceId: string,
    createdBy: string,
  ): Promise<PinRow | null> {
    const { column, id } = ownerColumn(owner);
    const rows = await this.em.query<PinRow[]>(
      `INSERT INTO pins (${column}, resource_type, resource_id, position, created_by)
       VALUES ($1, $2, $3, (SELECT count(*)::int FROM pins WHERE ${column} = $1), $4)
       ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
      [id, resourceType, resourceId, createdBy],
    );
    return rows[0] ?? null;
  }

  /** Writes the owner's pins' positions as the order of `ids` (0, 1, …). */
  async renumber(owner: PinOwner, ids: string[]): Promise<void> {
    const { column, id } = ownerColumn(owner);
    await this.em.query(
      `UPDATE pins p SET position = o.position - 1
       FROM unnest($2::bigint[]) WITH ORDINALITY AS o(id, position)
       WHERE p.id = o.id AND p.${column} = $1`,
      [id, ids],
    );
  }

  async delete(owner: PinOwner, pinId: string): Promise<void> {
    const { column, id } = ownerColumn(owner);
    await this.em.query(`DELETE FROM pins WHERE ${column} = $1 AND id = $2`, [id, pinId]);
  }
}
