import { createTestApp, type TestApp } from '../factories';
import { createConcept, createSource, type TestSource } from '../factories/content';
import { dataOf, errorCode, gql, type Json } from './gql';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/** A source with `size` concepts C0…; answers its URL and administrator. */
async function source(size: number): Promise<TestSource> {
  const made = await createSource(t);
  for (let i = 0; i < size; i += 1) {
    await createConcept(t, made.url, made.owner, {
      id: `C${i}`,
      names: [{ name: `Concept ${i}`, locale: 'en', locale_preferred: true }],
    });
  }
  return made;
}

const CREATE = `mutation($s: String!, $i: MappingInput!) { createMapping(source: $s, input: $i) { mapping {
  id mapType checksums { standard smart } from { conceptCode sourceUrl conceptNameResolved } to { conceptCode conceptUrl sourceName }
  fromConcept { id displayName } toConcept { id } } } }`;

/** A SAME-AS mapping in `src` from its concept C`from` to its C`to`, made through GraphQL. */
async function sameAs(src: TestSource, from: number, to: number): Promise<void> {
  await gql(t, src.owner.auth, CREATE, {
    s: src.url,
    i: {
      mapType: 'SAME-AS',
      fromConceptUrl: `${src.url}concepts/C${from}/`,
      toSourceUrl: src.url,
      toConceptCode: `C${to}`,
    },
  });
}

