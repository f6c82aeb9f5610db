import request from 'supertest';
import {
  addMember,
  contextOf,
  createOrg,
  createTestApp,
  createUser,
  uniqueId,
  type TestApp,
  type TestUser,
} from '../factories';
import {
  createConcept,
  createMapping,
  createMappingBetween,
  createRepo,
  createSource,
  createVersion,
  type TestSource,
} from '../factories/content';
import { as } from '../factories/http';

/** spec operations §2.8, §4.7: sources and collections read as FHIR R4 resources. */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const get = (path: string, user?: TestUser) => request(t.app).get(path).set(as(user));

/** A resource as the tests read it. */
interface Resource {
  id: string;
  version?: string;
  url?: string;
  concept?: Array<{ code: string; property?: unknown[] }>;
  compose?: { include: Array<{ concept?: unknown[] }> };
  group?: unknown[];
  meta: { tag?: unknown[] };
  [field: string]: unknown;
}
interface Entry {
  fullUrl: string;
  resource: Resource;
}
const entries = (body: { entry?: Entry[] }) => (body.entry ?? []).map((e) => e.resource);
const linkOf = (body: { link: Array<{ relation: string; url: string }> }, relation: string) =>
  body.link.find((l) => l.relation === relation)?.url;
const codes = (resource: { concept?: Array<{ code: string }> }) =>
  (resource.concept ?? []).map((c) => c.code);

/**
 * A public org source with a hierarchy, names, a description and a retired concept, released as
 * v1 and v2 (v2 adds D), a draft v3; its mappings; and a collection of two of its v1 concepts
 * released as c1.
 */
interface World {
  org: string;
  owner: TestUser;
  source: TestSource;
  canonical: string;
  collection: string;
  collectionCanonical: string;
}

async function world(): Promise<World> {
  const canonical = `http://example.org/fhir/CodeSystem/${uniqueId('cs')}`;
  const source = await createSource(t, {
    id: 'S',
    full_name: 'The S source',
    canonical_url: canonical,
  });
  const { org, owner } = source;
  const concept = (id: string) => `/orgs/${org}/sources/S/concepts/${id}/`;
  await createConcept(t, source.url, owner, {
    id: 'A',
    concept_class: 'Diagnosis',
    datatype: 'N/A',
    names: [
      { name: 'Alpha', locale: 'en', locale_preferred: true, name_type: 'FULLY_SPECIFIED' },
      { name: 'Alpha (fr)', locale: 'fr', name_type: 'SHORT' },
    ],
    descriptions: [{ description: 'The first letter.', locale: 'en' }],
  });
  await createConcept(t, source.url, owner, { id: 'B', parent_concept_urls: [concept('A')] });
  await createConcept(t, source.url, owner, { id: 'C' });
  const retired = await request(t.app).delete(concept('C')).set(as(owner));
  expect(retired.status).toBe(204);
  await createMappingBetween(t, source.url, owner, ['M1', 'SAME-AS', concept('A'), concept('B')]);
  await createMapping(t, source.url, owner, {
    id: 'M2',
    map_type: 'NARROWER-THAN',
    from_concept_url: concept('A'),
    to_source_url: 'http://loinc.org',
    to_concept_code: '1234-5',
    to_concept_name: 'Loinc thing',
  });
  await createVersion(t, source.url, owner, 'v1', { released: true });
  await createConcept(t, source.url, owner, { id: 'D' });
  await createVersion(t, source.url, owner, 'v2', { released: true });
  await createVersion(t, source.url, owner, 'v3');

  const collectionCanonical = `http://example.org/fhir/ValueSet/${uniqueId('vs')}`;
  const collection = await createRepo(
    t,
    `/orgs/${org}`,
    owner,
    { id: 'C', canonical_url: collectionCanonical },
    'collections',
  );
  const added = await request(t.app)
    .put(`${collection.url}references/`)
    .set(as(owner))
    .send({
      data: {
        expressions: [
          `/orgs/${org}/sources/S/v1/concepts/A/`,
          `/orgs/${org}/sources/S/v1/concepts/B/`,
        ],
      },
    });
  expect(added.status).toBe(200);
  await createVersion(t, collection.url, owner, 'c1', { released: true });
  return { org, owner, source, canonical, collection: collection.url, collectionCanonical };
}

