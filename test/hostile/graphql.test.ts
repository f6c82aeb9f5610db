import fs from 'node:fs';
import path from 'node:path';
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
} from 'graphql';
import { createTestApp, type TestApp } from '../factories';
import {
  BAD_BODIES,
  BAD_UNICODE,
  CONTROL,
  ODD_TEXT,
  Rng,
  SEED,
  SQL,
  badAuthorizations,
  hostileJson,
  hugeString,
  show,
  type Expect,
  type Hostile,
} from './generator';
import {
  brokenInvariants,
  buildTenant,
  fingerprint,
  listen,
  report,
  runCases,
  tally,
  type Case,
  type Outcome,
  type Server,
  type Tenant,
} from './harness';

/**
 * Hostile input on every GraphQL mutation (issue 9, part 6), read from the committed SDL: each
 * argument and input field in turn gets wrong types, invalid Unicode, control characters, SQL,
 * huge and deeply nested values; plus hostile documents, variables, batches, credentials and
 * content types on `/graphql`. No 5xx or INTERNAL_SERVER_ERROR, no hang, no error message
 * echoing a huge input, no cost "Infinity", and a refused mutation writes nothing.
 */

const schema = buildSchema(
  fs.readFileSync(path.join(__dirname, '../../schema/schema.graphql'), 'utf8'),
);
const MUTATIONS = Object.values(schema.getMutationType()!.getFields());

/** Leaf names where a control character can only be a mistake (ids, names, classes, types). */
const IDENT = /^(id|username|name|mnemonic|conceptClass|datatype|mapType|nameType|locale|role)$/;

/** Which family a mutation belongs to (for the per-family tests and the fingerprint). */
function familyOf(name: string): string {
  if (/Concepts?$|Concept(Name|Description)$/.test(name)) return 'concepts';
  if (/Mapping$/.test(name)) return 'mappings';
  if (/Version$|Export$/.test(name)) return 'versions';
  // Extras and the summary, by URL: a source's in the attacks (any resource's in use).
  if (/(Source|Collection)$|^(setExtra|deleteExtra|refreshSummary)$/.test(name))
    return 'repositories';
  if (/References|Expansion/.test(name)) return 'collection contents';
  if (/UrlRegistry/.test(name)) return 'url-registry';
  if (/Org$|Member$/.test(name)) return 'orgs';
  if (/User$|^login$|^signup$|^exchangeOidcCode$|^verifyEmail$/.test(name)) return 'users';
  if (/FhirResource$/.test(name)) return 'fhir resources';
  if (/BulkImport$/.test(name)) return 'bulk imports';
  if (/^(pin|movePin|unpin|follow|unfollow|apiToken)$/.test(name)) return 'web client';
  return 'other mutations';
}

