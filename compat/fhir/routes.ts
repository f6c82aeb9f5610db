import type { FhirResourceType } from '../../src/services/terminology/fhir-resource.service';

/**
 * Where a FHIR parameter (or path parameter) goes in the GraphQL twin: the name of an argument
 * (`coding.code`: a field of an input argument), or why it has none.
 */
export type ParameterTwin = string | { reason: string };

/** The GraphQL twin of a route: a root field (query or mutation), or why there is none. */
export type RouteTwin = { field: string } | { transportOnly: string };

/** What a FHIR route does. */
export type FhirInteraction =
  | 'metadata'
  | 'versions'
  | 'operation'
  | 'create'
  | 'update'
  | 'delete'
  | 'search'
  | 'read-by-id'
  | 'read'
  | 'history'
  | 'version-read'
  | 'not-found';

/** The namespace a route answers in (spec operations §4.7). */
export type FhirNamespaceKind = 'fhir' | 'org' | 'user';

export interface FhirRoute {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'ALL';
  /** The path, Express syntax, `$` as written (escaped when registered). */
  path: string;
  interaction: FhirInteraction;
  namespace: FhirNamespaceKind;
  type?: FhirResourceType;
  /** An operation's name (`lookup`), for `interaction: 'operation'`. */
  operation?: string;
  /** `/X/:id/$op`: the instance-level form of an operation. */
  instance?: boolean;
  twin: RouteTwin;
  /** The parameters it reads (query string, `Parameters` body), each with its GraphQL twin. */
  parameters: Record<string, ParameterTwin>;
}

export const RESOURCE_TYPES: FhirResourceType[] = ['CodeSystem', 'ValueSet', 'ConceptMap'];

/** The operations by resource type, in the order they are registered. */
export const OPERATION_NAMES: Record<FhirResourceType, string[]> = {
  CodeSystem: ['lookup', 'validate-code', 'subsumes'],
  ValueSet: ['expand', 'validate-code', 'batch-validate-code'],
  ConceptMap: ['translate'],
};

const NAMESPACES: Array<{ kind: FhirNamespaceKind; prefix: string }> = [
  { kind: 'fhir', prefix: '/fhir' },
  { kind: 'org', prefix: '/orgs/:org' },
  { kind: 'user', prefix: '/users/:user' },
];
const OWNERS = NAMESPACES.filter((n) => n.kind !== 'fhir');

const TX_RESOURCE: ParameterTwin = 'txResources';
const FORMAT: ParameterTwin = {
  reason: 'FHIR content negotiation (JSON only); GraphQL answers JSON',
};
const OWNER_IGNORED: ParameterTwin = {
  reason:
    'the FHIR edge answers operations alike under every prefix: content is found by canonical URL among all the caller may see',
};
const ID_IGNORED: ParameterTwin = {
  reason:
    "the FHIR edge does not read the instance id of this operation (the code system or map is the parameters' canonical URL)",
};

/** The expansion parameters (`EXPANSION_PARAMETERS` in options.ts), shared by $expand and $validate-code. */
const EXPANSION: Record<string, ParameterTwin> = {
  activeOnly: 'activeOnly',
  'check-system-version': 'checkSystemVersions',
  count: 'count',
  'default-valueset-version': 'defaultValueSetVersions',
  designation: 'designations',
  displayLanguage: 'displayLanguage',
  excludeNested: 'excludeNested',
  filter: 'filter',
  'force-system-version': 'forceSystemVersions',
  includeDefinition: {
    reason:
      'how the FHIR ValueSet is rendered; GraphQL selects `ValueSetExpansion.definition` instead',
  },
  includeDesignations: 'includeDesignations',
  offset: 'offset',
  property: 'properties',
  'system-version': 'systemVersions',
  'tx-resource': TX_RESOURCE,
  useSupplement: 'useSupplements',
};

/** The value set of a ValueSet operation. */
const VALUE_SET_TARGET: Record<string, ParameterTwin> = {
  url: 'url',
  context: { reason: 'an alias of `url`' },
  valueSetVersion: 'valueSetVersion',
  valueSet: 'valueSet',
};

/**
 * The code of a $validate-code, in its three forms. GraphQL takes `code`, `system` and `display`
 * as the coding's fields: the answer is the same, but for the issues' `expression`, which names
 * `Coding.code` (FHIR's `coding` form) where FHIR's bare `code` form names `code`.
 */
const CODE_INPUT: Record<string, ParameterTwin> = {
  codeableConcept: 'codeableConcept',
  coding: 'coding',
  code: 'coding.code',
  system: 'coding.system',
  display: 'coding.display',
};

const VALIDATION: Record<string, ParameterTwin> = {
  ...EXPANSION,
  inferSystem: 'inferSystem',
  'lenient-display-validation': 'lenientDisplay',
  abstract: 'abstract',
  'valueset-membership-only': 'membershipOnly',
};

