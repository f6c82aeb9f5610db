/**
 * The port of HL7's CompareUtilities (compare.ts), and of the scrubbing, sorting and R4
 * conversion around it: each rule accepting what it should and refusing what it should.
 */
import { Comparator, compareJson, type CompareOptions, type JsonObject } from './compare';
import {
  convertResource,
  EXT_EXP_VS_CONT_PROP,
  EXT_VALUESET_FILTER_OP,
  EXT_VS_EXP_PROP,
} from './convert';
import { scrubOperationOutcome, scrubParameters, sortParameters, sortValueSet } from './scrub';

const general: CompareOptions = { modes: new Set(['general']), variables: { version: '4.0.1' } };

/** Null, or the message, comparing `{v: expected}` with `{v: actual}`. */
function value(
  expected: unknown,
  actual: unknown,
  options: CompareOptions = general,
): string | null {
  return compareJson('t', { v: expected } as JsonObject, { v: actual } as JsonObject, options);
}

describe('plain values', () => {
  test('equal values pass; a different one is named by its path', () => {
    expect(compareJson('t', { a: { b: [1, 'x', true] } }, { a: { b: [1, 'x', true] } })).toBeNull();
    expect(compareJson('t', { a: { b: [1, 'x'] } }, { a: { b: [1, 'y'] } })).toMatch(
      /^string property values differ at \.a\.b\[1\]/,
    );
    expect(value(1, 2)).toMatch(/^number property values differ at \.v/);
    expect(value(true, false)).toMatch(/^boolean property values differ at \.v/);
    expect(value('1', 1)).toMatch(/^property types differ at \.v/);
    expect(value({ a: 1 }, [1])).toMatch(/^properties differ at \.v/);
    expect(value(null, null)).toBeNull();
    expect(value(null, 'x')).toMatch(/^null Properties differ at \.v/);
  });

  test('an unexpected or a missing property fails', () => {
    expect(compareJson('t', { a: 1 }, { a: 1, b: 2 })).toBe(
      'properties differ at : unexpected property b',
    );
    expect(compareJson('t', { a: 1, b: 2 }, { a: 1 })).toBe(
      'properties differ at : missing property b',
    );
    expect(compareJson('t', { a: 1, fhir_comments: ['x'] }, { a: 1 })).toBeNull();
  });

  test('two narratives are not compared', () => {
    expect(value('<div>one</div>', '<div>two</div>')).toBeNull();
    expect(value('one', '<div>two</div>')).not.toBeNull();
  });

  test('Java quirk: strings whose lenient base64 decodings are equal match', () => {
    // commons-codec skips characters outside the base64 alphabet: "ab cd" decodes as "abcd".
    expect(value('abcd', 'ab cd')).toBeNull();
    expect(value('abcd', 'abce')).not.toBeNull();
  });
});

describe('templates', () => {
  const cases: [string, string[], string[]][] = [
    ['$$', ['anything', ''], []],
    [
      '$instant$',
      ['2024-01-02T03:04:05.123Z', '2024-01-02T03:04:05+10:00'],
      ['2024-01-02', '2024-01-02T03:04Z'],
    ],
    ['$date$', ['2024-01-02', '2024-01-02T03:04:05Z'], ['2024-1-2', '2024-01-02T03:04']],
    [
      '$uuid$',
      ['urn:uuid:8acdbfdc-e9d2-11ed-a05b-0242ac120003'],
      ['8acdbfdc-e9d2-11ed-a05b-0242ac120003', 'urn:uuid:8ACDBFDC-E9D2-11ED-A05B-0242AC120003'],
    ],
    ['$string$', ['a b', ''], [' a', 'a\n']],
    ['$id$', ['abc-1.2', 'x'.repeat(64)], ['a_b', 'x'.repeat(65)]],
    [
      '$url$',
      ['http://hl7.org/fhir/x', 'https://a.b/c?d=e', 'http://a.b/c.|'],
      ['ftp://a.b', 'urn:x:y', 'http://a b'],
    ],
    ['$token$', ['5.0.0', 'a_b-c'], ['-a', 'a b']],
    ['$semver$', ['1.2.3', '1.0.0-beta.1+b2'], ['1.2', '01.2.3', '1.2.3.4']],
    ['$version$', ['4.0.1'], ['5.0.0']],
    ['$choice:invalid|not-found$', ['invalid', 'not-found'], ['Invalid', 'found']],
    [
      '$fragments:supplement|CodeSystem/x$',
      ['Unknown SUPPLEMENT http://a/codesystem/X'],
      ['supplement only'],
    ],
  ];
  test.each(cases)('%s accepts and refuses', (template, good, bad) => {
    for (const s of good) expect(value(template, s)).toBeNull();
    for (const s of bad)
      expect(value(template, s)).toMatch(/^string property values differ at \.v/);
  });

  test('$version$ inside a string is the client version; without one, anything matches', () => {
    expect(value('http://hl7.org/fhir/x|$version$', 'http://hl7.org/fhir/x|4.0.1')).toBeNull();
    expect(value('http://hl7.org/fhir/x|$version$', 'http://hl7.org/fhir/x|5.0.0')).not.toBeNull();
    expect(value('$version$', 'whatever', { modes: new Set(['general']) })).toBeNull();
  });

  test('an unknown template ends the comparison with an error, as in Java', () => {
    expect(() => value('$nonsense$', 'x')).toThrow('Unhandled template: $nonsense$');
  });

  describe('$external:N:fragments$', () => {
    test('without externals, only the fragments are checked (case-insensitively)', () => {
      expect(value('$external:1:code1x|not found$', "The code 'CODE1X' was NOT FOUND")).toBeNull();
      expect(value('$external:1:code1x|not found$', "The code 'code1x' is fine")).not.toBeNull();
      expect(value('$external:2$', 'anything at all')).toBeNull();
    });

    test("Java quirk: the template is split on every ':', so a URL's fragment is 'http'", () => {
      const t = '$external:1:http://hl7.org/fhir/test/ValueSet/x|5.0.0$';
      expect(value(t, 'see http://example.org/other')).toBeNull();
      expect(value(t, 'no address here')).not.toBeNull();
    });

    test('with externals, the external string must be matched exactly', () => {
      const options = { ...general, externals: { '1': 'Exactly this' } };
      expect(value('$external:1:exactly$', 'Exactly this', options)).toBeNull();
      expect(value('$external:1:exactly$', 'exactly this', options)).not.toBeNull();
    });
  });
});