let w: World;
beforeAll(async () => {
  w = await world();
});

describe('CodeSystem by owner namespace', () => {
  it('answers the latest released version, with its concepts, as application/fhir+json', async () => {
    const res = await get(`/orgs/${w.org}/CodeSystem/S`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/fhir\+json/);
    const cs = JSON.parse(res.text);
    expect(cs).toMatchObject({
      resourceType: 'CodeSystem',
      id: 'S',
      meta: { versionId: 'v2', lastUpdated: expect.any(String) },
      language: 'en',
      url: w.canonical,
      version: 'v2',
      name: 'S',
      title: 'The S source',
      status: 'active',
      content: 'complete',
      caseSensitive: true,
      count: 3,
      identifier: [
        {
          type: {
            coding: [
              {
                system: 'http://terminology.hl7.org/CodeSystem/v2-0203',
                code: 'ACSN',
                display: 'Accession ID',
              },
            ],
            text: 'Accession ID',
          },
          system: expect.stringMatching(/\/fhir$/),
          value: `/orgs/${w.org}/CodeSystem/S/version/v2/`,
        },
      ],
    });
    expect(cs.property.map((p: { code: string }) => p.code)).toEqual([
      'conceptclass',
      'datatype',
      'inactive',
      'parent',
      'child',
    ]);
    expect(codes(cs)).toEqual(['A', 'B', 'C', 'D']);
    const [a, b, c] = cs.concept;
    expect(a).toEqual({
      code: 'A',
      display: 'Alpha',
      definition: 'The first letter.',
      designation: [
        { language: 'en', use: { code: 'FULLY_SPECIFIED' }, value: 'Alpha' },
        { language: 'fr', use: { code: 'SHORT' }, value: 'Alpha (fr)' },
      ],
      property: [
        { code: 'conceptclass', valueString: 'Diagnosis' },
        { code: 'datatype', valueString: 'N/A' },
        { code: 'inactive', valueBoolean: false },
        { code: 'child', valueCode: 'B' },
      ],
    });
    expect(b.property).toContainEqual({ code: 'parent', valueCode: 'A' });
    expect(c.property).toContainEqual({ code: 'inactive', valueBoolean: true });
  });

  it('answers one version by id, HEAD and unreleased ones included', async () => {
    const v1 = await get(`/orgs/${w.org}/CodeSystem/S/version/v1`);
    expect(v1.status).toBe(200);
    expect(v1.body).toMatchObject({ version: 'v1', status: 'active' });
    expect(codes(v1.body)).toEqual(['A', 'B', 'C']);
    const v3 = await get(`/orgs/${w.org}/CodeSystem/S/version/v3/`);
    expect(v3.body).toMatchObject({ version: 'v3', status: 'draft' });
    const head = await get(`/orgs/${w.org}/CodeSystem/S/version/HEAD`);
    expect(head.body).toMatchObject({ version: 'HEAD', status: 'draft' });
    expect(codes(head.body)).toEqual(['A', 'B', 'C', 'D']);
  });

  it('lists the released versions only, newest first, without concepts', async () => {
    for (const path of ['version', 'version/', 'version/*']) {
      const res = await get(`/orgs/${w.org}/CodeSystem/S/${path}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ resourceType: 'Bundle', type: 'searchset', total: 2 });
      const found = entries(res.body);
      expect(found.map((r) => r.version)).toEqual(['v2', 'v1']);
      expect(found.every((r) => r.concept === undefined)).toBe(true);
      expect(res.body.entry[0].fullUrl).toMatch(
        new RegExp(`/orgs/${w.org}/CodeSystem/S/version/v2/$`),
      );
    }
  });

  it('answers an empty searchset when no version is released', async () => {
    const source = await createSource(t, { id: 'Unreleased' });
    await createVersion(t, source.url, source.owner, 'draft1');
    const res = await get(`/orgs/${source.org}/CodeSystem/Unreleased`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ resourceType: 'Bundle', type: 'searchset', total: 0 });
    expect(res.body.entry).toEqual([]);
  });

  it('lists the latest released version of each source of the owner, definitions only', async () => {
    const res = await get(`/orgs/${w.org}/CodeSystem/`);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(1);
    expect(entries(res.body)[0]).toMatchObject({ id: 'S', version: 'v2' });
    expect(entries(res.body)[0].concept).toBeUndefined();
  });

  it('serves a user namespace too', async () => {
    const user = await createUser(t);
    const repo = await createRepo(t, `/users/${user.username}`, user, { id: 'Mine' });
    await createConcept(t, repo.url, user, { id: 'X' });
    await createVersion(t, repo.url, user, '1.0', { released: true });
    const res = await get(`/users/${user.username}/CodeSystem/Mine`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: 'Mine',
      version: '1.0',
      identifier: [{ value: `/users/${user.username}/CodeSystem/Mine/version/1.0/` }],
    });
    expect(res.body.url).toMatch(new RegExp(`/users/${user.username}/sources/Mine/$`));
    expect(codes(res.body)).toEqual(['X']);
  });

  it('answers 404 for an unknown owner, repository or version, and a collection as CodeSystem', async () => {
    for (const path of [
      `/orgs/${uniqueId('none')}/CodeSystem/S`,
      `/orgs/${w.org}/CodeSystem/Nope`,
      `/orgs/${w.org}/CodeSystem/S/version/v9`,
      `/orgs/${w.org}/CodeSystem/C`,
      `/orgs/${w.org}/ValueSet/S`,
    ]) {
      const res = await get(path);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.body.resourceType).toBe('OperationOutcome');
    }
  });
});

describe('CodeSystem search and read under /fhir/', () => {
  it('finds the latest released version by canonical URL, with its concepts', async () => {
    const res = await get(`/fhir/CodeSystem/?url=${encodeURIComponent(w.canonical)}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ resourceType: 'Bundle', type: 'searchset', total: 1 });
    expect(res.body.meta.lastUpdated).toEqual(expect.any(String));
    expect(linkOf(res.body, 'self')).toContain('/fhir/CodeSystem/');
    const [cs] = entries(res.body);
    expect(cs).toMatchObject({ version: 'v2', url: w.canonical });
    expect(codes(cs)).toEqual(['A', 'B', 'C', 'D']);
    expect(res.body.entry[0].fullUrl).toMatch(new RegExp(`/fhir/CodeSystem/${cs.id}$`));
  });

  it('finds one version, or every released one with version=*', async () => {
    const url = encodeURIComponent(w.canonical);
    const v1 = await get(`/fhir/CodeSystem?url=${url}&version=v1`);
    expect(entries(v1.body).map((r) => r.version)).toEqual(['v1']);
    expect(codes(entries(v1.body)[0])).toEqual(['A', 'B', 'C']);
    const all = await get(`/fhir/CodeSystem?url=${url}&version=*`);
    expect(all.body.total).toBe(2);
    expect(entries(all.body).map((r) => r.version)).toEqual(['v2', 'v1']);
    expect(entries(all.body).every((r) => r.concept === undefined)).toBe(true);
    const none = await get(`/fhir/CodeSystem?url=${url}&version=v9`);
    expect(none.status).toBe(200);
    expect(none.body.total).toBe(0);
  });

  it('finds a repository by its own URL when it has no canonical URL', async () => {
    const source = await createSource(t, { id: 'NoCanonical' });
    await createVersion(t, source.url, source.owner, 'r1', { released: true });
    const res = await get(`/fhir/CodeSystem?url=${encodeURIComponent(source.url)}`);
    expect(res.body.total).toBe(1);
    expect(entries(res.body)[0].url).toMatch(new RegExp(`^http://[^/]+${source.url}$`));
    // The absolute URL is the server's own: the same host on every request.
    const absolute = `http://registry.test${source.url}`;
    const found = await request(t.app)
      .get(`/fhir/CodeSystem?url=${encodeURIComponent(absolute)}`)
      .set('Host', 'registry.test');
    expect(found.body.total).toBe(1);
    expect(entries(found.body)[0].url).toBe(absolute);
  });

  it('reads by a server-wide id that round-trips, whatever the ids hold', async () => {
    const org = await createOrg(t, w.owner, { id: uniqueId('a-b.c') });
    const repo = await createRepo(t, `/orgs/${org.id}`, w.owner, { id: 'x-y-z' });
    await createVersion(t, repo.url, w.owner, '2', { released: true });
    const search = await get(
      `/fhir/CodeSystem?_id=${encodeURIComponent(`org${org.id.length}-${org.id}-x-y-z`)}`,
    );
    expect(search.body.total).toBe(1);
    const id = entries(search.body)[0].id;
    expect(id).toBe(`org${org.id.length}-${org.id}-x-y-z`);
    const read = await get(`/fhir/CodeSystem/${encodeURIComponent(id)}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ resourceType: 'CodeSystem', id, version: '2' });

    const listed = await get(`/fhir/CodeSystem?url=${encodeURIComponent(w.canonical)}`);
    const sId = entries(listed.body)[0].id;
    const again = await get(`/fhir/CodeSystem/${sId}`);
    expect(again.body).toMatchObject({ id: sId, version: 'v2' });
    expect(codes(again.body)).toEqual(['A', 'B', 'C', 'D']);
  });

  it('answers 404 for an id naming nothing, and for a repository without a released version', async () => {
    const source = await createSource(t, { id: 'OnlyHead' });
    for (const id of ['nonsense', 'org99-x-y', `org${source.org.length}-${source.org}-OnlyHead`]) {
      const res = await get(`/fhir/CodeSystem/${id}`);
      expect([id, res.status]).toEqual([id, 404]);
      expect(res.body.resourceType).toBe('OperationOutcome');
    }
  });

  it('filters by name, title, status and _id', async () => {
    const url = encodeURIComponent(w.canonical);
    const named = await get(`/fhir/CodeSystem?url=${url}&name=s`);
    expect(named.body.total).toBe(1);
    const misnamed = await get(`/fhir/CodeSystem?url=${url}&name=zzz`);
    expect(misnamed.body.total).toBe(0);
    const titled = await get(`/fhir/CodeSystem?url=${url}&title=the%20S`);
    expect(titled.body.total).toBe(1);
    const drafts = await get(`/fhir/CodeSystem?url=${url}&version=v3&status=draft`);
    expect(entries(drafts.body).map((r) => r.version)).toEqual(['v3']);
    const active = await get(`/fhir/CodeSystem?url=${url}&version=v3&status=active`);
    expect(active.body.total).toBe(0);
    const byId = await get(`/orgs/${w.org}/CodeSystem?_id=S,Other`);
    expect(entries(byId.body).map((r) => r.id)).toEqual(['S']);
  });

  it('answers _summary=count, _summary=true and _elements', async () => {
    const url = encodeURIComponent(w.canonical);
    const count = await get(`/fhir/CodeSystem?url=${url}&_summary=count`);
    expect(count.body.total).toBe(1);
    expect(count.body.entry).toBeUndefined();
    const summary = await get(`/fhir/CodeSystem?url=${url}&_summary=true`);
    const [summarized] = entries(summary.body);
    expect(summarized.concept).toBeUndefined();
    expect(summarized).toMatchObject({ version: 'v2', count: 3 });
    expect(summarized.meta.tag).toContainEqual(expect.objectContaining({ code: 'SUBSETTED' }));
    const elements = await get(`/fhir/CodeSystem?url=${url}&_elements=url,version`);
    const [picked] = entries(elements.body);
    expect(Object.keys(picked).sort()).toEqual(['id', 'meta', 'resourceType', 'url', 'version']);
  });

  it('refuses malformed search parameters with 400', async () => {
    for (const query of ['_count=0', '_count=x', 'page=0', 'status=bogus', '_summary=maybe']) {
      const res = await get(`/fhir/CodeSystem?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(res.body.resourceType).toBe('OperationOutcome');
    }
  });
});

