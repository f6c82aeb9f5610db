import request from 'supertest';
import {
  addMember,
  createOrg,
  createTestApp,
  createUser,
  type TestApp,
  type TestUser,
} from '../factories';
import { createRepo, createSource, createVersion } from '../factories/content';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const MALARIA = {
  id: '116128',
  concept_class: 'Diagnosis',
  datatype: 'N/A',
  names: [{ name: 'Malaria', locale: 'en', locale_preferred: true, name_type: 'FULLY_SPECIFIED' }],
};

const source = (fields: Record<string, unknown> = {}) => createSource(t, fields);

async function createConcept(url: string, user: TestUser, body: object = MALARIA) {
  return request(t.app).post(`${url}concepts/`).set('Authorization', user.auth).send(body);
}

describe('creating a concept (spec core §4.3)', () => {
  it('answers 201, a Location and the detail, with the golden checksums', async () => {
    const src = await source();
    const res = await createConcept(src.url, src.owner);
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`${src.url}concepts/116128/`);
    expect(res.body).toMatchObject({
      type: 'Concept',
      id: '116128',
      concept_class: 'Diagnosis',
      datatype: 'N/A',
      retired: false,
      display_name: 'Malaria',
      display_locale: 'en',
      source: 'S',
      owner: src.org,
      owner_type: 'Organization',
      url: `${src.url}concepts/116128/`,
      versions: 1,
      is_latest_version: true,
      checksums: {
        standard: 'e200b92bd2ff4d1ec21c0e83b5f4fa4e',
        smart: 'e200b92bd2ff4d1ec21c0e83b5f4fa4e',
      },
    });
    expect(res.body.version_url).toBe(`${src.url}concepts/116128/${res.body.version}/`);
    expect(res.body.names[0]).toMatchObject({
      type: 'ConceptName',
      name: 'Malaria',
      uuid: expect.any(String),
    });
  });

  it('takes the display name from the preferred name in the source default locale', async () => {
    const src = await source({ default_locale: 'fr', supported_locales: 'fr,en' });
    const res = await createConcept(src.url, src.owner, {
      id: 'X1',
      concept_class: 'Misc',
      names: [
        { name: 'Fever', locale: 'en', locale_preferred: true },
        { name: 'Fièvre', locale: 'fr', locale_preferred: true },
      ],
    });
    expect(res.body).toMatchObject({ display_name: 'Fièvre', display_locale: 'fr' });
  });

  it('answers 400 for a duplicate id, no names, a missing class or a bad locale, creating nothing', async () => {
    const src = await source();
    await createConcept(src.url, src.owner);
    const dup = await createConcept(src.url, src.owner);
    expect(dup.status).toBe(400);
    expect(dup.body.errors.id[0]).toMatch(/unique within a source/);
    const bad = await createConcept(src.url, src.owner, {
      id: 'C2',
      names: [{ name: 'N', locale: 'not a locale' }],
    });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['concept_class', 'names.0.locale']);
    const none = await createConcept(src.url, src.owner, {
      id: 'C3',
      concept_class: 'Misc',
      names: [],
    });
    expect(none.body.errors.names[0]).toMatch(/at least one name/);
    expect((await request(t.app).get(`${src.url}concepts/C2/`)).status).toBe(404);
    expect((await request(t.app).get(src.url)).body.active_concepts).toBe(1);
  });

  it('answers 404 for an unknown source and 403 for a reader who may not edit, adding nothing', async () => {
    const src = await source();
    const reader = await createUser(t);
    expect((await createConcept(`/orgs/${src.org}/sources/Nope/`, src.owner)).status).toBe(404);
    expect((await createConcept(src.url, reader)).status).toBe(403);
    expect((await request(t.app).post(`${src.url}concepts/`).send(MALARIA)).status).toBe(401);
    const after = await request(t.app).get(`${src.url}concepts/`);
    expect([after.body, (await request(t.app).get(src.url)).body.active_concepts]).toEqual([[], 0]);
  });

  it('lets org administrators and, with public_access Edit, any signed-in user add content; not plain members of a View source (spec core §5 rules 5, 7)', async () => {
    const src = await source();
    const member = await createUser(t);
    await addMember(t, src.org, src.owner, member);
    expect((await createConcept(src.url, member, { ...MALARIA, id: 'M1' })).status).toBe(403);
    await addMember(t, src.org, src.owner, member, 'admin');
    expect((await createConcept(src.url, member, { ...MALARIA, id: 'M1' })).status).toBe(201);
    const open = await source({ public_access: 'Edit' });
    const anyone = await createUser(t);
    expect((await createConcept(open.url, anyone)).status).toBe(201);
  });
});

