import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import request from 'supertest';
import { createTestApp, type TestApp } from '../factories';
import { createConcept, createSource } from '../factories/content';
import { binary, unzip } from '../factories/zip';
import { buildServer, sleep, startServer, stop } from './server-process';

/**
 * Export files shared by server processes (issue 24 part 5): two real processes on one database,
 * as behind a load balancer. Process A runs the export task and writes the file; process B serves
 * it, and A's single-use exportURL is honoured by B (and then refused by A). Both storages are
 * checked: S3-compatible (s3rver, as in test/compat/export-s3.test.ts) and local files in one
 * DATA_DIR both processes mount.
 */
const BUCKET = 'shared-exports';
let buildDir: string;
let setup: TestApp;
let s3: S3rver;
let s3Folder: string;
let s3Endpoint: string;
let dataDir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  buildDir = buildServer();
  s3Folder = fs.mkdtempSync(path.join(os.tmpdir(), 's3rver-shared-'));
  s3 = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: s3Folder,
    configureBuckets: [{ name: BUCKET }],
  });
  s3Endpoint = `http://127.0.0.1:${(await s3.run()).port}`;
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shared-exports-'));
  // Creates users and content only; it runs no tasks.
  setup = await createTestApp({ JOBS_WORKERS: '0' });
}, 240_000);

afterAll(async () => {
  await Promise.all(children.map((child) => stop(child)));
  await setup?.close();
  await s3?.close();
  for (const folder of [s3Folder, dataDir]) {
    if (folder) fs.rmSync(folder, { recursive: true, force: true });
  }
});

const STORAGES: Array<[string, () => Record<string, string>]> = [
  [
    'S3-compatible storage',
    () => ({
      EXPORT_STORAGE: 's3',
      EXPORT_S3_BUCKET: BUCKET,
      EXPORT_S3_ENDPOINT: s3Endpoint,
      EXPORT_S3_FORCE_PATH_STYLE: 'true',
      // s3rver's fixed credentials, read by the SDK's default chain as in production.
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'own-data-')),
    }),
  ],
  ['local files in a shared DATA_DIR', () => ({ EXPORT_STORAGE: 'local', DATA_DIR: dataDir })],
];

async function exported(base: string, url: string, auth: string): Promise<request.Response> {
  for (let i = 0; i < 300; i += 1) {
    const res = await request(base).get(url).set('Authorization', auth).buffer(true).parse(binary);
    if (res.status !== 208) return res;
    await sleep(100);
  }
  throw new Error(`${url} still processing on ${base}`);
}

describe.each(STORAGES)('%s', (_name, storage) => {
  it("serves on process B the export process A wrote, and A's single-use exportURL", async () => {
    const env = storage();
    const a = await startServer(buildDir, { ...env, JOBS_WORKERS: '1' });
    children.push(a.child);
    const b = await startServer(buildDir, { ...env, JOBS_WORKERS: '0' });
    children.push(b.child);
    const onA = `http://127.0.0.1:${a.port}`;
    const onB = `http://127.0.0.1:${b.port}`;

    const source = await createSource(setup, { id: `SX${crypto.randomBytes(3).toString('hex')}` });
    for (const id of ['A', 'B']) await createConcept(setup, source.url, source.owner, { id });
    // Asked of A, which alone runs tasks: A writes the file.
    const asked = await request(onA)
      .post(`${source.url}versions/`)
      .set('Authorization', source.owner.auth)
      .send({ id: 'v1', released: true });
    expect(asked.status).toBe(201);
    const exportPath = `${source.url}v1/export/`;
    const fromA = await exported(onA, exportPath, source.owner.auth);
    expect(fromA.status).toBe(200);
    const concepts = JSON.parse((await unzip(fromA.body as Buffer))['export.json']) as {
      concepts: Array<{ id: string }>;
    };
    expect(concepts.concepts.map((c) => c.id)).toEqual(['A', 'B']);

    // B serves the same bytes.
    const fromB = await exported(onB, exportPath, source.owner.auth);
    expect(fromB.status).toBe(200);
    expect(Buffer.compare(fromB.body as Buffer, fromA.body as Buffer)).toBe(0);

    // The exportURL A handed out works once on B, and is then spent on A too.
    const address = new URL(String(fromA.headers.exporturl)).pathname;
    const once = await request(onB).get(address).buffer(true).parse(binary);
    expect(once.status).toBe(200);
    expect(Buffer.compare(once.body as Buffer, fromA.body as Buffer)).toBe(0);
    expect((await request(onA).get(address)).status).toBe(410);

    await Promise.all([stop(a.child, 'SIGTERM'), stop(b.child, 'SIGTERM')]);
  }, 240_000);
});