/** A valid starting point for every argument, so that one attacked value is what is wrong. */
function baseline(tenant: Tenant, field: string, n: number): Record<string, unknown> {
  const m = tenant.marker;
  const src = tenant.source;
  const col = tenant.collection;
  const owner = `/orgs/${tenant.org}/`;
  const concept = `${src}concepts/A/`;
  const mapping = `${src}mappings/M1/`;
  const table: Record<string, Record<string, unknown>> = {
    login: { username: tenant.owner.username, password: tenant.owner.password },
    exchangeOidcCode: { code: 'a-code', redirectUri: 'http://127.0.0.1:4002/callback' },
    signup: {
      input: {
        username: `${m}gs${n}`,
        name: 'U',
        email: `${m}gs${n}@example.org`,
        password: 'password-123',
      },
    },
    createUser: {
      input: {
        username: `${m}gu${n}`,
        name: 'U',
        email: `${m}gu${n}@example.org`,
        password: 'password-123',
      },
    },
    updateUser: { username: tenant.owner.username, input: {} },
    deactivateUser: { username: tenant.victim.username },
    reactivateUser: { username: tenant.victim.username },
    createOrg: { input: { id: `${m}go${n}`, name: 'O' } },
    updateOrg: { id: tenant.org, input: {} },
    deleteOrg: { id: tenant.victimOrg },
    addMember: { org: tenant.org, username: tenant.victim.username, role: 'member' },
    removeMember: { org: tenant.org, username: tenant.victim.username },
    createSource: { owner, input: { id: `gs${n}`, name: 'S' } },
    updateSource: { url: src, input: {} },
    deleteSource: { url: src },
    createCollection: { owner, input: { id: `gc${n}`, name: 'C' } },
    updateCollection: { url: col, input: {} },
    deleteCollection: { url: col },
    createSourceVersion: { url: src, input: { id: `gv${n}` } },
    updateSourceVersion: { url: `${src}v1/`, input: {} },
    deleteSourceVersion: { url: `${src}v1/` },
    requestExport: { url: `${src}v1/` },
    deleteExport: { url: `${src}v1/` },
    createCollectionVersion: { url: col, input: { id: `gv${n}` } },
    updateCollectionVersion: { url: `${col}v1/`, input: {} },
    deleteCollectionVersion: { url: `${col}v1/` },
    createConcept: {
      source: src,
      input: { id: `gc${n}`, conceptClass: 'Misc', names: [{ name: `N${n}`, locale: 'en' }] },
    },
    updateConcept: { url: concept, input: {}, replace: false },
    retireConcept: { url: `${src}concepts/R/` },
    reactivateConcept: { url: `${src}concepts/R/` },
    cloneConcepts: { destination: src, expressions: [concept], parameters: { cascadeLevels: 0 } },
    createMapping: {
      source: src,
      input: {
        id: `gm${n}`,
        mapType: 'SAME-AS',
        fromConceptUrl: concept,
        toSourceUrl: '/orgs/elsewhere/sources/Z/',
        toConceptCode: `Z${n}`,
      },
    },
    updateMapping: { url: mapping, input: {} },
    retireMapping: { url: mapping },
    reactivateMapping: { url: mapping },
    addReferences: { collection: col, references: [`${src}concepts/E/`] },
    removeReferences: {
      collection: col,
      all: false,
      expressions: ['/orgs/none/sources/none/concepts/none/'],
    },
    createExpansion: { collection: `${col}v1/`, mnemonic: `gx${n}`, parameters: {} },
    deleteExpansion: { collection: `${col}v1/`, mnemonic: 'e1' },
    createUrlRegistryEntry: { owner, input: { url: `http://example.org/${m}/g${n}` } },
    updateUrlRegistryEntry: { owner, id: tenant.entryId, input: {} },
    deleteUrlRegistryEntry: { owner, id: tenant.entryId },
    createFhirResource: {
      type: 'CodeSystem',
      owner,
      resource: {
        resourceType: 'CodeSystem',
        id: `gf${n}`,
        url: `http://example.org/${m}/f${n}`,
        concept: [{ code: 'a', display: 'A' }],
      },
    },
    updateFhirResource: {
      type: 'CodeSystem',
      owner,
      id: 'S',
      resource: {
        resourceType: 'CodeSystem',
        url: `http://example.org/${m}/S`,
        content: 'fragment',
        concept: [{ code: `F${n}`, display: 'F' }],
      },
    },
    deleteFhirResource: { type: 'CodeSystem', owner, id: 'S' },
    // An accepted import of lines that name nothing real writes no content.
    startBulkImport: { content: '{"type": "Nothing"}', format: 'json' },
    cancelBulkImport: { taskId: '00000000-0000-4000-8000-000000000000' },
    pin: { owner, resourceType: 'Source', resourceId: '1' },
    movePin: { owner, id: '1', order: 0 },
    unpin: { owner, id: '1' },
    follow: { url: src },
    unfollow: { id: '1' },
    apiToken: {},
  };
  return structuredClone(table[field] ?? {});
}

/** Whose credentials a mutation runs with: the tenant's owner unless it needs another. */
function authFor(t: TestApp, field: string): string | null | undefined {
  if (['createUser', 'deactivateUser', 'reactivateUser'].includes(field)) return t.admin;
  if (['login', 'signup', 'exchangeOidcCode'].includes(field)) return null;
  return undefined;
}

