/**
 * The FHIR shapes the terminology services work on: loosely typed JSON (R4 with the R5 fields
 * terminology servers exchange), read through small helpers that never trust their input.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface Coding {
  system?: string;
  version?: string;
  code?: string;
  display?: string;
  userSelected?: boolean;
}

export interface CodeableConcept {
  coding?: Coding[];
  text?: string;
}

export interface Extension {
  url: string;
  [value: string]: Json | undefined;
}

export interface Designation {
  language?: string;
  use?: Coding;
  additionalUse?: Coding[];
  value: string;
  extension?: Extension[];
}

export interface ConceptProperty {
  code: string;
  valueCode?: string;
  valueCoding?: Coding;
  valueString?: string;
  valueInteger?: number;
  valueBoolean?: boolean;
  valueDateTime?: string;
  valueDecimal?: number;
}

export interface CodeSystemConcept {
  code: string;
  display?: string;
  definition?: string;
  designation?: Designation[];
  property?: ConceptProperty[];
  concept?: CodeSystemConcept[];
  extension?: Extension[];
}

export interface PropertyDefinition {
  code: string;
  uri?: string;
  description?: string;
  type?: string;
}

/** Fields every canonical terminology resource has. */
export interface CanonicalResource {
  resourceType: string;
  id?: string;
  meta?: JsonObject;
  url?: string;
  identifier?: JsonObject[];
  version?: string;
  name?: string;
  title?: string;
  status?: string;
  experimental?: boolean;
  date?: string;
  publisher?: string;
  description?: string;
  language?: string;
  extension?: Extension[];
  [field: string]: unknown;
}

export interface CodeSystemResource extends CanonicalResource {
  resourceType: 'CodeSystem';
  caseSensitive?: boolean;
  valueSet?: string;
  hierarchyMeaning?: string;
  content?: string;
  supplements?: string;
  count?: number;
  property?: PropertyDefinition[];
  filter?: JsonObject[];
  concept?: CodeSystemConcept[];
}

export interface ConceptFilter {
  property: string;
  op: string;
  value: string;
}

export interface ConceptSetComponent {
  system?: string;
  version?: string;
  concept?: Array<{
    code: string;
    display?: string;
    designation?: Designation[];
    extension?: Extension[];
  }>;
  filter?: ConceptFilter[];
  valueSet?: string[];
}

export interface ValueSetResource extends CanonicalResource {
  resourceType: 'ValueSet';
  /** Resources inside this one, referenced as `#id`. */
  contained?: CanonicalResource[];
  immutable?: boolean;
  compose?: {
    extension?: Extension[];
    lockedDate?: string;
    inactive?: boolean;
    include?: ConceptSetComponent[];
    exclude?: ConceptSetComponent[];
  };
  expansion?: JsonObject;
}

export interface ConceptMapResource extends CanonicalResource {
  resourceType: 'ConceptMap';
  sourceUri?: string;
  sourceCanonical?: string;
  targetUri?: string;
  targetCanonical?: string;
  group?: Array<{
    source?: string;
    sourceVersion?: string;
    target?: string;
    targetVersion?: string;
    element?: Array<{
      code?: string;
      display?: string;
      target?: Array<{
        code?: string;
        display?: string;
        equivalence?: string;
        relationship?: string;
        comment?: string;
        extension?: Extension[];
      }>;
    }>;
  }>;
}

export type TerminologyResource = CodeSystemResource | ValueSetResource | ConceptMapResource;

export interface ParameterValue {
  name: string;
  resource?: JsonObject;
  part?: ParameterValue[];
  [value: string]: unknown;
}

export interface ParametersResource {
  resourceType: 'Parameters';
  parameter?: ParameterValue[];
}

export interface Issue {
  severity: 'fatal' | 'error' | 'warning' | 'information';
  code: string;
  details?: { coding?: Coding[]; text?: string };
  diagnostics?: string;
  location?: string[];
  expression?: string[];
  extension?: Extension[];
}

export interface OperationOutcomeResource {
  resourceType: 'OperationOutcome';
  issue: Issue[];
}

const STANDARDS_STATUS =
  'http://hl7.org/fhir/StructureDefinition/structuredefinition-standards-status';

/** The standards status an element's extensions give it (`deprecated`, `withdrawn`, …). */
export function standardsStatusOf(element: { extension?: Extension[] }): string | undefined {
  const found = (element.extension ?? []).find((e) => e.url === STANDARDS_STATUS)?.valueCode;
  return typeof found === 'string' ? found : undefined;
}

/** Shared by every request that reads it: frozen, so that no reader can change it for others. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value of a `value[x]` element, whatever its type. */
export function valueOf(element: Record<string, unknown>): unknown {
  for (const [key, value] of Object.entries(element)) {
    if (key.startsWith('value') && key.length > 5) return value;
  }
  return undefined;
}

/** The `value[x]` type suffix of an element (`Code`, `Coding`, …). */
export function valueTypeOf(element: Record<string, unknown>): string | undefined {
  for (const key of Object.keys(element)) {
    if (key.startsWith('value') && key.length > 5) return key.slice(5);
  }
  return undefined;
}
