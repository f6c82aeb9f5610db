import request from 'supertest';
import { createTestApp, uniqueId, type TestApp, type TestUser } from '../factories';
import { createConcept, createRepo, createVersion } from '../factories/content';
import { orgWithPeople } from '../factories/people';
import { as } from '../factories/http';

/**
 * FHIR writes (spec operations §4.7): CodeSystem and ValueSet updates and deletes, ConceptMap
 * create, update and delete; each read back, refused ones changing nothing.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const get = (path: string, user?: TestUser) => request(t.app).get(path).set(as(user));
const send = (method: 'post' | 'put', path: string, body: object, user?: TestUser) =>
  (method === 'post' ? request(t.app).post(path) : request(t.app).put(path))
    .set(as(user))
    .set('Content-Type', 'application/fhir+json')
    .send(JSON.stringify(body));
const del = (path: string, user?: TestUser) => request(t.app).delete(path).set(as(user));
const codes = (resource: { concept?: Array<{ code: string }> }) =>
  (resource.concept ?? []).map((c) => c.code);
const property = (concept: { property?: Array<Record<string, unknown>> }, code: string) =>
  concept.property?.find((p) => p.code === code);

/** A public org with an administrator, a member and a source S of concepts A and B (released v1). */
async function world(orgFields: Record<string, unknown> = {}) {
  const {
    org: { id: org },
    admin,
    member,
    outsider,
  } = await orgWithPeople(t, orgFields);
  const canonical = `http://example.org/w/${uniqueId('cs')}`;
  const source = await createRepo(t, `/orgs/${org}`, admin, { id: 'S', canonical_url: canonical });
  await createConcept(t, source.url, admin, {
    id: 'A',
    names: [{ name: 'Alpha', locale: 'en', locale_preferred: true }],
  });
  await createConcept(t, source.url, admin, {
    id: 'B',
    names: [{ name: 'Beta', locale: 'en', locale_preferred: true }],
  });
  await createVersion(t, source.url, admin, 'v1', { released: true });
  return { org, admin, member, outsider, canonical };
}

const codeSystem = (id: string, fields: Record<string, unknown> = {}) => ({
  resourceType: 'CodeSystem',
  id,
  url: `http://example.org/w/${id}`,
  name: 'Made',
  status: 'draft',
  concept: [
    { code: 'a', display: 'A thing' },
    { code: 'b', display: 'B thing', concept: [{ code: 'b1', display: 'B child' }] },
  ],
  ...fields,
});

