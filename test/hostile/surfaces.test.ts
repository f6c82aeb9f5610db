import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createTestApp, type TestApp } from '../factories';
import { CLIENT_ID, REDIRECT_URI, startProvider, type TestProvider } from '../oidc/provider';
import {
  BAD_BODIES,
  BAD_LIMITS,
  BAD_UNICODE,
  CONTROL,
  NOT_A_LIST,
  NOT_A_NUMBER,
  NOT_A_STRING,
  NOT_AN_OBJECT,
  PATH_IDS,
  RAW_QUERY_VALUES,
  Rng,
  SEED,
  SQL,
  badAuthorizations,
  deepObject,
  hostileJson,
  hugeString,
  show,
  type Expect,
  type Hostile,
} from './generator';
import {
  brokenInvariants,
  buildTenant,
  fhirJson,
  fingerprint,
  listen,
  multipart,
  report,
  runCases,
  send,
  settleTasks,
  tally,
  type Case,
  type Outcome,
  type Server,
  type Tenant,
} from './harness';

/**
 * Hostile input on the surfaces added after the REST suite (issue 23, part 6): the FHIR edge
 * (reads, searches, operations, writes), `$cascade`, `$clone`, `$match`, bulk import (bodies,
 * multipart and `file_url`), exports and their download addresses, events, pins, follows and
 * single sign-on. As in rest.test.ts: no 5xx, no hang, and a refused request writes nothing.
 * `HOSTILE_SEED`, `HOSTILE_REPORT` and `HOSTILE_DUMP` work as there.
 */

const FHIR = { Accept: 'application/fhir+json' };
const enc = encodeURIComponent;

/** What the allowed `file_url` host answers, by path: all of it garbage of one kind or another. */
const GARBAGE: Record<string, (res: http.ServerResponse) => void> = {
  '/html': (res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>nope</html>'),
  '/binary': (res) => res.writeHead(200).end(Buffer.from([0xff, 0xfe, 0x00, 0x01, 0xed, 0xa0])),
  '/nul': (res) => res.writeHead(200).end('{"type": "Concept", "id": "a\u0000"}\n'),
  '/json-garbage': (res) => res.writeHead(200).end('{"type": "Concept", "id": \n[[[[\n'),
  '/csv-garbage': (res) => res.writeHead(200).end('resource_type,id\n"unclosed,x\n,,,,,\n'),
  '/empty': (res) => res.writeHead(200).end(),
  '/500': (res) => res.writeHead(500).end('boom'),
  '/404': (res) => res.writeHead(404).end(),
  '/redirect': (res) => res.writeHead(302, { Location: 'file:///etc/passwd' }).end(),
  '/redirect-loop': (res) => res.writeHead(302, { Location: '/redirect-loop' }).end(),
  '/lying-length': (res) => {
    res.writeHead(200, { 'Content-Length': String(2 ** 40) });
    res.end('x');
  },
  '/reset': (res) => res.socket?.destroy(),
  '/slow': (res) => {
    res.writeHead(200);
    res.write('{"type": "Concept"');
    setTimeout(() => res.end('}\n'), 1500);
  },
  '/lines': (res) =>
    res
      .writeHead(200)
      .end(
        ['{"type": "Organization", "id": "\\ud800"}', '{"type": 5}', 'null', '[]', '"x"'].join(
          '\n',
        ),
      ),
};

function garbageServer(): Promise<{ host: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const answer = GARBAGE[(req.url ?? '').split('?')[0]];
    if (answer) answer(res);
    else res.writeHead(200).end(hugeString(64 * 1024));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => {
          server.closeAllConnections();
          return new Promise<void>((done) => server.close(() => done()));
        },
      }),
    ),
  );
}

/** Query values for a parameter that takes text: SQL, invalid UTF-8, huge, controls. */
function textQueries(rng: Rng, k: number): Array<{ raw: string; label: string; expect: Expect }> {
  return [
    ...rng.sample(SQL, k).map((s) => ({ raw: enc(s), label: `SQL ${show(s)}`, expect: 'no5xx' })),
    ...rng
      .sample(
        RAW_QUERY_VALUES.filter((r) => r.expect === 'no5xx'),
        k,
      )
      .map((r) => ({ raw: r.raw, label: r.label, expect: r.expect })),
    { raw: enc(rng.pick(CONTROL)), label: 'a control character', expect: 'no5xx' as const },
  ] as Array<{ raw: string; label: string; expect: Expect }>;
}

/** A few malformed credentials: every one must be refused. */
function authCases(
  rng: Rng,
  tenant: Tenant,
  base: Omit<Case, 'input' | 'expect' | 'auth'>,
  k: number,
): Case[] {
  return rng.sample(badAuthorizations(rng, tenant.owner.username), k).map((a) => ({
    ...base,
    auth: a.value,
    input: `Authorization: ${a.label}`,
    expect: 'refused',
  }));
}

/** Bodies that are not JSON: a rotating few per endpoint, all refused. */
function badBodyCases(
  rng: Rng,
  base: Omit<Case, 'input' | 'expect'>,
  k: number,
  contentType?: string,
): Case[] {
  return rng
    .sample(
      BAD_BODIES.filter((b) => b.expect === undefined),
      k,
    )
    .map((b) => ({
      ...base,
      raw: {
        contentType:
          contentType && b.contentType === 'application/json' ? contentType : b.contentType,
        data: b.data,
      },
      input: `a body: ${b.label}`,
      expect: 'refused',
    }));
}

/** Path ids, poisoned: the ones every endpoint gets plus a seeded few. */
function pathIds(rng: Rng, k: number): typeof PATH_IDS {
  return [PATH_IDS.find((p) => p.raw === '%ED%A0%80')!, ...rng.sample(PATH_IDS, k)];
}

// ---------------------------------------------------------------------------------------------
// FHIR

const FHIR_TYPES = ['CodeSystem', 'ValueSet', 'ConceptMap'] as const;
const SEARCH_PARAMS = [
  'url',
  'version',
  'name',
  'title',
  'status',
  'publisher',
  'date',
  '_id',
  'identifier',
  'system',
  'code',
  '_elements',
  '_summary',
  '_sort',
  '_total',
  'page',
  '_getpages',
];

function fhirReads(rng: Rng, tenant: Tenant): Case[] {
  const org = tenant.org;
  const globalId = `org${org.length}-${org}-S`;
  const cases: Case[] = [];
  const get = (p: string, input: string, expect: Expect): void => {
    cases.push({ family: 'fhir reads', method: 'GET', path: p, headers: FHIR, input, expect });
  };
  for (const type of FHIR_TYPES) {
    const id = type === 'ValueSet' ? 'C' : 'S';
    for (const base of [`/fhir/${type}`, `/orgs/${org}/${type}`]) {
      for (const name of rng.sample(SEARCH_PARAMS, 3)) {
        for (const v of textQueries(rng, 1))
          get(`${base}?${name}=${v.raw}`, `${name} = ${v.label}`, v.expect);
      }
      for (const v of rng.sample(BAD_LIMITS, 3))
        get(`${base}?_count=${enc(v)}`, `_count=${v}`, 'no5xx');
      get(`${base}?_count=5&_count=abc&page[]=2`, 'repeated and bracketed paging', 'no5xx');
      get(`${base}?_format=${enc("'; --")}`, '_format with SQL', 'no5xx');
      get(
        `${base}?_elements=${enc(Array.from({ length: 500 }, (_, i) => `e${i}`).join(','))}`,
        '500 _elements',
        'no5xx',
      );
      get(
        `${base}?url:below=${enc("http://x/'")}&name:exact=%ED%A0%80`,
        'modifiers with SQL',
        'no5xx',
      );
    }
    for (const p of pathIds(rng, 3)) {
      get(
        `/fhir/${type}/${p.raw}`,
        `/fhir id = ${p.label}`,
        p.expect === 'refused' ? 'refused' : 'no5xx',
      );
      get(
        `/orgs/${org}/${type}/${p.raw}`,
        `owner id = ${p.label}`,
        p.expect === 'refused' ? 'refused' : 'no5xx',
      );
      get(
        `/orgs/${org}/${type}/${id}/version/${p.raw}`,
        `version = ${p.label}`,
        p.expect === 'refused' ? 'refused' : 'no5xx',
      );
    }
    for (const gid of [
      globalId,
      `org999-${org}-S`,
      'org1-',
      'org0-a-b',
      `org${org.length + 5}-${org}-S`,
      'user3-abc',
      `org${org.length}-${org}-`,
      'org9999999999999999-x',
    ]) {
      get(
        `/fhir/${type}/${enc(gid)}?_summary=${enc("'")}`,
        `the server-wide id ${show(gid)}`,
        'no5xx',
      );
    }
    get(`/orgs/${org}/${type}/${id}/version`, 'the version list', 'no5xx');
    get(`/orgs/${org}/${type}/${id}/version/*`, 'every version (*)', 'no5xx');
    get(
      `/orgs/${org}/${type}/${id}/version?_count=-1&page=abc`,
      'versions with bad paging',
      'no5xx',
    );
    get(
      `/users/${tenant.owner.username}/${type}/${enc("'")}`,
      'a user namespace with SQL',
      'no5xx',
    );
  }
  get('/fhir/metadata?mode=%ED%A0%80', 'metadata mode invalid UTF-8', 'no5xx');
  get(`/fhir/metadata?mode=${enc("'")}`, 'metadata mode SQL', 'no5xx');
  get('/fhir/$versions?x=%00', '$versions with a NUL', 'no5xx');
  get(`/fhir/${enc("'; DROP")}`, 'an unknown FHIR type', 'refused');
  for (const a of rng.sample(badAuthorizations(rng, tenant.owner.username), 4)) {
    cases.push({
      family: 'fhir reads',
      method: 'GET',
      path: `/orgs/${org}/CodeSystem/S`,
      headers: FHIR,
      auth: a.value,
      input: `Authorization: ${a.label}`,
      expect: 'refused',
    });
  }
  return cases;
}

