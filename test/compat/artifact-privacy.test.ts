import request from 'supertest';
import { createTestApp, createUser, type TestApp } from '../factories';
import { createConcept, createRepo, createSource } from '../factories/content';
import {
  P1,
  S1,
  SECRET,
  privacyWorld,
  secretsIn,
  type PrivacyWorld,
} from '../factories/privacy-world';

/**
 * Issue 23: an artifact computed once and served to many (an expansion, a rendered FHIR resource,
 * a summary, a sync page, an event, a cascade, a clone, facets, a report) is as private as its
 * most restrictive reader. Each is read first by alice (a member of A, warming any cache), then
 * anonymously and by carol (signed in, not a member): neither may see the private source's
 * content (`SECRET`), behind the public collection, the public source's mappings or a report.
 */
let t: TestApp;
let w: PrivacyWorld;

beforeAll(async () => {
  t = await createTestApp();
  w = await privacyWorld(t);
});

afterAll(async () => {
  await t.close();
});

type Who = 'alice' | 'anonymous' | 'carol';
const OUTSIDERS: Who[] = ['anonymous', 'carol'];

function authOf(who: Who): string | undefined {
  return who === 'alice' ? w.alice.auth : who === 'carol' ? w.carol.auth : undefined;
}

function get(path: string, who: Who, headers: Record<string, string> = {}) {
  const req = request(t.app).get(path).set(headers);
  const auth = authOf(who);
  return auth ? req.set('Authorization', auth) : req;
}

function post(path: string, who: Who, body: unknown) {
  const req = request(t.app).post(path).set('Content-Type', 'application/json');
  const auth = authOf(who);
  return (auth ? req.set('Authorization', auth) : req).send(JSON.stringify(body));
}

async function graphql(who: Who, query: string, variables: Record<string, unknown> = {}) {
  return post('/graphql', who, { query, variables });
}

/** The secret strings an answer shows (its whole text: body, errors and all). */
const leaked = (res: { text: string }): string[] => secretsIn(res.text);

/** The default expansion's mnemonic of pubcol v1, as alice reads it. */
async function expansionOfV1(): Promise<string> {
  const res = await get(`${w.pubcol.url}v1/expansions/`, 'alice').expect(200);
  const list = res.body as Array<{ id: string }>;
  expect(list).toHaveLength(1);
  return list[0].id;
}

