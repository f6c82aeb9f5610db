import request from 'supertest';
import { AppError } from '../../src/errors';
import { encodeCursor, pagingOf } from '../../src/services/shared/cursor';
import { defaultListParams, type ListParams } from '../../src/services';
import {
  createOrg,
  createTestApp,
  createUser,
  uniqueId,
  type TestApp,
  type TestUser,
} from '../factories';
import { createConcept, createMapping, createRepo } from '../factories/content';
import { dataOf, gql, type GqlResponse, type Json } from './gql';

let t: TestApp;
let owner: TestUser;
let outsider: TestUser;
let org: string;
/** `/orgs/:org/sources/S/`: the concepts and mappings below. */
let source: string;
/** `/orgs/:org/sources/S2/`: concepts C01 and C02 again (ids shared across sources). */
let other: string;
/** `/orgs/:org/collections/C/`: references to concepts and mappings of S and S2. */
let collection: string;

beforeAll(async () => {
  t = await createTestApp();
  owner = await createUser(t);
  outsider = await createUser(t);
  org = (await createOrg(t, owner)).id;
  source = (await createRepo(t, `/orgs/${org}`, owner, { id: 'S' })).url;
  other = (await createRepo(t, `/orgs/${org}`, owner, { id: 'S2' })).url;
  collection = (await createRepo(t, `/orgs/${org}`, owner, { id: 'C' }, 'collections')).url;
  // Names that tie (Fever, Aspirin), rank alike for `q`, and datatypes and classes that tie.
  const concepts: Array<[string, string, string, string]> = [
    ['C01', 'Fever', 'Diagnosis', 'N/A'],
    ['C02', 'Fever', 'Symptom', 'Numeric'],
    ['C03', 'Cough', 'Symptom', 'N/A'],
    ['C04', 'Fever of unknown origin', 'Finding', 'Text'],
    ['C05', 'Aspirin', 'Drug', 'N/A'],
    ['C06', 'Headache', 'Symptom', 'Numeric'],
    ['C07', 'Malaria', 'Diagnosis', 'N/A'],
    ['C08', 'Yellow fever', 'Diagnosis', 'Text'],
    ['C09', 'fever', 'Symptom', 'N/A'],
    ['C10', 'Rheumatic fever', 'Diagnosis', 'Numeric'],
    ['C11', 'Zinc', 'Drug', 'N/A'],
    ['C12', 'Aspirin', 'Drug', 'Text'],
  ];
  for (const [id, name, cls, datatype] of concepts) {
    await createConcept(t, source, owner, {
      id,
      concept_class: cls,
      datatype,
      names: [{ name, locale: 'en', locale_preferred: true }],
    });
  }
  for (const id of ['C01', 'C02']) await createConcept(t, other, owner, { id });
  // Children of C03, for the hierarchy's pages.
  for (const id of ['H1', 'H2', 'H3', 'H4']) {
    await createConcept(t, source, owner, {
      id,
      parent_concept_urls: [`${source}concepts/C03/`],
    });
  }
  // An edited concept: versions to page.
  for (const name of ['Fever (edited)', 'Fever again', 'Fever']) {
    await request(t.app)
      .put(`${source}concepts/C01/`)
      .set('Authorization', owner.auth)
      .send({ names: [{ name, locale: 'en', locale_preferred: true }] })
      .expect(200);
  }
  // Map types and sort weights that tie, and weights missing (NULL sorts last ascending).
  const mappings: Array<[string, string, string, string, number | null]> = [
    ['M01', 'SAME-AS', 'C01', 'C02', 1],
    ['M02', 'SAME-AS', 'C01', 'C03', null],
    ['M03', 'NARROWER-THAN', 'C04', 'C01', 2],
    ['M04', 'SAME-AS', 'C05', 'C12', 1],
    ['M05', 'BROADER-THAN', 'C07', 'C08', null],
    ['M06', 'SAME-AS', 'C09', 'C02', 0.5],
    ['M07', 'NARROWER-THAN', 'C10', 'C01', 2],
    ['M08', 'SAME-AS', 'C11', 'C06', null],
  ];
  for (const [id, mapType, from, to, weight] of mappings) {
    await createMapping(t, source, owner, {
      id,
      map_type: mapType,
      from_concept_url: `${source}concepts/${from}/`,
      to_concept_url: `${source}concepts/${to}/`,
      ...(weight === null ? {} : { sort_weight: weight }),
    });
  }
  await request(t.app)
    .put(`${collection}references/`)
    .set('Authorization', owner.auth)
    .send({
      data: {
        expressions: [
          ...['C01', 'C02', 'C03', 'C04', 'C05', 'C08', 'C09', 'C10'].map(
            (c) => `${source}concepts/${c}/`,
          ),
          `${other}concepts/C01/`,
          `${other}concepts/C02/`,
          ...['M01', 'M02', 'M03', 'M04', 'M05'].map((m) => `${source}mappings/${m}/`),
        ],
      },
    })
    .expect(200);
}, 120_000);
afterAll(async () => t.close());