/** The operations, their levels, and the parameters each reads. */
const OPERATIONS: Array<{ type: string; op: string; params: string[]; id: string }> = [
  {
    type: 'CodeSystem',
    op: 'lookup',
    id: 'S',
    params: ['system', 'code', 'version', 'coding', 'property', 'displayLanguage', 'date'],
  },
  {
    type: 'CodeSystem',
    op: 'validate-code',
    id: 'S',
    params: [
      'url',
      'code',
      'system',
      'version',
      'display',
      'coding',
      'codeableConcept',
      'displayLanguage',
    ],
  },
  {
    type: 'CodeSystem',
    op: 'subsumes',
    id: 'S',
    params: ['system', 'codeA', 'codeB', 'version', 'codingA', 'codingB'],
  },
  {
    type: 'ValueSet',
    op: 'expand',
    id: 'C',
    params: [
      'url',
      'valueSetVersion',
      'filter',
      'count',
      'offset',
      'activeOnly',
      'includeDesignations',
      'displayLanguage',
      'system-version',
      'exclude-system',
      'date',
    ],
  },
  {
    type: 'ValueSet',
    op: 'validate-code',
    id: 'C',
    params: [
      'url',
      'code',
      'system',
      'systemVersion',
      'display',
      'coding',
      'codeableConcept',
      'valueSetVersion',
    ],
  },
  { type: 'ValueSet', op: 'batch-validate-code', id: 'C', params: ['url', 'code', 'system'] },
  {
    type: 'ConceptMap',
    op: 'translate',
    id: 'S',
    params: [
      'url',
      'system',
      'code',
      'version',
      'source',
      'target',
      'targetsystem',
      'coding',
      'reverse',
      'conceptMapVersion',
    ],
  },
];

function parameters(parameter: unknown): unknown {
  return { resourceType: 'Parameters', parameter };
}

function fhirOperationBodies(rng: Rng, op: (typeof OPERATIONS)[number], tenant: Tenant): Hostile[] {
  const name = rng.pick(op.params);
  const system = `http://example.org/${tenant.marker}`;
  return [
    ...BAD_UNICODE.slice(0, 2).map((h): Hostile => ({
      ...h,
      label: `${name} with ${h.label}`,
      value: parameters([{ name, valueString: h.value }]),
    })),
    ...rng.sample(NOT_A_STRING, 1).map((v): Hostile => ({
      label: `${name} as ${show(v, 30)}`,
      value: parameters([{ name, valueCode: v }]),
      expect: 'no5xx',
    })),
    ...rng.sample(SQL, 2).map((s): Hostile => ({
      label: `${name} SQL ${show(s)}`,
      value: parameters([
        { name, valueUri: s },
        { name: 'system', valueUri: system },
      ]),
      expect: 'no5xx',
    })),
    ...rng.sample(NOT_A_LIST, 2).map((v): Hostile => ({
      label: `parameter = ${show(v, 30)}`,
      value: parameters(v),
      expect: 'no5xx',
    })),
    ...rng.sample(NOT_AN_OBJECT, 2).map((v): Hostile => ({
      label: `the body ${show(v, 30)}`,
      value: v,
      expect: 'no5xx',
    })),
    { label: 'resourceType Foo', value: { resourceType: 'Foo', parameter: [] }, expect: 'no5xx' },
    {
      label: 'no resourceType',
      value: { parameter: [{ name, valueString: 'x' }] },
      expect: 'no5xx',
    },
    {
      label: 'a coding of wrong types',
      value: parameters([{ name: 'coding', valueCoding: { system: 5, code: [], version: {} } }]),
      expect: 'no5xx',
    },
    {
      label: 'a codeableConcept of 2000 codings',
      value: parameters([
        {
          name: 'codeableConcept',
          valueCodeableConcept: {
            coding: Array.from({ length: 2000 }, (_, i) => ({ system, code: `c${i}` })),
          },
        },
      ]),
      expect: 'no5xx',
    },
    {
      label: 'parts 40 levels deep',
      value: parameters([{ name, part: [deepObject(40)] }]),
      expect: 'refused',
    },
    {
      label: 'an inline valueSet of wrong types',
      value: parameters([
        { name: 'valueSet', resource: { resourceType: 'ValueSet', compose: { include: 'x' } } },
      ]),
      expect: 'no5xx',
    },
    {
      label: 'an inline resource with a lone surrogate',
      value: parameters([
        { name: 'valueSet', resource: { resourceType: 'ValueSet', url: '\ud800' } },
      ]),
      expect: 'refused',
    },
    {
      label: `${name} 1 MB`,
      value: parameters([{ name, valueString: hugeString() }]),
      expect: 'no5xx',
    },
    {
      label: '5000 parameters',
      value: parameters(
        Array.from({ length: 5000 }, (_, i) => ({ name: `p${i}`, valueString: 'x' })),
      ),
      expect: 'no5xx',
    },
    {
      label: 'count and offset out of range',
      value: parameters([
        { name: 'count', valueInteger: -1 },
        { name: 'offset', valueInteger: 1e308 },
      ]),
      expect: 'no5xx',
    },
  ];
}

function fhirOperations(rng: Rng, tenant: Tenant): Case[] {
  const org = tenant.org;
  const cases: Case[] = [];
  for (const op of OPERATIONS) {
    const family = 'fhir operations';
    const levels = [`/fhir/${op.type}/$${op.op}`, `/orgs/${org}/${op.type}/${op.id}/$${op.op}`];
    for (const base of levels) {
      for (const name of rng.sample(op.params, 2)) {
        for (const v of textQueries(rng, 1)) {
          cases.push({
            family,
            method: 'GET',
            path: `${base}?${name}=${v.raw}&system=${enc(`http://example.org/${tenant.marker}`)}`,
            headers: FHIR,
            input: `${op.op} ${name} = ${v.label}`,
            expect: v.expect,
          });
        }
      }
      cases.push({
        family,
        method: 'GET',
        path: `${base}?${op.params.map((p) => `${p}=${enc(rng.pick(SQL))}`).join('&')}`,
        headers: FHIR,
        input: `${op.op} every parameter with SQL`,
        expect: 'no5xx',
      });
      cases.push({
        family,
        method: 'GET',
        path: `${base}?code=a&code=b&code[x]=c&system=%ED%A0%80`,
        headers: FHIR,
        input: `${op.op} repeated, bracketed and invalid UTF-8 parameters`,
        expect: 'no5xx',
      });
    }
    for (const p of pathIds(rng, 2)) {
      cases.push({
        family,
        method: 'GET',
        path: `/orgs/${org}/${op.type}/${p.raw}/$${op.op}?code=A`,
        headers: FHIR,
        input: `${op.op} instance id = ${p.label}`,
        expect: p.expect === 'refused' ? 'refused' : 'no5xx',
      });
    }
    const post = { family, method: 'POST', path: levels[0], headers: FHIR };
    for (const h of fhirOperationBodies(rng, op, tenant)) {
      cases.push({
        ...post,
        raw: fhirJson(h.value),
        input: `${op.op}: ${h.label}`,
        expect: h.expect,
      });
    }
    cases.push(...badBodyCases(rng, post, 2, 'application/fhir+json'));
  }
  return cases;
}

