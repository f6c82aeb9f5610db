import request from 'supertest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../factories';
import { createConcepts, createSource, createVersion, type TestSource } from '../factories/content';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/** An org with a source holding two concepts, A Malaria and B Fever. */
async function source(fields: Record<string, unknown> = {}): Promise<TestSource> {
  const made = await createSource(t, fields);
  await createConcepts(t, made.url, made.owner, [
    ['A', 'Malaria', 'Diagnosis'],
    ['B', 'Fever', 'Diagnosis'],
  ]);
  return made;
}

const post = (url: string, user: TestUser, body: object) =>
  request(t.app).post(`${url}mappings/`).set('Authorization', user.auth).send(body);

describe('creating mappings (spec core §2.7)', () => {
  it('the golden mapping gets the reference checksums; its ends outside the service stay unresolved', async () => {
    const src = await source();
    const res = await post(src.url, src.owner, {
      map_type: 'SAME-AS',
      from_concept_url: '/orgs/CIEL/sources/CIEL/concepts/116128/',
      to_source_url: '/orgs/WHO/sources/ICD-10-WHO/',
      to_concept_code: 'B54',
    });
    expect(res.status).toBe(201);
    expect(res.body.checksums).toEqual({
      standard: '567e1089cf477dacdd8197b602f6baa2',
      smart: '8ab08b49c02ef40c81af1c2409466013',
    });
    expect(res.body).toMatchObject({
      type: 'Mapping',
      map_type: 'SAME-AS',
      from_concept_code: '116128',
      from_source_url: '/orgs/CIEL/sources/CIEL/',
      from_source_name: null,
      to_concept_code: 'B54',
      to_concept_url: '/orgs/WHO/sources/ICD-10-WHO/concepts/B54/',
      to_concept_name_resolved: null,
      source: 'S',
      versions: 1,
    });
    expect(res.headers.location).toBe(`${src.url}mappings/${res.body.id}/`);
  });

  it('resolves ends inside the service: owner, source name and the concept name', async () => {
    const src = await source();
    const res = await post(src.url, src.owner, {
      map_type: 'NARROWER-THAN',
      from_concept_url: `${src.url}concepts/A/`,
      to_source_url: src.url,
      to_concept_code: 'B',
      sort_weight: 1.5,
    });
    expect(res.body).toMatchObject({
      from_source_owner: src.org,
      from_source_owner_type: 'Organization',
      from_source_name: 'S',
      from_concept_name_resolved: 'Malaria',
      to_concept_url: `${src.url}concepts/B/`,
      to_concept_name_resolved: 'Fever',
      sort_weight: 1.5,
      id: '1',
    });
  });

  it('a canonical URL end resolves to a source registered under it, and stays as given otherwise', async () => {
    const target = await source({
      canonical_url: `http://example.org/fhir/CodeSystem/${Date.now()}`,
    });
    const canonical = (await request(t.app).get(target.url)).body.canonical_url as string;
    const src = await source();
    const inside = await post(src.url, src.owner, {
      map_type: 'SAME-AS',
      from_concept_url: `${src.url}concepts/A/`,
      to_source_url: canonical,
      to_concept_code: 'B',
    });
    expect(inside.body).toMatchObject({
      to_source_url: canonical,
      to_source_name: 'S',
      to_concept_name_resolved: 'Fever',
    });
    const outside = await post(src.url, src.owner, {
      map_type: 'SAME-AS',
      from_concept_url: `${src.url}concepts/A/`,
      to_source_url: 'http://snomed.info/sct',
      to_concept_code: '61462000',
    });
    expect(outside.body).toMatchObject({
      to_source_url: 'http://snomed.info/sct',
      to_source_name: null,
      to_concept_url: null,
    });
  });

  it('answers 400 for a missing map type, a missing end, a piped canonical URL and a duplicate', async () => {
    const src = await source();
    const noType = await post(src.url, src.owner, {
      from_concept_url: `${src.url}concepts/A/`,
      to_source_url: src.url,
      to_concept_code: 'B',
    });
    expect(noType.body.errors.map_type).toBeDefined();
    const noEnd = await post(src.url, src.owner, {
      map_type: 'SAME-AS',
      from_concept_url: `${src.url}concepts/A/`,
    });
    expect(noEnd.body.errors.to_concept_url).toBeDefined();
    const piped = await post(src.url, src.owner, {
      map_type: 'SAME-AS',
      from_concept_url: `${src.url}concepts/A/`,
      to_source_url: 'http://snomed.info/sct|2024',
      to_concept_code: '1',
    });
    expect(piped.body.errors.to_source_url[0]).toMatch(/piped/);
    const body = {
      map_type: 'SAME-AS',
      from_concept_url: `${src.url}concepts/A/`,
      to_source_url: src.url,
      to_concept_code: 'B',
    };
    expect((await post(src.url, src.owner, body)).status).toBe(201);
    const dup = await post(src.url, src.owner, body);
    expect(dup.status).toBe(400);
    expect(dup.body.message).toMatch(/must be unique/);
  });

  it('a reader who may not edit gets 403, an anonymous caller 401', async () => {
    const src = await source();
    const reader = await createUser(t);
    const body = {
      map_type: 'SAME-AS',
      from_concept_url: `${src.url}concepts/A/`,
      to_source_url: src.url,
      to_concept_code: 'B',
    };
    expect((await post(src.url, reader, body)).status).toBe(403);
    expect((await request(t.app).post(`${src.url}mappings/`).send(body)).status).toBe(401);
    expect((await request(t.app).get(`${src.url}mappings/`)).body).toEqual([]);
  });
  it('an end in a source that was deleted reads as an end outside the service, as does its map', async () => {
    const target = await source({ id: 'GONE' });
    const src = await source();
    const made = await post(src.url, src.owner, {
      map_type: 'SAME-AS',
      from_concept_url: `${src.url}concepts/A/`,
      to_concept_url: `${target.url}concepts/B/`,
    });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ to_source_name: 'GONE', to_concept_name_resolved: 'Fever' });
    const url = `${src.url}mappings/${made.body.id}/`;
    const deleted = await request(t.app).delete(target.url).set('Authorization', t.admin);
    expect(deleted.status).toBe(204);
    const read = await request(t.app).get(url).set('Authorization', src.owner.auth);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      to_source_url: target.url,
      to_source_name: null,
      to_source_owner: null,
      to_concept_code: 'B',
      to_concept_url: `${target.url}concepts/B/`,
      to_concept_name_resolved: null,
    });
    // Editing it keeps the end as given, and its map reads it the same way.
    const edited = await request(t.app)
      .put(url)
      .set('Authorization', src.owner.auth)
      .send({ sort_weight: 2 });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ to_source_url: target.url, to_source_name: null });
    const map = await request(t.app)
      .get(`/orgs/${src.org}/ConceptMap/${src.id}/version/HEAD`)
      .set('Authorization', src.owner.auth);
    expect(map.status).toBe(200);
    expect(JSON.stringify(map.body)).toContain(`${target.url}`.replace(/\/$/, ''));
  });
});

