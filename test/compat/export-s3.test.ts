import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import request from 'supertest';
import { S3ExportStorage } from '../../src/services/transfer/export-storage';
import { createTestApp, type TestApp } from '../factories';
import { createConcept, createSource, createVersion } from '../factories/content';
import { binary, unzip } from '../factories/zip';

/**
 * The S3 export storage (`EXPORT_STORAGE=s3`, AWS SDK v3) against an S3-compatible server started
 * here (s3rver, on a free port, over a temporary folder): a version's export is written to the
 * bucket, served by GET and by the single-use exportURL, deleted from the bucket; a file is never
 * visible in the bucket before its upload completes, and an abandoned or discarded upload leaves
 * nothing.
 */
const BUCKET = 'registry-exports';
const PREFIX = 'test-exports/';
let server: S3rver;
let folder: string;
let endpoint: string;
let t: TestApp;
let s3: S3Client;
const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };

beforeAll(async () => {
  folder = fs.mkdtempSync(path.join(os.tmpdir(), 's3rver-'));
  server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: folder,
    configureBuckets: [{ name: BUCKET }],
  });
  const { port } = await server.run();
  endpoint = `http://127.0.0.1:${port}`;
  // s3rver's fixed credentials, read by the SDK's default chain as in production.
  process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
  t = await createTestApp({
    EXPORT_STORAGE: 's3',
    EXPORT_S3_BUCKET: BUCKET,
    EXPORT_S3_PREFIX: PREFIX,
    EXPORT_S3_ENDPOINT: endpoint,
    EXPORT_S3_FORCE_PATH_STYLE: 'true',
    EXPORT_URL_TTL_SECONDS: '60',
  });
  s3 = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true });
});

afterAll(async () => {
  await t?.close();
  s3?.destroy();
  await server?.close();
  fs.rmSync(folder, { recursive: true, force: true });
  process.env.AWS_ACCESS_KEY_ID = saved.id;
  process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
});

/** The keys in the bucket under a prefix. */
async function keys(prefix = PREFIX): Promise<string[]> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  return (listed.Contents ?? []).map((o) => o.Key!);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function settled(url: string, auth: string): Promise<request.Response> {
  for (let i = 0; i < 150; i += 1) {
    const res = await request(t.app).get(url).set('Authorization', auth).buffer(true).parse(binary);
    if (res.status !== 208) return res;
    await sleep(100);
  }
  throw new Error(`${url} still processing`);
}

test('a version is exported to the bucket, served by GET and exportURL once, and deleted', async () => {
  const source = await createSource(t, { id: `S3${crypto.randomBytes(3).toString('hex')}` });
  for (const id of ['A', 'B', 'C']) await createConcept(t, source.url, source.owner, { id });
  const before = await keys();
  await createVersion(t, source.url, source.owner, 'v1', { released: true });
  const exportUrl = `${source.url}v1/export/`;

  const file = await settled(exportUrl, source.owner.auth);
  expect(file.status).toBe(200);
  expect(file.headers['content-type']).toBe('application/zip');
  const exported = JSON.parse((await unzip(file.body as Buffer))['export.json']) as {
    concepts: Array<{ id: string }>;
  };
  expect(exported.concepts.map((c) => c.id)).toEqual(['A', 'B', 'C']);
  // It is in the bucket, under the prefix, and nothing else was added.
  const added = (await keys()).filter((k) => !before.includes(k));
  expect(added).toHaveLength(1);
  expect(added[0]).toMatch(new RegExp(`^${PREFIX}\\d+/\\d+\\.zip$`));
  expect(Number(file.headers['content-length'])).toBe((file.body as Buffer).length);

  // The single-use address serves the same bytes once.
  const address = new URL(String(file.headers.exporturl)).pathname;
  const once = await request(t.app).get(address).buffer(true).parse(binary);
  expect(once.status).toBe(200);
  expect(Buffer.compare(once.body as Buffer, file.body as Buffer)).toBe(0);
  expect((await request(t.app).get(address)).status).toBe(410);

  // Deleted: gone from the bucket; GET answers 204.
  const deleted = await request(t.app).delete(exportUrl).set('Authorization', t.admin);
  expect(deleted.status).toBe(204);
  expect(await keys()).toEqual(before);
  expect((await request(t.app).get(exportUrl).set('Authorization', source.owner.auth)).status).toBe(
    204,
  );

  // Written again on POST, into the bucket again.
  const again = await request(t.app).post(exportUrl).set('Authorization', source.owner.auth);
  expect(again.status).toBe(202);
  expect((await settled(exportUrl, source.owner.auth)).status).toBe(200);
  expect((await keys()).filter((k) => !before.includes(k))).toEqual(added);
});

