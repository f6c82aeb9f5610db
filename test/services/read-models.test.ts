import request from 'supertest';
import { defaultListParams, type RepoRef } from '../../src/services';
import {
  addMember,
  contextOf,
  createOrg,
  createTestApp,
  createUser,
  type TestApp,
  type TestUser,
} from '../factories';
import {
  createCollection,
  createConcept,
  createMappingBetween,
  createSource,
} from '../factories/content';

/**
 * Read-models of lists and details: each REST reply is one service call, and what it reads in
 * batches costs the same statements however many items the page holds.
 */
let t: TestApp;
let owner: TestUser;
let members: TestUser[];
let org: string;
let source: string;
let collection: string;

const as = (caller: TestUser | 'anonymous' | 'admin') => contextOf(t, caller);
const at = (kind: 'source' | 'collection', id: string): RepoRef => ({
  owner: { type: 'org', id: org },
  kind,
  id,
});

/** Statements `work` sends on a fresh context of `caller`. */
async function statements(
  caller: TestUser | 'anonymous' | 'admin',
  work: (ctx: Awaited<ReturnType<typeof as>>) => Promise<unknown>,
): Promise<number> {
  const ctx = await as(caller);
  t.queries.count = 0;
  await work(ctx);
  return t.queries.count;
}

beforeAll(async () => {
  t = await createTestApp();
  owner = await createUser(t);
  members = [await createUser(t), await createUser(t), await createUser(t)];
  org = (await createOrg(t, owner)).id;
  for (const member of members) await addMember(t, org, owner, member);
  // Every member has orgs of their own, so that each org list has several items.
  for (const member of members) {
    await createOrg(t, member);
    await createOrg(t, member);
  }
  const s = await createSource(t, { id: 'S' }, { owner, org });
  source = s.id;
  for (const id of ['A', 'B', 'C']) await createConcept(t, s.url, owner, { id });
  await createMappingBetween(t, s.url, owner, [
    'M1',
    'SAME-AS',
    `${s.url}concepts/A/`,
    `${s.url}concepts/B/`,
  ]);
  const c = await createCollection(t, { id: 'C' }, { owner, org });
  collection = c.id;
  const added = await request(t.app)
    .put(`${c.url}references/`)
    .set('Authorization', owner.auth)
    .send({ data: { expressions: [`${s.url}concepts/A/`, `${s.url}mappings/M1/`] } });
  expect(added.status).toBe(200);
  const made = await request(t.app)
    .post(`${c.url}HEAD/expansions/`)
    .set('Authorization', owner.auth)
    .send({ mnemonic: 'e1', parameters: {} });
  expect(made.status).toBe(201);
});
afterAll(async () => t.close());

