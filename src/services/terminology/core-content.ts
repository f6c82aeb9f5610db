import {
  deepFreeze,
  type CodeSystemResource,
  type TerminologyResource,
  type ValueSetResource,
} from './fhir';

/**
 * Code systems and value sets of the FHIR R4 specification itself (4.0.1, CC0) that every
 * terminology server knows without anyone loading them: the operations find them by canonical
 * URL when neither the request's `tx-resource`s nor stored content name that URL and version.
 * They are not stored repositories, so the resource searches do not list them.
 */
const R4 = '4.0.1';

function coreCodeSystem(
  id: string,
  title: string,
  concepts: Array<[code: string, display: string, definition: string]>,
): CodeSystemResource {
  return {
    resourceType: 'CodeSystem',
    id,
    url: `http://hl7.org/fhir/${id}`,
    version: R4,
    name: title.replace(/\s+/g, ''),
    title,
    status: 'active',
    experimental: false,
    publisher: 'HL7 (FHIR Project)',
    caseSensitive: true,
    valueSet: `http://hl7.org/fhir/ValueSet/${id}`,
    content: 'complete',
    count: concepts.length,
    concept: concepts.map(([code, display, definition]) => ({ code, display, definition })),
  };
}

function wholeSystemValueSet(system: CodeSystemResource): ValueSetResource {
  return {
    resourceType: 'ValueSet',
    id: system.id,
    url: system.valueSet,
    version: R4,
    name: system.name,
    title: system.title,
    status: 'active',
    experimental: false,
    publisher: 'HL7 (FHIR Project)',
    immutable: true,
    compose: { include: [{ system: system.url }] },
  };
}

const ADMINISTRATIVE_GENDER = coreCodeSystem('administrative-gender', 'Administrative Gender', [
  ['male', 'Male', 'Male.'],
  ['female', 'Female', 'Female.'],
  ['other', 'Other', 'Other.'],
  ['unknown', 'Unknown', 'Unknown.'],
]);

const PUBLICATION_STATUS = coreCodeSystem('publication-status', 'Publication Status', [
  [
    'draft',
    'Draft',
    'This resource is still under development and is not yet considered to be ready for normal use.',
  ],
  ['active', 'Active', 'This resource is ready for normal use.'],
  [
    'retired',
    'Retired',
    'This resource has been withdrawn or superseded and should no longer be used.',
  ],
  [
    'unknown',
    'Unknown',
    'The authoring system does not know which of the status values currently applies for this resource. Note: This concept is not to be used for "other" - one of the listed statuses is presumed to apply, but the authoring/source system does not know which.',
  ],
]);

/** Frozen: shared by every request. */
export const CORE_CONTENT: readonly TerminologyResource[] = deepFreeze([
  ADMINISTRATIVE_GENDER,
  wholeSystemValueSet(ADMINISTRATIVE_GENDER),
  PUBLICATION_STATUS,
  wholeSystemValueSet(PUBLICATION_STATUS),
]);