describe('mappings through GraphQL', () => {
  it('createMapping gives the golden checksums; ends outside the service have no concept', async () => {
    const src = await source(0);
    const data = dataOf(
      await gql(t, src.owner.auth, CREATE, {
        s: src.url,
        i: {
          mapType: 'SAME-AS',
          fromConceptUrl: '/orgs/CIEL/sources/CIEL/concepts/116128/',
          toSourceUrl: '/orgs/WHO/sources/ICD-10-WHO/',
          toConceptCode: 'B54',
        },
      }),
    );
    expect(data.createMapping.mapping).toMatchObject({
      checksums: {
        standard: '567e1089cf477dacdd8197b602f6baa2',
        smart: '8ab08b49c02ef40c81af1c2409466013',
      },
      from: {
        conceptCode: '116128',
        sourceUrl: '/orgs/CIEL/sources/CIEL/',
        conceptNameResolved: null,
      },
      to: {
        conceptCode: 'B54',
        conceptUrl: '/orgs/WHO/sources/ICD-10-WHO/concepts/B54/',
        sourceName: null,
      },
      fromConcept: null,
      toConcept: null,
    });
  });

  it('ends inside the service resolve to concepts; update, retire and reactivate make versions', async () => {
    const src = await source(2);
    const created = dataOf(
      await gql(t, src.owner.auth, CREATE, {
        s: src.url,
        i: {
          mapType: 'SAME-AS',
          fromConceptUrl: `${src.url}concepts/C0/`,
          toSourceUrl: src.url,
          toConceptCode: 'C1',
        },
      }),
    ).createMapping.mapping;
    expect(created).toMatchObject({
      fromConcept: { id: 'C0', displayName: 'Concept 0' },
      toConcept: { id: 'C1' },
    });
    const url = `${src.url}mappings/${created.id}/`;
    const update = `mutation($u: String!, $i: MappingInput!) { updateMapping(url: $u, input: $i) { mapping { mapType versionsCount } } }`;
    expect(
      errorCode(await gql(t, src.owner.auth, update, { u: url, i: { mapType: 'SAME-AS' } })),
    ).toBe('UNCHANGED');
    expect(
      dataOf(await gql(t, src.owner.auth, update, { u: url, i: { mapType: 'NARROWER-THAN' } }))
        .updateMapping.mapping,
    ).toEqual({
      mapType: 'NARROWER-THAN',
      versionsCount: 2,
    });
    const retire = dataOf(
      await gql(
        t,
        src.owner.auth,
        `mutation($u: String!) { retireMapping(url: $u) { mapping { retired } } }`,
        {
          u: url,
        },
      ),
    );
    expect(retire.retireMapping.mapping.retired).toBe(true);
    const back = dataOf(
      await gql(
        t,
        src.owner.auth,
        `mutation($u: String!) { reactivateMapping(url: $u) { mapping { retired } } }`,
        { u: url },
      ),
    );
    expect(back.reactivateMapping.mapping.retired).toBe(false);
    const read = dataOf(
      await gql(
        t,
        undefined,
        `query($u: String!) { mapping(url: $u) { mapType retired versions { totalCount } } }`,
        { u: url },
      ),
    );
    expect(read.mapping).toEqual({
      mapType: 'NARROWER-THAN',
      retired: false,
      versions: { totalCount: 4 },
    });
  });

  it('Concept.mappings and inverseMappings; mappings(source, filters)', async () => {
    const src = await source(2);
    for (const [from, to, type] of [
      ['C0', 'C1', 'SAME-AS'],
      ['C1', 'C0', 'BROADER-THAN'],
    ]) {
      await gql(t, src.owner.auth, CREATE, {
        s: src.url,
        i: {
          mapType: type,
          fromConceptUrl: `${src.url}concepts/${from}/`,
          toSourceUrl: src.url,
          toConceptCode: to,
        },
      });
    }
    const q = `query($u: String!) { concept(url: $u) { mappings { mapType } inverseMappings { mapType } } }`;
    const c0 = dataOf(await gql(t, undefined, q, { u: `${src.url}concepts/C0/` }));
    expect(c0.concept).toEqual({
      mappings: [{ mapType: 'SAME-AS' }],
      inverseMappings: [{ mapType: 'BROADER-THAN' }],
    });
    const list = `query($s: String!) { mappings(source: $s, mapType: ["BROADER-THAN"]) { totalCount items { from { conceptCode } } } }`;
    expect(dataOf(await gql(t, undefined, list, { s: src.url })).mappings).toEqual({
      totalCount: 1,
      items: [{ from: { conceptCode: 'C1' } }],
    });
  });

  it("an end's concept name is read when asked, for every end at once, and only then", async () => {
    const src = await source(3);
    for (const [from, to] of [
      [0, 1],
      [1, 2],
      [2, 0],
    ]) {
      await sameAs(src, from, to);
    }
    await t.services.notifications.settle();
    const page = (fields: string) =>
      `query($s: String!) { concepts(source: $s) { items { id mappings { to { ${fields} } } } } }`;
    // Of two asks, the fewer statements are the query's own (see siblings.test.ts).
    const statements = async (query: string) => {
      const counts: number[] = [];
      let data: Json = {};
      for (let i = 0; i < 2; i += 1) {
        t.queries.count = 0;
        data = dataOf(await gql(t, undefined, query, { s: src.url }));
        counts.push(t.queries.count);
      }
      return { data, count: Math.min(...counts) };
    };
    const codes = await statements(page('conceptCode sourceName'));
    const named = await statements(page('conceptCode conceptNameResolved'));
    expect(named.count).toBe(codes.count + 1);
    expect(
      named.data.concepts.items.map((c: { mappings: Array<{ to: unknown }> }) => c.mappings),
    ).toEqual([
      [{ to: { conceptCode: 'C1', conceptNameResolved: 'Concept 1' } }],
      [{ to: { conceptCode: 'C2', conceptNameResolved: 'Concept 2' } }],
      [{ to: { conceptCode: 'C0', conceptNameResolved: 'Concept 0' } }],
    ]);
    expect(codes.data.concepts.items[0].mappings).toEqual([
      { to: { conceptCode: 'C1', sourceName: src.id } },
    ]);
  });

  it('100 concepts with names, mappings and each target concept: the SQL statements do not grow with the concepts', async () => {
    const counts: number[] = [];
    for (const size of [10, 100]) {
      const src = await source(size);
      for (let i = 0; i < size; i += 1) await sameAs(src, i, (i + 1) % size);
      const q = `query($s: String!) { concepts(source: $s, limit: 100) { items {
        id names { name locale } mappings { mapType to { conceptCode conceptNameResolved sourceOwner }
          toConcept { id displayName names { name } versionsCount } } } } }`;
      t.queries.count = 0;
      const data = dataOf(await gql(t, undefined, q, { s: src.url }));
      expect(data.concepts.items).toHaveLength(size);
      expect(
        data.concepts.items.every((c: { mappings: unknown[] }) => c.mappings.length === 1),
      ).toBe(true);
      counts.push(t.queries.count);
    }
    process.stdout.write(`statements: 10 concepts → ${counts[0]}, 100 concepts → ${counts[1]}\n`);
    expect(counts[1]).toBe(counts[0]);
  }, 120_000);
});
