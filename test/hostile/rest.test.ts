import { createTestApp, type TestApp } from '../factories';
import {
  BAD_BODIES,
  BAD_DATES,
  BAD_LIMITS,
  BAD_PAGES,
  BAD_UNICODE,
  CONTROL,
  NOT_A_BOOLEAN,
  NOT_A_LIST,
  NOT_A_NUMBER,
  NOT_A_STRING,
  NOT_AN_OBJECT,
  ODD_TEXT,
  PATH_IDS,
  RAW_QUERY_VALUES,
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
  send,
  tally,
  type Case,
  type Outcome,
  type Server,
  type Tenant,
} from './harness';

/**
 * Hostile input on every REST endpoint family (issue 9, part 6): wrong JSON types in every body
 * field, huge strings, deep nesting, invalid Unicode, SQL metacharacters in every filter, sort,
 * `q` and path id, bad paging, malformed credentials, wrong content types and malformed JSON.
 * Every request must be answered below 500 within 10 s, a refused one must write nothing, and
 * the database's invariants must hold afterwards.
 *
 * `HOSTILE_SEED=<n>` draws other values (the default seed always draws the same ones);
 * `HOSTILE_REPORT=<file>` appends every failure to the file (the test output shows 60 per family);
 * `HOSTILE_DUMP=<file>` appends every request with its status and answer.
 */

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** How a body field is attacked. */
type Kind =
  /** Free text. */
  | 'text'
  /** Identifiers, names and classes: control characters are refused there too. */
  | 'ident'
  /** A secret: no SQL or odd values (an accepted one would change the tenant's password). */
  | 'secret'
  | 'bool'
  | 'number'
  /** Free JSON: extras, expansion parameters. */
  | 'json'
  /** A list of strings. */
  | 'strings'
  /** A comma-separated string or a list of locales. */
  | 'locales'
  | 'names'
  | 'descriptions';

interface Endpoint {
  family: string;
  method: Method;
  /** With `{placeholders}` for the tenant's ids. */
  path: string;
  /** A list: the filters it takes (paging, `q`, sorts and extras are tried on every list). */
  filters?: string[];
  /**
   * A list that documents no sorts: it ignores `sortAsc`/`sortDesc` instead of refusing an
   * unknown field (docs/design-choices.md: a 400), so only "no 5xx" is asserted there.
   */
  unsorted?: boolean;
  /** Extra query for lists that are details with children. */
  query?: string;
  /** The body every field variant starts from (a fresh one per case: `n` makes ids unique). */
  body?: (n: number) => Record<string, unknown>;
  fields?: Record<string, Kind>;
  /** The whole body is attacked (extras values, reference lists, `$resolveReference`). */
  whole?: (rng: Rng) => Hostile[];
  /** Whose credentials: the tenant's owner (default), the administrator, or none. */
  as?: 'admin' | 'anonymous';
  /**
   * Destructive when accepted: only inputs refused before any handler runs (path ids that name
   * nothing, bad credentials, bad content types, malformed JSON).
   */
  guarded?: boolean;
}

const PROFILE: Record<string, Kind> = {
  name: 'ident',
  email: 'text',
  company: 'text',
  location: 'text',
  website: 'text',
  preferred_locale: 'locales',
  extras: 'json',
};

const REPO_FIELDS: Record<string, Kind> = {
  name: 'ident',
  full_name: 'ident',
  description: 'text',
  website: 'text',
  external_id: 'text',
  public_access: 'text',
  default_locale: 'ident',
  supported_locales: 'locales',
  custom_validation_schema: 'text',
  canonical_url: 'text',
  extras: 'json',
};
const SOURCE_FIELDS: Record<string, Kind> = {
  ...REPO_FIELDS,
  source_type: 'ident',
  autoid_concept_mnemonic: 'text',
  autoid_concept_mnemonic_start_from: 'number',
  autoid_concept_name_external_id: 'text',
};
const COLLECTION_FIELDS: Record<string, Kind> = {
  ...REPO_FIELDS,
  collection_type: 'ident',
  preferred_source: 'text',
};

const VERSION_FIELDS: Record<string, Kind> = {
  description: 'text',
  released: 'bool',
  retired: 'bool',
  external_id: 'text',
  extras: 'json',
};

const CONCEPT_FIELDS: Record<string, Kind> = {
  concept_class: 'ident',
  datatype: 'ident',
  external_id: 'text',
  names: 'names',
  descriptions: 'descriptions',
  extras: 'json',
  retired: 'bool',
  parent_concept_urls: 'strings',
  update_comment: 'text',
};

const MAPPING_FIELDS: Record<string, Kind> = {
  map_type: 'ident',
  from_concept_url: 'text',
  from_source_url: 'text',
  from_source_version: 'text',
  from_concept_code: 'text',
  from_concept_name: 'text',
  to_concept_url: 'text',
  to_source_url: 'text',
  to_concept_code: 'text',
  to_concept_name: 'text',
  sort_weight: 'number',
  external_id: 'text',
  extras: 'json',
  retired: 'bool',
  update_comment: 'text',
};

const NAME_FIELDS: Record<string, Kind> = {
  name: 'ident',
  locale: 'ident',
  locale_preferred: 'bool',
  name_type: 'ident',
  external_id: 'text',
};
const DESCRIPTION_FIELDS: Record<string, Kind> = {
  description: 'text',
  locale: 'ident',
  locale_preferred: 'bool',
  description_type: 'ident',
  external_id: 'text',
};

const REGISTRY_FIELDS: Record<string, Kind> = {
  url: 'text',
  namespace: 'text',
  name: 'ident',
  extras: 'json',
};

const LIST_FILTERS = {
  users: ['company', 'location'],
  repos: [
    'sourceType',
    'collectionType',
    'collection_type',
    'locale',
    'customValidationSchema',
    'canonicalUrl',
    'contains',
    'ownerType',
    'repoType',
  ],
  concepts: ['conceptClass', 'datatype', 'locale', 'includeRetired'],
  mappings: [
    'mapType',
    'includeRetired',
    'updatedBy',
    'concept',
    'fromConcept',
    'toConcept',
    'conceptSource',
    'fromConceptSource',
    'toConceptSource',
  ],
};

