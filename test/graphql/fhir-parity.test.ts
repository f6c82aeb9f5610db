import {
  getNamedType,
  isInputObjectType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLSchema,
} from 'graphql';
import request from 'supertest';
import { isFhirPath } from '../../compat/fhir';
import { EXPANSION_PARAMETERS } from '../../compat/fhir/options';
import { OperationParams } from '../../compat/fhir/parameters';
import { FHIR_ROUTES, type FhirRoute } from '../../compat/fhir/routes';
import { buildGraphqlSchema } from '../../src/graphql/schema';
import { createTestApp, createUser, type TestApp } from '../factories';
import { terminologyWorld } from '../factories/terminology';
import { dataOf, errorCode, gql, type Json } from './gql';

/**
 * GraphQL parity of the FHIR edge (issue 28): every FHIR route (the rows of `FHIR_ROUTES`,
 * compat/fhir/routes.ts, checked against the routes the app registers) has a GraphQL twin that
 * the schema has, or a transport-only reason; every parameter a FHIR operation reads maps to an
 * argument of its twin, or has a reason; and the twins answer as the FHIR edge does, with the
 * same rights.
 */

/**
 * Operations (`Type/$name`) whose twin is not built yet, with what it needs. Empty: every FHIR
 * route has its twin or a transport-only reason. A route may be listed here only while its row
 * names no twin field that the schema has.
 */
const NOT_YET_TWINNED: Record<string, string> = {};

let t: TestApp;
let schema: GraphQLSchema;
beforeAll(async () => {
  t = await createTestApp();
  schema = await buildGraphqlSchema();
});
afterAll(async () => t.close());

const key = (route: FhirRoute) => `${route.method} ${route.path}`;

/** The routes an Express router holds, walked down into mounted routers. */
function registered(stack: unknown[]): Array<{ method: string; path: string }> {
  const found: Array<{ method: string; path: string }> = [];
  for (const layer of stack as Array<{
    route?: { path: string; methods: Record<string, boolean> };
    handle?: { stack?: unknown[] };
  }>) {
    if (layer.route) {
      const path = layer.route.path.replace(/\\/g, '');
      for (const [method, on] of Object.entries(layer.route.methods)) {
        if (on) found.push({ method: method === '_all' ? 'ALL' : method.toUpperCase(), path });
      }
    } else if (Array.isArray(layer.handle?.stack)) {
      found.push(...registered(layer.handle.stack));
    }
  }
  return found;
}

/** A path pattern as a request path, for `isFhirPath`. */
const samplePath = (path: string) => path.replace(/:\w+/g, 'x').replace(/\{\*\w+\}/g, 'x');

function rootField(name: string): GraphQLField<unknown, unknown> | undefined {
  return schema.getQueryType()?.getFields()[name] ?? schema.getMutationType()?.getFields()[name];
}

/** Whether `arg.sub.sub…` names an argument of the field (and fields of its input types). */
function hasArgument(field: GraphQLField<unknown, unknown>, path: string): boolean {
  const [first, ...rest] = path.split('.');
  const at: GraphQLArgument | undefined = field.args.find((a) => a.name === first);
  if (!at) return false;
  let type = getNamedType(at.type);
  for (const name of rest) {
    if (!isInputObjectType(type)) return false;
    const next = type.getFields()[name];
    if (!next) return false;
    type = getNamedType(next.type);
  }
  return true;
}

