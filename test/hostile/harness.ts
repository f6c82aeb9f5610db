import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { collectionWorld, type CollectionWorld } from '../factories/collection-world';
import { createOrg, createUser, type TestApp, type TestUser } from '../factories';
import { show, type Expect } from './generator';

/** One hostile request, and how to reproduce it. */
export interface Case {
  family: string;
  method: string;
  /** The raw request target: path and query, already encoded (or deliberately not). */
  path: string;
  /** A JSON body. */
  body?: unknown;
  /** Or raw bytes with a content type ('' = none). */
  raw?: { contentType: string; data: string | Buffer };
  /** The `Authorization` header; undefined: the runner's default, null: none. */
  auth?: string | null;
  headers?: Record<string, string>;
  /** What is hostile about it. */
  input: string;
  expect: Expect;
  /** A GraphQL request: its JSON errors are read too. */
  graphql?: boolean;
}

export interface Outcome {
  case: Case;
  /** The HTTP status; -1: no answer in time; 0: the connection broke. */
  status: number;
  text: string;
  ms: number;
}

export const REQUEST_TIMEOUT_MS = 10_000;
export const CONCURRENCY = 8;

/** The app behind one real HTTP server (every case goes over a socket, as a client's would). */
export interface Server {
  port: number;
  agent: http.Agent;
  close(): Promise<void>;
}