describe('editing makes versions (spec core §3, §9.4)', () => {
  it('an edit identical by standard checksum answers 208 and creates nothing', async () => {
    const src = await source();
    await createConcept(src.url, src.owner);
    const same = await request(t.app)
      .post(`${src.url}concepts/116128/`)
      .set('Authorization', src.owner.auth)
      .send({ datatype: 'N/A', concept_class: 'Diagnosis' });
    expect(same.status).toBe(208);
    const versions = await request(t.app).get(`${src.url}concepts/116128/versions/`);
    expect(versions.body).toHaveLength(1);
  });

  it('a PATCH keeps what it does not send; a new synonym changes standard but not smart', async () => {
    const src = await source();
    await createConcept(src.url, src.owner, {
      ...MALARIA,
      descriptions: [{ description: 'A disease', locale: 'en' }],
    });
    const res = await request(t.app)
      .patch(`${src.url}concepts/116128/`)
      .set('Authorization', src.owner.auth)
      .send({
        names: [
          ...MALARIA.names,
          { name: 'Paludism', locale: 'fr', locale_preferred: false, name_type: 'SYNONYM' },
        ],
      });
    expect(res.status).toBe(200);
    expect(res.body.checksums).toEqual({
      standard: expect.not.stringMatching(/^e200b92bd2ff4d1ec21c0e83b5f4fa4e$/),
      smart: 'e200b92bd2ff4d1ec21c0e83b5f4fa4e',
    });
    expect(res.body.descriptions).toHaveLength(1);
    expect(res.body.versions).toBe(2);
    expect(res.body.url).toBe(`${src.url}concepts/116128/`);
  });

  it('a PUT without names answers 400 and keeps the concept as it was', async () => {
    const src = await source();
    await createConcept(src.url, src.owner);
    const res = await request(t.app)
      .put(`${src.url}concepts/116128/`)
      .set('Authorization', src.owner.auth)
      .send({ datatype: 'Text' });
    expect(res.status).toBe(400);
    expect((await request(t.app).get(`${src.url}concepts/116128/`)).body.datatype).toBe('N/A');
  });

  it('a source version shows the concept as it was when the version was made', async () => {
    const src = await source();
    await createConcept(src.url, src.owner);
    await createVersion(t, src.url, src.owner, 'v1');
    await request(t.app)
      .patch(`${src.url}concepts/116128/`)
      .set('Authorization', src.owner.auth)
      .send({ datatype: 'Coded' });
    const old = await request(t.app).get(`${src.url}v1/concepts/116128/`);
    expect(old.body).toMatchObject({ datatype: 'N/A', is_latest_version: false });
    expect((await request(t.app).get(`${src.url}concepts/116128/`)).body.datatype).toBe('Coded');
    const byVersion = await request(t.app).get(`${src.url}concepts/116128/${old.body.version}/`);
    expect(byVersion.body.datatype).toBe('N/A');
  });

  it('edits through a frozen version path answer 405 and change nothing', async () => {
    const src = await source();
    await createConcept(src.url, src.owner);
    await createVersion(t, src.url, src.owner, 'v1');
    for (const method of ['put', 'post', 'patch', 'delete'] as const) {
      const agent = request(t.app);
      const res = await agent[method](`${src.url}v1/concepts/116128/`)
        .set('Authorization', src.owner.auth)
        .send({ datatype: 'Text' });
      expect(res.status).toBe(405);
    }
    const head = await request(t.app).get(`${src.url}concepts/116128/`);
    expect([head.body.datatype, head.body.retired, head.body.versions]).toEqual(['N/A', false, 1]);
  });

  it('versions are listed newest first', async () => {
    const src = await source();
    await createConcept(src.url, src.owner);
    await request(t.app)
      .patch(`${src.url}concepts/116128/`)
      .set('Authorization', src.owner.auth)
      .send({ datatype: 'Coded' });
    const res = await request(t.app).get(`${src.url}concepts/116128/versions/`);
    expect(res.body.map((v: { datatype: string }) => v.datatype)).toEqual(['Coded', 'N/A']);
  });
});

