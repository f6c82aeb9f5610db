import type { EntityManager } from 'typeorm';

export type ImportFormat = 'jsonl' | 'csv';

export interface NewBulkImport {
  queue: string;
  format: ImportFormat;
  updateIfExists: boolean;
  content: string;
  createdBy: string;
}

export interface BulkImportRecord {
  id: string;
  taskId: string | null;
  queue: string;
  format: ImportFormat;
  updateIfExists: boolean;
  cancelledBy: string | null;
  report: unknown;
  createdBy: string;
}

interface Raw {
  id: string;
  task_id: string | null;
  queue: string;
  format: ImportFormat;
  update_if_exists: boolean;
  cancelled_by: string | null;
  report: unknown;
  created_by: string;
}

const COLUMNS = `id, task_id, queue, format, update_if_exists, cancelled_by, report, created_by`;

/** Bulk imports: their files, running reports and cancel flags. */
export class BulkImportRepository {
  constructor(private readonly em: EntityManager) {}

  async insert(values: NewBulkImport): Promise<string> {
    const rows = await this.em.query<Array<{ id: string }>>(
      `INSERT INTO bulk_imports (queue, format, update_if_exists, content, created_by)
       VALUES ($1, $2, $3, $4, $5) RETURNING id`,
      [values.queue, values.format, values.updateIfExists, values.content, values.createdBy],
    );
    return rows[0].id;
  }

  async setTask(id: string, taskId: string): Promise<void> {
    await this.em.query(`UPDATE bulk_imports SET task_id = $2 WHERE id = $1`, [id, taskId]);
  }

  async find(id: string): Promise<BulkImportRecord | null> {
    const rows = await this.em.query<Raw[]>(`SELECT ${COLUMNS} FROM bulk_imports WHERE id = $1`, [
      id,
    ]);
    return rows[0] ? recordOf(rows[0]) : null;
  }

  async findByTask(taskId: string): Promise<BulkImportRecord | null> {
    if (!/^[0-9a-f-]{36}$/i.test(taskId)) return null;
    const rows = await this.em.query<Raw[]>(
      `SELECT ${COLUMNS} FROM bulk_imports WHERE task_id = $1`,
      [taskId],
    );
    return rows[0] ? recordOf(rows[0]) : null;
  }

  /** The uploaded file; null once the import has ended. */
  async content(id: string): Promise<string | null> {
    const rows = await this.em.query<Array<{ content: string | null }>>(
      `SELECT content FROM bulk_imports WHERE id = $1`,
      [id],
    );
    return rows[0]?.content ?? null;
  }

  async saveReport(id: string, report: unknown, dropContent = false): Promise<void> {
    await this.em.query(
      `UPDATE bulk_imports SET report = $2::jsonb${dropContent ? ', content = NULL' : ''} WHERE id = $1`,
      [id, JSON.stringify(report)],
    );
  }

  async cancel(id: string, by: string): Promise<void> {
    await this.em.query(
      `UPDATE bulk_imports SET cancelled_by = coalesce(cancelled_by, $2) WHERE id = $1`,
      [id, by],
    );
  }

  /**
   * Fresh planner statistics of the tables of concepts or of mappings. An import grows them
   * faster than autovacuum looks (once a minute): on the statistics of a nearly empty table,
   * the lookups of each batch (current versions by id, mappings by ends) plan as scans of the
   * whole source, and an import gets slower with every batch. Only the columns those lookups
   * read (a column list also spares the statistics of expression indexes, the costly part).
   */
  async analyzeContent(kind: 'Concept' | 'Mapping'): Promise<void> {
    await this.em.query(
      kind === 'Concept'
        ? `ANALYZE concepts (repository_id, mnemonic),
             concept_versions (repository_id, mnemonic, valid_to_seq)`
        : `ANALYZE mapping_versions (repository_id, mnemonic, valid_to_seq, retired, map_type,
             from_concept_code, to_concept_code)`,
    );
  }

  /**
   * Lets this transaction's inserts leave their terms in the GIN indexes' pending lists (trigram
   * and word search, names, parents) up to 64 MB instead of PostgreSQL's 4 MB: a batch then seldom
   * merges the list into the index itself, in its transaction; autovacuum, which the growing
   * tables wake every minute, mostly does it beside the import.
   */
  async deferSearchIndexing(): Promise<void> {
    await this.em.query(`SET LOCAL gin_pending_list_limit = '64MB'`);
  }

  /**
   * Drops what imports that will not run again still hold: the file of one whose task has ended
   * (a killed process's import keeps its file until the queue's sweep records its task FAILURE),
   * and the whole record of one whose task is gone (finished tasks are deleted after
   * `TASKS_KEEP_DAYS`). How many files and records it dropped.
   */
  async pruneEnded(): Promise<{ files: number; records: number }> {
    const [row] = await this.em.query<Array<{ files: number; records: number }>>(
      `WITH files AS (
         UPDATE bulk_imports b SET content = NULL
         WHERE b.content IS NOT NULL AND EXISTS (SELECT 1 FROM tasks t
           WHERE t.id = b.task_id AND t.state IN ('SUCCESS', 'FAILURE'))
         RETURNING 1),
       records AS (
         DELETE FROM bulk_imports b
         WHERE b.task_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = b.task_id)
         RETURNING 1)
       SELECT (SELECT count(*) FROM files)::int AS files,
         (SELECT count(*) FROM records)::int AS records`,
    );
    return row;
  }

  async cancelledBy(id: string): Promise<string | null> {
    const rows = await this.em.query<Array<{ cancelled_by: string | null }>>(
      `SELECT cancelled_by FROM bulk_imports WHERE id = $1`,
      [id],
    );
    return rows[0]?.cancelled_by ?? null;
  }

  /**
   * The caller's imports in one queue not yet ended: their file still held and their task (none
   * yet while it is being queued) pending or running — not one that failed because its process
   * was killed (it keeps its file, and must not hold the queue for ever).
   */
  async activeInQueue(queue: string, createdBy: string): Promise<number> {
    const rows = await this.em.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM bulk_imports b
       WHERE b.queue = $1 AND b.created_by = $2 AND b.content IS NOT NULL
         AND b.cancelled_by IS NULL
         AND (b.task_id IS NULL OR EXISTS (SELECT 1 FROM tasks t
               WHERE t.id = b.task_id AND t.state IN ('PENDING', 'STARTED')))`,
      [queue, createdBy],
    );
    return rows[0].n;
  }
}

function recordOf(raw: Raw): BulkImportRecord {
  return {
    id: raw.id,
    taskId: raw.task_id,
    queue: raw.queue,
    format: raw.format,
    updateIfExists: raw.update_if_exists,
    cancelledBy: raw.cancelled_by,
    report: raw.report,
    createdBy: raw.created_by,
  };
}