describe('mapping versions', () => {
  it('an edit makes a version, an identical one answers 208, retire and reactivate flip retired', async () => {
    const src = await source();
    const created = await post(src.url, src.owner, {
      map_type: 'SAME-AS',
      from_concept_url: `${src.url}concepts/A/`,
      to_source_url: src.url,
      to_concept_code: 'B',
    });
    const url = `${src.url}mappings/${created.body.id}/`;
    const same = await request(t.app)
      .patch(url)
      .set('Authorization', src.owner.auth)
      .send({ map_type: 'SAME-AS' });
    expect(same.status).toBe(208);
    const edited = await request(t.app)
      .patch(url)
      .set('Authorization', src.owner.auth)
      .send({ map_type: 'BROADER-THAN' });
    expect(edited.body).toMatchObject({
      map_type: 'BROADER-THAN',
      versions: 2,
      to_concept_code: 'B',
    });
    expect((await request(t.app).delete(url).set('Authorization', src.owner.auth)).status).toBe(
      204,
    );
    expect((await request(t.app).delete(url).set('Authorization', src.owner.auth)).status).toBe(
      400,
    );
    expect((await request(t.app).get(src.url)).body.active_mappings).toBe(0);
    expect(
      (await request(t.app).put(`${url}reactivate/`).set('Authorization', src.owner.auth)).status,
    ).toBe(204);
    const versions = await request(t.app).get(`${url}versions/`);
    expect(versions.body.map((v: { retired: boolean }) => v.retired)).toEqual([
      false,
      true,
      false,
      false,
    ]);
    // A mapping version by its id is an administrative read (spec core §9.3).
    const first = await request(t.app)
      .get(`${url}${created.body.version}/`)
      .set('Authorization', src.owner.auth);
    expect(first.body.map_type).toBe('SAME-AS');
  });

  it('a source version keeps the mappings as they were; writes through it are 405', async () => {
    const src = await source();
    const created = await post(src.url, src.owner, {
      map_type: 'SAME-AS',
      from_concept_url: `${src.url}concepts/A/`,
      to_source_url: src.url,
      to_concept_code: 'B',
    });
    await createVersion(t, src.url, src.owner, 'v1');
    await request(t.app)
      .patch(`${src.url}mappings/${created.body.id}/`)
      .set('Authorization', src.owner.auth)
      .send({ map_type: 'BROADER-THAN' });
    expect(
      (await request(t.app).get(`${src.url}v1/mappings/${created.body.id}/`)).body.map_type,
    ).toBe('SAME-AS');
    expect((await request(t.app).get(`${src.url}v1/mappings/`)).body).toHaveLength(1);
    expect((await request(t.app).get(`${src.url}v1/`)).body.active_mappings).toBe(1);
    const write = await request(t.app)
      .patch(`${src.url}v1/mappings/${created.body.id}/`)
      .set('Authorization', src.owner.auth)
      .send({ map_type: 'X' });
    expect(write.status).toBe(405);
  });
});