/** A minimal value of an input type, for a list element or object the baseline lacks. */
function minimal(type: GraphQLInputType): unknown {
  const named = getNamedType(type);
  if (isListType(isNonNullType(type) ? type.ofType : type)) return [];
  if (isEnumType(named)) return named.getValues()[0].value;
  if (isInputObjectType(named)) {
    const out: Record<string, unknown> = {};
    for (const f of Object.values(named.getFields())) {
      if (isNonNullType(f.type) && f.defaultValue === undefined) out[f.name] = minimal(f.type);
    }
    return out;
  }
  switch (named.name) {
    case 'Boolean':
      return false;
    case 'Int':
    case 'Float':
      return 1;
    case 'JSON':
    case 'JSONObject':
      return {};
    default:
      return 'x';
  }
}

/** An attackable place: a path into the variables and its type. */
interface Leaf {
  path: Array<string | number>;
  type: GraphQLInputType;
}

function leavesOf(arg: GraphQLArgument): Leaf[] {
  const out: Leaf[] = [];
  const walk = (at: Array<string | number>, type: GraphQLInputType, depth: number): void => {
    out.push({ path: at, type });
    if (depth > 2) return;
    const inner = isNonNullType(type) ? type.ofType : type;
    if (isListType(inner)) {
      const element = inner.ofType;
      if (isInputObjectType(getNamedType(element))) walk([...at, 0], element, depth + 1);
      return;
    }
    if (isInputObjectType(inner)) {
      for (const f of Object.values(inner.getFields())) walk([...at, f.name], f.type, depth + 1);
    }
  };
  walk([arg.name], arg.type, 0);
  return out;
}

/** Sets `value` at `at`, creating what the baseline lacks on the way. */
function setAt(
  root: Record<string, unknown>,
  at: Array<string | number>,
  value: unknown,
  types: GraphQLInputType[],
): void {
  let node: Record<string | number, unknown> = root;
  for (let i = 0; i < at.length - 1; i += 1) {
    const key = at[i];
    let next = node[key];
    if (next === undefined || next === null || typeof next !== 'object') {
      next = typeof at[i + 1] === 'number' ? [minimal(types[i + 1])] : minimal(types[i]);
      if (typeof at[i + 1] === 'number' && Array.isArray(next) && next.length === 0) {
        next.push(minimal(types[i + 1]));
      }
      node[key] = next;
    }
    if (Array.isArray(next) && next.length === 0) next.push(minimal(types[i + 1]));
    node = next as Record<string | number, unknown>;
  }
  node[at[at.length - 1]] = value;
}

/** The types along a leaf's path (for building what the baseline lacks). */
function typesAlong(arg: GraphQLArgument, at: Array<string | number>): GraphQLInputType[] {
  const types: GraphQLInputType[] = [arg.type];
  let type: GraphQLInputType = arg.type;
  for (const key of at.slice(1)) {
    const inner = isNonNullType(type) ? type.ofType : type;
    if (typeof key === 'number' && isListType(inner)) type = inner.ofType;
    else {
      const named = getNamedType(type);
      if (!isInputObjectType(named)) break;
      type = named.getFields()[String(key)].type;
    }
    types.push(type);
  }
  return types;
}

function sqlValue(rng: Rng): Hostile {
  const value = rng.pick(SQL);
  return { label: `SQL ${show(value)}`, value, expect: 'no5xx' };
}

function oddValue(rng: Rng): Hostile {
  const value = rng.pick(ODD_TEXT);
  return { label: `odd text ${show(value, 20)}`, value, expect: 'no5xx' };
}