describe('REST reads of the public collection', () => {
  const paths = (e: string): string[] => [
    `${w.pubcol.url}v1/expansions/${e}/concepts/?verbose=true&includeExtras=true`,
    `${w.pubcol.url}v1/expansions/${e}/mappings/?verbose=true&includeExtras=true`,
    `${w.pubcol.url}v1/expansions/${e}/`,
    `${w.pubcol.url}v1/concepts/?verbose=true&includeExtras=true`,
    `${w.pubcol.url}v1/mappings/?verbose=true&includeExtras=true`,
    `${w.pubcol.url}concepts/?verbose=true&includeExtras=true`,
    `${w.pubcol.url}mappings/?verbose=true&includeExtras=true`,
    // updatedSince sync pages (test/compat/sync.test.ts)
    `${w.pubcol.url}v1/?includeConcepts=true&includeMappings=true&includeRetired=true&limit=0&updatedSince=2000-01-01T00:00:00Z`,
    `${w.pubcol.url}?includeConcepts=true&includeMappings=true&includeRetired=true&limit=0&updatedSince=2000-01-01T00:00:00Z`,
    `${w.pubcol.url}v1/?includeConcepts=true&includeMappings=true&verbose=true`,
    `${w.pubcol.url}v1/summary/?verbose=true&distribution=concept_class,name_locale,concepts_extras,map_type`,
    `${w.pubcol.url}summary/?verbose=true&distribution=concept_class,name_locale,concepts_extras,map_type`,
    `${w.pubcol.url}v1/concepts/${P1}/$cascade/?cascadeMappings=true&includeMappings=true`,
    `${w.pubcol.url}v1/concepts/${P1}/$cascade/?view=hierarchy&cascadeMappings=true`,
    `${w.pubcol.url}v1/concepts/${S1}/$cascade/?cascadeMappings=true&includeMappings=true`,
    `${w.secret.url}concepts/${S1}/$cascade/`,
  ];

  it('alice sees S1 and the secret mapping in the expansion, the member pages and a sync page', async () => {
    const e = await expansionOfV1();
    for (const path of [
      `${w.pubcol.url}v1/expansions/${e}/concepts/?verbose=true`,
      `${w.pubcol.url}v1/concepts/${S1}/`,
      `${w.pubcol.url}v1/mappings/?verbose=true`,
      `${w.pubcol.url}v1/?includeConcepts=true&includeMappings=true&limit=0&updatedSince=2000-01-01T00:00:00Z`,
    ]) {
      const res = await get(path, 'alice');
      expect([path, res.status]).toEqual([path, 200]);
      expect([path, leaked(res).length > 0]).toEqual([path, true]);
    }
  });

  it.each(OUTSIDERS)('%s sees none of the private source through them', async (who) => {
    const e = await expansionOfV1();
    for (const path of paths(e)) {
      // alice first: whatever is computed once is computed for her
      await get(path, 'alice');
      const res = await get(path, who);
      expect([path, res.status < 500, leaked(res)]).toEqual([path, true, []]);
    }
  });

  it.each(OUTSIDERS)(
    '%s: references show what they name, nothing they resolved to',
    async (who) => {
      const refs = await get(`${w.pubcol.url}v1/references/?verbose=true`, 'alice').expect(200);
      const ids = (refs.body as Array<{ id: string }>).map((r) => r.id);
      expect(ids).toHaveLength(3);
      for (const path of [
        `${w.pubcol.url}v1/references/?verbose=true`,
        `${w.pubcol.url}references/?verbose=true`,
        ...ids.map((id) => `${w.pubcol.url}v1/references/${id}/?verbose=true`),
        ...ids.map((id) => `${w.pubcol.url}references/${id}/`),
      ]) {
        await get(path, 'alice');
        const res = await get(path, who);
        // an expression names the mapping by its id, as it names S1 by its code
        const shown = leaked(res).filter((s) => s !== SECRET.mapping);
        expect([path, res.status, shown]).toEqual([path, 200, []]);
      }
    },
  );

  it.each(OUTSIDERS)('%s: a private member reads as an absent one', async (who) => {
    for (const [resource, id] of [
      ['concepts', S1],
      ['mappings', SECRET.mapping],
    ]) {
      const path = `${w.pubcol.url}v1/${resource}/${id}/`;
      await get(path, 'alice').expect(200);
      const res = await get(path, who).expect(404);
      const absent = await get(`${w.pubcol.url}v1/${resource}/NOSUCH/`, who).expect(404);
      expect(res.text.replaceAll(id, 'NOSUCH')).toBe(absent.text);
    }
  });

  it.each(OUTSIDERS)('%s: counts leave out the members it may not see', async (who) => {
    const mine = await get(`${w.pubcol.url}v1/summary/`, 'alice').expect(200);
    expect(mine.body).toMatchObject({ active_concepts: 2, active_mappings: 1 });
    const theirs = await get(`${w.pubcol.url}v1/summary/`, who).expect(200);
    expect(theirs.body).toMatchObject({ active_concepts: 1, active_mappings: 0 });
    const detail = await get(`${w.pubcol.url}v1/`, who).expect(200);
    expect(detail.body).toMatchObject({ active_concepts: 1, active_mappings: 0 });
  });
});

