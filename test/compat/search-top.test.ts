import request from 'supertest';
import { createTestApp, type TestApp } from '../factories';
import { createConcept, createSource } from '../factories/content';
import { dataOf, gql } from '../graphql/gql';

/**
 * A `q` search with more matches than lists count (`LIST_COUNT_CAP`, here 6) ranks only the
 * rows its best matches are among (issue 27 part 1): those whose display name has every word at
 * a word's start, and the exact id; every other match ranks below them. Each page must be the
 * page the full ranking gives, which `whole` (the same database, no cap) computes: the rows of
 * the top, ranked, when they fill the page and the last ranks above any other match; else every
 * match ranked, as before.
 */
let capped: TestApp;
let whole: TestApp;
/** `capped`, counting every search's matches as a common word's (`SEARCH_COMMON_SHARE`). */
let common: TestApp;
beforeAll(async () => {
  capped = await createTestApp({ LIST_COUNT_CAP: '6' });
  whole = await createTestApp({ LIST_COUNT_CAP: '0' });
  common = await createTestApp({ LIST_COUNT_CAP: '6', SEARCH_COMMON_SHARE: '0' });
});
afterAll(async () => {
  await capped.close();
  await whole.close();
  await common.close();
});

type Names = Array<{ name: string; locale: string; locale_preferred?: boolean }>;
const named = (name: string, ...synonyms: string[]): Names => [
  { name, locale: 'en', locale_preferred: true },
  ...synonyms.map((synonym) => ({ name: synonym, locale: 'en' })),
];

/**
 * A public source with 15 concepts matching `zorbex`: the exact id, 6 names with it at a word's
 * start (one of them exactly), and 8 matching only inside a word or by a synonym; and `quillan`,
 * at a word's start in 2 names and inside words or synonyms of 6 more.
 */
async function dictionary(): Promise<string> {
  const source = await createSource(capped);
  const concepts: Array<[string, Names]> = [
    ['zorbex', named('Unrelated display')],
    ['Z1', named('Zorbex')],
    ['Z2', named('Zorbex fever')],
    ['Z3', named('Acute zorbex syndrome')],
    ['Z4', named('Chronic zorbex')],
    ['Z5', named('Zorbex of the left knee, unspecified')],
    ['Z6', named('Mild (zorbex) reaction')],
    ...[1, 2, 3, 4].map((n): [string, Names] => [`M${n}`, named(`Antizorbex therapy ${n}`)]),
    ...[1, 2, 3, 4].map((n): [string, Names] => [`S${n}`, named(`Plain ${n}`, 'zorbex alias')]),
    ['Q1', named('Quillan disease')],
    ['Q2', named('Late quillan')],
    ...[1, 2, 3].map((n): [string, Names] => [`X${n}`, named(`Xquillan ${n}`)]),
    ...[1, 2, 3].map((n): [string, Names] => [`Y${n}`, named(`Other ${n}`, 'quillan')]),
  ];
  for (const [id, names] of concepts) {
    await createConcept(capped, source.url, source.owner, { id, names });
  }
  return source.url;
}

/** The ids and headers of a concept search, and the ranking statements it sent. */
async function search(t: TestApp, path: string, query: Record<string, string | number>) {
  t.queries.texts = [];
  const res = await request(t.app).get(path).query(query);
  const ranked = t.queries.texts.filter((sql) => sql.startsWith('WITH h AS MATERIALIZED')).length;
  t.queries.texts = undefined;
  expect([query, res.status]).toEqual([query, 200]);
  return {
    ids: res.body.map((c: { id: string }) => c.id) as string[],
    found: res.headers.num_found,
    relation: res.headers.num_found_relation as string | undefined,
    next: res.headers.next as string | undefined,
    ranked,
  };
}

let url: string;
beforeAll(async () => {
  url = await dictionary();
});