/** The value of an extras attribute `k`, attacked whole (`PUT …/extras/k/`). */
function extraBodies(rng: Rng): Hostile[] {
  return [
    ...hostileJson(rng).map((h): Hostile => ({
      ...h,
      label: `{k: ${h.label}}`,
      value: { k: h.value },
    })),
    ...BAD_UNICODE.map((h): Hostile => ({ ...h, label: `{k: ${h.label}}`, value: { k: h.value } })),
    { label: 'a string', value: 'v', expect: 'no5xx' },
    { label: 'a number', value: 5, expect: 'no5xx' },
    { label: 'null', value: null, expect: 'no5xx' },
    { label: 'a list', value: ['k', 'v'], expect: 'no5xx' },
    { label: 'an empty object', value: {}, expect: 'no5xx' },
    { label: 'another name than the path', value: { other: 'v' }, expect: 'no5xx' },
    { label: 'two names', value: { k: 'v', j: 'w' }, expect: 'no5xx' },
    { label: '{k: a 1 MB string}', value: { k: hugeString() }, expect: 'no5xx' },
  ];
}

function referenceBodies(rng: Rng, tenant: Tenant): Hostile[] {
  const src = tenant.source;
  const expressions = (value: unknown): unknown => ({ data: { expressions: value } });
  return [
    ...BAD_UNICODE.map((h): Hostile => ({
      ...h,
      label: `an expression with ${h.label}`,
      value: expressions([h.value]),
    })),
    ...BAD_UNICODE.slice(0, 2).map((h): Hostile => ({
      ...h,
      label: `a filter value with ${h.label}`,
      value: {
        data: [{ url: src, filter: [{ property: 'concept_class', op: '=', value: h.value }] }],
      },
    })),
    ...rng.sample(SQL, 4).map((s): Hostile => ({
      label: `an SQL expression ${show(s)}`,
      value: expressions([`${src}concepts/${s}/`, s]),
      expect: 'no5xx',
    })),
    ...rng.sample(SQL, 2).map((s): Hostile => ({
      label: `SQL in a filter ${show(s)}`,
      value: { url: src, filter: [{ property: 'concept_class', op: 'in', value: s }] },
      expect: 'no5xx',
    })),
    ...NOT_A_LIST.map((v): Hostile => ({
      label: `expressions = ${show(v)}`,
      value: expressions(v),
      expect: 'no5xx',
    })),
    ...NOT_AN_OBJECT.map((v): Hostile => ({
      label: `the body ${show(v)}`,
      value: v,
      expect: 'no5xx',
    })),
    { label: 'data = null', value: { data: null }, expect: 'no5xx' },
    { label: 'data = 5', value: { data: 5 }, expect: 'no5xx' },
    { label: 'an empty object', value: {}, expect: 'no5xx' },
    { label: 'concepts "*" without uri', value: { data: { concepts: '*' } }, expect: 'no5xx' },
    { label: 'concepts = 5', value: { data: { concepts: 5, uri: src } }, expect: 'no5xx' },
    { label: 'mappings = {}', value: { data: { mappings: {}, uri: src } }, expect: 'no5xx' },
    { label: 'uri = []', value: { data: { concepts: '*', uri: [] } }, expect: 'no5xx' },
    { label: 'url = 5', value: { url: 5 }, expect: 'no5xx' },
    { label: 'filter = "x"', value: { url: src, filter: 'x' }, expect: 'no5xx' },
    {
      label: 'an invalid regex',
      value: { url: src, filter: [{ property: 'concept_class', op: 'regex', value: '[(' }] },
      expect: 'no5xx',
    },
    {
      label: 'a catastrophic regex',
      value: { url: src, filter: [{ property: 'concept_class', op: 'regex', value: '^(a+)+$' }] },
      expect: 'no5xx',
    },
    {
      label: 'an unknown filter op',
      value: { url: src, filter: [{ property: 'x', op: 'DROP', value: 'y' }] },
      expect: 'no5xx',
    },
    {
      label: 'a hierarchy filter on SQL',
      value: { url: src, filter: [{ property: 'concept', op: 'is-a', value: "'; --" }] },
      expect: 'no5xx',
    },
    { label: 'code = []', value: { url: src, code: ['A'] }, expect: 'no5xx' },
    { label: 'concept = "x"', value: { url: src, concept: 'x' }, expect: 'no5xx' },
    { label: 'concept [{code: 5}]', value: { url: src, concept: [{ code: 5 }] }, expect: 'no5xx' },
    {
      label: 'resourceType Foo',
      value: { url: src, code: 'A', resourceType: 'Foo' },
      expect: 'no5xx',
    },
    {
      label: 'include = "x"',
      value: { url: src, code: 'A', includeExclude: 'x' },
      expect: 'no5xx',
    },
    { label: 'exclude = "yes"', value: { url: src, code: 'A', exclude: 'yes' }, expect: 'no5xx' },
    { label: 'cascade = {}', value: { url: src, code: 'A', cascade: {} }, expect: 'no5xx' },
    { label: 'version = {}', value: { url: src, code: 'A', version: {} }, expect: 'no5xx' },
    {
      label: 'a list of 1000 nulls',
      value: Array.from({ length: 1000 }, () => null),
      expect: 'no5xx',
    },
    {
      label: '60000 expressions (over the limit)',
      value: expressions(Array.from({ length: 60_000 }, (_, i) => `${src}concepts/N${i}/`)),
      expect: 'refused',
    },
    { label: 'a 1 MB expression', value: expressions([hugeString()]), expect: 'no5xx' },
    {
      label: 'an object 40 levels deep',
      value: { data: hostileJson(rng)[0].value },
      expect: 'refused',
    },
  ];
}

function removalBodies(rng: Rng): Hostile[] {
  return [
    ...rng.sample(SQL, 3).map((s): Hostile => ({
      label: `SQL expressions ${show(s)}`,
      value: { expressions: [s] },
      expect: 'no5xx',
    })),
    ...BAD_UNICODE.map((h): Hostile => ({
      ...h,
      label: `an expression with ${h.label}`,
      value: { expressions: [h.value] },
    })),
    { label: 'expressions = "x"', value: { expressions: 'x' }, expect: 'no5xx' },
    { label: 'expressions = 5', value: { expressions: 5 }, expect: 'no5xx' },
    { label: 'expressions = [5]', value: { expressions: [5] }, expect: 'no5xx' },
    { label: 'ids = ["abc"]', value: { ids: ['abc'] }, expect: 'no5xx' },
    { label: 'ids beyond bigint', value: { ids: ['99999999999999999999'] }, expect: 'no5xx' },
    { label: 'ids = [-1]', value: { ids: [-1] }, expect: 'no5xx' },
    { label: 'ids = [1.5]', value: { ids: [1.5] }, expect: 'no5xx' },
    { label: 'ids = [1e300]', value: { ids: [1e300] }, expect: 'no5xx' },
    { label: 'ids = [null]', value: { ids: [null] }, expect: 'no5xx' },
    { label: 'ids = "1"', value: { ids: '1' }, expect: 'no5xx' },
    { label: 'an empty object', value: {}, expect: 'no5xx' },
    { label: 'a list', value: [], expect: 'no5xx' },
    { label: 'a string', value: 'x', expect: 'no5xx' },
  ];
}