describe('REST reads around the public source', () => {
  const paths = (): string[] => [
    `${w.open.url}concepts/${P1}/?includeMappings=true&includeInverseMappings=true&verbose=true`,
    `${w.open.url}v1/concepts/${P1}/?includeMappings=true&includeInverseMappings=true`,
    `${w.open.url}concepts/${P1}/mappings/?verbose=true`,
    `${w.open.url}mappings/?verbose=true&includeExtras=true`,
    `${w.open.url}mappings/OPENMAP/?verbose=true`,
    `${w.open.url}v1/mappings/?verbose=true`,
    `${w.open.url}concepts/${P1}/$cascade/?cascadeMappings=true&includeMappings=true`,
    `${w.open.url}HEAD/concepts/${P1}/$cascade/?view=hierarchy&reverse=true`,
    `${w.open.url}HEAD/concepts/${P1}/$cascade/?reverse=true&includeMappings=true`,
    `${w.open.url}v1/?includeConcepts=true&includeMappings=true&limit=0&updatedSince=2000-01-01T00:00:00Z`,
    `${w.open.url}summary/?verbose=true&distribution=concept_class,map_type`,
    `/mappings/?q=${SECRET.mapping}&verbose=true`,
    `/concepts/?q=Quokkaphobic&verbose=true`,
  ];

  it.each(OUTSIDERS)('%s sees none of the private source through them', async (who) => {
    for (const path of paths()) {
      await get(path, 'alice');
      const res = await get(path, who);
      expect([path, res.status < 500, leaked(res)]).toEqual([path, true, []]);
    }
  });

  it.each(OUTSIDERS)('%s: search facets count no private content', async (who) => {
    const facets = { includeFacets: 'true' };
    for (const path of [
      `/concepts/?q=Quokkaphobic`,
      `/concepts/`,
      `${w.pubcol.url}v1/concepts/`,
      `${w.pubcol.url}concepts/`,
      `${w.pubcol.url}v1/mappings/`,
      `${w.open.url}mappings/`,
      `/mappings/`,
      `/orgs/${w.org}/repos/`,
      `/repos/`,
    ]) {
      const mine = await get(path, 'alice', facets);
      expect([path, mine.status]).toEqual([path, 200]);
      const res = await get(path, who, facets);
      expect([path, res.status, leaked(res)]).toEqual([path, 200, []]);
      // a facet by source (or owner's repository) names no private one
      expect([path, res.text.includes('["secret",')]).toEqual([path, false]);
    }
    // global searches show no private content to anyone; the collection's members do, to alice
    const all = await get(`${w.pubcol.url}v1/concepts/`, 'alice', facets);
    expect(all.text).toContain(SECRET.conceptClass);
    expect(all.text).toContain('["secret",');
  });

  it.each(OUTSIDERS)('%s: $resolveReference resolves no private concept', async (who) => {
    const body = [
      `${w.secret.url}concepts/${S1}/`,
      `${w.secret.url}`,
      `${w.mine.url}concepts/${S1}/`,
    ];
    const mine = await post('/$resolveReference/', 'alice', body).expect(200);
    expect(JSON.stringify(mine.body)).toContain(w.secret.url);
    const res = await post('/$resolveReference/', who, body).expect(200);
    expect(leaked(res)).toEqual([]);
    for (const entry of res.body as Array<{ resolved: boolean }>)
      expect(entry.resolved).toBe(false);
  });
});

describe('updatedSince sync pages', () => {
  it('report the removal of a private member only to those who may see it', async () => {
    const col = await createRepo(t, `/orgs/${w.org}`, w.alice, { id: 'pub2' }, 'collections');
    const s1 = `${w.secret.url}concepts/${S1}/`;
    const secretMapping = `${w.secret.url}mappings/${SECRET.mapping}/`;
    // a member of the private source stays: removals are reported from member sources only
    await createConcept(t, w.secret.url, w.alice, { id: 'STAYS' });
    const stays = `${w.secret.url}concepts/STAYS/`;
    await request(t.app)
      .put(`${col.url}references/`)
      .set('Authorization', w.alice.auth)
      .send({ data: { expressions: [s1, secretMapping, stays, `${w.open.url}concepts/${P1}/`] } })
      .expect(200);
    await new Promise((r) => setTimeout(r, 50));
    const since = new Date().toISOString();
    await request(t.app)
      .delete(`${col.url}references/`)
      .set('Authorization', w.alice.auth)
      .send({ expressions: [s1, secretMapping] })
      .expect(204);
    const query = `updatedSince=${since}&includeRetired=true&limit=0&verbose=true`;
    const paths = [
      `${col.url}?includeConcepts=true&includeMappings=true&${query}`,
      `${col.url}concepts/?${query}`,
      `${col.url}mappings/?${query}`,
    ];
    for (const path of paths) {
      const mine = await get(path, 'alice').expect(200);
      expect([path, mine.text.includes(S1) || mine.text.includes(SECRET.mapping)]).toEqual([
        path,
        true,
      ]);
    }
    const gq = `query($url: String!, $since: DateTimeISO) { collection(url: $url) {
      concepts(updatedSince: $since, includeRetired: true, limit: 20) { items { id displayName retired } }
      mappings(updatedSince: $since, includeRetired: true, limit: 20) { items { id retired } } } }`;
    for (const who of OUTSIDERS) {
      for (const path of paths) {
        const res = await get(path, who).expect(200);
        expect([path, leaked(res), res.text.includes(S1)]).toEqual([path, [], false]);
      }
      const res = await graphql(who, gq, { url: col.url, since });
      expect(res.body.errors).toBeUndefined();
      expect([leaked(res), res.text.includes(S1)]).toEqual([[], false]);
    }
  });
});

