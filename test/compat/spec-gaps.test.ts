import request from 'supertest';
import {
  approveForMatching,
  createOrg,
  createTestApp,
  createUser,
  uniqueId,
  type TestApp,
  type TestUser,
} from '../factories';
import {
  createCollection,
  createConcept,
  createMapping,
  createMappingBetween,
  createRepo,
  createSource,
  createVersion,
  type TestSource,
} from '../factories/content';
import { as } from '../factories/http';

/**
 * Issue 29 items 3–14: spec requirements a walk through both documents found unmet, and the
 * readings decided where the spec is thin (docs/design-choices.md).
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const ids = (body: unknown) => (body as Array<{ id: string }>).map((item) => item.id).sort();

describe('mapping owner filters (spec core §4.4)', () => {
  let owner: TestUser;
  let holder: TestSource;
  let orgSource: TestSource;
  let userSource: { url: string };
  beforeAll(async () => {
    owner = await createUser(t);
    const { id: org } = await createOrg(t, owner);
    holder = await createSource(t, { id: 'Holder' }, { owner, org });
    orgSource = await createSource(t, { id: 'OrgEnd' }, { owner, org });
    userSource = await createRepo(t, `/users/${owner.username}`, owner, { id: 'UserEnd' });
    await createConcept(t, orgSource.url, owner, { id: 'O1' });
    await createConcept(t, userSource.url, owner, { id: 'U1' });
    await createMappingBetween(t, holder.url, owner, [
      'OU',
      'SAME-AS',
      `${orgSource.url}concepts/O1/`,
      `${userSource.url}concepts/U1/`,
    ]);
    await createMappingBetween(t, holder.url, owner, [
      'UO',
      'SAME-AS',
      `${userSource.url}concepts/U1/`,
      `${orgSource.url}concepts/O1/`,
    ]);
  });

  it('narrows a source’s mappings and the global list by the owner of either end', async () => {
    const cases: Array<[string, string[]]> = [
      [`fromConceptOwner=${orgSource.org}`, ['OU']],
      [`toConceptOwner=${orgSource.org}`, ['UO']],
      [`fromConceptOwner=${owner.username}`, ['UO']],
      ['fromConceptOwnerType=Organization', ['OU']],
      ['toConceptOwnerType=User', ['OU']],
      ['fromConceptOwnerType=User&toConceptOwnerType=Organization', ['UO']],
      [`fromConceptOwner=${orgSource.org}&toConceptOwnerType=Organization`, []],
    ];
    for (const [query, expected] of cases) {
      const scoped = await request(t.app).get(`${holder.url}mappings/?${query}`).expect(200);
      expect([query, ids(scoped.body)]).toEqual([query, expected]);
      const global = await request(t.app)
        .get(`/mappings/?${query}&source=Holder&owner=${holder.org}`)
        .expect(200);
      expect([query, ids(global.body)]).toEqual([query, expected]);
    }
  });

  it('refuses an owner type other than Organization or User with 400', async () => {
    const res = await request(t.app).get(`${holder.url}mappings/?toConceptOwnerType=Team`);
    expect(res.status).toBe(400);
    expect(res.body.errors).toHaveProperty('toConceptOwnerType');
  });

  it('answers includeFacets on mapping lists with facets and results (spec core §2.1)', async () => {
    const res = await request(t.app)
      .get(`${holder.url}mappings/`)
      .set('includeFacets', 'true')
      .expect(200);
    expect(ids(res.body.results)).toEqual(['OU', 'UO']);
    expect(res.body.facets.fields.mapType).toEqual([['SAME-AS', 2]]);
    expect(res.body.facets.fields.fromConceptSource).toEqual([
      ['OrgEnd', 1],
      ['UserEnd', 1],
    ]);
    expect(res.body.facets.fields.source).toEqual([['Holder', 2]]);
    const global = await request(t.app)
      .get(`/mappings/?owner=${holder.org}`)
      .set('includeFacets', 'true')
      .expect(200);
    expect(global.body.facets.fields.owner).toEqual([[holder.org, 2]]);
  });
});

describe('contains with a concept or mapping version URL (spec core §4.5)', () => {
  it('finds the collections whose version holds that version, and no others', async () => {
    const source = await createSource(t, { id: 'SrcA' });
    const concept = await createConcept(t, source.url, source.owner, { id: 'C1' });
    const mapping = await createMappingBetween(t, source.url, source.owner, [
      'M1',
      'SAME-AS',
      `${source.url}concepts/C1/`,
      `${source.url}concepts/C1/`,
    ]);
    const holding = await createCollection(
      t,
      { id: 'Holding' },
      { owner: source.owner, org: source.org },
    );
    const other = await createCollection(
      t,
      { id: 'Other' },
      { owner: source.owner, org: source.org },
    );
    await request(t.app)
      .put(`${holding.url}references/`)
      .set(as(source.owner))
      .send({ data: { expressions: [`${source.url}concepts/C1/`, `${source.url}mappings/M1/`] } })
      .expect(200);
    const conceptVersion = String(concept.version_url);
    const mappingVersion = String(mapping.version_url);
    expect(conceptVersion).toMatch(/\/concepts\/C1\/\d+\/$/);
    for (const url of [conceptVersion, mappingVersion, `${source.url}concepts/C1/`]) {
      const res = await request(t.app)
        .get(`/orgs/${source.org}/collections/?contains=${encodeURIComponent(url)}`)
        .expect(200);
      expect([url, ids(res.body)]).toEqual([url, ['Holding']]);
    }
    // A later edit makes another version current: the collection (following HEAD) holds that one.
    const edited = await request(t.app)
      .put(`${source.url}concepts/C1/`)
      .set(as(source.owner))
      .send({
        concept_class: 'Diagnosis',
        names: [{ name: 'Edited', locale: 'en', locale_preferred: true }],
      })
      .expect(200);
    const older = await request(t.app)
      .get(`/orgs/${source.org}/collections/?contains=${encodeURIComponent(conceptVersion)}`)
      .expect(200);
    expect(ids(older.body)).toEqual([]);
    const newer = await request(t.app)
      .get(
        `/orgs/${source.org}/collections/?contains=${encodeURIComponent(String(edited.body.version_url))}`,
      )
      .expect(200);
    expect(ids(newer.body)).toEqual(['Holding']);
    expect(other.id).toBe('Other');
  });
});

describe('$translate parameters (spec ops §4.7)', () => {
  let map: TestSource;
  let url: string;
  beforeAll(async () => {
    const owner = await createUser(t);
    const { id: org } = await createOrg(t, owner);
    url = `http://example.org/cm/${uniqueId('map')}`;
    map = await createSource(t, { id: 'Map', canonical_url: url }, { owner, org });
    await createConcept(t, map.url, owner, { id: 'A' });
    await createMapping(t, map.url, owner, {
      map_type: 'SAME-AS',
      from_concept_url: `${map.url}concepts/A/`,
      to_source_url: 'http://example.org/target',
      to_concept_code: 'T1',
    });
  });

  it('answers 400 without url or without system', async () => {
    const noUrl = await request(t.app).get(`/fhir/ConceptMap/$translate?system=${url}&code=A`);
    expect(noUrl.status).toBe(400);
    expect(JSON.stringify(noUrl.body)).toContain('url');
    const noSystem = await request(t.app).get(`/fhir/ConceptMap/$translate?url=${url}&code=A`);
    expect(noSystem.status).toBe(400);
    expect(JSON.stringify(noSystem.body)).toContain('system');
  });

  it('answers a match with result and message', async () => {
    const res = await request(t.app).get(
      `/fhir/ConceptMap/$translate?url=${url}&system=${url}&code=A`,
    );
    expect(res.status).toBe(200);
    const names = (res.body.parameter as Array<{ name: string }>).map((p) => p.name);
    expect(names).toEqual(['match', 'message', 'result']);
  });
});

describe('version-less FHIR operations read the newest released version (spec ops §2.8, §9.1)', () => {
  it('passes over a newer draft, as the reads do', async () => {
    const owner = await createUser(t);
    const { id: org } = await createOrg(t, owner);
    const url = `http://example.org/cs/${uniqueId('big')}`;
    const source = await createSource(t, { id: 'Big', canonical_url: url }, { owner, org });
    const named = async (name: string) =>
      request(t.app)
        .put(`${source.url}concepts/X/`)
        .set(as(owner))
        .send({ concept_class: 'Misc', names: [{ name, locale: 'en', locale_preferred: true }] });
    await createConcept(t, source.url, owner, {
      id: 'X',
      names: [{ name: 'One', locale: 'en', locale_preferred: true }],
    });
    await createVersion(t, source.url, owner, '1.0', { released: true });
    expect((await named('Two')).status).toBe(200);
    await createVersion(t, source.url, owner, '2.0', { released: true });
    expect((await named('Three')).status).toBe(200);
    await createVersion(t, source.url, owner, '3.0', { released: false });

    const lookup = await request(t.app).get(`/fhir/CodeSystem/$lookup?system=${url}&code=X`);
    expect(lookup.status).toBe(200);
    const display = (lookup.body.parameter as Array<{ name: string; valueString?: string }>).find(
      (p) => p.name === 'display',
    );
    expect(display?.valueString).toBe('Two');
    const read = await request(t.app).get(`/fhir/CodeSystem/?url=${url}`);
    expect(
      read.body.entry.map((e: { resource: { version: string } }) => e.resource.version),
    ).toEqual(['2.0']);
    const named3 = await request(t.app).get(
      `/fhir/CodeSystem/$lookup?system=${url}&code=X&version=3.0`,
    );
    expect(
      (named3.body.parameter as Array<{ name: string; valueString?: string }>).find(
        (p) => p.name === 'display',
      )?.valueString,
    ).toBe('Three');
  });
});

describe('unsupported formats (spec core §1.6)', () => {
  it('answers 406 to a REST read asking only for XML or CSV, JSON otherwise', async () => {
    for (const [accept, format] of [
      ['application/xml', undefined],
      ['text/csv', undefined],
      [undefined, 'xml'],
    ] as const) {
      const req = request(t.app).get(`/orgs/${format ? `?format=${format}` : ''}`);
      if (accept) void req.set('Accept', accept);
      const res = await req;
      expect([accept, format, res.status]).toEqual([accept, format, 406]);
      expect(res.body.message).toBeTruthy();
    }
    for (const accept of ['application/json', '*/*', 'application/json, text/plain, */*']) {
      expect((await request(t.app).get('/orgs/').set('Accept', accept)).status).toBe(200);
    }
    expect((await request(t.app).get('/orgs/?format=json')).status).toBe(200);
  });
});

describe('latest_source_version (spec core §2.6, §2.7)', () => {
  it('names the newest source version holding the concept or mapping version read at HEAD', async () => {
    const source = await createSource(t, { id: 'SrcC' });
    await createConcept(t, source.url, source.owner, { id: 'K' });
    await createMappingBetween(t, source.url, source.owner, [
      'MK',
      'SAME-AS',
      `${source.url}concepts/K/`,
      `${source.url}concepts/K/`,
    ]);
    const before = await request(t.app).get(`${source.url}mappings/MK/`).expect(200);
    expect(before.body.latest_source_version).toBeNull();
    await createVersion(t, source.url, source.owner, 'v1', { released: true });
    await createVersion(t, source.url, source.owner, 'v2');
    const mapping = await request(t.app).get(`${source.url}mappings/MK/`).expect(200);
    expect(mapping.body.latest_source_version).toBe('v2');
    const concept = await request(t.app).get(`${source.url}concepts/K/`).expect(200);
    expect(concept.body.latest_source_version).toBe('v2');
    // An edit after v2: the new version is in no source version yet.
    await request(t.app)
      .put(`${source.url}concepts/K/`)
      .set(as(source.owner))
      .send({
        concept_class: 'Drug',
        names: [{ name: 'K2', locale: 'en', locale_preferred: true }],
      })
      .expect(200);
    const edited = await request(t.app).get(`${source.url}concepts/K/`).expect(200);
    expect(edited.body.latest_source_version).toBeNull();
    const atV1 = await request(t.app).get(`${source.url}v1/concepts/K/`).expect(200);
    expect(atV1.body.latest_source_version).toBe('v2');
  });
});

describe('decided readings (docs/design-choices.md)', () => {
  it('$cascade: a malformed omitIfExistsIn is a 400, an unknown repository a 404', async () => {
    const source = await createSource(t);
    await createConcept(t, source.url, source.owner, { id: 'Q' });
    const cascade = (omit: string) =>
      request(t.app).get(
        `${source.url}HEAD/concepts/Q/$cascade/?omitIfExistsIn=${encodeURIComponent(omit)}&equivalencyMapType=SAME-AS`,
      );
    expect((await cascade('nowhere')).status).toBe(400);
    expect((await cascade(`/orgs/${source.org}/sources/NOPE/`)).status).toBe(404);
    expect((await cascade(source.url)).status).toBe(200);
  });

  it('previous_version HEAD is accepted for the first version only', async () => {
    const source = await createSource(t);
    const first = await request(t.app)
      .post(`${source.url}versions/`)
      .set(as(source.owner))
      .send({ id: 'v1', previous_version: 'HEAD' });
    expect(first.status).toBe(201);
    expect(first.body.previous_version).toBeNull();
    const second = await request(t.app)
      .post(`${source.url}versions/`)
      .set(as(source.owner))
      .send({ id: 'v2', previous_version: 'HEAD' });
    expect(second.status).toBe(400);
    expect(JSON.stringify(second.body)).toContain('v1');
    expect((await request(t.app).get(`${source.url}v2/`)).status).toBe(404);
  });

  it('$match: a row with only concept_class or datatype has nothing to search and finds nothing', async () => {
    const source = await createSource(t);
    await createConcept(t, source.url, source.owner, {
      id: 'D1',
      concept_class: 'Diagnosis',
      datatype: 'N/A',
    });
    await approveForMatching(t, source.owner);
    const res = await request(t.app)
      .post('/concepts/$match/')
      .set(as(source.owner))
      .send({
        target_repo_url: source.url,
        rows: [{ concept_class: 'Diagnosis' }, { datatype: 'N/A' }, { name: 'Name D1' }],
      })
      .expect(200);
    expect(res.body.map((row: { results: unknown[] }) => row.results.length)).toEqual([0, 0, 1]);
  });

  it('errors carry their status in the status line only, with the {code, message} body', async () => {
    const res = await request(t.app).get(`/orgs/${uniqueId('none')}/`);
    expect(res.status).toBe(404);
    expect(res.headers).not.toHaveProperty('status');
    expect(res.body).toEqual({ code: 'Not Found', message: expect.any(String) });
  });

  it('an unknown sort field is a 400 on every list; id sorts concepts and repositories', async () => {
    const source = await createSource(t);
    await createConcept(t, source.url, source.owner, { id: 'B' });
    await createConcept(t, source.url, source.owner, { id: 'A' });
    for (const path of ['/concepts/', '/sources/', `${source.url}concepts/`]) {
      const res = await request(t.app).get(`${path}?sortAsc=nonsense`);
      expect([path, res.status]).toEqual([path, 400]);
    }
    const sorted = await request(t.app).get(`${source.url}concepts/?sortAsc=id`).expect(200);
    expect(sorted.body.map((c: { id: string }) => c.id)).toEqual(['A', 'B']);
    expect((await request(t.app).get('/sources/?sortAsc=id')).status).toBe(200);
  });
});
