import crypto from 'node:crypto';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import request from 'supertest';
import type { Express } from 'express';
import { createApp } from '../../src/app';
import { loadConfig, type Config } from '../../src/config';
import { createDataSource } from '../../src/db/data-source';
import { LISTEN_CONNECTION } from '../../src/db/notifications';
import { createLogger, type Logger } from '../../src/logger';
import { ANONYMOUS, Services, type Mail, type Mailer } from '../../src/services';
import type { ServiceContext } from '../../src/services/shared/context';
import type { DataSource } from 'typeorm';
import { openApps } from './open-apps';

export const ADMIN_PASSWORD = 'test-admin-password';

/** Keeps the mails the service sends (SMTP is the only thing not run for real in tests). */
export class RecordingMailer implements Mailer {
  readonly sent: Mail[] = [];

  async send(mail: Mail): Promise<void> {
    this.sent.push(mail);
  }

  lastTo(address: string): Mail | undefined {
    return [...this.sent].reverse().find((m) => m.to === address);
  }
}

export interface TestApp {
  app: Express;
  services: Services;
  mailer: RecordingMailer;
  dataSource: DataSource;
  config: Config;
  /** `Authorization` header of the bootstrap superuser. */
  admin: string;
  /**
   * SQL statements sent so far by this app (reset it by assigning 0); while `texts` is an array,
   * each statement's text is added to it.
   */
  queries: { count: number; texts?: string[] };
  /** Serves subscriptions over WebSocket on `server`, the app's listener (`App.attachWebSocket`). */
  attachWebSocket(server: Server): void;
  /** What SIGTERM does to the app first (`App.drain`). */
  drain(): void;
  /** The start-up warm-up (`App.warmUp`), against this app listening at `baseUrl`. */
  warmUp(baseUrl: string): Promise<void>;
  close(): Promise<void>;
}

/** The real app on the test database, in-process; one per test file. */
export async function createTestApp(
  env: Record<string, string> = {},
  options: { mailer?: Mailer; log?: Logger } = {},
): Promise<TestApp> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set; the global setup did not run');
  // Limits off unless a test turns them on: the suite makes thousands of requests from one
  // address as a few users (test/compat/rate-limits.test.ts tests them).
  // Kept answers off too unless a test turns them on: tests write in SQL and through the services
  // and read over HTTP at once (test/compat/answer-cache.test.ts tests them).
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATABASE_URL: url,
    RATE_LIMITS: 'off',
    ANSWER_CACHE_MB: '0',
    ...env,
  });
  const log = options.log ?? createLogger(config.logLevel);
  const queries: TestApp['queries'] = { count: 0 };
  // A small pool unless a test sizes it: fewer connections make a connection-holding bug show.
  const dataSource = createDataSource(url, {
    ...config.database,
    poolSize: env.DB_POOL_SIZE ? config.database.poolSize : 4,
    onQuery: (sql) => {
      queries.count += 1;
      queries.texts?.push(sql);
    },
  });
  await dataSource.initialize();
  const mailer = new RecordingMailer();
  const services = new Services(dataSource, options.mailer ?? mailer, config.services);
  await services.ensureAdmin(ADMIN_PASSWORD);
  const built = await createApp(services, config, log);
  // Issued by the service rather than over HTTP, so that limits a test turns on see no set-up.
  const { token } = await services.auth.login(
    services.context(ANONYMOUS, log, 'http://localhost'),
    { username: 'ocladmin', password: ADMIN_PASSWORD },
  );
  const admin = `Token ${token}`;
  let closing: Promise<void> | undefined;
  const testApp: TestApp = {
    app: built.express,
    services,
    mailer,
    dataSource,
    config,
    admin,
    queries,
    attachWebSocket: (server) => built.attachWebSocket(server),
    drain: () => built.drain(),
    warmUp: (baseUrl) => built.warmUp(baseUrl),
    close: () =>
      (closing ??= (async () => {
        openApps.delete(testApp);
        await built.close();
        await dataSource.destroy();
      })()),
  };
  openApps.add(testApp);
  return testApp;
}

/** A logger at `level` whose lines (JSON, one per entry) are kept in `lines`. */
export function recordingLog(level: string): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { log: createLogger(level, sink), lines };
}

