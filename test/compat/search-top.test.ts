import request from 'supertest';
import { createTestApp, type TestApp } from '../factories';
import { createConcept, createMapping, createSource } from '../factories/content';
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

/**
 * A mapping search ranks a mapping by its own text (id, map type, the ends' codes and stored
 * names); one found by its concepts' names only ranks 0, below every match whose own text has a
 * word. Past the cap, those are ranked and the rest follow in the list's order (map type, sort
 * weight, id), unranked: each page must be the page of `whole`, which ranks every match.
 */
describe('mappings', () => {
  const MAP_TYPES = ['SAME-AS', 'BROADER-THAN', 'NARROWER-THAN', 'Q-AND-A'];
  /**
   * A public source with 12 concepts named `Vorpal blade <n>` (6 of them) or `Vorpal <n>`, and
   * mappings from each of them to a plain concept, of four map types in turn (12); besides, a
   * mapping whose id is `vorpal` (exact: ranks first) and two to an end outside the service whose
   * stored name has the word (`Vorpal external`, `Blade external`); and a retired one, which no
   * search finds.
   */
  let source: string;
  beforeAll(async () => {
    const s = await createSource(capped);
    source = s.url;
    await createConcept(capped, s.url, s.owner, { id: 'PLAIN', names: named('Plain end') });
    for (let n = 1; n <= 12; n += 1) {
      const name = n <= 6 ? `Vorpal blade ${n}` : `Vorpal ${n}`;
      await createConcept(capped, s.url, s.owner, { id: `V${n}`, names: named(name) });
      await createMapping(capped, s.url, s.owner, {
        id: `MV${String(n).padStart(2, '0')}`,
        map_type: MAP_TYPES[n % 4],
        from_concept_url: `${s.url}concepts/V${n}/`,
        to_concept_url: `${s.url}concepts/PLAIN/`,
      });
    }
    await createMapping(capped, s.url, s.owner, {
      id: 'vorpal',
      map_type: 'SAME-AS',
      from_concept_url: `${s.url}concepts/PLAIN/`,
      to_concept_url: `${s.url}concepts/V1/`,
    });
    for (const [id, name] of [
      ['EXT1', 'Vorpal external'],
      ['EXT2', 'Blade external'],
    ]) {
      await createMapping(capped, s.url, s.owner, {
        id,
        map_type: 'NARROWER-THAN',
        from_concept_url: `${s.url}concepts/V12/`,
        to_source_url: 'http://example.org/vorpal-terms',
        to_concept_code: id.toLowerCase(),
        to_concept_name: name,
      });
    }
    const retired = await createMapping(capped, s.url, s.owner, {
      id: 'RETIRED',
      map_type: 'SAME-AS',
      from_concept_url: `${s.url}concepts/V2/`,
      to_concept_url: `${s.url}concepts/PLAIN/`,
    });
    await request(capped.app)
      .delete(String(retired.url))
      .set('Authorization', s.owner.auth)
      .expect(204);
  });

  /** The ids and headers of a mapping search, and how many statements ranked or walked. */
  async function mappings(t: TestApp, path: string, query: Record<string, string | number>) {
    t.queries.texts = [];
    const res = await request(t.app).get(path).query(query);
    const texts = t.queries.texts;
    t.queries.texts = undefined;
    expect([query, res.status]).toEqual([query, 200]);
    return {
      ids: (res.body as Array<{ id: string }>).map((m) => m.id),
      found: res.headers.num_found,
      relation: res.headers.num_found_relation as string | undefined,
      ranked: texts.filter((sql) => sql.startsWith('WITH h AS MATERIALIZED')).length,
      walked: texts.filter((sql) => /_concept_id"? \+ 0\)/.test(sql)).length,
    };
  }

  it('past the cap, ranks the mappings whose own text has a word, then the rest in list order', async () => {
    // 14 match `vorpal`: the exact id and EXT1 by their own text, and 12 by name only. 8 match
    // `vorpal blade`: the id (its own `vorpal`, V1's `blade`), EXT2 (its own `blade`, V12's
    // `vorpal`), and MV01–MV06 by name only; EXT1 has no `blade` anywhere.
    const cases: Array<[Record<string, string | number>, number]> = [
      [{ q: 'vorpal', limit: 2 }, 0], // the top fills the page
      [{ q: 'vorpal', limit: 5 }, 1], // the top's 2, then 3 in list order
      [{ q: 'vorpal', limit: 3, page: 2 }, 1], // past the top: list order from its first
      [{ q: 'vorpal', limit: 2, page: 3 }, 1], // list order from its third
      [{ q: 'vorpal blade', limit: 6 }, 1], // two words: EXT1 has one of them, EXT2 neither
    ];
    for (const [query, walked] of cases) {
      const top = await mappings(capped, `${source}mappings/`, query);
      const all = await mappings(whole, `${source}mappings/`, query);
      expect([query, top.ids]).toEqual([query, all.ids]);
      // Counted up to the cap, the top ranked, then (walked) the rest in the list's order.
      expect([query, top.found, top.relation, top.ranked, top.walked]).toEqual([
        query,
        '6',
        'gte',
        2,
        walked,
      ]);
    }
    const first = await mappings(capped, `${source}mappings/`, { q: 'vorpal', limit: 5 });
    // The exact id, EXT1 (its stored name), then by map type: BROADER-THAN (MV01, MV05, MV09).
    expect(first.ids).toEqual(['vorpal', 'EXT1', 'MV01', 'MV05', 'MV09']);
    const blade = await mappings(whole, `${source}mappings/`, { q: 'vorpal blade', limit: 20 });
    // Each has one of the two words in its own text: by map type (NARROWER-THAN, SAME-AS).
    expect([blade.ids.slice(0, 2), blade.found]).toEqual([['EXT2', 'vorpal'], '8']);
  });

  it("ranks a code equal to q by lower() but not by the words' fold as its own text has it", async () => {
    // A Greek final sigma: the own text of the code `ΑΣ` holds `ας`, its lower() is `ασ`. `q=ασ`
    // finds the mapping by its concept's name only, as the other 7, so it ranks 0 with them, in
    // the list's order: past the cap as within it.
    const s = await createSource(capped);
    for (let n = 1; n <= 8; n += 1) {
      await createConcept(capped, s.url, s.owner, { id: `A${n}`, names: named(`Ασπιρίνη ${n}`) });
      await createMapping(capped, s.url, s.owner, {
        id: `MG${n}`,
        map_type: n === 1 ? 'SAME-AS' : 'BROADER-THAN',
        from_concept_url: `${s.url}concepts/A${n}/`,
        to_source_url: 'http://example.org/greek-terms',
        to_concept_code: n === 1 ? 'ΑΣ' : `G${n}`,
      });
    }
    const query = { q: 'ασ', limit: 3 };
    const top = await mappings(capped, `${s.url}mappings/`, query);
    const all = await mappings(whole, `${s.url}mappings/`, query);
    expect([all.ids, all.found]).toEqual([['MG2', 'MG3', 'MG4'], '8']);
    expect([top.ids, top.found, top.relation, top.walked]).toEqual([all.ids, '6', 'gte', 1]);
    // Asked as its own text has it, it is found by it and ranked first.
    const own = await mappings(whole, `${s.url}mappings/`, { q: 'ΑΣ', limit: 3 });
    expect(own.ids).toEqual(['MG1']);
  });

  it('pages as the full ranking for codes and names of letters the folds treat differently', async () => {
    // Codes and names whose letters PostgreSQL's lower() and the words' fold may read apart
    // (final sigma, accents, ligatures, sharp s, dotted I, the ohm and kelvin signs), crossed:
    // each mapping from a concept named by one to an end coded by another.
    const tokens = ['ΑΣ', 'Σίσυφος', 'Café', 'CAFE', 'ﬁbre', 'Straße', 'İzmir', 'Ω', 'K'];
    const s = await createSource(capped);
    for (let n = 0; n < 45; n += 1) {
      const name = `${tokens[n % tokens.length]} ${tokens[(n + 4) % tokens.length]} ${n}`;
      await createConcept(capped, s.url, s.owner, { id: `F${n}`, names: named(name) });
      await createMapping(capped, s.url, s.owner, {
        id: `MF${n}`,
        map_type: MAP_TYPES[n % 4],
        from_concept_url: `${s.url}concepts/F${n}/`,
        to_source_url: 'http://example.org/fold-terms',
        to_concept_code: tokens[(n * 2 + 1) % tokens.length],
      });
    }
    const queries = [
      'ασ',
      'ας',
      'σισυφος',
      'σίσυφοσ',
      'cafe',
      'café',
      'CAFÉ',
      'fibre',
      'ﬁbre',
      'straße',
      'strasse',
      'izmir',
      'i̇zmir',
      'ω',
      'Ω',
      'k',
      'K',
      'ασ cafe',
    ];
    let pastTop = 0;
    for (const q of queries) {
      for (const page of [
        { limit: 3, page: 1 },
        { limit: 3, page: 2 },
        { limit: 10, page: 1 },
      ]) {
        const query = { q, ...page };
        const top = await mappings(capped, `${s.url}mappings/`, query);
        const all = await mappings(whole, `${s.url}mappings/`, query);
        expect([query, top.ids]).toEqual([query, all.ids]);
        pastTop += top.walked;
      }
    }
    // Pages went on past their top, in the list's order (14 of the 30 pages of 3 past the cap).
    expect(pastTop).toBeGreaterThanOrEqual(10);
  });

  it('ranks every match when the page runs past the cap', async () => {
    const query = { q: 'vorpal', limit: 4, page: 2 };
    const top = await mappings(capped, `${source}mappings/`, query);
    const all = await mappings(whole, `${source}mappings/`, query);
    expect(top.ids).toEqual(all.ids);
    expect([top.found, top.relation, top.ranked, top.walked]).toEqual(['6', 'gte', 1, 0]);
  });

  it('the same across every public source (/mappings/)', async () => {
    const queries: Array<Record<string, string | number>> = [
      { q: 'vorpal', limit: 5 },
      { q: 'vorpal', limit: 3, page: 2 },
    ];
    for (const query of queries) {
      const top = await mappings(capped, '/mappings/', query);
      const all = await mappings(whole, '/mappings/', query);
      expect([query, top.ids]).toEqual([query, all.ids]);
      expect([query, top.found, top.relation, top.walked]).toEqual([query, '6', 'gte', 1]);
    }
  });

  it('pages the same by cursor, through the top and past it (GraphQL)', async () => {
    const PAGE = `query($s: String!, $q: String!, $first: Int, $after: String) {
      mappings(source: $s, q: $q, first: $first, after: $after) {
        totalCount totalCountExact items { id } pageInfo { endCursor }
      }
    }`;
    type Page = {
      totalCount: number;
      totalCountExact: boolean;
      items: Array<{ id: string }>;
      pageInfo: { endCursor: string | null };
    };
    const expected = (await mappings(whole, `${source}mappings/`, { q: 'vorpal', limit: 6 })).ids;
    const walked: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 3; i += 1) {
      const variables: Record<string, unknown> = { s: source, q: 'vorpal', first: 2 };
      if (after) variables.after = after;
      const next = dataOf(await gql(capped, undefined, PAGE, variables)).mappings as Page;
      expect([next.totalCount, next.totalCountExact]).toEqual([6, false]);
      walked.push(...next.items.map((item) => item.id));
      after = next.pageInfo.endCursor;
    }
    expect(walked).toEqual(expected);
  });
});
