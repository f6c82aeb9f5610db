import type { DataSource } from 'typeorm';
import { createDataSource } from '../../src/db/data-source';
import { Repositories } from '../../src/repositories';

/**
 * Inside a transaction only the transaction's connection may be used (issue 9): asking the pool
 * for another while holding one is how parallel requests starved the pool and hung the service.
 */
let dataSource: DataSource;
let repos: Repositories;
beforeAll(async () => {
  dataSource = createDataSource(process.env.TEST_DATABASE_URL!, { poolSize: 2 });
  await dataSource.initialize();
  repos = Repositories.of(dataSource);
});
afterAll(async () => dataSource.destroy());

describe('a transaction uses its own connection only', () => {
  it('refuses at once a pool statement sent from inside a transaction', async () => {
    const started = Date.now();
    await expect(
      repos.transaction(async (r) => {
        await r.ping(); // the transaction's own connection: fine
        await repos.ping(); // the pool, while the transaction holds a connection: refused
      }),
    ).rejects.toThrow(/pool connection was requested inside an open transaction/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('refuses a second pool transaction opened from inside one', async () => {
    await expect(
      repos.transaction(async () => repos.transaction(async (inner) => inner.ping())),
    ).rejects.toThrow(/pool connection was requested inside an open transaction/);
  });

  it('lets nested work join the open transaction through its repositories', async () => {
    await expect(
      repos.transaction(async (r) => r.transaction(async (inner) => inner.ping())),
    ).resolves.toBeUndefined();
  });

  it('uses the pool again once the transaction has ended', async () => {
    let later: Promise<void> | undefined;
    await repos.transaction(async (r) => {
      await r.ping();
      // Started inside, run after the commit: outside the transaction by then.
      later = new Promise((resolve) => setTimeout(resolve, 50)).then(() => repos.ping());
    });
    await expect(later).resolves.toBeUndefined();
    await expect(repos.ping()).resolves.toBeUndefined();
  });

  it('keeps parallel transactions apart: each sees only its own scope', async () => {
    await expect(
      Promise.all([
        repos.transaction(async (r) => r.ping()),
        repos.ping(),
        repos.transaction(async (r) => r.ping()),
      ]),
    ).resolves.toHaveLength(3);
  });
});
