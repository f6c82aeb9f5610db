import request from 'supertest';
import {
  approveForMatching,
  createOrg,
  createTestApp,
  createUser,
  type TestApp,
  type TestUser,
} from '../factories';
import {
  createConcept,
  createMapping,
  createSource,
  createVersion,
  retire,
  type TestSource,
} from '../factories/content';

let t: TestApp;
let matcher: TestUser;
let source: TestSource;

interface MatchRow {
  row: Record<string, unknown>;
  results: Array<{
    id: string;
    url: string;
    display_name: string;
    retired: boolean;
    concept_class: string;
    source: string;
    owner: string;
    owner_type: string;
    owner_url: string;
    names?: unknown[];
    mappings?: unknown[];
    search_meta: {
      search_score: number;
      search_normalized_score: number;
      match_type: string;
      algorithm: string;
      search_highlight: Record<string, string[]>;
    };
  }>;
  map_config: unknown[];
  filter: Record<string, unknown>;
}

const CONCEPTS: Array<[string, string, string, string[]]> = [
  ['1001', 'Hemoglobin serum level', 'Test', ['HGB', 'Hémoglobine sérique']],
  ['1002', 'Acute bronchitis', 'Diagnosis', ['Bronchitis, acute']],
  ['1003', 'Chronic bronchitis', 'Diagnosis', []],
  ['1004', 'Acute bronchitis of left lung', 'Diagnosis', []],
  ['1005', 'Creatinine urine measurement', 'Test', ['Urine creatinine']],
  ['1006', 'Malaria', 'Diagnosis', ['Paludisme']],
  ['1007', 'Glucose plasma level', 'Test', []],
];

beforeAll(async () => {
  t = await createTestApp();
  source = await createSource(t, { id: 'CIEL' });
  for (const [id, name, cls, synonyms] of CONCEPTS) {
    await createConcept(t, source.url, source.owner, {
      id,
      concept_class: cls,
      datatype: cls === 'Test' ? 'Numeric' : 'N/A',
      names: [
        { name, locale: 'en', locale_preferred: true },
        ...synonyms.map((s) => ({ name: s, locale: 'en' })),
      ],
      descriptions: [{ description: `Clinical concept for ${name.toLowerCase()}`, locale: 'en' }],
      extras: cls === 'Test' ? { units: 'g/dL' } : null,
    });
  }
  await createMapping(t, source.url, source.owner, {
    map_type: 'SAME-AS',
    from_concept_url: `${source.url}concepts/1006/`,
    to_source_url: '/orgs/WHO/sources/ICD-10/',
    to_concept_code: 'B54',
  });
  matcher = await createUser(t);
  await approveForMatching(t, matcher);
}, 60_000);
afterAll(async () => t.close());

async function match(
  body: Record<string, unknown>,
  query: Record<string, string | number | boolean> = {},
  by: string | null = matcher.auth,
  status = 200,
): Promise<MatchRow[]> {
  const req = request(t.app).post('/concepts/$match/').query(query);
  if (by) void req.set('Authorization', by);
  const res = await req.send(body);
  if (res.status !== status) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return res.body as MatchRow[];
}

const target = () => ({ target_repo_url: source.url });