const PAGE_INFO = 'pageInfo { hasNextPage hasPreviousPage startCursor endCursor }';
const CURSOR_VARS = '$first: Int, $after: String, $limit: Int, $offset: Int';
const CURSOR_ARGS = 'first: $first, after: $after, limit: $limit, offset: $offset';

interface PageOf {
  totalCount: number;
  items: Array<Record<string, string>>;
  edges: Array<{ cursor: string; node: Record<string, string> }>;
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}

/** A list field to page: its query (`PAGE` where its page's selection goes) and where it lies. */
interface ListCase {
  name: string;
  query: string;
  vars?: Record<string, unknown>;
  /** The page in the answer's data. */
  at: (data: Json) => PageOf;
  /** The field naming an item (unique in the list). */
  key: string;
}

function selection(key: string): string {
  return `totalCount items { ${key} } edges { cursor node { ${key} } } ${PAGE_INFO}`;
}

/** Who asks: an `Authorization` value, null for anonymous. */
type Auth = string | null;

function ask(
  c: ListCase,
  vars: Record<string, unknown>,
  auth: Auth = owner.auth,
): Promise<GqlResponse> {
  return gql(t, auth ?? undefined, c.query.replace('PAGE', selection(c.key)), {
    ...c.vars,
    ...vars,
  });
}

/** The whole list by offset (`limit: 0`). */
async function offsetList(c: ListCase, auth: Auth = owner.auth): Promise<string[]> {
  const page = c.at(dataOf(await ask(c, { limit: 0 }, auth)));
  return page.items.map((item) => item[c.key]);
}

/**
 * The list walked with `first`/`after` to its end, checking each page's shape on the way;
 * `between` runs after each page (its number) before the next is asked.
 */
async function walk(
  c: ListCase,
  first: number,
  options: { auth?: Auth; between?: (page: number) => Promise<void> } = {},
): Promise<string[]> {
  const seen: string[] = [];
  let after: string | null = null;
  for (let n = 0; n < 500; n++) {
    const auth = options.auth === undefined ? owner.auth : options.auth;
    const page = c.at(dataOf(await ask(c, { first, after }, auth)));
    const keys = page.items.map((item) => item[c.key]);
    expect(page.edges.map((e) => e.node[c.key])).toEqual(keys);
    expect(keys.length).toBeLessThanOrEqual(first);
    expect(page.pageInfo.startCursor).toBe(page.edges[0]?.cursor ?? null);
    expect(page.pageInfo.endCursor).toBe(page.edges[page.edges.length - 1]?.cursor ?? null);
    expect(page.pageInfo.hasPreviousPage).toBe(after !== null);
    seen.push(...keys);
    if (!page.pageInfo.hasNextPage) return seen;
    expect(keys).toHaveLength(first);
    after = page.pageInfo.endCursor;
    await options.between?.(n);
  }
  throw new Error('the walk never ended');
}

