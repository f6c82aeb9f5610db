import type { EntityManager } from 'typeorm';

export type ExportState = 'processing' | 'ready' | 'failed';

/** A repository version's export (spec operations §3): its state and, once ready, its file. */
export interface ExportRow {
  versionId: string;
  state: ExportState;
  taskId: string | null;
  fileKey: string | null;
  fileName: string | null;
  size: number | null;
  lastUpdated: Date | null;
  error: string | null;
  requestedAt: Date;
  finishedAt: Date | null;
  /**
   * A ready export still fits what it was written from: its repository has the same audience
   * and no visibility was narrowed since it started (see the export-audiences migration).
   */
  fresh: boolean;
}

/**
 * Who may read a repository, as text: `public` (anyone), `org:<id>` (the org's members) or
 * `user:<id>` (the user). An export is written for, and served to, one audience.
 */
export type Audience = 'public' | `org:${string}` | `user:${string}`;

/** The audience of the repository `r` whose owning org (if any) is `o`: the one definition. */
const AUDIENCE_OF = `CASE
    WHEN r.public_access <> 'None' AND (o.id IS NULL OR o.public_access <> 'None') THEN 'public'
    WHEN r.owner_org_id IS NOT NULL THEN 'org:' || r.owner_org_id
    ELSE 'user:' || r.owner_user_id END`;

/** Joins a version's repository `r` and its owning org `o` to the export row `e`. */
const REPOSITORY_OF_EXPORT = `JOIN repository_versions v ON v.id = e.version_id
  JOIN repositories r ON r.id = v.repository_id
  LEFT JOIN organizations o ON o.id = r.owner_org_id`;

const FRESH = `(e.audience IS NOT DISTINCT FROM ${AUDIENCE_OF}
  AND e.narrowings = (SELECT n FROM visibility_narrowings WHERE id = 1))`;

/** What a single-use download address leads to. */
export interface DownloadRow {
  versionId: string;
  fileKey: string;
  fileName: string;
}

const COLUMNS = `e.version_id::text AS "versionId", e.state, e.task_id::text AS "taskId",
  e.file_key AS "fileKey", e.file_name AS "fileName", e.size::float8 AS size,
  e.last_updated AS "lastUpdated", e.error, e.requested_at AS "requestedAt",
  e.finished_at AS "finishedAt", ${FRESH} AS fresh`;

/** Export rows and download addresses; every state change is one conditional statement. */
export class ExportRepository {
  constructor(private readonly em: EntityManager) {}

  /** An UPDATE or DELETE … RETURNING (TypeORM answers those with `[rows, rowCount]`). */
  private async changed<T = unknown>(sql: string, parameters: unknown[]): Promise<T[]> {
    const [rows] = await this.em.query<[T[], number]>(sql, parameters);
    return rows;
  }

  async find(versionId: string): Promise<ExportRow | null> {
    const rows = await this.em.query<ExportRow[]>(
      `SELECT ${COLUMNS} FROM repository_exports e ${REPOSITORY_OF_EXPORT} WHERE e.version_id = $1`,
      [versionId],
    );
    return rows[0] ?? null;
  }

  /**
   * Marks the version's export `processing` unless it is processing or ready already: true for
   * the one caller that did (parallel requests race on the row; exactly one wins).
   */
  async claim(versionId: string): Promise<boolean> {
    const rows = await this.em.query<unknown[]>(
      `INSERT INTO repository_exports (version_id, state) VALUES ($1, 'processing')
       ON CONFLICT (version_id) DO UPDATE
         SET state = 'processing', task_id = NULL, file_key = NULL, file_name = NULL, size = NULL,
             last_updated = NULL, error = NULL, requested_at = now(), finished_at = NULL
         WHERE repository_exports.state = 'failed'
       RETURNING version_id`,
      [versionId],
    );
    return rows.length === 1;
  }