describe('retiring and reactivating', () => {
  it('DELETE retires with 204 as a new version; twice is a 400; reactivate answers 204', async () => {
    const src = await source();
    await createConcept(src.url, src.owner);
    expect(
      (
        await request(t.app)
          .delete(`${src.url}concepts/116128/`)
          .set('Authorization', src.owner.auth)
      ).status,
    ).toBe(204);
    const again = await request(t.app)
      .delete(`${src.url}concepts/116128/`)
      .set('Authorization', src.owner.auth);
    expect(again.status).toBe(400);
    expect((await request(t.app).get(src.url)).body.active_concepts).toBe(0);
    const got = await request(t.app).get(`${src.url}concepts/116128/`);
    expect(got.body).toMatchObject({
      retired: true,
      update_comment: 'Concept was retired',
      versions: 2,
    });
    expect(
      (
        await request(t.app)
          .put(`${src.url}concepts/116128/reactivate/`)
          .set('Authorization', src.owner.auth)
      ).status,
    ).toBe(204);
    expect((await request(t.app).get(src.url)).body.active_concepts).toBe(1);
  });
});

describe('listing concepts of a source', () => {
  it('searches ids and names accent-insensitively, leaves retired ones out unless asked, filters', async () => {
    const src = await source();
    await createConcept(src.url, src.owner);
    await createConcept(src.url, src.owner, {
      id: 'F1',
      concept_class: 'Symptom',
      names: [{ name: 'Fièvre jaune', locale: 'fr' }],
    });
    await createConcept(src.url, src.owner, {
      id: 'R1',
      concept_class: 'Symptom',
      names: [{ name: 'Fiebre', locale: 'es' }],
    });
    await request(t.app).delete(`${src.url}concepts/R1/`).set('Authorization', src.owner.auth);
    const ids = async (query: Record<string, string>): Promise<string[]> =>
      (
        (await request(t.app).get(`${src.url}concepts/`).query(query)).body as Array<{ id: string }>
      ).map((c) => c.id);
    expect(await ids({ q: 'fievre' })).toEqual(['F1']);
    expect(await ids({ q: '116128' })).toEqual(['116128']);
    expect(await ids({ conceptClass: 'Symptom' })).toEqual(['F1']);
    expect(await ids({ conceptClass: 'Symptom', includeRetired: 'true', sortAsc: 'id' })).toEqual([
      'F1',
      'R1',
    ]);
    expect(await ids({ locale: 'fr' })).toEqual(['F1']);
    expect(await ids({ sortDesc: 'id' })).toEqual(['F1', '116128']);
    const head = await request(t.app).head(`${src.url}concepts/`);
    expect(head.headers.num_found).toBe('2');
  });

  it('a source version lists the concepts it froze', async () => {
    const src = await source();
    await createConcept(src.url, src.owner);
    await createVersion(t, src.url, src.owner, 'v1');
    await createConcept(src.url, src.owner, { ...MALARIA, id: 'later' });
    const v1 = await request(t.app).get(`${src.url}v1/concepts/`);
    expect(v1.body.map((c: { id: string }) => c.id)).toEqual(['116128']);
    expect((await request(t.app).get(`${src.url}concepts/`)).body).toHaveLength(2);
  });

  it('a private source hides its concepts: 401 anonymous, 403 outsiders', async () => {
    const src = await source({ public_access: 'None' });
    await createConcept(src.url, src.owner);
    const outsider = await createUser(t);
    expect((await request(t.app).get(`${src.url}concepts/`)).status).toBe(401);
    expect(
      (await request(t.app).get(`${src.url}concepts/116128/`).set('Authorization', outsider.auth))
        .status,
    ).toBe(403);
    expect(
      (await request(t.app).get(`${src.url}concepts/116128/`).set('Authorization', src.owner.auth))
        .status,
    ).toBe(200);
  });
});

