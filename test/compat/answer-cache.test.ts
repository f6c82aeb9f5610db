import request from 'supertest';
import { NOT_CONTENT_TABLES } from '../../src/db/migrations/1765500000000-content-notifications';
import {
  addMember,
  createOrg,
  createTestApp,
  dropListeningConnections,
  until,
  createUser,
  uniqueId,
  type TestApp,
  type TestUser,
} from '../factories';
import { createConcept, createRepo } from '../factories/content';

/**
 * Kept GET answers (compat/http/answer-cache.ts, issue 27 part 4): asked again, a detail costs no
 * statement and no rendering, `If-None-Match` is a 304 at once, and no answer outlives a change
 * or reaches a caller it was not rendered for. Two apps on one database stand for two processes.
 */
let a: TestApp;
let b: TestApp;
let owner: TestUser;
let org: string;
let source: string;
const SYSTEM = `http://example.org/fhir/CodeSystem/${uniqueId('kept')}`;

beforeAll(async () => {
  a = await createTestApp({ ANSWER_CACHE_MB: '16' });
  b = await createTestApp({ ANSWER_CACHE_MB: '16' });
  owner = await createUser(a);
  org = (await createOrg(a, owner)).id;
  source = (await createRepo(a, `/orgs/${org}`, owner, { canonical_url: SYSTEM })).url;
}, 60_000);
afterAll(async () => {
  await a.close();
  await b.close();
});

interface Asked {
  status: number;
  statements: number;
  body: Record<string, unknown>;
  etag?: string;
  text: string;
}

async function get(
  t: TestApp,
  path: string,
  headers: Record<string, string> = {},
  method: 'get' | 'head' = 'get',
  /** First hear every change committed so far (else an earlier write's notification may land mid-read). */
  settled = true,
): Promise<Asked> {
  if (settled) await t.services.notifications.settle();
  t.queries.count = 0;
  // One host, as behind a real listener (supertest listens on a new port for each request).
  const req = request(t.app)[method](path).set('Host', 'registry.test');
  for (const [name, value] of Object.entries(headers)) req.set(name, value);
  const res = await req;
  return {
    status: res.status,
    statements: t.queries.count,
    body: res.body,
    etag: res.headers.etag,
    text: res.text,
  };
}

async function concept(fields: Record<string, unknown> = {}): Promise<string> {
  const id = uniqueId('C');
  await createConcept(a, source, owner, { id, ...fields });
  return `${source}concepts/${id}/`;
}

const edit = (t: TestApp, url: string, name: string) =>
  request(t.app)
    .post(url)
    .set('Authorization', owner.auth)
    .send({ names: [{ name, locale: 'en', locale_preferred: true }], update_comment: 'edit' })
    .expect(200);

/**
 * Runs `fn` with the content triggers off: only what a process does itself can then keep its
 * kept answers right (the notifications otherwise arrive too fast for a test to tell).
 */
async function withoutNotifications(fn: () => Promise<void>): Promise<void> {
  const tables = await a.dataSource.query<Array<{ name: string }>>(
    `SELECT c.relname AS name FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
     WHERE g.tgname = c.relname || '_content_change'`,
  );
  const toggle = (how: string) =>
    Promise.all(
      tables.map(({ name }) =>
        a.dataSource.query(`ALTER TABLE ${name} ${how} TRIGGER ${name}_content_change`),
      ),
    );
  await toggle('DISABLE');
  try {
    await fn();
  } finally {
    await toggle('ENABLE');
  }
}