describe('$optional-properties$ and $count-arrays$', () => {
  test('listed properties may be missing or present; others may not', () => {
    const expected = {
      '$optional-properties$': ['id', 'date'],
      id: '$id$',
      date: '$date$',
      url: 'u',
    };
    expect(compareJson('t', expected, { url: 'u' })).toBeNull();
    expect(compareJson('t', expected, { url: 'u', id: 'x1', date: '2024-01-01' })).toBeNull();
    expect(compareJson('t', expected, { url: 'u', id: 'not an id!' })).toMatch(
      /^string property values differ at \.id/,
    );
    expect(compareJson('t', expected, {})).toBe('properties differ at : missing property url');
    expect(compareJson('t', expected, { url: 'u', other: 1 })).toBe(
      'properties differ at : unexpected property other',
    );
  });

  test("Java quirk: '*' excuses a missing property but not an unexpected one", () => {
    const expected = { '$optional-properties$': ['*'], a: 1 };
    expect(compareJson('t', expected, {})).toBeNull();
    expect(compareJson('t', expected, { a: 1, b: 2 })).toBe(
      'properties differ at : unexpected property b',
    );
  });

  test('$count-arrays$ compares only the number of items', () => {
    const expected = {
      '$optional-properties$': [],
      '$count-arrays$': ['contains'],
      contains: [{ code: 'a' }, { code: 'b' }],
    };
    expect(compareJson('t', expected, { contains: [{ code: 'x' }, { code: 'y' }] })).toBeNull();
    expect(compareJson('t', expected, { contains: [{ code: 'a' }] })).toMatch(
      /^array item count differs at \.contains/,
    );
    // The marker is listed as optional only beside $optional-properties$, but its own value (a
    // list of strings, no objects) counts as "all optional", so it is never missing.
    expect(compareJson('t', { '$count-arrays$': ['c'], c: [1] }, { c: [2] })).toBeNull();
  });
});