function codeSystem(id: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    resourceType: 'CodeSystem',
    id,
    url: `http://example.org/hostile/${id}`,
    name: 'Hostile',
    status: 'draft',
    content: 'complete',
    concept: [{ code: 'a', display: 'A' }],
    ...fields,
  };
}

function fhirWrites(rng: Rng, tenant: Tenant, n: () => number): Case[] {
  const org = tenant.org;
  const family = 'fhir writes';
  const cases: Case[] = [];
  const fieldValues = (): Array<[string, Hostile]> => [
    ...['id', 'url', 'name', 'version', 'status', 'title'].flatMap(
      (field): Array<[string, Hostile]> => [
        [field, { ...rng.pick(BAD_UNICODE), label: `${field}: ${rng.pick(BAD_UNICODE).label}` }],
        [
          field,
          {
            label: `${field}: ${show(rng.pick(NOT_A_STRING), 30)}`,
            value: rng.pick(NOT_A_STRING),
            expect: 'no5xx',
          },
        ],
        [field, { label: `${field}: SQL`, value: rng.pick(SQL), expect: 'no5xx' }],
      ],
    ),
    [
      'concept',
      { label: 'concept: not a list', value: rng.pick(NOT_A_LIST.slice(0, 5)), expect: 'no5xx' },
    ],
    ['concept', { label: 'concept: [null]', value: [null], expect: 'no5xx' }],
    [
      'concept',
      {
        label: 'concept: codes of wrong types',
        value: [{ code: 5, display: [] }],
        expect: 'no5xx',
      },
    ],
    [
      'concept',
      { label: 'concept: a lone surrogate code', value: [{ code: '\udc00' }], expect: 'refused' },
    ],
    [
      'concept',
      { label: 'concept: 40 levels of children', value: [deepChildren(40)], expect: 'no5xx' },
    ],
    [
      'concept',
      { label: 'concept: duplicate codes', value: [{ code: 'a' }, { code: 'a' }], expect: 'no5xx' },
    ],
    [
      'concept',
      {
        label: 'concept: a 1 MB display',
        value: [{ code: 'a', display: hugeString() }],
        expect: 'no5xx',
      },
    ],
    [
      'identifier',
      {
        label: 'identifier: hostile accession',
        value: [{ system: 'http://x', value: "/orgs/'; --/CodeSystem/x/" }],
        expect: 'no5xx',
      },
    ],
    ['resourceType', { label: 'resourceType: ValueSet', value: 'ValueSet', expect: 'no5xx' }],
    ['resourceType', { label: 'resourceType: 5', value: 5, expect: 'no5xx' }],
    [
      'property',
      { label: 'property: deep JSON', value: hostileJson(rng)[0].value, expect: 'refused' },
    ],
    [
      'meta',
      { label: 'meta: wrong types', value: { versionId: {}, lastUpdated: 'x' }, expect: 'no5xx' },
    ],
  ];
  const create = `/orgs/${org}/CodeSystem`;
  for (const [field, h] of fieldValues()) {
    const id = `hfc${n()}`;
    cases.push({
      family,
      method: 'POST',
      path: create,
      headers: FHIR,
      raw: fhirJson(codeSystem(id, { [field]: h.value })),
      input: `create ${h.label}`,
      expect: h.expect,
    });
  }
  // Updates go to copies: S and C hold what the other families read.
  for (const [field, h] of rng.sample(fieldValues(), 10)) {
    cases.push({
      family,
      method: 'PUT',
      path: `/orgs/${org}/CodeSystem/S`,
      headers: FHIR,
      raw: fhirJson(codeSystem('S', { [field]: h.value })),
      input: `update S ${h.label}`,
      expect: h.expect === 'refused' ? 'refused' : 'no5xx',
    });
  }
  for (const v of rng.sample(NOT_AN_OBJECT, 3)) {
    cases.push({
      family,
      method: 'POST',
      path: '/fhir/CodeSystem',
      headers: FHIR,
      raw: fhirJson(v),
      input: `a global create of ${show(v)}`,
      expect: 'no5xx',
    });
  }
  cases.push({
    family,
    method: 'POST',
    path: '/fhir/CodeSystem',
    headers: FHIR,
    raw: fhirJson(
      codeSystem(`hfg${n()}`, { identifier: [{ value: `/orgs/${enc("'")}/CodeSystem/x/` }] }),
    ),
    input: 'a global create with an SQL accession',
    expect: 'no5xx',
  });
  cases.push({
    family,
    method: 'POST',
    path: `/orgs/${org}/ValueSet`,
    headers: FHIR,
    raw: fhirJson({
      resourceType: 'ValueSet',
      id: `hfv${n()}`,
      url: 'http://x/vs',
      compose: { include: [{ system: "'; --", concept: 'x' }] },
    }),
    input: 'a ValueSet with a hostile compose',
    expect: 'no5xx',
  });
  cases.push({
    family,
    method: 'POST',
    path: `/orgs/${org}/ConceptMap`,
    headers: FHIR,
    raw: fhirJson({
      resourceType: 'ConceptMap',
      id: `hfm${n()}`,
      url: 'http://x/cm',
      group: [{ source: 5, element: 'x' }],
    }),
    input: 'a ConceptMap with a hostile group',
    expect: 'no5xx',
  });
  for (const p of pathIds(rng, 3)) {
    for (const type of FHIR_TYPES) {
      cases.push({
        family,
        method: 'DELETE',
        path: `/orgs/${org}/${type}/${p.raw}`,
        headers: FHIR,
        input: `delete ${type} ${p.label}`,
        expect: 'refused',
      });
      cases.push({
        family,
        method: 'PUT',
        path: `/fhir/${type}/${p.raw}`,
        headers: FHIR,
        raw: fhirJson(codeSystem(`hfp${n()}`)),
        input: `a global update of ${p.label}`,
        expect: p.expect === 'refused' ? 'refused' : 'no5xx',
      });
    }
  }
  cases.push({
    family,
    method: 'DELETE',
    path: `/orgs/${tenant.victimOrg}/CodeSystem/S`,
    headers: FHIR,
    input: "delete in someone else's org",
    expect: 'refused',
  });
  cases.push({
    family,
    method: 'DELETE',
    path: `/fhir/CodeSystem/${enc(`org999-${org}-S`)}`,
    headers: FHIR,
    input: 'delete a bad server-wide id',
    expect: 'refused',
  });
  cases.push(
    ...badBodyCases(
      rng,
      { family, method: 'POST', path: create, headers: FHIR },
      4,
      'application/fhir+json',
    ),
  );
  cases.push(
    ...authCases(
      rng,
      tenant,
      {
        family,
        method: 'POST',
        path: create,
        headers: FHIR,
        raw: fhirJson(codeSystem(`hfa${n()}`)),
      },
      6,
    ),
  );
  return cases;
}

function deepChildren(depth: number): unknown {
  let node: Record<string, unknown> = { code: `d${depth}` };
  for (let i = depth - 1; i >= 0; i -= 1) node = { code: `d${i}`, concept: [node] };
  return node;
}

// ---------------------------------------------------------------------------------------------
// $cascade, $clone, $match

const CASCADE_PARAMETERS = [
  'mapTypes',
  'excludeMapTypes',
  'returnMapTypes',
  'method',
  'cascadeHierarchy',
  'cascadeMappings',
  'cascadeLevels',
  'reverse',
  'view',
  'omitIfExistsIn',
  'equivalencyMapType',
  'includeMappings',
  'includeRetired',
];

function cascadeCases(rng: Rng, tenant: Tenant): Case[] {
  const family = '$cascade';
  const S = `/orgs/${tenant.org}/sources/S/`;
  const C = `/orgs/${tenant.org}/collections/C/`;
  const cases: Case[] = [];
  for (const base of [
    `${S}concepts/A/$cascade/`,
    `${S}v1/concepts/A/$cascade/`,
    `${C}concepts/A/$cascade/`,
  ]) {
    for (const name of CASCADE_PARAMETERS) {
      for (const v of textQueries(rng, 1).slice(0, 2)) {
        cases.push({
          family,
          method: 'GET',
          path: `${base}?${name}=${v.raw}`,
          input: `${name} = ${v.label}`,
          expect: v.expect,
        });
      }
    }
    for (const v of ['-1', '1e99', '99999999999999999999', 'abc', '*', '1000000']) {
      cases.push({
        family,
        method: 'GET',
        path: `${base}?cascadeLevels=${enc(v)}&cascadeHierarchy=true&cascadeMappings=true`,
        input: `cascadeLevels=${v}`,
        expect: 'no5xx',
      });
    }
    cases.push({
      family,
      method: 'GET',
      path: `${base}?omitIfExistsIn=${enc(`/orgs/${tenant.victimOrg}/collections/x/`)}&reverse=true&view=hierarchy`,
      input: 'omitIfExistsIn elsewhere, reversed, as a hierarchy',
      expect: 'no5xx',
    });
    cases.push({
      family,
      method: 'GET',
      path: `${base}?mapTypes=${enc(Array.from({ length: 500 }, (_, i) => `T${i}`).join(','))}`,
      input: '500 map types',
      expect: 'no5xx',
    });
  }
  for (const p of pathIds(rng, 3)) {
    cases.push({
      family,
      method: 'GET',
      path: `${S}concepts/${p.raw}/$cascade/`,
      input: `concept = ${p.label}`,
      expect: p.expect,
    });
    cases.push({
      family,
      method: 'GET',
      path: `${S}${p.raw}/concepts/A/$cascade/`,
      input: `version = ${p.label}`,
      expect: p.expect,
    });
  }
  cases.push({
    family,
    method: 'POST',
    path: `${S}concepts/A/$cascade/`,
    body: {},
    input: 'POST (GET only)',
    expect: 'refused',
  });
  cases.push(
    ...authCases(rng, tenant, { family, method: 'GET', path: `${S}concepts/A/$cascade/` }, 3),
  );
  return cases;
}

