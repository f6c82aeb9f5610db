import { createTestApp, createUser, type TestApp, type TestUser } from '../factories';
import { errorCode, gql } from './gql';

/**
 * The nullability rule (docs/api-graphql.md): every root query field is nullable, so a missing or
 * refused object answers null with its error in `errors`, and its siblings still answer.
 */
let t: TestApp;
let user: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  user = await createUser(t);
}, 60_000);
afterAll(async () => t.close());

describe('GraphQL nullability', () => {
  it('a missing org does not erase me', async () => {
    const res = await gql(t, user.auth, `{ me { username } org(id: "NOPE-NOT-THERE") { id } }`);
    expect(res.data).toEqual({ me: { username: user.username }, org: null });
    expect(errorCode(res)).toBe('NOT_FOUND');
    expect(res.errors?.[0].path).toEqual(['org']);
  });

  it('each of several lookups fails on its own', async () => {
    const res = await gql(
      t,
      undefined,
      `{ a: source(url: "/orgs/NOPE/sources/NOPE/") { id } b: user(username: "${user.username}") { username }
         c: concept(url: "/orgs/NOPE/sources/NOPE/concepts/X/") { id } }`,
    );
    expect(res.data).toEqual({ a: null, b: { username: user.username }, c: null });
    expect(res.errors?.map((e) => e.path?.[0]).sort()).toEqual(['a', 'c']);
  });

  it('every root query field is nullable (introspection)', async () => {
    const res = await gql(
      t,
      undefined,
      `{ __schema { queryType { fields { name type { kind } } } } }`,
    );
    const fields = (
      res.data as {
        __schema: { queryType: { fields: Array<{ name: string; type: { kind: string } }> } };
      }
    ).__schema.queryType.fields;
    expect(fields.length).toBeGreaterThan(30);
    expect(fields.filter((f) => f.type.kind === 'NON_NULL').map((f) => f.name)).toEqual([]);
  });
});
