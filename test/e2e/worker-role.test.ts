import request from 'supertest';
import { exportStatus, queuedExport, workerWorld } from './server-process';

/**
 * Issue 24 part 4: process roles. An API process (`JOBS_WORKERS=0`) queues a task; a worker
 * process (`PROCESS_ROLE=worker`: no HTTP listener) runs it, logging its start and end; the API
 * shows its progress and outcome.
 */
const world = workerWorld('worker-role');

test('a task queued by an API process is run by a worker process', async () => {
  const { app } = world;
  // Queued by the API process (it runs no tasks); the worker takes it.
  const source = await queuedExport(app);

  await world.start();
  expect(await exportStatus(app, source)).toBe(200);

  const tasks = await request(app.app).get('/tasks/').set('Authorization', source.owner.auth);
  expect(tasks.status).toBe(200);
  const exportTask = (tasks.body as Array<{ task: string; state: string }>).find(
    (task) => task.task === 'repository-export',
  );
  expect(exportTask?.state).toBe('SUCCESS');

  const output = world.output();
  expect(output).toContain('"msg":"task started"');
  expect(output).toMatch(/"state":"SUCCESS".*"msg":"task ended"/);
  expect(output).not.toContain('"msg":"listening"');
  await world.finish();
}, 120_000);