describe('$clone into a source of the caller', () => {
  it('copies what the cascade reaches only from sources the caller may read', async () => {
    const dest = await createRepo(t, '/user', w.carol, { id: 'dest' });
    const res = await request(t.app)
      .post(`${dest.url}concepts/$clone/`)
      .set('Authorization', w.carol.auth)
      .send({
        expressions: [`${w.open.url}concepts/${P1}/`, `${w.secret.url}concepts/${S1}/`],
        parameters: { cascadeMappings: true, cascadeLevels: '*' },
      });
    expect(res.status).toBeLessThan(500);
    expect(leaked(res)).toEqual([]);
    const concepts = await get(`${dest.url}concepts/?verbose=true&limit=0`, 'carol').expect(200);
    expect(leaked(concepts)).toEqual([]);
    expect((concepts.body as Array<{ id: string }>).map((c) => c.id)).not.toContain(S1);
  });
});

describe('what carol makes from the private source', () => {
  it('a mapping of hers to S1 stores nothing of S1 but what she gave', async () => {
    const mine = await createRepo(t, '/user', w.carol, { id: 'maps' });
    const to = `${w.secret.url}concepts/${S1}/`;
    const made = await request(t.app)
      .post(`${mine.url}mappings/`)
      .set('Authorization', w.carol.auth)
      .send({ id: 'M', map_type: 'SAME-AS', from_concept_url: to, to_concept_url: to });
    expect(leaked(made)).toEqual([]);
    for (const who of ['alice', ...OUTSIDERS] as Who[]) {
      const res = await get(`${mine.url}mappings/?verbose=true`, who).expect(200);
      expect([who, leaked(res)]).toEqual([who, []]);
    }
  });

  it('a collection of hers referencing S1 holds nothing of it for her or anyone', async () => {
    const col = await createRepo(t, '/user', w.carol, { id: 'refs' }, 'collections');
    const added = await request(t.app)
      .put(`${col.url}references/`)
      .set('Authorization', w.carol.auth)
      .send({ data: { expressions: [`${w.secret.url}concepts/${S1}/`, `${w.secret.url}`] } });
    expect(added.status).toBeLessThan(500);
    expect(leaked(added)).toEqual([]);
    await request(t.app)
      .post(`${col.url}versions/`)
      .set('Authorization', w.carol.auth)
      .send({ id: 'v1', released: true })
      .expect(201);
    for (const who of OUTSIDERS) {
      for (const path of [
        `${col.url}concepts/?verbose=true`,
        `${col.url}v1/concepts/?verbose=true`,
        `${col.url}v1/summary/?verbose=true&distribution=concept_class,concepts_extras`,
        `${col.url}references/`,
        `${col.url}v1/expansions/`,
      ]) {
        const res = await get(path, who === 'carol' ? 'carol' : 'anonymous');
        expect([path, res.status < 500, leaked(res)]).toEqual([path, true, []]);
      }
    }
  });

  it('her import into the private source reports nothing of it', async () => {
    const line = {
      type: 'Concept',
      owner: w.org,
      owner_type: 'Organization',
      source: 'secret',
      id: S1,
      concept_class: 'Misc',
      names: [{ name: 'Carol tries', locale: 'en', locale_preferred: true }],
    };
    const started = await request(t.app)
      .post('/importers/bulk-import/?update_if_exists=true')
      .set('Authorization', w.carol.auth)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(line));
    expect(started.status).toBe(202);
    let res = await get(`/importers/bulk-import/?task=${started.body.id}`, 'carol');
    for (let i = 0; i < 300 && !['SUCCESS', 'FAILURE'].includes(res.body.state); i += 1) {
      await new Promise((r) => setTimeout(r, 100));
      res = await get(`/importers/bulk-import/?task=${started.body.id}`, 'carol');
    }
    expect(['SUCCESS', 'FAILURE']).toContain(res.body.state);
    expect(leaked(res)).toEqual([]);
    const s1 = await get(`${w.secret.url}concepts/${S1}/`, 'alice').expect(200);
    expect(s1.body.display_name).toBe(SECRET.name);
  });
});