export async function listen(t: TestApp): Promise<Server> {
  const server = http.createServer(t.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  return {
    port: (server.address() as AddressInfo).port,
    agent,
    close: async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Sends one case; never throws. */
export function send(server: Server, c: Case, defaultAuth: string | null): Promise<Outcome> {
  const started = Date.now();
  const headers: Record<string, string> = { Accept: 'application/json', ...c.headers };
  const auth = c.auth === undefined ? defaultAuth : c.auth;
  if (auth !== null) headers.Authorization = auth;
  let data: Buffer | undefined;
  if (c.raw) {
    data = Buffer.isBuffer(c.raw.data) ? c.raw.data : Buffer.from(c.raw.data, 'utf8');
    if (c.raw.contentType) headers['Content-Type'] = c.raw.contentType;
  } else if (c.body !== undefined) {
    data = Buffer.from(JSON.stringify(c.body), 'utf8');
    headers['Content-Type'] = 'application/json';
  }
  if (data) headers['Content-Length'] = String(data.length);
  if (/[^\u0021-\u00ff]/.test(c.path)) {
    throw new Error(`a case with an unescaped path: ${show(c.path)} (${c.input})`);
  }
  return new Promise((resolve) => {
    let settled = false;
    const finish = (status: number, text: string): void => {
      if (settled) return;
      settled = true;
      resolve({ case: c, status, text, ms: Date.now() - started });
    };
    const req = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        method: c.method,
        path: c.path,
        headers,
        agent: server.agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => finish(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')));
        res.on('error', (error) => finish(res.statusCode ?? 0, `response error: ${error.message}`));
      },
    );
    req.setTimeout(REQUEST_TIMEOUT_MS, () => {
      finish(-1, `no answer within ${REQUEST_TIMEOUT_MS} ms`);
      req.destroy();
    });
    req.on('error', (error) => finish(0, `connection error: ${error.message}`));
    req.end(data);
  });
}

/** Whether the request was taken (a write may have happened). */
export function accepted(o: Outcome): boolean {
  if (o.status < 200 || o.status >= 400) return false;
  if (!o.case.graphql) return true;
  const errors = graphqlErrors(o);
  return !errors || errors.length === 0;
}

interface GraphqlError {
  message?: unknown;
  extensions?: { code?: unknown };
}

function graphqlErrors(o: Outcome): GraphqlError[] | undefined {
  try {
    const body = JSON.parse(o.text) as unknown;
    const replies = (Array.isArray(body) ? body : [body]) as Array<{ errors?: GraphqlError[] }>;
    if (replies.every((r) => r?.errors === undefined)) return undefined;
    return replies.flatMap((r) => r?.errors ?? []);
  } catch {
    return undefined;
  }
}

/** What is wrong with an answer, or undefined. */
export function problemOf(o: Outcome): string | undefined {
  if (o.status === -1) return 'HANG';
  if (o.status === 0) return 'NO ANSWER';
  if (o.status >= 500) return `${o.status}`;
  if (o.case.graphql) {
    const errors = graphqlErrors(o) ?? [];
    if (errors.some((e) => e.extensions?.code === 'INTERNAL_SERVER_ERROR')) {
      return 'INTERNAL_SERVER_ERROR';
    }
    if (errors.some((e) => typeof e.message === 'string' && /Infinity/.test(e.message))) {
      return 'cost Infinity';
    }
    const longest = Math.max(
      0,
      ...errors.map((e) => (typeof e.message === 'string' ? e.message.length : 0)),
    );
    if (longest > 10_000) return `an error message of ${longest} characters (the input echoed)`;
  }
  if (o.case.expect === 'refused' && accepted(o)) {
    return o.case.graphql ? 'accepted, must be refused' : `accepted (${o.status}), must be a 4xx`;
  }
  return undefined;
}

/** How to reproduce a case: method, target, input, headers, body and the answer. */
export function describeOutcome(o: Outcome, problem: string): string {
  const c = o.case;
  const parts = [
    `[${c.family}] ${c.method} ${show(c.path, 240).slice(1, -1)}`,
    `input: ${c.input}`,
  ];
  if (c.auth !== undefined) parts.push(`Authorization: ${show(c.auth, 80)}`);
  if (c.headers) parts.push(`headers: ${show(c.headers)}`);
  if (c.raw) parts.push(`Content-Type: ${show(c.raw.contentType)} body: ${show(c.raw.data)}`);
  else if (c.body !== undefined) parts.push(`body: ${show(c.body, 400)}`);
  parts.push(`→ ${o.status} ${show(o.text, 200)} (${o.ms} ms): ${problem}`);
  return parts.join('\n    ');
}

export interface RunResult {
  outcomes: Outcome[];
  failures: string[];
  /** Time spent on the fingerprint queries. */
  checkMs: number;
}

/**
 * Runs the cases `CONCURRENCY` at a time. With a fingerprint of the targeted tenant, checks after
 * every batch that a batch nobody's request was accepted in wrote nothing.
 */
export async function runCases(
  server: Server,
  cases: Case[],
  options: { defaultAuth: string | null; fingerprint?: () => Promise<Record<string, string>> },
): Promise<RunResult> {
  const outcomes: Outcome[] = [];
  const failures: string[] = [];
  let checkMs = 0;
  const timed = async (): Promise<Record<string, string>> => {
    const started = Date.now();
    const result = await options.fingerprint!();
    checkMs += Date.now() - started;
    return result;
  };
  let before = options.fingerprint ? await timed() : undefined;
  for (let i = 0; i < cases.length; i += CONCURRENCY) {
    const batch = cases.slice(i, i + CONCURRENCY);
    const answers = await Promise.all(batch.map((c) => send(server, c, options.defaultAuth)));
    outcomes.push(...answers);
    if (process.env.HOSTILE_DUMP) {
      fs.appendFileSync(
        process.env.HOSTILE_DUMP,
        answers
          .map(
            (o) =>
              `${o.status}\t${o.ms}\t${o.case.family}\t${o.case.method} ${show(o.case.path, 100)}\t${o.case.input}\t${show(o.text, 160)}\n`,
          )
          .join(''),
      );
    }
    for (const o of answers) {
      const problem = problemOf(o);
      if (problem) failures.push(describeOutcome(o, problem));
    }
    if (options.fingerprint && before) {
      const after = await timed();
      const changed = Object.keys(after).filter((k) => after[k] !== before![k]);
      if (changed.length > 0 && !answers.some(accepted)) {
        for (const o of answers) {
          failures.push(
            describeOutcome(
              o,
              `refused, yet rows changed in ${changed.join(', ')} (one of this batch)`,
            ),
          );
        }
      }
      before = after;
    }
  }
  return { outcomes, failures, checkMs };
}

/** A readable failure: every problem on its own lines, or nothing. */
export function report(title: string, failures: string[]): string {
  if (failures.length === 0) return '';
  if (process.env.HOSTILE_REPORT) {
    fs.appendFileSync(process.env.HOSTILE_REPORT, `${title}\n  ${failures.join('\n  ')}\n`);
  }
  const shown = failures.slice(0, 60);
  return `${title}: ${failures.length} problem(s)\n  ${shown.join('\n  ')}${
    failures.length > shown.length ? `\n  … and ${failures.length - shown.length} more` : ''
  }`;
}

/** Counts per family, for the log. */
export function tally(outcomes: Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of outcomes) counts[o.case.family] = (counts[o.case.family] ?? 0) + 1;
  return counts;
}

/**
 * The tenant hostile requests target: a user with an org holding source S (concepts A–E, R to
 * retire, mapping M1, version v1) and collection C (a reference, version v1, expansion e1), an
 * entry in the org's URL registry, a finished task, extras everywhere; and a second user with
 * an org of their own.
 */
export interface Tenant extends CollectionWorld {
  victim: TestUser;
  victimOrg: string;
  /** Users and orgs that hostile creates name carry this. */
  marker: string;
  conceptVersion: string;
  mappingVersion: string;
  nameUuid: string;
  descriptionUuid: string;
  referenceId: string;
  entryId: string;
  taskId: string;
}

export async function buildTenant(t: TestApp, marker: string): Promise<Tenant> {
  const world = await collectionWorld(t, {
    mappings: (w) => [['M1', 'SAME-AS', `${w.source}concepts/A/`, `${w.source}concepts/B/`]],
  });
  const auth = { Authorization: world.owner.auth };
  const ok = async <T>(
    call: request.Test,
    status: number,
    pick: (body: never) => T = (b) => b,
  ): Promise<T> => {
    const res = await call.set(auth);
    if (res.status !== status) {
      throw new Error(`tenant setup: ${res.status} ${JSON.stringify(res.body)}`);
    }
    return pick(res.body as never);
  };
  const app = t.app;
  const { source, collection, org } = world;
  await ok(
    request(app)
      .post(`${source}concepts/`)
      .send({ id: 'R', concept_class: 'Misc', names: [{ name: 'Retire me', locale: 'en' }] }),
    201,
  );
  const descriptionUuid = await ok(
    request(app).post(`${source}concepts/A/descriptions/`).send({ description: 'D', locale: 'en' }),
    201,
    (b: { uuid: string }) => b.uuid,
  );
  const nameUuid = await ok(
    request(app).get(`${source}concepts/A/names/`),
    200,
    (b: Array<{ uuid: string }>) => b[0].uuid,
  );
  const conceptVersion = await ok(
    request(app).get(`${source}concepts/A/`),
    200,
    (b: { version: string }) => String(b.version),
  );
  const mappingVersion = await ok(
    request(app).get(`${source}mappings/M1/`),
    200,
    (b: { uuid: string }) => String(b.uuid),
  );
  await ok(request(app).post(`${source}versions/`).send({ id: 'v1' }), 201);
  await ok(
    request(app)
      .put(`${collection}references/`)
      .send({ data: { expressions: [`${source}concepts/A/`] } }),
    200,
  );
  const referenceId = await ok(
    request(app).get(`${collection}references/`),
    200,
    (b: Array<{ id: number }>) => String(b[0].id),
  );
  await ok(request(app).post(`${collection}versions/`).send({ id: 'v1' }), 201);
  await ok(
    request(app).post(`${collection}v1/expansions/`).send({ mnemonic: 'e1', parameters: {} }),
    201,
  );
  const entryId = await ok(
    request(app)
      .post(`/orgs/${org}/url-registry/`)
      .send({ url: `http://example.org/${marker}/S`, name: 'E' }),
    201,
    (b: { id: number }) => String(b.id),
  );
  const task = await request(app)
    .put(`${collection}references/?async=true`)
    .set(auth)
    .send({ data: { expressions: [`${source}concepts/B/`] } });
  if (task.status !== 202) throw new Error(`tenant setup: task ${task.status}`);
  const taskId = String((task.body as { id: string }).id);
  for (const base of [
    `/orgs/${org}`,
    `/user`,
    source.slice(0, -1),
    collection.slice(0, -1),
    `${source}mappings/M1`,
    `${source}concepts/A`,
  ]) {
    await ok(request(app).put(`${base}/extras/k/`).send({ k: 'v' }), 200);
  }
  const victim = await createUser(t);
  const victimOrg = (await createOrg(t, victim)).id;
  const tenant: Tenant = {
    ...world,
    victim,
    victimOrg,
    marker,
    conceptVersion,
    mappingVersion,
    nameUuid,
    descriptionUuid,
    referenceId,
    entryId,
    taskId,
  };
  await settleTasks(t, tenant);
  return tenant;
}

/** A `multipart/form-data` body: text fields, and a file part when given. */
export function multipart(
  fields: Record<string, string>,
  file?: { name: string; contentType: string; data: string | Buffer },
): { contentType: string; data: Buffer } {
  const boundary = 'hostileBoundary7MA4YWxkTrZu0gW';
  const parts: Buffer[] = Object.entries(fields).map(([name, value]) =>
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
    ),
  );
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\n` +
          `Content-Type: ${file.contentType}\r\n\r\n`,
      ),
      Buffer.isBuffer(file.data) ? file.data : Buffer.from(file.data),
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${boundary}`, data: Buffer.concat(parts) };
}