test('an upload the storage refuses fails its export: nothing is served, it can be asked again', async () => {
  const broken = await createTestApp({
    EXPORT_STORAGE: 's3',
    EXPORT_S3_BUCKET: 'no-such-bucket',
    EXPORT_S3_ENDPOINT: endpoint,
    EXPORT_S3_FORCE_PATH_STYLE: 'true',
  });
  try {
    const source = await createSource(broken, { id: `S3${crypto.randomBytes(3).toString('hex')}` });
    await createConcept(broken, source.url, source.owner, { id: 'A' });
    await createVersion(broken, source.url, source.owner, 'v1');
    const url = `${source.url}v1/export/`;
    let res: request.Response | undefined;
    for (let i = 0; i < 150; i += 1) {
      res = await request(broken.app).get(url).set('Authorization', source.owner.auth);
      if (res.status !== 208) break;
      await sleep(100);
    }
    expect(res!.status).toBe(204);
    const [task] = await broken.dataSource.query<Array<{ state: string }>>(
      `SELECT t.state FROM repository_exports e JOIN tasks t ON t.id = e.task_id
       JOIN repository_versions v ON v.id = e.version_id JOIN repositories r ON r.id = v.repository_id
       WHERE r.mnemonic = $1`,
      [source.id],
    );
    expect(task).toEqual({ state: 'FAILURE' });
    const again = await request(broken.app).post(url).set('Authorization', source.owner.auth);
    expect(again.status).toBe(202);
  } finally {
    await broken.close();
  }
});

describe('an upload that does not complete', () => {
  const storage = () =>
    new S3ExportStorage({
      kind: 's3',
      bucket: BUCKET,
      prefix: 'direct/',
      region: 'us-east-1',
      endpoint,
      forcePathStyle: true,
    });
  /** More than one 8 MB part, so that parts reach the server before the end. */
  const big = crypto.randomBytes(9 * 1024 * 1024);

  test('is not visible while it is written, nor once abandoned (a killed writer)', async () => {
    const pending = await storage().create('1/abandoned.zip');
    pending.stream.write(big);
    await sleep(500);
    expect(pending.size).toBe(big.length);
    expect(await storage().open('1/abandoned.zip')).toBeNull();
    expect(await keys('direct/')).toEqual([]);
    // Never published: the writer is gone; still nothing there.
    pending.stream.destroy();
    await sleep(200);
    expect(await storage().open('1/abandoned.zip')).toBeNull();
  });

  test('leaves nothing once discarded; a published one is whole', async () => {
    const store = storage();
    const discarded = await store.create('1/discarded.zip');
    discarded.stream.write(big);
    await sleep(500);
    await discarded.discard();
    expect(await store.open('1/discarded.zip')).toBeNull();
    expect(await keys('direct/')).toEqual([]);

    const published = await store.create('1/published.zip');
    published.stream.write(big);
    await published.publish();
    const stream = await store.open('1/published.zip');
    const chunks: Buffer[] = [];
    for await (const chunk of stream!) chunks.push(chunk as Buffer);
    expect(Buffer.compare(Buffer.concat(chunks), big)).toBe(0);
    expect(await keys('direct/')).toEqual(['direct/1/published.zip']);
    await store.remove('1/published.zip');
    expect(await keys('direct/')).toEqual([]);
  });
});