function resolveBodies(rng: Rng): Hostile[] {
  return [
    ...BAD_UNICODE.map((h): Hostile => ({
      ...h,
      label: `a reference with ${h.label}`,
      value: h.value,
    })),
    ...BAD_UNICODE.slice(0, 2).map((h): Hostile => ({
      ...h,
      label: `{url} with ${h.label}`,
      value: { url: h.value },
    })),
    ...rng
      .sample(SQL, 4)
      .map((s): Hostile => ({ label: `SQL ${show(s)}`, value: s, expect: 'no5xx' })),
    ...rng.sample(SQL, 2).map((s): Hostile => ({
      label: `SQL in a canonical URL ${show(s)}`,
      value: { url: `http://example.org/${s}`, version: s, namespace: `/orgs/${s}/` },
      expect: 'no5xx',
    })),
    ...[5, null, true, [], [null], [1], {}, { url: 5 }, { url: 'x', version: {} }].map(
      (v): Hostile => ({
        label: `the body ${show(v)}`,
        value: v,
        expect: 'no5xx',
      }),
    ),
    { label: 'an empty string', value: '', expect: 'no5xx' },
    { label: 'a 1 MB reference', value: hugeString(), expect: 'no5xx' },
    {
      label: '10001 references',
      value: Array.from({ length: 10_001 }, (_, i) => `/orgs/x/sources/s${i}/`),
      expect: 'no5xx',
    },
    { label: 'an object 40 levels deep', value: [hostileJson(rng)[0].value], expect: 'refused' },
  ];
}

function expansionParameterBodies(n: () => number): Hostile[] {
  const withParameters = (parameters: unknown): unknown => ({ mnemonic: `hx${n()}`, parameters });
  return [
    {
      label: 'no parameters (OCL requires them)',
      value: { mnemonic: `hx${n()}` },
      expect: 'refused',
    },
    {
      label: 'filter with a lone surrogate',
      value: withParameters({ filter: '\ud800' }),
      expect: 'refused',
    },
    {
      label: 'system-version with a lone surrogate',
      value: withParameters({ 'system-version': 'http://x|\udc00' }),
      expect: 'refused',
    },
    ...[
      { count: -1 },
      { count: 'abc' },
      { count: 1e99 },
      { offset: -5 },
      { offset: 1.5 },
      { date: 'garbage' },
      { date: "'; DROP TABLE x;--" },
      { activeOnly: 'maybe' },
      { 'exclude-system': 5 },
      { 'exclude-system': [[]] },
      { 'force-system-version': {} },
      { displayLanguage: "'; --" },
      { includeDesignations: 'x' },
      { valueSet: 'x' },
      { unknownParam: 1 },
      { filter: 'x'.repeat(100_000) },
    ].map((p): Hostile => ({
      label: `parameters ${show(p)}`,
      value: withParameters(p),
      expect: 'no5xx',
    })),
  ];
}

