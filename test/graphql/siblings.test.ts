import { createOrg, createTestApp, createUser, type TestApp, type TestUser } from '../factories';
import { createConcept, createMapping, createRepo } from '../factories/content';
import { dataOf, gql, type Json } from './gql';

let t: TestApp;
let owner: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  owner = await createUser(t);
}, 60_000);
afterAll(async () => t.close());

const NESTED = `query($org: String!) {
  org(id: $org) { id sources(limit: 20) { totalCount items { id activeConcepts
    ... on Source { concepts(limit: 20) { totalCount items { id displayName names { name locale }
      mappings { mapType toConcept { id displayName } } } } } } } }
}`;

async function orgWithSources(count: number): Promise<string> {
  const org = (await createOrg(t, owner)).id;
  for (let s = 0; s < count; s += 1) {
    const src = await createRepo(t, `/orgs/${org}`, owner, { id: `S${s}` });
    for (let c = 0; c < 3; c += 1) {
      await createConcept(t, src.url, owner, { id: `C${c}` });
    }
    await createMapping(t, src.url, owner, {
      map_type: 'SAME-AS',
      from_concept_url: `${src.url}concepts/C0/`,
      to_concept_url: `${src.url}concepts/C1/`,
    });
  }
  return org;
}

interface NestedConcept {
  id: string;
  displayName: string;
  mappings: Array<{ mapType: string; toConcept: { id: string; displayName: string } | null }>;
}
interface NestedSource {
  id: string;
  activeConcepts: number;
  concepts: { totalCount: number; items: NestedConcept[] };
}

describe('nested GraphQL across sibling sources', () => {
  it('org → sources → concepts → names + mappings → toConcept: the same statements for 1, 4 and 10 sources', async () => {
    const counts: number[] = [];
    for (const n of [1, 4, 10]) {
      const org = await orgWithSources(n);
      // The counter sees the whole app: statements of work the set-up left running (the app's
      // start-up, a task, what is read again when the set-up's writes are heard) only ever add.
      // So every write is heard first, and of two asks the fewer is the query's own.
      await t.services.notifications.settle();
      const asked: number[] = [];
      let data: Json = {};
      for (let i = 0; i < 2; i += 1) {
        t.queries.count = 0;
        data = dataOf(await gql(t, owner.auth, NESTED, { org }));
        asked.push(t.queries.count);
      }
      counts.push(Math.min(...asked));
      // Each source answers its own concepts, in id order, with its own mappings.
      const sources = data.org.sources.items as NestedSource[];
      expect(sources.map((s) => s.id).sort()).toEqual(
        Array.from({ length: n }, (_, i) => `S${i}`).sort(),
      );
      for (const source of sources) {
        expect(source.activeConcepts).toBe(3);
        expect(source.concepts.totalCount).toBe(3);
        expect(source.concepts.items.map((c) => [c.id, c.displayName])).toEqual([
          ['C0', 'Name C0'],
          ['C1', 'Name C1'],
          ['C2', 'Name C2'],
        ]);
        expect(source.concepts.items[0].mappings).toEqual([
          { mapType: 'SAME-AS', toConcept: { id: 'C1', displayName: 'Name C1' } },
        ]);
      }
    }
    expect(counts).toEqual([counts[0], counts[0], counts[0]]);
  });

  it('source lists are typed as sources: concepts need no fragment, collections theirs', async () => {
    const org = await orgWithSources(2);
    const res = await gql(
      t,
      owner.auth,
      `query($org: String!, $owner: String!) {
        org(id: $org) { sources { items { id concepts(limit: 1) { totalCount } } }
          collections { totalCount items { id references { totalCount } } } }
        sources(owner: $owner) { items { id sourceType } } }`,
      { org, owner: `/orgs/${org}/` },
    );
    expect(res.errors).toBeUndefined();
    const data = dataOf(res);
    expect(data.org.sources.items).toEqual([
      { id: 'S0', concepts: { totalCount: 3 } },
      { id: 'S1', concepts: { totalCount: 3 } },
    ]);
    expect(data.org.collections).toEqual({ totalCount: 0, items: [] });
    expect(data.sources.items.map((s: { id: string }) => s.id)).toEqual(['S0', 'S1']);
  });

  it('pages each sibling on its own, and a filtered list still answers per source', async () => {
    const org = await orgWithSources(3);
    const paged = dataOf(
      await gql(
        t,
        owner.auth,
        `query($org: String!) { org(id: $org) { sources { items { id
          ... on Source { concepts(limit: 1, offset: 1) { totalCount items { id } } } } } } }`,
        { org },
      ),
    );
    for (const source of paged.org.sources.items as NestedSource[]) {
      expect(source.concepts).toEqual({ totalCount: 3, items: [{ id: 'C1' }] });
    }
    const searched = dataOf(
      await gql(
        t,
        owner.auth,
        `query($org: String!) { org(id: $org) { sources { items { id
          ... on Source { concepts(q: "C2") { totalCount items { id } } } } } } }`,
        { org },
      ),
    );
    for (const source of searched.org.sources.items as NestedSource[]) {
      expect(source.concepts).toEqual({ totalCount: 1, items: [{ id: 'C2' }] });
    }
  });
});