describe('ids assigned by the source (spec core §4.6)', () => {
  const unnamed = { concept_class: 'Misc', names: [{ name: 'Anything', locale: 'en' }] };

  it('without a scheme, a concept needs an id', async () => {
    const src = await source();
    const res = await createConcept(src.url, src.owner, unnamed);
    expect(res.status).toBe(400);
    expect(res.body.errors.id).toBeDefined();
  });

  it('sequential ids start from the configured number and move past ids in use', async () => {
    const src = await source({
      autoid_concept_mnemonic: 'sequential',
      autoid_concept_mnemonic_start_from: 100,
      autoid_concept_external_id: 'sequential',
      autoid_concept_external_id_start_from: 5000,
    });
    const first = await createConcept(src.url, src.owner, unnamed);
    expect(first.body).toMatchObject({ id: '100', external_id: '5000' });
    const named = await createConcept(src.url, src.owner, { ...unnamed, id: '250' });
    expect(named.body.external_id).toBe('5001');
    const next = await createConcept(src.url, src.owner, unnamed);
    expect(next.body.id).toBe('251');
    expect(next.body.external_id).toBe('5002');
    const given = await createConcept(src.url, src.owner, {
      ...unnamed,
      id: 'X',
      external_id: 'kept',
    });
    expect(given.body).toMatchObject({ id: 'X', external_id: 'kept' });
  });

  it('uuid schemes give uuids, also to names and descriptions when asked', async () => {
    const src = await source({
      autoid_concept_mnemonic: 'uuid',
      autoid_concept_name_external_id: 'uuid',
      autoid_concept_description_external_id: 'uuid',
    });
    const res = await createConcept(src.url, src.owner, {
      ...unnamed,
      descriptions: [{ description: 'D', locale: 'en' }],
    });
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    expect(res.body.id).toMatch(uuid);
    expect(res.body.names[0].external_id).toMatch(uuid);
    expect(res.body.descriptions[0].external_id).toMatch(uuid);
  });
});

describe('search covers every name', () => {
  it('finds a concept by a word of its last name, however many words come before', async () => {
    const src = await source();
    await createConcept(src.url, src.owner, {
      id: 'LONG',
      concept_class: 'Diagnosis',
      names: [
        {
          name: 'Acute inflammation of the upper respiratory tract with fever and cough',
          locale: 'en',
          locale_preferred: true,
        },
        { name: 'Infección respiratoria aguda', locale: 'es' },
      ],
    });
    const res = await request(t.app).get(`${src.url}concepts/`).query({ q: 'infeccion' });
    expect(res.body.map((c: { id: string }) => c.id)).toEqual(['LONG']);
  });
});