/** Every endpoint family of the REST edge (compat/rest/routes.ts). */
function endpoints(tenant: Tenant, n: () => number): Endpoint[] {
  const m = tenant.marker;
  const S = '/orgs/{org}/sources/{source}/';
  const C = '/orgs/{org}/collections/{collection}/';
  const concept = `${S}concepts/{concept}/`;
  const mapping = `${S}mappings/{mapping}/`;
  const extras = (family: string, base: string): Endpoint[] => [
    { family, method: 'GET', path: `${base}extras/` },
    { family, method: 'GET', path: `${base}extras/{extra}/` },
    { family, method: 'PUT', path: `${base}extras/{extra}/`, whole: extraBodies },
    { family, method: 'DELETE', path: `${base}extras/{missing}/`, guarded: true },
  ];
  return [
    // users
    { family: 'users', method: 'GET', path: '/users/', filters: LIST_FILTERS.users },
    {
      family: 'users',
      method: 'POST',
      path: '/users/',
      as: 'admin',
      body: (i) => ({
        username: `${m}u${i}`,
        name: 'U',
        email: `${m}u${i}@example.org`,
        password: 'password-123',
      }),
      fields: { username: 'ident', password: 'secret', ...PROFILE },
    },
    {
      family: 'users',
      method: 'POST',
      path: '/users/signup/',
      as: 'anonymous',
      body: (i) => ({
        username: `${m}s${i}`,
        name: 'U',
        email: `${m}s${i}@example.org`,
        password: 'password-123',
      }),
      fields: {
        username: 'ident',
        password: 'secret',
        ...PROFILE,
        email_verify_success_url: 'text',
        email_verify_failure_url: 'text',
      },
    },
    {
      family: 'users',
      method: 'POST',
      path: '/users/login/',
      as: 'anonymous',
      body: () => ({ username: tenant.owner.username, password: tenant.owner.password }),
      fields: { username: 'ident', password: 'secret', email_verify_success_url: 'text' },
    },
    { family: 'users', method: 'GET', path: '/users/{user}/' },
    {
      family: 'users',
      method: 'PATCH',
      path: '/users/{user}/',
      body: () => ({}),
      fields: { ...PROFILE, password: 'secret' },
    },
    { family: 'users', method: 'DELETE', path: '/users/{victim}/', guarded: true },
    { family: 'users', method: 'PUT', path: '/users/{victim}/reactivate/', guarded: true },
    { family: 'users', method: 'GET', path: '/users/{user}/verify/{token}/' },
    { family: 'users', method: 'GET', path: '/users/{user}/orgs/', filters: [] },
    // the caller
    { family: 'user/', method: 'GET', path: '/user/' },
    {
      family: 'user/',
      method: 'PUT',
      path: '/user/',
      body: () => ({}),
      fields: { ...PROFILE, password: 'secret' },
    },
    { family: 'user/', method: 'GET', path: '/user/orgs/', filters: [] },
    { family: 'user/', method: 'GET', path: '/user/orgs/sources/', filters: LIST_FILTERS.repos },
    { family: 'user/', method: 'GET', path: '/user/repos/', filters: LIST_FILTERS.repos },
    {
      family: 'user/',
      method: 'POST',
      path: '/user/collections/',
      body: (i) => ({ id: `huc${i}`, name: 'C' }),
      fields: { id: 'ident', ...COLLECTION_FIELDS },
    },
    // orgs and members
    { family: 'orgs', method: 'GET', path: '/orgs/', filters: LIST_FILTERS.users },
    {
      family: 'orgs',
      method: 'POST',
      path: '/orgs/',
      body: (i) => ({ id: `${m}o${i}`, name: 'O' }),
      fields: {
        id: 'ident',
        name: 'ident',
        company: 'text',
        website: 'text',
        location: 'text',
        public_access: 'text',
        extras: 'json',
      },
    },
    { family: 'orgs', method: 'GET', path: '/orgs/{org}/' },
    {
      family: 'orgs',
      method: 'PATCH',
      path: '/orgs/{org}/',
      body: () => ({}),
      fields: {
        name: 'ident',
        company: 'text',
        website: 'text',
        location: 'text',
        public_access: 'text',
        extras: 'json',
      },
    },
    { family: 'orgs', method: 'DELETE', path: '/orgs/{victimOrg}/', guarded: true },
    { family: 'orgs', method: 'GET', path: '/orgs/{org}/members/', filters: [] },
    { family: 'orgs', method: 'GET', path: '/orgs/{org}/members/{victim}/' },
    {
      family: 'orgs',
      method: 'PUT',
      path: '/orgs/{org}/members/{victim}/',
      body: () => ({}),
      fields: { role: 'ident' },
    },
    { family: 'orgs', method: 'DELETE', path: '/orgs/{org}/members/{victim}/', guarded: true },
    // sources and collections
    { family: 'repos', method: 'GET', path: '/orgs/{org}/sources/', filters: LIST_FILTERS.repos },
    {
      family: 'repos',
      method: 'GET',
      path: '/orgs/{org}/collections/',
      filters: LIST_FILTERS.repos,
    },
    { family: 'repos', method: 'GET', path: '/orgs/{org}/repos/', filters: LIST_FILTERS.repos },
    { family: 'repos', method: 'GET', path: '/users/{user}/sources/', filters: LIST_FILTERS.repos },
    {
      family: 'repos',
      method: 'GET',
      path: '/users/{user}/orgs/collections/',
      filters: LIST_FILTERS.repos,
    },
    {
      family: 'repos',
      method: 'POST',
      path: '/orgs/{org}/sources/',
      body: (i) => ({ id: `hs${i}`, name: 'S' }),
      fields: { id: 'ident', ...SOURCE_FIELDS },
    },
    {
      family: 'repos',
      method: 'POST',
      path: '/orgs/{org}/collections/',
      body: (i) => ({ id: `hc${i}`, name: 'C' }),
      fields: { id: 'ident', ...COLLECTION_FIELDS },
    },
    {
      family: 'repos',
      method: 'GET',
      path: S,
      filters: ['includeRetired'],
      query: 'includeConcepts=true&includeMappings=true',
    },
    {
      family: 'repos',
      method: 'GET',
      path: C,
      filters: ['includeRetired'],
      query: 'includeConcepts=true&includeMappings=true&includeReferences=true',
    },
    { family: 'repos', method: 'PATCH', path: S, body: () => ({}), fields: SOURCE_FIELDS },
    { family: 'repos', method: 'PUT', path: C, body: () => ({}), fields: COLLECTION_FIELDS },
    { family: 'repos', method: 'DELETE', path: S, guarded: true },
    { family: 'repos', method: 'DELETE', path: C, guarded: true },
    // repository versions
    { family: 'versions', method: 'GET', path: `${S}versions/`, filters: [], unsorted: true },
    { family: 'versions', method: 'GET', path: `${C}versions/`, filters: [], unsorted: true },
    {
      family: 'versions',
      method: 'POST',
      path: `${S}versions/`,
      body: (i) => ({ id: `hv${i}` }),
      fields: { id: 'ident', previous_version: 'text', ...VERSION_FIELDS },
    },
    {
      family: 'versions',
      method: 'POST',
      path: `${C}versions/`,
      body: (i) => ({ id: `hv${i}`, autoexpand: false }),
      fields: { id: 'ident', autoexpand: 'bool', ...VERSION_FIELDS },
    },
    { family: 'versions', method: 'GET', path: `${S}{version}/` },
    { family: 'versions', method: 'GET', path: `${S}latest/` },
    {
      family: 'versions',
      method: 'PATCH',
      path: `${S}{version}/`,
      body: () => ({}),
      fields: VERSION_FIELDS,
    },
    {
      family: 'versions',
      method: 'POST',
      path: `${C}{version}/`,
      body: () => ({}),
      fields: VERSION_FIELDS,
    },
    { family: 'versions', method: 'DELETE', path: `${S}{version}/`, guarded: true },
    { family: 'versions', method: 'DELETE', path: `${C}{version}/`, guarded: true },
    // concepts and their sub-resources
    { family: 'concepts', method: 'GET', path: `${S}concepts/`, filters: LIST_FILTERS.concepts },
    {
      family: 'concepts',
      method: 'GET',
      path: `${S}{version}/concepts/`,
      filters: LIST_FILTERS.concepts,
    },
    {
      family: 'concepts',
      method: 'POST',
      path: `${S}concepts/`,
      body: (i) => ({
        id: `hc${i}`,
        concept_class: 'Misc',
        names: [{ name: `N${i}`, locale: 'en' }],
      }),
      fields: { id: 'ident', ...CONCEPT_FIELDS },
    },
    { family: 'concepts', method: 'GET', path: concept },
    {
      family: 'concepts',
      method: 'PATCH',
      path: concept,
      body: () => ({}),
      fields: CONCEPT_FIELDS,
    },
    {
      family: 'concepts',
      method: 'PUT',
      path: concept,
      body: () => ({ names: [{ name: 'Malaria', locale: 'en', locale_preferred: true }] }),
      fields: CONCEPT_FIELDS,
    },
    {
      family: 'concepts',
      method: 'DELETE',
      path: `${S}concepts/{retire}/`,
      body: () => ({}),
      fields: { update_comment: 'text', comment: 'text' },
    },
    { family: 'concepts', method: 'PUT', path: `${S}concepts/{retire}/reactivate/`, guarded: true },
    { family: 'concepts', method: 'GET', path: `${concept}versions/`, filters: [], unsorted: true },
    { family: 'concepts', method: 'GET', path: `${concept}{conceptVersion}/` },
    { family: 'concept names', method: 'GET', path: `${concept}names/` },
    {
      family: 'concept names',
      method: 'POST',
      path: `${concept}names/`,
      body: (i) => ({ name: `n${i}`, locale: 'en' }),
      fields: { ...NAME_FIELDS, uuid: 'text' },
    },
    { family: 'concept names', method: 'GET', path: `${concept}names/{name}/` },
    {
      family: 'concept names',
      method: 'PATCH',
      path: `${concept}names/{name}/`,
      body: () => ({}),
      fields: NAME_FIELDS,
    },
    { family: 'concept names', method: 'DELETE', path: `${concept}names/{name}/`, guarded: true },
    { family: 'concept names', method: 'GET', path: `${concept}{conceptVersion}/names/` },
    { family: 'concept descriptions', method: 'GET', path: `${concept}descriptions/` },
    {
      family: 'concept descriptions',
      method: 'POST',
      path: `${concept}descriptions/`,
      body: (i) => ({ description: `d${i}`, locale: 'en' }),
      fields: DESCRIPTION_FIELDS,
    },
    {
      family: 'concept descriptions',
      method: 'PUT',
      path: `${concept}descriptions/{description}/`,
      body: () => ({}),
      fields: DESCRIPTION_FIELDS,
    },
    {
      family: 'concept descriptions',
      method: 'DELETE',
      path: `${concept}descriptions/{description}/`,
      guarded: true,
    },
    ...extras('concept extras', concept),
    // mappings
    { family: 'mappings', method: 'GET', path: `${S}mappings/`, filters: LIST_FILTERS.mappings },
    {
      family: 'mappings',
      method: 'GET',
      path: `${S}{version}/mappings/`,
      filters: LIST_FILTERS.mappings,
    },
    {
      family: 'mappings',
      method: 'GET',
      path: `${concept}mappings/`,
      filters: LIST_FILTERS.mappings,
      query: 'includeInverseMappings=true',
    },
    {
      family: 'mappings',
      method: 'POST',
      path: `${S}mappings/`,
      body: (i) => ({
        id: `hm${i}`,
        map_type: 'SAME-AS',
        from_concept_url: `/orgs/${tenant.org}/sources/S/concepts/A/`,
        to_source_url: '/orgs/elsewhere/sources/Z/',
        to_concept_code: `Z${i}`,
      }),
      fields: { id: 'ident', ...MAPPING_FIELDS },
    },
    { family: 'mappings', method: 'GET', path: mapping },
    {
      family: 'mappings',
      method: 'PATCH',
      path: mapping,
      body: () => ({}),
      fields: MAPPING_FIELDS,
    },
    { family: 'mappings', method: 'DELETE', path: mapping, guarded: true },
    { family: 'mappings', method: 'PUT', path: `${mapping}reactivate/`, guarded: true },
    { family: 'mappings', method: 'GET', path: `${mapping}versions/`, filters: [], unsorted: true },
    { family: 'mappings', method: 'GET', path: `${mapping}{mappingVersion}/` },
    ...extras('mapping extras', mapping),
    // references
    {
      family: 'references',
      method: 'GET',
      path: `${C}references/`,
      filters: ['include', 'resourceType'],
      unsorted: true,
    },
    {
      family: 'references',
      method: 'GET',
      path: `${C}{version}/references/`,
      filters: ['include', 'resourceType'],
      unsorted: true,
    },
    {
      family: 'references',
      method: 'PUT',
      path: `${C}references/`,
      whole: (rng) => referenceBodies(rng, tenant),
    },
    {
      family: 'references',
      method: 'PUT',
      path: `${C}references/?cascade=${encodeURIComponent("'; DROP TABLE x;--")}`,
      whole: (rng) => referenceBodies(rng, tenant).slice(0, 6),
    },
    { family: 'references', method: 'DELETE', path: `${C}references/`, whole: removalBodies },
    { family: 'references', method: 'GET', path: `${C}references/{reference}/` },
    { family: 'references', method: 'GET', path: `${C}{version}/references/{reference}/` },
    { family: 'references', method: 'DELETE', path: `${C}references/{reference}/`, guarded: true },
    // expansions
    {
      family: 'expansions',
      method: 'GET',
      path: `${C}expansions/`,
      filters: [],
      unsorted: true,
      query: 'includeSummary=true&verbose=true',
    },
    {
      family: 'expansions',
      method: 'GET',
      path: `${C}{version}/expansions/`,
      filters: [],
      unsorted: true,
    },
    {
      family: 'expansions',
      method: 'POST',
      path: `${C}{version}/expansions/`,
      body: (i) => ({ mnemonic: `hx${i}`, parameters: {} }),
      fields: { mnemonic: 'ident', parameters: 'json', canonical_url: 'text' },
      whole: () => expansionParameterBodies(n),
    },
    {
      family: 'expansions',
      method: 'GET',
      path: `${C}{version}/expansions/{expansion}/`,
      query: 'verbose=true',
    },
    {
      family: 'expansions',
      method: 'DELETE',
      path: `${C}{version}/expansions/{expansion}/`,
      guarded: true,
    },
    {
      family: 'expansions',
      method: 'GET',
      path: `${C}{version}/expansions/{expansion}/concepts/`,
      filters: LIST_FILTERS.concepts,
    },
    {
      family: 'expansions',
      method: 'GET',
      path: `${C}{version}/expansions/{expansion}/mappings/`,
      filters: ['mapType', 'fromConcept', 'toConcept'],
    },
    { family: 'expansions', method: 'GET', path: `${C}concepts/`, filters: LIST_FILTERS.concepts },
    {
      family: 'expansions',
      method: 'GET',
      path: `${C}{version}/mappings/`,
      filters: ['mapType', 'fromConcept', 'toConcept'],
    },
    // $resolveReference
    {
      family: '$resolveReference',
      method: 'POST',
      path: '/$resolveReference/',
      whole: resolveBodies,
    },
    {
      family: '$resolveReference',
      method: 'POST',
      path: `/$resolveReference?namespace=${encodeURIComponent("/orgs/'; --/")}`,
      whole: (rng) => resolveBodies(rng).slice(0, 6),
    },
    // URL registries
    {
      family: 'url-registry',
      method: 'GET',
      path: '/url-registry/',
      filters: ['namespace', 'url'],
    },
    {
      family: 'url-registry',
      method: 'GET',
      path: '/orgs/{org}/url-registry/',
      filters: ['namespace', 'url'],
    },
    {
      family: 'url-registry',
      method: 'POST',
      path: '/orgs/{org}/url-registry/',
      body: (i) => ({ url: `http://example.org/${m}/h${i}` }),
      fields: REGISTRY_FIELDS,
    },
    {
      family: 'url-registry',
      method: 'POST',
      path: '/url-registry/',
      body: (i) => ({ url: `http://example.org/${m}/g${i}` }),
      fields: REGISTRY_FIELDS,
    },
    { family: 'url-registry', method: 'GET', path: '/orgs/{org}/url-registry/{entry}/' },
    {
      family: 'url-registry',
      method: 'PATCH',
      path: '/orgs/{org}/url-registry/{entry}/',
      body: () => ({}),
      fields: REGISTRY_FIELDS,
    },
    {
      family: 'url-registry',
      method: 'DELETE',
      path: '/orgs/{org}/url-registry/{entry}/',
      guarded: true,
    },
    {
      family: 'url-registry',
      method: 'POST',
      path: '/orgs/{org}/url-registry/$lookup/',
      body: () => ({ url: 'http://example.org/x' }),
      fields: { url: 'text' },
    },
    {
      family: 'url-registry',
      method: 'POST',
      path: '/url-registry/$lookup/',
      body: () => ({ url: 'http://example.org/x' }),
      fields: { url: 'text' },
    },
    // tasks
    { family: 'tasks', method: 'GET', path: '/tasks/', filters: [], unsorted: true },
    { family: 'tasks', method: 'GET', path: '/tasks/{task}/' },
    // extras sub-resources
    ...extras('extras', '/orgs/{org}/'),
    ...extras('extras', '/users/{user}/'),
    ...extras('extras', '/user/'),
    ...extras('extras', S),
    ...extras('extras', C),
    // global lists
    {
      family: 'global lists',
      method: 'GET',
      path: '/concepts/',
      filters: [...LIST_FILTERS.concepts, 'source', 'user', 'org', 'mapcode'],
    },
    {
      family: 'global lists',
      method: 'GET',
      path: '/mappings/',
      filters: [...LIST_FILTERS.mappings, 'owner', 'ownerType'],
    },
    { family: 'global lists', method: 'GET', path: '/sources/', filters: LIST_FILTERS.repos },
    { family: 'global lists', method: 'GET', path: '/collections/', filters: LIST_FILTERS.repos },
    { family: 'global lists', method: 'GET', path: '/repos/', filters: LIST_FILTERS.repos },
    { family: 'global lists', method: 'GET', path: '/orgs/', filters: LIST_FILTERS.users },
    { family: 'global lists', method: 'GET', path: '/users/', filters: LIST_FILTERS.users },
  ];
}