function cloneCases(rng: Rng, tenant: Tenant): Case[] {
  const family = '$clone';
  const S = `/orgs/${tenant.org}/sources/S/`;
  const target = `${S}concepts/$clone/`;
  const expressions = (value: unknown): unknown => ({ expressions: value });
  const bodies: Hostile[] = [
    ...BAD_UNICODE.map((h): Hostile => ({
      ...h,
      label: `an expression with ${h.label}`,
      value: expressions([h.value]),
    })),
    ...rng.sample(SQL, 4).map((s): Hostile => ({
      label: `an SQL expression ${show(s)}`,
      value: expressions([`${S}concepts/${s}/`]),
      expect: 'no5xx',
    })),
    ...NOT_A_LIST.map((v): Hostile => ({
      label: `expressions = ${show(v)}`,
      value: expressions(v),
      expect: 'refused',
    })),
    ...NOT_AN_OBJECT.map((v): Hostile => ({
      label: `the body ${show(v)}`,
      value: v,
      expect: 'refused',
    })),
    { label: 'no expressions', value: {}, expect: 'refused' },
    { label: 'an empty list', value: expressions([]), expect: 'refused' },
    {
      label: '101 expressions (over the limit)',
      value: expressions(Array.from({ length: 101 }, (_, i) => `${S}concepts/N${i}/`)),
      expect: 'refused',
    },
    { label: 'a 1 MB expression', value: expressions([hugeString()]), expect: 'refused' },
    {
      label: 'a concept of another owner',
      value: expressions([`/orgs/${tenant.victimOrg}/sources/S/concepts/A/`]),
      expect: 'no5xx',
    },
    {
      label: 'the concept into its own source',
      value: expressions([`${S}concepts/A/`]),
      expect: 'no5xx',
    },
    {
      label: 'a relative, dotted expression',
      value: expressions(['../../concepts/A/', 'concepts/A']),
      expect: 'no5xx',
    },
    ...rng.sample(hostileJson(rng), 4).map((h): Hostile => ({
      ...h,
      label: `parameters: ${h.label}`,
      value: { expressions: [`${S}concepts/B/`], parameters: h.value },
    })),
    ...rng.sample(NOT_AN_OBJECT, 2).map((v): Hostile => ({
      label: `parameters = ${show(v)}`,
      value: { expressions: [`${S}concepts/B/`], parameters: v },
      expect: 'refused',
    })),
    {
      label: 'cascadeLevels -1',
      value: { expressions: [`${S}concepts/B/`], parameters: { cascadeLevels: -1, mapTypes: "'" } },
      expect: 'no5xx',
    },
  ];
  const cases: Case[] = bodies.map((h) => ({
    family,
    method: 'POST',
    path: target,
    body: h.value,
    input: h.label,
    expect: h.expect,
  }));
  for (const p of pathIds(rng, 2)) {
    cases.push({
      family,
      method: 'POST',
      path: `/orgs/${tenant.org}/sources/${p.raw}/concepts/$clone/`,
      body: expressions([`${S}concepts/A/`]),
      input: `source = ${p.label}`,
      expect: 'refused',
    });
  }
  cases.push({
    family,
    method: 'POST',
    path: `/orgs/${tenant.victimOrg}/sources/S/concepts/$clone/`,
    body: expressions([`${S}concepts/A/`]),
    input: "into someone else's org",
    expect: 'refused',
  });
  cases.push({ family, method: 'GET', path: target, input: 'GET (POST only)', expect: 'refused' });
  cases.push(...badBodyCases(rng, { family, method: 'POST', path: target }, 3));
  cases.push(
    ...authCases(
      rng,
      tenant,
      { family, method: 'POST', path: target, body: expressions([`${S}concepts/A/`]) },
      4,
    ),
  );
  return cases;
}

function matchCases(rng: Rng, tenant: Tenant): Case[] {
  const family = '$match';
  const target = { target_repo_url: `/orgs/${tenant.org}/sources/S/` };
  const rows = (value: unknown): unknown => ({ ...target, rows: value });
  const bodies: Hostile[] = [
    ...BAD_UNICODE.map((h): Hostile => ({
      ...h,
      label: `a row name with ${h.label}`,
      value: rows([{ name: h.value }]),
    })),
    ...rng.sample(SQL, 4).map((s): Hostile => ({
      label: `a row name SQL ${show(s)}`,
      value: rows([{ name: s, id: s }]),
      expect: 'no5xx',
    })),
    ...NOT_A_LIST.map((v): Hostile => ({
      label: `rows = ${show(v)}`,
      value: rows(v),
      expect: v === null || Array.isArray(v) ? 'no5xx' : 'refused',
    })),
    ...rng.sample(NOT_A_STRING, 4).map((v): Hostile => ({
      label: `a name of ${show(v)}`,
      value: rows([{ name: v, concept_class: v }]),
      expect: 'no5xx',
    })),
    { label: 'a 1 MB name', value: rows([{ name: hugeString() }]), expect: 'no5xx' },
    {
      label: '10001 rows',
      value: rows(Array.from({ length: 10_001 }, (_, i) => ({ name: `r${i}` }))),
      expect: 'refused',
    },
    { label: 'no target', value: { rows: [{ name: 'x' }] }, expect: 'refused' },
    {
      label: 'both targets',
      value: { ...target, target_repo: { owner: 'x', source: 'y' }, rows: [{ name: 'x' }] },
      expect: 'refused',
    },
    {
      label: 'a target of SQL',
      value: { target_repo_url: "/orgs/'; --/sources/x/", rows: [{ name: 'x' }] },
      expect: 'no5xx',
    },
    {
      label: 'a target_repo of wrong types',
      value: { target_repo: { owner: 5, source: [] }, rows: [{ name: 'x' }] },
      expect: 'refused',
    },
    {
      label: 'a private target elsewhere',
      value: {
        target_repo: { owner: tenant.victimOrg, source: 'S', owner_type: 'org' },
        rows: [{ name: 'x' }],
      },
      expect: 'no5xx',
    },
    {
      label: 'a filter of hostile JSON',
      value: {
        ...target,
        rows: [{ name: 'x' }],
        filter: { concept_class: ["'"], locale: {}, 'x\u0001': 1 },
      },
      expect: 'no5xx',
    },
    {
      label: 'map_config of wrong types',
      value: {
        ...target,
        rows: [{ name: 'x' }],
        map_config: [
          { type: 'mapping-list', input_column: 'x', separator: "'", target_urls: { a: 5 } },
        ],
      },
      expect: 'refused',
    },
    { label: 'a row 40 levels deep', value: rows([deepObject(40)]), expect: 'refused' },
  ];
  const cases: Case[] = bodies.map((h) => ({
    family,
    method: 'POST',
    path: '/concepts/$match/',
    body: h.value,
    input: h.label,
    expect: h.expect,
  }));
  for (const name of ['limit', 'offset', 'page', 'numCandidates', 'kNearest']) {
    for (const v of rng.sample(BAD_LIMITS, 2)) {
      cases.push({
        family,
        method: 'POST',
        path: `/concepts/$match/?${name}=${enc(v)}`,
        body: rows([{ name: 'Malaria' }]),
        input: `${name}=${v}`,
        expect: 'no5xx',
      });
    }
  }
  cases.push({
    family,
    method: 'POST',
    path: `/concepts/$match/?encoder_model=${enc("'; --")}&semantic=true&reranker=maybe&bestMatch=%ED%A0%80`,
    body: rows([{ name: 'x' }]),
    input: 'semantic options with SQL',
    expect: 'no5xx',
  });
  cases.push(...badBodyCases(rng, { family, method: 'POST', path: '/concepts/$match/' }, 4));
  cases.push(
    ...authCases(
      rng,
      tenant,
      { family, method: 'POST', path: '/concepts/$match/', body: rows([{ name: 'x' }]) },
      4,
    ),
  );
  return cases;
}