describe('lists with counts', () => {
  it.each(OUTSIDERS)(
    '%s: counts of the collection in lists leave out private members',
    async (who) => {
      const versions = await get(
        `${w.pubcol.url}versions/?includeSummary=true&verbose=true`,
        who,
      ).expect(200);
      const v1 = (versions.body as Array<{ id: string; summary?: Record<string, unknown> }>).find(
        (v) => v.id === 'v1',
      );
      expect(v1?.summary).toMatchObject({ active_concepts: 1, active_mappings: 0 });
      const listed = await get(
        `/orgs/${w.org}/collections/?includeSummary=true&verbose=true`,
        who,
      ).expect(200);
      const pubcol = (listed.body as Array<{ id: string; summary?: Record<string, unknown> }>).find(
        (c) => c.id === 'pubcol',
      );
      // HEAD follows its references: S1 and P1, of which an outsider sees P1
      expect(pubcol?.summary).toMatchObject({ active_concepts: 1 });
      const expansions = await get(`${w.pubcol.url}v1/expansions/?includeSummary=true`, who).expect(
        200,
      );
      expect(leaked(expansions)).toEqual([]);
      expect((expansions.body as Array<{ summary: unknown }>)[0].summary).toMatchObject({
        active_concepts: 1,
        active_mappings: 0,
      });
    },
  );
});

describe('bulk-import reports', () => {
  it('a report is read by the one who started it, nobody else', async () => {
    const line = {
      type: 'Concept',
      owner: w.org,
      owner_type: 'Organization',
      source: 'secret',
      id: 'S2SECRET',
      concept_class: 'Misc',
      names: [{ name: `${SECRET.name} again`, locale: 'en', locale_preferred: true }],
    };
    const started = await request(t.app)
      .post('/importers/bulk-import/')
      .set('Authorization', w.alice.auth)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(line));
    expect(started.status).toBe(202);
    const id = started.body.id as string;
    for (let i = 0; i < 300; i += 1) {
      const res = await get(`/importers/bulk-import/?task=${id}`, 'alice').expect(200);
      if (res.body.state === 'SUCCESS' || res.body.state === 'FAILURE') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const path of [`/importers/bulk-import/?task=${id}`, `/tasks/${id}/`]) {
      for (const who of OUTSIDERS) {
        const res = await get(path, who);
        expect([path, who, res.status >= 400, leaked(res)]).toEqual([path, who, true, []]);
      }
    }
    const gq = `query($id: ID!) { bulkImport(taskId: $id) { report task { id } } }`;
    for (const who of OUTSIDERS) {
      const res = await graphql(who, gq, { id });
      expect(res.body.errors?.length ?? 0).toBeGreaterThan(0);
      expect(leaked(res)).toEqual([]);
    }
  });
});