describe('$optional$ array items', () => {
  const list = (...items: unknown[]) => ({ issue: items }) as JsonObject;

  test('true: the item may be missing, or be there', () => {
    const expected = list({ code: 'a' }, { $optional$: true, code: 'b' }, { code: 'c' });
    expect(compareJson('t', expected, list({ code: 'a' }, { code: 'c' }), general)).toBeNull();
    expect(
      compareJson('t', expected, list({ code: 'a' }, { code: 'b' }, { code: 'c' }), general),
    ).toBeNull();
    expect(compareJson('t', expected, list({ code: 'a' }), general)).toMatch(
      /^array item count differs at \.issue/,
    );
    expect(compareJson('t', expected, list({ code: 'a' }, { code: 'b' }), general)).toBe(
      'One or more array items did not match at .issue starting at index 2',
    );
    expect(compareJson('t', expected, list({ code: 'a' }, { code: 'x' }), general)).toMatch(
      /at \.issue\[2\]\.code/,
    );
    expect(compareJson('t', expected, list({ code: 'c' }, { code: 'a' }), general)).not.toBeNull();
  });

  test("'!tx.fhir.org' is optional in general mode and required in tx.fhir.org mode", () => {
    const expected = list({ code: 'a' }, { $optional$: '!tx.fhir.org', code: 'b' });
    expect(compareJson('t', expected, list({ code: 'a' }), general)).toBeNull();
    const txMode = { ...general, modes: new Set(['general', 'tx.fhir.org']) };
    expect(compareJson('t', expected, list({ code: 'a' }), txMode)).toMatch(
      /^array item count differs/,
    );
  });

  test("a mode name ('tx.fhir.org') makes the item optional only in that mode", () => {
    const expected = list({ code: 'a' }, { $optional$: 'tx.fhir.org', code: 'b' });
    expect(compareJson('t', expected, list({ code: 'a' }), general)).toMatch(
      /^array item count differs/,
    );
    expect(
      compareJson('t', expected, list({ code: 'a' }), { modes: new Set(['tx.fhir.org']) }),
    ).toBeNull();
  });

  test("'version:4' is optional for the R4 client (4.0.1), 'version:5' is not", () => {
    const expected = list(
      { $optional$: 'version:5', name: 'equivalence' },
      { $optional$: 'version:4', name: 'relationship' },
    );
    expect(compareJson('t', expected, list({ name: 'equivalence' }), general)).toBeNull();
    expect(compareJson('t', expected, list({ name: 'relationship' }), general)).not.toBeNull();
    const r5 = { ...general, variables: { version: '5.0.0' } };
    expect(compareJson('t', expected, list({ name: 'relationship' }), r5)).toBeNull();
  });

  test("'warning:…' is optional, and its absence is reported as a warning", () => {
    const expected = list({ code: 'a' }, { $optional$: 'warning:version', code: 'b' });
    const c = new Comparator(general);
    expect(c.compare('t', expected, list({ code: 'a' }))).toBeNull();
    expect(c.warnings).toEqual(['version']);
  });

  test('an array whose items all carry $optional$ may be missing (whatever the condition)', () => {
    const expected = { a: 1, extension: [{ $optional$: 'tx.fhir.org', url: 'x' }] };
    expect(compareJson('t', expected, { a: 1 }, general)).toBeNull();
    expect(compareJson('t', { a: 1, extension: [{ url: 'x' }] }, { a: 1 }, general)).toBe(
      'properties differ at : missing property extension',
    );
  });

  test('more actual items than expected fail', () => {
    expect(
      compareJson('t', list({ code: 'a' }), list({ code: 'a' }, { code: 'b' }), general),
    ).toMatch(/^array item count differs at \.issue/);
  });
});

describe('pattern mode (metadata)', () => {
  const options = { ...general, patternMode: true };
  test('only expected properties and items are looked for, in order', () => {
    const expected = { rest: [{ operation: [{ name: 'expand' }, { name: 'lookup' }] }] };
    const actual = {
      extra: 1,
      rest: [
        { mode: 'server', operation: [{ name: 'a' }, { name: 'expand' }, { name: 'lookup' }] },
      ],
    };
    expect(compareJson('t', expected, actual, options)).toBeNull();
    const reversed = { rest: [{ operation: [{ name: 'lookup' }, { name: 'expand' }] }] };
    expect(compareJson('t', expected, reversed, options)).toMatch(
      /^The expected item at \.rest at index 0 was not found:\s+The expected item at \.rest\[0\]\.operation at index 1 was not found/,
    );
  });
});