describe('CodeSystem update (PUT)', () => {
  it('edits, adds and retires concepts and remakes a draft version; 200 with meta.versionId', async () => {
    const w = await world();
    const id = uniqueId('cs');
    expect((await send('post', `/orgs/${w.org}/CodeSystem`, codeSystem(id), w.admin)).status).toBe(
      201,
    );
    const body = codeSystem(id, {
      title: 'Edited',
      publisher: 'Pub',
      concept: [
        { code: 'a', display: 'A renamed', definition: 'Now defined.' },
        { code: 'c', display: 'New', property: [{ code: 'parent', valueCode: 'a' }] },
      ],
    });
    const res = await send(
      'put',
      `/orgs/${w.org}/CodeSystem/${id}`,
      { ...body, version: '0.1' },
      w.admin,
    );
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/fhir\+json/);
    expect(res.body).toMatchObject({
      id,
      version: '0.1',
      title: 'Edited',
      publisher: 'Pub',
      status: 'draft',
    });
    expect(res.body.meta).toMatchObject({ versionId: '0.1', lastUpdated: expect.any(String) });
    expect(codes(res.body)).toEqual(['a', 'b', 'b1', 'c']);
    const byCode = new Map(res.body.concept.map((c: { code: string }) => [c.code, c]));
    expect(byCode.get('a')).toMatchObject({ display: 'A renamed', definition: 'Now defined.' });
    expect(property(byCode.get('b') as object, 'inactive')).toEqual({
      code: 'inactive',
      valueBoolean: true,
    });
    expect(property(byCode.get('c') as object, 'parent')).toEqual({
      code: 'parent',
      valueCode: 'a',
    });

    // Read back: the draft version and HEAD hold the same; REST sees the retired concept.
    const read = await get(`/orgs/${w.org}/CodeSystem/${id}/version/0.1`, w.admin);
    expect(read.body).toMatchObject({ version: '0.1', title: 'Edited' });
    expect(codes(read.body)).toEqual(['a', 'b', 'b1', 'c']);
    const b = await get(`/orgs/${w.org}/sources/${id}/concepts/b/`, w.admin);
    expect(b.body.retired).toBe(true);
    const versions = await get(`/orgs/${w.org}/sources/${id}/versions/`, w.admin);
    expect(versions.body.map((v: { id: string }) => v.id).sort()).toEqual(['0.1', 'HEAD']);
  });

  it('makes a new released version when the version is new, and then refuses to change it (409)', async () => {
    const w = await world();
    const res = await send(
      'put',
      `/orgs/${w.org}/CodeSystem/S`,
      {
        resourceType: 'CodeSystem',
        url: w.canonical,
        version: 'v2',
        status: 'active',
        concept: [
          { code: 'A', display: 'Alpha' },
          { code: 'B', display: 'Beta' },
          { code: 'C', display: 'Gamma' },
        ],
      },
      w.admin,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ version: 'v2', status: 'active', meta: { versionId: 'v2' } });
    const latest = await get(`/orgs/${w.org}/CodeSystem/S`);
    expect(latest.body.version).toBe('v2');
    expect(codes(latest.body)).toEqual(['A', 'B', 'C']);
    // v1 keeps what it froze.
    expect(codes((await get(`/orgs/${w.org}/CodeSystem/S/version/v1`)).body)).toEqual(['A', 'B']);

    const again = await send(
      'put',
      `/orgs/${w.org}/CodeSystem/S`,
      {
        resourceType: 'CodeSystem',
        url: w.canonical,
        version: 'v2',
        status: 'active',
        concept: [{ code: 'A', display: 'Changed' }],
      },
      w.admin,
    );
    expect(again.status).toBe(409);
    expect(again.body.resourceType).toBe('OperationOutcome');
    const head = await get(`/orgs/${w.org}/CodeSystem/S/version/HEAD`);
    expect(codes(head.body)).toEqual(['A', 'B', 'C']);
    expect(head.body.concept[0].display).toBe('Alpha');
  });

  it('writes back a resource as read without new concept versions; fragments keep the others', async () => {
    const w = await world();
    const read = await get(`/orgs/${w.org}/CodeSystem/S/version/HEAD`);
    const { meta: _meta, ...resource } = read.body;
    void _meta;
    const same = await send('put', `/orgs/${w.org}/CodeSystem/S`, resource, w.admin);
    expect(same.status).toBe(200);
    for (const code of ['A', 'B']) {
      const versions = await get(`/orgs/${w.org}/sources/S/concepts/${code}/versions/`);
      expect([code, versions.body.length]).toEqual([code, 1]);
    }
    const fragment = await send(
      'put',
      `/fhir/CodeSystem/org${w.org.length}-${w.org}-S`,
      {
        resourceType: 'CodeSystem',
        url: w.canonical,
        content: 'fragment',
        concept: [{ code: 'Z', display: 'Zed' }],
      },
      w.admin,
    );
    expect(fragment.status).toBe(200);
    expect(fragment.body.id).toBe(`org${w.org.length}-${w.org}-S`);
    expect(codes(fragment.body)).toEqual(['A', 'B', 'Z']);
    expect(
      fragment.body.concept.every((c: object) => property(c, 'inactive')?.valueBoolean === false),
    ).toBe(true);
  });

  it('refuses anonymous (401), outsiders (403), unknown (404) and bad bodies (400), changing nothing', async () => {
    const w = await world();
    const path = `/orgs/${w.org}/CodeSystem/S`;
    const good = { resourceType: 'CodeSystem', url: w.canonical, concept: [{ code: 'A' }] };
    expect((await send('put', path, good)).status).toBe(401);
    expect((await send('put', path, good, w.outsider)).status).toBe(403);
    expect((await send('put', `/orgs/${w.org}/CodeSystem/Nope`, good, w.admin)).status).toBe(404);
    expect((await send('put', '/fhir/CodeSystem/not-a-global-id', good, w.admin)).status).toBe(404);
    const bad: Array<[string, object]> = [
      ['no url', { resourceType: 'CodeSystem', concept: [] }],
      ['wrong type', { ...good, resourceType: 'ValueSet' }],
      ['another id', { ...good, id: 'Other' }],
      ['a bad code', { ...good, concept: [{ code: 'not ok' }] }],
      [
        'a parent outside',
        { ...good, concept: [{ code: 'A', property: [{ code: 'parent', valueCode: 'Q' }] }] },
      ],
      ['a bad status', { ...good, status: 'weird' }],
      ['a reserved version', { ...good, version: 'latest' }],
    ];
    for (const [label, body] of bad) {
      const res = await send('put', path, body, w.admin);
      expect([label, res.status]).toEqual([label, 400]);
      expect(res.body.resourceType).toBe('OperationOutcome');
    }
    const head = await get(`${path}/version/HEAD`);
    expect(codes(head.body)).toEqual(['A', 'B']);
    expect(
      head.body.concept.every((c: object) => property(c, 'inactive')?.valueBoolean === false),
    ).toBe(true);
    expect((await get(`/orgs/${w.org}/sources/S/versions/`)).body).toHaveLength(2);
  });

  it('lets parallel updates all land, without a 500', async () => {
    const w = await world();
    const results = await Promise.all(
      [1, 2, 3, 4, 5].map((n) =>
        send(
          'put',
          `/orgs/${w.org}/CodeSystem/S`,
          {
            resourceType: 'CodeSystem',
            url: w.canonical,
            content: 'fragment',
            concept: [{ code: `P${n}`, display: `Parallel ${n}` }],
          },
          w.admin,
        ),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const head = await get(`/orgs/${w.org}/CodeSystem/S/version/HEAD`);
    expect(codes(head.body)).toEqual(['A', 'B', 'P1', 'P2', 'P3', 'P4', 'P5']);
  });

  it('gives one of parallel identical creates 201 and the others a 4xx', async () => {
    const w = await world();
    const body = codeSystem(uniqueId('race'));
    const results = await Promise.all(
      [1, 2, 3, 4, 5].map(() => send('post', `/orgs/${w.org}/CodeSystem`, body, w.admin)),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses[0]).toBe(201);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.slice(1).every((s) => s >= 400 && s < 500)).toBe(true);
    const read = await get(`/orgs/${w.org}/CodeSystem/${body.id}/version/0.1`, w.admin);
    expect(codes(read.body)).toEqual(['a', 'b', 'b1']);
  });
});