/** The parameters each operation reads (see the operation's file), with their twins. */
const OPERATION_PARAMETERS: Record<string, Record<string, ParameterTwin>> = {
  'CodeSystem/lookup': {
    coding: 'coding',
    code: 'coding.code',
    system: 'coding.system',
    version: 'coding.version',
    property: 'properties',
    displayLanguage: 'displayLanguage',
    useSupplement: 'useSupplements',
    'tx-resource': TX_RESOURCE,
  },
  'CodeSystem/validate-code': {
    ...CODE_INPUT,
    ...VALIDATION,
    url: { reason: 'the code system: `coding.system`' },
    version: 'coding.version',
    systemVersion: { reason: 'not read by CodeSystem/$validate-code (`coding.version`)' },
  },
  'CodeSystem/subsumes': {
    codingA: 'codingA',
    codingB: 'codingB',
    codeA: 'codingA.code',
    codeB: 'codingB.code',
    system: 'codingA.system',
    version: 'codingA.version',
    'tx-resource': TX_RESOURCE,
  },
  'ValueSet/expand': { ...VALUE_SET_TARGET, ...EXPANSION },
  'ValueSet/validate-code': {
    ...VALUE_SET_TARGET,
    ...CODE_INPUT,
    ...VALIDATION,
    systemVersion: 'systemVersion',
  },
  'ValueSet/batch-validate-code': {
    validation: 'validations',
    ...VALUE_SET_TARGET,
    ...CODE_INPUT,
    ...VALIDATION,
    systemVersion: 'systemVersion',
  },
  'ConceptMap/translate': {
    url: 'url',
    conceptMapVersion: 'conceptMapVersion',
    coding: 'coding',
    code: 'coding.code',
    system: 'coding.system',
    version: 'coding.version',
    targetSystem: 'targetSystem',
    reverse: 'reverse',
    targetsystem: { reason: 'a misspelling of `targetSystem` some clients send' },
    sourceCoding: { reason: "R5's name of `coding`" },
    sourceSystem: { reason: "R5's name of `system` (`coding.system`)" },
    sourceCode: { reason: "R5's name of `code` (`coding.code`)" },
    targetCode: { reason: "R5's reverse form: `coding` with `reverse: true`" },
    'tx-resource': TX_RESOURCE,
  },
};

/** GraphQL twins of the operations. */
const OPERATION_TWINS: Record<string, string> = {
  'CodeSystem/lookup': 'lookup',
  'CodeSystem/validate-code': 'validateCode',
  'CodeSystem/subsumes': 'subsumes',
  'ValueSet/expand': 'expandValueSet',
  'ValueSet/validate-code': 'validateCode',
  'ValueSet/batch-validate-code': 'batchValidateCode',
  'ConceptMap/translate': 'translate',
};

/** The ValueSet operations read the instance id (`valueSetTarget`); the others do not. */
const READS_INSTANCE_ID = new Set(['ValueSet']);

/** The search parameters of spec operations §4.7 and FHIR's `_count`, `_summary`, `_elements`. */
const SEARCH_PARAMETERS: Record<string, ParameterTwin> = {
  url: 'url',
  version: 'version',
  name: 'name',
  title: 'title',
  status: 'status',
  _id: 'ids',
  _count: 'count',
  page: 'page',
  _summary: {
    reason:
      '`true`: `definitionsOnly`, `count`: `countOnly`; `text`, `data`, `false` change nothing here',
  },
  _elements: {
    reason:
      "which elements of the FHIR JSON to keep; GraphQL's JSON answer is whole (`definitionsOnly` leaves the content out)",
  },
  _format: FORMAT,
};

const OWNER_PARAMETER: ParameterTwin = 'owner';
const CONTENT_PAGE: Record<string, ParameterTwin> = {
  page: 'page',
  _summary: SEARCH_PARAMETERS._summary,
  _elements: SEARCH_PARAMETERS._elements,
  _format: FORMAT,
};

/** A resource type's GraphQL read field: `codeSystem`, `valueSet`, `conceptMap`. */
function readField(type: FhirResourceType): string {
  return type.charAt(0).toLowerCase() + type.slice(1);
}

function ownerParameters(kind: FhirNamespaceKind): Record<string, ParameterTwin> {
  if (kind === 'org') return { ':org': OWNER_PARAMETER };
  if (kind === 'user') return { ':user': OWNER_PARAMETER };
  return {};
}

/**
 * Every route of the FHIR edge, in the order it is registered (`fhirRouter`): what it does, the
 * parameters it reads, and its GraphQL twin or why it has none. `test/graphql/fhir-parity.test.ts`
 * checks the table against the app's routes and the schema.
 */
