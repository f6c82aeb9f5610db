import request from 'supertest';
import { createTestApp, createUser, uniqueId, type TestApp } from '../factories';
import { createSource } from '../factories/content';
import { dataOf, gql, type GqlResponse } from './gql';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const source = () => createSource(t);

const CREATE = `mutation($s: String!, $i: ConceptInput!) {
  createConcept(source: $s, input: $i) { concept { id names { name } } } }`;
const concept = (fields: Record<string, unknown>) => ({
  id: uniqueId('c'),
  conceptClass: 'Diagnosis',
  names: [{ name: 'Malaria', locale: 'en', localePreferred: true }],
  ...fields,
});

/** INVALID, HTTP 400, the field named in the message and in `fieldErrors`. */
function expectRefused(res: GqlResponse, field: string, codePoint: string): void {
  expect(res.status).toBe(400);
  expect(res.data).toBeUndefined();
  const message = `'${field}' contains an invalid character (U+${codePoint}).`;
  expect(res.errors).toEqual([
    {
      message,
      extensions: { code: 'INVALID', fieldErrors: { [field]: [message] } },
    },
  ]);
}

async function conceptCount(url: string): Promise<number> {
  const res = await gql(t, undefined, `query($u: String!) { source(url: $u) { activeConcepts } }`, {
    u: url,
  });
  return dataOf(res).source.activeConcepts as number;
}