describe('REST', () => {
  it('ranks only the top of a search with more matches than the cap, page for page', async () => {
    for (const [limit, page] of [
      [3, 1],
      [3, 2],
      [6, 1],
    ]) {
      const query = { q: 'zorbex', limit, page };
      const top = await search(capped, `${url}concepts/`, query);
      const all = await search(whole, `${url}concepts/`, query);
      expect([query, top.ids]).toEqual([query, all.ids]);
      expect(all.found).toBe('15');
      // Counted up to the cap, then the top ranked: two statements, and the page is full.
      expect([query, top.found, top.relation, top.ranked]).toEqual([query, '6', 'gte', 2]);
      expect(top.next).toContain(`page=${page + 1}`);
    }
    const first = await search(capped, `${url}concepts/`, { q: 'zorbex', limit: 3 });
    expect(first.ids).toEqual(['zorbex', 'Z1', 'Z2']);
  });

  it('ranks every match when the top does not fill the page, or the page is past the cap', async () => {
    const queries: Array<Record<string, string | number>> = [
      { q: 'quillan', limit: 3 }, // 2 names have it at a word's start
      { q: 'zorbex', limit: 5, page: 2 }, // past the cap: as every list, read whole
    ];
    for (const query of queries) {
      const top = await search(capped, `${url}concepts/`, query);
      const all = await search(whole, `${url}concepts/`, query);
      expect([query, top.ids]).toEqual([query, all.ids]);
      expect([query, top.found, top.relation]).toEqual([query, '6', 'gte']);
    }
    const quillan = await search(capped, `${url}concepts/`, { q: 'quillan', limit: 3 });
    // Counted up to the cap, the top tried, then every match ranked.
    expect(quillan.ranked).toBe(3);
    expect(quillan.ids.slice(0, 2)).toEqual(['Q1', 'Q2']);
  });

  it('ranks the top of a typo the same way, by the spellings it was corrected to', async () => {
    for (const q of ['zrobex', 'zorbec', 'zorbexx']) {
      const query = { q, limit: 4 };
      const top = await search(capped, `${url}concepts/`, query);
      const all = await search(whole, `${url}concepts/`, query);
      expect([q, top.ids]).toEqual([q, all.ids]);
      expect([q, top.ids[0], top.found, top.relation]).toEqual([q, 'Z1', '6', 'gte']);
    }
  });

  it('ranks the top of a search of every public source (/concepts/)', async () => {
    const query = { q: 'zorbex', limit: 4 };
    const top = await search(capped, '/concepts/', query);
    const all = await search(whole, '/concepts/', query);
    expect(top.ids).toEqual(all.ids);
    expect([top.found, top.relation, top.ranked]).toEqual(['6', 'gte', 2]);
  });

  it("counts a common word's matches from the index of searched text, and the rows too long for it apart", async () => {
    // A common word's matches are counted from the index of searched text
    // (`concept_versions_head_search`), which holds only the rows whose searched text, names and
    // id fit in 2,400 bytes: the others are read apart, from the table. `common` takes every
    // word for common; the others, only a word PostgreSQL's statistics show in a quarter of
    // the concept versions.
    const source = await createSource(capped);
    const long = (word: string) => [
      { description: `${word} ${'lorem ipsum '.repeat(220)}`, locale: 'en' },
    ];
    const add = async (id: string, name: string, descriptions: object[] = []) => {
      await createConcept(capped, source.url, source.owner, {
        id,
        names: named(name),
        descriptions,
      });
    };
    await add('K1', 'Kelvash one');
    await add('K2', 'Kelvash two', long('other'));
    await add('L1', 'Plain one', long('kelvash'));
    await add('L2', 'Plain two', long('kelvash'));
    const path = `${source.url}concepts/`;
    // As written, and `kelvsah` (two letters swapped).
    for (const q of ['kelvash', 'kelvsah']) {
      const within = await search(common, path, { q, limit: 3 });
      const withinAll = await search(whole, path, { q, limit: 3 });
      expect([q, within.ids, within.found, within.relation]).toEqual([
        q,
        withinAll.ids,
        '4',
        undefined,
      ]);
      expect([q, withinAll.ids]).toEqual([q, ['K1', 'K2', 'L1']]);
    }
    // Past the cap: the long rows counted too (3 short and 4 long matches).
    await add('K3', 'Kelvash three');
    await add('K4', 'Kelvash four', long('other'));
    await add('L3', 'Plain three', long('kelvash'));
    const queries: Array<Record<string, string | number>> = [
      { q: 'kelvash', limit: 2 },
      { q: 'kelvsah', limit: 2 },
      { q: 'kelvash', limit: 3, page: 2 },
    ];
    for (const query of queries) {
      const past = await search(common, path, query);
      const all = await search(whole, path, query);
      expect([query, past.ids, past.found, past.relation]).toEqual([query, all.ids, '6', 'gte']);
      expect(all.found).toBe('7');
    }
    // And in every public source (`/concepts/`).
    for (const query of queries) {
      const past = await search(common, '/concepts/', query);
      const all = await search(whole, '/concepts/', query);
      expect([query, past.ids, past.found, past.relation]).toEqual([query, all.ids, '6', 'gte']);
    }
    const sent = async (t: TestApp, q: string) => {
      t.queries.texts = [];
      await request(t.app).get(path).query({ q, limit: 2 });
      const ranked = t.queries.texts.filter((sql) => sql.startsWith('WITH h AS MATERIALIZED'));
      t.queries.texts = undefined;
      return ranked.map((sql) => sql.includes('UNION ALL'));
    };
    // Counted in two parts, then the top ranked.
    expect(await sent(common, 'kelvash')).toEqual([true, false]);
    // As written (nothing found), then the swap, each counted in two parts.
    expect(await sent(common, 'kelvsah')).toEqual([true, true, false]);
    // A word no statistics show common: counted in one.
    expect(await sent(capped, 'kelvash')).toEqual([false, false]);
  });

  it('within the cap, counts and ranks every match at once', async () => {
    const source = await createSource(capped);
    for (const id of ['A', 'B', 'C']) {
      await createConcept(capped, source.url, source.owner, { id, names: named(`Vantrel ${id}`) });
    }
    const res = await search(capped, `${source.url}concepts/`, { q: 'vantrel', limit: 2 });
    expect([res.ids, res.found, res.relation, res.ranked]).toEqual([['A', 'B'], '3', undefined, 1]);
  });
});