// ---------------------------------------------------------------------------------------------
// bulk import

function bulkImportCases(rng: Rng, tenant: Tenant, garbageHost: string): Case[] {
  const family = 'bulk import';
  const path = '/importers/bulk-import/';
  const org = tenant.org;
  const raw = (contentType: string, data: string | Buffer): Case['raw'] => ({ contentType, data });
  const lines = (...items: unknown[]): string => items.map((i) => JSON.stringify(i)).join('\n');
  const cases: Case[] = [];
  const post = (input: string, body: Case['raw'], expect: Expect, suffix = ''): void => {
    cases.push({ family, method: 'POST', path: `${path}${suffix}`, raw: body, input, expect });
  };
  // Refused before anything is stored.
  post('an empty body', raw('application/json', ''), 'refused');
  post('whitespace only', raw('text/plain', '  \n\n '), 'refused');
  post('a NUL byte', raw('application/x-ndjson', '{"type": "Concept"}\n\u0000\n'), 'refused');
  post('format=xml', raw('text/plain', '{}'), 'refused', '?format=xml');
  post('format as SQL', raw('text/plain', '{}'), 'refused', `?format=${enc("'; --")}`);
  post('a queue of SQL', raw('text/plain', '{"type": "x"}'), 'refused', `${enc("q'; --")}/`);
  post(
    'a queue of 51 characters',
    raw('text/plain', '{"type": "x"}'),
    'refused',
    `${'q'.repeat(51)}/`,
  );
  post('a queue of invalid UTF-8', raw('text/plain', '{"type": "x"}'), 'refused', '%ED%A0%80/');
  post(
    'both a file and file_url',
    raw('application/json', JSON.stringify({ data: 'x', file_url: `http://${garbageHost}/lines` })),
    'refused',
  );
  post('multipart with no file', multipart({ format: 'json' }), 'refused');
  post(
    'multipart with a bad format',
    multipart({ format: "'" }, { name: 'x.json', contentType: 'application/json', data: '{}' }),
    'refused',
  );
  post(
    'multipart, two files',
    raw(
      'multipart/form-data; boundary=XyZ',
      ['a.json', 'b.json']
        .map(
          (f) =>
            `--XyZ\r\nContent-Disposition: form-data; name="file"; filename="${f}"\r\n\r\n{"type": "x"}\r\n`,
        )
        .join('') + '--XyZ--\r\n',
    ),
    'refused',
  );
  post(
    'a truncated multipart',
    raw(
      'multipart/form-data; boundary=XyZ',
      '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.json"\r\n\r\n{"type',
    ),
    'refused',
  );
  post('multipart without a boundary', raw('multipart/form-data', 'x'), 'refused');
  cases.push(
    ...authCases(
      rng,
      tenant,
      {
        family,
        method: 'POST',
        path,
        raw: raw('application/json', lines({ type: 'Concept', id: 'x' })),
      },
      5,
    ),
  );
  // Taken, then every line judged on its own: none may write beyond what it is allowed.
  const S = { owner: org, owner_type: 'Organization', source: 'S' };
  post(
    'JSON lines of wrong types',
    raw(
      'application/x-ndjson',
      lines({ type: 5 }, { type: 'Concept', id: [] }, null, [], 'x', {
        type: 'Concept',
        ...S,
        id: {},
        names: 'x',
      }),
    ),
    'no5xx',
  );
  post(
    'JSON lines with invalid Unicode',
    raw(
      'application/x-ndjson',
      lines({
        type: 'Concept',
        ...S,
        id: 'hb\ud800',
        concept_class: 'Misc',
        names: [{ name: '\udc00', locale: 'en' }],
      }),
    ),
    'no5xx',
  );
  post(
    'JSON lines with SQL everywhere',
    raw(
      'application/x-ndjson',
      lines(
        {
          type: 'Concept',
          ...S,
          id: rng.pick(SQL),
          concept_class: rng.pick(SQL),
          names: [{ name: rng.pick(SQL), locale: "'" }],
        },
        { type: 'Source', owner: "'; --", owner_type: 'Organization', id: "'" },
      ),
    ),
    'no5xx',
  );
  post(
    'lines into a foreign org',
    raw(
      'application/x-ndjson',
      lines(
        {
          type: 'Concept',
          owner: tenant.victimOrg,
          owner_type: 'Organization',
          source: 'S',
          id: 'x',
          concept_class: 'Misc',
          names: [{ name: 'x', locale: 'en' }],
        },
        { type: 'Organization', id: tenant.victimOrg, name: 'taken' },
      ),
    ),
    'no5xx',
  );
  post(
    'truncated JSON lines',
    raw('application/x-ndjson', '{"type": "Concept", "id":\n{"type'),
    'no5xx',
  );
  post(
    'a line 40 levels deep',
    raw(
      'application/x-ndjson',
      JSON.stringify({ type: 'Concept', ...S, id: 'd', extras: deepObject(40) }),
    ),
    'no5xx',
  );
  post(
    'one 1 MB line',
    raw(
      'application/x-ndjson',
      JSON.stringify({ type: 'Concept', ...S, id: 'h', concept_class: hugeString() }),
    ),
    'no5xx',
  );
  post(
    'CSV with unclosed quotes',
    raw('text/csv', 'resource_type,id,owner_id\n"Concept,x\n'),
    'no5xx',
  );
  post('CSV with SQL headers', raw('text/csv', `${enc("'")},${rng.pick(SQL)}\n1,2\n`), 'no5xx');
  post(
    'CSV of 3000 columns',
    raw('text/csv', `${Array.from({ length: 3000 }, (_, i) => `c${i}`).join(',')}\n1\n`),
    'no5xx',
  );
  post(
    'CSV with invalid UTF-8',
    raw(
      'text/csv',
      Buffer.concat([
        Buffer.from('resource_type,id\nConcept,'),
        Buffer.from([0xed, 0xa0, 0x80, 0xff]),
        Buffer.from('\n'),
      ]),
    ),
    'no5xx',
    '?format=csv',
  );
  post(
    'a UTF-16 file',
    raw('text/plain', Buffer.from('{"type": "Concept"}\n', 'utf16le')),
    'no5xx',
  );
  post(
    'a JSON wrapper with data of wrong types',
    raw('application/json', JSON.stringify({ data: [null, 5, { type: [] }] })),
    'no5xx',
  );
  post(
    'a JSON wrapper with data: {}',
    raw('application/json', JSON.stringify({ data: {} })),
    'refused',
  );
  post(
    'update_if_exists of SQL',
    raw('application/x-ndjson', lines({ type: 'x' })),
    'no5xx',
    `?update_if_exists=${enc("'")}`,
  );
  post(
    'multipart JSON lines of garbage',
    multipart(
      { update_if_exists: 'maybe' },
      {
        name: '../../etc/passwd',
        contentType: 'application/octet-stream',
        data: '{"type": "Concept", "id": "\\ud800"}\n[[[',
      },
    ),
    'no5xx',
  );
  post(
    'multipart CSV by file name',
    multipart({}, { name: `${"'; --"}.csv`, contentType: 'text/csv', data: 'a,b\n"' }),
    'no5xx',
  );
  // Status and cancel: task ids that are not ids.
  for (const v of [
    ...textQueries(rng, 2),
    { raw: '', label: 'empty', expect: 'refused' as Expect },
    {
      raw: '00000000-0000-0000-0000-000000000000',
      label: 'an unknown uuid',
      expect: 'refused' as Expect,
    },
    { raw: tenant.taskId, label: 'a task that is no import', expect: 'refused' as Expect },
  ]) {
    const expect: Expect =
      v.raw === '' || v.label.startsWith('an unknown') || v.label.startsWith('a task')
        ? 'refused'
        : 'no5xx';
    cases.push({
      family,
      method: 'GET',
      path: `${path}?task=${v.raw}`,
      input: `status task = ${v.label}`,
      expect,
    });
    cases.push({
      family,
      method: 'DELETE',
      path: `${path}?task=${v.raw}`,
      input: `cancel task = ${v.label}`,
      expect: 'refused',
    });
  }
  cases.push({
    family,
    method: 'DELETE',
    path,
    body: { task_id: ["'"] },
    input: 'cancel task_id = a list',
    expect: 'refused',
  });
  cases.push({
    family,
    method: 'DELETE',
    path,
    body: { task_id: "'; --" },
    input: 'cancel task_id = SQL',
    expect: 'refused',
  });
  return cases;
}