describe('GraphQL refuses invalid text in variables and literals (was INTERNAL_SERVER_ERROR)', () => {
  it('a lone surrogate in a createConcept variable', async () => {
    const src = await source();
    const i = concept({ names: [{ name: 'Mal\ud800aria', locale: 'en' }] });
    expectRefused(
      await gql(t, src.owner.auth, CREATE, { s: src.url, i }),
      '$i.names[0].name',
      'D800',
    );
    const key = await gql(t, src.owner.auth, CREATE, {
      s: src.url,
      i: concept({ extras: { '\udfff': 1 } }),
    });
    expect(key.status).toBe(400);
    expect(key.errors?.[0].message).toBe(
      "'$i.extras' holds a key that contains an invalid character (U+DFFF).",
    );
    expect(await conceptCount(src.url)).toBe(0);
  });

  it('a control character in a concept name and in a conceptClass', async () => {
    const src = await source();
    const i = concept({ names: [{ name: 'Mal\u0007aria', locale: 'en' }] });
    expectRefused(
      await gql(t, src.owner.auth, CREATE, { s: src.url, i }),
      '$i.names[0].name',
      '0007',
    );
    expectRefused(
      await gql(t, src.owner.auth, CREATE, {
        s: src.url,
        i: concept({ conceptClass: 'Diag\u001fnosis' }),
      }),
      '$i.conceptClass',
      '001F',
    );
    expect(await conceptCount(src.url)).toBe(0);
  });

  it('a \\u escape of a control character in a string literal names the argument', async () => {
    const src = await source();
    const literal = `mutation($s: String!) { createConcept(source: $s, input: {
      id: "X", conceptClass: "Diagnosis",
      names: [{name: "Malaria", locale: "en"}, {name: "Mal\\u0001aria", locale: "es"}] }) { concept { id } } }`;
    expectRefused(
      await gql(t, src.owner.auth, literal, { s: src.url }),
      'input.names[1].name',
      '0001',
    );
    const block = `mutation($s: String!) { createConcept(source: $s, input: {
      id: "X", conceptClass: """Diag\u0085nosis""", names: [{name: "Malaria", locale: "en"}] }) { concept { id } } }`;
    expectRefused(
      await gql(t, src.owner.auth, block, { s: src.url }),
      'input.conceptClass',
      '0085',
    );
    expect(await conceptCount(src.url)).toBe(0);
  });

  it('a \\u escape of a lone surrogate in a literal is a syntax error (400), never stored', async () => {
    const src = await source();
    const literal = `mutation($s: String!) { createConcept(source: $s, input: {
      id: "X", conceptClass: "Diagnosis", names: [{name: "Mal\\ud800aria", locale: "en"}] }) { concept { id } } }`;
    const res = await gql(t, src.owner.auth, literal, { s: src.url });
    expect(res.status).toBe(400);
    expect(res.errors?.[0].extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(await conceptCount(src.url)).toBe(0);
  });

  it('in an org field, an expansion parameter literal and a directive argument', async () => {
    const owner = await createUser(t);
    const id = uniqueId('org');
    expectRefused(
      await gql(
        t,
        owner.auth,
        `mutation($i: CreateOrganizationInput!) { createOrg(input: $i) { org { id } } }`,
        { i: { id, name: 'Org', extras: { a: ['ok', '\u0000'] } } },
      ),
      '$i.extras.a[1]',
      '0000',
    );
    expect((await request(t.app).get(`/orgs/${id}/`)).status).toBe(404);
    expectRefused(
      await gql(
        t,
        owner.auth,
        `mutation { createExpansion(collection: "/orgs/x/collections/c/", mnemonic: "e",
          parameters: {filter: "\\u007f"}) { expansion { id } } }`,
      ),
      'parameters.filter',
      '007F',
    );
    expectRefused(
      await gql(
        t,
        undefined,
        `{ orgs(q: "x") @include(if: true) { totalCount } }`.replace('"x"', '"\\u0002"'),
      ),
      'q',
      '0002',
    );
  });

  it('in a query filter, as a variable and as a literal', async () => {
    expectRefused(
      await gql(t, undefined, `query($q: String) { orgs(q: $q) { totalCount } }`, { q: 'a\u0003' }),
      '$q',
      '0003',
    );
    expectRefused(
      await gql(t, undefined, `{ orgs(company: ["ok", "a\\u0003"]) { totalCount } }`),
      'company[1]',
      '0003',
    );
  });
});

describe('GraphQL errors', () => {
  const MB = 'x'.repeat(1_000_000);

  it('repeat at most 100 characters of an argument, for a literal', async () => {
    const res = await request(t.app)
      .post('/graphql')
      .send({ query: `{ orgs(limit: "${MB}") { totalCount } }` });
    expect(res.status).toBe(400);
    const { message } = res.body.errors[0] as { message: string };
    expect(message.length).toBeLessThan(300);
    expect(message).toContain(`"${'x'.repeat(100)}…"`);
    expect(JSON.stringify(res.body).length).toBeLessThan(2000);
  });

  it('repeat at most 100 characters of a wrongly typed variable, and say what is wrong with it', async () => {
    const res = await gql(t, undefined, `query($l: Int!) { orgs(limit: $l) { totalCount } }`, {
      l: MB,
    });
    expect(res.status).toBe(400);
    const message = res.errors![0].message;
    expect(message).toMatch(/^Variable "\$l" got invalid value "x{100}…"; Int cannot represent/);
    expect(message.length).toBeLessThan(400);
  });

  it('a wrongly typed variable gets the variable coercion error, not a cost of Infinity', async () => {
    const res = await gql(t, undefined, `query($l: Int!) { orgs(limit: $l) { totalCount } }`, {
      l: 'ten',
    });
    expect(res.status).toBe(400);
    expect(res.errors).toHaveLength(1);
    expect(res.errors![0].message).toBe(
      'Variable "$l" got invalid value "ten"; Int cannot represent non-integer value: "ten"',
    );
    // In the one shape of invalid input: INVALID, keyed by the variable.
    expect(res.errors![0].extensions).toEqual({
      code: 'INVALID',
      fieldErrors: {
        l: ['got invalid value "ten"; Int cannot represent non-integer value: "ten"'],
      },
    });
  });

  it('an unknown operation name is named as such, not costed', async () => {
    const res = await request(t.app)
      .post('/graphql')
      .send({ query: 'query A { orgs { totalCount } }', operationName: 'B' });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toBe('Unknown operation named "B".');
  });
});
