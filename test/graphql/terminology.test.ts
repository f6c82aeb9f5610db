import request from 'supertest';
import { createTestApp, createUser, type TestApp } from '../factories';
import { terminologyWorld } from '../factories/terminology';
import { dataOf, errorCode, gql } from './gql';

/**
 * GraphQL parity of the FHIR terminology operations ($lookup, $validate-code, $expand,
 * $translate, $subsumes) over stored content: the same answers as the FHIR edge, and private
 * content never shown to a caller who may not see it.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/** The terminology fixture (test/factories/terminology.ts): its collection holds A only. */
const world = (orgFields: Record<string, unknown> = {}) => terminologyWorld(t, { orgFields });

const OPERATIONS = `query ($system: String!, $valueSet: String!) {
  lookup(coding: { system: $system, code: "B" }) { name version display }
  inSet: validateCode(url: $valueSet, coding: { system: $system, code: "A" }) { result display }
  notInSet: validateCode(url: $valueSet, coding: { system: $system, code: "B" }) { result message }
  inSystem: validateCode(coding: { system: $system, code: "B", display: "Wrong" }) { result message }
  expandValueSet(url: $valueSet) {
    url total offset identifier
    parameters { name value }
    contains { system code display abstract inactive contains { code } }
  }
  translate(url: $system, coding: { system: $system, code: "A" }, targetSystem: $system) {
    result matches { equivalence concept { code } }
  }
  subsumes(codingA: { system: $system, code: "A" }, codingB: { system: $system, code: "B" })
}`;

describe('terminology operations through GraphQL', () => {
  it('answers lookup, validateCode, expandValueSet, translate and subsumes over stored content', async () => {
    const w = await world();
    const data = dataOf(await gql(t, undefined, OPERATIONS, w));
    expect(data.lookup).toEqual({ name: 'Source S', version: 'v1', display: 'Beta' });
    expect(data.inSet).toEqual({ result: true, display: 'Alpha' });
    expect(data.notInSet.result).toBe(false);
    expect(data.notInSet.message).toMatch(/was not found in the value set/);
    expect(data.inSystem.result).toBe(false);
    expect(data.inSystem.message).toMatch(/Wrong/);
    expect(data.expandValueSet).toMatchObject({
      url: w.valueSet,
      total: 1,
      offset: null,
      identifier: expect.stringMatching(/^urn:uuid:/),
      contains: [
        {
          system: w.system,
          code: 'A',
          display: 'Alpha',
          abstract: false,
          inactive: false,
          contains: [],
        },
      ],
    });
    expect(data.expandValueSet.parameters).toContainEqual({
      name: 'used-codesystem',
      value: `${w.system}|v1`,
    });
    expect(data.translate).toEqual({
      result: true,
      matches: [{ equivalence: 'equivalent', concept: { code: 'B' } }],
    });
    expect(data.subsumes).toBe('SUBSUMES');

    // The FHIR edge answers the same.
    const lookup = await request(t.app).get(
      `/fhir/CodeSystem/$lookup?system=${encodeURIComponent(w.system)}&code=B`,
    );
    const display = (lookup.body.parameter as Array<{ name: string; valueString?: string }>).find(
      (p) => p.name === 'display',
    )?.valueString;
    expect(display).toBe(data.lookup.display);
    const expanded = await request(t.app)
      .get(`/fhir/ValueSet/$expand?url=${encodeURIComponent(w.valueSet)}`)
      .expect(200);
    const fhir = expanded.body.expansion as { total: number; contains: Array<{ code: string }> };
    expect(fhir.total).toBe(data.expandValueSet.total);
    expect(fhir.contains.map((c) => c.code)).toEqual(
      (data.expandValueSet.contains as Array<{ code: string }>).map((c) => c.code),
    );
  });

  it('shows private content only to those who may see it', async () => {
    const w = await world({ public_access: 'None' });
    const outsider = await createUser(t);
    for (const auth of [undefined, outsider.auth]) {
      const lookup = await gql(
        t,
        auth,
        `query ($system: String!) { lookup(coding: { system: $system, code: "B" }) { display } }`,
        w,
      );
      expect(errorCode(lookup)).toBe('NOT_FOUND');
      const expand = await gql(
        t,
        auth,
        `query ($valueSet: String!) { expandValueSet(url: $valueSet) { total } }`,
        w,
      );
      expect(errorCode(expand)).toBe('NOT_FOUND');
      const validate = dataOf(
        await gql(
          t,
          auth,
          `query ($system: String!) {
            validateCode(coding: { system: $system, code: "B" }) { result message }
          }`,
          w,
        ),
      );
      expect(validate.validateCode.result).toBe(false);
      expect(JSON.stringify(validate)).not.toMatch(/Beta/);
      const translate = await gql(
        t,
        auth,
        `query ($system: String!) {
          translate(url: $system, coding: { system: $system, code: "A" }, targetSystem: $system) { result }
        }`,
        w,
      );
      expect(errorCode(translate)).toBe('NOT_FOUND');
    }
    const member = dataOf(await gql(t, w.member.auth, OPERATIONS, w));
    expect(member.lookup.display).toBe('Beta');
    expect(member.expandValueSet.total).toBe(1);
  });

  it('refuses bad input as INVALID, changing nothing', async () => {
    const w = await world();
    const negative = await gql(
      t,
      undefined,
      `query ($valueSet: String!) { expandValueSet(url: $valueSet, count: -1) { total } }`,
      w,
    );
    expect(errorCode(negative)).toBe('INVALID');
    const unknown = await gql(
      t,
      undefined,
      `{ lookup(coding: { system: "http://example.org/none", code: "x" }) { display } }`,
    );
    expect(errorCode(unknown)).toBe('NOT_FOUND');
  });
});