describe('paging', () => {
  it('answers 100 concepts per page, with next and prev links', async () => {
    const source = await createSource(t, { id: 'Big' });
    const ids = Array.from({ length: 103 }, (_, i) => `c${String(i).padStart(3, '0')}`);
    for (let i = 0; i < ids.length; i += 10) {
      await Promise.all(
        ids.slice(i, i + 10).map((id) => createConcept(t, source.url, source.owner, { id })),
      );
    }
    await createVersion(t, source.url, source.owner, 'v1', { released: true });
    const first = await get(`/orgs/${source.org}/CodeSystem/Big`);
    expect(codes(first.body)).toEqual(ids.slice(0, 100));
    const second = await get(`/orgs/${source.org}/CodeSystem/Big?page=2`);
    expect(codes(second.body)).toEqual(ids.slice(100));

    const search = await get(`/fhir/CodeSystem?_id=org${source.org.length}-${source.org}-Big`);
    expect(codes(entries(search.body)[0])).toEqual(ids.slice(0, 100));
    const next = linkOf(search.body, 'next')!;
    expect(next).toContain('page=2');
    expect(linkOf(search.body, 'prev')).toBeUndefined();
    const page2 = await get(new URL(next).pathname + new URL(next).search);
    expect(codes(entries(page2.body)[0])).toEqual(ids.slice(100));
    expect(linkOf(page2.body, 'next')).toBeUndefined();
    expect(linkOf(page2.body, 'prev')).toContain('page=1');
  });

  it('pages the entries of a list with _count and page', async () => {
    const owner = await createUser(t);
    const { id: org } = await createOrg(t, owner);
    for (const id of ['P1', 'P2', 'P3']) {
      const repo = await createRepo(t, `/orgs/${org}`, owner, { id });
      await createVersion(t, repo.url, owner, '1', { released: true });
    }
    const first = await get(`/orgs/${org}/CodeSystem?_count=2`);
    expect(first.body.total).toBe(3);
    expect(entries(first.body).map((r) => r.id)).toEqual(['P1', 'P2']);
    expect(linkOf(first.body, 'next')).toContain('page=2');
    const second = await get(`/orgs/${org}/CodeSystem?_count=2&page=2`);
    expect(entries(second.body).map((r) => r.id)).toEqual(['P3']);
    expect(linkOf(second.body, 'next')).toBeUndefined();
  });
});

