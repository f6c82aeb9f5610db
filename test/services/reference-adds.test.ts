import request from 'supertest';
import {
  ADD_REFERENCES_TASK,
  type AddReferencesJob,
} from '../../src/services/collections/references';
import type { RepoRef, ServiceContext } from '../../src/services';
import { contextOf, createTestApp, type TestApp, type TestUser } from '../factories';
import {
  createCollection,
  createConcepts,
  createSource,
  createVersion,
  type TestSource,
} from '../factories/content';
import { dataOf, gql } from '../graphql/gql';

/**
 * Reference adds (issue 10 part 3): the references are resolved once, inside the add's
 * transaction; a queued add carries what the body became, not the body; every edge queues alike.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());
afterEach(() => jest.restoreAllMocks());

interface World {
  owner: TestUser;
  source: TestSource;
  other: TestSource;
  collection: TestSource;
  ref: RepoRef;
}

/** Sources S (A, B, C) and S2 (X) and an empty collection C, in an org of a new user. */
async function world(): Promise<World> {
  const source = await createSource(t);
  const { owner, org } = source;
  const other = await createSource(t, { id: 'S2' }, { owner, org });
  const collection = await createCollection(t, {}, { owner, org });
  await createConcepts(t, source.url, owner, [
    ['A', 'Malaria', 'Diagnosis'],
    ['B', 'Fever', 'Symptom'],
    ['C', 'Cough', 'Symptom'],
  ]);
  await createConcepts(t, other.url, owner, [['X', 'Paludism', 'Diagnosis']]);
  const ref: RepoRef = { owner: { type: 'org', id: org }, kind: 'collection', id: collection.id };
  return { owner, source, other, collection, ref };
}

async function finished(ctx: ServiceContext, id: string): Promise<void> {
  const task = await t.services.tasks.waitFor(ctx, id, 20_000);
  expect(task.state).toBe('SUCCESS');
}

describe('references resolved once, inside the add', () => {
  it('resolves every reference of an add in one call, on the transaction that adds them', async () => {
    const w = await world();
    const resolveMany = jest.spyOn(t.services.resolver, 'resolveMany');
    const results = await t.services.references.addReferences(await contextOf(t, w.owner), w.ref, {
      data: {
        expressions: [
          `${w.source.url}concepts/A/`,
          `${w.source.url}concepts/B/`,
          `${w.other.url}concepts/X/`,
          `/orgs/${w.source.org}/sources/NOWHERE/concepts/A/`,
        ],
      },
    });
    expect(results.map((r) => r.added)).toEqual([true, true, true, false]);
    expect(results[3].message).toMatch(/does not resolve/);
    expect(resolveMany).toHaveBeenCalledTimes(1);
    const [, refs, , within] = resolveMany.mock.calls[0];
    expect(refs).toHaveLength(4);
    // The transaction's repositories, not the pool's: resolution runs on its connection (a pool
    // statement inside the transaction would have failed the add: src/db/transaction-scope.ts).
    expect(within).toBeDefined();
  });

  it('resolves nothing when every reference is already in the collection', async () => {
    const w = await world();
    const ctx = await contextOf(t, w.owner);
    const body = { data: { expressions: [`${w.source.url}concepts/A/`] } };
    await t.services.references.addReferences(ctx, w.ref, body);
    const resolveMany = jest.spyOn(t.services.resolver, 'resolveMany');
    const again = await t.services.references.addReferences(ctx, w.ref, body);
    expect(again[0]).toMatchObject({ added: false, message: expect.stringMatching(/Already/) });
    expect(resolveMany).not.toHaveBeenCalled();
  });

  it('resolves a version pinned by a reference inside the add as well', async () => {
    const w = await world();
    await createVersion(t, w.source.url, w.owner, 'v1');
    const resolveMany = jest.spyOn(t.services.resolver, 'resolveMany');
    const results = await t.services.references.addReferences(await contextOf(t, w.owner), w.ref, {
      data: { expressions: [`${w.source.url}v1/concepts/A/`, `${w.source.url}v9/concepts/A/`] },
    });
    expect(results.map((r) => r.added)).toEqual([true, false]);
    expect(resolveMany).toHaveBeenCalledTimes(1);
  });
});

