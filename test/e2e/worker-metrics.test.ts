import request from 'supertest';
import { exportStatus, queuedExport, sleep, workerWorld } from './server-process';

/**
 * Issue 24 part 6: a worker process has no HTTP listener, so with `METRICS_PORT` it serves
 * `/metrics` on a listener of its own (behind `METRICS_TOKEN`), where the durations of the tasks
 * it ran can be scraped.
 */
const TOKEN = 'worker-metrics-token-0123456789';
const world = workerWorld('worker-metrics');

test("a worker's METRICS_PORT serves the durations of the tasks it ran, to the token only", async () => {
  const { app } = world;
  // Queued by the API process (it runs no tasks); the worker takes it.
  const source = await queuedExport(app);

  await world.start({ METRICS_TOKEN: TOKEN, METRICS_PORT: '0', HOST: '127.0.0.1' });
  const port = world.metricsPort();
  expect(port).toBeGreaterThan(0);
  const metrics = request(`http://127.0.0.1:${port}`);

  expect(await exportStatus(app, source)).toBe(200);
  // The task's duration is observed as its outcome is recorded, just before it logs its end.
  const ended = /"task":"repository-export".*"state":"SUCCESS".*"task ended"/;
  for (let i = 0; i < 50 && !ended.test(world.output()); i += 1) await sleep(100);
  expect(world.output()).toMatch(ended);

  const res = await metrics.get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toContain('text/plain');
  expect(res.text).toMatch(
    /^registry_task_duration_seconds_count\{kind="repository-export",state="SUCCESS"\} [1-9]/m,
  );
  // The worker's own pool and the queue it reads.
  expect(res.text).toMatch(/^registry_db_pool_connections\{state="total"\} [1-9]/m);
  expect(res.text).toMatch(/^registry_tasks\{state="SUCCESS"\} [1-9]/m);

  const anonymous = await metrics.get('/metrics');
  expect(anonymous.status).toBe(401);
  expect(anonymous.text).not.toContain('registry_');
  const wrong = await metrics.get('/metrics').set('Authorization', 'Bearer not-the-token');
  expect(wrong.status).toBe(401);
  expect(wrong.text).not.toContain('registry_');
  // Nothing but /metrics is served there.
  const other = await metrics.get('/orgs/').set('Authorization', `Bearer ${TOKEN}`);
  expect(other.status).toBe(404);

  await world.finish();
  // Closed with the rest on SIGTERM.
  await expect(metrics.get('/metrics').set('Authorization', `Bearer ${TOKEN}`)).rejects.toThrow();
}, 120_000);
