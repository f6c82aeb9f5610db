import request from 'supertest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../factories';
import {
  createCollection,
  createConcept,
  createConcepts,
  createMappingBetween,
  createSource,
  createVersion,
} from '../factories/content';
import { errorCode, gql } from './gql';

/**
 * `Concept.cascade` (spec operations §4.2): the walk REST's `$cascade` answers, from the concept
 * as read, in the source version it was read through. Q has answers A1 and A2; A1 has A1a.
 */
let t: TestApp;
let owner: TestUser;
let source: string;

beforeAll(async () => {
  t = await createTestApp();
  const s = await createSource(t, { id: 'GQLDICT' });
  owner = s.owner;
  source = s.url;
  await createConcepts(t, source, owner, [
    ['Q', 'Question', 'Question'],
    ['A1', 'Answer one', 'Misc'],
    ['A2', 'Answer two', 'Misc'],
    ['A1a', 'Answer of one', 'Misc'],
  ]);
  const c = (id: string) => `${source}concepts/${id}/`;
  await createMappingBetween(t, source, owner, ['m1', 'Q-AND-A', c('Q'), c('A1')]);
  await createMappingBetween(t, source, owner, ['m2', 'Q-AND-A', c('Q'), c('A2')]);
  await createMappingBetween(t, source, owner, ['m3', 'SAME-AS', c('A1'), c('A1a')]);
  await createVersion(t, source, owner, 'v1', { released: true });
});
afterAll(() => t.close());

const CASCADE = `query Cascade($url: String!, $levels: Int, $mapTypes: [String!], $returnMapTypes: [String!]) {
  concept(url: $url) {
    cascade(cascadeLevels: $levels, mapTypes: $mapTypes, returnMapTypes: $returnMapTypes) {
      repoVersionUrl total limitReached
      concepts { concept { id displayName } terminal }
      mappings { id mapType }
      root { concept { id } steps { mapping { id } concept { concept { id } terminal
        steps { mapping { id } concept { concept { id } } } } } }
    }
  }
}`;

type Result = {
  repoVersionUrl: string;
  total: number;
  limitReached: boolean;
  concepts: Array<{ concept: { id: string }; terminal: boolean | null }>;
  mappings: Array<{ id: string }>;
  root: {
    concept: { id: string };
    steps: Array<{
      mapping: { id: string } | null;
      concept: { concept: { id: string }; steps: Array<{ mapping: { id: string } | null }> } | null;
    }>;
  };
};

async function cascade(url: string, variables: Record<string, unknown> = {}): Promise<Result> {
  const res = await gql(t, undefined, CASCADE, { url, ...variables });
  expect(res.errors).toBeUndefined();
  return (res.data as { concept: { cascade: Result } }).concept.cascade;
}

describe('Concept.cascade', () => {
  it('walks the source version the concept was read through, flat and nested', async () => {
    const head = await cascade(`${source}concepts/Q/`);
    expect(head.repoVersionUrl).toBe(`${source}HEAD/`);
    expect(head.concepts.map((n) => n.concept.id)).toEqual(['Q', 'A1', 'A2', 'A1a']);
    expect(head.mappings.map((m) => m.id).sort()).toEqual(['m1', 'm2', 'm3']);
    expect(head.total).toBe(7);
    expect(head.limitReached).toBe(false);
    expect(head.root.steps.map((s) => [s.mapping?.id, s.concept?.concept.id])).toEqual([
      ['m1', 'A1'],
      ['m2', 'A2'],
    ]);
    expect(head.root.steps[0].concept!.steps.map((s) => s.mapping?.id)).toEqual(['m3']);
    const released = await cascade(`${source}v1/concepts/Q/`);
    expect(released.repoVersionUrl).toBe(`${source}v1/`);
  });

  it('takes the parameters of REST $cascade', async () => {
    const zero = await cascade(`${source}concepts/Q/`, { levels: 0 });
    expect(zero.concepts.map((n) => [n.concept.id, n.terminal])).toEqual([
      ['Q', false],
      ['A1', null],
      ['A2', null],
    ]);
    const qa = await cascade(`${source}concepts/Q/`, { mapTypes: ['Q-AND-A'] });
    expect(qa.concepts.map((n) => n.concept.id)).toEqual(['Q', 'A1', 'A2']);
    const unlisted = await cascade(`${source}concepts/Q/`, { returnMapTypes: [] });
    expect(unlisted.mappings).toEqual([]);
    expect(unlisted.concepts).toHaveLength(4);
  });

  it('refuses bad parameters as REST does', async () => {
    const res = await gql(
      t,
      undefined,
      `{ concept(url: "${source}concepts/Q/") { cascade(method: "everything") { total } } }`,
    );
    expect(errorCode(res)).toBe('INVALID');
  });
});