describe('events', () => {
  it('an event about a repository follows what the repository is now, not what it was', async () => {
    const later = await createSource(t, { id: 'later' }, { owner: w.alice, org: w.org });
    const made = await get('/events/?limit=100', 'anonymous').expect(200);
    expect(JSON.stringify(made.body)).toContain(later.url);
    await request(t.app)
      .put(later.url)
      .set('Authorization', w.alice.auth)
      .send({ public_access: 'None' })
      .expect(200);
    for (const who of OUTSIDERS) {
      for (const path of [
        '/events/?limit=100',
        `/users/${w.alice.username}/events/?scopes=all&limit=100`,
      ]) {
        const res = await get(path, who).expect(200);
        expect([path, who, res.text.includes(later.url)]).toEqual([path, who, false]);
      }
    }
    const hers = await get(`/users/${w.alice.username}/events/?limit=100`, 'alice').expect(200);
    expect(hers.text).toContain(later.url);
  });

  it('an org made private takes the events about it and its repositories with it', async () => {
    const b = await createSource(t, { id: 'inb' }, { owner: w.alice });
    const before = await get('/events/?limit=100', 'anonymous').expect(200);
    expect(before.text).toContain(b.url);
    await request(t.app)
      .post(`/orgs/${b.org}/`)
      .set('Authorization', w.alice.auth)
      .send({ public_access: 'None' })
      .expect(200);
    for (const who of OUTSIDERS) {
      const res = await get('/events/?limit=100', who).expect(200);
      expect([who, res.text.includes(`/orgs/${b.org}/`)]).toEqual([who, false]);
    }
  });

  it('events about the private source reach only those who may see it', async () => {
    for (const who of OUTSIDERS) {
      for (const path of [
        '/events/?limit=100',
        `/users/${w.alice.username}/events/?scopes=all&limit=100`,
      ]) {
        const res = await get(path, who).expect(200);
        expect([path, who, res.text.includes(w.secret.url)]).toEqual([path, who, false]);
      }
    }
  });
});

describe('FHIR', () => {
  const base = () => `/orgs/${w.org}`;
  const canonical = () => `http://example.org/ValueSet/${w.org}-pubcol`;
  const system = () => `http://example.org/CodeSystem/${w.org}-secret`;
  const paths = (): string[] => [
    `${base()}/ValueSet/pubcol`,
    `${base()}/ValueSet/pubcol/version/v1`,
    `${base()}/ValueSet/$expand?url=${encodeURIComponent(canonical())}&includeDesignations=true`,
    `${base()}/ValueSet/$expand?url=${encodeURIComponent(canonical())}&activeOnly=false`,
    `/fhir/ValueSet/$expand?url=${encodeURIComponent(canonical())}`,
    `/fhir/ValueSet?url=${encodeURIComponent(canonical())}`,
    `/fhir/ValueSet/$validate-code?url=${encodeURIComponent(canonical())}&system=${encodeURIComponent(system())}&code=${S1}`,
    `${base()}/ValueSet/pubcol/$validate-code?system=${encodeURIComponent(system())}&code=${S1}`,
    `${base()}/ConceptMap/open`,
    `${base()}/ConceptMap/open/version/v1`,
    `/fhir/ConceptMap/$translate?system=${encodeURIComponent(system())}&code=${S1}`,
    `${base()}/CodeSystem/open`,
    `/fhir/ConceptMap/$translate?system=${encodeURIComponent(`http://example.org/CodeSystem/${w.org}-open`)}&code=${P1}&reverse=true`,
    `/fhir/ConceptMap/$translate?system=${encodeURIComponent(`http://example.org/CodeSystem/${w.org}-open`)}&code=${P1}`,
    `/fhir/CodeSystem/$lookup?system=${encodeURIComponent(`http://example.org/CodeSystem/${w.org}-open`)}&code=${P1}&property=*`,
    `/fhir/CodeSystem?url=${encodeURIComponent(system())}`,
    `/fhir/CodeSystem/$validate-code?url=${encodeURIComponent(system())}&code=${S1}`,
    `/fhir/CodeSystem/$subsumes?system=${encodeURIComponent(system())}&codeA=${S1}&codeB=${S1}`,
    `/fhir/ValueSet/$validate-code?url=${encodeURIComponent(canonical())}&code=${S1}&display=x`,
    `/fhir/CodeSystem/$lookup?system=${encodeURIComponent(system())}&code=${S1}`,
  ];

  it.each(OUTSIDERS)(
    '%s: a value set of its own naming the private system expands to nothing of it',
    async (who) => {
      const body = {
        resourceType: 'Parameters',
        parameter: [
          {
            name: 'valueSet',
            resource: {
              resourceType: 'ValueSet',
              url: 'http://example.org/ValueSet/mine',
              compose: { include: [{ system: system() }] },
            },
          },
        ],
      };
      const mine = await post('/fhir/ValueSet/$expand', 'alice', body);
      expect(mine.text).toContain(SECRET.name);
      const res = await post('/fhir/ValueSet/$expand', who, body);
      expect([res.status < 500, leaked(res), res.text.includes(S1)]).toEqual([true, [], false]);
    },
  );

  it('alice sees S1 in the value set and its expansion', async () => {
    for (const path of [
      `${base()}/ValueSet/$expand?url=${encodeURIComponent(canonical())}`,
      `${base()}/ValueSet/pubcol`,
    ]) {
      const res = await get(path, 'alice');
      expect([path, res.status]).toEqual([path, 200]);
      expect([path, res.text.includes(S1)]).toEqual([path, true]);
    }
  });

  it.each(OUTSIDERS)(
    '%s sees none of the private source, after alice warmed every cache',
    async (who) => {
      for (const path of paths()) {
        await get(path, 'alice');
        const res = await get(path, who);
        expect([path, res.status < 500, leaked(res)]).toEqual([path, true, []]);
      }
      for (const path of [
        `${base()}/ValueSet/pubcol`,
        `${base()}/ValueSet/$expand?url=${encodeURIComponent(canonical())}`,
        `/fhir/ValueSet/$expand?url=${encodeURIComponent(canonical())}`,
      ]) {
        const res = await get(path, who);
        expect([path, res.status, res.text.includes(S1)]).toEqual([path, 200, false]);
      }
      const validated = await get(
        `${base()}/ValueSet/pubcol/$validate-code?system=${encodeURIComponent(system())}&code=${S1}`,
        who,
      );
      const result = (
        validated.body.parameter as Array<{ name: string; valueBoolean?: boolean }>
      )?.find((p) => p.name === 'result');
      expect(result?.valueBoolean ?? false).toBe(false);
    },
  );
});

