import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres';

/** How the connection reached the server: a Unix socket has no client address. */
async function reachedBy(url: string): Promise<'socket' | 'tcp'> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ addr: string | null }>(
      'SELECT client_addr::text AS addr FROM pg_stat_activity WHERE pid = pg_backend_pid()',
    );
    return rows[0].addr === null ? 'socket' : 'tcp';
  } finally {
    await client.end();
  }
}

/** PostgreSQL's shared buffers, in MB. */
async function sharedBuffersMb(url: string): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ mb: number }>(
      `SELECT (setting::bigint * 8 / 1024)::int AS mb FROM pg_settings WHERE name = 'shared_buffers'`,
    );
    return rows[0].mb;
  } finally {
    await client.end();
  }
}

describe('the embedded PostgreSQL', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-socket-'));
  // Run as root, the server runs as the `postgres` user, who must reach the folder.
  fs.chmodSync(dir, 0o755);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is reached through the Unix socket in its data folder, or by TCP where that path is too long for a socket', async () => {
    const dataDir = path.join(dir, 'pg');
    const short = await startEmbeddedPostgres({ dataDir });
    try {
      expect(new URL(short.url).hostname).toBe(encodeURIComponent(dataDir));
      expect(await reachedBy(short.url)).toBe('socket');
      // Its page cache: a quarter of this machine's memory, from 128 MB to 2 GB.
      const quarter = Math.floor(os.totalmem() / 4 / 2 ** 20);
      expect(await sharedBuffersMb(short.url)).toBe(Math.min(Math.max(quarter, 128), 2048));
    } finally {
      await short.stop();
    }
    // The same cluster through a folder path longer than a socket address holds.
    const long = path.join(
      dir,
      'a-folder-name-long-enough-that-a-socket-in-it-would-not-fit-'.repeat(2),
    );
    fs.symlinkSync(dataDir, long);
    const tcp = await startEmbeddedPostgres({ dataDir: long });
    try {
      expect(new URL(tcp.url).hostname).toBe('127.0.0.1');
      expect(await reachedBy(tcp.url)).toBe('tcp');
    } finally {
      await tcp.stop();
    }
  });
});