describe('CodeSystem and ValueSet delete', () => {
  it('removes a source as REST does: 401, 403, then 204 and 404', async () => {
    const w = await world();
    const path = `/orgs/${w.org}/CodeSystem/S`;
    expect((await del(path)).status).toBe(401);
    expect((await del(path, w.outsider)).status).toBe(403);
    expect((await get(path)).status).toBe(200);
    expect((await del(path, w.admin)).status).toBe(204);
    expect((await get(path)).status).toBe(404);
    expect((await get(`/orgs/${w.org}/sources/S/`)).status).toBe(404);
    expect((await del(path, w.admin)).status).toBe(404);
  });

  it('removes a collection by server-wide id', async () => {
    const w = await world();
    const id = uniqueId('vs');
    const made = await send(
      'post',
      `/orgs/${w.org}/ValueSet`,
      {
        resourceType: 'ValueSet',
        id,
        url: `http://example.org/w/${id}`,
        compose: { include: [{ system: w.canonical, version: 'v1', concept: [{ code: 'A' }] }] },
      },
      w.admin,
    );
    expect(made.status).toBe(201);
    const global = `/fhir/ValueSet/org${w.org.length}-${w.org}-${id}`;
    expect((await del(global, w.outsider)).status).toBe(403);
    expect((await del(global, w.admin)).status).toBe(204);
    expect((await get(`/orgs/${w.org}/ValueSet/${id}/version/0.1`, w.admin)).status).toBe(404);
  });
});