export function uniqueId(prefix: string): string {
  return `${prefix}-${crypto.randomBytes(5).toString('hex')}`;
}

export async function login(app: Express, username: string, password: string): Promise<string> {
  const res = await request(app).post('/users/login/').send({ username, password });
  if (res.status !== 200)
    throw new Error(`login of ${username} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { token: string }).token;
}

export interface TestUser {
  username: string;
  password: string;
  email: string;
  /** `Authorization` header value. */
  auth: string;
}

/** A fresh, verified user created by the administrator, logged in. */
export async function createUser(
  t: TestApp,
  fields: Record<string, unknown> = {},
): Promise<TestUser> {
  const username = (fields.username as string | undefined) ?? uniqueId('user');
  const password = 'password-' + crypto.randomBytes(4).toString('hex');
  const email = `${username}@example.org`;
  const res = await request(t.app)
    .post('/users/')
    .set('Authorization', t.admin)
    .send({ name: `Name of ${username}`, email, password, ...fields, username });
  if (res.status !== 201)
    throw new Error(`user create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { username, password, email, auth: `Token ${await login(t.app, username, password)}` };
}

/** A fresh org created by `owner` (who becomes its administrator). */
/** Approves `user` for `$match` (spec operations §5.1), as the bootstrap superuser. */
export async function approveForMatching(t: TestApp, user: TestUser): Promise<void> {
  const res = await request(t.app)
    .put(`/users/${user.username}/`)
    .set('Authorization', t.admin)
    .send({ match_approved: true });
  if (res.status !== 200)
    throw new Error(`match approval failed: ${res.status} ${JSON.stringify(res.body)}`);
}

export async function createOrg(
  t: TestApp,
  owner: TestUser,
  fields: Record<string, unknown> = {},
): Promise<{ id: string }> {
  const id = (fields.id as string | undefined) ?? uniqueId('org');
  const res = await request(t.app)
    .post('/orgs/')
    .set('Authorization', owner.auth)
    .send({ name: `Org ${id}`, ...fields, id });
  if (res.status !== 201)
    throw new Error(`org create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id };
}

export async function addMember(
  t: TestApp,
  orgId: string,
  by: TestUser,
  member: TestUser,
  role: 'admin' | 'member' = 'member',
): Promise<void> {
  const res = await request(t.app)
    .put(`/orgs/${orgId}/members/${member.username}/`)
    .set('Authorization', by.auth)
    .send({ role });
  if (res.status !== 204)
    throw new Error(`add member failed: ${res.status} ${JSON.stringify(res.body)}`);
}

/**
 * A service context for calling services directly, as `caller` would through an edge: a test
 * user, `'admin'` (the bootstrap superuser) or `'anonymous'`.
 */
export async function contextOf(
  t: TestApp,
  caller: TestUser | 'admin' | 'anonymous',
): Promise<ServiceContext> {
  const header = caller === 'anonymous' ? undefined : caller === 'admin' ? t.admin : caller.auth;
  const actor = header ? await t.services.auth.authenticate(header) : ANONYMOUS;
  return t.services.context(actor, createLogger('silent'), 'http://localhost');
}

/**
 * Waits until none of the user's background tasks is queued or running (a new version's export
 * runs in the background; a test that counts statements waits for it first).
 */
export async function tasksSettled(t: TestApp, username: string): Promise<void> {
  for (let i = 0; i < 300; i += 1) {
    const [{ n }] = await t.dataSource.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM tasks WHERE created_by = $1 AND state IN ('PENDING', 'STARTED')`,
      [username],
    );
    if (n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`tasks of ${username} still running`);
}

/** Waits until `condition` holds (polled every 20 ms); throws after `ms`, saying `what`. */
export async function until(
  condition: () => boolean | Promise<boolean>,
  ms = 10_000,
  what: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Ends every process's listening connection on `t`'s database (as a failover or a kill would). */
export async function dropListeningConnections(t: TestApp): Promise<void> {
  await t.dataSource.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
     WHERE application_name = $1 AND datname = current_database()`,
    [LISTEN_CONNECTION],
  );
}
