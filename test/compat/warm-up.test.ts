import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { WARM_UP_PATHS } from '../../src/app';
import { createTestApp, recordingLog } from '../factories';

/**
 * The start-up warm-up: once listening, a process sends itself a FHIR `$lookup` and a ValueSet
 * `$validate-code` (so that the first caller's request does not compile that path), and answers
 * `/readyz/` 503 until they are answered.
 */
async function listening(handler: http.RequestListener): Promise<http.Server> {
  const server = http.createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

const urlOf = (server: http.Server): string =>
  `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

it('sends the warm-up requests to the app, which answers each, and logs that it is warm', async () => {
  const { log, lines } = recordingLog('info');
  const t = await createTestApp({ LOG_LEVEL: 'info' }, { log });
  const server = await listening(t.app);
  try {
    await t.warmUp(urlOf(server));
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const answered = entries.filter((e) => e.msg === 'request completed');
    expect(answered.map((e) => (e.req as { url: string }).url)).toEqual(WARM_UP_PATHS);
    // No one stores the warm-up system: each is a FHIR not-found, answered, not failed.
    expect(answered.map((e) => (e.res as { statusCode: number }).statusCode)).toEqual([404, 404]);
    expect(answered.map((e) => (e.req as { id: string }).id)).toEqual(['warm-up', 'warm-up']);
    expect(entries.some((e) => e.msg === 'warmed up')).toBe(true);
    expect((await request(t.app).get('/readyz/')).status).toBe(200);
  } finally {
    server.close();
    await t.close();
  }
});

it('answers /readyz/ 503 while warming up, and 200 once the warm-up requests are answered', async () => {
  const t = await createTestApp();
  // Stands for the listener: holds the warm-up's first request until released.
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const seen: string[] = [];
  const slow = await listening((req, res) => {
    seen.push(req.url ?? '');
    void held.then(() => res.writeHead(404).end());
  });
  try {
    expect((await request(t.app).get('/readyz/')).status).toBe(200);
    const warming = t.warmUp(urlOf(slow));
    const during = await request(t.app).get('/readyz/');
    expect(during.status).toBe(503);
    expect(during.body.message).toMatch(/warming up/);
    release();
    await warming;
    expect(seen).toEqual(WARM_UP_PATHS);
    expect((await request(t.app).get('/readyz/')).status).toBe(200);
  } finally {
    slow.close();
    await t.close();
  }
});

it('does not count the warm-up against the anonymous limit of its address', async () => {
  const t = await createTestApp({
    RATE_LIMITS: 'on',
    RATE_LIMIT_ANON_PER_MINUTE: '1',
    RATE_LIMIT_ANON_PER_DAY: '1000',
  });
  const server = await listening(t.app);
  try {
    // Whatever earlier files' servers on this database counted against 127.0.0.1 this minute
    // (the e2e servers run with limits on) is forgotten first.
    await t.services.rateLimits.reset('ip:127.0.0.1', { name: 'minute', ms: 60_000 });
    await t.warmUp(urlOf(server));
    // The address's one request a minute is still there for its first real caller...
    expect((await fetch(`${urlOf(server)}/version/`)).status).toBe(200);
    // ...and the limit holds: the second is refused.
    expect((await fetch(`${urlOf(server)}/version/`)).status).toBe(429);
    // A warm-up header outside a warm-up (or with another secret) exempts nothing.
    const forged = await fetch(`${urlOf(server)}/version/`, {
      headers: { 'x-registry-warm-up': 'guess' },
    });
    expect(forged.status).toBe(429);
  } finally {
    server.close();
    await t.close();
  }
});

it('still becomes ready when the warm-up requests cannot be sent', async () => {
  const t = await createTestApp();
  const closed = await listening(() => undefined);
  const url = urlOf(closed);
  closed.close();
  await once(closed, 'close');
  try {
    await t.warmUp(url);
    expect((await request(t.app).get('/readyz/')).status).toBe(200);
  } finally {
    await t.close();
  }
});
