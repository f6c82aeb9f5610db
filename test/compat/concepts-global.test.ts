import request from 'supertest';
import { createTestApp, uniqueId, type TestApp } from '../factories';
import { createConcept, createSource, type TestSource } from '../factories/content';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/** An org with a source of concepts whose names carry a unique tag; answers what was made. */
async function sourceWith(
  tag: string,
  concepts: Array<{ id: string; cls: string; name: string; locale?: string }>,
  fields: { sourceAccess?: string; orgAccess?: string } = {},
): Promise<TestSource> {
  const made = await createSource(
    t,
    { id: uniqueId('src'), public_access: fields.sourceAccess ?? 'View' },
    { orgFields: { public_access: fields.orgAccess ?? 'View' } },
  );
  for (const c of concepts) {
    await createConcept(t, made.url, made.owner, {
      id: c.id,
      concept_class: c.cls,
      names: [{ name: `${c.name} ${tag}`, locale: c.locale ?? 'en' }],
    });
  }
  return made;
}

describe('GET /concepts/ (spec core §4.3)', () => {
  it('lists concepts of public sources only, never of a private source or a private org', async () => {
    const tag = uniqueId('glob').replace('-', '');
    const pub = await sourceWith(tag, [{ id: 'P1', cls: 'Diagnosis', name: 'Public' }]);
    await sourceWith(tag, [{ id: 'H1', cls: 'Diagnosis', name: 'Hidden' }], {
      sourceAccess: 'None',
    });
    await sourceWith(tag, [{ id: 'H2', cls: 'Diagnosis', name: 'Hidden' }], { orgAccess: 'None' });
    const res = await request(t.app)
      .get('/concepts/')
      .query({ q: tag })
      .set('Authorization', t.admin);
    expect(res.status).toBe(200);
    expect(res.body.map((c: { id: string }) => c.id)).toEqual(['P1']);
    expect(res.body[0].owner).toBe(pub.org);
    expect(res.headers.num_found).toBe('1');
  });

  it('narrows by org and source, refuses user with org, and has facets', async () => {
    const tag = uniqueId('glob').replace('-', '');
    const a = await sourceWith(tag, [
      { id: 'A1', cls: 'Diagnosis', name: 'Alpha' },
      { id: 'A2', cls: 'Symptom', name: 'Beta', locale: 'fr' },
    ]);
    await sourceWith(tag, [{ id: 'B1', cls: 'Diagnosis', name: 'Gamma' }]);
    const byOrg = await request(t.app)
      .get('/concepts/')
      .query({ q: tag, org: a.org, sortAsc: 'id' });
    expect(byOrg.body.map((c: { id: string }) => c.id)).toEqual(['A1', 'A2']);
    const source = a.url.split('/')[4];
    const bySource = await request(t.app)
      .get('/concepts/')
      .query({ q: tag, source, conceptClass: 'Symptom' });
    expect(bySource.body.map((c: { id: string }) => c.id)).toEqual(['A2']);
    const both = await request(t.app).get('/concepts/').query({ user: 'x', org: 'y' });
    expect(both.status).toBe(400);
    const facets = await request(t.app)
      .get('/concepts/')
      .query({ q: tag })
      .set('includeFacets', 'true');
    expect(facets.body.results).toHaveLength(3);
    expect(facets.body.facets.fields.conceptClass).toEqual([
      ['Diagnosis', 2],
      ['Symptom', 1],
    ]);
    expect(facets.body.facets.fields.locale).toEqual([
      ['en', 2],
      ['fr', 1],
    ]);
    expect(facets.body.facets.fields.retired).toEqual([['false', 3]]);
  });

  it('mapcode finds concepts mapped to <owner>:<source>:<code>; a malformed one is a 400', async () => {
    const tag = uniqueId('map').replace('-', '');
    const src = await sourceWith(tag, [
      { id: 'M1', cls: 'Diagnosis', name: 'Mapped' },
      { id: 'M2', cls: 'Diagnosis', name: 'Unmapped' },
    ]);
    const res = await request(t.app)
      .post(`${src.url}mappings/`)
      .set('Authorization', src.owner.auth)
      .send({
        map_type: 'SAME-AS',
        from_concept_url: `${src.url}concepts/M1/`,
        to_source_url: '/orgs/WHO/sources/ICD-10-WHO/',
        to_concept_code: 'B54',
      });
    expect(res.status).toBe(201);
    const found = await request(t.app)
      .get('/concepts/')
      .query({ q: tag, mapcode: 'WHO:ICD-10-WHO:B54' });
    expect(found.body.map((c: { id: string }) => c.id)).toEqual(['M1']);
    const none = await request(t.app)
      .get('/concepts/')
      .query({ q: tag, mapcode: 'WHO:ICD-10-WHO:A00' });
    expect(none.body).toEqual([]);
    const bad = await request(t.app).get('/concepts/').query({ mapcode: 'only-two:parts' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.mapcode).toBeDefined();
  });

  it('a source list has the same facets', async () => {
    const tag = uniqueId('fac').replace('-', '');
    const src = await sourceWith(tag, [
      { id: 'C1', cls: 'Drug', name: 'One' },
      { id: 'C2', cls: 'Drug', name: 'Two' },
    ]);
    const res = await request(t.app).get(`${src.url}concepts/`).set('includeFacets', 'true');
    expect(res.body.facets.fields.conceptClass).toEqual([['Drug', 2]]);
    expect(res.body.facets.fields.source).toEqual([[src.url.split('/')[4], 2]]);
    expect(res.body.facets.fields.owner).toEqual([[src.org, 2]]);
  });

  it('counts every facet in one statement: an owner adds up its sources, a concept counts once per locale', async () => {
    const tag = uniqueId('one').replace('-', '');
    const a = await sourceWith(tag, [{ id: 'O1', cls: 'Drug', name: 'One' }]);
    const b = await createSource(t, { id: uniqueId('src') }, { owner: a.owner, org: a.org });
    for (const id of ['O2', 'O3']) {
      await createConcept(t, b.url, a.owner, {
        id,
        concept_class: id === 'O2' ? 'Drug' : 'Test',
        // Two names of one locale: the concept counts once for it.
        names: [
          { name: `${id} ${tag}`, locale: 'en', locale_preferred: true },
          { name: `${id} again ${tag}`, locale: 'en' },
          { name: `${id} autre ${tag}`, locale: 'fr' },
        ],
      });
    }
    t.queries.texts = [];
    const res = await request(t.app).get('/concepts/').query({ q: tag, facetsOnly: 'true' });
    const grouped = t.queries.texts.filter((sql) => /GROUP BY/i.test(sql));
    t.queries.texts = undefined;
    expect(grouped).toHaveLength(1);
    const { fields } = res.body.facets as { fields: Record<string, Array<[string, number]>> };
    expect(fields.owner).toEqual([[a.org, 3]]);
    // Most frequent first, then by value.
    expect(fields.source).toEqual([
      [b.url.split('/')[4], 2],
      [a.url.split('/')[4], 1],
    ]);
    expect(fields.conceptClass).toEqual([
      ['Drug', 2],
      ['Test', 1],
    ]);
    expect(fields.locale).toEqual([
      ['en', 3],
      ['fr', 2],
    ]);
  });
});