describe('every FHIR route has a GraphQL twin', () => {
  it('the route table is what the app registers, in the same order', () => {
    const app = t.app as unknown as { router: { stack: unknown[] } };
    const fhir = registered(app.router.stack)
      .filter((r) => isFhirPath(samplePath(r.path)))
      .map((r) => `${r.method} ${r.path}`);
    expect(fhir).toEqual(FHIR_ROUTES.map(key));
  });

  it('each twin is a root field of the schema, or the route says why it has none', () => {
    const missing: string[] = [];
    for (const route of FHIR_ROUTES) {
      if ('transportOnly' in route.twin) {
        expect(route.twin.transportOnly.length).toBeGreaterThan(10);
        continue;
      }
      const operation = `${route.type}/$${route.operation}`;
      if (!rootField(route.twin.field) && !(operation in NOT_YET_TWINNED)) {
        missing.push(`${key(route)} → ${route.twin.field}`);
      }
    }
    expect(missing).toEqual([]);
    for (const operation of Object.keys(NOT_YET_TWINNED)) {
      expect(FHIR_ROUTES.some((r) => `${r.type}/$${r.operation}` === operation)).toBe(true);
    }
  });

  it('each parameter a route reads is an argument of its twin, or has a reason', () => {
    const unmapped: string[] = [];
    for (const route of FHIR_ROUTES) {
      const field = 'field' in route.twin ? rootField(route.twin.field) : undefined;
      for (const [name, twin] of Object.entries(route.parameters)) {
        if (typeof twin !== 'string') {
          expect(twin.reason.length).toBeGreaterThan(5);
          continue;
        }
        if (!field || !hasArgument(field, twin)) {
          unmapped.push(`${key(route)}: ${name} → ${twin}`);
        }
      }
      // Path parameters too.
      for (const param of route.path.match(/:\w+/g) ?? []) {
        if (!(param in route.parameters)) unmapped.push(`${key(route)}: ${param} (no entry)`);
      }
    }
    expect(unmapped).toEqual([]);
  });

  it('the expansion parameters TerminologyCapabilities lists are all in $expand and $validate-code', () => {
    for (const operation of ['expand', 'validate-code', 'batch-validate-code']) {
      const route = FHIR_ROUTES.find((r) => r.type === 'ValueSet' && r.operation === operation)!;
      for (const name of EXPANSION_PARAMETERS)
        expect(Object.keys(route.parameters)).toContain(name);
    }
  });
});

/** The terminology fixture (test/factories/terminology.ts): A named in French too, A and B in V. */
const world = (orgFields: Record<string, unknown> = {}) =>
  terminologyWorld(t, { orgFields, members: ['A', 'B'], frenchName: true });

type Parameter = { name: string; part?: Parameter[]; [value: string]: unknown };

/** A FHIR Parameters' value of a name (the first). */
function valueOf(body: Json, name: string): unknown {
  const found = (body.parameter as Parameter[]).find((p) => p.name === name);
  if (!found) return undefined;
  const entry = Object.entries(found).find(([k]) => k.startsWith('value'));
  return entry?.[1];
}

function fhirGet(path: string, auth?: string): request.Test {
  const req = request(t.app).get(path);
  if (auth) void req.set('Authorization', auth);
  return req;
}

function fhirPost(path: string, parameter: unknown[], auth?: string): request.Test {
  const req = request(t.app)
    .post(path)
    .set('Content-Type', 'application/fhir+json')
    .send({ resourceType: 'Parameters', parameter });
  if (auth) void req.set('Authorization', auth);
  return req;
}

/** The GraphQL error code of a FHIR error status. */
const CODE_OF_STATUS: Record<number, string> = {
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
};

