import request from 'supertest';
import { createTestApp, type TestApp } from '../factories';

/** A small code system: a hierarchy, an inactive code, a designation, a property. */
const codeSystem = {
  resourceType: 'CodeSystem',
  url: 'http://example.org/cs/colours',
  version: '1.0.0',
  name: 'Colours',
  status: 'active',
  content: 'complete',
  property: [
    { code: 'status', uri: 'http://hl7.org/fhir/concept-properties#status', type: 'code' },
    { code: 'hue', type: 'string' },
  ],
  concept: [
    {
      code: 'red',
      display: 'Red',
      designation: [{ language: 'fr', value: 'Rouge' }],
      property: [{ code: 'hue', valueString: 'warm' }],
      concept: [
        { code: 'crimson', display: 'Crimson', property: [{ code: 'hue', valueString: 'warm' }] },
        {
          code: 'scarlet',
          display: 'Scarlet',
          property: [{ code: 'status', valueCode: 'retired' }],
        },
      ],
    },
    { code: 'blue', display: 'Blue', property: [{ code: 'hue', valueString: 'cold' }] },
  ],
};

const valueSet = (id: string, compose: unknown) => ({
  resourceType: 'ValueSet',
  id,
  url: `http://example.org/vs/${id}`,
  version: '2.0',
  status: 'active',
  compose,
});

const reds = valueSet('reds', {
  include: [
    {
      system: codeSystem.url,
      filter: [{ property: 'concept', op: 'is-a', value: 'red' }],
    },
  ],
});

const tx = (...resources: unknown[]) =>
  resources.map((resource) => ({ name: 'tx-resource', resource }));

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

function post(path: string, parameter: unknown[]) {
  return request(t.app)
    .post(`/fhir/${path}`)
    .set('Content-Type', 'application/fhir+json')
    .send({ resourceType: 'Parameters', parameter });
}

const param = (body: { parameter: Array<{ name: string }> }, name: string) =>
  body.parameter.find((p) => p.name === name) as Record<string, unknown> | undefined;

describe('metadata', () => {
  it('is a terminology server CapabilityStatement declaring CodeSystemAsParameter', async () => {
    const res = await request(t.app).get('/fhir/metadata');
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/fhir+json');
    expect(res.body.resourceType).toBe('CapabilityStatement');
    expect(res.body.fhirVersion).toBe('4.0.1');
    expect(res.body.instantiates).toEqual([
      'http://hl7.org/fhir/CapabilityStatement/terminology-server',
    ]);
    expect(JSON.stringify(res.body.extension)).toContain('CodeSystemAsParameter');
    const types = res.body.rest[0].resource.map((r: { type: string }) => r.type);
    expect(types).toEqual(['CodeSystem', 'ValueSet', 'ConceptMap']);
  });

  it('lists every expansion parameter in TerminologyCapabilities', async () => {
    const res = await request(t.app).get('/fhir/metadata?mode=terminology');
    expect(res.body.resourceType).toBe('TerminologyCapabilities');
    const names = res.body.expansion.parameter.map((p: { name: string }) => p.name);
    expect(names).toEqual(expect.arrayContaining(['activeOnly', 'count', 'tx-resource']));
  });
});