describe('mapping lists (spec core §4.4)', () => {
  it('filters by map type, ends and text, and lists a concept’s mappings and inverse mappings', async () => {
    const src = await source();
    const a2b = {
      map_type: 'SAME-AS',
      from_concept_url: `${src.url}concepts/A/`,
      to_source_url: src.url,
      to_concept_code: 'B',
    };
    const b2a = {
      map_type: 'BROADER-THAN',
      from_concept_url: `${src.url}concepts/B/`,
      to_source_url: src.url,
      to_concept_code: 'A',
    };
    const ext = {
      map_type: 'SAME-AS',
      from_concept_url: `${src.url}concepts/A/`,
      to_source_url: 'http://snomed.info/sct',
      to_concept_code: '38362002',
    };
    for (const body of [a2b, b2a, ext])
      expect((await post(src.url, src.owner, body)).status).toBe(201);
    const codes = async (path: string, query: Record<string, string> = {}): Promise<string[]> =>
      ((await request(t.app).get(path).query(query)).body as Array<{ to_concept_code: string }>)
        .map((m) => m.to_concept_code)
        .sort();
    expect(await codes(`${src.url}mappings/`, { mapType: 'SAME-AS' })).toEqual(['38362002', 'B']);
    expect(await codes(`${src.url}mappings/`, { fromConcept: 'B' })).toEqual(['A']);
    expect(await codes(`${src.url}mappings/`, { toConceptSource: 'S' })).toEqual(['A', 'B']);
    expect(await codes(`${src.url}mappings/`, { q: '38362002' })).toEqual(['38362002']);
    expect(await codes(`${src.url}concepts/A/mappings/`)).toEqual(['38362002', 'B']);
    expect(
      await codes(`${src.url}concepts/A/mappings/`, { includeInverseMappings: 'true' }),
    ).toEqual(['38362002', 'A', 'B']);
  });
});