describe('kept answers', () => {
  it('every table an answer may be read from announces its changes', async () => {
    const rows = await a.dataSource.query<Array<{ tablename: string }>>(
      `SELECT t.tablename FROM pg_tables t
       WHERE t.schemaname = 'public' AND NOT (t.tablename = ANY($1)) AND NOT EXISTS (
         SELECT 1 FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
         WHERE c.relname = t.tablename AND g.tgname = t.tablename || '_content_change')`,
      [NOT_CONTENT_TABLES],
    );
    expect(rows.map((row) => row.tablename)).toEqual([]);
  });

  it('a detail asked again costs no statement and answers the same bytes and headers', async () => {
    const url = await concept();
    const first = await get(a, url);
    expect(first.status).toBe(200);
    expect(first.statements).toBeGreaterThan(0);
    const again = await get(a, url);
    expect(again).toEqual({ ...first, statements: 0 });
    // HEAD: the same headers, no body, still no statement.
    const head = await get(a, url, {}, 'head');
    expect(head.statements).toBe(0);
    expect(head.status).toBe(200);
    expect(head.text ?? '').toBe('');
  });

  it('If-None-Match with the ETag is a 304 without a statement; a stale ETag gets the new answer', async () => {
    const url = await concept();
    const { etag } = await get(a, url);
    expect(etag).toBeDefined();
    const notModified = await get(a, url, { 'If-None-Match': etag! });
    expect(notModified.status).toBe(304);
    expect(notModified.statements).toBe(0);
    expect(notModified.text).toBe('');
    await edit(a, url, 'Renamed for the ETag');
    const changed = await get(a, url, { 'If-None-Match': etag! });
    expect(changed.status).toBe(200);
    expect(changed.body.display_name).toBe('Renamed for the ETag');
    expect(changed.etag).not.toBe(etag);
  });

  it('a conditional GET that misses is rendered, kept and answered 304; a sign-in keeps what was kept', async () => {
    const url = await concept();
    const { etag } = await get(a, url, { 'Cache-Control': 'no-cache' });
    // Nothing kept for it yet (asked with no-cache): the first conditional GET renders...
    const first = await get(a, `${url}?kept=1`, { 'If-None-Match': '"other"' });
    expect(first.status).toBe(200);
    const conditional = await get(a, `${url}?kept=2`, { 'If-None-Match': etag! });
    expect(conditional.status).toBe(304);
    expect(conditional.statements).toBeGreaterThan(0);
    expect(conditional.text).toBe('');
    // ...and what it rendered was kept: the next one is answered from it.
    await request(a.app)
      .post('/users/login/')
      .send({ username: owner.username, password: owner.password })
      .expect(200);
    const again = await get(a, `${url}?kept=2`, { 'If-None-Match': etag! });
    expect(again.status).toBe(304);
    expect(again.statements).toBe(0);
    expect(again.etag).toBe(etag);
  });

  it('a write through this process is read back at once (read your writes)', async () => {
    const url = await concept();
    const list = `${source}concepts/?limit=100`;
    await get(a, url);
    await get(a, list);
    expect((await get(a, url)).statements).toBe(0);
    let after: Asked | undefined;
    await withoutNotifications(async () => {
      await edit(a, url, 'Edited here');
      expect((await get(a, url)).body.display_name).toBe('Edited here');
      await edit(a, url, 'Edited again');
      after = await get(a, list);
    });
    expect(
      (after!.body as unknown as Array<{ url: string; display_name: string }>).find(
        (c) => c.url === url,
      )?.display_name,
    ).toBe('Edited again');
  });

  it('a write through another process, or in SQL, is read once its notification is in', async () => {
    const url = await concept();
    expect((await get(b, url)).status).toBe(200);
    expect((await get(b, url)).statements).toBe(0);
    await edit(a, url, 'Edited over there');
    await b.services.notifications.settle();
    expect((await get(b, url)).body.display_name).toBe('Edited over there');
    // A change no process made (an administrator's SQL): heard the same way.
    const orgPath = `/orgs/${org}/`;
    await get(b, orgPath);
    await a.dataSource.query('UPDATE organizations SET company = $2 WHERE mnemonic = $1', [
      org,
      'Changed in SQL',
    ]);
    await b.services.notifications.settle();
    expect((await get(b, orgPath)).body.company).toBe('Changed in SQL');
  });

  it('an answer is only served to the caller it was rendered for', async () => {
    const member = await createUser(a);
    const outsider = await createUser(a);
    const privateOrg = (await createOrg(a, owner)).id;
    const hidden = (await createRepo(a, `/orgs/${privateOrg}`, owner, { public_access: 'None' }))
      .url;
    await createConcept(a, hidden, owner, { id: 'SECRET' });
    const url = `${hidden}concepts/SECRET/`;
    await addMember(a, privateOrg, owner, member);
    // Refused as without kept answers (401: sign in; 403: not yours), before and after the
    // members' answers are kept.
    const anonymous = (await get(a, url)).status;
    const stranger = (await get(a, url, { Authorization: outsider.auth })).status;
    expect([401, 403, 404]).toContain(anonymous);
    expect([403, 404]).toContain(stranger);
    for (let i = 0; i < 2; i += 1) {
      expect((await get(a, url, { Authorization: owner.auth })).status).toBe(200);
      expect((await get(a, url, { Authorization: member.auth })).status).toBe(200);
      expect((await get(a, url)).status).toBe(anonymous);
      expect((await get(a, url, { Authorization: outsider.auth })).status).toBe(stranger);
    }
    expect((await get(a, url, { Authorization: member.auth })).statements).toBe(0);
    // The member leaves (on the other process): what they were answered is not served again.
    await request(b.app)
      .delete(`/orgs/${privateOrg}/members/${member.username}/`)
      .set('Authorization', owner.auth)
      .expect(204);
    await a.services.notifications.settle();
    expect((await get(a, url, { Authorization: member.auth })).status).toBe(stranger);
  });

  it('an answer larger than a thirty-second of the space is not kept', async () => {
    // 16 MB of space: answers above 512 kB are rendered every time.
    const big = await concept({
      extras: { text: 'x'.repeat(600 * 1024) },
    });
    await get(a, big);
    expect((await get(a, big)).statements).toBeGreaterThan(0);
    const small = await concept();
    await get(a, small);
    expect((await get(a, small)).statements).toBe(0);
  });

  it('Cache-Control: no-cache asks the route again', async () => {
    const url = await concept();
    await get(a, url);
    expect((await get(a, url, { 'Cache-Control': 'no-cache' })).statements).toBeGreaterThan(0);
  });

  it('FHIR $lookup by GET is kept; a $lookup by POST or a GraphQL query changes nothing', async () => {
    const code = uniqueId('L');
    await createConcept(a, source, owner, { id: code });
    const path = `/fhir/CodeSystem/$lookup?system=${encodeURIComponent(SYSTEM)}&code=${code}`;
    const headers = { Accept: 'application/fhir+json' };
    expect((await get(a, path, headers)).status).toBe(200);
    expect((await get(a, path, headers)).statements).toBe(0);
    await request(a.app)
      .post('/fhir/CodeSystem/$lookup')
      .set('Content-Type', 'application/fhir+json')
      .send({
        resourceType: 'Parameters',
        parameter: [
          { name: 'system', valueUri: SYSTEM },
          { name: 'code', valueCode: code },
        ],
      })
      .expect(200);
    await request(a.app).post('/graphql').send({ query: '{ me { username } }' }).expect(200);
    expect((await get(a, path, headers)).statements).toBe(0);
    // A GraphQL mutation is a write: read back at once.
    const res = await request(a.app)
      .post('/graphql')
      .set('Authorization', owner.auth)
      .send({
        query: `mutation($input: UpdateOrganizationInput!) { updateOrg(id: "${org}", input: $input) { org { id } } }`,
        variables: { input: { company: 'Set by a mutation' } },
      });
    expect(res.status).toBe(200);
    expect((await get(a, path, headers)).statements).toBeGreaterThan(0);
  });

  it('while the listening connection is lost nothing is served from what was kept', async () => {
    const url = await concept();
    await get(a, url);
    expect((await get(a, url)).statements).toBe(0);
    await dropListeningConnections(a);
    await until(() => !a.services.notifications.live);
    await a.dataSource.query(
      `UPDATE concept_versions SET extras = '{"in":"sql"}'::jsonb
       WHERE concept_id = (SELECT id FROM concepts WHERE mnemonic = $1) AND valid_to_seq IS NULL`,
      [url.split('/').at(-2)],
    );
    const during = await get(a, url);
    expect(during.statements).toBeGreaterThan(0);
    expect(during.body.extras).toEqual({ in: 'sql' });
    await until(() => a.services.notifications.live && b.services.notifications.live);
    await get(a, url);
    expect((await get(a, url)).statements).toBe(0);
  }, 30_000);

  it('parallel edits on two processes: once every write is answered and heard, every read is the last', async () => {
    const url = await concept();
    const names = Array.from({ length: 8 }, (_, i) => `Parallel ${i}`);
    const reads = Array.from({ length: 16 }, (_, i) => get(i % 2 ? a : b, url));
    for (const name of names) {
      await Promise.all([edit(a, url, `${name} a`), get(a, url), get(b, url)]);
      await edit(b, url, `${name} b`);
    }
    for (const read of await Promise.all(reads)) expect(read.status).toBe(200);
    await a.services.notifications.settle();
    await b.services.notifications.settle();
    const last = `${names.at(-1)} b`;
    const final = await Promise.all([get(a, url), get(b, url), get(a, url), get(b, url)]);
    for (const read of final) expect(read.body.display_name).toBe(last);
  });
});
