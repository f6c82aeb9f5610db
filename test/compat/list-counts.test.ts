import request from 'supertest';
import { createTestApp, type TestApp } from '../factories';
import {
  createConcept,
  createConcepts,
  createMappingBetween,
  createSource,
} from '../factories/content';

/**
 * A source's concepts narrowed by class or datatype are counted from their index alone (issue 27
 * part 2): the count statement the list sends plans as an index-only scan of the class or
 * datatype index, so it reads no table row however many concepts match.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

it.each([
  ['conceptClass', 'concept_versions_head_concept_class'],
  ['datatype', 'concept_versions_head_datatype'],
])('the count of a list narrowed by %s reads only %s', async (filter, index) => {
  const source = await createSource(t);
  await createConcepts(t, source.url, source.owner, [
    ['A', 'Aspirin', 'Drug'],
    ['B', 'Blood pressure', 'Test'],
    ['C', 'Codeine', 'Drug'],
  ]);
  // Index-only scans need the visibility map, which VACUUM sets (autovacuum does in service).
  await t.dataSource.query('VACUUM (ANALYZE) concept_versions');
  const statements: string[] = [];
  t.queries.texts = statements;
  try {
    const value = filter === 'conceptClass' ? 'Drug' : 'N/A';
    const res = await request(t.app).get(
      `${source.url}concepts/?${filter}=${encodeURIComponent(value)}`,
    );
    expect(res.status).toBe(200);
    expect(Number(res.headers.num_found)).toBe(filter === 'conceptClass' ? 2 : 3);
  } finally {
    t.queries.texts = undefined;
  }
  const count = statements.filter((sql) => /count\(/i.test(sql) && /concept_versions/.test(sql));
  expect(count).toHaveLength(1);
  // Three rows are read fastest from the table; forbid that, so the plan shows what a large
  // source would get from the indexes. Between the two indexes, three rows are a toss-up that
  // the price of a heap read decides: at PostgreSQL's default (the sessions' 1.1 is for large
  // tables in memory), a read of the source's index that tests each row's class loses, as it
  // does for a large source at any price.
  const plan = await t.dataSource.transaction(async (em) => {
    await em.query('SET LOCAL enable_seqscan = off');
    await em.query('SET LOCAL enable_bitmapscan = off');
    await em.query('SET LOCAL random_page_cost = 4');
    const rows = await em.query<Array<{ 'QUERY PLAN': string }>>(
      `EXPLAIN (GENERIC_PLAN) ${count[0]}`,
    );
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  });
  expect(plan).toContain(`Index Only Scan using ${index}`);
});

it('a plain list page, however far into the list, walks only the index of active concepts', async () => {
  const source = await createSource(t);
  await createConcepts(
    t,
    source.url,
    source.owner,
    ['A', 'B', 'C', 'D', 'E'].map((id) => [id, `Name ${id}`, 'Misc'] as const),
  );
  await t.dataSource.query('VACUUM (ANALYZE) concept_versions');
  const statements: string[] = [];
  t.queries.texts = statements;
  try {
    const res = await request(t.app).get(`${source.url}concepts/?limit=2&page=2`);
    expect(res.status).toBe(200);
    expect(res.body.map((c: { id: string }) => c.id)).toEqual(['C', 'D']);
  } finally {
    t.queries.texts = undefined;
  }
  const page = statements.filter(
    (sql) => /unnest\(ARRAY\(/.test(sql) && /concept_versions/.test(sql),
  );
  expect(page).toHaveLength(1);
  // Five rows are read fastest from the table, or from the index of all HEAD versions and then
  // sorted (the plan CI once chose); forbid both, so the plan shows what a large source gets.
  const plan = await t.dataSource.transaction(async (em) => {
    await em.query('SET LOCAL enable_seqscan = off');
    await em.query('SET LOCAL enable_bitmapscan = off');
    await em.query('SET LOCAL enable_sort = off');
    const rows = await em.query<Array<{ 'QUERY PLAN': string }>>(
      `EXPLAIN (GENERIC_PLAN) ${page[0]}`,
    );
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  });
  expect(plan).toContain('Index Only Scan using concept_versions_head_active');
});

/** The plan of `sql` as a large table would get it: no sequential scan, bitmap or sort. */
async function largePlanOf(sql: string): Promise<string> {
  return t.dataSource.transaction(async (em) => {
    for (const setting of ['enable_seqscan', 'enable_bitmapscan', 'enable_sort']) {
      await em.query(`SET LOCAL ${setting} = off`);
    }
    const rows = await em.query<Array<{ 'QUERY PLAN': string }>>(`EXPLAIN (GENERIC_PLAN) ${sql}`);
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  });
}