function sqlValue(rng: Rng): Hostile {
  const value = rng.pick(SQL);
  return { label: `SQL ${show(value)}`, value, expect: 'no5xx' };
}

function oddValue(rng: Rng): Hostile {
  const value = rng.pick(ODD_TEXT);
  return { label: `odd text ${show(value, 20)}`, value, expect: 'no5xx' };
}

/** The values tried on one body field of a kind. */
function fieldValues(rng: Rng, kind: Kind): Hostile[] {
  const wrong = (values: unknown[], k: number): Hostile[] =>
    rng
      .sample(values, k)
      .map((value): Hostile => ({ label: show(value, 40), value, expect: 'no5xx' }));
  const unicode = (): Hostile[] => [BAD_UNICODE[0], ...rng.sample(BAD_UNICODE.slice(1), 1)];
  // Invalid Unicode is refused by one guard for every field: one kind of it per field, in turn.
  const text = (controlExpect: Expect): Hostile[] => [
    ...wrong(NOT_A_STRING, 1),
    rng.pick(BAD_UNICODE),
    { label: 'a control character', value: rng.pick(CONTROL), expect: controlExpect },
    sqlValue(rng),
    rng.next() < 0.5 ? oddValue(rng) : wrong(NOT_A_STRING, 1)[0],
  ];
  const item = (base: Record<string, unknown>, fields: Record<string, Kind>): Hostile[] => {
    const [field, fieldKind] = rng.pick(Object.entries(fields));
    return [
      ...wrong(NOT_A_LIST, 2),
      ...BAD_UNICODE.slice(0, 2).map((h): Hostile => ({
        ...h,
        label: `[{${field}: ${h.label}}]`,
        value: [{ ...base, [field]: h.value }],
      })),
      {
        label: `[{${field}: a control character}]`,
        value: [{ ...base, [field]: rng.pick(CONTROL) }],
        expect: fieldKind === 'ident' ? 'refused' : 'no5xx',
      },
      { label: `[{${field}: SQL}]`, value: [{ ...base, [field]: rng.pick(SQL) }], expect: 'no5xx' },
      { label: `[{${field}: {}}]`, value: [{ ...base, [field]: {} }], expect: 'no5xx' },
      { label: '2000 items', value: Array.from({ length: 2000 }, () => base), expect: 'no5xx' },
    ];
  };
  switch (kind) {
    case 'text':
      return text('no5xx');
    case 'ident':
      return text('refused');
    case 'secret':
      return [...wrong(NOT_A_STRING, 2), ...unicode()];
    case 'bool':
      return [
        ...wrong(NOT_A_BOOLEAN, 3),
        { ...BAD_UNICODE[0], label: `a string with ${BAD_UNICODE[0].label}` },
      ];
    case 'number':
      return wrong(NOT_A_NUMBER, 4);
    case 'json':
      return [...rng.sample(hostileJson(rng), 5), ...wrong(NOT_AN_OBJECT, 2)];
    case 'strings':
      return [
        ...wrong(NOT_A_LIST, 3),
        { label: '[a lone surrogate]', value: ['\ud800'], expect: 'refused' },
        { label: '[SQL]', value: [rng.pick(SQL)], expect: 'no5xx' },
        {
          label: '10001 strings',
          value: Array.from({ length: 10_001 }, (_, i) => `/x/${i}/`),
          expect: 'no5xx',
        },
      ];
    case 'locales':
      return [
        ...wrong([5, {}, [1], null, true], 2),
        { label: 'a locale with a lone surrogate', value: 'en,\ud800', expect: 'refused' },
        { label: 'SQL', value: rng.pick(SQL), expect: 'no5xx' },
        {
          label: '5000 locales',
          value: Array.from({ length: 5000 }, () => 'en').join(','),
          expect: 'no5xx',
        },
      ];
    case 'names':
      return item({ name: 'N', locale: 'en' }, NAME_FIELDS);
    case 'descriptions':
      return item({ description: 'D', locale: 'en' }, DESCRIPTION_FIELDS);
  }
}

