import type { Request } from 'express';
import { API_VERSION } from '../http';
import { EXPANSION_PARAMETERS } from './options';

const SOFTWARE = 'OCL-compatible terminology registry';
const RELEASE_DATE = '2026-11-25';

const op = (name: string, type?: string) => ({
  name,
  definition: `http://hl7.org/fhir/OperationDefinition/${type ? `${type}-` : ''}${name}`,
});

function baseOf(req: Request): string {
  return `${req.protocol}://${req.get('host') ?? 'localhost'}/fhir`;
}

/** `GET /fhir/metadata`: the CapabilityStatement of a FHIR R4 terminology server. */
export function capabilityStatement(req: Request) {
  const search = [
    { name: 'url', type: 'uri' },
    { name: 'version', type: 'token' },
    { name: 'name', type: 'string' },
    { name: 'title', type: 'string' },
    { name: 'status', type: 'token' },
    { name: '_id', type: 'token' },
  ];
  const resource = (type: string, operations: Array<{ name: string; definition: string }>) => ({
    type,
    interaction: [
      { code: 'read' },
      { code: 'search-type' },
      { code: 'create' },
      { code: 'update' },
      { code: 'delete' },
    ],
    searchParam: search,
    operation: operations,
  });
  return {
    resourceType: 'CapabilityStatement',
    extension: [
      {
        url: 'http://hl7.org/fhir/uv/application-feature/StructureDefinition/feature',
        extension: [
          {
            url: 'definition',
            valueCanonical: 'http://hl7.org/fhir/uv/tx-tests/FeatureDefinition/test-version',
          },
          { url: 'value', valueCode: '1.7.0' },
        ],
      },
      {
        url: 'http://hl7.org/fhir/uv/application-feature/StructureDefinition/feature',
        extension: [
          {
            url: 'definition',
            valueCanonical:
              'http://hl7.org/fhir/uv/tx-ecosystem/FeatureDefinition/CodeSystemAsParameter',
          },
          { url: 'value', valueBoolean: true },
        ],
      },
    ],
    url: `${baseOf(req)}/metadata`,
    version: API_VERSION,
    name: 'TerminologyRegistry',
    title: 'Terminology registry FHIR R4 terminology server',
    status: 'active',
    date: RELEASE_DATE,
    kind: 'instance',
    instantiates: ['http://hl7.org/fhir/CapabilityStatement/terminology-server'],
    software: { name: SOFTWARE, version: API_VERSION, releaseDate: RELEASE_DATE },
    implementation: { description: SOFTWARE, url: baseOf(req) },
    fhirVersion: '4.0.1',
    format: ['application/fhir+json', 'application/json'],
    rest: [
      {
        mode: 'server',
        resource: [
          resource('CodeSystem', [
            op('lookup', 'CodeSystem'),
            op('validate-code', 'CodeSystem'),
            op('subsumes', 'CodeSystem'),
          ]),
          resource('ValueSet', [op('expand', 'ValueSet'), op('validate-code', 'ValueSet')]),
          resource('ConceptMap', [op('translate', 'ConceptMap')]),
        ],
        operation: [
          { name: 'versions', definition: `${baseOf(req)}/OperationDefinition/versions` },
        ],
      },
    ],
  };
}

/** `GET /fhir/metadata?mode=terminology`: the TerminologyCapabilities. */
export function terminologyCapabilities(req: Request) {
  return {
    resourceType: 'TerminologyCapabilities',
    url: `${baseOf(req)}/metadata?mode=terminology`,
    version: API_VERSION,
    name: 'TerminologyRegistry',
    title: 'Terminology registry terminology capabilities',
    status: 'active',
    date: RELEASE_DATE,
    kind: 'instance',
    software: { name: SOFTWARE, version: API_VERSION },
    codeSearch: 'all',
    expansion: {
      hierarchical: false,
      paging: true,
      incomplete: false,
      parameter: EXPANSION_PARAMETERS.map((name) => ({ name })),
      textFilter: 'Each word of the filter starts a word of the display or a designation.',
    },
    validateCode: { translations: false },
    translation: { needsMap: true },
    closure: { translation: false },
  };
}

/** `$versions`: the FHIR versions this server speaks. */
export function versions() {
  return {
    resourceType: 'Parameters',
    parameter: [
      { name: 'version', valueCode: '4.0' },
      { name: 'default', valueCode: '4.0' },
    ],
  };
}