describe('each operation reads only the parameters its row lists', () => {
  it('records the names the FHIR operations read', async () => {
    const w = await world();
    const read = new Map<string, Set<string>>();
    let current = '';
    const methods = [
      'has',
      'string',
      'strings',
      'boolean',
      'integer',
      'coding',
      'codeableConcept',
      'resource',
      'resources',
    ] as const;
    const spies = methods.map((method) => {
      // eslint-disable-next-line @typescript-eslint/unbound-method -- applied to `this` below
      const original = OperationParams.prototype[method] as (...a: unknown[]) => unknown;
      return jest.spyOn(OperationParams.prototype, method).mockImplementation(function (
        this: OperationParams,
        ...args: unknown[]
      ) {
        read.get(current)?.add(String(args[0]));
        return original.apply(this, args);
      } as never);
    });
    const tx = jest.spyOn(OperationParams.prototype, 'txResources');
    const echo = jest.spyOn(OperationParams.prototype, 'echo');
    const s = encodeURIComponent(w.system);
    const v = encodeURIComponent(w.valueSet);
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['CodeSystem/lookup', () => fhirGet(`/fhir/CodeSystem/$lookup?system=${s}&code=B`)],
      [
        'CodeSystem/validate-code',
        () => fhirGet(`/fhir/CodeSystem/$validate-code?url=${s}&code=B`),
      ],
      [
        'CodeSystem/subsumes',
        () => fhirGet(`/fhir/CodeSystem/$subsumes?system=${s}&codeA=A&codeB=B`),
      ],
      ['ValueSet/expand', () => fhirGet(`/fhir/ValueSet/$expand?context=${v}`)],
      [
        'ValueSet/validate-code',
        () => fhirGet(`/fhir/ValueSet/$validate-code?context=${v}&system=${s}&code=A`),
      ],
      [
        'ValueSet/batch-validate-code',
        () =>
          fhirPost('/fhir/ValueSet/$batch-validate-code', [
            { name: 'context', valueUri: w.valueSet },
            {
              name: 'validation',
              resource: {
                resourceType: 'Parameters',
                parameter: [
                  { name: 'system', valueUri: w.system },
                  { name: 'code', valueCode: 'A' },
                ],
              },
            },
          ]),
      ],
      [
        'ConceptMap/translate',
        () => fhirGet(`/fhir/ConceptMap/$translate?url=${s}&system=${s}&code=A`),
      ],
      [
        'ConceptMap/translate',
        () => fhirGet(`/fhir/ConceptMap/$translate?url=${s}&targetSystem=${s}&targetCode=B`),
      ],
    ];
    try {
      for (const [operation, call] of calls) {
        current = operation;
        if (!read.has(operation)) read.set(operation, new Set());
        tx.mockClear();
        echo.mockClear();
        const res = (await call()) as request.Response;
        expect(res.status).toBe(200);
        if (tx.mock.calls.length > 0) read.get(operation)!.add('tx-resource');
        for (const [names] of echo.mock.calls) for (const n of names) read.get(operation)!.add(n);
      }
    } finally {
      for (const spy of [...spies, tx, echo]) spy.mockRestore();
    }
    const unlisted: string[] = [];
    for (const [operation, names] of read) {
      const [type, name] = operation.split('/');
      const route = FHIR_ROUTES.find((r) => r.type === type && r.operation === name)!;
      for (const n of names) {
        if (!(n in route.parameters)) unlisted.push(`${operation}: ${n}`);
      }
      expect(names.size).toBeGreaterThan(3);
    }
    expect(unlisted).toEqual([]);
  });
});