describe('$expand', () => {
  it('expands a value set brought as tx-resource, with is-a, paging and the used code system', async () => {
    const res = await post('ValueSet/$expand', [
      { name: 'url', valueUri: reds.url },
      { name: 'count', valueInteger: 2 },
      ...tx(codeSystem, reds),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.expansion.total).toBe(3);
    expect(res.body.expansion.offset).toBe(0);
    expect(res.body.expansion.contains.map((c: { code: string }) => c.code)).toEqual([
      'red',
      'crimson',
    ]);
    expect(res.body.expansion.parameter).toEqual([
      { name: 'count', valueInteger: 2 },
      { name: 'used-codesystem', valueUri: `${codeSystem.url}|1.0.0` },
    ]);
  });

  it('drops inactive codes with activeOnly, filters by text, shows a designation language', async () => {
    const active = await post('ValueSet/$expand', [
      { name: 'url', valueUri: reds.url },
      { name: 'activeOnly', valueBoolean: true },
      ...tx(codeSystem, reds),
    ]);
    // An is-a include keeps the hierarchy: crimson under red.
    expect(active.body.expansion.total).toBe(2);
    expect(active.body.expansion.contains).toMatchObject([
      { code: 'red', contains: [{ code: 'crimson' }] },
    ]);
    const filtered = await post('ValueSet/$expand', [
      { name: 'url', valueUri: reds.url },
      { name: 'filter', valueString: 'scar' },
      { name: 'displayLanguage', valueCode: 'fr' },
      ...tx(codeSystem, reds),
    ]);
    expect(filtered.body.expansion.contains).toEqual([
      {
        system: codeSystem.url,
        inactive: true,
        code: 'scarlet',
        display: 'Scarlet',
        // The R5 contains.property `status`, as its R4 cross-version extension.
        extension: [
          {
            url: 'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion.contains.property',
            extension: [
              { url: 'code', valueCode: 'status' },
              { url: 'value', valueCode: 'retired' },
            ],
          },
        ],
      },
    ]);
    const french = await post('ValueSet/$expand', [
      { name: 'url', valueUri: reds.url },
      { name: 'displayLanguage', valueCode: 'fr' },
      ...tx(codeSystem, reds),
    ]);
    expect(french.body.expansion.contains[0].display).toBe('Rouge');
  });

  it('evaluates property filters and excludes, and an inline valueSet', async () => {
    const res = await post('ValueSet/$expand', [
      {
        name: 'valueSet',
        resource: valueSet('warm', {
          include: [
            { system: codeSystem.url, filter: [{ property: 'hue', op: '=', value: 'warm' }] },
          ],
          exclude: [{ system: codeSystem.url, concept: [{ code: 'crimson' }] }],
        }),
      },
      ...tx(codeSystem),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.expansion.contains.map((c: { code: string }) => c.code)).toEqual(['red']);
  });

  it('answers a catastrophic regex in linear time', async () => {
    const started = Date.now();
    const res = await post('ValueSet/$expand', [
      {
        name: 'valueSet',
        resource: valueSet('regex', {
          include: [
            {
              system: codeSystem.url,
              filter: [{ property: 'code', op: 'regex', value: '(a+)+b' }],
            },
          ],
        }),
      },
      ...tx({ ...codeSystem, concept: [{ code: 'a'.repeat(5000) }] }),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.expansion.total).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('answers unknown value sets 404 and bad filters 400, as OperationOutcomes', async () => {
    const missing = await post('ValueSet/$expand', [
      { name: 'url', valueUri: 'http://nowhere/vs' },
    ]);
    expect(missing.status).toBe(404);
    expect(missing.body.resourceType).toBe('OperationOutcome');
    expect(missing.body.issue[0]).toMatchObject({ severity: 'error', code: 'not-found' });
    expect(missing.body.issue[0].diagnostics).toContain('http://nowhere/vs');
    const noValue = await post('ValueSet/$expand', [
      {
        name: 'valueSet',
        resource: valueSet('broken', {
          include: [{ system: codeSystem.url, filter: [{ property: 'concept', op: 'is-a' }] }],
        }),
      },
      ...tx(codeSystem),
    ]);
    expect(noValue.status).toBe(400);
    expect(noValue.body.issue[0].details.text).toContain('has no value');
  });
});

describe('$validate-code', () => {
  it('validates code, display and membership; a wrong display is an invalid-display error', async () => {
    const good = await post('ValueSet/$validate-code', [
      { name: 'url', valueUri: reds.url },
      { name: 'system', valueUri: codeSystem.url },
      { name: 'code', valueCode: 'crimson' },
      ...tx(codeSystem, reds),
    ]);
    expect(good.status).toBe(200);
    expect(param(good.body, 'result')?.valueBoolean).toBe(true);
    expect(param(good.body, 'display')?.valueString).toBe('Crimson');
    expect(param(good.body, 'version')?.valueString).toBe('1.0.0');

    const wrong = await post('ValueSet/$validate-code', [
      { name: 'url', valueUri: reds.url },
      { name: 'coding', valueCoding: { system: codeSystem.url, code: 'red', display: 'Redd' } },
      ...tx(codeSystem, reds),
    ]);
    expect(param(wrong.body, 'result')?.valueBoolean).toBe(false);
    const issue = (param(wrong.body, 'issues')?.resource as { issue: unknown[] }).issue[0];
    expect(issue).toMatchObject({
      severity: 'error',
      details: { coding: [{ code: 'invalid-display' }] },
      expression: ['Coding.display'],
    });
    expect(param(wrong.body, 'message')?.valueString).toContain("Wrong Display Name 'Redd'");
  });

  it('a code outside the value set is not-in-vs; an unknown code invalid-code; an unknown system not-found', async () => {
    const outside = await post('ValueSet/$validate-code', [
      { name: 'url', valueUri: reds.url },
      { name: 'system', valueUri: codeSystem.url },
      { name: 'code', valueCode: 'blue' },
      ...tx(codeSystem, reds),
    ]);
    expect(param(outside.body, 'result')?.valueBoolean).toBe(false);
    expect(param(outside.body, 'message')?.valueString).toBe(
      `The provided code '${codeSystem.url}#blue' was not found in the value set '${reds.url}|2.0'`,
    );
    const unknown = await post('CodeSystem/$validate-code', [
      { name: 'url', valueUri: codeSystem.url },
      { name: 'code', valueCode: 'green' },
      ...tx(codeSystem),
    ]);
    expect(param(unknown.body, 'result')?.valueBoolean).toBe(false);
    expect(param(unknown.body, 'message')?.valueString).toBe(
      `Unknown code 'green' in the CodeSystem '${codeSystem.url}' version '1.0.0'`,
    );
    const system = await post('ValueSet/$validate-code', [
      { name: 'url', valueUri: reds.url },
      { name: 'system', valueUri: 'http://nowhere/cs' },
      { name: 'code', valueCode: 'red' },
      ...tx(codeSystem, reds),
    ]);
    expect(param(system.body, 'result')?.valueBoolean).toBe(false);
    // The value set does not use that system: it is unknown, but not what decided the result.
    expect(param(system.body, 'x-unknown-system')?.valueCanonical).toBe('http://nowhere/cs');
  });

  it('validates each entry of $batch-validate-code, an entry without a code answering an OperationOutcome', async () => {
    const res = await post('ValueSet/$batch-validate-code', [
      { name: 'url', valueUri: reds.url },
      ...tx(codeSystem, reds),
      {
        name: 'validation',
        resource: {
          resourceType: 'Parameters',
          parameter: [{ name: 'coding', valueCoding: { system: codeSystem.url, code: 'red' } }],
        },
      },
      { name: 'validation', resource: { resourceType: 'Parameters', parameter: [] } },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.parameter).toHaveLength(2);
    expect(param(res.body.parameter[0].resource, 'result')?.valueBoolean).toBe(true);
    expect(res.body.parameter[1].resource.resourceType).toBe('OperationOutcome');
  });
});

describe('$lookup, $subsumes, $translate', () => {
  it('looks up a code: display, designations, parent and child properties', async () => {
    const res = await request(t.app).get(
      `/fhir/CodeSystem/$lookup?system=${encodeURIComponent(codeSystem.url)}&code=missing`,
    );
    expect(res.status).toBe(404);
    const found = await post('CodeSystem/$lookup', [
      { name: 'system', valueUri: codeSystem.url },
      { name: 'code', valueCode: 'red' },
      ...tx(codeSystem),
    ]);
    expect(found.status).toBe(200);
    expect(param(found.body, 'display')?.valueString).toBe('Red');
    expect(param(found.body, 'name')?.valueString).toBe('Colours');
    const children = found.body.parameter
      .filter((p: { name: string }) => p.name === 'property')
      .filter((p: { part: Array<{ valueCode?: string }> }) => p.part[0].valueCode === 'child')
      .map(
        (p: { part: Array<{ name: string; valueCode?: string }> }) =>
          p.part.find((x) => x.name === 'value')?.valueCode,
      );
    expect(children).toEqual(['crimson', 'scarlet']);
  });

  it('tells how two codes relate', async () => {
    const outcome = async (a: string, b: string): Promise<string> =>
      (
        await post('CodeSystem/$subsumes', [
          { name: 'system', valueUri: codeSystem.url },
          { name: 'codeA', valueCode: a },
          { name: 'codeB', valueCode: b },
          ...tx(codeSystem),
        ])
      ).body.parameter[0].valueCode as string;
    expect(await outcome('red', 'crimson')).toBe('subsumes');
    expect(await outcome('crimson', 'red')).toBe('subsumed-by');
    expect(await outcome('red', 'red')).toBe('equivalent');
    expect(await outcome('blue', 'red')).toBe('not-subsumed');
  });

  it('translates through a concept map, and says so when nothing matches', async () => {
    const map = {
      resourceType: 'ConceptMap',
      url: 'http://example.org/cm/colours',
      version: '1',
      status: 'active',
      group: [
        {
          source: codeSystem.url,
          target: 'http://example.org/cs/other',
          element: [{ code: 'red', target: [{ code: 'R', equivalence: 'equivalent' }] }],
        },
      ],
    };
    const res = await post('ConceptMap/$translate', [
      { name: 'url', valueUri: map.url },
      { name: 'system', valueUri: codeSystem.url },
      { name: 'code', valueCode: 'red' },
      ...tx(map),
    ]);
    expect(param(res.body, 'result')?.valueBoolean).toBe(true);
    const match = param(res.body, 'match') as { part: Array<Record<string, unknown>> };
    expect(match.part[0]).toEqual({
      name: 'concept',
      valueCoding: { system: 'http://example.org/cs/other', code: 'R' },
    });
    const none = await post('ConceptMap/$translate', [
      { name: 'url', valueUri: map.url },
      { name: 'system', valueUri: codeSystem.url },
      { name: 'code', valueCode: 'blue' },
      ...tx(map),
    ]);
    expect(param(none.body, 'result')?.valueBoolean).toBe(false);
    expect(param(none.body, 'message')?.valueString).toContain('No translations found');
  });
});

describe('FHIR conventions', () => {
  it('answers other formats 406 and other bodies 415, as OperationOutcomes', async () => {
    const xml = await request(t.app).get('/fhir/metadata?_format=xml');
    expect(xml.status).toBe(406);
    expect(xml.body.resourceType).toBe('OperationOutcome');
    const accept = await request(t.app).get('/fhir/metadata').set('Accept', 'application/fhir+xml');
    expect(accept.status).toBe(406);
    const body = await request(t.app)
      .post('/fhir/ValueSet/$expand')
      .set('Content-Type', 'application/xml')
      .send('<Parameters/>');
    expect(body.status).toBe(415);
    expect(body.body.resourceType).toBe('OperationOutcome');
  });

  it('answers malformed input 400 and unknown paths 404, never a 500', async () => {
    const notJson = await request(t.app)
      .post('/fhir/ValueSet/$expand')
      .set('Content-Type', 'application/fhir+json')
      .send('{"resourceType":');
    expect(notJson.status).toBe(400);
    expect(notJson.body.resourceType).toBe('OperationOutcome');
    for (const body of [
      { resourceType: 'Patient' },
      { resourceType: 'Parameters', parameter: 'x' },
      { resourceType: 'Parameters', parameter: [{ name: 'count', valueString: '-1' }] },
      { resourceType: 'Parameters', parameter: [{ name: 'tx-resource', resource: { a: 1 } }] },
      { resourceType: 'Parameters', parameter: [{ name: 'coding', valueCoding: { code: 5 } }] },
      {
        resourceType: 'Parameters',
        parameter: [{ name: 'codeableConcept', valueCodeableConcept: { coding: 'x' } }],
      },
    ]) {
      for (const op of ['ValueSet/$expand', 'ValueSet/$validate-code', 'CodeSystem/$lookup']) {
        const res = await request(t.app).post(`/fhir/${op}`).send(body);
        expect([op, res.status]).toEqual([op, 400]);
        expect(res.body.resourceType).toBe('OperationOutcome');
      }
    }
    const unknown = await request(t.app).get('/fhir/Patient/1');
    expect(unknown.status).toBe(404);
    expect(unknown.body.resourceType).toBe('OperationOutcome');
  });

  it('keeps tx-resources to their request', async () => {
    await post('ValueSet/$expand', [{ name: 'url', valueUri: reds.url }, ...tx(codeSystem, reds)]);
    const later = await post('ValueSet/$expand', [{ name: 'url', valueUri: reds.url }]);
    expect(later.status).toBe(404);
  });
});

describe('FHIR core content', () => {
  const GENDER = 'http://hl7.org/fhir/administrative-gender';
  const codesOf = (body: { expansion: { contains: Array<{ code: string; display: string }> } }) =>
    body.expansion.contains.map((c) => [c.code, c.display]);

  it('knows the R4 administrative-gender code system and value set without anyone loading them', async () => {
    const expanded = await post('ValueSet/$expand', [
      { name: 'url', valueUri: 'http://hl7.org/fhir/ValueSet/administrative-gender' },
    ]);
    expect(expanded.status).toBe(200);
    expect(codesOf(expanded.body)).toEqual([
      ['male', 'Male'],
      ['female', 'Female'],
      ['other', 'Other'],
      ['unknown', 'Unknown'],
    ]);
    const looked = await request(t.app).get(
      `/fhir/CodeSystem/$lookup?system=${encodeURIComponent(GENDER)}&code=female`,
    );
    expect(param(looked.body, 'version')).toMatchObject({ valueString: '4.0.1' });
    expect(param(looked.body, 'display')).toMatchObject({ valueString: 'Female' });
  });

  it('gives way to a tx-resource of the same URL and version', async () => {
    const own = {
      resourceType: 'CodeSystem',
      url: GENDER,
      version: '4.0.1',
      status: 'active',
      content: 'complete',
      concept: [{ code: 'male', display: 'Masculine' }],
    };
    const vs = valueSet('own-gender', { include: [{ system: GENDER }] });
    const expanded = await post('ValueSet/$expand', [
      { name: 'url', valueUri: vs.url },
      ...tx(own, vs),
    ]);
    expect(codesOf(expanded.body)).toEqual([['male', 'Masculine']]);
  });

  it('is not listed as stored content', async () => {
    const res = await request(t.app).get(`/fhir/CodeSystem?url=${encodeURIComponent(GENDER)}`);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(0);
  });
});