describe('private content', () => {
  async function privateWorld() {
    const admin = await createUser(t);
    const member = await createUser(t);
    const outsider = await createUser(t);
    const { id: org } = await createOrg(t, admin, { public_access: 'None' });
    await addMember(t, org, admin, member);
    const canonical = `http://example.org/private/${uniqueId('cs')}`;
    const repo = await createRepo(t, `/orgs/${org}`, admin, {
      id: 'Secret',
      canonical_url: canonical,
    });
    await createConcept(t, repo.url, admin, { id: 'X' });
    await createVersion(t, repo.url, admin, '1', { released: true });
    // A private source of a public org.
    const open = await createOrg(t, admin);
    await addMember(t, open.id, admin, member);
    const hidden = await createRepo(t, `/orgs/${open.id}`, admin, {
      id: 'Hidden',
      public_access: 'None',
      canonical_url: `${canonical}-hidden`,
    });
    await createVersion(t, hidden.url, admin, '1', { released: true });
    return { org, openOrg: open.id, member, outsider, canonical };
  }

  it('answers 401 anonymous and 403 outsiders on direct reads, 200 to members', async () => {
    const p = await privateWorld();
    const paths = [
      `/orgs/${p.org}/CodeSystem/Secret`,
      `/orgs/${p.org}/CodeSystem/Secret/version/1`,
      `/orgs/${p.org}/CodeSystem/Secret/version/`,
      `/orgs/${p.org}/CodeSystem/`,
      `/fhir/CodeSystem/org${p.org.length}-${p.org}-Secret`,
      `/orgs/${p.openOrg}/CodeSystem/Hidden`,
    ];
    for (const path of paths) {
      expect([path, (await get(path)).status]).toEqual([path, 401]);
      expect([path, (await get(path, p.outsider)).status]).toEqual([path, 403]);
      expect([path, (await get(path, p.member)).status]).toEqual([path, 200]);
    }
  });

  it('leaves private repositories out of searches of those who may not see them', async () => {
    const p = await privateWorld();
    for (const url of [p.canonical, `${p.canonical}-hidden`]) {
      const query = `/fhir/CodeSystem?url=${encodeURIComponent(url)}`;
      expect((await get(query)).body.total).toBe(0);
      expect((await get(query, p.outsider)).body.total).toBe(0);
      expect((await get(query, p.member)).body.total).toBe(1);
      const stored = await t.services.fhirResources
        .stored(await contextOf(t, p.outsider))
        .codeSystems(url);
      expect(stored).toEqual([]);
    }
    const listed = await get(`/orgs/${p.openOrg}/CodeSystem/`);
    expect(listed.body.total).toBe(0);
  });
});