describe('the twins answer as the FHIR operations do', () => {
  it('validateCode with a codeableConcept', async () => {
    const w = await world();
    const concept = { coding: [{ system: w.system, code: 'A' }], text: 'first' };
    const fhir = await fhirPost('/fhir/ValueSet/$validate-code', [
      { name: 'url', valueUri: w.valueSet },
      { name: 'codeableConcept', valueCodeableConcept: concept },
    ]).expect(200);
    const data = dataOf(
      await gql(
        t,
        undefined,
        `query ($url: String!, $concept: CodeableConceptInput!) {
          validateCode(url: $url, codeableConcept: $concept) {
            result display system codeableConcept { coding { system code } text }
          }
        }`,
        { url: w.valueSet, concept },
      ),
    );
    expect(data.validateCode).toEqual({
      result: valueOf(fhir.body, 'result'),
      display: valueOf(fhir.body, 'display'),
      system: valueOf(fhir.body, 'system') ?? null,
      codeableConcept: {
        coding: [{ system: w.system, code: 'A' }],
        text: 'first',
      },
    });
    expect(data.validateCode.result).toBe(true);
    expect(data.validateCode.display).toBe('Alpha');
  });

  it('validateCode with lenient display, abstract and membership-only', async () => {
    const w = await world();
    const fhir = await fhirGet(
      `/fhir/ValueSet/$validate-code?url=${encodeURIComponent(w.valueSet)}&system=${encodeURIComponent(w.system)}&code=A&display=Wrong&lenient-display-validation=true`,
    ).expect(200);
    const data = dataOf(
      await gql(
        t,
        undefined,
        `query ($url: String!, $system: String!) {
          lenient: validateCode(url: $url, coding: { system: $system, code: "A", display: "Wrong" }, lenientDisplay: true) {
            result issues
          }
          strict: validateCode(url: $url, coding: { system: $system, code: "A", display: "Wrong" }) { result }
          membership: validateCode(url: $url, coding: { system: $system, code: "A", display: "Wrong" }, membershipOnly: true, abstract: true) { result }
        }`,
        { url: w.valueSet, system: w.system },
      ),
    );
    expect(data.lenient.result).toBe(valueOf(fhir.body, 'result'));
    expect(data.lenient.result).toBe(true);
    expect(data.strict.result).toBe(false);
    expect(data.membership.result).toBe(true);
  });

  it('lookup through an instance path answers as the type-level lookup', async () => {
    const w = await world();
    const fhir = await fhirGet(
      `/orgs/${w.org}/CodeSystem/S/$lookup?system=${encodeURIComponent(w.system)}&code=B&displayLanguage=en`,
    ).expect(200);
    const data = dataOf(
      await gql(
        t,
        undefined,
        `query ($system: String!) {
          lookup(coding: { system: $system, code: "B" }, displayLanguage: "en", useSupplements: []) {
            name version display
          }
        }`,
        w,
      ),
    );
    expect(data.lookup).toEqual({
      name: valueOf(fhir.body, 'name'),
      version: valueOf(fhir.body, 'version'),
      display: valueOf(fhir.body, 'display'),
    });
  });

  it('expandValueSet with paging, designations, excludeNested and properties', async () => {
    const w = await world();
    const fhir = await fhirGet(
      `/fhir/ValueSet/$expand?url=${encodeURIComponent(w.valueSet)}&count=1&offset=1&includeDesignations=true&excludeNested=true&property=inactive`,
    ).expect(200);
    const data = dataOf(
      await gql(
        t,
        undefined,
        `query ($url: String!) {
          expandValueSet(url: $url, count: 1, offset: 1, includeDesignations: true, excludeNested: true, properties: ["inactive"]) {
            total offset parameters { name value }
            contains { code display designations { language value } properties { code value } }
          }
        }`,
        { url: w.valueSet },
      ),
    );
    const expansion = fhir.body.expansion;
    expect(data.expandValueSet.total).toBe(expansion.total);
    expect(data.expandValueSet.offset).toBe(expansion.offset);
    expect(data.expandValueSet.contains.map((c: { code: string }) => c.code)).toEqual(
      expansion.contains.map((c: { code: string }) => c.code),
    );
    expect(
      data.expandValueSet.contains[0].designations.map((d: { value: string }) => d.value).sort(),
    ).toEqual(
      (expansion.contains[0].designation ?? []).map((d: { value: string }) => d.value).sort(),
    );
    // The parameters echoed and the content used are the same, by name.
    expect(data.expandValueSet.parameters.map((p: { name: string }) => p.name).sort()).toEqual(
      expansion.parameter.map((p: { name: string }) => p.name).sort(),
    );
  });

  it('expandValueSet with version rules and an inline value set', async () => {
    const w = await world();
    const inline = {
      resourceType: 'ValueSet',
      url: 'http://example.org/fhir-parity/inline',
      status: 'active',
      compose: { include: [{ system: w.system, concept: [{ code: 'B' }] }] },
    };
    const rule = `${w.system}|v1`;
    const fhir = await fhirPost('/fhir/ValueSet/$expand', [
      { name: 'valueSet', resource: inline },
      { name: 'force-system-version', valueUri: rule },
      { name: 'activeOnly', valueBoolean: true },
    ]).expect(200);
    const data = dataOf(
      await gql(
        t,
        undefined,
        `query ($valueSet: JSONObject!, $rule: String!) {
          expandValueSet(valueSet: $valueSet, forceSystemVersions: [$rule], activeOnly: true) {
            url total parameters { name value } contains { system version code display }
          }
        }`,
        { valueSet: inline, rule },
      ),
    );
    const expansion = fhir.body.expansion;
    expect(data.expandValueSet.url).toBe(fhir.body.url);
    expect(data.expandValueSet.total).toBe(expansion.total);
    expect(
      (data.expandValueSet.contains as Array<{ code: string; display: string }>).map((c) => [
        c.code,
        c.display,
      ]),
    ).toEqual(
      (expansion.contains as Array<{ code: string; display: string }>).map((c) => [
        c.code,
        c.display,
      ]),
    );
    const named = (ps: Array<{ name: string }>) => ps.map((p) => p.name).sort();
    expect(named(data.expandValueSet.parameters)).toEqual(named(expansion.parameter));
    expect(data.expandValueSet.parameters).toContainEqual({
      name: 'force-system-version',
      value: rule,
    });
    expect(data.expandValueSet.contains).toEqual([
      { system: w.system, version: null, code: 'B', display: 'Beta' },
    ]);
  });

  it('expandValueSet of a value set brought as a tx-resource, by instance id', async () => {
    const codeSystem = {
      resourceType: 'CodeSystem',
      url: 'http://example.org/fhir-parity/tx-cs',
      version: '1',
      status: 'active',
      content: 'complete',
      concept: [
        { code: 'x', display: 'Ex' },
        { code: 'y', display: 'Why' },
      ],
    };
    const valueSet = {
      resourceType: 'ValueSet',
      id: 'tx-vs',
      url: 'http://example.org/fhir-parity/tx-vs',
      status: 'active',
      compose: { include: [{ system: codeSystem.url }] },
    };
    const fhir = await fhirPost('/fhir/ValueSet/tx-vs/$expand', [
      { name: 'tx-resource', resource: codeSystem },
      { name: 'tx-resource', resource: valueSet },
      { name: 'filter', valueString: 'why' },
    ]).expect(200);
    const data = dataOf(
      await gql(
        t,
        undefined,
        `query ($tx: [JSONObject!]) {
          expandValueSet(id: "tx-vs", txResources: $tx, filter: "why") {
            url total contains { code display }
          }
        }`,
        { tx: [codeSystem, valueSet] },
      ),
    );
    expect(data.expandValueSet).toEqual({
      url: fhir.body.url,
      total: fhir.body.expansion.total,
      contains: fhir.body.expansion.contains.map((c: Json) => ({
        code: c.code,
        display: c.display,
      })),
    });
    expect(data.expandValueSet.contains).toEqual([{ code: 'y', display: 'Why' }]);
  });

  it('batchValidateCode answers each validation as $batch-validate-code does', async () => {
    const w = await world();
    const fhir = await fhirPost('/fhir/ValueSet/$batch-validate-code', [
      { name: 'url', valueUri: w.valueSet },
      ...['A', 'Z'].map((code) => ({
        name: 'validation',
        resource: {
          resourceType: 'Parameters',
          parameter: [
            { name: 'system', valueUri: w.system },
            { name: 'code', valueCode: code },
          ],
        },
      })),
      {
        name: 'validation',
        resource: {
          resourceType: 'Parameters',
          parameter: [
            { name: 'url', valueUri: 'http://example.org/none' },
            { name: 'coding', valueCoding: { system: w.system, code: 'A' } },
          ],
        },
      },
    ]).expect(200);
    const fhirAnswers = (fhir.body.parameter as Parameter[]).map(
      (p) => p.resource as { resourceType: string; issue: Array<{ details: { text: string } }> },
    );
    const data = dataOf(
      await gql(
        t,
        undefined,
        `query ($url: String!, $system: String!) {
          batchValidateCode(url: $url, validations: [
            { coding: { system: $system, code: "A" } },
            { coding: { system: $system, code: "Z" } },
            { url: "http://example.org/none", coding: { system: $system, code: "A" } }
          ]) { validation { result display } errors }
        }`,
        { url: w.valueSet, system: w.system },
      ),
    );
    expect(data.batchValidateCode).toHaveLength(3);
    for (const [i, answer] of (data.batchValidateCode as Json[]).entries()) {
      const resource = fhirAnswers[i];
      if (resource.resourceType === 'OperationOutcome') {
        expect(answer.validation).toBeNull();
        expect(answer.errors.map((e: { details: { text: string } }) => e.details.text)).toEqual(
          resource.issue.map((e) => e.details.text),
        );
      } else {
        expect(answer.validation).toEqual({
          result: valueOf(resource, 'result'),
          display: valueOf(resource, 'display') ?? null,
        });
      }
    }
    expect(data.batchValidateCode[0].validation.result).toBe(true);
    expect(data.batchValidateCode[1].validation.result).toBe(false);
  });

  it('translate with conceptMapVersion', async () => {
    const w = await world();
    const s = encodeURIComponent(w.system);
    const fhir = await fhirGet(
      `/fhir/ConceptMap/$translate?url=${s}&conceptMapVersion=v1&system=${s}&code=A`,
    ).expect(200);
    const data = dataOf(
      await gql(
        t,
        undefined,
        `query ($system: String!) {
          translate(url: $system, conceptMapVersion: "v1", coding: { system: $system, code: "A" }) {
            result matches { equivalence concept { code } }
          }
        }`,
        w,
      ),
    );
    expect(data.translate.result).toBe(valueOf(fhir.body, 'result'));
    expect(data.translate.matches).toEqual([{ equivalence: 'equivalent', concept: { code: 'B' } }]);
  });

  it('fhirResources, fhirResourceVersions and reads by owner and id answer the FHIR searches and reads', async () => {
    const w = await world();
    const search = await fhirGet(`/orgs/${w.org}/CodeSystem/`).expect(200);
    const history = await fhirGet(`/orgs/${w.org}/CodeSystem/S/version/`).expect(200);
    const read = await fhirGet(`/orgs/${w.org}/CodeSystem/S/version/v1`).expect(200);
    const owner = `/orgs/${w.org}/`;
    const data = dataOf(
      await gql(
        t,
        undefined,
        `query ($owner: String!, $url: String!) {
          fhirResources(type: CodeSystem, owner: $owner) { total page more resources }
          counted: fhirResources(type: ValueSet, owner: $owner, countOnly: true) { total resources }
          byUrl: fhirResources(type: CodeSystem, url: $url) { total resources }
          fhirResourceVersions(type: CodeSystem, owner: $owner, id: "S") { total resources }
          codeSystem(owner: $owner, id: "S", version: "v1")
          latest: codeSystem(owner: $owner, id: "S")
        }`,
        { owner, url: w.system },
      ),
    );
    expect(data.fhirResources.total).toBe(search.body.total);
    expect(data.fhirResources.resources.map((r: { id: string }) => r.id)).toEqual(
      search.body.entry.map((e: { resource: { id: string } }) => e.resource.id),
    );
    expect(data.counted).toEqual({ total: 1, resources: [] });
    expect(data.byUrl.total).toBe(1);
    expect(data.byUrl.resources[0].url).toBe(w.system);
    expect(data.fhirResourceVersions.total).toBe(history.body.total);
    expect(data.fhirResourceVersions.resources.map((r: { version: string }) => r.version)).toEqual(
      history.body.entry.map((e: { resource: { version: string } }) => e.resource.version),
    );
    // The same resource but for what depends on the request (its time, the address asked).
    const same = (resource: Record<string, unknown>) => {
      const { meta, identifier, ...rest } = resource;
      void meta;
      void identifier;
      return rest;
    };
    expect(same(data.codeSystem)).toEqual(same(read.body));
    expect(data.latest.version).toBe('v1');
    // By server-wide id.
    const global = await fhirGet(`/fhir/CodeSystem/?url=${encodeURIComponent(w.system)}`).expect(
      200,
    );
    const id = global.body.entry[0].resource.id as string;
    expect(id).not.toBe('S');
    const byId = await fhirGet(`/fhir/CodeSystem/${encodeURIComponent(id)}`).expect(200);
    const one = dataOf(
      await gql(t, undefined, `query ($id: String!) { codeSystem(id: $id) }`, { id }),
    );
    expect(same(one.codeSystem)).toEqual(same(byId.body));
  });
});