describe('Concept.cascade: reverse, hierarchy, omitIfExistsIn, collections, private content', () => {
  const WALK = `query Walk($url: String!, $reverse: Boolean, $omit: String, $eq: [String!], $repository: String, $levels: Int) {
    concept(url: $url) {
      cascade(reverse: $reverse, omitIfExistsIn: $omit, equivalencyMapType: $eq, repository: $repository, cascadeLevels: $levels) {
        repoVersionUrl total
        concepts { concept { id displayName } terminal }
        mappings { id mapType toConcept { id } }
        root { concept { id } steps { mapping { id } concept { concept { id } terminal
          steps { mapping { id } concept { concept { id } terminal steps { mapping { id } concept { concept { id } } } } } } } }
      }
    }
  }`;
  type Step = { mapping: { id: string } | null; concept: Node | null };
  type Node = {
    concept: { id: string; displayName?: string };
    terminal?: boolean | null;
    steps?: Step[];
  };
  type Walk = Omit<Result, 'concepts' | 'mappings' | 'root'> & {
    concepts: Array<{ concept: { id: string; displayName: string }; terminal: boolean | null }>;
    mappings: Array<{ id: string; toConcept: { id: string } | null }>;
    root: Node;
  };
  const shape = (node: Node): unknown[] =>
    (node.steps ?? []).map((s) => [s.mapping?.id ?? null, s.concept?.concept.id ?? null]);

  async function walk(
    url: string,
    variables: Record<string, unknown> = {},
    auth?: string,
  ): Promise<Walk> {
    const res = await gql(t, auth, WALK, { url, ...variables });
    expect(res.errors).toBeUndefined();
    return (res.data as { concept: { cascade: Walk } }).concept.cascade;
  }

  it('reverse walks from a target back to what points at it, nested', async () => {
    const up = await walk(`${source}concepts/A1a/`, { reverse: true });
    expect(up.concepts.map((n) => n.concept.id)).toEqual(['A1a', 'A1', 'Q']);
    expect(shape(up.root)).toEqual([['m3', 'A1']]);
    expect(shape(up.root.steps![0].concept!)).toEqual([['m1', 'Q']]);
    const q = up.root.steps![0].concept!.steps![0].concept!;
    expect(q).toMatchObject({ concept: { id: 'Q' }, terminal: true });
    const one = await walk(`${source}concepts/A1a/`, { reverse: true, levels: 0 });
    expect(one.concepts.map((n) => [n.concept.id, n.terminal])).toEqual([
      ['A1a', false],
      ['A1', null],
    ]);
  });

  it('follows the parent/child hierarchy down, and with reverse up, nested', async () => {
    const tree = (await createSource(t, { id: 'GQLTREE' }, { owner })).url;
    await createConcept(t, tree, owner, { id: 'P' });
    await createConcept(t, tree, owner, { id: 'C', parent_concept_urls: [`${tree}concepts/P/`] });
    await createConcept(t, tree, owner, { id: 'G', parent_concept_urls: [`${tree}concepts/C/`] });
    const down = await walk(`${tree}concepts/P/`);
    expect(shape(down.root)).toEqual([[null, 'C']]);
    expect(shape(down.root.steps![0].concept!)).toEqual([[null, 'G']]);
    const up = await walk(`${tree}concepts/G/`, { reverse: true });
    expect(up.concepts.map((n) => n.concept.id)).toEqual(['G', 'C', 'P']);
    expect(shape(up.root)).toEqual([[null, 'C']]);
    expect(shape(up.root.steps![0].concept!)).toEqual([[null, 'P']]);
  });

  it('omitIfExistsIn (with equivalencyMapType) ends branches at what a repository holds', async () => {
    const have = await createCollection(t, { id: 'GQLHAVE' }, { owner });
    await request(t.app)
      .put(`${have.url}references/`)
      .set('Authorization', owner.auth)
      .send({ data: { expressions: [`${source}concepts/A1/`] } })
      .expect(200);
    const omitted = await walk(`${source}concepts/Q/`, { omit: have.url });
    expect(omitted.concepts.map((n) => n.concept.id)).toEqual(['Q', 'A2']);
    const local = await createSource(t, { id: 'GQLLOCAL' }, { owner });
    await createConcept(t, local.url, owner, { id: 'MINE' });
    await createMappingBetween(t, local.url, owner, [
      'eq',
      'SAME-AS',
      `${local.url}concepts/MINE/`,
      `${source}concepts/A2/`,
    ]);
    const plain = await walk(`${source}concepts/Q/`, { omit: local.url });
    expect(plain.concepts.map((n) => n.concept.id)).toEqual(['Q', 'A1', 'A2', 'A1a']);
    const equivalent = await walk(`${source}concepts/Q/`, { omit: local.url, eq: ['SAME-AS'] });
    expect(equivalent.concepts.map((n) => n.concept.id)).toEqual(['Q', 'A1', 'A1a']);
  });

  it('cascades in a collection version (its members only); none released: NOT_FOUND saying so', async () => {
    const c = await createCollection(t, { id: 'GQLPART' }, { owner });
    await request(t.app)
      .put(`${c.url}references/`)
      .set('Authorization', owner.auth)
      .send({
        data: {
          expressions: [`${source}concepts/Q/`, `${source}concepts/A1/`, `${source}mappings/m1/`],
        },
      })
      .expect(200);
    const head = await walk(`${source}concepts/Q/`, { repository: `${c.url}HEAD/` });
    expect(head.repoVersionUrl).toBe(`${c.url}HEAD/`);
    expect(head.concepts.map((n) => n.concept.id)).toEqual(['Q', 'A1']);
    expect(head.mappings.map((m) => m.id)).toEqual(['m1']);
    const none = await gql(t, undefined, WALK, {
      url: `${source}concepts/Q/`,
      repository: c.url,
    });
    expect(errorCode(none)).toBe('NOT_FOUND');
    expect(none.errors![0].message).toMatch(/no released version/);
    await createVersion(t, c.url, owner, 'r1', { released: true });
    const released = await walk(`${source}concepts/Q/`, { repository: c.url });
    expect(released.repoVersionUrl).toBe(`${c.url}r1/`);
    const bad = await gql(t, undefined, WALK, { url: `${source}concepts/Q/`, repository: 'x' });
    expect(errorCode(bad)).toBe('INVALID');
  });

  it('never shows content of a source the caller may not see', async () => {
    const secret = (await createSource(t, { id: 'GQLSECRET', public_access: 'None' }, { owner }))
      .url;
    await createConcepts(t, secret, owner, [['S1', 'Secret name', 'Misc']]);
    const pub = (await createSource(t, { id: 'GQLPUB' }, { owner })).url;
    await createConcepts(t, pub, owner, [['P1', 'Public question', 'Question']]);
    await createMappingBetween(t, pub, owner, [
      'pm',
      'Q-AND-A',
      `${pub}concepts/P1/`,
      `${secret}concepts/S1/`,
    ]);
    const mix = (await createCollection(t, { id: 'GQLMIX' }, { owner })).url;
    await request(t.app)
      .put(`${mix}references/`)
      .set('Authorization', owner.auth)
      .send({
        data: {
          expressions: [`${pub}concepts/P1/`, `${pub}mappings/pm/`, `${secret}concepts/S1/`],
        },
      })
      .expect(200);
    const outsider = await createUser(t);
    for (const auth of [undefined, outsider.auth]) {
      for (const repository of [undefined, `${mix}HEAD/`]) {
        const seen = await walk(`${pub}concepts/P1/`, { repository }, auth);
        expect(seen.concepts.map((n) => n.concept.id)).toEqual(['P1']);
        expect(seen.mappings).toEqual([{ id: 'pm', mapType: 'Q-AND-A', toConcept: null }]);
        expect(JSON.stringify(seen)).not.toMatch(/Secret|S1/);
      }
      const hidden = await gql(t, auth, WALK, {
        url: `${pub}concepts/P1/`,
        omit: secret,
      });
      expect(errorCode(hidden)).toBe(auth ? 'FORBIDDEN' : 'UNAUTHENTICATED');
    }
    const mine = await walk(`${pub}concepts/P1/`, { repository: `${mix}HEAD/` }, owner.auth);
    expect(mine.concepts.map((n) => [n.concept.id, n.concept.displayName])).toEqual([
      ['P1', 'Public question'],
      ['S1', 'Secret name'],
    ]);
    expect(mine.mappings[0].toConcept).toEqual({ id: 'S1' });
  });
});