describe('typos', () => {
  it('a query with no substring match falls back to similarity and still finds the concept', async () => {
    const src = await source();
    await createConcept(src.url, src.owner);
    const exact = await request(t.app).get(`${src.url}concepts/`).query({ q: 'malaria' });
    expect(exact.body.map((c: { id: string }) => c.id)).toEqual(['116128']);
    const typo = await request(t.app).get(`${src.url}concepts/`).query({ q: 'malariaa' });
    expect(typo.body.map((c: { id: string }) => c.id)).toEqual(['116128']);
    const nothing = await request(t.app).get(`${src.url}concepts/`).query({ q: 'zzzzqqqq' });
    expect(nothing.body).toEqual([]);
  });

  it('finds a word typed with two neighbouring letters swapped, where similarity alone does not', async () => {
    const src = await source();
    await createConcept(src.url, src.owner, {
      ...MALARIA,
      id: 'PNEU',
      names: [{ name: 'Pneumonia', locale: 'en', locale_preferred: true }],
    });
    // "pnuemonia" and "pneumonai" share too few trigrams with "pneumonia" for word similarity.
    for (const q of ['pnuemonia', 'pneumonai', 'Pneumonia pnuemonia']) {
      const res = await request(t.app).get(`${src.url}concepts/`).query({ q });
      expect([q, res.body.map((c: { id: string }) => c.id)]).toEqual([q, ['PNEU']]);
    }
  });

  describe('looks typos up among the words written so far, not by scanning every text', () => {
    const searchesOf = (texts: string[]) =>
      texts.filter((sql) => sql.includes('FROM "concept_versions"') && sql.includes('LIKE'));
    /** The concepts found for `q` and the search statements sent, in order. */
    async function search(url: string, q: string) {
      t.queries.texts = [];
      const res = await request(t.app).get(`${url}concepts/`).query({ q });
      const searches = searchesOf(t.queries.texts);
      const lookups = t.queries.texts.filter((sql) => sql.includes('search_words')).length;
      t.queries.texts = undefined;
      expect([q, res.status]).toEqual([q, 200]);
      return { ids: res.body.map((c: { id: string }) => c.id), searches, lookups };
    }
    const likes = (sql: string) => (sql.match(/"cv"\."search_text" LIKE/g) ?? []).length;
    let src: Awaited<ReturnType<typeof source>>;
    beforeAll(async () => {
      src = await source();
      // Words no other test writes, in a concept written a moment before the searches.
      const created = await createConcept(src.url, src.owner, {
        ...MALARIA,
        id: 'ZARK',
        names: [{ name: 'Zarkovitz quenbrile syndrome', locale: 'en', locale_preferred: true }],
      });
      expect(created.status).toBe(201);
    });

    it('letters swapped: only the spellings that begin a word somewhere', async () => {
      for (const [q, expected] of [
        // "zarkovitz" only: not as written, nor its other 7 transpositions (no word begins so).
        ['zarkoivtz', 1],
        // "syndrome" as written (none of its transpositions is a word), and "zarkovitz".
        ['syndrome zarkoivtz', 2],
      ] as const) {
        const { ids, searches } = await search(src.url, q);
        expect([q, ids]).toEqual([q, ['ZARK']]);
        // The pass as written, then the swaps pass.
        expect([q, searches.length, likes(searches[1])]).toEqual([q, 2, expected]);
      }
    });

    it('any typo: the most similar words, with the swaps in use, and no similarity scan', async () => {
      for (const [q, passes] of [
        ['quenbrilo', 2],
        // `zarkovitz` is a swap in use: that pass is searched too.
        ['zarkoivtz quenbrilo', 3],
        ['quenbrle', 2],
      ] as const) {
        const { ids, searches, lookups } = await search(src.url, q);
        expect([q, ids]).toEqual([q, ['ZARK']]);
        // As written, swaps (only when a swap of some word is in use: else it would search
        // as written again), then similar words: looked up as substrings, never `<%` on the
        // text; the words of each typo stage found in one statement.
        expect([q, searches.length, lookups]).toEqual([q, passes, 2]);
        expect([q, searches.at(-1)!.includes('<%')]).toEqual([q, false]);
      }
      // Nothing like it anywhere: no swap or similar word in use, so searched once, as written.
      const none = await search(src.url, 'qqxvzzkw');
      expect([none.ids, none.searches.length, none.lookups]).toEqual([[], 1, 2]);
    });

    it('any typo: corrections that share a stem are looked up by it once, and each finds its own', async () => {
      for (const [id, name] of [
        ['VANDA', 'Quorvandelitis of the knee'],
        ['VANDB', 'Quorvandeloma'],
        // Holds the stem inside a word too unlike the typo to be a correction: found by the
        // lookup, dropped by the test of each row.
        ['VANDC', 'Pkqquorvandelwwxxyy'],
      ]) {
        const created = await createConcept(src.url, src.owner, {
          ...MALARIA,
          id,
          names: [{ name, locale: 'en', locale_preferred: true }],
        });
        expect(created.status).toBe(201);
      }
      const { ids, searches } = await search(src.url, 'quorvandelitos');
      // As written, then (no swap in use) the similar words in use, `quorvandelitis` and
      // `quorvandeloma`, looked up once by `quorvandel`.
      expect(searches.length).toBe(2);
      expect(searches[1]).toMatch(
        /"cv"\."search_text" LIKE \$\d+ AND \("cv"\."search_text" \|\| ''\) LIKE ANY/,
      );
      expect([...ids].sort()).toEqual(['VANDA', 'VANDB']);
    });
  });
});