function fileUrlCases(tenant: Tenant, garbageHost: string): Case[] {
  const family = 'file_url';
  const port = garbageHost.split(':')[1];
  const refused: Array<[string, string]> = [
    ['file://', 'file:///etc/passwd'],
    ['file:// on the host', `file://${garbageHost}/lines`],
    ['localhost on the allowed port', `http://localhost:${port}/lines`],
    ['the database port', 'http://127.0.0.1:5432/'],
    ['an IPv6 loopback', `http://[::1]:${port}/lines`],
    ['user info before the host', `http://${garbageHost}@evil.example/lines`],
    ['a cloud metadata address', 'http://169.254.169.254/latest/meta-data/'],
    ['ftp', `ftp://${garbageHost}/lines`],
    ['data:', 'data:application/json,{"type":"Concept"}'],
    ['javascript:', 'javascript:alert(1)'],
    ['not a URL', 'not a url'],
    ['an empty string', ''],
    ['SQL', "'; DROP TABLE tasks;--"],
    ['a 100 KB URL', `http://${garbageHost}/${'a'.repeat(100_000)}`],
    ['a port out of range', 'http://127.0.0.1:99999/'],
  ];
  const garbage: Array<[string, Expect]> = [
    ['/html', 'no5xx'],
    ['/binary', 'no5xx'],
    ['/nul', 'refused'],
    ['/json-garbage', 'no5xx'],
    ['/csv-garbage', 'no5xx'],
    ['/empty', 'refused'],
    ['/500', 'refused'],
    ['/404', 'refused'],
    ['/redirect', 'refused'],
    ['/redirect-loop', 'refused'],
    ['/lying-length', 'refused'],
    ['/reset', 'refused'],
    ['/slow', 'no5xx'],
    ['/lines', 'no5xx'],
    ['/words', 'no5xx'],
    ['/%ED%A0%80?x=%00', 'no5xx'],
  ];
  const cases: Case[] = [];
  for (const [label, url] of refused) {
    cases.push({
      family,
      method: 'POST',
      path: '/importers/bulk-import/',
      body: { file_url: url },
      input: `file_url: ${label}`,
      expect: 'refused',
    });
  }
  // The URL parser canonicalizes these to the allowed host: they are taken, as it would be.
  for (const [label, url] of [
    ['a decimal IP', `http://2130706433:${port}/lines`],
    ['a trailing dot', `http://127.0.0.1.:${port}/lines`],
    ['a lone surrogate in the path', `http://${garbageHost}/\ud800`],
  ]) {
    cases.push({
      family,
      method: 'POST',
      path: '/importers/bulk-import/',
      body: { file_url: url },
      input: `file_url: the allowed host, ${label}`,
      expect: 'no5xx',
    });
  }
  cases.push({
    family,
    method: 'POST',
    path: '/importers/bulk-import/',
    body: { file_url: 5 },
    input: 'file_url: 5',
    expect: 'no5xx',
  });
  cases.push({
    family,
    method: 'POST',
    path: '/importers/bulk-import/',
    body: { file_url: [`http://${garbageHost}/lines`] },
    input: 'file_url: a list',
    expect: 'no5xx',
  });
  cases.push({
    family,
    method: 'POST',
    path: '/importers/bulk-import/',
    raw: multipart({ file_url: 'file:///etc/passwd' }),
    input: 'a multipart file_url: file://',
    expect: 'refused',
  });
  for (const [p, expect] of garbage) {
    cases.push({
      family,
      method: 'POST',
      path: '/importers/bulk-import/',
      body: { file_url: `http://${garbageHost}${p}` },
      input: `the allowed host answers ${p}`,
      expect,
    });
  }
  cases.push({
    family,
    method: 'POST',
    path: '/importers/bulk-import/',
    auth: null,
    body: { file_url: `http://${garbageHost}/lines` },
    input: 'an allowed file_url, anonymously',
    expect: 'refused',
  });
  void tenant;
  return cases;
}

// ---------------------------------------------------------------------------------------------
// exports

function exportCases(rng: Rng, tenant: Tenant, token: string): Case[] {
  const family = 'exports';
  const org = tenant.org;
  const cases: Case[] = [];
  for (const kind of ['sources/S', 'collections/C']) {
    for (const p of pathIds(rng, 4)) {
      const target = `/orgs/${org}/${kind}/${p.raw}/export/`;
      const expect: Expect = p.expect === 'refused' ? 'refused' : 'no5xx';
      cases.push({
        family,
        method: 'GET',
        path: target,
        input: `GET version = ${p.label}`,
        expect,
      });
      cases.push({
        family,
        method: 'HEAD',
        path: target,
        input: `HEAD version = ${p.label}`,
        expect,
      });
      cases.push({
        family,
        method: 'POST',
        path: target,
        input: `POST version = ${p.label}`,
        expect: 'refused',
      });
      cases.push({
        family,
        method: 'DELETE',
        path: target,
        input: `DELETE version = ${p.label}`,
        expect: 'refused',
      });
    }
    cases.push({
      family,
      method: 'POST',
      path: `/orgs/${org}/${kind}/HEAD/export/`,
      input: 'POST the HEAD version',
      expect: 'no5xx',
    });
    cases.push({
      family,
      method: 'GET',
      path: `/orgs/${org}/${kind}/v1/export/?format=${enc("'")}&limit=-1`,
      input: 'GET with odd query',
      expect: 'no5xx',
    });
    cases.push({
      family,
      method: 'PATCH',
      path: `/orgs/${org}/${kind}/v1/export/`,
      body: {},
      input: 'PATCH',
      expect: 'refused',
    });
  }
  cases.push({
    family,
    method: 'DELETE',
    path: `/orgs/${tenant.victimOrg}/sources/S/v1/export/`,
    input: "DELETE someone else's export",
    expect: 'refused',
  });
  cases.push(
    ...authCases(
      rng,
      tenant,
      { family, method: 'GET', path: `/orgs/${org}/sources/S/v1/export/` },
      3,
    ),
  );
  cases.push(
    ...authCases(
      rng,
      tenant,
      { family, method: 'DELETE', path: `/orgs/${org}/sources/S/v1/export/` },
      3,
    ),
  );
  // A token names one file once: anything else is a 404 (an upper-case one too, unless it is one).
  const tokens: Array<{ raw: string; label: string }> = [
    ...pathIds(rng, 6),
    { raw: token.slice(0, -1), label: 'the token less its last character' },
    { raw: `${token}x`, label: 'the token with one more character' },
    ...(token.toUpperCase() === token
      ? []
      : [{ raw: token.toUpperCase(), label: 'the token in upper case' }]),
    { raw: enc(`${token}'`), label: 'the token with a quote' },
    { raw: `${token}%00`, label: 'the token with a NUL' },
  ];
  for (const tk of tokens) {
    cases.push({
      family,
      method: 'GET',
      path: `/exports/${tk.raw}/`,
      auth: null,
      input: `download token = ${tk.label}`,
      expect: 'refused',
    });
  }
  cases.push({
    family,
    method: 'HEAD',
    path: `/exports/${token}/`,
    auth: null,
    input: 'HEAD a download address',
    expect: 'refused',
  });
  cases.push({
    family,
    method: 'POST',
    path: `/exports/${token}/`,
    auth: null,
    body: {},
    input: 'POST a download address',
    expect: 'refused',
  });
  return cases;
}

// ---------------------------------------------------------------------------------------------
// events, pins, follows

