import request from 'supertest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../factories';
import {
  createCollection,
  createConcepts,
  createMappingBetween,
  createSource,
} from '../factories/content';
import { dataOf, errorCode, gql } from './gql';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

interface World {
  owner: TestUser;
  source: string;
  collection: string;
}

/** An org with a source of concepts A–C, mapping A→B, and an empty public collection. */
async function world(sourceFields: Record<string, unknown> = {}): Promise<World> {
  const { owner, org, url: source } = await createSource(t, sourceFields);
  const collection = (await createCollection(t, {}, { owner, org })).url;
  await createConcepts(t, source, owner, [
    ['A', 'Malaria', 'Diagnosis'],
    ['B', 'Fever', 'Symptom'],
    ['C', 'Cough', 'Symptom'],
  ]);
  await createMappingBetween(t, source, owner, [
    'M1',
    'SAME-AS',
    `${source}concepts/A/`,
    `${source}concepts/B/`,
  ]);
  return { owner, source, collection };
}

const ADD = `mutation($c: String!, $r: JSON!, $cascade: String) {
  addReferences(collection: $c, references: $r, cascade: $cascade) {
    results {
      added expression message reference { id expression include resourceType system code static url }
    }
    task { id }
  }
}`;

const CONTENT = `query($u: String!) { collection(url: $u) {
  version
  references(limit: 0) { totalCount items { expression include } }
  concepts(limit: 0, includeRetired: true) { totalCount items { id displayName } }
  mappings(limit: 0) { totalCount items { id } }
} }`;

const ids = (items: Array<{ id: string }>): string[] => items.map((i) => i.id).sort();

interface Added {
  added: boolean;
  expression: string;
  message: string;
  reference: { id: string } | null;
}

async function add(w: World, references: unknown, cascade?: string): Promise<Added[]> {
  const res = await gql(t, w.owner.auth, ADD, { c: w.collection, r: references, cascade });
  const { addReferences } = dataOf(res) as {
    addReferences: { results: Added[]; task: { id: string } | null };
  };
  expect(addReferences.task).toBeNull();
  return addReferences.results;
}

