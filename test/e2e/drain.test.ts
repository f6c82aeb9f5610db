import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import request from 'supertest';
import { createTestApp } from '../factories';
import { buildServer, sleep, startServer, stop } from './server-process';

/**
 * Issue 24 defect 2 and part 3: SIGTERM drains. Readiness turns 503 at once, the listener stops
 * accepting, requests in flight finish with their normal answers (their connections then close),
 * and only then do the tasks, the pool and the process stop (exit 0). Before, requests in flight
 * got 500 ("Cannot use a pool after calling end on the pool") or resets.
 */
let buildDir: string;
const children = new Set<ChildProcess>();

beforeAll(() => {
  buildDir = buildServer();
}, 180_000);

afterAll(async () => {
  for (const child of children) await stop(child);
});

/**
 * A request written in two parts over its own connection: the headers and half the body now,
 * the rest when `finish` is called; answers the raw response once the server closes the socket.
 */
function halfSent(
  port: number,
  body: string,
): { finish(): void; response: Promise<{ status: number; head: string; body: string }> } {
  const socket = net.connect(port, '127.0.0.1');
  const bytes = Buffer.from(body);
  const half = Math.floor(bytes.length / 2);
  socket.write(
    `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${bytes.length}\r\nConnection: keep-alive\r\n\r\n`,
  );
  socket.write(bytes.subarray(0, half));
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const response = new Promise<{ status: number; head: string; body: string }>(
    (resolve, reject) => {
      socket.once('error', reject);
      socket.once('close', () => {
        const text = Buffer.concat(chunks).toString();
        const [head, ...rest] = text.split('\r\n\r\n');
        resolve({ status: Number(head.split(' ')[1] ?? 0), head, body: rest.join('\r\n\r\n') });
      });
    },
  );
  return { finish: () => socket.write(bytes.subarray(half)), response };
}

it('SIGTERM lets requests in flight finish normally, then exits 0', async () => {
  const { child, port } = await startServer(buildDir, { DRAIN_SECONDS: '20' });
  children.add(child);
  const base = `http://127.0.0.1:${port}`;
  expect((await fetch(`${base}/readyz/`)).status).toBe(200);
  expect((await fetch(`${base}/livez/`)).status).toBe(200);
  const query = JSON.stringify({
    query: '{ orgs(limit: 5) { items { id sources(limit: 5) { items { id } } } } }',
  });
  const inFlight = Array.from({ length: 12 }, () => halfSent(port, query));
  await sleep(150);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await sleep(300);
  // Stopped accepting: a new connection is refused.
  const refused = await new Promise<string>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
  });
  expect(refused).toBe('ECONNREFUSED');
  for (const r of inFlight) r.finish();
  const answers = await Promise.all(inFlight.map((r) => r.response));
  for (const answer of answers) {
    expect(answer.status).toBe(200);
    expect(answer.head.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(answer.body)).toHaveProperty('data.orgs.items');
  }
  expect(await exited).toBe(0);
}, 60_000);

it('readiness answers 503 once draining, and every answer closes its connection', async () => {
  const t = await createTestApp();
  try {
    expect((await request(t.app).get('/readyz/')).status).toBe(200);
    t.drain();
    const draining = await request(t.app).get('/readyz/');
    expect(draining.status).toBe(503);
    expect(draining.body.message).toMatch(/stopping/);
    const served = await request(t.app).get('/version/');
    expect(served.status).toBe(200);
    expect(served.headers.connection).toBe('close');
    expect((await request(t.app).get('/livez/')).status).toBe(200);
  } finally {
    await t.close();
  }
});