function fhirRoutes(): FhirRoute[] {
  const rows: FhirRoute[] = [
    {
      method: 'GET',
      path: '/fhir/metadata',
      interaction: 'metadata',
      namespace: 'fhir',
      twin: {
        transportOnly:
          "the FHIR server's CapabilityStatement and TerminologyCapabilities describe the FHIR endpoint; GraphQL describes itself by introspection",
      },
      parameters: {
        mode: { reason: 'which description of the FHIR endpoint' },
        _format: FORMAT,
      },
    },
    {
      method: 'GET',
      path: '/fhir/$versions',
      interaction: 'versions',
      namespace: 'fhir',
      twin: { transportOnly: 'the FHIR versions the FHIR endpoint speaks' },
      parameters: { _format: FORMAT },
    },
  ];
  for (const { kind, prefix } of NAMESPACES) {
    for (const type of RESOURCE_TYPES) {
      for (const name of OPERATION_NAMES[type]) {
        const key = `${type}/${name}`;
        for (const instance of [false, true]) {
          const path = instance ? `${prefix}/${type}/:id/$${name}` : `${prefix}/${type}/$${name}`;
          const owner: Record<string, ParameterTwin> =
            kind === 'fhir' ? {} : { [`:${kind}`]: OWNER_IGNORED };
          const id: Record<string, ParameterTwin> = instance
            ? { ':id': READS_INSTANCE_ID.has(type) ? 'id' : ID_IGNORED }
            : {};
          const parameters = { ...owner, ...id, ...OPERATION_PARAMETERS[key], _format: FORMAT };
          for (const method of ['GET', 'POST'] as const) {
            rows.push({
              method,
              path,
              interaction: 'operation',
              namespace: kind,
              type,
              operation: name,
              instance,
              twin: { field: OPERATION_TWINS[key] },
              parameters,
            });
          }
        }
      }
    }
  }
  for (const type of RESOURCE_TYPES) {
    for (const { kind, prefix } of NAMESPACES) {
      rows.push({
        method: 'POST',
        path: `${prefix}/${type}`,
        interaction: 'create',
        namespace: kind,
        type,
        twin: { field: 'createFhirResource' },
        parameters: { ...ownerParameters(kind), body: 'resource', _format: FORMAT },
      });
    }
    for (const { kind, prefix } of NAMESPACES) {
      const parameters = { ...ownerParameters(kind), ':id': 'id', _format: FORMAT };
      rows.push(
        {
          method: 'PUT',
          path: `${prefix}/${type}/:id`,
          interaction: 'update',
          namespace: kind,
          type,
          twin: { field: 'updateFhirResource' },
          parameters: { ...parameters, body: 'resource' },
        },
        {
          method: 'DELETE',
          path: `${prefix}/${type}/:id`,
          interaction: 'delete',
          namespace: kind,
          type,
          twin: { field: 'deleteFhirResource' },
          parameters,
        },
      );
    }
    rows.push(
      {
        method: 'GET',
        path: `/fhir/${type}`,
        interaction: 'search',
        namespace: 'fhir',
        type,
        twin: { field: 'fhirResources' },
        parameters: SEARCH_PARAMETERS,
      },
      {
        method: 'GET',
        path: `/fhir/${type}/:id`,
        interaction: 'read-by-id',
        namespace: 'fhir',
        type,
        twin: { field: readField(type) },
        parameters: { ':id': 'id', ...CONTENT_PAGE },
      },
    );
    for (const { kind, prefix } of OWNERS) {
      const base = `${prefix}/${type}`;
      const owner = ownerParameters(kind);
      rows.push(
        {
          method: 'GET',
          path: base,
          interaction: 'search',
          namespace: kind,
          type,
          twin: { field: 'fhirResources' },
          parameters: { ...owner, ...SEARCH_PARAMETERS },
        },
        {
          method: 'GET',
          path: `${base}/:id`,
          interaction: 'read',
          namespace: kind,
          type,
          twin: { field: readField(type) },
          parameters: { ...owner, ':id': 'id', ...CONTENT_PAGE },
        },
        {
          method: 'GET',
          path: `${base}/:id/version`,
          interaction: 'history',
          namespace: kind,
          type,
          twin: { field: 'fhirResourceVersions' },
          parameters: {
            ...owner,
            ':id': 'id',
            _count: 'count',
            page: 'page',
            _summary: SEARCH_PARAMETERS._summary,
            _elements: SEARCH_PARAMETERS._elements,
            _format: FORMAT,
          },
        },
        {
          method: 'GET',
          path: `${base}/:id/version/:version`,
          interaction: 'version-read',
          namespace: kind,
          type,
          twin: { field: readField(type) },
          parameters: {
            ...owner,
            ':id': 'id',
            ':version': 'version',
            _count: { reason: '`version/*` lists the versions: `fhirResourceVersions(count)`' },
            ...CONTENT_PAGE,
          },
        },
      );
    }
  }
  rows.push({
    method: 'ALL',
    path: '/fhir/{*rest}',
    interaction: 'not-found',
    namespace: 'fhir',
    twin: { transportOnly: "the FHIR edge's OperationOutcome for a path it does not serve" },
    parameters: {},
  });
  return rows;
}

export const FHIR_ROUTES: readonly FhirRoute[] = fhirRoutes();
