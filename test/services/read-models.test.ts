import request from 'supertest';
import {
  defaultListParams,
  type ConceptView,
  type MappingItem,
  type ReferenceView,
  type RepoCounts,
  type RepoDetailInclude,
  type RepoRef,
  type ServiceContext,
} from '../../src/services';
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
    const detail = await t.services.expansions.expansionDetail(await as('anonymous'), ref, 'e1');
    expect(detail.expansion.mnemonic).toBe('e1');
    expect(detail.summary).toEqual({ activeConcepts: 1, activeMappings: 1 });
  });

  it('answers a list of expansions with their summaries when asked, in one statement for all', async () => {
    const ref = { ...at('collection', collection), version: 'HEAD' };
    const page = await t.services.expansions.listExpansions(
      await as('anonymous'),
      ref,
      defaultListParams({ limit: 10 }),
      { summaries: true },
    );
    expect(page.items.length).toBe(2);
    expect(page.items.every((item) => item.summary !== undefined)).toBe(true);
    const bare = await statements('anonymous', (ctx) =>
      t.services.expansions.listExpansions(ctx, ref, defaultListParams({ limit: 10 })),
    );
    const summarised = await statements('anonymous', (ctx) =>
      t.services.expansions.listExpansions(ctx, ref, defaultListParams({ limit: 10 }), {
        summaries: true,
      }),
    );
    expect(summarised).toBe(bare + 1);
  });
});

describe('collection member pages', () => {
  it('read the expansion, its member sources and the page in statements that do not grow with the sources', async () => {
    const others: string[] = [];
    for (const id of ['S2', 'S3']) {
      const made = await createSource(t, { id }, { owner, org });
      await createConcept(t, made.url, owner, { id: `${id}-1` });
      others.push(made.url);
    }
    const c = await createCollection(t, { id: 'C3' }, { owner, org });
    const added = await request(t.app)
      .put(`${c.url}references/`)
      .set('Authorization', owner.auth)
      .send({
        data: {
          expressions: [
            `/orgs/${org}/sources/${source}/concepts/A/`,
            ...others.map((url, i) => `${url}concepts/S${i + 2}-1/`),
          ],
        },
      });
    expect(added.status).toBe(200);
    const page = (id: string) => (ctx: Awaited<ReturnType<typeof as>>) =>
      t.services.collections.listConcepts(
        ctx,
        at('collection', id),
        defaultListParams({ limit: 25 }),
      );
    const three = await page('C3')(await as('anonymous'));
    expect(
      three.items.map((item) => `${item.source.repo.mnemonic}/${item.concept.mnemonic}`),
    ).toEqual(['S/A', 'S2/S2-1', 'S3/S3-1']);
    expect(three.total).toBe(3);
    const fromOne = await statements('anonymous', page(collection));
    const fromThree = await statements('anonymous', page('C3'));
    expect(fromThree).toBe(fromOne);
    // The path; the expansion with its member repositories; their HEAD views; the page with its
    // total; the page's concepts; the references' displays.
    expect(fromOne).toBe(6);
  });
});

describe('repository details with their content', () => {
  const include = { concepts: true, mappings: true, references: true };

  /** What a walk hands out, gathered. */
  async function walked(ctx: ServiceContext, ref: RepoRef, inc: RepoDetailInclude) {
    const seen: {
      sections: string[];
      concepts: ConceptView[];
      mappings: MappingItem[];
      references: ReferenceView[];
    } = { sections: [], concepts: [], mappings: [], references: [] };
    let counts: RepoCounts | undefined;
    await t.services.repositoryDetails.walk(ctx, ref, inc, {
      detail: async (d) => void (counts = d.counts),
      section: async (name) => void seen.sections.push(name),
      concepts: async (batch) => void seen.concepts.push(...batch),
      mappings: async (batch) => void seen.mappings.push(...batch),
      references: async (batch) => void seen.references.push(...batch),
    });
    return { ...seen, counts };
  }

  it('walks a source with its concepts and mappings', async () => {
    const detail = await walked(await as('anonymous'), at('source', source), {
      ...include,
      params: defaultListParams({ limit: 10 }),
    });
    expect(detail.counts).toMatchObject({ activeConcepts: 3, activeMappings: 1 });
    expect(detail.concepts.map((c) => c.concept.mnemonic)).toEqual(['A', 'B', 'C']);
    expect(detail.mappings.map((m) => m.view.mapping.mnemonic)).toEqual(['M1']);
    expect(detail.sections).toEqual(['concepts', 'mappings']);
  });

  it('walks a collection with its concepts, mappings and references', async () => {
    const detail = await walked(await as('anonymous'), at('collection', collection), {
      ...include,
      params: defaultListParams({ limit: 10 }),
    });
    expect(detail.concepts.map((c) => c.concept.mnemonic)).toEqual(['A']);
    expect(detail.mappings.map((m) => m.view.mapping.mnemonic)).toEqual(['M1']);
    expect(detail.references).toHaveLength(2);
  });

  it('windows each list by limit and offset, in the order of the pages', async () => {
    const ctx = await as('anonymous');
    const pages = [];
    for (const offset of [0, 1, 2, 3]) {
      const { concepts } = await walked(ctx, at('source', source), {
        concepts: true,
        params: defaultListParams({ limit: 1, offset }),
      });
      pages.push(concepts.map((c) => c.concept.mnemonic));
    }
    expect(pages).toEqual([['A'], ['B'], ['C'], []]);
  });

  it('leaves out what is not asked, and answers private content only to those who may see it', async () => {
    const hidden = await createSource(t, { id: 'H', public_access: 'None' }, { owner, org });
    await createConcept(t, hidden.url, owner, { id: 'Z' });
    const bare = await walked(await as(owner), at('source', 'H'), {
      params: defaultListParams(),
    });
    expect(bare.sections).toEqual([]);
    const own = await walked(await as(owner), at('source', 'H'), {
      concepts: true,
      params: defaultListParams(),
    });
    expect(own.concepts.map((c) => c.concept.mnemonic)).toEqual(['Z']);
    await expect(
      walked(await as(await createUser(t)), at('source', 'H'), {
        concepts: true,
        params: defaultListParams(),
      }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});
