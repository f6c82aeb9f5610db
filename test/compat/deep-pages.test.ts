import request from 'supertest';
import { Repositories } from '../../src/repositories';
import { createTestApp, type TestApp } from '../factories';
import { createConcept, createSource, type TestSource } from '../factories/content';
import { dataOf, gql } from '../graphql/gql';

/**
 * A page far into a source's plain concept list starts from an anchor (every 500th row's keys,
 * read once per change of the source) instead of skipping every row before it (issue 27): the
 * pages are exactly those of `OFFSET`, whatever changed in between.
 */
let t: TestApp;
let source: TestSource;
/** The source's active concept ids, in the list's order. */
let ids: string[];

const COUNT = 1_234;
const code = (n: number): string => `C${String(n).padStart(5, '0')}`;

beforeAll(async () => {
  t = await createTestApp();
  source = await createSource(t);
  const lines = Array.from({ length: COUNT }, (_, n) =>
    JSON.stringify({
      type: 'Concept',
      owner: source.org,
      owner_type: 'Organization',
      source: source.id,
      id: code(n * 2),
      concept_class: 'Diagnosis',
      datatype: 'N/A',
      names: [{ name: `Name ${n}`, locale: 'en', locale_preferred: true }],
    }),
  );
  const started = await request(t.app)
    .post('/importers/bulk-import/')
    .set('Authorization', source.owner.auth)
    .set('Content-Type', 'application/json')
    .send(lines.join('\n'));
  expect(started.status).toBe(202);
  for (;;) {
    const res = await request(t.app)
      .get(`/importers/bulk-import/?task=${started.body.id}`)
      .set('Authorization', source.owner.auth);
    if (res.body.state === 'SUCCESS') break;
    expect(res.body.state).not.toBe('FAILURE');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  ids = Array.from({ length: COUNT }, (_, n) => code(n * 2));
}, 120_000);
afterAll(() => t.close());

/** A REST page of the plain list: its ids (`num_found` checked unless the list is changing). */
async function restPage(offset: number, limit: number, counted = true): Promise<string[]> {
  // REST pages by `page`; a limit that divides the offset lands anywhere.
  expect(offset % limit).toBe(0);
  const res = await request(t.app).get(
    `${source.url}concepts/?limit=${limit}&page=${offset / limit + 1}`,
  );
  expect(res.status).toBe(200);
  if (counted) expect(Number(res.headers.num_found)).toBe(ids.length);
  return (res.body as Array<{ id: string }>).map((c) => c.id);
}

async function graphqlPage(offset: number, limit: number): Promise<string[]> {
  const data = dataOf(
    await gql(
      t,
      undefined,
      `query($url: String!, $offset: Int!, $limit: Int!) {
        source(url: $url) { concepts(offset: $offset, limit: $limit) { items { id } } } }`,
      { url: source.url, offset, limit },
    ),
  );
  return (data.source.concepts.items as Array<{ id: string }>).map((c) => c.id);
}

/** The statements of one REST page, read twice (the first may read the anchors). */
async function pageStatements(offset: number, limit: number): Promise<string[]> {
  await restPage(offset, limit);
  const texts: string[] = [];
  t.queries.texts = texts;
  try {
    await restPage(offset, limit);
  } finally {
    t.queries.texts = undefined;
  }
  return texts.filter((sql) => sql.includes('json_build_array(p.id'));
}

describe('pages far into a plain list', () => {
  it.each([
    [0, 10],
    [490, 10],
    [500, 10],
    [497, 7],
    [996, 12],
    [1000, 25],
    [1221, 11],
    [1230, 10],
    [1240, 10],
  ])('offset %i, limit %i: the rows OFFSET reads, over REST and GraphQL', async (offset, limit) => {
    const expected = ids.slice(offset, offset + limit);
    expect(await restPage(offset, limit)).toEqual(expected);
    expect(await graphqlPage(offset, limit)).toEqual(expected);
  });

  it('a deep page starts after an anchor; a shallow one skips rows as before', async () => {
    const [deep] = await pageStatements(1200, 10);
    expect(deep).toContain('head_seq');
    const [shallow] = await pageStatements(400, 10);
    expect(shallow).not.toContain('head_seq');
  });

  it('follows every change of the source: a concept added or retired before the page moves it', async () => {
    const owner = source.owner.auth;
    expect(await restPage(1100, 10)).toEqual(ids.slice(1100, 1110));
    // Sorts first: every later row moves on by one.
    await createConcept(t, source.url, source.owner, { id: 'A00000' });
    ids = ['A00000', ...ids];
    expect(await restPage(1100, 10)).toEqual(ids.slice(1100, 1110));
    expect(await graphqlPage(1100, 10)).toEqual(ids.slice(1100, 1110));
    const retired = await request(t.app)
      .delete(`${source.url}concepts/${code(20)}/`)
      .set('Authorization', owner);
    expect(retired.status).toBe(204);
    ids = ids.filter((id) => id !== code(20));
    expect(await restPage(1100, 10)).toEqual(ids.slice(1100, 1110));
  });

  it('a page read for a state the source has left is read as the list is now', async () => {
    const repos = Repositories.of(t.dataSource);
    const [row] = await t.dataSource.query<Array<{ id: string; seq: string }>>(
      `SELECT r.id::text AS id, r.head_seq::text AS seq FROM repositories r
       JOIN organizations o ON o.id = r.owner_org_id WHERE o.mnemonic = $1 AND r.mnemonic = $2`,
      [source.org, source.id],
    );
    const page = (headSeq: string) =>
      repos.concepts.plainPages([
        {
          where: { repositoryId: row.id, seq: null, headSeq },
          sort: { key: 'bestMatch', desc: false },
          window: { limit: 5, offset: 1000 },
        },
      ]);
    // Anchors for the state the caller read.
    expect((await page(row.seq))[0].rows.map((v) => v.mnemonic)).toEqual(ids.slice(1000, 1005));
    // The source changes after the caller read it (the caller still holds the old change number).
    await createConcept(t, source.url, source.owner, { id: 'A00001' });
    ids = ['A00000', 'A00001', ...ids.slice(1)];
    expect((await page(row.seq))[0].rows.map((v) => v.mnemonic)).toEqual(ids.slice(1000, 1005));
  });

  it.each([
    ['name', false],
    ['name', true],
    ['lastUpdate', true],
    ['id', true],
    ['conceptClass', false],
  ] as const)(
    'sorted by %s (descending: %s), an anchored page is the OFFSET page',
    async (key, desc) => {
      const repos = Repositories.of(t.dataSource);
      const [row] = await t.dataSource.query<Array<{ id: string; seq: string }>>(
        `SELECT r.id::text AS id, r.head_seq::text AS seq FROM repositories r
       JOIN organizations o ON o.id = r.owner_org_id WHERE o.mnemonic = $1 AND r.mnemonic = $2`,
        [source.org, source.id],
      );
      for (const offset of [500, 777, 1100]) {
        const page = async (headSeq?: string) =>
          (
            await repos.concepts.plainPages([
              {
                where: { repositoryId: row.id, seq: null, headSeq },
                sort: { key, desc },
                window: { limit: 9, offset },
              },
            ])
          )[0].rows.map((v) => v.mnemonic);
        const plain = await page();
        expect(plain).toHaveLength(9);
        await page(row.seq); // the anchors read
        const texts: string[] = [];
        t.queries.texts = texts;
        try {
          expect(await page(row.seq)).toEqual(plain);
        } finally {
          t.queries.texts = undefined;
        }
        // Read once, anchored (not read again unanchored).
        expect(texts).toHaveLength(1);
        expect(texts[0]).toContain('head_seq');
      }
    },
  );

  it('deep pages read while concepts are added in parallel: each page is a run of the list', async () => {
    const added = Array.from({ length: 6 }, (_, i) => `B0000${i}`);
    const [pages] = await Promise.all([
      Promise.all(Array.from({ length: 12 }, (_, i) => restPage(600 + 50 * i, 10, false))),
      Promise.all(added.map((id) => createConcept(t, source.url, source.owner, { id }))),
    ]);
    for (const ids10 of pages) {
      expect(ids10).toHaveLength(10);
      expect([...ids10].sort()).toEqual(ids10);
    }
    ids = [...ids.slice(0, 2), ...added, ...ids.slice(2)].sort();
    expect(await restPage(1000, 10)).toEqual(ids.slice(1000, 1010));
    expect(await graphqlPage(1200, 10)).toEqual(ids.slice(1200, 1210));
  });
});