describe('POST /concepts/$match/', () => {
  it('finds typed terms despite typos, swapped letters, word order, accents and abbreviations', async () => {
    const rows = await match({
      ...target(),
      rows: [
        { name: 'Hemoglobn serum level' },
        { name: 'Aucte bronchitis' },
        { name: 'level serum hemoglobin' },
        { name: 'HEMOGLOBINE SERIQUE' },
        { name: 'HGB' },
        { name: 'Creat urine measurement' },
      ],
    });
    expect(rows.map((r) => r.results[0]?.id)).toEqual([
      '1001',
      '1002',
      '1001',
      '1001',
      '1001',
      '1005',
    ]);
    expect(rows.map((r) => r.row.__index)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('answers every result field with search_meta', async () => {
    const [row] = await match({ ...target(), rows: [{ name: 'Malaria', extra: 'kept' }] });
    expect(row.row).toEqual({ name: 'Malaria', extra: 'kept', __index: 0 });
    expect(row.results[0]).toMatchObject({
      id: '1006',
      url: `${source.url}concepts/1006/`,
      display_name: 'Malaria',
      retired: false,
      concept_class: 'Diagnosis',
      source: 'CIEL',
      owner: source.org,
      owner_type: 'Organization',
      owner_url: `/orgs/${source.org}/`,
      search_meta: {
        search_normalized_score: 100,
        match_type: 'very_high',
        algorithm: 'ocl-search',
        search_highlight: { name: ['Malaria'] },
      },
    });
    expect(row.map_config).toEqual([]);
    expect(row.filter).toEqual({});
  });

  it('ranks by score and grades match_type by the highlighted fields when limit > 1', async () => {
    const [byName, bySynonym] = await match(
      { ...target(), rows: [{ name: 'Acute bronchitis' }, { synonyms: ['Paludisme'] }] },
      { limit: 5 },
    );
    expect(byName.results[0]).toMatchObject({ id: '1002' });
    expect(byName.results[0].search_meta.match_type).toBe('very_high');
    const scores = byName.results.map((r) => r.search_meta.search_score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(byName.results.map((r) => r.id)).toEqual(expect.arrayContaining(['1003', '1004']));
    expect(bySynonym.results[0]).toMatchObject({ id: '1006' });
    expect(bySynonym.results[0].search_meta.match_type).toBe('high');
    expect(bySynonym.results[0].search_meta.search_highlight.synonyms).toEqual(['Paludisme']);
  });

  it('grades a description-only match medium, and limit=1 always very_high', async () => {
    const body = {
      ...target(),
      rows: [{ description: 'clinical concept for malaria' }],
    };
    const [many] = await match(body, { limit: 3 });
    expect(many.results[0]).toMatchObject({ id: '1006' });
    expect(many.results[0].search_meta.match_type).toBe('medium');
    expect(many.results[0].search_meta.search_highlight.description).toBeDefined();
    const [one] = await match(body);
    expect(one.results).toHaveLength(1);
    expect(one.results[0].search_meta.match_type).toBe('very_high');
  });

  it('bestMatch drops low matches', async () => {
    const body = { ...target(), rows: [{ name: 'serum malaria' }] };
    const [all] = await match(body, { limit: 10 });
    const [best] = await match(body, { limit: 10, bestMatch: true });
    expect(all.results.some((r) => r.search_meta.match_type === 'low')).toBe(true);
    expect(best.results.length).toBeGreaterThan(0);
    expect(best.results.every((r) => r.search_meta.match_type !== 'low')).toBe(true);
    expect(best.results.length).toBeLessThan(all.results.length);
  });

  it('pages each row separately', async () => {
    const body = { ...target(), rows: [{ name: 'bronchitis' }, { name: 'Malaria' }] };
    const [first] = await match(body, { limit: 2 });
    const [second, malaria] = await match(body, { limit: 2, page: 2 });
    const [viaOffset] = await match(body, { limit: 2, offset: 2 });
    expect(first.results).toHaveLength(2);
    expect(second.results.length).toBeGreaterThan(0);
    expect(second.results.map((r) => r.id)).not.toEqual(
      expect.arrayContaining(first.results.map((r) => r.id)),
    );
    expect(viaOffset.results.map((r) => r.id)).toEqual(second.results.map((r) => r.id));
    expect(malaria.results).toEqual([]);
  });

  it('matches exact ids and mapping codes, with map_config echoed', async () => {
    const mapConfig = [
      {
        type: 'mapping-code',
        input_column: 'icd',
        target_source_url: '/orgs/WHO/sources/ICD-10/',
      },
      {
        type: 'mapping-list',
        input_column: 'maps',
        separator: ':',
        delimiter: ';',
        target_urls: { ICD10: '/orgs/WHO/sources/ICD-10/' },
      },
    ];
    const rows = await match({
      ...target(),
      rows: [{ id: '1005' }, { mapping_code: 'B54' }, { icd: 'B54' }, { maps: 'ICD10:B54' }],
      map_config: mapConfig,
    });
    expect(rows.map((r) => r.results[0]?.id)).toEqual(['1005', '1006', '1006', '1006']);
    expect(rows[0].results[0].search_meta.search_highlight.id).toEqual(['1005']);
    expect(rows[1].results[0].search_meta.search_highlight.mapping_code).toEqual(['B54']);
    expect(rows[2].map_config).toEqual(mapConfig);
  });

  it('filters by concept_class, datatype, property:class and the filter object', async () => {
    const rows = await match(
      {
        ...target(),
        rows: [
          { name: 'bronchitis', concept_class: 'Test' },
          { name: 'level', 'property:class': 'Test', datatype: 'Numeric' },
          { name: 'hemoglobin', 'property:units': 'g/dL' },
        ],
        filter: { conceptClass: 'Test' },
      },
      { limit: 10 },
    );
    expect(rows[0].results).toEqual([]);
    expect(rows[1].results.map((r) => r.id).sort()).toEqual(['1001', '1007']);
    expect(rows[2].results.map((r) => r.id)).toEqual(['1001']);
    expect(rows[0].filter).toEqual({ conceptClass: 'Test' });
  });

  it('leaves retired concepts out unless includeRetired', async () => {
    const own = await createSource(t, { id: 'RET' });
    await createConcept(t, own.url, own.owner, {
      id: 'R1',
      names: [{ name: 'Obsolete fever', locale: 'en', locale_preferred: true }],
    });
    await retire(t, own.url, own.owner, 'concepts', 'R1');
    const body = { target_repo_url: own.url, rows: [{ name: 'Obsolete fever' }] };
    const [without] = await match(body, {}, t.admin);
    const [withRetired] = await match(body, { includeRetired: true }, t.admin);
    expect(without.results).toEqual([]);
    expect(withRetired.results[0]).toMatchObject({ id: 'R1', retired: true });
  });

  it('matches a source version as it was, resolving a bare URL to the latest released one', async () => {
    const own = await createSource(t, { id: 'VER' });
    await createConcept(t, own.url, own.owner, {
      id: 'V1',
      names: [{ name: 'Measles', locale: 'en', locale_preferred: true }],
    });
    await createVersion(t, own.url, own.owner, 'v1', { released: true });
    await createConcept(t, own.url, own.owner, {
      id: 'V2',
      names: [{ name: 'Measles vaccination', locale: 'en', locale_preferred: true }],
    });
    const ids = async (body: Record<string, unknown>) =>
      (await match({ ...body, rows: [{ name: 'measles' }] }, { limit: 5 }, t.admin))[0].results
        .map((r) => r.id)
        .sort();
    expect(await ids({ target_repo_url: own.url })).toEqual(['V1']);
    expect(await ids({ target_repo_url: `${own.url}HEAD/` })).toEqual(['V1', 'V2']);
    expect(
      await ids({ target_repo: { owner: own.org, source: 'VER', source_version: 'HEAD' } }),
    ).toEqual(['V1', 'V2']);
  });

  it('adds names, descriptions and mappings with verbose, and only the least with brief', async () => {
    const body = { ...target(), rows: [{ name: 'Malaria' }] };
    const [verbose] = await match(body, { verbose: true });
    expect(verbose.results[0].names).toHaveLength(2);
    expect(verbose.results[0].mappings).toEqual([
      expect.objectContaining({ map_type: 'SAME-AS', to_concept_code: 'B54' }),
    ]);
    const [brief] = await match(body, { brief: true });
    expect(Object.keys(brief.results[0]).sort()).toEqual(
      ['display_name', 'id', 'search_meta', 'url'].sort(),
    );
  });
});

describe('$match access', () => {
  it('answers 401 without credentials and 405 to GET', async () => {
    await match({ ...target(), rows: [{ name: 'x' }] }, {}, null, 401);
    const res = await request(t.app).get('/concepts/$match/').set('Authorization', matcher.auth);
    expect(res.status).toBe(405);
  });

  it('answers 403 to a user no administrator approved, until approved', async () => {
    const waiting = await createUser(t);
    await match({ ...target(), rows: [{ name: 'Malaria' }] }, {}, waiting.auth, 403);
    const self = await request(t.app)
      .put(`/users/${waiting.username}/`)
      .set('Authorization', waiting.auth)
      .send({ match_approved: true });
    expect(self.status).toBe(403);
    await approveForMatching(t, waiting);
    const [row] = await match({ ...target(), rows: [{ name: 'Malaria' }] }, {}, waiting.auth);
    expect(row.results[0].id).toBe('1006');
    // The flag is shown to the user and to administrators only.
    const own = await request(t.app)
      .get(`/users/${waiting.username}/`)
      .set('Authorization', waiting.auth);
    expect((own.body as { match_approved?: boolean }).match_approved).toBe(true);
    const other = await request(t.app)
      .get(`/users/${waiting.username}/`)
      .set('Authorization', matcher.auth);
    expect(other.body).not.toHaveProperty('match_approved');
  });

  it('lets any signed-in user match when the instance does not require approval', async () => {
    const open = await createTestApp({ MATCH_REQUIRES_APPROVAL: 'false' });
    try {
      const user = await createUser(open);
      const res = await request(open.app)
        .post('/concepts/$match/')
        .set('Authorization', user.auth)
        .send({ target_repo_url: source.url, rows: [{ name: 'Malaria' }] });
      expect(res.status).toBe(200);
    } finally {
      await open.close();
    }
  });

  it('never shows a private source to a user who may not see it', async () => {
    const owner = await createUser(t);
    const org = await createOrg(t, owner);
    const hidden = await createSource(
      t,
      { id: 'SECRET', public_access: 'None' },
      { owner, org: org.id },
    );
    await createConcept(t, hidden.url, owner, {
      id: 'S1',
      names: [{ name: 'Secret disease', locale: 'en', locale_preferred: true }],
    });
    const res = await request(t.app)
      .post('/concepts/$match/')
      .set('Authorization', matcher.auth)
      .send({ target_repo_url: hidden.url, rows: [{ name: 'Secret disease' }] });
    expect(res.status).toBe(404);
    expect(JSON.stringify(res.body)).not.toContain('S1');
    await approveForMatching(t, owner);
    const [row] = await match(
      { target_repo_url: hidden.url, rows: [{ name: 'Secret disease' }] },
      {},
      owner.auth,
    );
    expect(row.results[0].id).toBe('S1');
  });
});

describe('$match bad input', () => {
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    ['no rows', { target_repo_url: '/orgs/x/sources/y/' }, {}],
    ['empty rows', { target_repo_url: '/orgs/x/sources/y/', rows: [] }, {}],
    ['rows not a list', { target_repo_url: '/orgs/x/sources/y/', rows: 'abc' }, {}],
    ['a row not an object', { target_repo_url: '/orgs/x/sources/y/', rows: [3] }, {}],
    ['no target', { target_repo_url: undefined, rows: [{ name: 'x' }] }, {}],
    ['a target that is no URL', { target_repo_url: 'nonsense', rows: [{ name: 'x' }] }, {}],
    ['a name that is an object', { rows: [{ name: { a: 1 } }] }, {}],
    ['synonyms of objects', { rows: [{ synonyms: [{}] }] }, {}],
    ['a bad map_config', { rows: [{ name: 'x' }], map_config: [{ type: 'other' }] }, {}],
    [
      'mapping-code without its source',
      { rows: [{ name: 'x' }], map_config: [{ type: 'mapping-code', input_column: 'c' }] },
      {},
    ],
    ['an unknown filter', { rows: [{ name: 'x' }], filter: { color: 'red' } }, {}],
    ['limit 0', { rows: [{ name: 'x' }] }, { limit: 0 }],
    ['limit not a number', { rows: [{ name: 'x' }] }, { limit: 'many' }],
    ['numCandidates out of range', { rows: [{ name: 'x' }] }, { numCandidates: 3001 }],
    ['kNearest out of range', { rows: [{ name: 'x' }] }, { kNearest: 0 }],
    ['semantic', { rows: [{ name: 'x' }] }, { semantic: true }],
    ['reranker without semantic', { rows: [{ name: 'x' }] }, { reranker: true }],
    ['an encoder model', { rows: [{ name: 'x' }] }, { encoder_model: 'mini' }],
  ];
  it.each(cases)('answers 400 to %s', async (_label, body, query) => {
    const res = await request(t.app)
      .post('/concepts/$match/')
      .query(query)
      .set('Authorization', matcher.auth)
      .send({ target_repo_url: source.url, ...body });
    expect(res.status).toBe(400);
    expect(typeof (res.body as { message: string }).message).toBe('string');
  });

  it('says semantic matching is not enabled for the repository', async () => {
    const res = await request(t.app)
      .post('/concepts/$match/')
      .query({ semantic: true, numCandidates: 100 })
      .set('Authorization', matcher.auth)
      .send({ ...target(), rows: [{ name: 'x' }] });
    expect(res.status).toBe(400);
    expect((res.body as { message: string }).message).toMatch(
      /Semantic matching is not enabled for the repository 'CIEL'/,
    );
  });

  it('answers 404 for a missing target and 400 for malformed JSON', async () => {
    await match(
      { target_repo_url: '/orgs/nobody/sources/none/', rows: [{ name: 'x' }] },
      {},
      matcher.auth,
      404,
    );
    const res = await request(t.app)
      .post('/concepts/$match/')
      .set('Authorization', matcher.auth)
      .set('Content-Type', 'application/json')
      .send('{"rows": [');
    expect(res.status).toBe(400);
  });

  it('copes with hostile text: wildcards, quotes, very long names, only punctuation', async () => {
    const rows = await match({
      ...target(),
      rows: [
        { name: '%_%' },
        { name: "'; DROP TABLE concepts; --" },
        { name: 'x'.repeat(5000) },
        { name: Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ') },
        { name: '!!! ???' },
        { name: '' },
        {},
      ],
    });
    expect(rows).toHaveLength(7);
    expect(rows.every((r) => Array.isArray(r.results))).toBe(true);
  });
});

describe('$match under parallel callers', () => {
  it('answers every caller its own rows, in input order', async () => {
    const names = CONCEPTS.map(([, name]) => name);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, caller) =>
        match({
          ...target(),
          rows: names.map((name, i) => ({ name, caller, i })).slice(caller % names.length),
        }),
      ),
    );
    answers.forEach((rows, caller) => {
      const expected = CONCEPTS.slice(caller % CONCEPTS.length).map(([id]) => id);
      expect(rows.map((r) => r.results[0]?.id)).toEqual(expected);
      expect(rows.every((r) => r.row.caller === caller)).toBe(true);
      expect(rows.map((r) => r.row.__index)).toEqual(expected.map((_, i) => i));
    });
  });

  it('finds concepts written in parallel with the same new words, none waiting on another', async () => {
    const sources = await Promise.all([
      createSource(t, { id: 'PA' }),
      createSource(t, { id: 'PB' }),
    ]);
    const words = [
      'Zorblax quintessa',
      'Quintessa zorblax',
      'Vellumor zorblax',
      'Zorblax vellumor',
    ];
    await Promise.all(
      sources.flatMap((s) =>
        words.map((name, i) =>
          createConcept(t, s.url, s.owner, {
            id: `W${i}`,
            names: [{ name, locale: 'en', locale_preferred: true }],
          }),
        ),
      ),
    );
    for (const s of sources) {
      const [row] = await match(
        { target_repo_url: s.url, rows: [{ name: 'zorblx vellumor' }] },
        { limit: 4 },
        t.admin,
      );
      // Word order does not count: both names with both words come first.
      expect(['W2', 'W3']).toContain(row.results[0].id);
      expect(row.results.map((r) => r.id).sort()).toEqual(['W0', 'W1', 'W2', 'W3']);
    }
  });

  it('matches more rows than one batch holds, in one answer in input order', async () => {
    const rows = Array.from({ length: 250 }, (_, i) => ({ name: CONCEPTS[i % 7][1] }));
    const answer = await match({ ...target(), rows });
    expect(answer).toHaveLength(250);
    expect(answer.map((r) => r.results[0]?.id)).toEqual(rows.map((_, i) => CONCEPTS[i % 7][0]));
  });
});
