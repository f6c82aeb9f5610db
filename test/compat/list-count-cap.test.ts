import request from 'supertest';
import { createTestApp, type TestApp } from '../factories';
import {
  createCollection,
  createConcepts,
  createMappingBetween,
  createSource,
  type TestSource,
} from '../factories/content';
import { dataOf, gql } from '../graphql/gql';

/**
 * Concept and mapping lists count exactly up to `LIST_COUNT_CAP` (issue 27 part 2); beyond it
 * the count is the cap, said to be a lower bound as Elasticsearch says it (REST
 * `num_found_relation: gte`, GraphQL `totalCountExact: false`), and whether a page has a next
 * one is read from the rows, not the count. Here the cap is 3.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ LIST_COUNT_CAP: '3' });
});
afterAll(() => t.close());

async function drugs(): Promise<TestSource> {
  const source = await createSource(t);
  await createConcepts(t, source.url, source.owner, [
    ['A', 'Aspirin', 'Drug'],
    ['B', 'Bisoprolol', 'Drug'],
    ['C', 'Codeine', 'Drug'],
    ['D', 'Diclofenac', 'Drug'],
    ['T', 'Blood test', 'Test'],
  ]);
  return source;
}

describe('REST', () => {
  it('a list with more matches than the cap says num_found is the cap and at least that many', async () => {
    const source = await drugs();
    const res = await request(t.app).get(`${source.url}concepts/?conceptClass=Drug&limit=2`);
    expect(res.status).toBe(200);
    expect(res.body.map((c: { id: string }) => c.id)).toEqual(['A', 'B']);
    expect(res.headers.num_found).toBe('3');
    expect(res.headers.num_found_relation).toBe('gte');
    expect(res.headers.next).toContain('page=2');
  });

  it('past the cap, the next page is linked while rows follow, and not after the last', async () => {
    const source = await drugs();
    const second = await request(t.app).get(
      `${source.url}concepts/?conceptClass=Drug&limit=1&page=3`,
    );
    expect(second.body.map((c: { id: string }) => c.id)).toEqual(['C']);
    expect(second.headers.next).toContain('page=4');
    const last = await request(t.app).get(
      `${source.url}concepts/?conceptClass=Drug&limit=2&page=2`,
    );
    expect(last.body.map((c: { id: string }) => c.id)).toEqual(['C', 'D']);
    expect(last.headers.num_found_relation).toBe('gte');
    expect(last.headers.next).toBeUndefined();
  });

  it('a list within the cap is counted exactly and says nothing more', async () => {
    const source = await drugs();
    const res = await request(t.app).get(`${source.url}concepts/?conceptClass=Test`);
    expect(res.headers.num_found).toBe('1');
    expect(res.headers.num_found_relation).toBeUndefined();
    // A source's plain list is counted from its kept total, exactly, however long.
    const all = await request(t.app).get(`${source.url}concepts/?limit=2`);
    expect(all.headers.num_found).toBe('5');
    expect(all.headers.num_found_relation).toBeUndefined();
  });

  it('a list asked whole (limit=0) is counted from what it returns', async () => {
    const source = await drugs();
    const res = await request(t.app).get(`${source.url}concepts/?conceptClass=Drug&limit=0`);
    expect(res.body).toHaveLength(4);
    expect(res.headers.num_found).toBe('4');
    expect(res.headers.num_found_relation).toBeUndefined();
  });

  it('mapping lists are capped the same way', async () => {
    const source = await drugs();
    const concept = (id: string): string => `${source.url}concepts/${id}/`;
    for (const [id, from, to] of [
      ['M1', 'A', 'B'],
      ['M2', 'B', 'C'],
      ['M3', 'C', 'D'],
      ['M4', 'D', 'A'],
    ]) {
      await createMappingBetween(t, source.url, source.owner, [
        id,
        'SAME-AS',
        concept(from),
        concept(to),
      ]);
    }
    const res = await request(t.app).get(`${source.url}mappings/?mapType=SAME-AS&limit=10`);
    expect(res.body).toHaveLength(4);
    expect(res.headers.num_found).toBe('3');
    expect(res.headers.num_found_relation).toBe('gte');
    expect(res.headers.next).toBeUndefined();
    // A search past the cap counts up to it, then ranks its top (the matches whose own text has
    // the words: here all of them), said the same way.
    t.queries.texts = [];
    const found = await request(t.app).get(`${source.url}mappings/?q=same-as&limit=2`);
    const ranked = t.queries.texts.filter((sql) => sql.includes('FROM "mapping_versions" "mv"'));
    t.queries.texts = undefined;
    expect(found.body.map((m: { id: string }) => m.id)).toEqual(['M1', 'M2']);
    expect([found.headers.num_found, found.headers.num_found_relation]).toEqual(['3', 'gte']);
    expect(found.headers.next).toContain('page=2');
    expect(ranked).toHaveLength(2); // counted, then the top ranked
    // An exact end code ranks first.
    const code = await request(t.app).get(`${source.url}mappings/?q=same-as d&limit=2`);
    expect(code.body.map((m: { id: string }) => m.id)).toEqual(['M3', 'M4']);
  });

  it("a collection's filtered members are counted in the scan that resolves them, said the same way", async () => {
    const source = await drugs();
    const collection = await createCollection(t, {}, { owner: source.owner, org: source.org });
    await request(t.app)
      .put(`${collection.url}references/`)
      .set('Authorization', source.owner.auth)
      .send({ data: { expressions: [`${source.url}concepts/`] } })
      .expect(200);
    const drug = await request(t.app).get(`${collection.url}concepts/?conceptClass=Drug&limit=2`);
    expect(drug.body.map((c: { id: string }) => c.id)).toEqual(['A', 'B']);
    expect([drug.headers.num_found, drug.headers.num_found_relation]).toEqual(['3', 'gte']);
    expect(drug.headers.next).toContain('page=2');
    const last = await request(t.app).get(
      `${collection.url}concepts/?conceptClass=Drug&limit=2&page=2`,
    );
    expect(last.body.map((c: { id: string }) => c.id)).toEqual(['C', 'D']);
    expect(last.headers.next).toBeUndefined();
    const test = await request(t.app).get(`${collection.url}concepts/?conceptClass=Test`);
    expect([test.headers.num_found, test.headers.num_found_relation]).toEqual(['1', undefined]);
  });

  it('browsers may read the header', async () => {
    const source = await drugs();
    const res = await request(t.app)
      .get(`${source.url}concepts/?conceptClass=Drug&limit=2`)
      .set('Origin', 'https://app.example.org');
    expect(res.headers['access-control-expose-headers']).toContain('num_found_relation');
  });
});

describe('GraphQL', () => {
  const PAGE = `query($s: String!, $first: Int, $limit: Int) {
    concepts(source: $s, conceptClass: ["Drug"], first: $first, limit: $limit) {
      totalCount totalCountExact items { id } pageInfo { hasNextPage }
    }
  }`;

  it('totalCount is the cap and totalCountExact false when more match', async () => {
    const source = await drugs();
    const page = dataOf(await gql(t, undefined, PAGE, { s: source.url, limit: 2 })).concepts;
    expect(page).toEqual({
      totalCount: 3,
      totalCountExact: false,
      items: [{ id: 'A' }, { id: 'B' }],
      pageInfo: { hasNextPage: true },
    });
  });

  it('a cursor page counts the same way when asked', async () => {
    const source = await drugs();
    const page = dataOf(await gql(t, undefined, PAGE, { s: source.url, first: 2 })).concepts;
    expect(page.totalCount).toBe(3);
    expect(page.totalCountExact).toBe(false);
    const test = dataOf(
      await gql(
        t,
        undefined,
        `query($s: String!) { concepts(source: $s, conceptClass: ["Test"], first: 5) { totalCount totalCountExact } }`,
        { s: source.url },
      ),
    ).concepts;
    expect(test).toEqual({ totalCount: 1, totalCountExact: true });
  });
});