/** The hostile values for a leaf of this type. */
function valuesFor(rng: Rng, leaf: Leaf): Hostile[] {
  const named = getNamedType(leaf.type);
  const inner = isNonNullType(leaf.type) ? leaf.type.ofType : leaf.type;
  const name = String(leaf.path[leaf.path.length - 1]);
  const wrong = (values: unknown[], k: number): Hostile[] =>
    rng
      .sample(values, k)
      .map((value): Hostile => ({ label: show(value, 40), value, expect: 'no5xx' }));
  if (isListType(inner)) {
    return [
      ...wrong(['x', [null], [1], {}, null], 2),
      {
        label: '2000 items',
        value: Array.from({ length: 2000 }, () => minimal(inner.ofType)),
        expect: 'no5xx',
      },
    ];
  }
  if (isInputObjectType(named)) return wrong(['str', [], null, { unknownField: 1 }, 5], 2);
  if (isEnumType(named)) {
    return [
      { label: 'an unknown value', value: 'nope', expect: 'refused' },
      { label: 'SQL', value: rng.pick(SQL), expect: 'refused' },
      ...wrong([1, null, [], named.getValues()[0].name.toUpperCase()], 1),
    ];
  }
  if (!isScalarType(named)) return [];
  switch (named.name) {
    case 'Boolean':
      return wrong(['true', 1, {}, null, 'yes'], 2);
    case 'Int':
      return wrong([1e99, 2 ** 31, 1.5, 'abc', -1, null], 3);
    case 'Float':
      return wrong(['abc', 1e308, {}, -0, null], 2);
    case 'JSON':
    case 'JSONObject':
      return [...rng.sample(hostileJson(rng), 4), ...wrong(['str', 1, [], null], 1)];
    default:
      return [
        ...wrong([1, true, [], {}, null, 1.5], 1),
        rng.pick(BAD_UNICODE),
        {
          label: 'a control character',
          value: rng.pick(CONTROL),
          expect: IDENT.test(name) ? 'refused' : 'no5xx',
        },
        rng.next() < 0.5 ? oddValue(rng) : sqlValue(rng),
      ];
  }
}

function documentOf(field: GraphQLField<unknown, unknown>): string {
  const vars = field.args.map((a) => `$${a.name}: ${a.type.toString()}`).join(', ');
  const args = field.args.map((a) => `${a.name}: $${a.name}`).join(', ');
  const returned = getNamedType(field.type);
  const selection = isScalarType(returned) || isEnumType(returned) ? '' : ' { __typename }';
  return `mutation Hostile${vars ? `(${vars})` : ''} { ${field.name}${args ? `(${args})` : ''}${selection} }`;
}

function mutationCases(rng: Rng, t: TestApp, tenant: Tenant): Case[] {
  let n = 0;
  const cases: Case[] = [];
  for (const field of MUTATIONS) {
    const query = documentOf(field);
    const family = familyOf(field.name);
    const auth = authFor(t, field.name);
    const add = (variables: unknown, input: string, expect: Expect): void => {
      cases.push({
        family,
        method: 'POST',
        path: '/graphql',
        body: { query, variables },
        auth,
        input: `${field.name}: ${input}`,
        expect,
        graphql: true,
      });
    };
    let huge = false;
    for (const arg of field.args) {
      for (const leaf of leavesOf(arg)) {
        const types = typesAlong(arg, leaf.path);
        for (const h of valuesFor(rng, leaf)) {
          n += 1;
          const variables = baseline(tenant, field.name, n);
          setAt(variables, leaf.path, h.value, types);
          add(variables, `$${leaf.path.join('.')} = ${h.label}`, h.expect);
        }
        const named = getNamedType(leaf.type);
        if (!huge && isScalarType(named) && ['String', 'ID'].includes(named.name)) {
          huge = true;
          n += 1;
          const variables = baseline(tenant, field.name, n);
          setAt(variables, leaf.path, hugeString(), types);
          add(variables, `$${leaf.path.join('.')} = a 1 MB string`, 'no5xx');
        }
        if (isScalarType(named) && ['Int', 'Boolean'].includes(named.name)) {
          // A coercion error quotes the value it could not take: never a megabyte of it.
          n += 1;
          const variables = baseline(tenant, field.name, n);
          setAt(variables, leaf.path, hugeString(), types);
          add(variables, `$${leaf.path.join('.')} (${named.name}) = a 1 MB string`, 'refused');
        }
      }
    }
    add('not an object', 'variables as a string', 'refused');
    add([baseline(tenant, field.name, (n += 1))], 'variables as a list', 'refused');
  }
  return cases;
}

