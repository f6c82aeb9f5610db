import 'reflect-metadata';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '@jest/types';
import { Client } from 'pg';
import { createDataSource } from '../../src/db/data-source';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded-postgres';

declare global {
  var registryTestPostgres: { server?: EmbeddedPostgres; dir?: string } | undefined;
}

/**
 * One real Postgres for the whole run: `TEST_DATABASE_URL` when set, otherwise an embedded one in
 * a throwaway folder. Migrations run once here; tests then make their own tenants. With more than
 * one Jest worker, each worker gets its own copy of the migrated database (`workerDatabases`).
 */
export default async function globalSetup(globalConfig: Config.GlobalConfig): Promise<void> {
  // Names what this run shares between its test files (the e2e server build, shared-build.ts).
  process.env.TEST_RUN_ID = `${process.pid}-${Date.now()}`;
  let url = process.env.TEST_DATABASE_URL;
  if (!url) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-test-'));
    fs.chmodSync(dir, 0o755);
    const server = await startEmbeddedPostgres({
      dataDir: path.join(dir, 'pg'),
      // A throwaway cluster: durability buys nothing here. Connections for up to four workers
      // at once, each with its apps' pools and, in e2e files, server processes of their own.
      settings: {
        fsync: 'off',
        synchronous_commit: 'off',
        full_page_writes: 'off',
        max_connections: '300',
      },
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
  if (globalConfig.maxWorkers > 1) await workerDatabases(url, globalConfig.maxWorkers);
}

/**
 * A fresh copy of the migrated database for each Jest worker, `<database>_w<id>` (the test
 * environment points each file at its worker's, test/setup/environment.ts). Files running side by
 * side then share nothing: not the task queue (one file's app would run another's tasks, into its
 * own export folder), not the rate-limit counters, not the notifications or advisory locks.
 */
async function workerDatabases(url: string, workers: number): Promise<void> {
  const template = new URL(url).pathname.slice(1);
  // Copied from elsewhere: a template may have no other connection while it is copied.
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const admin = new Client({ connectionString: maintenance.toString() });
  await admin.connect();
  try {
    for (let id = 1; id <= workers; id += 1) {
      await admin.query(`DROP DATABASE IF EXISTS "${template}_w${id}" WITH (FORCE)`);
      await admin.query(`CREATE DATABASE "${template}_w${id}" TEMPLATE "${template}"`);
    }
  } finally {
    await admin.end();
  }
  process.env.TEST_DATABASE_PER_WORKER = '1';
}