describe('GraphQL', () => {
  const concept =
    'items { id displayName conceptClass extras names { name } descriptions { description } }';
  const mapping =
    'items { id extras to { conceptCode conceptNameResolved } from { conceptCode conceptNameResolved } }';
  const query = `query($url: String!, $open: String!, $p1: String!) {
    collection(url: $url) {
      activeConcepts activeMappings
      concepts(limit: 20) { totalCount ${concept} }
      mappings(limit: 20) { totalCount ${mapping} }
      summary(verbose: true) { activeConcepts activeMappings content }
      expansions { items { summary { activeConcepts activeMappings }
        concepts(limit: 20) { ${concept} } mappings(limit: 20) { ${mapping} } } }
    }
    source(url: $open) { mappings(limit: 20) { ${mapping} } }
    concept(url: $p1) { mappings { id } inverseMappings { id extras }
      cascade(cascadeMappings: true) { concepts { concept { id displayName } } } }
    valueSet: expandValueSet(url: "${'$'}{canonical}") {
      total parameters { name value } contains { code display contains { code display } }
    }
  }`;

  function vars() {
    return { url: `${w.pubcol.url}v1/`, open: w.open.url, p1: `${w.open.url}concepts/${P1}/` };
  }

  function text(): string {
    return query.replace('${canonical}', `http://example.org/ValueSet/${w.org}-pubcol`);
  }

  it('alice sees S1 and the secret mapping', async () => {
    const res = await graphql('alice', text(), vars());
    expect(res.body.errors).toBeUndefined();
    expect(leaked(res).length).toBeGreaterThan(0);
    expect(res.body.data.collection.activeConcepts).toBe(2);
  });

  it.each(OUTSIDERS)('%s sees none of it, counts included', async (who) => {
    await graphql('alice', text(), vars());
    const res = await graphql(who, text(), vars());
    expect(res.body.errors).toBeUndefined();
    expect(leaked(res)).toEqual([]);
    const { collection } = res.body.data;
    expect(collection).toMatchObject({ activeConcepts: 1, activeMappings: 0 });
    expect(collection.summary).toMatchObject({ activeConcepts: 1, activeMappings: 0 });
    expect(collection.expansions.items[0].summary).toEqual({
      activeConcepts: 1,
      activeMappings: 0,
    });
  });
});

