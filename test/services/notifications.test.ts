import { Client } from 'pg';
import { LISTEN_CONNECTION, Notifications } from '../../src/db/notifications';
import { createLogger } from '../../src/logger';

/**
 * `Notifications.settle` against the real database: it resolves once every listening connection
 * has handled what was committed before it, with parallel callers, and waits for a connection
 * that never answers only once.
 */
const url = (): string => process.env.TEST_DATABASE_URL!;
const log = createLogger('silent');
const CHANNEL = 'registry_test_settle';

const started: Notifications[] = [];
async function listening(onNotice?: (payload: string) => void): Promise<Notifications> {
  const notifications = new Notifications(url());
  if (onNotice) notifications.on(CHANNEL, onNotice);
  await notifications.start(log);
  await notifications.whenLive(10_000);
  started.push(notifications);
  return notifications;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((n) => n.stop()));
});

test('parallel settles of two processes each resolve after both have handled what came before', async () => {
  const heard: string[] = [];
  const a = await listening();
  const b = await listening((payload) => heard.push(payload));
  const writer = new Client({ connectionString: url() });
  await writer.connect();
  try {
    for (let round = 0; round < 5; round += 1) {
      await writer.query('SELECT pg_notify($1, $2)', [CHANNEL, String(round)]);
      // 20 callers at once, through either process: none hangs, and each finds b has heard.
      await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          await (i % 2 === 0 ? a : b).settle();
          expect(heard).toContain(String(round));
        }),
      );
    }
  } finally {
    await writer.end();
  }
  expect(heard).toEqual(['0', '1', '2', '3', '4']);
});

test('a listening connection that never answers is waited for once, then not', async () => {
  const a = await listening();
  // Looks like a process's listening connection, hears the questions, never answers.
  const mute = new Client({ connectionString: url(), application_name: LISTEN_CONNECTION });
  await mute.connect();
  try {
    await mute.query('LISTEN registry_settle');
    let started = Date.now();
    await a.settle();
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    started = Date.now();
    await Promise.all([a.settle(), a.settle(), a.settle()]);
    expect(Date.now() - started).toBeLessThan(1000);
  } finally {
    await mute.end();
  }
}, 20_000);
