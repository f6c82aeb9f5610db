import type { CodeSystemModel, ConceptEntry } from './code-system';
import { canonicalOf } from './expand';
import type { Coding, ConceptProperty } from './fhir';
import { TerminologyError } from './issues';
import { PREFERRED_FOR_LANGUAGE, preferredDisplay, type LanguagePreference } from './languages';
import type { TerminologyLibrary } from './library';

export interface LookupInput {
  coding: Coding;
  /** `property` codes wanted; `*` for all. None: the defaults. */
  properties: string[];
  languages?: LanguagePreference;
  useSupplements: string[];
}

/** The code system version a coding names, with its supplements; 404 when there is none. */
export async function codeSystemOf(
  library: TerminologyLibrary,
  coding: Coding,
  useSupplements: string[],
): Promise<CodeSystemModel> {
  if (!coding.system) throw TerminologyError.invalid('No system was given for the code', 'system');
  let model = await library.codeSystem(coding.system, coding.version);
  if (!model) {
    const known = (await library.codeSystemVersions(coding.system))
      .map((r) => r.version)
      .filter(Boolean);
    throw TerminologyError.notFound(
      coding.version && known.length > 0
        ? `A definition for CodeSystem '${coding.system}' version '${coding.version}' could not be found. Valid versions: ${known.join(', ')}`
        : `A definition for CodeSystem '${coding.system}' could not be found`,
      'UNKNOWN_CODESYSTEM',
      'system',
    );
  }
  for (const canonical of useSupplements) {
    const supplement = await library.supplement(canonical);
    if (!supplement) {
      throw TerminologyError.notFound(
        `Required supplement not found: ${canonical}`,
        'VALUESET_SUPPLEMENT_MISSING',
      );
    }
    model = model.withSupplement(supplement);
  }
  return model;
}

/** A designation of a looked-up concept. */
export interface LookupDesignation {
  language?: string;
  use?: Coding;
  /** The supplement (`url|version`) it came from. */
  source?: string;
  value: string;
}

/** A property of a looked-up concept: a FHIR value (`valueCode`, `valueBoolean`, …). */
export interface LookupProperty {
  code: string;
  /** The display of a related concept (`parent`, `child`). */
  description?: string;
  value: Omit<ConceptProperty, 'code'>;
}

/** What CodeSystem/$lookup answers: the concept and the code system version it is read in. */
export interface LookupResult {
  /** The code system's name (else its URL). */
  name: string;
  system: string;
  version?: string;
  code: string;
  display?: string;
  definition?: string;
  abstract: boolean;
  designations: LookupDesignation[];
  /** In code order. */
  properties: LookupProperty[];
  /** The supplements used (`url|version`). */
  usedSupplements: string[];
}

/** CodeSystem/$lookup: a concept's display, definition, designations and properties. */
export async function lookup(
  library: TerminologyLibrary,
  input: LookupInput,
): Promise<LookupResult> {
  const model = await codeSystemOf(library, input.coding, input.useSupplements);
  const code = input.coding.code;
  const entry = code === undefined ? undefined : model.concept(code);
  if (!entry) {
    throw TerminologyError.notFound(
      model.version
        ? `Unknown code '${code}' in the CodeSystem '${model.url}' version '${model.version}'`
        : `Unknown code '${code}' in the CodeSystem '${model.url}'`,
      'Unknown_Code_in_Version',
      'code',
    );
  }
  const wants = (name: string) =>
    input.properties.length === 0 ||
    input.properties.includes('*') ||
    input.properties.includes(name);
  const designations: LookupDesignation[] = [];
  if (wants('designation')) {
    for (const designation of entry.designations) {
      designations.push({
        ...(designation.language ? { language: designation.language } : {}),
        ...(designation.use
          ? {
              use: { ...designation.use, display: designation.use.display ?? designation.use.code },
            }
          : {}),
        ...(model.designationSources.get(designation)
          ? { source: model.designationSources.get(designation) }
          : {}),
        value: designation.value,
      });
    }
    if (entry.display !== undefined) {
      designations.push({
        language: model.resource.language ?? 'en',
        use: PREFERRED_FOR_LANGUAGE,
        value: entry.display,
      });
    }
  }
  return {
    name: model.resource.name ?? model.url,
    system: model.url,
    ...(model.version ? { version: model.version } : {}),
    code: entry.code,
    display: preferredDisplay(model, entry, input.languages),
    ...(entry.definition !== undefined && wants('definition')
      ? { definition: entry.definition }
      : {}),
    abstract: entry.abstract,
    designations,
    properties: propertiesOf(model, entry, wants),
    usedSupplements: model.supplements.map(canonicalOf),
  };
}

function propertiesOf(
  model: CodeSystemModel,
  entry: ConceptEntry,
  wanted: (name: string) => boolean,
): LookupProperty[] {
  const out: LookupProperty[] = [];
  const related = (name: string, other: ConceptEntry): LookupProperty => ({
    code: name,
    ...(other.display !== undefined ? { description: other.display } : {}),
    value: { valueCode: other.code },
  });
  const own = new Set(entry.properties.map((p) => p.code));
  const parentCode = model.standardProperty('parent');
  const childCode = model.standardProperty('child');
  if (wanted('child') && !own.has(childCode))
    for (const child of entry.children) out.push(related('child', child));
  if (wanted('inactive') && !own.has('inactive'))
    out.push({ code: 'inactive', value: { valueBoolean: entry.inactive } });
  if (wanted('parent') && !own.has(parentCode))
    for (const parent of entry.parents) out.push(related('parent', parent));
  for (const property of entry.properties) {
    if (!wanted(property.code)) continue;
    const { code, ...value } = property;
    out.push({ code, value });
  }
  return out.sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
}

/** How code A relates to code B. */
export type SubsumptionOutcome = 'equivalent' | 'subsumes' | 'subsumed-by' | 'not-subsumed';

/** What CodeSystem/$subsumes answers. */
export interface SubsumptionResult {
  outcome: SubsumptionOutcome;
  /** The code system version the codes were read in. */
  system: string;
  version?: string;
}

/** CodeSystem/$subsumes: how two codes of one code system relate. */
export async function subsumes(
  library: TerminologyLibrary,
  a: Coding,
  b: Coding,
): Promise<SubsumptionResult> {
  if (a.system && b.system && a.system !== b.system) {
    throw TerminologyError.invalid(
      `The codes are from different code systems (${a.system} and ${b.system}); subsumption cannot be determined`,
    );
  }
  const model = await codeSystemOf(library, { ...a, system: a.system ?? b.system }, []);
  const entryA = a.code === undefined ? undefined : model.concept(a.code);
  const entryB = b.code === undefined ? undefined : model.concept(b.code);
  for (const [entry, coding, name] of [
    [entryA, a, 'codeA'],
    [entryB, b, 'codeB'],
  ] as const) {
    if (!entry) {
      throw TerminologyError.notFound(
        `Unknown code '${coding.code}' in the CodeSystem '${model.url}'`,
        'Unknown_Code_in',
        name,
      );
    }
  }
  const x = entryA as ConceptEntry;
  const y = entryB as ConceptEntry;
  const outcome: SubsumptionOutcome =
    x === y
      ? 'equivalent'
      : model.subsumes(x, y)
        ? 'subsumes'
        : model.subsumes(y, x)
          ? 'subsumed-by'
          : 'not-subsumed';
  return { outcome, system: model.url, ...(model.version ? { version: model.version } : {}) };
}