function webClientCases(rng: Rng, tenant: Tenant): Case[] {
  const org = tenant.org;
  const user = tenant.owner.username;
  const cases: Case[] = [];
  const events = 'events';
  for (const base of ['/events/', `/users/${user}/events/`]) {
    for (const v of rng.sample(BAD_LIMITS, 3))
      cases.push({
        family: events,
        method: 'GET',
        path: `${base}?limit=${enc(v)}`,
        input: `limit=${v}`,
        expect: 'no5xx',
      });
    for (const v of textQueries(rng, 2))
      cases.push({
        family: events,
        method: 'GET',
        path: `${base}?scopes=${v.raw}&q=${v.raw}`,
        input: `scopes and q = ${v.label}`,
        expect: v.expect,
      });
    cases.push({
      family: events,
      method: 'GET',
      path: `${base}?scopes=${enc(Array.from({ length: 500 }, () => 'following').join(','))}`,
      input: '500 scopes',
      expect: 'no5xx',
    });
    cases.push({
      family: events,
      method: 'GET',
      path: `${base}?page=1e99&updatedSince=${enc("'")}`,
      input: 'paging and a date of garbage',
      expect: 'no5xx',
    });
  }
  for (const p of pathIds(rng, 3))
    cases.push({
      family: events,
      method: 'GET',
      path: `/users/${p.raw}/events/`,
      input: `user = ${p.label}`,
      expect: p.expect,
    });
  cases.push({
    family: events,
    method: 'POST',
    path: '/events/',
    body: {},
    input: 'POST (GET only)',
    expect: 'refused',
  });
  cases.push(...authCases(rng, tenant, { family: events, method: 'GET', path: '/events/' }, 3));

  const pins = 'pins';
  const pinBodies: Hostile[] = [
    ...rng.sample(NOT_A_NUMBER, 5).map((v): Hostile => ({
      label: `resource_id = ${show(v)}`,
      value: { resource_type: 'Source', resource_id: v },
      expect: 'no5xx',
    })),
    ...rng.sample(NOT_A_STRING, 3).map((v): Hostile => ({
      label: `resource_type = ${show(v)}`,
      value: { resource_type: v, resource_id: 1 },
      expect: 'refused',
    })),
    ...BAD_UNICODE.slice(0, 2).map((h): Hostile => ({
      ...h,
      label: `resource_type with ${h.label}`,
      value: { resource_type: h.value, resource_id: 1 },
    })),
    {
      label: 'resource_id of SQL',
      value: { resource_type: 'Source', resource_id: '1; DROP TABLE pins' },
      expect: 'refused',
    },
    {
      label: 'resource_id beyond bigint',
      value: { resource_type: 'Source', resource_id: '99999999999999999999' },
      expect: 'no5xx',
    },
    {
      label: 'resource_id 0',
      value: { resource_type: 'Organization', resource_id: 0 },
      expect: 'refused',
    },
    {
      label: 'an unknown resource',
      value: { resource_type: 'Collection', resource_id: 2 ** 52 },
      expect: 'refused',
    },
    {
      label: 'resource_type Concept',
      value: { resource_type: 'Concept', resource_id: 1 },
      expect: 'refused',
    },
    ...NOT_AN_OBJECT.slice(0, 4).map((v): Hostile => ({
      label: `the body ${show(v)}`,
      value: v,
      expect: 'refused',
    })),
  ];
  // Every body on the org's pins; the user's two spellings share one service path: a few each.
  for (const base of [`/orgs/${org}/pins/`, '/user/pins/', `/users/${user}/pins/`]) {
    const bodies = base.startsWith('/orgs/') ? pinBodies : rng.sample(pinBodies, 6);
    for (const h of bodies)
      cases.push({
        family: pins,
        method: 'POST',
        path: base,
        body: h.value,
        input: h.label,
        expect: h.expect,
      });
    cases.push(...badBodyCases(rng, { family: pins, method: 'POST', path: base }, 2));
    cases.push({
      family: pins,
      method: 'GET',
      path: `${base}?limit=abc&q=${enc("'")}`,
      input: 'a list with odd query',
      expect: 'no5xx',
    });
    for (const v of NOT_A_NUMBER.slice(0, 5))
      cases.push({
        family: pins,
        method: 'PUT',
        path: `${base}1/`,
        body: { order: v },
        input: `move pin 1 to ${show(v)}`,
        expect: 'refused',
      });
    for (const p of pathIds(rng, 3)) {
      cases.push({
        family: pins,
        method: 'PUT',
        path: `${base}${p.raw}/`,
        body: { order: 0 },
        input: `move pin = ${p.label}`,
        expect: 'refused',
      });
      cases.push({
        family: pins,
        method: 'DELETE',
        path: `${base}${p.raw}/`,
        input: `delete pin = ${p.label}`,
        expect: 'refused',
      });
    }
  }
  cases.push({
    family: pins,
    method: 'POST',
    path: `/orgs/${tenant.victimOrg}/pins/`,
    body: { resource_type: 'Organization', resource_id: 1 },
    input: "a pin in someone else's org",
    expect: 'refused',
  });
  cases.push({
    family: pins,
    method: 'POST',
    path: `/users/${tenant.victim.username}/pins/`,
    body: { resource_type: 'Organization', resource_id: 1 },
    input: 'a pin for someone else',
    expect: 'refused',
  });
  cases.push(
    ...authCases(
      rng,
      tenant,
      {
        family: pins,
        method: 'POST',
        path: '/user/pins/',
        body: { resource_type: 'Source', resource_id: 1 },
      },
      4,
    ),
  );

  const follows = 'follows';
  const followBodies: Hostile[] = [
    ...BAD_UNICODE.map((h): Hostile => ({
      ...h,
      label: `follow with ${h.label}`,
      value: { follow: h.value },
    })),
    ...rng.sample(SQL, 4).map((s): Hostile => ({
      label: `follow SQL ${show(s)}`,
      value: { follow: s },
      expect: 'refused',
    })),
    ...rng.sample(NOT_A_STRING, 4).map((v): Hostile => ({
      label: `follow = ${show(v)}`,
      value: { follow: v },
      expect: 'refused',
    })),
    {
      label: 'follow a 1001-character URL',
      value: { follow: `/users/${'x'.repeat(995)}/` },
      expect: 'refused',
    },
    { label: 'follow oneself', value: { follow: `/users/${user}/` }, expect: 'no5xx' },
    {
      label: 'follow a concept',
      value: { follow: `/orgs/${org}/sources/S/concepts/A/` },
      expect: 'no5xx',
    },
    {
      label: 'follow a URL elsewhere',
      value: { follow: 'http://evil.example/users/x/' },
      expect: 'no5xx',
    },
    { label: 'follow a dotted path', value: { follow: `/users/../orgs/${org}/` }, expect: 'no5xx' },
    ...NOT_AN_OBJECT.slice(0, 4).map((v): Hostile => ({
      label: `the body ${show(v)}`,
      value: v,
      expect: 'refused',
    })),
  ];
  for (const base of ['/user/following/', `/users/${user}/following/`]) {
    for (const h of followBodies)
      cases.push({
        family: follows,
        method: 'POST',
        path: base,
        body: h.value,
        input: h.label,
        expect: h.expect,
      });
    cases.push(...badBodyCases(rng, { family: follows, method: 'POST', path: base }, 2));
    for (const p of pathIds(rng, 3))
      cases.push({
        family: follows,
        method: 'DELETE',
        path: `${base}${p.raw}/`,
        input: `unfollow = ${p.label}`,
        expect: 'refused',
      });
    cases.push({
      family: follows,
      method: 'GET',
      path: `${base}?limit=-1`,
      input: 'a list with a bad limit',
      expect: 'no5xx',
    });
  }
  cases.push({
    family: follows,
    method: 'POST',
    path: `/users/${tenant.victim.username}/following/`,
    body: { follow: `/orgs/${org}/` },
    input: 'follow on behalf of someone else',
    expect: 'refused',
  });
  cases.push(
    ...authCases(
      rng,
      tenant,
      {
        family: follows,
        method: 'POST',
        path: '/user/following/',
        body: { follow: `/orgs/${org}/` },
      },
      4,
    ),
  );
  return cases;
}

// ---------------------------------------------------------------------------------------------
// single sign-on