describe('verbose user and org lists', () => {
  it('answers members with their counts, in statements that do not grow with the page', async () => {
    const params = (limit: number) => defaultListParams({ limit, verbose: true });
    const page = await t.services.orgs.memberItems(await as(owner), org, params(10));
    expect(page.items).toHaveLength(4);
    for (const item of page.items) expect(item.counts).toMatchObject({ orgs: expect.any(Number) });
    const one = await statements(owner, (ctx) => t.services.orgs.memberItems(ctx, org, params(1)));
    const four = await statements(owner, (ctx) =>
      t.services.orgs.memberItems(ctx, org, params(10)),
    );
    expect(four).toBe(one);
  });

  it('leaves the counts out of a list that is not verbose', async () => {
    const page = await t.services.orgs.memberItems(
      await as(owner),
      org,
      defaultListParams({ limit: 10 }),
    );
    expect(page.items.every((item) => item.counts === undefined)).toBe(true);
  });

  it("answers a user's orgs with their counts in one call, the user resolved inside it", async () => {
    const member = members[0];
    const page = await t.services.orgs.listItems(
      await as('anonymous'),
      defaultListParams({ limit: 10, verbose: true }),
      { type: 'user', username: member.username },
    );
    expect(page.items).toHaveLength(3);
    expect(page.items.every((item) => item.counts !== undefined)).toBe(true);
    const params = (limit: number) => defaultListParams({ limit, verbose: true });
    const of = { type: 'user', username: member.username } as const;
    const one = await statements('anonymous', (ctx) =>
      t.services.orgs.listItems(ctx, params(1), of),
    );
    const three = await statements('anonymous', (ctx) =>
      t.services.orgs.listItems(ctx, params(10), of),
    );
    expect(three).toBe(one);
  });

  it("answers the caller's own orgs (self) and refuses an anonymous caller", async () => {
    const page = await t.services.orgs.listItems(
      await as(members[1]),
      defaultListParams({ limit: 10, verbose: true }),
      { type: 'self' },
    );
    expect(page.items.map((item) => item.org.mnemonic)).toContain(org);
    await expect(
      t.services.orgs.listItems(await as('anonymous'), defaultListParams(), { type: 'self' }),
    ).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('answers users with their counts in statements that do not grow with the page', async () => {
    const params = (limit: number) => defaultListParams({ limit, verbose: true });
    const page = await t.services.users.listItems(await as('admin'), params(5));
    expect(page.items).toHaveLength(5);
    expect(page.items.every((item) => item.counts !== undefined)).toBe(true);
    const one = await statements('admin', (ctx) => t.services.users.listItems(ctx, params(1)));
    const five = await statements('admin', (ctx) => t.services.users.listItems(ctx, params(5)));
    expect(five).toBe(one);
  });
});

describe('expansion details', () => {
  it('answers an expansion with its summary in one call', async () => {
    const ref = { ...at('collection', collection), version: 'HEAD' };
    const detail = await t.services.collections.expansionDetail(await as('anonymous'), ref, 'e1');
    expect(detail.expansion.mnemonic).toBe('e1');
    expect(detail.summary).toEqual({ activeConcepts: 1, activeMappings: 1 });
  });

  it('answers a list of expansions with their summaries when asked, in one statement for all', async () => {
    const ref = { ...at('collection', collection), version: 'HEAD' };
    const page = await t.services.collections.listExpansions(
      await as('anonymous'),
      ref,
      defaultListParams({ limit: 10 }),
      { summaries: true },
    );
    expect(page.items.length).toBe(2);
    expect(page.items.every((item) => item.summary !== undefined)).toBe(true);
    const bare = await statements('anonymous', (ctx) =>
      t.services.collections.listExpansions(ctx, ref, defaultListParams({ limit: 10 })),
    );
    const summarised = await statements('anonymous', (ctx) =>
      t.services.collections.listExpansions(ctx, ref, defaultListParams({ limit: 10 }), {
        summaries: true,
      }),
    );
    expect(summarised).toBe(bare + 1);
  });
});

describe('repository details with their content', () => {
  const include = { concepts: true, mappings: true, references: true };

  it('answers a source with its concepts and mappings in one call', async () => {
    const detail = await t.services.repositoryDetails.detail(
      await as('anonymous'),
      at('source', source),
      { ...include, params: defaultListParams({ limit: 10 }) },
    );
    expect(detail.counts).toMatchObject({ activeConcepts: 3, activeMappings: 1 });
    expect(detail.concepts!.map((c) => c.concept.mnemonic).sort()).toEqual(['A', 'B', 'C']);
    expect(detail.mappings!.map((m) => m.view.mapping.mnemonic)).toEqual(['M1']);
    expect(detail.references).toBeUndefined();
  });

  it('answers a collection with its concepts, mappings and references in one call', async () => {
    const detail = await t.services.repositoryDetails.detail(
      await as('anonymous'),
      at('collection', collection),
      { ...include, params: defaultListParams({ limit: 10 }) },
    );
    expect(detail.concepts!.map((c) => c.concept.mnemonic)).toEqual(['A']);
    expect(detail.mappings!.map((m) => m.view.mapping.mnemonic)).toEqual(['M1']);
    expect(detail.references).toHaveLength(2);
  });

  it('resolves the path once: its lists cost no more than read on their own, less the path', async () => {
    const params = defaultListParams({ limit: 10 });
    const ref = at('source', source);
    const path = await statements('anonymous', (ctx) => t.services.repositories.get(ctx, ref));
    const detail = await statements('anonymous', (ctx) => t.services.repositories.detail(ctx, ref));
    const concepts = await statements('anonymous', (ctx) =>
      t.services.concepts.list(ctx, ref, params),
    );
    const mappings = await statements('anonymous', (ctx) =>
      t.services.mappings.list(ctx, ref, params),
    );
    const whole = await statements('anonymous', (ctx) =>
      t.services.repositoryDetails.detail(ctx, ref, { concepts: true, mappings: true, params }),
    );
    expect(whole).toBeLessThanOrEqual(detail + concepts + mappings - 2 * path);
  });

  it('leaves out what is not asked, and answers private content only to those who may see it', async () => {
    const hidden = await createSource(t, { id: 'H', public_access: 'None' }, { owner, org });
    await createConcept(t, hidden.url, owner, { id: 'Z' });
    const bare = await t.services.repositoryDetails.detail(await as(owner), at('source', 'H'), {
      params: defaultListParams(),
    });
    expect(bare.concepts).toBeUndefined();
    expect(bare.mappings).toBeUndefined();
    await expect(
      t.services.repositoryDetails.detail(await as(await createUser(t)), at('source', 'H'), {
        concepts: true,
        params: defaultListParams(),
      }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});