describe('GraphQL terminology and events', () => {
  const queries = (): Array<[string, Record<string, unknown>]> => {
    const system = `http://example.org/CodeSystem/${w.org}-secret`;
    const valueSet = `http://example.org/ValueSet/${w.org}-pubcol`;
    const coding = { system, code: S1 };
    return [
      ['query($u: String!) { valueSet(url: $u) }', { u: valueSet }],
      [
        'query($u: String!) { expandValueSet(url: $u, count: 100) { total contains { code display } } }',
        { u: valueSet },
      ],
      ['query($u: String!) { codeSystem(url: $u) }', { u: system }],
      [
        'query($c: CodingInput!) { lookup(coding: $c) { display name designations { value } } }',
        { c: coding },
      ],
      [
        'query($c: CodingInput!, $u: String) { validateCode(coding: $c, url: $u) { result display message } }',
        { c: coding, u: valueSet },
      ],
      [
        'query($c: CodingInput!) { translate(coding: $c) { result matches { concept { code display } } } }',
        { c: coding },
      ],
      [
        'query($c: String!, $m: String!) { expansion(collection: $c, mnemonic: $m) { concepts(limit: 20) { items { id displayName extras } } } }',
        { c: `${w.pubcol.url}v1/`, m: 'EXPANSION' },
      ],
      [
        'query($r: [JSON!]!) { resolveReference(references: $r) { resolved result { id name } } }',
        { r: [`${w.secret.url}concepts/${S1}/`, w.secret.url] },
      ],
      [
        'query($u: String!) { repositorySummary(url: $u, verbose: true) { activeConcepts content } }',
        { u: `${w.pubcol.url}v1/` },
      ],
      ['{ events(limit: 100) { items { referencedObject } } }', {}],
      [
        'query($u: String!) { mapping(url: $u) { toConcept { id displayName names { name } extras } to { conceptNameResolved } } }',
        { u: `${w.open.url}mappings/OPENMAP/` },
      ],
      [
        'query($c: CodingInput!) { translate(coding: $c, reverse: true) { result matches { concept { code display } } } }',
        { c: { system: `http://example.org/CodeSystem/${w.org}-open`, code: P1 } },
      ],
      [
        'query($u: String!) { concept(url: $u) { inverseMappings { id fromConcept { displayName } from { conceptNameResolved } } } }',
        { u: `${w.open.url}concepts/${P1}/` },
      ],
    ];
  };

  it.each(OUTSIDERS)('%s reads none of the private source, after alice', async (who) => {
    const e = await expansionOfV1();
    const seenByAlice: number[] = [];
    for (const [i, [query, variables]] of queries().entries()) {
      const vars = JSON.parse(JSON.stringify(variables).replace('EXPANSION', e)) as Record<
        string,
        unknown
      >;
      const mine = await graphql('alice', query, vars);
      expect([query, mine.status]).toEqual([query, 200]);
      if (leaked(mine).length > 0) seenByAlice.push(i);
      const res = await graphql(who, query, vars);
      expect([query, leaked(res)]).toEqual([query, []]);
    }
    // the value set, its expansion, the lookup and validation, the collection's expansion
    expect(seenByAlice).toEqual(expect.arrayContaining([0, 1, 3, 4, 6]));
    const validated = await graphql(who, queries()[4][0], queries()[4][1]);
    expect(validated.body.data?.validateCode?.result ?? false).toBe(false);
  });
});

describe('the user-owned private source', () => {
  it.each(OUTSIDERS)('%s: nothing of it in searches or facets', async (who) => {
    await createUser(t);
    for (const path of [
      `/users/${w.alice.username}/repos/`,
      `/concepts/?q=${S1}`,
      `/sources/?q=mine`,
    ]) {
      const res = await get(path, who, { includeFacets: 'true' });
      expect([path, res.status, leaked(res)]).toEqual([path, 200, []]);
    }
  });
});