function rootConcepts(args: string, of = () => source): ListCase {
  return {
    name: `concepts(${args})`,
    query: `query($src: String!, ${CURSOR_VARS}) { list: concepts(source: $src, ${CURSOR_ARGS} ${args}) { PAGE } }`,
    get vars() {
      return { src: of() };
    },
    at: (data) => data.list as PageOf,
    key: 'id',
  };
}

function rootMappings(args: string): ListCase {
  return {
    name: `mappings(${args})`,
    query: `query($src: String!, ${CURSOR_VARS}) { list: mappings(source: $src, ${CURSOR_ARGS} ${args}) { PAGE } }`,
    get vars() {
      return { src: source };
    },
    at: (data) => data.list as PageOf,
    key: 'id',
  };
}

function collectionList(field: string, args = '', key = 'url'): ListCase {
  return {
    name: `Collection.${field}(${args})`,
    query: `query($u: String!, ${CURSOR_VARS}) { collection(url: $u) { ${field}(${CURSOR_ARGS} ${args}) { PAGE } } }`,
    get vars() {
      return { u: collection };
    },
    at: (data) => data.collection[field] as PageOf,
    key,
  };
}

const LISTS: ListCase[] = [
  rootConcepts(''),
  rootConcepts(', sort: "id", sortDesc: true'),
  rootConcepts(', sort: "name"'),
  rootConcepts(', sort: "name", sortDesc: true'),
  rootConcepts(', sort: "lastUpdate", sortDesc: true'),
  rootConcepts(', sort: "datatype"'),
  rootConcepts(', sort: "conceptClass", sortDesc: true'),
  rootConcepts(', q: "fever"'),
  rootConcepts(', q: "fever", sort: "name"'),
  rootConcepts(', includeRetired: true, conceptClass: ["Symptom", "Drug"]'),
  {
    name: 'Source.concepts',
    query: `query($u: String!, ${CURSOR_VARS}) { source(url: $u) { concepts(${CURSOR_ARGS}) { PAGE } } }`,
    get vars() {
      return { u: source };
    },
    at: (data) => data.source.concepts as PageOf,
    key: 'id',
  },
  {
    name: 'Concept.children',
    query: `query($u: String!, ${CURSOR_VARS}) { concept(url: $u) { children(${CURSOR_ARGS}) { PAGE } } }`,
    get vars() {
      return { u: `${source}concepts/C03/` };
    },
    at: (data) => data.concept.children as PageOf,
    key: 'id',
  },
  {
    name: 'Concept.versions',
    query: `query($u: String!, ${CURSOR_VARS}) { concept(url: $u) { versions(${CURSOR_ARGS}) { PAGE } } }`,
    get vars() {
      return { u: `${source}concepts/C01/` };
    },
    at: (data) => data.concept.versions as PageOf,
    key: 'version',
  },
  rootMappings(''),
  rootMappings(', sort: "sortWeight"'),
  rootMappings(', sort: "sortWeight", sortDesc: true'),
  rootMappings(', sort: "mapType", sortDesc: true'),
  rootMappings(', sort: "lastUpdate"'),
  rootMappings(', sort: "id", sortDesc: true'),
  rootMappings(', q: "c01"'),
  {
    name: 'Source.mappings',
    query: `query($u: String!, ${CURSOR_VARS}) { source(url: $u) { mappings(${CURSOR_ARGS}) { PAGE } } }`,
    get vars() {
      return { u: source };
    },
    at: (data) => data.source.mappings as PageOf,
    key: 'id',
  },
  collectionList('references', '', 'id'),
  collectionList('references', ', resourceType: "Concept"', 'id'),
  collectionList('concepts'),
  collectionList('concepts', ', sortDesc: true'),
  collectionList('concepts', ', sort: "name"'),
  collectionList('concepts', ', q: "fever"'),
  collectionList('mappings'),
  collectionList('mappings', ', sort: "sortWeight", sortDesc: true'),
  {
    name: 'Expansion.concepts',
    query: `query($u: String!, ${CURSOR_VARS}) { expansion(collection: $u, mnemonic: "autoexpand-HEAD") {
      concepts(${CURSOR_ARGS}) { PAGE } } }`,
    get vars() {
      return { u: collection };
    },
    at: (data) => data.expansion.concepts as PageOf,
    key: 'url',
  },
  {
    name: 'Expansion.mappings',
    query: `query($u: String!, ${CURSOR_VARS}) { expansion(collection: $u, mnemonic: "autoexpand-HEAD") {
      mappings(${CURSOR_ARGS}) { PAGE } } }`,
    get vars() {
      return { u: collection };
    },
    at: (data) => data.expansion.mappings as PageOf,
    key: 'url',
  },
];