/** Query cases of a list endpoint. */
function listQueries(
  rng: Rng,
  filters: string[],
  full: boolean,
  sorted: boolean,
): Array<{ query: string; input: string; expect: Expect; headers?: Record<string, string> }> {
  const k = (n: number): number => (full ? 2 * n : n);
  const sortExpect: Expect = sorted ? 'refused' : 'no5xx';
  const enc = encodeURIComponent;
  const out: Array<{
    query: string;
    input: string;
    expect: Expect;
    headers?: Record<string, string>;
  }> = [];
  for (const v of rng.sample(BAD_LIMITS, k(3))) {
    out.push({
      query: `limit=${v.replace(/ /g, '%20')}`,
      input: `limit=${v}`,
      expect: v === '1000000000' ? 'no5xx' : 'refused',
    });
  }
  for (const v of rng.sample(BAD_PAGES, k(2))) {
    out.push({
      query: `page=${v.replace(/ /g, '%20')}`,
      input: `page=${v}`,
      expect: v === '' || v === '1000000000' ? 'no5xx' : 'refused',
    });
  }
  out.push({
    query: 'limit=1000000000&page=1000000000',
    input: 'the largest page of the largest limit',
    expect: 'no5xx',
  });
  out.push({
    query: 'limit=1&limit=abc&page[]=2',
    input: 'repeated and bracketed paging',
    expect: 'no5xx',
  });
  for (const s of rng.sample(SQL, k(3)))
    out.push({ query: `q=${enc(s)}`, input: `q=${show(s)}`, expect: 'no5xx' });
  for (const r of rng.sample(RAW_QUERY_VALUES, k(2)))
    out.push({ query: `q=${r.raw}`, input: `q = ${r.label}`, expect: r.expect });
  out.push({ query: `q[a]=${enc("'")}&q[b][c]=d`, input: 'q as an object', expect: 'no5xx' });
  for (const s of rng.sample(SQL, k(2))) {
    out.push({ query: `sortAsc=${enc(s)}`, input: `sortAsc=${show(s)}`, expect: sortExpect });
  }
  out.push({
    query: `sortDesc=${enc('name; DROP TABLE x')}`,
    input: 'sortDesc with SQL',
    expect: sortExpect,
  });
  out.push({ query: 'sortAsc=name&sortDesc=name', input: 'both sorts', expect: 'refused' });
  for (const f of filters) {
    for (const s of rng.sample(SQL, k(1)))
      out.push({ query: `${f}=${enc(s)}`, input: `${f}=${show(s)}`, expect: 'no5xx' });
  }
  if (filters.length > 0) {
    const f = rng.pick(filters);
    out.push({
      query: `${f}=${RAW_QUERY_VALUES[0].raw}`,
      input: `${f} = ${RAW_QUERY_VALUES[0].label}`,
      expect: 'no5xx',
    });
    out.push({
      query: `${f}=${enc(Array.from({ length: 150 }, (_, i) => `v${i}`).join(','))}`,
      input: `${f} with 150 values`,
      expect: 'no5xx',
    });
  }
  for (const d of rng.sample(BAD_DATES, k(2))) {
    out.push({
      query: `updatedSince=${enc(d)}`,
      input: `updatedSince=${show(d)}`,
      expect: 'refused',
    });
  }
  const s = rng.pick(SQL);
  out.push({
    query: `extras.${enc(s)}=${enc(s)}`,
    input: `extras.<SQL>=<SQL> ${show(s)}`,
    expect: 'no5xx',
  });
  out.push({
    query: `extras.exists=${enc(`${s},a.b`)}`,
    input: 'extras.exists with SQL',
    expect: 'no5xx',
  });
  out.push({
    query: `extras__a__${enc(s)}!=${enc(s)}`,
    input: 'extras__ with SQL',
    expect: 'no5xx',
  });
  out.push({
    query: `extras.${Array.from({ length: 300 }, () => 'a').join('.')}=x`,
    input: 'an extras path 300 deep',
    expect: 'no5xx',
  });
  if (full) {
    out.push({
      query: `extras.k=${enc('!*%_\\*')}`,
      input: 'extras wildcards and escapes',
      expect: 'no5xx',
    });
    out.push({
      query: `q=${enc('\u0001\u001b')}`,
      input: 'q with control characters',
      expect: 'no5xx',
    });
  }
  out.push({
    query: `verbose=true&facetsOnly=${enc("'")}&q=${enc(rng.pick(SQL))}`,
    input: 'verbose, facets and compress with SQL',
    expect: 'no5xx',
    headers: { includeFacets: 'true', compress: 'true' },
  });
  return out;
}