describe('the twins keep private content from those who may not see it, as FHIR does', () => {
  it('answers an outsider as the FHIR edge does', async () => {
    const w = await world({ public_access: 'None' });
    const outsider = await createUser(t);
    const owner = `/orgs/${w.org}/`;
    for (const auth of [undefined, outsider.auth]) {
      const fhirSearch = await fhirGet(`/orgs/${w.org}/CodeSystem/`, auth);
      const fhirRead = await fhirGet(`/orgs/${w.org}/CodeSystem/S/version/v1`, auth);
      const fhirValidate = await fhirPost(
        '/fhir/ValueSet/$validate-code',
        [
          { name: 'url', valueUri: w.valueSet },
          {
            name: 'codeableConcept',
            valueCodeableConcept: { coding: [{ system: w.system, code: 'A' }] },
          },
        ],
        auth,
      );
      const search = await gql(
        t,
        auth,
        `query ($owner: String!) { fhirResources(type: CodeSystem, owner: $owner) { total resources } }`,
        { owner },
      );
      if (fhirSearch.status === 200) {
        expect(dataOf(search).fhirResources.total).toBe(fhirSearch.body.total);
        expect(fhirSearch.body.total).toBe(0);
      } else {
        expect(errorCode(search)).toBe(CODE_OF_STATUS[fhirSearch.status]);
      }
      const read = await gql(
        t,
        auth,
        `query ($owner: String!) { codeSystem(owner: $owner, id: "S", version: "v1") }`,
        { owner },
      );
      expect(fhirRead.status).toBe(auth ? 403 : 401);
      expect(errorCode(read)).toBe(CODE_OF_STATUS[fhirRead.status]);
      const validate = await gql(
        t,
        auth,
        `query ($url: String!, $system: String!) {
          validateCode(url: $url, codeableConcept: { coding: [{ system: $system, code: "A" }] }) { result }
        }`,
        { url: w.valueSet, system: w.system },
      );
      expect(fhirValidate.status).toBe(404);
      expect(errorCode(validate)).toBe(CODE_OF_STATUS[fhirValidate.status]);
      expect(JSON.stringify(validate)).not.toMatch(/Alpha/);
      const batch = dataOf(
        await gql(
          t,
          auth,
          `query ($url: String!, $system: String!) {
            batchValidateCode(url: $url, validations: [{ coding: { system: $system, code: "A" } }]) {
              validation { result } errors
            }
          }`,
          { url: w.valueSet, system: w.system },
        ),
      );
      expect(batch.batchValidateCode[0].validation).toBeNull();
      expect(JSON.stringify(batch)).not.toMatch(/Alpha/);
    }
    // A member sees it all.
    const member = dataOf(
      await gql(
        t,
        w.member.auth,
        `query ($owner: String!, $url: String!, $system: String!) {
          fhirResources(type: CodeSystem, owner: $owner) { total }
          validateCode(url: $url, codeableConcept: { coding: [{ system: $system, code: "A" }] }) { result display }
        }`,
        { owner, url: w.valueSet, system: w.system },
      ),
    );
    expect(member.fhirResources.total).toBe(1);
    expect(member.validateCode).toEqual({ result: true, display: 'Alpha' });
  });
});
