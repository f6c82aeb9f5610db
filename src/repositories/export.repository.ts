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
}

/** What a single-use download address leads to. */
export interface DownloadRow {
  versionId: string;
  fileKey: string;
  fileName: string;
}

const COLUMNS = `version_id::text AS "versionId", state, task_id::text AS "taskId",
  file_key AS "fileKey", file_name AS "fileName", size::float8 AS size,
  last_updated AS "lastUpdated", error, requested_at AS "requestedAt", finished_at AS "finishedAt"`;

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
      `SELECT ${COLUMNS} FROM repository_exports WHERE version_id = $1`,
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
  ): Promise<boolean> {
    const rows = await this.changed(
      `UPDATE repository_exports
       SET state = 'ready', file_key = $3, file_name = $4, size = $5, last_updated = $6,
           finished_at = now()
       WHERE version_id = $1 AND state = 'processing' AND task_id = $2
       RETURNING version_id`,
      [versionId, taskId, file.key, file.name, file.size, file.lastUpdated],
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
   * null when there is no such address.
   */
  async useDownload(tokenHash: string): Promise<DownloadRow | 'gone' | null> {
    const used = await this.changed<DownloadRow>(
      `UPDATE export_downloads SET used_at = now()
       WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
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