describe('queued adds', () => {
  it('queue the parsed references and the collection id, not the raw body', async () => {
    const w = await world();
    const ctx = await contextOf(t, w.owner);
    const enqueue = jest.spyOn(t.services.tasks, 'enqueue');
    const body = {
      data: { expressions: [`${w.source.url}concepts/A/`, 'not a reference'] },
      unrelated: 'dropped',
    };
    const outcome = await t.services.references.addReferencesOrQueue(ctx, w.ref, body, {
      background: true,
    });
    expect('task' in outcome).toBe(true);
    expect(enqueue).toHaveBeenCalledTimes(1);
    const [, kind, payload] = enqueue.mock.calls[0];
    expect(kind).toBe(ADD_REFERENCES_TASK);
    const job = payload as AddReferencesJob;
    expect(Object.keys(job).sort()).toEqual(['collectionId', 'items', 'ref']);
    const collection = await t.services.repositories.get(ctx, w.ref);
    expect(job.collectionId).toBe(collection.repo.id);
    expect(job.items).toEqual([
      {
        ok: true,
        reference: expect.objectContaining({
          expression: `${w.source.url}concepts/A/`,
          resourceType: 'Concept',
          code: 'A',
          system: w.source.url,
        }),
      },
      { ok: false, expression: 'not a reference', message: expect.any(String) },
    ]);
    expect(JSON.stringify(job)).not.toContain('unrelated');
    if ('task' in outcome) await finished(ctx, outcome.task.id);
  });

  it('a GraphQL addReferences of more than 2,000 references runs as a task, as REST does', async () => {
    const w = await world();
    const enqueue = jest.spyOn(t.services.tasks, 'enqueue');
    const expressions = [
      `${w.source.url}concepts/A/`,
      ...Array.from({ length: 2_000 }, (_, i) => `${w.source.url}concepts/X${i}/`),
    ];
    const add = `mutation($c: String!, $r: JSON!) {
      addReferences(collection: $c, references: $r) { results { added } task { id state } }
    }`;
    const res = await gql(t, w.owner.auth, add, { c: w.collection.url, r: { expressions } });
    const { addReferences } = dataOf(res) as {
      addReferences: { results: Array<{ added: boolean }> | null; task: { id: string } | null };
    };
    expect(enqueue).toHaveBeenCalledTimes(1);
    expect(enqueue.mock.calls[0][1]).toBe(ADD_REFERENCES_TASK);
    // The add finished within the wait: its results are the answer, as REST answers them.
    expect(addReferences.results).toHaveLength(2_001);
    expect(addReferences.results![0].added).toBe(true);
    expect(addReferences.results!.slice(1).every((r) => !r.added)).toBe(true);
    const tasks = await request(t.app).get('/tasks/').set('Authorization', w.owner.auth);
    expect(tasks.body).toEqual([
      expect.objectContaining({
        state: 'SUCCESS',
        summary: expect.stringMatching(/^Add 2001 references/),
      }),
    ]);
    const refs = await request(t.app)
      .get(`${w.collection.url}references/`)
      .set('Authorization', w.owner.auth);
    expect(refs.body.map((r: { expression: string }) => r.expression)).toEqual([
      `${w.source.url}concepts/A/`,
    ]);
  });

  it('a GraphQL addReferences of 2,000 or fewer runs at once, queueing nothing', async () => {
    const w = await world();
    const enqueue = jest.spyOn(t.services.tasks, 'enqueue');
    const add = `mutation($c: String!, $r: JSON!) {
      addReferences(collection: $c, references: $r) { results { added } task { id } }
    }`;
    const r = { expressions: [`${w.source.url}concepts/A/`] };
    const res = await gql(t, w.owner.auth, add, { c: w.collection.url, r });
    expect(dataOf(res).addReferences).toEqual({ results: [{ added: true }], task: null });
    expect(enqueue).not.toHaveBeenCalled();
  });
});