describe('collection references through GraphQL', () => {
  it('addReferences answers each reference; Collection.references, concepts and expansions read them', async () => {
    const w = await world();
    const added = await add(w, {
      expressions: [`${w.source}concepts/A/`, `${w.source}concepts/B/`],
    });
    expect(added).toEqual([
      expect.objectContaining({
        added: true,
        expression: `${w.source}concepts/A/`,
        reference: expect.objectContaining({
          include: true,
          resourceType: 'CONCEPT',
          system: w.source,
          code: 'A',
          static: false,
        }),
      }),
      expect.objectContaining({ added: true, expression: `${w.source}concepts/B/` }),
    ]);
    const again = await add(w, [`${w.source}concepts/A/`, `${w.source}concepts/NOPE/`]);
    expect(again).toEqual([
      expect.objectContaining({
        added: false,
        message: expect.stringMatching(/Already/),
        reference: null,
      }),
      expect.objectContaining({ added: false, message: expect.stringMatching(/not in/) }),
    ]);

    const data = dataOf(await gql(t, undefined, CONTENT, { u: w.collection }));
    expect(data.collection.references.totalCount).toBe(2);
    expect(ids(data.collection.concepts.items)).toEqual(['A', 'B']);

    const expansions = dataOf(
      await gql(
        t,
        undefined,
        `query($u: String!) { collection(url: $u) { expansions { totalCount items {
          mnemonic collectionVersion isProcessing url parameters summary { activeConcepts activeMappings }
        } } } }`,
        { u: w.collection },
      ),
    ).collection.expansions;
    expect(expansions.items).toEqual([
      {
        mnemonic: 'autoexpand-HEAD',
        collectionVersion: 'HEAD',
        isProcessing: false,
        url: `${w.collection}HEAD/expansions/autoexpand-HEAD/`,
        parameters: {},
        summary: { activeConcepts: 2, activeMappings: 0 },
      },
    ]);

    const refId = added[0].reference!.id;
    const one = dataOf(
      await gql(
        t,
        undefined,
        `query($c: String!, $id: ID!) { collectionReference(collection: $c, id: $id) { expression url } }`,
        { c: w.collection, id: refId },
      ),
    );
    expect(one.collectionReference).toEqual({
      expression: `${w.source}concepts/A/`,
      url: `${w.collection}references/${refId}/`,
    });
  });

  it('an exclusion applies after the inclusions; sourcemappings cascade adds the mappings', async () => {
    const w = await world();
    await add(w, [{ url: w.source, includeExclude: 'Exclude', code: 'B' }]);
    await add(w, { expressions: [`${w.source}concepts/`] });
    let data = dataOf(await gql(t, undefined, CONTENT, { u: w.collection }));
    expect(ids(data.collection.concepts.items)).toEqual(['A', 'C']);
    expect(data.collection.references.items).toEqual(
      expect.arrayContaining([{ expression: expect.any(String), include: false }]),
    );

    const removed = dataOf(
      await gql(
        t,
        w.owner.auth,
        `mutation($c: String!) { removeReferences(collection: $c, all: true) { removedCount } }`,
        { c: w.collection },
      ),
    );
    expect(removed.removeReferences.removedCount).toBe(2);
    await add(w, [`${w.source}concepts/A/`], 'sourcemappings');
    data = dataOf(await gql(t, undefined, CONTENT, { u: w.collection }));
    expect(ids(data.collection.mappings.items)).toEqual(['M1']);
    expect(ids(data.collection.concepts.items)).toEqual(['A']);
  });

  it("a version's expansion keeps its concepts after a source edit while HEAD follows", async () => {
    const w = await world();
    await add(w, { expressions: [`${w.source}concepts/A/`] });
    dataOf(
      await gql(
        t,
        w.owner.auth,
        `mutation($u: String!) { createCollectionVersion(url: $u, input: {id: "v1"}) { collection { version } } }`,
        { u: w.collection },
      ),
    );
    await request(t.app)
      .patch(`${w.source}concepts/A/`)
      .set('Authorization', w.owner.auth)
      .send({ names: [{ name: 'Malaria fever', locale: 'en', locale_preferred: true }] })
      .expect(200);

    const head = dataOf(await gql(t, undefined, CONTENT, { u: w.collection }));
    const v1 = dataOf(await gql(t, undefined, CONTENT, { u: `${w.collection}v1/` }));
    expect(head.collection.concepts.items).toEqual([{ id: 'A', displayName: 'Malaria fever' }]);
    expect(v1.collection.version).toBe('v1');
    expect(v1.collection.concepts.items).toEqual([{ id: 'A', displayName: 'Malaria' }]);

    const q = `query($u: String!, $all: Boolean!) { collection(url: $u) {
      expansions(allVersions: $all) { items { mnemonic collectionVersion concepts { items { displayName } } } }
    } }`;
    const ofV1 = dataOf(await gql(t, undefined, q, { u: `${w.collection}v1/`, all: false }));
    expect(ofV1.collection.expansions.items).toEqual([
      {
        mnemonic: 'autoexpand-v1',
        collectionVersion: 'v1',
        concepts: { items: [{ displayName: 'Malaria' }] },
      },
    ]);
    const all = dataOf(await gql(t, undefined, q, { u: w.collection, all: true }));
    expect(
      all.collection.expansions.items
        .map(
          (e: { mnemonic: string; concepts: { items: Array<{ displayName: string }> } }) =>
            `${e.mnemonic}=${e.concepts.items[0].displayName}`,
        )
        .sort(),
    ).toEqual(['autoexpand-HEAD=Malaria fever', 'autoexpand-v1=Malaria']);
  });

  it("a private source's concepts never show through a public collection to an outsider", async () => {
    const w = await world({ public_access: 'None' });
    await add(w, { expressions: [`${w.source}concepts/A/`, `${w.source}concepts/B/`] });
    const q = `query($u: String!) { collection(url: $u) {
      concepts { totalCount items { id } }
      expansions { items { concepts { totalCount items { id } } } }
    } }`;
    const mine = dataOf(await gql(t, w.owner.auth, q, { u: w.collection }));
    expect(ids(mine.collection.concepts.items)).toEqual(['A', 'B']);
    const outsider = await createUser(t);
    for (const auth of [outsider.auth, undefined]) {
      const theirs = dataOf(await gql(t, auth, q, { u: w.collection }));
      expect(theirs.collection.concepts).toEqual({ totalCount: 0, items: [] });
      expect(theirs.collection.expansions.items[0].concepts).toEqual({ totalCount: 0, items: [] });
    }
  });

  it('bad input is INVALID and changes nothing', async () => {
    const w = await world();
    await add(w, [`${w.source}concepts/A/`]);
    const count = `query($u: String!) { collection(url: $u) {
      references { totalCount } expansions { totalCount } concepts { totalCount } } }`;
    const before = dataOf(await gql(t, undefined, count, { u: w.collection }));

    for (const [references, cascade] of [
      [42, undefined],
      [{ nothing: [] }, undefined],
      [[`${w.source}concepts/B/`], 'everything'],
    ] as const) {
      const res = await gql(t, w.owner.auth, ADD, { c: w.collection, r: references, cascade });
      expect(errorCode(res)).toBe('INVALID');
    }
    const remove = `mutation($c: String!, $e: [String!], $all: Boolean) {
      removeReferences(collection: $c, expressions: $e, all: $all) { removedCount } }`;
    expect(errorCode(await gql(t, w.owner.auth, remove, { c: w.collection }))).toBe('INVALID');
    expect(
      errorCode(await gql(t, w.owner.auth, remove, { c: w.collection, e: ['x'], all: true })),
    ).toBe('INVALID');
    const create = `mutation($c: String!, $m: String!, $p: JSONObject!) {
      createExpansion(collection: $c, mnemonic: $m, parameters: $p) { expansion { mnemonic } } }`;
    expect(
      errorCode(
        await gql(t, w.owner.auth, create, { c: w.collection, m: 'e1', p: { activeOnly: 'x' } }),
      ),
    ).toBe('INVALID');
    expect(
      errorCode(
        await gql(t, w.owner.auth, create, { c: w.collection, m: 'e1', p: { valueSet: 'x' } }),
      ),
    ).toBe('INVALID');
    expect(
      errorCode(await gql(t, w.owner.auth, ADD, { c: 'not-a-url', r: [`${w.source}concepts/B/`] })),
    ).toBe('INVALID');

    expect(dataOf(await gql(t, undefined, count, { u: w.collection }))).toEqual(before);
  });

  it('addReferences queues as REST does: background answers the task, whose result is the per-reference answer', async () => {
    const w = await world();
    const queue = `mutation($c: String!, $r: JSON!) {
      addReferences(collection: $c, references: $r, background: true) {
        results { added } task { id state }
      }
    }`;
    const r = [`${w.source}concepts/A/`, `${w.source}concepts/NOPE/`];
    const { addReferences } = dataOf(await gql(t, w.owner.auth, queue, { c: w.collection, r })) as {
      addReferences: { results: null; task: { id: string; state: string } };
    };
    expect(addReferences.results).toBeNull();
    expect(['PENDING', 'STARTED', 'SUCCESS']).toContain(addReferences.task.state);
    const read = `query($id: ID!) { task(id: $id) { state result } }`;
    let task = { state: 'PENDING', result: null as unknown };
    for (let i = 0; i < 100 && !['SUCCESS', 'FAILURE'].includes(task.state); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      task = (
        dataOf(await gql(t, w.owner.auth, read, { id: addReferences.task.id })) as {
          task: typeof task;
        }
      ).task;
    }
    expect(task.state).toBe('SUCCESS');
    expect((task.result as Array<{ added: boolean }>).map((x) => x.added)).toEqual([true, false]);
    const data = dataOf(await gql(t, w.owner.auth, CONTENT, { u: w.collection }));
    expect(data.collection.concepts.items.map((c: { id: string }) => c.id)).toEqual(['A']);
  });

  it('anonymous callers cannot add references; outsiders are FORBIDDEN', async () => {
    const w = await world();
    const r = [`${w.source}concepts/A/`];
    expect(errorCode(await gql(t, undefined, ADD, { c: w.collection, r }))).toBe('UNAUTHENTICATED');
    const outsider = await createUser(t);
    expect(errorCode(await gql(t, outsider.auth, ADD, { c: w.collection, r }))).toBe('FORBIDDEN');
    const create = `mutation($c: String!) { createExpansion(collection: $c, mnemonic: "e1", parameters: {}) { expansion { id } } }`;
    expect(errorCode(await gql(t, undefined, create, { c: w.collection }))).toBe('UNAUTHENTICATED');
    expect(errorCode(await gql(t, outsider.auth, create, { c: w.collection }))).toBe('FORBIDDEN');
    const data = dataOf(await gql(t, undefined, CONTENT, { u: w.collection }));
    expect(data.collection.references.totalCount).toBe(0);
    const e1 = `query($c: String!) { expansion(collection: $c, mnemonic: "e1") { mnemonic } }`;
    expect(errorCode(await gql(t, w.owner.auth, e1, { c: w.collection }))).toBe('NOT_FOUND');
  });

  it('createExpansion evaluates with its parameters; expansion(…) reads it; deleteExpansion removes it', async () => {
    const w = await world();
    await request(t.app)
      .delete(`${w.source}concepts/C/`)
      .set('Authorization', w.owner.auth)
      .expect(204);
    await add(w, { expressions: [`${w.source}concepts/`] });
    const created = dataOf(
      await gql(
        t,
        w.owner.auth,
        `mutation($c: String!) { createExpansion(collection: $c, mnemonic: "active", parameters: {activeOnly: true}, canonicalUrl: "http://x.org/vs") { expansion {
          mnemonic parameters canonicalUrl collectionVersion summary { activeConcepts }
        } } }`,
        { c: w.collection },
      ),
    );
    expect(created.createExpansion.expansion).toEqual({
      mnemonic: 'active',
      parameters: { activeOnly: true },
      canonicalUrl: 'http://x.org/vs',
      collectionVersion: 'HEAD',
      summary: { activeConcepts: 2 },
    });
    const read = `query($c: String!) { expansion(collection: $c, mnemonic: "active") {
      concepts(includeRetired: true) { items { id } } mappings { totalCount } } }`;
    const one = dataOf(await gql(t, undefined, read, { c: w.collection }));
    expect(ids(one.expansion.concepts.items)).toEqual(['A', 'B']);
    expect(one.expansion.mappings.totalCount).toBe(0);

    const del = `mutation($c: String!, $m: String!) { deleteExpansion(collection: $c, mnemonic: $m) { deletedId } }`;
    expect(
      dataOf(await gql(t, w.owner.auth, del, { c: w.collection, m: 'active' })).deleteExpansion
        .deletedId,
    ).toBeTruthy();
    expect(errorCode(await gql(t, undefined, read, { c: w.collection }))).toBe('NOT_FOUND');
    expect(
      errorCode(await gql(t, w.owner.auth, del, { c: w.collection, m: 'autoexpand-HEAD' })),
    ).toBe('NOT_ALLOWED');
  });

  it('the SQL statements of Collection.expansions with summaries do not grow with the number of expansions', async () => {
    const counts: number[] = [];
    for (const size of [2, 7]) {
      const w = await world();
      await add(w, { expressions: [`${w.source}concepts/`, `${w.source}mappings/`] });
      for (let i = 0; i < size; i += 1) {
        dataOf(
          await gql(
            t,
            w.owner.auth,
            `mutation($c: String!, $m: String!) { createExpansion(collection: $c, mnemonic: $m, parameters: {}) { expansion { id } } }`,
            { c: w.collection, m: `e${i}` },
          ),
        );
      }
      const q = `query($u: String!) { collection(url: $u) { expansions(limit: 50) { totalCount items {
        id mnemonic url collectionVersion summary { activeConcepts activeMappings }
      } } } }`;
      t.queries.count = 0;
      const data = dataOf(await gql(t, undefined, q, { u: w.collection }));
      expect(data.collection.expansions.items).toHaveLength(size + 1);
      for (const item of data.collection.expansions.items) {
        expect(item.summary).toEqual({ activeConcepts: 3, activeMappings: 1 });
      }
      counts.push(t.queries.count);
    }
    expect(counts[1]).toBe(counts[0]);
  });
});