function generate(rng: Rng, tenant: Tenant, t: TestApp): Map<string, Case[]> {
  let counter = 0;
  const n = (): number => (counter += 1);
  const values: Record<string, string> = {
    org: tenant.org,
    user: tenant.owner.username,
    victim: tenant.victim.username,
    victimOrg: tenant.victimOrg,
    source: 'S',
    collection: 'C',
    concept: 'A',
    retire: 'R',
    mapping: 'M1',
    version: 'v1',
    conceptVersion: tenant.conceptVersion,
    mappingVersion: tenant.mappingVersion,
    name: tenant.nameUuid,
    description: tenant.descriptionUuid,
    reference: tenant.referenceId,
    expansion: 'e1',
    entry: tenant.entryId,
    task: tenant.taskId,
    extra: 'k',
    missing: 'no-such-extra',
    token: 'not-a-token',
  };
  const fill = (path: string, override?: [string, string]): string =>
    path.replace(/\{(\w+)\}/g, (_, key: string) =>
      override && override[0] === key ? override[1] : encodeURIComponent(values[key]),
    );
  const cases = new Map<string, Case[]>();
  const add = (c: Case): void => {
    if (!cases.has(c.family)) cases.set(c.family, []);
    cases.get(c.family)!.push(c);
  };
  const authFor = (e: Endpoint): string | null | undefined =>
    e.as === 'admin' ? t.admin : e.as === 'anonymous' ? null : undefined;
  const badAuth = badAuthorizations(rng, tenant.owner.username);
  const firstOfFamily = new Set<string>();
  let bodyRotation = 0;

  for (const e of endpoints(tenant, n)) {
    const auth = authFor(e);
    const path = fill(e.path);
    const base = { family: e.family, method: e.method, auth };
    const withQuery = (p: string, q: string): string => `${p}${p.includes('?') ? '&' : '?'}${q}`;
    const target = e.query ? withQuery(path, e.query) : path;

    // Every path id, poisoned in turn.
    for (const key of [...e.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])) {
      const ids = [
        PATH_IDS.find((p) => p.raw === '%ED%A0%80')!,
        ...rng.sample(PATH_IDS, e.guarded ? 3 : 2),
      ];
      for (const id of ids) {
        add({
          ...base,
          path: fill(e.path, [key, id.raw]),
          body: e.body && !e.guarded ? e.body(n()) : undefined,
          input: `{${key}} = ${id.label}`,
          // A destructive endpoint must refuse what names nothing.
          expect: e.guarded ? 'refused' : id.expect,
        });
      }
    }

    // Lists: paging, q, sorts, every filter, extras filters.
    if (e.filters) {
      const full = e.family === 'global lists';
      for (const q of listQueries(rng, e.filters, full, !e.unsorted)) {
        add({
          ...base,
          path: withQuery(target, q.query),
          input: q.input,
          expect: q.expect,
          headers: q.headers,
        });
      }
    } else if (e.method === 'GET') {
      add({
        ...base,
        path: withQuery(target, `q=${encodeURIComponent(rng.pick(SQL))}&limit=abc`),
        input: 'a detail with list parameters',
        expect: 'no5xx',
      });
    }

    // Malformed credentials (one shared middleware reads them): all of them on the first read
    // and the first write, a few on the first of each family, two on every other endpoint.
    const kindKey = `${e.method === 'GET'}`;
    const auths = !firstOfFamily.has(kindKey)
      ? badAuth
      : rng.sample(badAuth, firstOfFamily.has(`${e.family} ${kindKey}`) ? 2 : 6);
    firstOfFamily.add(kindKey);
    firstOfFamily.add(`${e.family} ${kindKey}`);
    for (const a of auths) {
      add({
        ...base,
        path: target,
        auth: a.value,
        body: e.body && !e.guarded ? e.body(n()) : undefined,
        input: `Authorization: ${a.label}`,
        expect: 'refused',
      });
    }

    if (e.method === 'GET') continue;

    // Bodies that are not JSON, or not well-formed.
    // A destructive endpoint gets only the bodies no handler may see.
    const bodies = BAD_BODIES.filter((b) => !e.guarded || b.expect === undefined);
    for (let i = 0; i < (e.guarded ? 2 : 3); i += 1) {
      const bad = bodies[bodyRotation % bodies.length];
      bodyRotation += 1;
      add({
        ...base,
        path: target,
        raw: { contentType: bad.contentType, data: bad.data },
        input: `a body: ${bad.label}`,
        expect: bad.expect ?? 'refused',
      });
    }
    if (e.guarded) continue;

    // Every body field, with every kind of wrong value.
    if (e.body && e.fields) {
      for (const [field, kind] of Object.entries(e.fields)) {
        for (const h of fieldValues(rng, kind)) {
          add({
            ...base,
            path: target,
            body: { ...e.body(n()), [field]: h.value },
            input: `${field} = ${h.label}`,
            expect: h.expect,
          });
        }
      }
      const textField = Object.entries(e.fields).find(
        ([, kind]) => kind === 'text' || kind === 'ident',
      );
      if (textField) {
        add({
          ...base,
          path: target,
          body: { ...e.body(n()), [textField[0]]: hugeString() },
          input: `${textField[0]} = a 1 MB string`,
          expect: 'no5xx',
        });
      }
      add({
        ...base,
        path: target,
        body: [e.body(n())],
        input: 'the body as a list',
        expect: 'no5xx',
      });
      add({
        ...base,
        path: target,
        body: 'a string',
        input: 'the body as a string',
        expect: 'no5xx',
      });
      add({
        ...base,
        path: target,
        body: { ...e.body(n()), unknown_field: { nested: [1, { x: "'" }] } },
        input: 'an unknown field',
        expect: 'no5xx',
      });
    }
    if (e.whole) {
      for (const h of e.whole(rng))
        add({ ...base, path: target, body: h.value, input: h.label, expect: h.expect });
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
  tenant = await buildTenant(t, `hostile${SEED}x${Date.now().toString(36)}`);
  server = await listen(t);
  families = generate(new Rng(SEED), tenant, t);
}, 60_000);