describe('a concept detail read (spec core §4.3, issue 4 read target)', () => {
  const mapping = (url: string, user: TestUser, body: object) =>
    request(t.app).post(`${url}mappings/`).set('Authorization', user.auth).send(body);

  it('is one SQL statement, with the mappings and their resolved ends', async () => {
    const src = await source();
    await createConcept(src.url, src.owner);
    await createConcept(src.url, src.owner, {
      ...MALARIA,
      id: 'B',
      names: [{ name: 'Bee', locale: 'en' }],
    });
    const other = await source();
    await createConcept(other.url, other.owner, {
      ...MALARIA,
      id: 'X',
      names: [{ name: 'Ex', locale: 'en' }],
    });
    for (const body of [
      {
        map_type: 'SAME-AS',
        from_concept_url: `${src.url}concepts/116128/`,
        to_concept_url: `${src.url}concepts/B/`,
      },
      {
        map_type: 'NARROWER-THAN',
        from_concept_url: `${src.url}concepts/116128/`,
        to_concept_url: `${other.url}concepts/X/`,
      },
      {
        map_type: 'SAME-AS',
        from_concept_url: `${src.url}concepts/116128/`,
        to_source_url: 'http://hl7.org/fhir/sid/icd-10',
        to_concept_code: 'B54',
      },
    ]) {
      expect((await mapping(src.url, src.owner, body)).status).toBe(201);
    }
    t.queries.count = 0;
    const res = await request(t.app).get(`${src.url}concepts/116128/`);
    expect(t.queries.count).toBe(1);
    expect(res.status).toBe(200);
    expect(res.body.versions).toBe(1);
    expect(
      res.body.mappings.map((m: Record<string, unknown>) => [
        m.map_type,
        m.to_concept_code,
        m.to_source_owner,
        m.to_source_name,
        m.to_concept_name_resolved,
        m.from_concept_name_resolved,
      ]),
    ).toEqual([
      ['NARROWER-THAN', 'X', other.org, 'S', 'Ex', 'Malaria'],
      ['SAME-AS', 'B', src.org, 'S', 'Bee', 'Malaria'],
      ['SAME-AS', 'B54', null, null, null, 'Malaria'],
    ]);
  });

  it('shows every edit at once: new versions, renamed targets, retired mappings', async () => {
    const src = await source();
    await createConcept(src.url, src.owner);
    await createConcept(src.url, src.owner, {
      ...MALARIA,
      id: 'B',
      names: [{ name: 'Bee', locale: 'en' }],
    });
    const made = await mapping(src.url, src.owner, {
      map_type: 'SAME-AS',
      from_concept_url: `${src.url}concepts/116128/`,
      to_concept_url: `${src.url}concepts/B/`,
    });
    interface Detail {
      datatype: string;
      versions: number;
      mappings: Array<{ to_concept_name_resolved: string | null }>;
    }
    const read = async (): Promise<Detail> =>
      (await request(t.app).get(`${src.url}concepts/116128/`)).body as Detail;
    expect((await read()).mappings[0].to_concept_name_resolved).toBe('Bee');
    await request(t.app)
      .patch(`${src.url}concepts/B/`)
      .set('Authorization', src.owner.auth)
      .send({ names: [{ name: 'Wasp', locale: 'en', locale_preferred: true }] });
    await request(t.app)
      .patch(`${src.url}concepts/116128/`)
      .set('Authorization', src.owner.auth)
      .send({ datatype: 'Coded' });
    const edited = await read();
    expect(edited).toMatchObject({ datatype: 'Coded', versions: 2 });
    expect(edited.mappings[0].to_concept_name_resolved).toBe('Wasp');
    await request(t.app)
      .delete(`${src.url}mappings/${made.body.id}/`)
      .set('Authorization', src.owner.auth);
    expect((await read()).mappings).toEqual([]);
  });

  it('answers a path as the source endpoint does: unknown, private, version, latest, user', async () => {
    const src = await source();
    await createConcept(src.url, src.owner);
    const same = async (sourceUrl: string, auth?: string) => {
      const get = (url: string) => {
        const req = request(t.app).get(url);
        return auth ? req.set('Authorization', auth) : req;
      };
      const [repo, concept] = [await get(sourceUrl), await get(`${sourceUrl}concepts/116128/`)];
      expect([sourceUrl, concept.status]).toEqual([sourceUrl, repo.status]);
      return concept;
    };
    expect((await same(`/orgs/no-such-org/sources/S/`)).status).toBe(404);
    expect((await same(`/orgs/${src.org}/sources/NOPE/`)).status).toBe(404);
    expect((await same(`${src.url}v9/`)).status).toBe(404);
    expect((await same(`${src.url}latest/`)).status).toBe(404);
    await createVersion(t, src.url, src.owner, 'v1', { released: true });
    await request(t.app)
      .patch(`${src.url}concepts/116128/`)
      .set('Authorization', src.owner.auth)
      .send({ datatype: 'Coded' });
    expect((await same(`${src.url}latest/`)).body.datatype).toBe('N/A');
    expect((await same(`${src.url}HEAD/`)).body.datatype).toBe('Coded');
    const old = await same(`${src.url}v1/`);
    expect(old.body).toMatchObject({ datatype: 'N/A', is_latest_version: false });
    const byVersion = await request(t.app).get(`${src.url}concepts/116128/${old.body.version}/`);
    expect(byVersion.body.datatype).toBe('N/A');
    expect((await request(t.app).get(`${src.url}concepts/116128/not-a-number/`)).status).toBe(404);

    // A private org: 401 anonymous, 403 outsiders, 200 members (their role read with the rest).
    const admin = await createUser(t);
    const org = await createOrg(t, admin, { public_access: 'None' });
    const member = await createUser(t);
    await addMember(t, org.id, admin, member);
    const privateUrl = `/orgs/${org.id}/sources/P/`;
    await createRepo(t, `/orgs/${org.id}`, admin, { id: 'P', name: 'P', public_access: 'None' });
    await createConcept(privateUrl, admin);
    expect((await same(privateUrl)).status).toBe(401);
    expect((await same(privateUrl, (await createUser(t)).auth)).status).toBe(403);
    expect((await same(privateUrl, member.auth)).status).toBe(200);

    // A user's own source, by /users/:user/ and by /user/; a collection is not a source.
    const user = await createUser(t);
    await createRepo(t, `/users/${user.username}`, user, { id: 'U', name: 'U' });
    await createConcept(`/users/${user.username}/sources/U/`, user);
    expect((await same(`/users/${user.username}/sources/U/`)).body.owner).toBe(user.username);
    expect((await same(`/user/sources/U/`, user.auth)).body.owner_type).toBe('User');
    expect((await request(t.app).get(`/user/sources/U/concepts/116128/`)).status).toBe(401);
    expect((await same(`/users/no-such-user/sources/U/`)).status).toBe(404);
    await createRepo(t, `/users/${user.username}`, user, { id: 'C', name: 'C' }, 'collections');
    expect(
      (await request(t.app).get(`/users/${user.username}/sources/C/concepts/116128/`)).status,
    ).toBe(404);
  });
});