/** The statements a GET sends that read `table` with an ORDER BY (the page, not the count). */
async function pageStatements(path: string, table: string): Promise<string[]> {
  const statements: string[] = [];
  t.queries.texts = statements;
  try {
    const res = await request(t.app).get(path);
    expect(res.status).toBe(200);
  } finally {
    t.queries.texts = undefined;
  }
  return statements.filter((sql) => sql.includes(`FROM "${table}"`) && /ORDER BY/.test(sql));
}

it.each([
  ['a source', true, ''],
  ['a source, by map type', true, 'mapType=SAME-AS&'],
  ['every public source', false, ''],
  ['every public source, by map type', false, 'mapType=SAME-AS&'],
])(
  'the first page of the mappings of %s walks an index in the list order',
  async (_, inSource, filter) => {
    const source = await createSource(t);
    await createConcepts(t, source.url, source.owner, [
      ['A', 'Aspirin', 'Drug'],
      ['B', 'Blood pressure', 'Test'],
    ]);
    await createMappingBetween(t, source.url, source.owner, [
      'M1',
      'SAME-AS',
      `${source.url}concepts/A/`,
      `${source.url}concepts/B/`,
    ]);
    await t.dataSource.query('VACUUM (ANALYZE) mapping_versions');
    const path = `${inSource ? source.url : '/'}mappings/?${filter}limit=2`;
    const [page] = await pageStatements(path, 'mapping_versions');
    // Either index in the list order serves a source's page on a few rows; none sorts.
    const plan = await largePlanOf(page);
    expect(plan).toMatch(
      inSource
        ? /Index (Only )?Scan using mapping_versions_(head|public)_listed/
        : /Index (Only )?Scan using mapping_versions_public_listed/,
    );
    // The page's few rows may be put back in order after the limit; nothing under it sorts.
    expect(plan.slice(plan.indexOf('Limit'))).not.toContain('Sort');
  },
);

it('the first page of /concepts/ walks the index of the newest active concepts', async () => {
  const source = await createSource(t);
  await createConcepts(t, source.url, source.owner, [['A', 'Aspirin', 'Drug']]);
  await t.dataSource.query('VACUUM (ANALYZE) concept_versions');
  const [page] = await pageStatements('/concepts/?limit=2', 'concept_versions');
  expect(await largePlanOf(page)).toMatch(/Index Only Scan using concept_versions_public_recent/);
});

it('a locale filter finds the concepts with a name in that locale, from the index of active concepts', async () => {
  const source = await createSource(t);
  const name = (text: string, locale: string) => ({ name: text, locale, locale_preferred: true });
  await createConcept(t, source.url, source.owner, { id: 'A', names: [name('Aspirin', 'en')] });
  await createConcept(t, source.url, source.owner, {
    id: 'B',
    names: [name('Fever', 'en'), name('Fièvre', 'fr')],
  });
  await createConcept(t, source.url, source.owner, { id: 'C', names: [name('Toux', 'fr')] });
  const ids = async (query: string): Promise<string[]> => {
    const res = await request(t.app).get(`${source.url}concepts/?${query}`);
    expect(res.status).toBe(200);
    const body = res.body as Array<{ id: string }>;
    expect(Number(res.headers.num_found)).toBe(body.length);
    return body.map((c) => c.id);
  };
  expect(await ids('locale=fr')).toEqual(['B', 'C']);
  expect(await ids('locale=de,en')).toEqual(['A', 'B']);
  expect(await ids('locale=de')).toEqual([]);
  // A name added later counts at once (the locales are kept from the names by PostgreSQL).
  const added = await request(t.app)
    .post(`${source.url}concepts/A/names/`)
    .set('Authorization', source.owner.auth)
    .send({ name: 'Aspirine', locale: 'fr' });
  expect(added.status).toBe(201);
  expect(await ids('locale=fr')).toEqual(['A', 'B', 'C']);

  await t.dataSource.query('VACUUM (ANALYZE) concept_versions');
  const statements: string[] = [];
  t.queries.texts = statements;
  try {
    await request(t.app).get(`${source.url}concepts/?locale=fr&limit=1`);
  } finally {
    t.queries.texts = undefined;
  }
  const count = statements.filter((sql) => /count\(/i.test(sql) && /concept_versions/.test(sql));
  expect(count).toHaveLength(1);
  expect(await largePlanOf(count[0])).toContain(
    'Index Only Scan using concept_versions_head_active',
  );
});
