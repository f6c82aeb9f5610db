import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Exports of repository versions (spec operations §3, §4.8): one row per version that has (or
 * is getting) an export file, and the single-use download addresses handed out in `exportURL`.
 * A row is `processing` while its task writes the file and `ready` once the file is published
 * under `file_key`; a failed task leaves it `failed` (no file), to be requested again.
 */
export class Exports1764710000000 implements MigrationInterface {
  name = 'Exports1764710000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE repository_exports (
        version_id bigint PRIMARY KEY REFERENCES repository_versions (id) ON DELETE CASCADE,
        state text NOT NULL CHECK (state IN ('processing', 'ready', 'failed')),
        task_id uuid,
        file_key text,
        file_name text,
        size bigint,
        last_updated timestamptz,
        error text,
        requested_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz
      )`);
    await q.query(`
      CREATE TABLE export_downloads (
        token_hash text PRIMARY KEY,
        version_id bigint NOT NULL REFERENCES repository_versions (id) ON DELETE CASCADE,
        file_key text NOT NULL,
        file_name text NOT NULL,
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      )`);
    await q.query(`CREATE INDEX export_downloads_expires ON export_downloads (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE export_downloads`);
    await q.query(`DROP TABLE repository_exports`);
  }
}