/** Hostile documents and transports on `/graphql` itself. */
function protocolCases(rng: Rng, tenant: Tenant): Case[] {
  const family = 'graphql protocol';
  const big = hugeString();
  const post = (body: unknown, input: string, expect: Expect = 'refused'): Case => ({
    family,
    method: 'POST',
    path: '/graphql',
    body,
    input,
    expect,
    graphql: true,
  });
  const deep = (levels: number): string => {
    let inner = 'username';
    for (let i = 0; i < levels; i += 1) inner = `orgs { items { members { items { ${inner} } } } }`;
    return `{ me { ${inner} } }`;
  };
  let ofType = 'name';
  for (let i = 0; i < 60; i += 1) ofType = `ofType { ${ofType} }`;
  const cases: Case[] = [
    post({ query: 123 }, 'query = 123'),
    post({ query: [] }, 'query = []'),
    post({ query: { a: 1 } }, 'query = {}'),
    post({}, 'no query'),
    post({ query: '' }, 'an empty query'),
    post({ query: 'mutation {' }, 'a syntax error'),
    post({ query: '{ me { username } }', variables: 'x' }, 'variables = "x"'),
    post({ query: '{ me { username } }', operationName: 5 }, 'operationName = 5'),
    post({ query: '{ me { username } }', operationName: 'Nope' }, 'an unknown operationName'),
    post(
      { query: 'query A { me { username } } query B { me { name } }' },
      'two operations, none named',
    ),
    post([{ query: '{ me { username } }' }, { query: '{ me { name } }' }], 'a batch', 'no5xx'),
    post(
      Array.from({ length: 1000 }, () => ({ query: '{ me { username } }' })),
      'a batch of 1000',
      'no5xx',
    ),
    post({ query: `{ user(username: "${big}") { username } }` }, 'a 1 MB string literal', 'no5xx'),
    post({ query: `{ users(limit: "${big}") { totalCount } }` }, 'a 1 MB literal for an Int'),
    post(
      { query: 'query($l: Int) { users(limit: $l) { totalCount } }', variables: { l: big } },
      'a 1 MB variable for an Int',
    ),
    post(
      { query: 'query($l: Int) { users(limit: $l) { totalCount } }', variables: { l: 'abc' } },
      'a wrongly typed variable (cost Infinity)',
    ),
    post(
      { query: 'query($l: Int!) { users(limit: $l) { totalCount } }', variables: {} },
      'a missing required variable',
    ),
    post({ query: deep(40) }, 'a selection 160 levels deep'),
    post(
      { query: `{ __schema { types { fields { type { ${ofType} } } } } }` },
      'introspection 60 ofType deep',
      'no5xx',
    ),
    post(
      {
        query: `{ ${Array.from({ length: 2000 }, (_, i) => `a${i}: me { username }`).join(' ')} }`,
      },
      '2000 aliases',
      'no5xx',
    ),
    post(
      {
        query: `{ ${Array.from({ length: 300 }, (_, i) => `a${i}: users(limit: 0) { items { username orgs(limit: 0) { items { id } } } }`).join(' ')} }`,
      },
      '300 aliases of unbounded lists',
    ),
    post(
      { query: 'fragment A on User { ...B } fragment B on User { ...A } { me { ...A } }' },
      'a fragment cycle',
    ),
    post(
      {
        query: `{ me ${Array.from({ length: 1000 }, () => '@include(if: true)').join(' ')} { username } }`,
      },
      '1000 directives',
    ),
    post({ query: `{ me { username } } ${'#'.repeat(100_000)}` }, 'a 100 KB comment', 'no5xx'),
    post(
      {
        query: '{ me { username } }',
        variables: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`v${i}`, i])),
      },
      '10000 unused variables',
      'no5xx',
    ),
    post(
      {
        query: '{ me { username } }',
        extensions: { persistedQuery: { version: 1, sha256Hash: "'; --" } },
      },
      'a bogus persisted query',
      'no5xx',
    ),
    ...BAD_UNICODE.map((h) =>
      post(
        { query: `{ user(username: "${h.value as string}") { username } }` },
        `a string literal with ${h.label}`,
      ),
    ),
    ...BAD_UNICODE.map((h) =>
      post(
        {
          query: 'query($u: String!) { user(username: $u) { username } }',
          variables: { u: h.value },
        },
        `a variable with ${h.label}`,
      ),
    ),
    post(
      { query: `{ user(username: "a\\ud800b") { username } }` },
      'an escaped lone surrogate in a literal',
    ),
    ...rng.sample(SQL, 4).map((s) =>
      post(
        {
          query:
            'query($u: String!) { user(username: $u) { username } orgs(q: $u) { totalCount } }',
          variables: { u: s },
        },
        `SQL in variables ${show(s)}`,
        'no5xx',
      ),
    ),
    post(
      {
        query: `mutation { createOrg(input: { id: "${tenant.marker}lit", name: "\\u0000" }) { org { id } } }`,
      },
      'a NUL escape in a literal',
    ),
  ];
  const mutation = `mutation { createOrg(input: {id: "${tenant.marker}m", name: "M"}) { org { id } } }`;
  cases.push(
    {
      family,
      method: 'GET',
      path: `/graphql?query=${encodeURIComponent(mutation)}`,
      input: 'a mutation over GET',
      expect: 'refused',
      graphql: true,
    },
    {
      family,
      method: 'GET',
      path: `/graphql?query=${encodeURIComponent('{ me { username } }')}&variables=%7B`,
      input: 'malformed variables over GET',
      expect: 'refused',
      graphql: true,
    },
    {
      family,
      method: 'GET',
      path: '/graphql?query=%ED%A0%80',
      input: 'invalid UTF-8 over GET',
      expect: 'refused',
      graphql: true,
    },
    {
      family,
      method: 'PUT',
      path: '/graphql',
      body: { query: mutation },
      input: 'PUT',
      expect: 'refused',
      graphql: true,
    },
  );
  for (const bad of BAD_BODIES) {
    cases.push({
      family,
      method: 'POST',
      path: '/graphql',
      raw: {
        contentType: bad.contentType,
        data: bad.contentType.startsWith('application/json')
          ? bad.data
          : `query=${encodeURIComponent(mutation)}`,
      },
      input: `a body: ${bad.label}`,
      expect: bad.expect ?? 'refused',
      graphql: true,
    });
  }
  for (const a of badAuthorizations(rng, tenant.owner.username)) {
    for (const query of [mutation, '{ me { username } }']) {
      cases.push({ ...post({ query }, `Authorization: ${a.label}`), auth: a.value });
    }
  }
  return cases;
}