describe('list counts (spec core §2.1 num_found)', () => {
  it('an unfiltered HEAD list counts active concepts as a filtered one would', async () => {
    const src = await source();
    for (const id of ['A', 'B', 'C']) await createConcept(src.url, src.owner, { ...MALARIA, id });
    await request(t.app).delete(`${src.url}concepts/B/`).set('Authorization', src.owner.auth);
    const found = async (query: Record<string, string> = {}) =>
      Number((await request(t.app).get(`${src.url}concepts/`).query(query)).headers.num_found);
    expect(await found()).toBe(2);
    expect(await found({ limit: '1', page: '3' })).toBe(2);
    expect(await found({ includeRetired: 'true' })).toBe(3);
    expect(await found({ conceptClass: 'Diagnosis' })).toBe(2);
    expect(await found({ q: 'malaria' })).toBe(2);
    expect((await request(t.app).get(src.url)).body.active_concepts).toBe(2);
    await request(t.app)
      .put(`${src.url}concepts/B/reactivate/`)
      .set('Authorization', src.owner.auth);
    expect(await found()).toBe(3);
    const page = await request(t.app).get(`${src.url}concepts/`).query({ limit: '2', page: '2' });
    expect(page.body.map((c: { id: string }) => c.id)).toEqual(['C']);
  });
});