function ssoCases(rng: Rng): Case[] {
  const family = 'sso';
  const cases: Case[] = [];
  const login = (query: string, input: string, expect: Expect): void => {
    cases.push({
      family,
      method: 'GET',
      path: `/users/login/?${query}`,
      auth: null,
      input,
      expect,
    });
  };
  const base = `client_id=${CLIENT_ID}&redirect_uri=${enc(REDIRECT_URI)}`;
  for (const [label, uri, expect] of [
    ['javascript:', 'javascript:alert(1)', 'refused'],
    ['file://', 'file:///etc/passwd', 'refused'],
    ['data:', 'data:text/html,x', 'refused'],
    ['not a URL', 'nope', 'refused'],
    ['an empty string', '', 'refused'],
    ['SQL', "http://x/'; --", 'no5xx'],
    ['a 20 KB URL', `http://x/${'a'.repeat(20_000)}`, 'no5xx'],
    ['CRLF injection', 'http://x/\r\nSet-Cookie: a=b', 'refused'],
    ['a lone surrogate', 'http://x/%ED%A0%80', 'no5xx'],
  ] as Array<[string, string, Expect]>) {
    login(
      `client_id=${CLIENT_ID}&redirect_uri=${label === 'a lone surrogate' ? uri : enc(uri)}`,
      `redirect_uri: ${label}`,
      expect,
    );
  }
  for (const name of ['state', 'nonce', 'code_challenge', 'code_challenge_method', 'client_id']) {
    for (const v of textQueries(rng, 1))
      login(
        `${base}&${name}=${v.raw}`,
        `${name} = ${v.label}`,
        name === 'client_id' ? 'refused' : v.expect,
      );
    login(
      `${base}&${name}=${enc('a\r\nLocation: http://evil.example/')}`,
      `${name} with CRLF`,
      name === 'client_id' ? 'refused' : 'no5xx',
    );
  }
  login(
    `${base}&state=a&state=b&redirect_uri=http://evil.example/`,
    'repeated parameters',
    'no5xx',
  );
  const exchange = (body: unknown, input: string, expect: Expect): void => {
    cases.push({
      family,
      method: 'POST',
      path: '/users/oidc/code-exchange/',
      auth: null,
      body,
      input,
      expect,
    });
  };
  const valid = { redirect_uri: REDIRECT_URI, client_id: CLIENT_ID };
  for (const s of rng.sample(SQL, 3))
    exchange({ ...valid, code: s }, `code SQL ${show(s)}`, 'refused');
  for (const h of BAD_UNICODE)
    exchange({ ...valid, code: h.value }, `code with ${h.label}`, 'refused');
  for (const v of rng.sample(NOT_A_STRING, 4))
    exchange({ ...valid, code: v }, `code = ${show(v)}`, 'refused');
  exchange({ ...valid, code: hugeString(64 * 1024) }, 'a 64 KB code', 'refused');
  exchange({ ...valid, code: 'abc', code_verifier: "'; --" }, 'a code verifier of SQL', 'refused');
  exchange(
    { code: 'abc', redirect_uri: 'javascript:alert(1)', client_id: CLIENT_ID },
    'redirect_uri javascript:',
    'refused',
  );
  exchange({ code: 'abc', ...valid, client_id: 'someone-else' }, 'another client', 'refused');
  for (const v of NOT_AN_OBJECT.slice(0, 4)) exchange(v, `the body ${show(v)}`, 'refused');
  cases.push(
    ...badBodyCases(
      rng,
      { family, method: 'POST', path: '/users/oidc/code-exchange/', auth: null },
      3,
    ),
  );
  for (const [label, q] of [
    ['a forged id_token_hint', `id_token_hint=${enc('eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9.')}`],
    ['an id_token_hint of SQL', `id_token_hint=${enc("'; --")}`],
    [
      'post_logout_redirect_uri javascript:',
      `post_logout_redirect_uri=${enc('javascript:alert(1)')}`,
    ],
    ['post_logout_redirect_uri CRLF', `post_logout_redirect_uri=${enc('http://x/\r\nX: y')}`],
    ['state invalid UTF-8', 'state=%ED%A0%80'],
    ['a 20 KB state', `state=${'s'.repeat(20_000)}`],
  ]) {
    cases.push({
      family,
      method: 'GET',
      path: `/users/logout/?${q}`,
      auth: null,
      input: `logout ${label}`,
      expect: label.includes('javascript') || label.includes('CRLF') ? 'refused' : 'no5xx',
    });
  }
  // The provider's access tokens as credentials: forged ones must be refused.
  for (const [label, token] of [
    ['an alg none JWT', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJvY2xhZG1pbiJ9.'],
    ['a JWT of garbage parts', 'a.b.c'],
    ['a JWT with SQL', `${Buffer.from("'; --").toString('base64url')}.x.y`],
    ['an opaque token', rng.word(64)],
    ['a 8 KB token', 'x'.repeat(8000)],
  ]) {
    cases.push({
      family,
      method: 'GET',
      path: '/user/',
      auth: `Bearer ${token}`,
      input: `Bearer ${label}`,
      expect: 'refused',
    });
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------

let t: TestApp;
let tenant: Tenant;
let server: Server;
let provider: TestProvider;
let garbage: Awaited<ReturnType<typeof garbageServer>>;
let dataDir: string;
let families: Map<string, Case[]>;
const all: Outcome[] = [];

/** Asks for the export of S v1 (made already or now), waits for it, and answers its download token. */
async function downloadToken(): Promise<string> {
  const url = `${tenant.source}v1/export/`;
  const auth = { Authorization: tenant.owner.auth };
  const asked = await request(t.app).post(url).set(auth);
  if (asked.status !== 200 && asked.status !== 202)
    throw new Error(`export setup: ${asked.status}`);
  await settleTasks(t, tenant);
  const res = await request(t.app).head(url).set(auth);
  const address = String(res.headers.exporturl ?? '');
  const token = /\/exports\/([^/]+)\/$/.exec(address)?.[1];
  if (!token) throw new Error(`export setup: ${res.status} ${address}`);
  return token;
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostile-'));
  [provider, garbage] = await Promise.all([startProvider(), garbageServer()]);
  t = await createTestApp({
    ...provider.env,
    DATA_DIR: dataDir,
    IMPORT_FILE_URL_HOSTS: garbage.host,
    MATCH_REQUIRES_APPROVAL: 'false',
  });
  tenant = await buildTenant(t, `hostile${SEED}y${Date.now().toString(36)}`);
  server = await listen(t);
  const token = await downloadToken();
  const rng = new Rng(SEED ^ 0x5f5f);
  let counter = 0;
  const n = (): number => (counter += 1);
  families = new Map<string, Case[]>();
  for (const c of [
    ...fhirReads(rng, tenant),
    ...fhirOperations(rng, tenant),
    ...fhirWrites(rng, tenant, n),
    ...cascadeCases(rng, tenant),
    ...cloneCases(rng, tenant),
    ...matchCases(rng, tenant),
    ...bulkImportCases(rng, tenant, garbage.host),
    ...fileUrlCases(tenant, garbage.host),
    ...exportCases(rng, tenant, token),
    ...webClientCases(rng, tenant),
    ...ssoCases(rng),
  ]) {
    if (!families.has(c.family)) families.set(c.family, []);
    families.get(c.family)!.push(c);
  }
}, 60_000);

afterAll(async () => {
  console.log(`hostile requests per new surface (seed ${SEED}): ${JSON.stringify(tally(all))}`);
  await server?.close();
  await t?.close();
  await garbage?.close();
  await provider?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

const FAMILIES = [
  'fhir reads',
  'fhir operations',
  'fhir writes',
  '$cascade',
  '$clone',
  '$match',
  'bulk import',
  'file_url',
  'exports',
  'events',
  'pins',
  'follows',
  'sso',
];

/** GETs that may write: a ready export's GET issues a download address. */
const writingRead = (c: Case): boolean => c.method !== 'GET' || c.family === 'exports';

describe('hostile input on the newer surfaces never reaches a 500, never hangs, and a refused request writes nothing', () => {
  it('every family is covered', () => {
    expect([...families.keys()].sort()).toEqual([...FAMILIES].sort());
  });

  it.each(FAMILIES)(
    '%s',
    async (family) => {
      const cases = families.get(family) ?? [];
      const reads = cases.filter((c) => !writingRead(c));
      const writes = cases
        .filter(writingRead)
        .sort((a, b) => Number(b.expect === 'refused') - Number(a.expect === 'refused'));
      const defaultAuth = tenant.owner.auth;
      const failures: string[] = [];
      const identities = async (): Promise<number> =>
        (
          await t.dataSource.query<Array<{ n: number }>>(
            'SELECT count(*)::int AS n FROM user_identities',
          )
        )[0].n;
      const known = await identities();

      const before = await fingerprint(t, tenant);
      const read = await runCases(server, reads, { defaultAuth });
      const after = await fingerprint(t, tenant);
      failures.push(...read.failures);
      const changed = Object.keys(after).filter((k) => after[k] !== before[k]);
      if (changed.length > 0)
        failures.push(`GET requests of ${family} changed rows in ${changed.join(', ')}`);

      const written = await runCases(server, writes, {
        defaultAuth,
        fingerprint: () => fingerprint(t, tenant),
      });
      failures.push(...written.failures);
      // No hostile sign-in may make or link a user, whoever it would be.
      if ((await identities()) !== known) failures.push(`${family} linked a sign-in identity`);
      all.push(...read.outcomes, ...written.outcomes);
      expect(report(`${family} (${cases.length} requests)`, failures)).toBe('');
    },
    120_000,
  );

  it('leaves the database consistent', async () => {
    await settleTasks(t, tenant);
    expect(await brokenInvariants(t, tenant)).toEqual([]);
    for (const target of [tenant.source, tenant.collection, `${tenant.source}concepts/A/`]) {
      const o = await send(
        server,
        { family: 'check', method: 'GET', path: target, input: 'check', expect: 'no5xx' },
        tenant.owner.auth,
      );
      expect(`${target} ${o.status}`).toBe(`${target} 200`);
    }
  });
});
