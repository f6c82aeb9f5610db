import { createTestApp, createUser, type TestApp, type TestUser } from '../factories';
import { createSource, type TestSource } from '../factories/content';
import { gql } from './gql';

/**
 * One shape of invalid input (issue 28): whether graphql-js refuses a variable's type or the
 * service refuses its value, the answer is INVALID with `fieldErrors` keyed by the same path.
 */
let t: TestApp;
let user: TestUser;
let source: TestSource;

const CREATE = `mutation($s: String!, $i: ConceptInput!) { createConcept(source: $s, input: $i) { concept { id } } }`;

beforeAll(async () => {
  t = await createTestApp();
  user = await createUser(t);
  source = await createSource(t, {}, { owner: user });
}, 60_000);
afterAll(async () => t.close());

const concept = (name: unknown) => ({
  id: 'X',
  conceptClass: 'Misc',
  names: [{ name, locale: 'en' }],
});

describe('invalid GraphQL input', () => {
  it('a wrongly typed field of a variable and a refused value share the shape and the key', async () => {
    const typed = await gql(t, user.auth, CREATE, { s: source.url, i: concept(5) });
    const refused = await gql(t, user.auth, CREATE, { s: source.url, i: concept('') });
    expect(typed.status).toBe(400);
    for (const res of [typed, refused]) {
      expect(res.errors).toHaveLength(1);
      expect(res.errors![0].extensions?.code).toBe('INVALID');
      expect(Object.keys(res.errors![0].extensions?.fieldErrors as object)).toEqual([
        'names.0.name',
      ]);
    }
    expect(typed.errors![0].extensions?.fieldErrors).toEqual({
      'names.0.name': ['String cannot represent a non string value: 5'],
    });
  });

  it('a missing required variable is INVALID, keyed by the variable', async () => {
    const res = await gql(t, user.auth, CREATE, { i: concept('Malaria') });
    expect(res.status).toBe(400);
    expect(res.errors![0].extensions).toEqual({
      code: 'INVALID',
      fieldErrors: { s: ['of required type "String!" was not provided.'] },
    });
  });
});
