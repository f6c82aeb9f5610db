import 'reflect-metadata';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createDataSource } from '../../src/db/data-source';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded-postgres';

declare global {
  var registryTestPostgres: { server?: EmbeddedPostgres; dir?: string } | undefined;
}

/**
 * One real Postgres for the whole run: `TEST_DATABASE_URL` when set, otherwise an embedded one in
 * a throwaway folder. Migrations run once here; tests then make their own tenants.
 */
export default async function globalSetup(): Promise<void> {
  // Names what this run shares between its test files (the e2e server build, shared-build.ts).
  process.env.TEST_RUN_ID = `${process.pid}-${Date.now()}`;
  let url = process.env.TEST_DATABASE_URL;
  if (!url) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-test-'));
    fs.chmodSync(dir, 0o755);
    const server = await startEmbeddedPostgres({
      dataDir: path.join(dir, 'pg'),
      // A throwaway cluster: durability buys nothing here.
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' },
    });
    const admin = new Client({ connectionString: server.url });
    await admin.connect();
    await admin.query('CREATE DATABASE registry_test');
    await admin.end();
    url = server.url.replace(/\/postgres$/, '/registry_test');
    globalThis.registryTestPostgres = { server, dir };
    process.env.TEST_DATABASE_URL = url;
  }
  const dataSource = createDataSource(url, { poolSize: 1, statementTimeoutMs: 0 });
  await dataSource.initialize();
  await dataSource.runMigrations({ transaction: 'each' });
  await dataSource.destroy();
}