describe('a concept with its mappings (spec core §4.3)', () => {
  it('includes direct mappings by default, inverse ones on request, as of the version read', async () => {
    const src = await source();
    await post(src.url, src.owner, {
      map_type: 'SAME-AS',
      from_concept_url: `${src.url}concepts/A/`,
      to_source_url: src.url,
      to_concept_code: 'B',
    });
    await createVersion(t, src.url, src.owner, 'v1');
    await post(src.url, src.owner, {
      map_type: 'BROADER-THAN',
      from_concept_url: `${src.url}concepts/B/`,
      to_source_url: src.url,
      to_concept_code: 'A',
    });
    const a = await request(t.app)
      .get(`${src.url}concepts/A/`)
      .query({ includeInverseMappings: 'true' });
    expect(a.body.mappings.map((m: { to_concept_code: string }) => m.to_concept_code)).toEqual([
      'B',
    ]);
    expect(
      a.body.inverse_mappings.map((m: { from_concept_code: string }) => m.from_concept_code),
    ).toEqual(['B']);
    const none = await request(t.app)
      .get(`${src.url}concepts/A/`)
      .query({ includeMappings: 'false' });
    expect(none.body.mappings).toBeUndefined();
    const old = await request(t.app)
      .get(`${src.url}v1/concepts/A/`)
      .query({ includeInverseMappings: 'true' });
    expect(old.body.inverse_mappings).toEqual([]);
  });
});

describe('GET /mappings/ (spec core §4.4)', () => {
  it('lists mappings of public sources only, narrowed by owner and map type', async () => {
    const pub = await source();
    const priv = await source({ public_access: 'None' });
    const tag = `T${Date.now()}`;
    for (const src of [pub, priv]) {
      await post(src.url, src.owner, {
        map_type: 'SAME-AS',
        from_concept_url: `${src.url}concepts/A/`,
        to_source_url: 'http://snomed.info/sct',
        to_concept_code: tag,
      });
    }
    const res = await request(t.app)
      .get('/mappings/')
      .query({ toConcept: tag })
      .set('Authorization', t.admin);
    expect(res.body.map((m: { owner: string }) => m.owner)).toEqual([pub.org]);
    const byOwner = await request(t.app)
      .get('/mappings/')
      .query({ toConcept: tag, owner: pub.org, mapType: 'SAME-AS' });
    expect(byOwner.body).toHaveLength(1);
    const other = await request(t.app).get('/mappings/').query({ toConcept: tag, owner: priv.org });
    expect(other.body).toEqual([]);
    expect((await request(t.app).get('/mappings/').query({ ownerType: 'Robot' })).status).toBe(400);
  });
});

describe('ids assigned to mappings by the source (spec core §4.6)', () => {
  const ends = (to: string) => ({
    map_type: 'SAME-AS',
    from_source_url: '/orgs/X/sources/Y/',
    from_concept_code: 'A',
    to_source_url: 'http://example.org/codes',
    to_concept_code: to,
  });

  it('sequential external ids start from the configured number and move past those in use', async () => {
    const src = await source({
      autoid_mapping_external_id: 'sequential',
      autoid_mapping_external_id_start_from: 700,
    });
    const first = await post(src.url, src.owner, ends('1'));
    expect(first.status).toBe(201);
    expect(first.body.external_id).toBe('700');
    const given = await post(src.url, src.owner, { ...ends('2'), external_id: '900' });
    expect(given.body.external_id).toBe('900');
    expect((await post(src.url, src.owner, ends('3'))).body.external_id).toBe('901');
    const named = await post(src.url, src.owner, { ...ends('4'), external_id: 'kept' });
    expect(named.body.external_id).toBe('kept');
    expect((await post(src.url, src.owner, ends('5'))).body.external_id).toBe('902');
  });

  it('uuid external ids stay uuids, and without a scheme none is assigned', async () => {
    const uuid = await source({ autoid_mapping_external_id: 'uuid' });
    expect((await post(uuid.url, uuid.owner, ends('1'))).body.external_id).toMatch(
      /^[0-9a-f-]{36}$/,
    );
    const none = await source();
    expect((await post(none.url, none.owner, ends('1'))).body.external_id).toBeNull();
  });
});