describe('ValueSet', () => {
  it('answers a collection version with its members grouped by system and version', async () => {
    const res = await get(`/orgs/${w.org}/ValueSet/C`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      resourceType: 'ValueSet',
      id: 'C',
      url: w.collectionCanonical,
      version: 'c1',
      status: 'active',
      immutable: true,
      identifier: [{ value: `/orgs/${w.org}/ValueSet/C/version/c1/` }],
      compose: {
        include: [
          {
            system: w.canonical,
            version: 'v1',
            concept: [
              { code: 'A', display: 'Alpha' },
              { code: 'B', display: 'Name B' },
            ],
          },
        ],
      },
    });
  });

  it('searches by canonical URL and lists versions without members', async () => {
    const url = encodeURIComponent(w.collectionCanonical);
    const found = await get(`/fhir/ValueSet?url=${url}`);
    expect(found.body.total).toBe(1);
    expect(entries(found.body)[0].compose!.include[0].concept).toHaveLength(2);
    const versions = await get(`/orgs/${w.org}/ValueSet/C/version`);
    expect(entries(versions.body).map((r) => r.version)).toEqual(['c1']);
    expect(entries(versions.body)[0].compose).toBeUndefined();
    const head = await get(`/orgs/${w.org}/ValueSet/C/version/HEAD`);
    expect(head.body).toMatchObject({ version: 'HEAD', immutable: false, status: 'draft' });
  });
});

