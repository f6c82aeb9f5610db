import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The process running a STARTED task, by the id its liveness connection carries in its
 * `application_name`: when that connection is gone, so is the process, and the task is failed at
 * once instead of after its heartbeat goes stale.
 */
export class TaskWorkers1764820000000 implements MigrationInterface {
  name = 'TaskWorkers1764820000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tasks ADD COLUMN worker text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tasks DROP COLUMN worker`);
  }
}