afterAll(async () => {
  console.log(`hostile REST requests per family (seed ${SEED}): ${JSON.stringify(tally(all))}`);
  await server?.close();
  await t?.close();
});

/** In this order: the concept sub-resources before whole-concept edits replace their items. */
const FAMILIES = [
  'users',
  'user/',
  'orgs',
  'repos',
  'versions',
  'concept names',
  'concept descriptions',
  'concept extras',
  'concepts',
  'mappings',
  'mapping extras',
  'references',
  'expansions',
  '$resolveReference',
  'url-registry',
  'tasks',
  'extras',
  'global lists',
];

describe('hostile input on the REST edge never reaches a 500, never hangs, and a refused request writes nothing', () => {
  it('every family is covered', () => {
    expect([...families.keys()].sort()).toEqual([...FAMILIES].sort());
  });

  it.each(FAMILIES)(
    '%s',
    async (family) => {
      const cases = families.get(family) ?? [];
      const reads = cases.filter((c) => c.method === 'GET');
      // Requests that must be refused go first and together: a batch of them may write nothing.
      const writes = cases
        .filter((c) => c.method !== 'GET')
        .sort((a, b) => Number(b.expect === 'refused') - Number(a.expect === 'refused'));
      const defaultAuth = tenant.owner.auth;
      const failures: string[] = [];

      // Reads write nothing, whatever they are answered.
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
      all.push(...read.outcomes, ...written.outcomes);
      expect(report(`${family} (${cases.length} requests)`, failures)).toBe('');
    },
    180_000,
  );

  it('leaves the database consistent', async () => {
    expect(await brokenInvariants(t, tenant)).toEqual([]);
    // The tenant is still whole: its source, collection and concept answer as before.
    for (const path of [
      tenant.source,
      tenant.collection,
      `${tenant.source}concepts/A/`,
      `/orgs/${tenant.org}/`,
    ]) {
      const res = await fetchStatus(path);
      expect(`${path} ${res}`).toBe(`${path} 200`);
    }
  });
});

async function fetchStatus(path: string): Promise<number> {
  const o = await send(
    server,
    { family: 'check', method: 'GET', path, input: 'check', expect: 'no5xx' },
    tenant.owner.auth,
  );
  return o.status;
}