describe('cursor connections beside offset pages', () => {
  it.each(LISTS.map((c) => [c.name, c] as const))(
    '%s: walked with first/after gives exactly the offset list, in order',
    async (_, c) => {
      const all = await offsetList(c);
      expect(all.length).toBeGreaterThan(2);
      expect(await walk(c, 3)).toEqual(all);
      expect(await walk(c, 1)).toEqual(all);
      expect(await walk(c, 1000)).toEqual(all);
    },
  );

  it('offset pages carry cursors too: a walk may go on from one with after', async () => {
    const c = rootConcepts('');
    const all = await offsetList(c);
    const page = c.at(dataOf(await ask(c, { limit: 4, offset: 2 })));
    expect(page.items.map((i) => i.id)).toEqual(all.slice(2, 6));
    expect(page.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    const next = c.at(dataOf(await ask(c, { first: 3, after: page.pageInfo.endCursor })));
    expect(next.items.map((i) => i.id)).toEqual(all.slice(6, 9));
    expect(next.totalCount).toBe(all.length);
    const last = c.at(dataOf(await ask(c, { limit: 5, offset: all.length - 5 })));
    expect(last.pageInfo.hasNextPage).toBe(false);
  });

  it('first: 0 answers no items and whether any follow; after alone pages by limit', async () => {
    const c = rootConcepts('');
    const all = await offsetList(c);
    const none = c.at(dataOf(await ask(c, { first: 0 })));
    expect(none.edges).toEqual([]);
    expect(none.pageInfo).toEqual({
      hasNextPage: true,
      hasPreviousPage: false,
      startCursor: null,
      endCursor: null,
    });
    const first = c.at(dataOf(await ask(c, { first: 2 })));
    const byLimit = c.at(dataOf(await ask(c, { after: first.pageInfo.endCursor, limit: 4 })));
    expect(byLimit.items.map((i) => i.id)).toEqual(all.slice(2, 6));
    const rest = c.at(dataOf(await ask(c, { after: first.pageInfo.endCursor, limit: 0 })));
    expect(rest.items.map((i) => i.id)).toEqual(all.slice(2));
    expect(rest.pageInfo.hasNextPage).toBe(false);
  });
});

/** A fresh source of concepts P00, P02, …, P18 (even numbers: room between them). */
async function freshSource(by: TestUser = owner, fields: Record<string, unknown> = {}) {
  const repo = await createRepo(t, `/orgs/${org}`, by, { id: uniqueId('P'), ...fields });
  for (let i = 0; i < 20; i += 2) {
    const id = `P${String(i).padStart(2, '0')}`;
    await createConcept(t, repo.url, by, {
      id,
      names: [{ name: `Fever ${id}`, locale: 'en', locale_preferred: true }],
    });
  }
  return repo.url;
}

/** Each of `expected` once, and nothing twice. */
function onceEach(walked: string[], expected: string[]): void {
  expect(new Set(walked).size).toBe(walked.length);
  for (const key of expected) expect(walked).toContain(key);
}

describe('stable under inserts', () => {
  it('concepts by id: rows inserted before the cursor shift nothing; those after it come in order', async () => {
    const url = await freshSource();
    const c = rootConcepts('', () => url);
    const before = await offsetList(c);
    const walked = await walk(c, 3, {
      between: async (page) => {
        // Page 1 ended at P04: one before it, one just after it, one at the end.
        if (page === 0) {
          for (const id of ['P01', 'P05', 'P99']) await createConcept(t, url, owner, { id });
        }
      },
    });
    onceEach(walked, before);
    expect(walked).not.toContain('P01');
    expect(walked).toEqual((await offsetList(c)).filter((id) => id !== 'P01'));
  });

  it('concepts newest first: new concepts (before the cursor) repeat nothing', async () => {
    const url = await freshSource();
    const c = rootConcepts(', sort: "lastUpdate", sortDesc: true', () => url);
    const before = await offsetList(c);
    let n = 0;
    const walked = await walk(c, 3, {
      between: async () => {
        for (let i = 0; i < 2; i++) await createConcept(t, url, owner, { id: `N${n++}` });
      },
    });
    expect(walked).toEqual(before);
  });

  it('a search by rank: better matches inserted between pages repeat nothing', async () => {
    const url = await freshSource();
    const c = rootConcepts(', q: "fever"', () => url);
    const before = await offsetList(c);
    let n = 0;
    const walked = await walk(c, 2, {
      between: async () => {
        await createConcept(t, url, owner, {
          id: `Q${n++}`,
          names: [{ name: 'Fever', locale: 'en', locale_preferred: true }],
        });
      },
    });
    onceEach(walked, before);
  });

  it('mappings and references: rows inserted between pages repeat and skip nothing', async () => {
    const url = await freshSource();
    for (let i = 0; i < 6; i++) {
      await createMapping(t, url, owner, {
        id: `M${i}`,
        map_type: 'SAME-AS',
        from_concept_url: `${url}concepts/P00/`,
        to_concept_url: `${url}concepts/P${String(2 * i + 2).padStart(2, '0')}/`,
      });
    }
    const mappings: ListCase = { ...rootMappings(''), vars: { src: url } };
    const before = await offsetList(mappings);
    let n = 0;
    const walked = await walk(mappings, 2, {
      between: async () => {
        // A map type sorting first (before the cursor), and one sorting last.
        for (const mapType of ['AAA', 'ZZZ']) {
          const from = `P${String((2 * n) % 20).padStart(2, '0')}`;
          await createMapping(t, url, owner, {
            id: `X${n++}`,
            map_type: mapType,
            from_concept_url: `${url}concepts/${from}/`,
            to_concept_url: `${url}concepts/P04/`,
          });
        }
      },
    });
    onceEach(walked, before);
    expect(walked.filter((id) => id.startsWith('X'))).not.toContain('X0');

    const col = (await createRepo(t, `/orgs/${org}`, owner, {}, 'collections')).url;
    const addRefs = (codes: string[]) =>
      request(t.app)
        .put(`${col}references/`)
        .set('Authorization', owner.auth)
        .send({ data: { expressions: codes.map((code) => `${url}concepts/${code}/`) } })
        .expect(200);
    await addRefs(['P00', 'P02', 'P04', 'P06', 'P08']);
    const refs: ListCase = { ...collectionList('references', '', 'expression'), vars: { u: col } };
    const refsBefore = await offsetList(refs);
    const more = ['P10', 'P12', 'P14', 'P16', 'P18'];
    const refsWalked = await walk(refs, 2, {
      between: async () => {
        await addRefs([more.shift() ?? 'P00']);
      },
    });
    onceEach(refsWalked, refsBefore);
  });

  it('concurrent walks beside concurrent inserts each see every item once', async () => {
    const url = await freshSource();
    const byId = rootConcepts('', () => url);
    const newest = rootConcepts(', sort: "lastUpdate", sortDesc: true', () => url);
    const before = await offsetList(byId);
    const newestBefore = await offsetList(newest);
    let n = 0;
    const inserting = (async () => {
      for (let i = 0; i < 8; i++) await createConcept(t, url, owner, { id: `W${n++}` });
    })();
    const walks = await Promise.all([
      walk(byId, 2),
      walk(byId, 3),
      walk(newest, 2),
      walk(newest, 3),
      inserting.then(() => []),
    ]);
    // A walk's first page may already hold some of the new ones; the rest come in their places.
    const originals = (walk: string[], list: string[]) => walk.filter((k) => list.includes(k));
    for (const [walked, list] of [
      [walks[0], before],
      [walks[1], before],
      [walks[2], newestBefore],
      [walks[3], newestBefore],
    ]) {
      onceEach(walked, list);
      expect(originals(walked, list)).toEqual(list);
    }
  });
});

/** A cursor's JSON, and a cursor of other JSON. */
const decoded = (cursor: string): { k: unknown[]; c: string } =>
  JSON.parse(Buffer.from(cursor, 'base64url').toString()) as { k: unknown[]; c: string };
const encoded = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function expectInvalid(res: GqlResponse, field: string): void {
  expect(res.status).not.toBe(500);
  expect(res.errors?.[0]?.extensions?.code).toBe('INVALID');
  expect(res.errors?.[0]?.extensions?.fieldErrors?.[field]).toBeDefined();
}

describe('cursors refused', () => {
  it('malformed, tampered and foreign cursors are INVALID, never a 500', async () => {
    const c = rootConcepts('');
    const page = c.at(dataOf(await ask(c, { first: 2 })));
    const cursor = page.pageInfo.endCursor!;
    const { k, c: check } = decoded(cursor);
    const bad = [
      'garbage!',
      'bm90IGpzb24',
      encoded([1, 2]),
      encoded({ k, c: 'x' }),
      encoded({ k: [...k.slice(0, -1), '999999999999999999'], c: check }),
      encoded({ k: ['C99', k[1]], c: check }),
      encoded({ k: [...k, 'extra'], c: check }),
      encoded({ k: [{ sql: 1 }, k[1]], c: check }),
      'A'.repeat(30_000),
    ];
    for (const after of bad) expectInvalid(await ask(c, { first: 2, after }), 'after');
    // Another list's cursor: another order, another source, another search, another kind.
    for (const foreign of [
      rootConcepts(', sort: "name"'),
      rootConcepts('', () => other),
      rootConcepts(', q: "fever"'),
      rootMappings(''),
      collectionList('concepts', '', 'id'),
    ]) {
      expectInvalid(await ask(foreign, { first: 2, after: cursor }), 'after');
    }
    // The cursor itself still works.
    expect(c.at(dataOf(await ask(c, { first: 2, after: cursor }))).items).toHaveLength(2);
  });

  it('a cursor with keys its list cannot compare is INVALID even with a good check', () => {
    const list = { list: 'concepts' };
    const identity = JSON.stringify(list);
    const params = (after: string): ListParams => defaultListParams({ first: 2, after });
    for (const keys of [
      ['C01', 'not-an-id'],
      ['C01', '1'.repeat(19)],
      ['C\u0000', '1'],
      [5, '1'],
    ]) {
      const after = encodeCursor(identity, keys);
      expect(() => pagingOf(params(after), list, ['text', 'id'])).toThrow(AppError);
    }
    for (const [types, keys] of [
      [['time'], ['2024-01-01']],
      [['time'], ['1'.repeat(18)]],
      [['number'], ['1e400']],
      [['number'], [null, 1]],
    ] as const) {
      const after = encodeCursor(identity, [...keys]);
      expect(() => pagingOf(params(after), list, [...types])).toThrow(AppError);
    }
    const good = encodeCursor(identity, [1.5, 'NaN', null]);
    expect(pagingOf(params(good), list, ['number', 'number', 'number']).window).toEqual({
      limit: 3,
      offset: 0,
      after: [1.5, 'NaN', null],
      countLazily: true,
    });
  });

  it('first above the maximum or below 0, and after or first with offset, are INVALID', async () => {
    const c = rootConcepts('');
    expectInvalid(await ask(c, { first: 1001 }), 'first');
    expectInvalid(await ask(c, { first: -1 }), 'first');
    expect(c.at(dataOf(await ask(c, { first: 1000 }))).pageInfo.hasNextPage).toBe(false);
    const { endCursor } = c.at(dataOf(await ask(c, { first: 2 }))).pageInfo;
    expectInvalid(await ask(c, { first: 2, after: endCursor, offset: 2 }), 'offset');
    expectInvalid(await ask(c, { first: 2, offset: 2 }), 'offset');
    expectInvalid(
      await ask(collectionList('references', '', 'id'), { first: 2, offset: 1 }),
      'offset',
    );
  });

  it('an expansion windowed by its offset/count parameters pages by offset only', async () => {
    const res = await gql(
      t,
      owner.auth,
      `mutation($c: String!) { createExpansion(collection: $c, mnemonic: "window",
        parameters: { offset: 1, count: 3 }) { expansion { mnemonic } } }`,
      { c: collection },
    );
    dataOf(res);
    const c: ListCase = {
      name: 'window',
      query: `query($u: String!, ${CURSOR_VARS}) { expansion(collection: $u, mnemonic: "window") {
        concepts(${CURSOR_ARGS}) { PAGE } } }`,
      vars: { u: collection },
      at: (data) => data.expansion.concepts as PageOf,
      key: 'url',
    };
    expectInvalid(await ask(c, { first: 2 }), 'first');
    const page = c.at(dataOf(await ask(c, { limit: 2 })));
    expect(page.totalCount).toBe(3);
    expect(page.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const last = c.at(dataOf(await ask(c, { limit: 2, offset: 2 })));
    expect(last.items).toHaveLength(1);
    expect(last.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
  });
});

describe('privacy through cursors', () => {
  it("a private source's cursor reaches nothing for those who may not see it", async () => {
    const secret = await freshSource(owner, { public_access: 'None' });
    const c = rootConcepts('', () => secret);
    const { endCursor } = c.at(dataOf(await ask(c, { first: 2 }))).pageInfo;
    for (const auth of [undefined, outsider.auth]) {
      const res = await gql(t, auth, c.query.replace('PAGE', selection('id')), {
        src: secret,
        first: 2,
        after: endCursor,
      });
      expect(res.data?.list ?? null).toBeNull();
      expect(['UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND']).toContain(
        res.errors?.[0]?.extensions?.code,
      );
    }
    // Nor does it open another list.
    expectInvalid(await ask(rootConcepts(''), { first: 2, after: endCursor }), 'after');
  });

  it("a collection's members from a private source stay out of every page of those who may not see it", async () => {
    const secret = await freshSource(owner, { public_access: 'None' });
    const col = (await createRepo(t, `/orgs/${org}`, owner, {}, 'collections')).url;
    await request(t.app)
      .put(`${col}references/`)
      .set('Authorization', owner.auth)
      .send({
        data: {
          expressions: [
            ...['P00', 'P04', 'P08'].map((code) => `${secret}concepts/${code}/`),
            ...['C01', 'C03', 'C05', 'C07'].map((code) => `${source}concepts/${code}/`),
          ],
        },
      })
      .expect(200);
    const c: ListCase = { ...collectionList('concepts', ', sort: "id"'), vars: { u: col } };
    const all = await walk(c, 2);
    expect(all.filter((url) => url.startsWith(secret))).toHaveLength(3);
    // The owner's cursor, placed on a private member, handed to others.
    const page = c.at(dataOf(await ask(c, { first: 2 })));
    for (const auth of [null, outsider.auth]) {
      const theirs = await walk(c, 2, { auth });
      expect(theirs).toEqual(all.filter((url) => !url.startsWith(secret)));
      const res = await ask(c, { first: 10, after: page.pageInfo.endCursor }, auth);
      const items = c.at(dataOf(res)).items.map((i) => i.url);
      expect(items.filter((url) => url.startsWith(secret))).toEqual([]);
      expect(c.at(dataOf(res)).totalCount).toBe(4);
    }
  });
});

describe('totalCount of a cursor page', () => {
  it('is counted only when the query asks for it', async () => {
    const query = (fields: string) => `query($s: String!, $after: String) {
      concepts(source: $s, conceptClass: ["Symptom"], first: 2, after: $after) { ${fields} } }`;
    /** The statements one query takes, once its reads are warm (asked once before). */
    async function statements(fields: string, after?: string): Promise<[number, Json]> {
      await gql(t, owner.auth, query(fields), { s: source, after });
      t.queries.count = 0;
      const res = await gql(t, owner.auth, query(fields), { s: source, after });
      return [t.queries.count, dataOf(res).concepts];
    }
    const [without, first] = await statements('items { id } pageInfo { endCursor }');
    const [counted, page] = await statements('totalCount items { id }');
    expect(counted).toBe(without + 1);
    // The whole list's count (C02, C03, C06, C09), whatever page it is asked on.
    expect(page.totalCount).toBe(4);
    const [afterWithout] = await statements('items { id }', first.pageInfo.endCursor);
    const [afterCounted, next] = await statements('totalCount', first.pageInfo.endCursor);
    expect(afterCounted).toBe(afterWithout + 1);
    expect(next.totalCount).toBe(4);
  });

  it("is counted only when asked for on a collection's references too", async () => {
    const query = (fields: string, paging: string) => `query($c: String!) {
      collection(url: $c) { references(${paging}) { ${fields} } } }`;
    async function statements(fields: string, paging: string): Promise<[number, Json]> {
      await gql(t, owner.auth, query(fields, paging), { c: collection });
      t.queries.count = 0;
      const res = await gql(t, owner.auth, query(fields, paging), { c: collection });
      return [t.queries.count, dataOf(res).collection.references];
    }
    const [, all] = await statements('totalCount', 'limit: 0');
    expect(all.totalCount).toBeGreaterThan(2);
    const [without, first] = await statements('pageInfo { endCursor }', 'first: 1');
    const [counted, page] = await statements('totalCount', 'first: 1');
    expect(counted).toBe(without + 1);
    expect(page.totalCount).toBe(all.totalCount);
    const after = `first: 1, after: "${first.pageInfo.endCursor}"`;
    const [, next] = await statements('totalCount items { id }', after);
    expect(next.totalCount).toBe(all.totalCount);
  });
});

describe('nested cursor pages across sibling sources', () => {
  const NESTED = `query($org: String!) {
    org(id: $org) { sources(limit: 20) { items { id concepts(first: 2) { totalCount
      edges { cursor node { id displayName names { name } } } pageInfo { hasNextPage endCursor } } } } }
  }`;

  async function orgWithSources(count: number): Promise<string> {
    const id = (await createOrg(t, owner)).id;
    for (let s = 0; s < count; s += 1) {
      const src = await createRepo(t, `/orgs/${id}`, owner, { id: `S${s}` });
      for (let c = 0; c < 3; c += 1) await createConcept(t, src.url, owner, { id: `C${c}` });
    }
    return id;
  }

  it('first pages of 1, 4 and 10 sources take the same statements; each goes on from its own cursor', async () => {
    const counts: number[] = [];
    for (const n of [1, 4, 10]) {
      const id = await orgWithSources(n);
      t.queries.count = 0;
      const data = dataOf(await gql(t, owner.auth, NESTED, { org: id }));
      counts.push(t.queries.count);
      for (const s of data.org.sources.items) {
        expect(s.concepts.totalCount).toBe(3);
        expect(s.concepts.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([
          'C0',
          'C1',
        ]);
        expect(s.concepts.pageInfo.hasNextPage).toBe(true);
        const next = dataOf(
          await gql(
            t,
            owner.auth,
            `query($u: String!, $after: String) { source(url: $u) {
              concepts(first: 2, after: $after) { items { id } pageInfo { hasNextPage } } } }`,
            { u: `/orgs/${id}/sources/${s.id}/`, after: s.concepts.pageInfo.endCursor },
          ),
        );
        expect(next.source.concepts).toEqual({
          items: [{ id: 'C2' }],
          pageInfo: { hasNextPage: false },
        });
      }
    }
    expect(counts).toEqual([counts[0], counts[0], counts[0]]);
  });
});