  /**
   * What an export of the version starts from, read before any of its content: the version's
   * audience and the count of visibility narrowings so far.
   */
  async writingBasis(versionId: string): Promise<{ audience: Audience; narrowings: string }> {
    const rows = await this.em.query<Array<{ audience: Audience; narrowings: string }>>(
      `SELECT ${AUDIENCE_OF} AS audience,
              (SELECT n::text FROM visibility_narrowings WHERE id = 1) AS narrowings
       FROM repository_versions v
       JOIN repositories r ON r.id = v.repository_id
       LEFT JOIN organizations o ON o.id = r.owner_org_id
       WHERE v.id = $1`,
      [versionId],
    );
    if (!rows[0]) throw new Error(`No repository version ${versionId}`);
    return rows[0];
  }

  async setTask(versionId: string, taskId: string): Promise<void> {
    await this.em.query(
      `UPDATE repository_exports SET task_id = $2 WHERE version_id = $1 AND state = 'processing'`,
      [versionId, taskId],
    );
  }

  /** Publishes a written file; false when the export was deleted or failed meanwhile. */
  async markReady(
    versionId: string,
    taskId: string,
    file: { key: string; name: string; size: number; lastUpdated: Date },
    basis: { audience: Audience; narrowings: string },
  ): Promise<boolean> {
    const rows = await this.changed(
      `UPDATE repository_exports
       SET state = 'ready', file_key = $3, file_name = $4, size = $5, last_updated = $6,
           finished_at = now(), audience = $7, narrowings = $8
       WHERE version_id = $1 AND state = 'processing' AND task_id = $2
       RETURNING version_id`,
      [
        versionId,
        taskId,
        file.key,
        file.name,
        file.size,
        file.lastUpdated,
        basis.audience,
        basis.narrowings,
      ],
    );
    return rows.length === 1;
  }

  /** Records a processing export as failed (its task failed or its process died). */
  async markFailed(versionId: string, taskId: string | null, error: string): Promise<boolean> {
    const rows = await this.changed(
      `UPDATE repository_exports SET state = 'failed', error = $3, finished_at = now()
       WHERE version_id = $1 AND state = 'processing' AND task_id IS NOT DISTINCT FROM $2
       RETURNING version_id`,
      [versionId, taskId, error],
    );
    return rows.length === 1;
  }

  /** Removes a ready export's row; its file key, or null when there was no ready export. */
  async removeReady(versionId: string): Promise<string | null> {
    const rows = await this.changed<{ key: string }>(
      `DELETE FROM repository_exports WHERE version_id = $1 AND state = 'ready'
       RETURNING file_key AS key`,
      [versionId],
    );
    await this.em.query(`DELETE FROM export_downloads WHERE version_id = $1`, [versionId]);
    return rows[0]?.key ?? null;
  }

  /** Records a download address (by the hash of its token) valid until `expiresAt`. */
  async addDownload(tokenHash: string, row: DownloadRow, expiresAt: Date): Promise<void> {
    await this.em.query(
      `INSERT INTO export_downloads (token_hash, version_id, file_key, file_name, expires_at)
       VALUES ($1, $2, $3, $4, $5)`,
      [tokenHash, row.versionId, row.fileKey, row.fileName, expiresAt],
    );
    // Spent and expired addresses are of no further use.
    await this.em.query(`DELETE FROM export_downloads WHERE expires_at < now() - interval '1 day'`);
  }

  /**
   * Spends a download address: what it leads to, once; 'gone' when it was used or has expired,
   * or when its export no longer fits what it was written from; null when there is no such
   * address.
   */
  async useDownload(tokenHash: string): Promise<DownloadRow | 'gone' | null> {
    const used = await this.changed<DownloadRow>(
      `UPDATE export_downloads d SET used_at = now()
       WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
         AND EXISTS (SELECT 1 FROM repository_exports e ${REPOSITORY_OF_EXPORT}
                     WHERE e.version_id = d.version_id AND e.file_key = d.file_key
                       AND e.state = 'ready' AND ${FRESH})
       RETURNING version_id::text AS "versionId", file_key AS "fileKey", file_name AS "fileName"`,
      [tokenHash],
    );
    if (used[0]) return used[0];
    const known = await this.em.query<unknown[]>(
      `SELECT 1 FROM export_downloads WHERE token_hash = $1`,
      [tokenHash],
    );
    return known.length > 0 ? 'gone' : null;
  }
}