describe('scrub and sort (TxTesterScrubbers, TxTesterSorters)', () => {
  test('unmanaged extensions, narrative, meta and diagnostics go; X-Request-Id diagnostics stay', () => {
    const oo: JsonObject = {
      resourceType: 'OperationOutcome',
      text: { status: 'generated', div: '<div/>' },
      issue: [
        {
          extension: [
            {
              url: 'http://hl7.org/fhir/StructureDefinition/operationoutcome-message-id',
              valueString: 'M',
            },
            { url: 'http://example.org/mine', valueString: 'x' },
          ],
          severity: 'error',
          code: 'invalid',
          details: { text: 'd' },
          diagnostics: 'stack trace',
        },
        { severity: 'error', code: 'invalid', diagnostics: 'no details: dropped' },
        {
          severity: 'error',
          code: 'invalid',
          details: { text: 'e' },
          diagnostics: 'X-Request-Id: 1',
        },
      ],
    };
    scrubOperationOutcome(oo);
    expect(oo).toEqual({
      resourceType: 'OperationOutcome',
      issue: [
        {
          extension: [
            {
              url: 'http://hl7.org/fhir/StructureDefinition/operationoutcome-message-id',
              valueString: 'M',
            },
          ],
          severity: 'error',
          code: 'invalid',
          details: { text: 'd' },
        },
        {
          severity: 'error',
          code: 'invalid',
          details: { text: 'e' },
          diagnostics: 'X-Request-Id: 1',
        },
      ],
    });
  });

  test('parameters sorted by name, diagnostics dropped, a multi-part message sorted', () => {
    const p: JsonObject = {
      resourceType: 'Parameters',
      parameter: [
        { name: 'result', valueBoolean: true },
        { name: 'message', valueString: 'b second; a first' },
        { name: 'diagnostics', valueString: 'x' },
        { name: 'code', valueCode: 'c' },
      ],
    };
    scrubParameters(p);
    sortParameters(p);
    expect(p.parameter).toEqual([
      { name: 'code', valueCode: 'c' },
      { name: 'message', valueString: 'a first; b second' },
      { name: 'result', valueBoolean: true },
    ]);
  });

  test('expansion contains sorted by code, recursively', () => {
    const vs: JsonObject = {
      resourceType: 'ValueSet',
      expansion: {
        contains: [{ code: 'b', contains: [{ code: 'y' }, { code: 'x' }] }, { code: 'a' }],
      },
    };
    sortValueSet(vs);
    expect(vs.expansion).toEqual({
      contains: [{ code: 'a' }, { code: 'b', contains: [{ code: 'x' }, { code: 'y' }] }],
    });
  });
});

describe('R5 ↔ R4 conversion (VersionConvertor_40_50)', () => {
  test('expansion and contains properties travel in R4 as extensions, and come back', () => {
    const r5: JsonObject = {
      resourceType: 'ValueSet',
      expansion: {
        property: [{ code: 'status', uri: 'http://hl7.org/fhir/concept-properties#status' }],
        contains: [{ code: 'a', property: [{ code: 'status', valueCode: 'retired' }] }],
      },
    };
    const r4 = convertResource(r5, 'r5-to-r4');
    expect(r4.expansion).toEqual({
      extension: [
        {
          url: EXT_VS_EXP_PROP,
          extension: [
            { url: 'code', valueCode: 'status' },
            { url: 'uri', valueUri: 'http://hl7.org/fhir/concept-properties#status' },
          ],
        },
      ],
      contains: [
        {
          code: 'a',
          extension: [
            {
              url: EXT_EXP_VS_CONT_PROP,
              extension: [
                { url: 'code', valueCode: 'status' },
                { url: 'value', valueCode: 'retired' },
              ],
            },
          ],
        },
      ],
    });
    expect(convertResource(r4, 'r4-to-r5')).toEqual(r5);
  });

  test('elements R4 does not have are dropped, as the R4 parser drops them', () => {
    const r4answer: JsonObject = {
      resourceType: 'ValueSet',
      expansion: {
        contains: [{ code: 'a', property: [{ code: 'status', valueCode: 'retired' }] }],
      },
      unknown: 1,
    };
    expect(convertResource(r4answer, 'r4-to-r5')).toEqual({
      resourceType: 'ValueSet',
      expansion: { contains: [{ code: 'a' }] },
    });
  });

  test("R5's child-of filter travels as an extension on op", () => {
    const r5: JsonObject = {
      resourceType: 'ValueSet',
      compose: {
        include: [{ system: 's', filter: [{ property: 'concept', op: 'child-of', value: 'x' }] }],
      },
    };
    const r4 = convertResource(r5, 'r5-to-r4');
    expect((r4.compose as JsonObject).include).toEqual([
      {
        system: 's',
        filter: [
          {
            property: 'concept',
            _op: { extension: [{ url: EXT_VALUESET_FILTER_OP, valueCode: 'child-of' }] },
            value: 'x',
          },
        ],
      },
    ]);
    expect(convertResource(r4, 'r4-to-r5')).toEqual(r5);
  });

  test('ConceptMap relationships become R4 equivalences', () => {
    const r4 = convertResource(
      {
        resourceType: 'ConceptMap',
        sourceScopeUri: 'http://vs/source',
        group: [
          {
            source: 'http://cs/source|1.0',
            element: [
              {
                code: 'a',
                target: [{ code: 'b', relationship: 'source-is-narrower-than-target' }],
              },
            ],
            unmapped: { mode: 'use-source-code', relationship: 'related-to' },
          },
        ],
      },
      'r5-to-r4',
    );
    expect(r4).toEqual({
      resourceType: 'ConceptMap',
      sourceUri: 'http://vs/source',
      group: [
        {
          source: 'http://cs/source',
          sourceVersion: '1.0',
          element: [{ code: 'a', target: [{ code: 'b', equivalence: 'wider' }] }],
          unmapped: { mode: 'provided' },
        },
      ],
    });
  });
});