/** A FHIR resource as FHIR clients send it (`application/fhir+json`). */
export function fhirJson(resource: unknown): { contentType: string; data: string } {
  return { contentType: 'application/fhir+json', data: JSON.stringify(resource) ?? 'null' };
}

/** Waits until the tenant's background tasks are done (they write after their request ends). */
export async function settleTasks(t: TestApp, tenant: Tenant): Promise<void> {
  const users = [tenant.owner.username, tenant.victim.username];
  for (let waited = 0; waited < 20_000; waited += 50) {
    const [row] = await t.dataSource.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM tasks WHERE created_by = ANY($1) AND state IN ('PENDING', 'STARTED')`,
      [users],
    );
    if (row.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the tenant tasks did not finish within 20 s');
}

/**
 * Everything the tenant owns, one hash per table: any insert, update or delete changes it.
 * Scope: the two users and their orgs, orgs the tenant created, users whose name or email
 * carries the marker, and every repository those own with all its content.
 */
export async function fingerprint(t: TestApp, tenant: Tenant): Promise<Record<string, string>> {
  await settleTasks(t, tenant);
  const usernames = [tenant.owner.username, tenant.victim.username];
  const rows = await t.dataSource.query<Array<{ name: string; hash: string }>>(
    `WITH
       u AS (SELECT id FROM users WHERE username = ANY($1)
             OR username ILIKE '%' || $2 || '%' OR email ILIKE '%' || $2 || '%'),
       o AS (SELECT id FROM organizations WHERE mnemonic = ANY($3) OR created_by = ANY($1)),
       r AS (SELECT id FROM repositories
             WHERE owner_org_id IN (SELECT id FROM o) OR owner_user_id IN (SELECT id FROM u)),
       e AS (SELECT id FROM expansions WHERE collection_id IN (SELECT id FROM r))
     SELECT 'users' AS name, ${hash('users', 'id IN (SELECT id FROM u)')}
     UNION ALL SELECT 'api_tokens', ${hash('api_tokens', 'user_id IN (SELECT id FROM u)')}
     UNION ALL SELECT 'organizations', ${hash('organizations', 'id IN (SELECT id FROM o)')}
     UNION ALL SELECT 'org_memberships', ${hash(
       'org_memberships',
       'org_id IN (SELECT id FROM o) OR user_id IN (SELECT id FROM u)',
     )}
     UNION ALL SELECT 'repositories', ${hash('repositories', 'id IN (SELECT id FROM r)')}
     UNION ALL SELECT 'repository_versions', ${hash('repository_versions', 'repository_id IN (SELECT id FROM r)')}
     UNION ALL SELECT 'concepts', ${hash('concepts', 'repository_id IN (SELECT id FROM r)')}
     UNION ALL SELECT 'concept_versions', ${hash('concept_versions', 'repository_id IN (SELECT id FROM r)')}
     UNION ALL SELECT 'mappings', ${hash('mappings', 'repository_id IN (SELECT id FROM r)')}
     UNION ALL SELECT 'mapping_versions', ${hash('mapping_versions', 'repository_id IN (SELECT id FROM r)')}
     UNION ALL SELECT 'collection_references', ${hash('collection_references', 'collection_id IN (SELECT id FROM r)')}
     UNION ALL SELECT 'expansions', ${hash('expansions', 'id IN (SELECT id FROM e)')}
     UNION ALL SELECT 'expansion_concepts', ${hash('expansion_concepts', 'expansion_id IN (SELECT id FROM e)')}
     UNION ALL SELECT 'expansion_mappings', ${hash('expansion_mappings', 'expansion_id IN (SELECT id FROM e)')}
     UNION ALL SELECT 'url_registry_entries', ${hash(
       'url_registry_entries',
       'owner_org_id IN (SELECT id FROM o) OR owner_user_id IN (SELECT id FROM u)',
     )}
     UNION ALL SELECT 'tasks', ${hash('tasks', 'created_by = ANY($1)')}
     UNION ALL SELECT 'bulk_imports', ${hash('bulk_imports', 'created_by = ANY($1)')}
     UNION ALL SELECT 'events', ${hash(
       'events',
       'actor_id IN (SELECT id FROM u) OR org_id IN (SELECT id FROM o) OR repository_id IN (SELECT id FROM r)',
     )}
     UNION ALL SELECT 'pins', ${hash('pins', 'user_id IN (SELECT id FROM u) OR org_id IN (SELECT id FROM o)')}
     UNION ALL SELECT 'follows', ${hash('follows', 'follower_id IN (SELECT id FROM u)')}
     UNION ALL SELECT 'user_identities', ${hash('user_identities', 'user_id IN (SELECT id FROM u)')}
     UNION ALL SELECT 'repository_exports', ${hash(
       'repository_exports',
       'version_id IN (SELECT id FROM repository_versions WHERE repository_id IN (SELECT id FROM r))',
     )}`,
    [usernames, tenant.marker, [tenant.org, tenant.victimOrg]],
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.hash]));
}

/**
 * Row count and a hash of every row's physical identity and inserting transaction: an insert, a
 * delete or an update (even one that changes no value) changes it, without reading the rows.
 */
function hash(table: string, where: string): string {
  return `(SELECT count(*) || ':' || coalesce(md5(string_agg(x.ctid::text || x.xmin::text, ',' ORDER BY x.ctid)), '')
           FROM ${table} x WHERE ${where}) AS hash`;
}

/**
 * The database's own invariants over the tenant's repositories; each query answers the rows
 * that break one.
 */
export async function brokenInvariants(t: TestApp, tenant: Tenant): Promise<string[]> {
  const usernames = [tenant.owner.username, tenant.victim.username];
  const scope = `
    WITH u AS (SELECT id FROM users WHERE username = ANY($1)
               OR username ILIKE '%' || $2 || '%' OR email ILIKE '%' || $2 || '%'),
         o AS (SELECT id FROM organizations WHERE mnemonic = ANY($3) OR created_by = ANY($1)),
         r AS (SELECT * FROM repositories
               WHERE owner_org_id IN (SELECT id FROM o) OR owner_user_id IN (SELECT id FROM u))`;
  const checks: Array<[string, string]> = [
    [
      'a concept with two current versions',
      `SELECT concept_id AS id FROM concept_versions WHERE repository_id IN (SELECT id FROM r)
       AND valid_to_seq IS NULL GROUP BY concept_id HAVING count(*) > 1`,
    ],
    [
      'a mapping with two current versions',
      `SELECT mapping_id AS id FROM mapping_versions WHERE repository_id IN (SELECT id FROM r)
       AND valid_to_seq IS NULL GROUP BY mapping_id HAVING count(*) > 1`,
    ],
    [
      'active_concepts differs from the current, unretired concepts',
      `SELECT r.id, r.active_concepts, (SELECT count(*) FROM concept_versions v
         WHERE v.repository_id = r.id AND v.valid_to_seq IS NULL AND NOT v.retired) AS real
       FROM r WHERE r.active_concepts <> (SELECT count(*) FROM concept_versions v
         WHERE v.repository_id = r.id AND v.valid_to_seq IS NULL AND NOT v.retired)`,
    ],
    [
      'active_mappings differs from the current, unretired mappings',
      `SELECT r.id, r.active_mappings FROM r WHERE r.active_mappings <> (SELECT count(*)
         FROM mapping_versions v WHERE v.repository_id = r.id AND v.valid_to_seq IS NULL
         AND NOT v.retired)`,
    ],
    [
      'a content version beyond its repository head',
      `SELECT v.id FROM concept_versions v JOIN r ON r.id = v.repository_id
       WHERE v.valid_from_seq > r.head_seq OR v.valid_to_seq > r.head_seq
       UNION ALL
       SELECT v.id FROM mapping_versions v JOIN r ON r.id = v.repository_id
       WHERE v.valid_from_seq > r.head_seq OR v.valid_to_seq > r.head_seq
       UNION ALL
       SELECT c.id FROM collection_references c JOIN r ON r.id = c.collection_id
       WHERE c.valid_from_seq > r.head_seq OR c.valid_to_seq > r.head_seq`,
    ],
    [
      'a repository version beyond its head',
      `SELECT v.id FROM repository_versions v JOIN r ON r.id = v.repository_id
       WHERE v.seq > r.head_seq`,
    ],
    [
      'a content version in another repository than its object',
      `SELECT v.id FROM concept_versions v JOIN concepts c ON c.id = v.concept_id
       WHERE v.repository_id IN (SELECT id FROM r) AND c.repository_id <> v.repository_id
       UNION ALL
       SELECT v.id FROM mapping_versions v JOIN mappings m ON m.id = v.mapping_id
       WHERE v.repository_id IN (SELECT id FROM r) AND m.repository_id <> v.repository_id`,
    ],
    [
      'an expansion of another collection than its version',
      `SELECT e.id FROM expansions e JOIN repository_versions v ON v.id = e.version_id
       WHERE e.collection_id IN (SELECT id FROM r) AND v.repository_id <> e.collection_id`,
    ],
    [
      'an org without an administrator',
      `SELECT o.id FROM o WHERE NOT EXISTS (SELECT 1 FROM org_memberships m
         WHERE m.org_id = o.id AND m.role = 'admin')`,
    ],
    [
      'a repository with two versions of one id',
      `SELECT repository_id AS id FROM repository_versions WHERE repository_id IN (SELECT id FROM r)
       GROUP BY repository_id, lower(mnemonic) HAVING count(*) > 1`,
    ],
    [
      'text stored as U+FFFD (lossy: the request held something else)',
      `SELECT 'repositories' AS t, id FROM r WHERE strpos(r::text, chr(65533)) > 0
       UNION ALL SELECT 'organizations', x.id FROM organizations x
         WHERE x.id IN (SELECT id FROM o) AND strpos(x::text, chr(65533)) > 0
       UNION ALL SELECT 'users', x.id FROM users x
         WHERE x.id IN (SELECT id FROM u) AND strpos(x::text, chr(65533)) > 0
       UNION ALL SELECT 'concept_versions', x.id FROM concept_versions x
         WHERE x.repository_id IN (SELECT id FROM r) AND strpos(x::text, chr(65533)) > 0
       UNION ALL SELECT 'mapping_versions', x.id FROM mapping_versions x
         WHERE x.repository_id IN (SELECT id FROM r) AND strpos(x::text, chr(65533)) > 0
       UNION ALL SELECT 'collection_references', x.id FROM collection_references x
         WHERE x.collection_id IN (SELECT id FROM r) AND strpos(x::text, chr(65533)) > 0`,
    ],
  ];
  const broken: string[] = [];
  for (const [name, sql] of checks) {
    const rows = await t.dataSource.query<unknown[]>(`${scope} ${sql}`, [
      usernames,
      tenant.marker,
      [tenant.org, tenant.victimOrg],
    ]);
    if (rows.length > 0) broken.push(`${name}: ${show(rows, 400)}`);
  }
  return broken;
}