describe('ValueSet update (PUT)', () => {
  it('replaces the references from compose and makes the new version', async () => {
    const w = await world();
    const id = uniqueId('vs');
    const url = `http://example.org/w/${id}`;
    const include = (...concept: string[]) => ({
      include: [{ system: w.canonical, version: 'v1', concept: concept.map((code) => ({ code })) }],
    });
    expect(
      (
        await send(
          'post',
          `/orgs/${w.org}/ValueSet`,
          {
            resourceType: 'ValueSet',
            id,
            url,
            version: '1',
            status: 'active',
            compose: include('A'),
          },
          w.admin,
        )
      ).status,
    ).toBe(201);
    const res = await send(
      'put',
      `/orgs/${w.org}/ValueSet/${id}`,
      {
        resourceType: 'ValueSet',
        id,
        url,
        version: '2',
        status: 'active',
        title: 'Second',
        compose: include('B'),
      },
      w.admin,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      version: '2',
      title: 'Second',
      immutable: true,
      meta: { versionId: '2' },
      compose: { include: [{ system: w.canonical, concept: [{ code: 'B', display: 'Beta' }] }] },
    });
    const latest = await get(`/orgs/${w.org}/ValueSet/${id}`);
    expect(latest.body.compose.include[0].concept).toEqual([{ code: 'B', display: 'Beta' }]);
    const first = await get(`/orgs/${w.org}/ValueSet/${id}/version/1`);
    expect(first.body.compose.include[0].concept).toEqual([{ code: 'A', display: 'Alpha' }]);
    const refs = await get(`/orgs/${w.org}/collections/${id}/references/`);
    expect(refs.body).toHaveLength(1);

    // A reference to nothing: 400, and HEAD keeps its references.
    const bad = await send(
      'put',
      `/orgs/${w.org}/ValueSet/${id}`,
      {
        resourceType: 'ValueSet',
        url,
        version: '3',
        compose: include('NoSuch'),
      },
      w.admin,
    );
    expect(bad.status).toBe(400);
    const after = await get(`/orgs/${w.org}/collections/${id}/references/`);
    expect(after.body).toEqual(refs.body);
    expect((await get(`/orgs/${w.org}/ValueSet/${id}/version/3`)).status).toBe(404);
  });
});

describe('ValueSet writes refused or raced', () => {
  it('refuses anonymous and outsiders, and of parallel PUTs naming one new version makes one', async () => {
    const w = await world();
    const id = uniqueId('vs');
    const url = `http://example.org/w/${id}`;
    const body = (code: string, version: string) => ({
      resourceType: 'ValueSet',
      url,
      version,
      status: 'active',
      compose: { include: [{ system: w.canonical, version: 'v1', concept: [{ code }] }] },
    });
    const made = await send('post', `/orgs/${w.org}/ValueSet`, { ...body('A', '1'), id }, w.admin);
    expect(made.status).toBe(201);
    const path = `/orgs/${w.org}/ValueSet/${id}`;
    const references = async (): Promise<string[]> => {
      const res = await get(`/orgs/${w.org}/collections/${id}/references/`, w.admin);
      return (res.body as Array<{ expression: string }>).map((r) => r.expression);
    };
    const before = await references();
    expect((await send('put', path, body('B', '2'))).status).toBe(401);
    expect((await send('put', path, body('B', '2'), w.outsider)).status).toBe(403);
    expect(await references()).toEqual(before);
    expect((await get(`${path}/version/2`, w.admin)).status).toBe(404);

    const results = await Promise.all(
      ['A', 'B', 'A', 'B', 'A'].map((code) => send('put', path, body(code, '2'), w.admin)),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 200).every((s) => s === 409)).toBe(true);
    const winner = results.find((r) => r.status === 200)!;
    const latest = await get(path);
    expect(latest.body.version).toBe('2');
    expect(latest.body.compose).toEqual(winner.body.compose);
  });
});

