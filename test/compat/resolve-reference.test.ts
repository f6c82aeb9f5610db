import request from 'supertest';
import {
  createOrg,
  createTestApp,
  createUser,
  uniqueId,
  type TestApp,
  type TestUser,
} from '../factories';
import { createConcept, createRepo, createVersion } from '../factories/content';
import { as } from '../factories/http';
import { orgWithPeople } from '../factories/people';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const canonical = () => `http://example.org/fhir/CodeSystem/${uniqueId('cs')}`;

async function createEntry(registry: string, by: TestUser | string, body: Record<string, unknown>) {
  const res = await request(t.app).post(`${registry}url-registry/`).set(as(by)).send(body);
  if (res.status !== 201)
    throw new Error(`entry create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: number };
}

interface Result {
  reference_type: string;
  timestamp: string;
  resolved: boolean;
  request: unknown;
  resolution_url: string | null;
  url_registry_entry: string | null;
  result: Record<string, unknown> | null;
}

async function post(body: unknown, options: { namespace?: string; user?: TestUser } = {}) {
  const req = request(t.app)
    .post('/$resolveReference/')
    .set(as(options.user))
    .set('Content-Type', 'application/json');
  if (options.namespace !== undefined) void req.query({ namespace: options.namespace });
  const res = await req.send(JSON.stringify(body));
  expect(res.status).toBe(200);
  return res.body as unknown;
}

/** One reference: one result object. */
const resolve = async (ref: unknown, options: { namespace?: string; user?: TestUser } = {}) =>
  (await post(ref, options)) as Result;

/** A list of references: a list of results, in order. */
const resolveAll = async (refs: unknown[], options: { namespace?: string; user?: TestUser } = {}) =>
  (await post(refs, options)) as Result[];

describe('relative references (spec operations §4.4)', () => {
  it('a repository URL resolves to its HEAD, shaped as spec operations §2.5', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createRepo(t, `/orgs/${org.id}`, admin);
    const result = await resolve(source.url);
    expect(result).toEqual({
      reference_type: 'relative',
      timestamp: expect.any(String),
      resolved: true,
      request: source.url,
      resolution_url: source.url,
      url_registry_entry: null,
      result: {
        type: 'Source Version',
        id: 'HEAD',
        short_code: source.id,
        name: `Source ${source.id}`,
        url: `${source.url}HEAD/`,
        version: 'HEAD',
        released: false,
        canonical_url: null,
        owner: org.id,
        owner_type: 'Organization',
        owner_url: `/orgs/${org.id}/`,
        source_type: 'dictionary',
      },
    });
    expect(new Date(result.timestamp).toISOString()).toBe(result.timestamp);
  });

  it('strips concept paths and parameters; a version in the path or the object selects it', async () => {
    const { org, admin } = await orgWithPeople(t);
    const source = await createRepo(t, `/orgs/${org.id}`, admin);
    await createVersion(t, source.url, admin, 'v1', { released: true });
    await createVersion(t, source.url, admin, 'v2', { released: false });
    const collection = await createRepo(t, `/orgs/${org.id}`, admin, {}, 'collections');
    const res = await request(t.app)
      .post('/$resolveReference')
      .send([
        `${source.url}concepts/C1/?q=malaria&conceptClass=Diagnosis`,
        `${source.url}v1/concepts/C1/123/`,
        { url: source.url, version: 'v2' },
        { url: `${source.url}mappings/M1/`, version: 'latest' },
        `${source.url}latest/`,
        `${source.url}v9/`,
        `${collection.url}concepts/`,
        `/orgs/${org.id}/sources/${uniqueId('missing')}/`,
        '/orgs/only-an-owner/',
      ]);
    expect(res.status).toBe(200);
    const results = res.body as Result[];
    expect(results.map((r) => r.resolved)).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
      true,
      false,
      false,
    ]);
    expect(results.slice(0, 5).map((r) => r.result?.version)).toEqual([
      'HEAD',
      'v1',
      'v2',
      'v1',
      'v1',
    ]);
    expect(results.slice(0, 6).every((r) => r.resolution_url === source.url)).toBe(true);
    expect(results[1].result?.url).toBe(`${source.url}v1/`);
    expect(results[5].result).toBeNull();
    expect(results[6].result).toMatchObject({
      type: 'Collection Version',
      url: `${collection.url}HEAD/`,
    });
    expect(results[6].resolution_url).toBe(collection.url);
    expect(results[3].request).toEqual({ url: `${source.url}mappings/M1/`, version: 'latest' });
  });

  it('a private repository is unresolved for outsiders and anonymous callers, resolved for members', async () => {
    const { org, admin, member, outsider } = await orgWithPeople(t);
    const source = await createRepo(t, `/orgs/${org.id}`, admin, { public_access: 'None' });
    expect((await resolveAll([source.url]))[0]).toMatchObject({
      resolved: false,
      result: null,
    });
    expect((await resolve(source.url, { user: outsider })).resolved).toBe(false);
    expect((await resolve(source.url, { user: member })).resolved).toBe(true);
  });
});

describe('canonical references: the resolution order of spec operations §4.4', () => {
  /** Three orgs: A (the namespace), B and C, each with a source under the same canonical URL. */
  async function world() {
    const a = await orgWithPeople(t);
    const b = await orgWithPeople(t);
    const c = await orgWithPeople(t);
    const url = canonical();
    const inA = await createRepo(t, `/orgs/${a.org.id}`, a.admin, { canonical_url: url });
    const inB = await createRepo(t, `/orgs/${b.org.id}`, b.admin, { canonical_url: url });
    const inC = await createRepo(t, `/orgs/${c.org.id}`, c.admin, { canonical_url: url });
    return { a, b, c, url, inA, inB, inC };
  }

  it('owner registry beats owner repositories, which beat the global registry', async () => {
    const { a, c, b, url, inA, inB, inC } = await world();
    const global = await createEntry('/', t.admin, { url, namespace: `/orgs/${c.org.id}/` });
    const ns = `/orgs/${a.org.id}/`;
    // No entry of A's: A's own repository, before the global registry.
    const own = await resolve(url, { namespace: ns });
    expect(own).toMatchObject({
      reference_type: 'canonical',
      resolved: true,
      resolution_url: url,
      url_registry_entry: null,
    });
    expect(own.result?.short_code).toBe(inA.id);
    // Global namespace: the global registry's entry.
    const viaGlobal = await resolve(url);
    expect(viaGlobal.url_registry_entry).toBe(`/url-registry/${global.id}/`);
    expect(viaGlobal.result?.short_code).toBe(inC.id);
    // An entry in A's registry wins over A's repositories.
    const entry = await createEntry(ns, a.member, { url, namespace: `/orgs/${b.org.id}/` });
    const viaOwner = await resolve(url, { namespace: ns });
    expect(viaOwner.url_registry_entry).toBe(`${ns}url-registry/${entry.id}/`);
    expect(viaOwner.result?.short_code).toBe(inB.id);
  });

  it('an owner entry whose namespace holds no such repository is unresolved (no fall back)', async () => {
    const { a, url } = await world();
    const empty = await orgWithPeople(t);
    const ns = `/orgs/${a.org.id}/`;
    const entry = await createEntry(ns, a.admin, { url, namespace: `/orgs/${empty.org.id}/` });
    const result = await resolve(url, { namespace: ns });
    expect(result).toMatchObject({
      resolved: false,
      result: null,
      url_registry_entry: `${ns}url-registry/${entry.id}/`,
    });
  });

  it('a global entry with no repository behind it, or no entry at all, is unresolved', async () => {
    const { url } = await world();
    // No entry: unresolved even though three orgs hold a source under the URL.
    expect(await resolve(url)).toMatchObject({
      resolved: false,
      url_registry_entry: null,
      resolution_url: url,
    });
    const outsider = await orgWithPeople(t);
    expect((await resolve(url, { namespace: `/orgs/${outsider.org.id}/` })).resolved).toBe(false);
    const lonely = canonical();
    const entry = await createEntry('/', t.admin, { url: lonely });
    expect(await resolve(lonely)).toMatchObject({
      resolved: false,
      url_registry_entry: `/url-registry/${entry.id}/`,
    });
  });

  it('a namespace inside a reference overrides the request parameter', async () => {
    const { a, b, url, inA, inB } = await world();
    await createEntry('/', t.admin, { url, namespace: `/orgs/${b.org.id}/` });
    const results = await resolveAll(
      [
        url,
        { url, namespace: `/orgs/${a.org.id}/` },
        { url, namespace: '/' },
        { url, namespace: null },
      ],
      { namespace: `/orgs/${b.org.id}/` },
    );
    expect(results.map((r) => r.result?.short_code)).toEqual([inB.id, inA.id, inB.id, inB.id]);
    const other = await resolveAll([{ url, namespace: `/orgs/${a.org.id}/` }]);
    expect(other[0].result?.short_code).toBe(inA.id);
  });

  it('|version and version select a version; without one the newest released, else HEAD', async () => {
    const { org, admin } = await orgWithPeople(t);
    const url = canonical();
    const source = await createRepo(t, `/orgs/${org.id}`, admin, { canonical_url: url });
    const ns = `/orgs/${org.id}/`;
    expect((await resolve(url, { namespace: ns })).result?.version).toBe('HEAD');
    await createVersion(t, source.url, admin, '1.0', { released: true });
    await createVersion(t, source.url, admin, '2.0', { released: false });
    const results = await resolveAll(
      [
        url,
        `${url}|2.0`,
        { url, version: '2.0' },
        { url: `${url}|1.0`, version: '2.0' },
        `${url}|latest`,
        `${url}|HEAD`,
        `${url}|3.0`,
      ],
      { namespace: ns },
    );
    expect(results.map((r) => r.result?.version ?? null)).toEqual([
      '1.0',
      '2.0',
      '2.0',
      '1.0',
      '1.0',
      'HEAD',
      null,
    ]);
    expect(results.every((r) => r.resolution_url === url)).toBe(true);
    expect(results[1].result?.url).toBe(`${source.url}2.0/`);
  });

  it('what the caller may not see is unresolved, never an error', async () => {
    const { org, admin, member, outsider } = await orgWithPeople(t);
    const url = canonical();
    await createRepo(t, `/orgs/${org.id}`, admin, { canonical_url: url, public_access: 'None' });
    await createEntry('/', t.admin, { url, namespace: `/orgs/${org.id}/` });
    expect((await resolve(url)).resolved).toBe(false);
    expect((await resolve(url, { user: outsider })).resolved).toBe(false);
    expect((await resolve(url, { user: member })).resolved).toBe(true);
    // A namespace the caller may not see behaves as if it did not exist.
    const hidden = await createUser(t);
    const privateOrg = await createOrg(t, hidden, { public_access: 'None' });
    const other = canonical();
    await createRepo(t, `/orgs/${privateOrg.id}`, hidden, { canonical_url: other });
    expect(
      (await resolve(other, { namespace: `/orgs/${privateOrg.id}/`, user: outsider })).resolved,
    ).toBe(false);
    expect(
      (await resolve(other, { namespace: `/orgs/${privateOrg.id}/`, user: hidden })).resolved,
    ).toBe(true);
  });
});

describe('bad input', () => {
  it('answers 400 for a malformed body or namespace', async () => {
    const send = (body: unknown, query: Record<string, string> = {}) =>
      request(t.app)
        .post('/$resolveReference/')
        .query(query)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify(body));
    expect((await request(t.app).post('/$resolveReference/')).status).toBe(400);
    for (const body of [
      42,
      '',
      { version: 'v1' },
      { url: 7 },
      { url: 'http://x.org/cs', version: 2 },
      { url: 'http://x.org/cs', namespace: 'orgs' },
      ['http://x.org/cs', null],
      [['nested']],
    ]) {
      const res = await send(body);
      expect(res.status).toBe(400);
      expect(typeof res.body.message).toBe('string');
    }
    const badNamespace = await send('http://x.org/cs', { namespace: 'nowhere' });
    expect(badNamespace.status).toBe(400);
    expect(badNamespace.body.errors.namespace).toBeDefined();
    const malformed = await request(t.app)
      .post('/$resolveReference/')
      .set('Content-Type', 'application/json')
      .send('{"url": ');
    expect(malformed.status).toBe(400);
    expect((await send([])).body).toEqual([]);
  });
});

describe('mapping ends resolve through the registry', () => {
  it('a canonical to_source_url that a registry entry points at resolves its end', async () => {
    const target = await orgWithPeople(t);
    const url = canonical();
    const source = await createRepo(t, `/orgs/${target.org.id}`, target.admin, {
      canonical_url: url,
    });
    await createConcept(t, source.url, target.admin, {
      id: 'B54',
      concept_class: 'Diagnosis',
      names: [{ name: 'Malaria', locale: 'en', locale_preferred: true }],
    });
    // A decoy elsewhere under the same URL: the registry decides.
    const decoy = await orgWithPeople(t);
    await createRepo(t, `/orgs/${decoy.org.id}`, decoy.admin, { canonical_url: url });
    await createEntry('/', t.admin, { url, namespace: `/orgs/${target.org.id}/` });
    const mine = await orgWithPeople(t);
    const from = await createRepo(t, `/orgs/${mine.org.id}`, mine.admin);
    const res = await request(t.app).post(`${from.url}mappings/`).set(as(mine.admin)).send({
      map_type: 'SAME-AS',
      from_concept_url: '/orgs/CIEL/sources/CIEL/concepts/116128/',
      to_source_url: url,
      to_concept_code: 'B54',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      to_source_url: url,
      to_source_owner: target.org.id,
      to_source_name: source.id,
      to_concept_name_resolved: 'Malaria',
    });
  });

  it('a registry entry pointing nowhere leaves the end external, even if a source elsewhere has the URL', async () => {
    const elsewhere = await orgWithPeople(t);
    const url = canonical();
    await createRepo(t, `/orgs/${elsewhere.org.id}`, elsewhere.admin, { canonical_url: url });
    await createEntry('/', t.admin, { url });
    const mine = await orgWithPeople(t);
    const from = await createRepo(t, `/orgs/${mine.org.id}`, mine.admin);
    const res = await request(t.app).post(`${from.url}mappings/`).set(as(mine.admin)).send({
      map_type: 'SAME-AS',
      from_concept_url: '/orgs/CIEL/sources/CIEL/concepts/116128/',
      to_source_url: url,
      to_concept_code: 'X1',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ to_source_url: url, to_source_name: null });
  });
});