describe('concept hierarchy through GraphQL', () => {
  it('updateConcept sets parentConceptUrls, Concept reads them, and is-a references use them', async () => {
    const w = await world();
    const update = `mutation($u: String!, $i: ConceptInput!) {
      updateConcept(url: $u, input: $i) { concept { id parentConceptUrls } }
    }`;
    const edited = dataOf(
      await gql(t, w.owner.auth, update, {
        u: `${w.source}concepts/B/`,
        i: { parentConceptUrls: [`${w.source}concepts/A/`] },
      }),
    );
    expect(edited.updateConcept.concept).toEqual({
      id: 'B',
      parentConceptUrls: [`${w.source}concepts/A/`],
    });
    const bad = await gql(t, w.owner.auth, update, {
      u: `${w.source}concepts/C/`,
      i: { parentConceptUrls: ['/orgs/elsewhere/sources/X/concepts/1/'] },
    });
    expect(errorCode(bad)).toBe('INVALID');
    dataOf(
      await gql(t, w.owner.auth, ADD, {
        c: w.collection,
        r: [{ url: w.source, filter: [{ property: 'concept', op: 'is-a', value: 'A' }] }],
      }),
    );
    const read = dataOf(
      await gql(
        t,
        w.owner.auth,
        `query($c: String!) { collection(url: $c) { concepts { items { id } } } }`,
        {
          c: w.collection,
        },
      ),
    );
    expect(read.collection.concepts.items.map((c: { id: string }) => c.id).sort()).toEqual([
      'A',
      'B',
    ]);
  });
});
