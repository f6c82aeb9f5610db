import type { CodeSystemModel, ConceptEntry } from './code-system';
import { canonicalOf } from './expand';
import type { Coding, ParameterValue } from './fhir';
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

/** CodeSystem/$lookup: a concept's display, definition, designations and properties. */
export async function lookup(
  library: TerminologyLibrary,
  input: LookupInput,
): Promise<ParameterValue[]> {
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
  const out: ParameterValue[] = [];
  out.push({ name: 'abstract', valueBoolean: entry.abstract });
  out.push({ name: 'code', valueCode: entry.code });
  if (entry.definition !== undefined && wants('definition'))
    out.push({ name: 'definition', valueString: entry.definition });
  if (wants('designation')) {
    for (const designation of entry.designations) {
      const part: ParameterValue[] = [];
      if (designation.language) part.push({ name: 'language', valueCode: designation.language });
      if (designation.use)
        part.push({
          name: 'use',
          valueCoding: {
            ...designation.use,
            display: designation.use.display ?? designation.use.code,
          },
        });
      const source = model.designationSources.get(designation);
      if (source) part.push({ name: 'source', valueCanonical: source });
      part.push({ name: 'value', valueString: designation.value });
      out.push({ name: 'designation', part });
    }
    if (entry.display !== undefined) {
      out.push({
        name: 'designation',
        part: [
          { name: 'language', valueCode: model.resource.language ?? 'en' },
          { name: 'use', valueCoding: PREFERRED_FOR_LANGUAGE },
          { name: 'value', valueString: entry.display },
        ],
      });
    }
  }
  const display = preferredDisplay(model, entry, input.languages);
  if (display !== undefined) out.push({ name: 'display', valueString: display });
  out.push({ name: 'name', valueString: model.resource.name ?? model.url });
  out.push(...propertiesOf(model, entry, wants));
  out.push({ name: 'system', valueUri: model.url });
  for (const supplement of model.supplements)
    out.push({ name: 'used-supplement', valueCanonical: canonicalOf(supplement) });
  if (model.version) out.push({ name: 'version', valueString: model.version });
  return out;
}

function propertiesOf(
  model: CodeSystemModel,
  entry: ConceptEntry,
  wanted: (name: string) => boolean,
): ParameterValue[] {
  const out: ParameterValue[] = [];
  const related = (name: string, other: ConceptEntry): ParameterValue => ({
    name: 'property',
    part: [
      { name: 'code', valueCode: name },
      ...(other.display !== undefined ? [{ name: 'description', valueString: other.display }] : []),
      { name: 'value', valueCode: other.code },
    ],
  });
  const own = new Set(entry.properties.map((p) => p.code));
  const parentCode = model.standardProperty('parent');
  const childCode = model.standardProperty('child');
  if (wanted('child') && !own.has(childCode))
    for (const child of entry.children) out.push(related('child', child));
  if (wanted('inactive') && !own.has('inactive'))
    out.push({
      name: 'property',
      part: [
        { name: 'code', valueCode: 'inactive' },
        { name: 'value', valueBoolean: entry.inactive },
      ],
    });
  if (wanted('parent') && !own.has(parentCode))
    for (const parent of entry.parents) out.push(related('parent', parent));
  for (const property of entry.properties) {
    if (!wanted(property.code)) continue;
    const { code, ...value } = property;
    out.push({
      name: 'property',
      part: [
        { name: 'code', valueCode: code },
        { name: 'value', ...value },
      ],
    });
  }
  return out.sort((a, b) => {
    const ca = a.part?.[0]?.valueCode as string;
    const cb = b.part?.[0]?.valueCode as string;
    return ca < cb ? -1 : ca > cb ? 1 : 0;
  });
}

/** CodeSystem/$subsumes: how two codes of one code system relate. */
export async function subsumes(
  library: TerminologyLibrary,
  a: Coding,
  b: Coding,
): Promise<'equivalent' | 'subsumes' | 'subsumed-by' | 'not-subsumed'> {
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
  if (x === y) return 'equivalent';
  if (model.subsumes(x, y)) return 'subsumes';
  if (model.subsumes(y, x)) return 'subsumed-by';
  return 'not-subsumed';
}