describe('ConceptMap create, update, delete', () => {
  const conceptMap = (
    id: string,
    w: { canonical: string },
    fields: Record<string, unknown> = {},
  ) => ({
    resourceType: 'ConceptMap',
    id,
    url: `http://example.org/w/${id}`,
    status: 'active',
    group: [
      {
        source: w.canonical,
        target: 'http://loinc.org',
        element: [
          { code: 'A', target: [{ code: '1-1', display: 'One', equivalence: 'equivalent' }] },
          {
            code: 'B',
            target: [
              { code: '2-2', equivalence: 'wider' },
              { code: '3-3', equivalence: 'relatedto' },
            ],
          },
        ],
      },
    ],
    ...fields,
  });

  it('makes a source of mappings: 201, Location, version 0.1 by default; read back', async () => {
    const w = await world();
    const id = uniqueId('cm');
    const res = await send('post', `/orgs/${w.org}/ConceptMap`, conceptMap(id, w), w.admin);
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/orgs/${w.org}/ConceptMap/${id}/version/0.1/`);
    expect(res.body).toMatchObject({
      resourceType: 'ConceptMap',
      id,
      version: '0.1',
      status: 'active',
    });
    const group = res.body.group[0];
    expect(group).toMatchObject({ source: w.canonical, target: 'http://loinc.org' });
    expect(group.element.map((e: { code: string }) => e.code).sort()).toEqual(['A', 'B']);
    const b = group.element.find((e: { code: string }) => e.code === 'B');
    expect(
      b.target.map((x: { code: string; equivalence: string }) => [x.code, x.equivalence]),
    ).toEqual([
      ['2-2', 'wider'],
      ['3-3', 'relatedto'],
    ]);
    const mappings = await get(`/orgs/${w.org}/sources/${id}/mappings/?verbose=true`);
    expect(mappings.body.map((m: { map_type: string }) => m.map_type).sort()).toEqual([
      'NARROWER-THAN',
      'RELATEDTO',
      'SAME-AS',
    ]);
    // The ends that name a source of this server are resolved.
    const same = mappings.body.find((m: { map_type: string }) => m.map_type === 'SAME-AS');
    expect(same).toMatchObject({
      from_concept_code: 'A',
      from_source_url: w.canonical,
      to_concept_code: '1-1',
    });
    const read = await get(`/orgs/${w.org}/ConceptMap/${id}`);
    // (each supertest request has its own port, which the extension URLs carry)
    const portless = (value: unknown) => JSON.stringify(value).replace(/127\.0\.0\.1:\d+/g, 'host');
    expect(portless(read.body.group)).toEqual(portless(res.body.group));
  });

  it('follows the create rules: url required, identifier under /fhir/; 401 and 403', async () => {
    const w = await world();
    const id = uniqueId('cm');
    expect(
      (
        await send(
          'post',
          `/orgs/${w.org}/ConceptMap`,
          conceptMap(id, w, { url: undefined }),
          w.admin,
        )
      ).status,
    ).toBe(400);
    expect((await send('post', '/fhir/ConceptMap', conceptMap(id, w), w.admin)).status).toBe(400);
    expect(
      (
        await send(
          'post',
          `/orgs/${w.org}/ConceptMap`,
          conceptMap(id, w, {
            group: [
              {
                source: w.canonical,
                target: 'x',
                element: [{ code: 'A', target: [{ code: 'q' }] }],
              },
            ],
          }),
          w.admin,
        )
      ).status,
    ).toBe(400);
    expect((await send('post', `/orgs/${w.org}/ConceptMap`, conceptMap(id, w))).status).toBe(401);
    expect(
      (await send('post', `/orgs/${w.org}/ConceptMap`, conceptMap(id, w), w.outsider)).status,
    ).toBe(403);
    expect((await get(`/orgs/${w.org}/sources/${id}/`, w.admin)).status).toBe(404);
    const viaIdentifier = await send(
      'post',
      '/fhir/ConceptMap',
      conceptMap('ignored', w, {
        identifier: { value: `/orgs/${w.org}/ConceptMap/${id}/version/1/` },
      }),
      w.admin,
    );
    expect(viaIdentifier.status).toBe(201);
    expect(viaIdentifier.body).toMatchObject({
      id: `org${w.org.length}-${w.org}-${id}`,
      version: '1',
    });
  });

  it('updates: unchanged mappings stay, new ones are made, left-out ones retired; then deletes', async () => {
    const w = await world();
    const id = uniqueId('cm');
    expect(
      (await send('post', `/orgs/${w.org}/ConceptMap`, conceptMap(id, w), w.admin)).status,
    ).toBe(201);
    const before = await get(`/orgs/${w.org}/sources/${id}/mappings/`);
    const res = await send(
      'put',
      `/orgs/${w.org}/ConceptMap/${id}`,
      conceptMap(id, w, {
        version: '0.2',
        group: [
          {
            source: w.canonical,
            target: 'http://loinc.org',
            element: [
              { code: 'A', target: [{ code: '1-1', display: 'One', equivalence: 'equivalent' }] },
              { code: 'C', target: [{ code: '4-4', equivalence: 'narrower' }] },
            ],
          },
        ],
      }),
      w.admin,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ version: '0.2', meta: { versionId: '0.2' } });
    expect(res.body.group[0].element.map((e: { code: string }) => e.code).sort()).toEqual([
      'A',
      'C',
    ]);
    const after = await get(`/orgs/${w.org}/sources/${id}/mappings/?includeRetired=true`);
    const sameAs = (list: Array<{ map_type: string; id: string }>) =>
      list.find((m) => m.map_type === 'SAME-AS')!;
    expect(sameAs(after.body).id).toBe(sameAs(before.body).id);
    const versions = await get(
      `/orgs/${w.org}/sources/${id}/mappings/${sameAs(before.body).id}/versions/`,
    );
    expect(versions.body).toHaveLength(1);
    expect(after.body.filter((m: { retired: boolean }) => m.retired)).toHaveLength(2);
    // 0.1 keeps its mappings.
    const first = await get(`/orgs/${w.org}/ConceptMap/${id}/version/0.1`);
    expect(first.body.group[0].element.map((e: { code: string }) => e.code).sort()).toEqual([
      'A',
      'B',
    ]);

    expect((await del(`/orgs/${w.org}/ConceptMap/${id}`, w.outsider)).status).toBe(403);
    expect((await del(`/orgs/${w.org}/ConceptMap/${id}`, w.admin)).status).toBe(204);
    expect((await get(`/orgs/${w.org}/sources/${id}/`, w.admin)).status).toBe(404);
  });
});

describe('private content', () => {
  it('never shows a private org’s resources to outsiders, on writes either', async () => {
    const w = await world({ public_access: 'None' });
    const id = uniqueId('cm');
    const made = await send(
      'post',
      `/orgs/${w.org}/ConceptMap`,
      {
        resourceType: 'ConceptMap',
        id,
        url: `http://example.org/w/${id}`,
        status: 'active',
        group: [
          {
            source: w.canonical,
            target: 'http://loinc.org',
            element: [{ code: 'A', target: [{ code: '1', equivalence: 'equivalent' }] }],
          },
        ],
      },
      w.admin,
    );
    expect(made.status).toBe(201);
    for (const type of ['ConceptMap', 'CodeSystem']) {
      const path = `/orgs/${w.org}/${type}/${id}`;
      expect((await get(path)).status).toBe(401);
      expect((await get(path, w.outsider)).status).toBe(403);
      expect(
        (await send('put', path, { resourceType: type, url: 'http://x' }, w.outsider)).status,
      ).toBe(403);
      expect((await del(path, w.outsider)).status).toBe(403);
    }
    const search = await get(
      `/fhir/ConceptMap?url=${encodeURIComponent(`http://example.org/w/${id}`)}`,
      w.outsider,
    );
    expect(search.body.total).toBe(0);
    expect((await get(`/orgs/${w.org}/ConceptMap/${id}`, w.member)).status).toBe(200);
  });
});