describe('a concept list with includeMappings / includeInverseMappings (spec core §4.3)', () => {
  const mapping = (url: string, user: TestUser, body: object) =>
    request(t.app).post(`${url}mappings/`).set('Authorization', user.auth).send(body);

  it('brings each concept its mappings as its detail shows them, only when asked, in constant statements', async () => {
    const src = await source();
    const ids = ['A', 'B', 'C', 'D'];
    for (const id of ids) {
      await createConcept(src.url, src.owner, {
        ...MALARIA,
        id,
        names: [{ name: `Name ${id}`, locale: 'en' }],
      });
    }
    // A → B, A → C, B → C: A has two mappings, B one, C two inverse ones, D none.
    for (const [from, to] of [
      ['A', 'B'],
      ['A', 'C'],
      ['B', 'C'],
    ]) {
      const made = await mapping(src.url, src.owner, {
        map_type: 'SAME-AS',
        from_concept_url: `${src.url}concepts/${from}/`,
        to_concept_url: `${src.url}concepts/${to}/`,
      });
      expect(made.status).toBe(201);
    }
    const targets = (items: Array<Record<string, unknown>>, key: string): object =>
      Object.fromEntries(
        items.map((item): [string, unknown[] | undefined] => [
          String(item.id),
          (item[key] as Array<Record<string, unknown>> | undefined)?.map((m) =>
            key === 'mappings' ? m.to_concept_code : m.from_concept_code,
          ),
        ]),
      );

    const plain = await request(t.app).get(`${src.url}concepts/?verbose=true`);
    expect(plain.status).toBe(200);
    expect(plain.body.every((item: object) => !('mappings' in item))).toBe(true);

    const asked = await request(t.app).get(
      `${src.url}concepts/?includeMappings=true&includeInverseMappings=true`,
    );
    expect(asked.status).toBe(200);
    expect(targets(asked.body, 'mappings')).toEqual({ A: ['B', 'C'], B: ['C'], C: [], D: [] });
    expect(targets(asked.body, 'inverse_mappings')).toEqual({
      A: [],
      B: ['A'],
      C: ['A', 'B'],
      D: [],
    });
    // Each mapping as the concept's detail shows it.
    const detail = await request(t.app).get(`${src.url}concepts/A/`);
    const inList = asked.body.find((item: { id: string }) => item.id === 'A');
    expect(inList.mappings).toEqual(detail.body.mappings);

    // Read for the page at once: a page of one and a page of four send as many statements.
    const statements = async (limit: number): Promise<number> => {
      t.queries.count = 0;
      const res = await request(t.app).get(
        `${src.url}concepts/?includeMappings=true&limit=${limit}`,
      );
      expect(res.body).toHaveLength(limit);
      return t.queries.count;
    };
    expect(await statements(4)).toBe(await statements(1));
  });
});