describe('GraphQL', () => {
  const PAGE = `query($s: String!, $q: String!, $limit: Int, $first: Int, $after: String) {
    concepts(source: $s, q: $q, limit: $limit, first: $first, after: $after) {
      totalCount totalCountExact items { id } pageInfo { hasNextPage endCursor }
    }
  }`;
  type Page = {
    totalCount: number;
    totalCountExact: boolean;
    items: Array<{ id: string }>;
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
  const page = async (t: TestApp, variables: Record<string, unknown>): Promise<Page> =>
    dataOf(await gql(t, undefined, PAGE, { s: url, ...variables })).concepts as Page;

  it('pages the same, by offset and by cursor', async () => {
    const top = await page(capped, { q: 'zorbex', limit: 4 });
    const all = await page(whole, { q: 'zorbex', limit: 4 });
    expect(top.items).toEqual(all.items);
    expect([top.totalCount, top.totalCountExact, top.pageInfo.hasNextPage]).toEqual([
      6,
      false,
      true,
    ]);
    // Cursor pages of 2 through the top: each after the rank and id of the last.
    const walked: string[] = [];
    const expected = (await page(whole, { q: 'zorbex', limit: 6 })).items.map((i) => i.id);
    let after: string | null = null;
    for (let i = 0; i < 3; i += 1) {
      const next: Page = await page(capped, { q: 'zorbex', first: 2, ...(after ? { after } : {}) });
      // Counted as the offset page counts: the cap, not exact.
      expect([next.totalCount, next.totalCountExact]).toEqual([6, false]);
      walked.push(...next.items.map((item) => item.id));
      after = next.pageInfo.endCursor;
    }
    expect(walked).toEqual(expected);
  });
});