describe('ConceptMap', () => {
  it("answers a source version's mappings grouped by source and target system", async () => {
    const res = await get(`/orgs/${w.org}/ConceptMap/S/version/v1`);
    expect(res.status).toBe(200);
    const map = res.body;
    expect(map).toMatchObject({
      resourceType: 'ConceptMap',
      id: 'S',
      url: w.canonical,
      version: 'v1',
      status: 'active',
      identifier: { value: `/orgs/${w.org}/ConceptMap/S/version/v1/` },
    });
    const extension = expect.stringMatching(/\/ConceptMap\/equivalence$/);
    expect(map.group).toEqual(
      expect.arrayContaining([
        {
          source: w.canonical,
          target: w.canonical,
          element: [
            {
              code: 'A',
              display: 'Alpha',
              target: [
                {
                  code: 'B',
                  display: 'Name B',
                  equivalence: 'equivalent',
                  extension: [{ url: extension, valueString: 'SAME-AS' }],
                },
              ],
            },
          ],
        },
        {
          source: w.canonical,
          target: 'http://loinc.org',
          element: [
            {
              code: 'A',
              display: 'Alpha',
              target: [
                {
                  code: '1234-5',
                  display: 'Loinc thing',
                  equivalence: 'wider',
                  extension: [{ url: extension, valueString: 'NARROWER-THAN' }],
                },
              ],
            },
          ],
        },
      ]),
    );
    expect(map.group).toHaveLength(2);
  });

  it('searches by canonical URL, with next/prev links only where pages exist', async () => {
    const res = await get(`/fhir/ConceptMap?url=${encodeURIComponent(w.canonical)}`);
    expect(res.body.total).toBe(1);
    expect(linkOf(res.body, 'self')).toBeDefined();
    expect(linkOf(res.body, 'next')).toBeUndefined();
    expect(entries(res.body)[0].group).toHaveLength(2);
  });
});

describe('stored content for the terminology operations', () => {
  it('answers every version but HEAD, with content and server-wide ids', async () => {
    const stored = t.services.fhirResources.stored(await contextOf(t, 'anonymous'));
    const systems = await stored.codeSystems(w.canonical);
    expect(systems.map((s) => s.version).sort()).toEqual(['v1', 'v2', 'v3']);
    const v1 = systems.find((s) => s.version === 'v1')!;
    expect(codes(v1)).toEqual(['A', 'B', 'C']);
    expect(v1.id).toBe(`org${w.org.length}-${w.org}-S`);
    expect(v1.concept![0].property).toContainEqual({ code: 'child', valueCode: 'B' });
    const valueSets = await stored.valueSets(w.collectionCanonical);
    expect(valueSets.map((v) => v.version)).toEqual(['c1']);
    const maps = await stored.conceptMaps(w.canonical);
    expect(maps).toHaveLength(3);
    expect(maps[0].identifier).toEqual([expect.objectContaining({ system: expect.any(String) })]);
  });

  it('answers HEAD for a repository without any other version', async () => {
    const canonical = `http://example.org/head-only/${uniqueId('cs')}`;
    const source = await createSource(t, { id: 'H', canonical_url: canonical });
    await createConcept(t, source.url, source.owner, { id: 'Z' });
    const stored = t.services.fhirResources.stored(await contextOf(t, 'anonymous'));
    const systems = await stored.codeSystems(canonical);
    expect(systems.map((s) => s.version)).toEqual(['HEAD']);
    expect(codes(systems[0])).toEqual(['Z']);
  });
});