let t: TestApp;
let tenant: Tenant;
let server: Server;
let families: Map<string, Case[]>;
const all: Outcome[] = [];

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t, `hostilegql${SEED}x${Date.now().toString(36)}`);
  server = await listen(t);
  const rng = new Rng(SEED + 1);
  families = new Map();
  for (const c of [...mutationCases(rng, t, tenant), ...protocolCases(rng, tenant)]) {
    if (!families.has(c.family)) families.set(c.family, []);
    families.get(c.family)!.push(c);
  }
}, 60_000);

afterAll(async () => {
  console.log(`hostile GraphQL requests per family (seed ${SEED}): ${JSON.stringify(tally(all))}`);
  await server?.close();
  await t?.close();
});

const FAMILIES = [
  'users',
  'orgs',
  'repositories',
  'versions',
  'concepts',
  'mappings',
  'collection contents',
  'url-registry',
  'graphql protocol',
  'fhir resources',
  'bulk imports',
  'web client',
];

describe('hostile input on the GraphQL edge never reaches a 500, never hangs, and a refused mutation writes nothing', () => {
  it('every mutation of the schema is attacked', () => {
    const attacked = new Set([...families.values()].flat().map((c) => c.input.split(':')[0]));
    expect(MUTATIONS.map((f) => f.name).filter((name) => !attacked.has(name))).toEqual([]);
    expect([...families.keys()].sort()).toEqual([...FAMILIES].sort());
  });

  it.each(FAMILIES)(
    '%s',
    async (family) => {
      // Requests that must be refused go first and together: a batch of them may write nothing.
      const cases = [...(families.get(family) ?? [])].sort(
        (a, b) => Number(b.expect === 'refused') - Number(a.expect === 'refused'),
      );
      const result = await runCases(server, cases, {
        defaultAuth: tenant.owner.auth,
        fingerprint: () => fingerprint(t, tenant),
      });
      all.push(...result.outcomes);
      expect(report(`${family} (${cases.length} requests)`, result.failures)).toBe('');
    },
    180_000,
  );

  it('leaves the database consistent', async () => {
    expect(await brokenInvariants(t, tenant)).toEqual([]);
  });
});
