import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { generateDictionary } from '../../bench/generate';
import { ABANDONED_AFTER_SECONDS } from '../../src/jobs/job-queue';
import { binary, unzip } from '../factories/zip';
import { sleep, workerWorld } from './server-process';

/**
 * A server process killed (SIGKILL) while its background task writes an export (issue 13 part 4):
 * no half-written file is ever served, the task reads FAILURE within seconds, and the export can be asked for again and completes.
 */
const world = workerWorld('export-kill');

test('a killed export leaves no file served as ready; it fails and runs again', async () => {
  const org = `KILL${crypto.randomBytes(3).toString('hex')}`;
  await generateDictionary(process.env.TEST_DATABASE_URL!, {
    org,
    concepts: 6000,
    otherConcepts: 0,
    sources: 1,
    mappings: 30_000,
    username: 'ocladmin',
  });
  const source = `/orgs/${org}/sources/CIEL/`;
  // Queued here (no workers in this process); the child takes it.
  const made = await request(world.app.app)
    .post(`${source}versions/`)
    .set('Authorization', world.app.admin)
    .send({ id: 'v1' });
  expect(made.status).toBe(201);
  await world.start();

  // Kill the writer as soon as it has started writing (its partial file exists).
  const folder = path.join(world.dataDir, 'exports');
  const filesEnding = (suffix: string): string[] =>
    fs.existsSync(folder)
      ? fs
          .readdirSync(folder, { recursive: true })
          .map(String)
          .filter((f) => f.endsWith(suffix))
      : [];
  const partial = (): string[] => filesEnding('.partial');
  const zips = (): string[] => filesEnding('.zip');
  for (let i = 0; i < 3000 && partial().length === 0; i += 1) await sleep(5);
  expect(partial()).toHaveLength(1);
  await world.kill();

  // Nothing served, ever; the killed worker's task reads FAILURE within seconds (its liveness
  // connection closed with it), not after its heartbeat goes stale.
  expect(zips()).toEqual([]);
  const [{ taskId }] = await world.app.dataSource.query<Array<{ taskId: string }>>(
    `SELECT e.task_id::text AS "taskId" FROM repository_exports e
     JOIN repository_versions v ON v.id = e.version_id
     JOIN repositories r ON r.id = v.repository_id
     JOIN organizations o ON o.id = r.owner_org_id
     WHERE o.mnemonic = $1 AND v.mnemonic = 'v1'`,
    [org],
  );
  // Within seconds on a quiet machine; the bound is wide for a loaded one, and still well under
  // the heartbeat's minute, so that only the liveness connection can pass it.
  const deadline = Date.now() + (ABANDONED_AFTER_SECONDS * 1000) / 2;
  let after = await request(world.app.app).get(`${source}v1/export/`);
  while (after.status === 208 && Date.now() < deadline) {
    await sleep(100);
    after = await request(world.app.app).get(`${source}v1/export/`);
  }
  if (after.status !== 204) {
    // What the readers saw, should this ever fail again: the task's row and the workers' sessions.
    const seen = await world.app.dataSource.query<unknown[]>(
      `SELECT t.state, t.worker, t.heartbeat_at, now() AS now,
         (SELECT array_agg(a.application_name || ' ' || a.state) FROM pg_stat_activity a
          WHERE a.application_name LIKE 'registry-%') AS sessions
       FROM tasks t WHERE t.id = $1`,
      [taskId],
    );
    throw new Error(
      `export still ${after.status}: ${JSON.stringify(seen)}\n${world.output().slice(-3000)}`,
    );
  }
  const task = await request(world.app.app)
    .get(`/tasks/${taskId}/`)
    .set('Authorization', world.app.admin);
  expect(task.body).toMatchObject({ state: 'FAILURE' });

  // Asked again, a worker writes it whole.
  const again = await request(world.app.app)
    .post(`${source}v1/export/`)
    .set('Authorization', world.app.admin);
  expect(again.status).toBe(202);
  await world.start();
  let file: request.Response | undefined;
  for (let i = 0; i < 600; i += 1) {
    file = await request(world.app.app).get(`${source}v1/export/`).buffer(true).parse(binary);
    if (file.status !== 208) break;
    await sleep(100);
  }
  expect(file!.status).toBe(200);
  const exported = JSON.parse((await unzip(file!.body as Buffer))['export.json']) as {
    concepts: unknown[];
  };
  expect(exported.concepts.length).toBeGreaterThan(5000);
  expect(partial()).toEqual([]);
  await world.finish();
}, 240_000);