describe('cloneConcepts', () => {
  const CLONE = `mutation Clone($destination: String!, $expressions: [String!]!, $parameters: JSONObject) {
    cloneConcepts(destination: $destination, expressions: $expressions, parameters: $parameters) { outcomes {
      expression code message limitReached concepts { id url } mappings { id mapType }
    } }
  }`;
  type Outcome = {
    expression: string;
    code: string | null;
    message: string | null;
    concepts: Array<{ id: string; url: string }>;
    mappings: Array<{ mapType: string }>;
  };

  it('clones as REST $clone does, an outcome per expression', async () => {
    const author = await createUser(t);
    const dest = (await createSource(t, { id: 'GQLDEST' }, { owner: author })).url;
    const res = await gql(t, author.auth, CLONE, {
      destination: dest,
      expressions: [`${source}concepts/Q/`, `${source}concepts/NOPE/`],
      parameters: { cascadeLevels: 0 },
    });
    expect(res.errors).toBeUndefined();
    const [q, nope] = (res.data as { cloneConcepts: { outcomes: Outcome[] } }).cloneConcepts
      .outcomes;
    expect(q.code).toBeNull();
    expect(q.concepts.map((c) => c.id)).toEqual(['Q', 'A1', 'A2']);
    expect(q.concepts[0].url).toBe(`${dest}concepts/Q/`);
    expect(q.mappings.map((m) => m.mapType).sort()).toEqual([
      'Q-AND-A',
      'Q-AND-A',
      'SAME-AS',
      'SAME-AS',
      'SAME-AS',
    ]);
    expect(nope).toMatchObject({ code: 'NOT_FOUND', concepts: [] });
  });

  it('needs a signed-in caller who may edit the destination; refused, it creates nothing', async () => {
    const author = await createUser(t);
    const dest = (await createSource(t, { id: 'GQLREFUSED' }, { owner: author })).url;
    const variables = { destination: dest, expressions: [`${source}concepts/Q/`] };
    const anonymous = await gql(t, undefined, CLONE, variables);
    expect(errorCode(anonymous)).toBe('UNAUTHENTICATED');
    expect(anonymous.data).toBeNull();
    const stranger = await createUser(t);
    expect(errorCode(await gql(t, stranger.auth, CLONE, variables))).toBe('FORBIDDEN');
    for (const kind of ['concepts', 'mappings']) {
      const res = await request(t.app)
        .get(`${dest}${kind}/?limit=0`)
        .set('Authorization', author.auth)
        .expect(200);
      expect(res.body).toEqual([]);
    }
    // The same request by the destination's author does create.
    const res = await gql(t, author.auth, CLONE, variables);
    expect(res.errors).toBeUndefined();
    expect(
      (res.data as { cloneConcepts: { outcomes: Outcome[] } }).cloneConcepts.outcomes[0].concepts,
    ).toHaveLength(3);
  });
});
