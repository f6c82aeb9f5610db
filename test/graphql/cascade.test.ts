import { createTestApp, createUser, type TestApp, type TestUser } from '../factories';
import {
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

describe('cloneConcepts', () => {
  const CLONE = `mutation Clone($destination: String!, $expressions: [String!]!, $parameters: JSONObject) {
    cloneConcepts(destination: $destination, expressions: $expressions, parameters: $parameters) {
      expression code message limitReached concepts { id url } mappings { id mapType }
    }
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
    const [q, nope] = (res.data as { cloneConcepts: Outcome[] }).cloneConcepts;
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

  it('needs a signed-in caller who may edit the destination', async () => {
    const variables = { destination: source, expressions: [`${source}concepts/Q/`] };
    expect(errorCode(await gql(t, undefined, CLONE, variables))).toBe('UNAUTHENTICATED');
    const stranger = await createUser(t);
    expect(errorCode(await gql(t, stranger.auth, CLONE, variables))).toBe('FORBIDDEN');
  });
});