describe('create (spec operations §4.7)', () => {
  const post = (path: string, body: object, user?: TestUser) =>
    request(t.app)
      .post(path)
      .set(as(user))
      .set('Content-Type', 'application/fhir+json')
      .send(JSON.stringify(body));

  const codeSystem = (fields: Record<string, unknown> = {}): Record<string, unknown> => ({
    resourceType: 'CodeSystem',
    url: `http://example.org/created/${uniqueId('cs')}`,
    name: 'Made',
    title: 'Made by FHIR',
    status: 'active',
    publisher: 'Example Publisher',
    concept: [
      {
        code: 'root',
        display: 'Root',
        definition: 'The top.',
        designation: [{ language: 'fr', use: { code: 'SHORT' }, value: 'Racine' }],
        concept: [{ code: 'leaf', display: 'Leaf' }],
      },
      {
        code: 'old',
        display: 'Old',
        property: [
          { code: 'inactive', valueBoolean: true },
          { code: 'parent', valueCode: 'leaf' },
          { code: 'conceptclass', valueString: 'Finding' },
        ],
      },
    ],
    ...fields,
  });

  it('makes a source, its concepts and its version in an owner namespace: 201 and Location', async () => {
    const id = uniqueId('made');
    const body = codeSystem({ id, version: '1.0' });
    const res = await post(`/orgs/${w.org}/CodeSystem`, body, w.owner);
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/orgs/${w.org}/CodeSystem/${id}/version/1.0/`);
    const made = JSON.parse(res.text);
    expect(made).toMatchObject({
      resourceType: 'CodeSystem',
      id,
      url: body.url,
      version: '1.0',
      name: 'Made',
      title: 'Made by FHIR',
      status: 'active',
      language: 'en',
      publisher: 'Example Publisher',
    });
    expect(codes(made)).toEqual(['leaf', 'old', 'root']);
    const [leaf, old, root] = made.concept;
    expect(root).toMatchObject({
      display: 'Root',
      definition: 'The top.',
      designation: expect.arrayContaining([
        { language: 'fr', use: { code: 'SHORT' }, value: 'Racine' },
      ]),
    });
    expect(root.property).toContainEqual({ code: 'child', valueCode: 'leaf' });
    expect(leaf.property).toContainEqual({ code: 'parent', valueCode: 'root' });
    expect(old.property).toEqual(
      expect.arrayContaining([
        { code: 'inactive', valueBoolean: true },
        { code: 'parent', valueCode: 'leaf' },
        { code: 'conceptclass', valueString: 'Finding' },
      ]),
    );
    // Released (status active): the version-less read answers it; REST sees the source.
    const read = await get(`/orgs/${w.org}/CodeSystem/${id}`);
    expect(read.body).toMatchObject({ version: '1.0', url: body.url });
    const rest = await get(`/orgs/${w.org}/sources/${id}/`);
    expect(rest.body).toMatchObject({ canonical_url: body.url, full_name: 'Made by FHIR' });
  });

  it('takes owner, id and version from the accession identifier under /fhir/, draft by default', async () => {
    const id = uniqueId('acc');
    const body = codeSystem({
      id: 'ignored',
      version: '9',
      status: undefined,
      language: '',
      identifier: [
        {
          type: {
            coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0203', code: 'ACSN' }],
          },
          system: 'http://example.org/fhir',
          value: `/orgs/${w.org}/CodeSystem/${id}/version/2.0/`,
        },
      ],
    });
    const res = await post('/fhir/CodeSystem', body, w.owner);
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/orgs/${w.org}/CodeSystem/${id}/version/2.0/`);
    expect(res.body).toMatchObject({
      id: `org${w.org.length}-${w.org}-${id}`,
      version: '2.0',
      status: 'draft',
      language: 'en',
    });
    // A draft is not released: the version-less read finds none.
    expect((await get(`/orgs/${w.org}/CodeSystem/${id}`)).body.total).toBe(0);
  });

  it('defaults the version to 0.1', async () => {
    const id = uniqueId('dflt');
    const res = await post(`/orgs/${w.org}/CodeSystem`, codeSystem({ id }), w.owner);
    expect(res.status).toBe(201);
    expect(res.body.version).toBe('0.1');
  });

  it('refuses a create that breaks a rule with 400, and makes nothing', async () => {
    const cases: Array<[string, string, object]> = [
      ['no url', `/orgs/${w.org}/CodeSystem`, codeSystem({ id: uniqueId('x'), url: undefined })],
      ['no identifier under /fhir/', '/fhir/CodeSystem', codeSystem({ id: uniqueId('x') })],
      ['neither id nor identifier', `/orgs/${w.org}/CodeSystem`, codeSystem()],
      ['wrong type', `/orgs/${w.org}/CodeSystem`, { resourceType: 'ValueSet', id: 'x', url: 'u' }],
      ['bad status', `/orgs/${w.org}/CodeSystem`, codeSystem({ id: 'x', status: 'weird' })],
      [
        'a code the registry cannot hold',
        `/orgs/${w.org}/CodeSystem`,
        codeSystem({ id: 'Broken', concept: [{ code: 'ok' }, { code: 'not ok' }] }),
      ],
    ];
    for (const [label, path, body] of cases) {
      const res = await post(path, body, w.owner);
      expect([label, res.status]).toEqual([label, 400]);
      expect(res.body.resourceType).toBe('OperationOutcome');
    }
    expect((await get(`/orgs/${w.org}/sources/Broken/`, w.owner)).status).toBe(404);
  });

  it('answers 401 anonymous and 403 to a user who may not create in the org', async () => {
    const body = codeSystem({ id: uniqueId('x') });
    expect((await post(`/orgs/${w.org}/CodeSystem`, body)).status).toBe(401);
    const stranger = await createUser(t);
    expect((await post(`/orgs/${w.org}/CodeSystem`, body, stranger)).status).toBe(403);
  });

  it('makes a collection with references and a version from a ValueSet', async () => {
    const id = uniqueId('vs');
    const url = `http://example.org/created/${id}`;
    const res = await post(
      `/orgs/${w.org}/ValueSet`,
      {
        resourceType: 'ValueSet',
        id,
        url,
        version: '1',
        status: 'active',
        compose: { include: [{ system: w.canonical, version: 'v1', concept: [{ code: 'A' }] }] },
      },
      w.owner,
    );
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/orgs/${w.org}/ValueSet/${id}/version/1/`);
    expect(res.body).toMatchObject({
      resourceType: 'ValueSet',
      url,
      version: '1',
      immutable: true,
      compose: { include: [{ system: w.canonical, concept: [{ code: 'A', display: 'Alpha' }] }] },
    });
    const noSystem = await post(
      `/orgs/${w.org}/ValueSet`,
      { resourceType: 'ValueSet', id: uniqueId('vs'), url, compose: { include: [{}] } },
      w.owner,
    );
    expect(noSystem.status).toBe(400);
  });

  it('makes nothing of a ValueSet whose references cannot all be added', async () => {
    const id = uniqueId('vs');
    const body = (code: string) => ({
      resourceType: 'ValueSet',
      id,
      url: `http://example.org/created/${id}`,
      compose: { include: [{ system: w.canonical, version: 'v1', concept: [{ code }] }] },
    });
    const refused = await post(`/orgs/${w.org}/ValueSet`, body('NoSuchCode'), w.owner);
    expect(refused.status).toBe(400);
    expect((await get(`/orgs/${w.org}/collections/${id}/`, w.owner)).status).toBe(404);
    // The id is free again.
    expect((await post(`/orgs/${w.org}/ValueSet`, body('A'), w.owner)).status).toBe(201);
  });
});
