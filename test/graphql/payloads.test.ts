import { getNamedType, isObjectType } from 'graphql';
import { createTestApp, type TestApp } from '../factories';
import { createCollection, createConcept, createSource } from '../factories/content';
import { buildGraphqlSchema } from '../../src/graphql/schema';
import { dataOf, errorCode, gql } from './gql';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/**
 * Mutation fields whose payload is not named `<Mutation>Payload`, each with its reason. None: every
 * mutation answers its own payload type (login and exchangeOidcCode too, renamed from
 * LoginResult and OidcSignIn).
 */
const NOT_PAYLOADS: Record<string, string> = {};

const NAMES = [{ name: 'Alpha', locale: 'en', localePreferred: true }];

describe('mutation payloads (issue 28 part 4)', () => {
  test('every Mutation field answers a non-null object type named <Mutation>Payload', async () => {
    const schema = await buildGraphqlSchema();
    const fields = Object.values(schema.getMutationType()!.getFields());
    expect(fields.length).toBeGreaterThanOrEqual(54);
    const wrong = fields
      .filter((field) => !(field.name in NOT_PAYLOADS))
      .flatMap((field) => {
        const type = getNamedType(field.type);
        const expected = `${field.name[0].toUpperCase()}${field.name.slice(1)}Payload`;
        return isObjectType(type) && type.name === expected && String(field.type).endsWith('!')
          ? []
          : [`${field.name}: ${String(field.type)} (expected ${expected}!)`];
      });
    expect(wrong).toEqual([]);
  });

  test('create, update and delete answer the object, its id and URL; deletes the deleted id', async () => {
    const src = await createSource(t);
    const create = `mutation($s: String!, $i: ConceptInput!) {
      createConcept(source: $s, input: $i) { id url concept { id displayName retired } } }`;
    const made = dataOf(
      await gql(t, src.owner.auth, create, {
        s: src.url,
        i: { id: 'P1', conceptClass: 'Misc', names: NAMES },
      }),
    ).createConcept;
    expect(made).toEqual({
      id: 'P1',
      url: `${src.url}concepts/P1/`,
      concept: { id: 'P1', displayName: 'Alpha', retired: false },
    });

    const update = `mutation($u: String!) {
      updateConcept(url: $u, input: { conceptClass: "Drug" }) { id concept { conceptClass } } }`;
    expect(dataOf(await gql(t, src.owner.auth, update, { u: made.url })).updateConcept).toEqual({
      id: 'P1',
      concept: { conceptClass: 'Drug' },
    });
    const retire = `mutation($u: String!) { retireConcept(url: $u) { id concept { retired } } }`;
    expect(dataOf(await gql(t, src.owner.auth, retire, { u: made.url })).retireConcept).toEqual({
      id: 'P1',
      concept: { retired: true },
    });

    const sourceOps = `mutation($o: String!) {
      createSource(owner: $o, input: { id: "P2", name: "P2" }) { id url source { id name } } }`;
    const madeSource = dataOf(
      await gql(t, src.owner.auth, sourceOps, { o: `/orgs/${src.org}/` }),
    ).createSource;
    expect(madeSource).toEqual({
      id: 'P2',
      url: `/orgs/${src.org}/sources/P2/`,
      source: { id: 'P2', name: 'P2' },
    });
    const del = `mutation($u: String!) { deleteSource(url: $u) { deletedId url } }`;
    expect(dataOf(await gql(t, src.owner.auth, del, { u: madeSource.url })).deleteSource).toEqual({
      deletedId: 'P2',
      url: `/orgs/${src.org}/sources/P2/`,
    });
    // A whole-operation failure stays a GraphQL error: the payload is not answered.
    const again = await gql(t, src.owner.auth, del, { u: madeSource.url });
    expect(errorCode(again)).toBe('NOT_FOUND');
    expect(again.data).toBeNull();
  });

  test('addReferences applies the valid references and answers the refused ones in userErrors', async () => {
    const src = await createSource(t);
    await createConcept(t, src.url, src.owner, { id: 'A' });
    await createConcept(t, src.url, src.owner, { id: 'B' });
    const collection = await createCollection(t, {}, { owner: src.owner, org: src.org });
    const add = `mutation($c: String!, $r: JSON!) {
      addReferences(collection: $c, references: $r) {
        url addedCount results { added expression } task { id }
        userErrors { field message code }
      } }`;
    const references = [
      `${src.url}concepts/A/`,
      42,
      `${src.url}concepts/B/`,
      `${src.url}concepts/A/`,
    ];
    const answer = dataOf(
      await gql(t, src.owner.auth, add, { c: collection.url, r: references }),
    ).addReferences;
    expect(answer.url).toBe(collection.url);
    expect(answer.task).toBeNull();
    expect(answer.addedCount).toBe(2);
    expect(answer.results.map((r: { added: boolean }) => r.added)).toEqual([
      true,
      false,
      true,
      false,
    ]);
    expect(answer.userErrors.map((e: { field: string[] }) => e.field)).toEqual([
      ['references', '1'],
      ['references', '3'],
    ]);
    for (const e of answer.userErrors) {
      expect(e.code).toBe('NOT_ADDED');
      expect(e.message).not.toBe('');
    }
    const read = `query($c: String!) { collection(url: $c) { references { totalCount } } }`;
    expect(
      dataOf(await gql(t, src.owner.auth, read, { c: collection.url })).collection.references
        .totalCount,
    ).toBe(2);

    // Removing one held and one not: the held one goes, the other is a user error.
    const remove = `mutation($c: String!, $e: [String!]) {
      removeReferences(collection: $c, expressions: $e) {
        removedCount removedIds userErrors { field code } } }`;
    const removed = dataOf(
      await gql(t, src.owner.auth, remove, {
        c: collection.url,
        e: [`${src.url}concepts/A/`, `${src.url}concepts/Z/`],
      }),
    ).removeReferences;
    expect(removed.removedCount).toBe(1);
    expect(removed.removedIds).toHaveLength(1);
    expect(removed.userErrors).toEqual([{ field: ['expressions', '1'], code: 'NOT_FOUND' }]);
  });

  test('cloneConcepts clones what it can and answers the expressions that failed in userErrors', async () => {
    const from = await createSource(t);
    await createConcept(t, from.url, from.owner, { id: 'Q' });
    const dest = await createSource(t, { id: 'D' }, { owner: from.owner, org: from.org });
    const clone = `mutation($d: String!, $e: [String!]!) {
      cloneConcepts(destination: $d, expressions: $e, parameters: { cascadeLevels: 0 }) {
        url outcomes { expression code } concepts { id } userErrors { field code message }
      } }`;
    const answer = dataOf(
      await gql(t, from.owner.auth, clone, {
        d: dest.url,
        e: [`${from.url}concepts/Q/`, `${from.url}concepts/NOPE/`],
      }),
    ).cloneConcepts;
    expect(answer.url).toBe(dest.url);
    expect(answer.concepts.map((c: { id: string }) => c.id)).toEqual(['Q']);
    expect(answer.outcomes[0].code).toBeNull();
    expect(answer.userErrors).toHaveLength(1);
    expect(answer.userErrors[0].field).toEqual(['expressions', '1']);
    expect(answer.userErrors[0].code).toBe(answer.outcomes[1].code);
    expect(answer.userErrors[0].code).not.toBeNull();
  });

  test('10 concurrent createConcept calls each answer their own payload and id', async () => {
    const src = await createSource(t);
    const create = `mutation($s: String!, $i: ConceptInput!) {
      createConcept(source: $s, input: $i) { id url concept { id uuid } } }`;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        gql(t, src.owner.auth, create, {
          s: src.url,
          i: { id: `C${i}`, conceptClass: 'Misc', names: NAMES },
        }),
      ),
    );
    type Made = { id: string; url: string; concept: { id: string; uuid: string } };
    const payloads = answers.map((a) => dataOf(a).createConcept as Made);
    expect(payloads.map((p) => p.id)).toEqual(Array.from({ length: 10 }, (_, i) => `C${i}`));
    for (const p of payloads) {
      expect(p.concept.id).toBe(p.id);
      expect(p.url).toBe(`${src.url}concepts/${p.id}/`);
    }
    expect(new Set(payloads.map((p) => p.concept.uuid)).size).toBe(10);
    const count = `query($u: String!) { source(url: $u) { concepts { totalCount } } }`;
    expect(
      dataOf(await gql(t, src.owner.auth, count, { u: src.url })).source.concepts.totalCount,
    ).toBe(10);
  });
});
