import crypto from 'node:crypto';
import { RE2JS } from 're2js';
import type { CodeSystemModel, ConceptEntry } from './code-system';
import type {
  CodeSystemResource,
  ConceptFilter,
  ConceptSetComponent,
  Designation,
  Extension,
  Json,
  JsonObject,
  ParameterValue,
  ValueSetResource,
} from './fhir';
import { valueOf } from './fhir';
import { TerminologyError } from './issues';
import {
  chooseDisplay,
  displayLanguageOf,
  parseLanguages,
  PREFERRED_FOR_LANGUAGE,
  type DisplayChoice,
  type LanguagePreference,
} from './languages';
import { splitCanonical, versionMatches, type TerminologyLibrary } from './library';

/** The expansion parameters of $expand (and what $validate-code shares with it). */
export interface ExpansionOptions {
  activeOnly?: boolean;
  filter?: string;
  count?: number;
  offset?: number;
  excludeNested?: boolean;
  includeDesignations?: boolean;
  /** `designation` parameters: a language, or `system|code` of a use. */
  designations?: string[];
  includeDefinition?: boolean;
  /** `displayLanguage`. */
  languages?: LanguagePreference;
  /** The `Accept-Language` header: the display language when no other names one. */
  acceptLanguage?: string;
  properties?: string[];
  /** `system-version`: versions used where a value set names none (`url|version`). */
  systemVersions?: string[];
  /** `check-system-version`: a value set naming another version is an error. */
  checkSystemVersions?: string[];
  /** `force-system-version`: these versions whatever the value set says. */
  forceSystemVersions?: string[];
  /** `default-valueset-version`: versions of included value sets that name none. */
  defaultValueSetVersions?: string[];
  /** `useSupplement`: supplements to apply (canonicals). */
  useSupplements?: string[];
  /** The most codes an expansion may hold before it is refused as too costly. */
  maxCodes: number;
  /** The request parameters an expansion echoes. */
  echo?: ParameterValue[];
}

/** One code of an expansion, with where it came from. */
export interface ExpandedCode {
  system: string;
  version?: string;
  code: string;
  display?: string;
  model?: CodeSystemModel;
  entry?: ConceptEntry;
  /** Designations the value set itself gives the code. */
  designations?: Designation[];
  /** Extensions the value set itself gives the code. */
  extensions?: Extension[];
}

/** What expanding a value set found, before paging and rendering. */
export interface CodeSet {
  codes: ExpandedCode[];
  /** Code systems (`url|version`) and value sets used, for the expansion's parameters. */
  usedCodeSystems: Set<string>;
  usedValueSets: Set<string>;
  usedSupplements: Set<string>;
  warnings: ParameterValue[];
}

const keyOf = (system: string, code: string) => `${system}#${code}`;

/**
 * The expansion engine: evaluates a value set's compose (includes, excludes, concept lists,
 * filters, included value sets) over the library's code systems.
 */
export class Expander {
  constructor(
    private readonly library: TerminologyLibrary,
    private readonly options: ExpansionOptions,
  ) {}

  /** Every code of a value set, each once, in compose order. */
  async codesOf(valueSet: ValueSetResource, path: string[] = []): Promise<CodeSet> {
    const canonical = canonicalOf(valueSet);
    if (path.includes(canonical)) {
      throw TerminologyError.invalid(
        `Found a circularity pointing to ${canonical} processing ValueSet with pathway [${path.join(', ')}]`,
      );
    }
    const set: CodeSet = {
      codes: [],
      usedCodeSystems: new Set(),
      usedValueSets: new Set(),
      usedSupplements: new Set(),
      warnings: [],
    };
    const compose = valueSet.compose;
    if (!compose) {
      this.fromExpansion(valueSet, set);
      return set;
    }
    const seen = new Set<string>();
    const inner = [...path, canonical];
    for (const [i, include] of (compose.include ?? []).entries()) {
      const found = await this.component(include, `ValueSet.compose.include[${i}]`, set, inner);
      for (const code of found) {
        const key = keyOf(code.system, code.code);
        if (seen.has(key)) continue;
        seen.add(key);
        set.codes.push(code);
        if (set.codes.length > this.options.maxCodes)
          throw tooCostly(valueSet, this.options.maxCodes);
      }
    }
    if ((compose.exclude ?? []).length > 0) {
      const excluded = new Set<string>();
      for (const [i, exclude] of (compose.exclude ?? []).entries()) {
        const found = await this.component(exclude, `ValueSet.compose.exclude[${i}]`, set, inner);
        for (const code of found) excluded.add(keyOf(code.system, code.code));
      }
      set.codes = set.codes.filter((c) => !excluded.has(keyOf(c.system, c.code)));
    }
    if (compose.inactive === false || this.options.activeOnly) {
      set.codes = set.codes.filter((c) => !c.entry?.inactive);
    }
    return set;
  }

  /** The value set with its expansion: filtered by text, paged, rendered. */
  async expand(valueSet: ValueSetResource): Promise<ValueSetResource> {
    await this.checkSupplements();
    const set = await this.codesOf(valueSet);
    let codes = set.codes;
    if (this.options.filter)
      codes = codes.filter((c) => matchesText(c, this.options.filter as string));
    const offset = this.options.offset ?? 0;
    const page =
      this.options.count !== undefined
        ? codes.slice(offset, offset + this.options.count)
        : codes.slice(offset);
    const parameters: ParameterValue[] = [...(this.options.echo ?? [])];
    for (const used of set.usedValueSets)
      parameters.push({ name: 'used-valueset', valueUri: used });
    for (const used of set.usedCodeSystems)
      parameters.push({ name: 'used-codesystem', valueUri: used });
    for (const used of set.usedSupplements)
      parameters.push({ name: 'used-supplement', valueUri: used });
    parameters.push(...set.warnings);
    const expansion: JsonObject = {
      identifier: `urn:uuid:${crypto.randomUUID()}`,
      timestamp: new Date().toISOString(),
      total: codes.length,
    };
    if (this.options.offset !== undefined || this.options.count !== undefined)
      expansion.offset = offset;
    expansion.parameter = parameters as unknown as JsonObject[];
    const properties = this.propertyDefinitions(page);
    if (properties.length > 0) expansion.property = properties;
    if (page.length > 0) expansion.contains = page.map((c) => this.render(c));
    // The expansion stands for the definition: compose is not repeated (tx.fhir.org does the same).
    const definition: ValueSetResource = { ...valueSet, expansion };
    delete definition.compose;
    return definition;
  }

  /** An include or exclude: its system's codes (listed or filtered), within its value sets. */
  private async component(
    component: ConceptSetComponent,
    at: string,
    set: CodeSet,
    path: string[],
  ): Promise<ExpandedCode[]> {
    let result: ExpandedCode[] | undefined;
    if (component.system) {
      const model = await this.codeSystemFor(component, at, set);
      result = this.systemCodes(model, component, at);
    }
    for (const reference of component.valueSet ?? []) {
      const included = await this.includedValueSet(reference, path);
      set.usedValueSets.add(canonicalOf(included));
      const inner = await this.codesOf(included, path);
      for (const used of inner.usedCodeSystems) set.usedCodeSystems.add(used);
      for (const used of inner.usedValueSets) set.usedValueSets.add(used);
      if (result === undefined) {
        result = inner.codes;
      } else {
        const keys = new Set(inner.codes.map((c) => keyOf(c.system, c.code)));
        result = result.filter((c) => keys.has(keyOf(c.system, c.code)));
      }
    }
    return result ?? [];
  }

  async includedValueSet(reference: string, path: string[]): Promise<ValueSetResource> {
    const { url, version } = splitCanonical(reference);
    const wanted = version ?? defaultVersion(this.options.defaultValueSetVersions, url);
    const found = await this.library.valueSet(url, wanted);
    if (!found) {
      throw TerminologyError.notFound(
        wanted
          ? `Unable to find included value set '${url}' version '${wanted}'`
          : `Unable to find included value set '${url}'`,
      );
    }
    if (path.includes(canonicalOf(found))) {
      throw TerminologyError.invalid(
        `Found a circularity pointing to ${canonicalOf(found)} processing ValueSet with pathway [${path.join(', ')}]`,
      );
    }
    return found;
  }

  /** The code system version an include uses (force-system-version, the include, system-version). */
  async codeSystemFor(
    component: ConceptSetComponent,
    at: string,
    set?: CodeSet,
  ): Promise<CodeSystemModel> {
    const system = component.system as string;
    const version = this.versionFor(system, component.version, at);
    let model = await this.library.codeSystem(system, version);
    if (!model) {
      const known = (await this.library.codeSystemVersions(system))
        .map((r) => r.version)
        .filter((v): v is string => v !== undefined);
      if (version && known.length > 0) {
        throw TerminologyError.notFound(
          `A definition for CodeSystem '${system}' version '${version}' could not be found, so the value set cannot be expanded. Valid versions: ${known.join(', ')}`,
          'UNKNOWN_CODESYSTEM_VERSION',
        );
      }
      throw TerminologyError.notFound(
        `A definition for CodeSystem '${system}' could not be found, so the value set cannot be expanded`,
        'UNKNOWN_CODESYSTEM',
      );
    }
    model = await this.withSupplements(model, set);
    set?.usedCodeSystems.add(model.canonical);
    if (set) this.statusWarnings(model, set);
    return model;
  }

  versionFor(system: string, stated: string | undefined, at: string): string | undefined {
    const forced = defaultVersion(this.options.forceSystemVersions, system);
    if (forced) return forced;
    const checked = defaultVersion(this.options.checkSystemVersions, system);
    if (checked && stated && !versionMatches(checked, stated)) {
      throw TerminologyError.invalid(
        `The version '${stated}' of the code system '${system}' is not the version '${checked}' that check-system-version requires`,
        `${at}.version`,
      );
    }
    return stated ?? defaultVersion(this.options.systemVersions, system);
  }

  /** Fails when a supplement to apply cannot be found. */
  async checkSupplements(): Promise<void> {
    for (const canonical of this.options.useSupplements ?? []) await this.supplement(canonical);
  }

  private async supplement(canonical: string): Promise<CodeSystemResource> {
    const supplement = await this.library.supplement(canonical);
    if (!supplement) {
      throw TerminologyError.notFound(
        `Required supplement not found: ${canonical}`,
        'VALUESET_SUPPLEMENT_MISSING',
      );
    }
    return supplement;
  }

  /** The code system with the supplements to apply that supplement it. */
  async withSupplements(model: CodeSystemModel, set?: CodeSet): Promise<CodeSystemModel> {
    let result = model;
    for (const canonical of this.options.useSupplements ?? []) {
      const supplement = await this.supplement(canonical);
      if (splitCanonical(supplement.supplements ?? '').url !== model.url) continue;
      result = result.withSupplement(supplement);
      set?.usedSupplements.add(
        supplement.version ? `${supplement.url}|${supplement.version}` : (supplement.url as string),
      );
    }
    return result;
  }

  private statusWarnings(model: CodeSystemModel, set: CodeSet): void {
    const canonical = model.canonical;
    const status = model.resource.status;
    const already = (name: string) =>
      set.warnings.some((w) => w.name === name && w.valueUri === canonical);
    const warn = (name: string) => {
      if (!already(name)) set.warnings.push({ name, valueUri: canonical });
    };
    if (status === 'draft') warn('warning-draft');
    if (status === 'retired') warn('warning-withdrawn');
    if (model.resource.experimental === true) warn('warning-experimental');
  }

  /** The codes of one system an include names: all, listed, or filtered. */
  private systemCodes(
    model: CodeSystemModel,
    component: ConceptSetComponent,
    at: string,
  ): ExpandedCode[] {
    const system = model.url;
    const code = (
      entry: ConceptEntry,
      designations?: Designation[],
      extensions?: Extension[],
    ): ExpandedCode => ({
      system,
      version: model.version,
      code: entry.code,
      display: entry.display,
      model,
      entry,
      designations,
      extensions,
    });
    if (component.concept && component.concept.length > 0) {
      const listed: ExpandedCode[] = [];
      for (const item of component.concept) {
        const entry = model.concept(item.code);
        if (entry) listed.push(code(entry, item.designation, item.extension));
        else if (model.content !== 'complete')
          listed.push({ system, version: model.version, code: item.code, display: item.display });
      }
      return this.filtered(model, listed, component.filter ?? [], at);
    }
    return this.filtered(
      model,
      model.concepts.map((entry) => code(entry)),
      component.filter ?? [],
      at,
    );
  }

  private filtered(
    model: CodeSystemModel,
    codes: ExpandedCode[],
    filters: ConceptFilter[],
    at: string,
  ): ExpandedCode[] {
    let result = codes;
    for (const [i, filter] of filters.entries()) {
      const allowed = filterSet(model, filter, `${at}.filter[${i}]`);
      result = result.filter((c) => c.entry && allowed(c.entry));
    }
    return result;
  }

  /** A value set given with an expansion and no compose: its codes as they are. */
  private fromExpansion(valueSet: ValueSetResource, set: CodeSet): void {
    const walk = (contains: unknown) => {
      if (!Array.isArray(contains)) return;
      for (const item of contains as JsonObject[]) {
        if (typeof item.system === 'string' && typeof item.code === 'string') {
          set.codes.push({
            system: item.system,
            version: typeof item.version === 'string' ? item.version : undefined,
            code: item.code,
            display: typeof item.display === 'string' ? item.display : undefined,
          });
        }
        walk(item.contains);
      }
    };
    walk(valueSet.expansion?.contains);
  }

  private propertyDefinitions(page: ExpandedCode[]): JsonObject[] {
    const wanted = this.options.properties ?? [];
    const definitions: JsonObject[] = [];
    const shown = new Set(page.flatMap((c) => extensionFacets(c).properties.map((p) => p.code)));
    for (const { code, uri } of Object.values(EXTENSION_PROPERTIES)) {
      if (shown.has(code) && !definitions.some((d) => d.code === code))
        definitions.push({ code, uri });
    }
    for (const name of wanted) {
      if (name === 'definition' && page.some((c) => c.entry?.definition)) {
        definitions.push({ code: name, uri: `${CONCEPT_PROPERTY}definition` });
        continue;
      }
      const holder = page.find((c) => c.model?.propertyDefinition(name));
      const definition = holder?.model?.propertyDefinition(name);
      if (definition) {
        definitions.push({ code: name, ...(definition.uri ? { uri: definition.uri } : {}) });
      }
    }
    return definitions;
  }

  private render(code: ExpandedCode): JsonObject {
    const out: JsonObject = { system: code.system };
    if (code.version && this.showVersion(code)) out.version = code.version;
    if (code.entry?.abstract) out.abstract = true;
    if (code.entry?.inactive) out.inactive = true;
    out.code = code.code;
    const choice =
      code.model && code.entry
        ? chooseDisplay(code.model, code.entry, this.options.languages)
        : { value: code.display };
    if (choice.value !== undefined) out.display = choice.value;
    if (this.options.includeDesignations) {
      const designations = this.designationsOf(code, choice);
      if (designations.length > 0) out.designation = designations as unknown as JsonObject[];
    }
    const facets = extensionFacets(code);
    if (facets.extensions.length > 0) out.extension = facets.extensions as unknown as JsonObject[];
    const properties = [...facets.properties, ...this.propertiesOf(code)];
    if (properties.length > 0) out.property = properties;
    return out;
  }

  private showVersion(_code: ExpandedCode): boolean {
    return false;
  }

  /**
   * The designations of a code; when another language's display is shown, the concept's own
   * display becomes a designation (preferred for its language) in place of the one shown.
   */
  private designationsOf(code: ExpandedCode, choice: DisplayChoice): Designation[] {
    const own = code.entry?.display;
    const all = [...(code.entry?.designations ?? []), ...(code.designations ?? [])].filter(
      (d) => d !== choice.designation,
    );
    if (code.model && own !== undefined && choice.value !== own) {
      all.unshift({
        language: displayLanguageOf(code.model),
        use: PREFERRED_FOR_LANGUAGE,
        value: own,
      });
    }
    const wanted = this.options.designations ?? [];
    if (wanted.length === 0) return all;
    return all.filter((d) => wanted.some((w) => designationMatches(d, w)));
  }

  private propertiesOf(code: ExpandedCode): JsonObject[] {
    const wanted = this.options.properties ?? [];
    const found: JsonObject[] = [];
    if (!code.entry) return found;
    for (const name of wanted) {
      if (name === 'definition' && code.entry.definition) {
        found.push({ code: 'definition', valueString: code.entry.definition });
        continue;
      }
      for (const property of code.entry.properties) {
        if (property.code === name) found.push({ ...property } as unknown as JsonObject);
      }
    }
    return found;
  }
}

const EXPANSION_PARAMETER = 'http://hl7.org/fhir/StructureDefinition/valueset-expansion-parameter';
const VALUESET_SUPPLEMENT = 'http://hl7.org/fhir/StructureDefinition/valueset-supplement';

/**
 * The options of an operation on a value set: its display language (see withDisplayLanguage),
 * and the supplements it names (valueset-supplement) applied besides `useSupplement`.
 */
export function forValueSet<T extends Omit<ExpansionOptions, 'maxCodes'>>(
  options: T,
  valueSet: ValueSetResource,
): T {
  const named = (valueSet.extension ?? [])
    .filter((e) => e.url === VALUESET_SUPPLEMENT)
    .map((e) => e.valueCanonical)
    .filter((c): c is string => typeof c === 'string');
  const withLanguage = withDisplayLanguage(options, valueSet);
  if (named.length === 0) return withLanguage;
  return { ...withLanguage, useSupplements: [...(options.useSupplements ?? []), ...named] };
}

/**
 * The options with the display language of an operation: `displayLanguage`, else the one the
 * value set's compose sets (valueset-expansion-parameter), else `Accept-Language`, else the value
 * set's own language. An expansion echoes it when it was not a parameter.
 */
export function withDisplayLanguage<T extends Omit<ExpansionOptions, 'maxCodes'>>(
  options: T,
  valueSet?: ValueSetResource,
): T {
  if (options.languages) return options;
  const languages = parseLanguages(
    (valueSet && composeParameter(valueSet, 'displayLanguage')) ??
      options.acceptLanguage ??
      valueSet?.language,
  );
  if (!languages) return options;
  const echo = [...(options.echo ?? []), { name: 'displayLanguage', valueCode: languages.text }];
  return { ...options, languages, echo };
}

/** A parameter the value set's compose sets for its expansion, as text. */
function composeParameter(valueSet: ValueSetResource, name: string): string | undefined {
  for (const extension of valueSet.compose?.extension ?? []) {
    if (extension.url !== EXPANSION_PARAMETER || !Array.isArray(extension.extension)) continue;
    const parts = extension.extension as Extension[];
    if (parts.find((p) => p.url === 'name')?.valueCode !== name) continue;
    const value = parts.find((p) => p.url === 'value');
    const text = value && valueOf(value);
    if (typeof text === 'string') return text;
  }
  return undefined;
}

export function canonicalOf(resource: { url?: string; version?: string }): string {
  return resource.version ? `${resource.url}|${resource.version}` : (resource.url ?? '');
}

const SD = 'http://hl7.org/fhir/StructureDefinition/';
const CONCEPT_PROPERTY = 'http://hl7.org/fhir/concept-properties#';

/** Concept extensions that an expansion shows as the R5 standard concept properties. */
const EXTENSION_PROPERTIES: Record<string, { code: string; uri: string; as: string }> = {
  [`${SD}itemWeight`]: { code: 'weight', uri: `${CONCEPT_PROPERTY}itemWeight`, as: 'valueDecimal' },
  [`${SD}codesystem-label`]: { code: 'label', uri: `${CONCEPT_PROPERTY}label`, as: 'valueString' },
  [`${SD}valueset-label`]: { code: 'label', uri: `${CONCEPT_PROPERTY}label`, as: 'valueString' },
  [`${SD}codesystem-conceptOrder`]: {
    code: 'order',
    uri: `${CONCEPT_PROPERTY}order`,
    as: 'valueDecimal',
  },
  [`${SD}valueset-conceptOrder`]: {
    code: 'order',
    uri: `${CONCEPT_PROPERTY}order`,
    as: 'valueDecimal',
  },
  [`${SD}structuredefinition-standards-status`]: {
    code: 'status',
    uri: `${CONCEPT_PROPERTY}status`,
    as: 'valueCode',
  },
};

/** Concept extensions that an expansion repeats on the code. */
const SHOWN_EXTENSIONS = new Set(
  [
    'rendering-style',
    'rendering-xhtml',
    'valueset-deprecated',
    'valueset-concept-definition',
    'structuredefinition-standards-status',
  ].map((name) => SD + name),
);

/**
 * What a code's extensions show in an expansion: properties (label, order, weight, and the code
 * system's status), the value set's own overriding the code system's; and the extensions
 * repeated as they are (rendering, the value set's deprecation and definition).
 */
function extensionFacets(code: ExpandedCode): {
  properties: JsonObject[];
  extensions: Extension[];
} {
  const properties = new Map<string, JsonObject>();
  const extensions: Extension[] = [];
  const read = (list: Extension[] | undefined, fromValueSet: boolean) => {
    for (const extension of list ?? []) {
      const mapped = EXTENSION_PROPERTIES[extension.url];
      const isStatus = mapped?.code === 'status';
      if (mapped && !(fromValueSet && isStatus)) {
        const value = valueOf(extension);
        if (value !== undefined && value !== null)
          properties.set(mapped.code, { code: mapped.code, [mapped.as]: value as Json });
      } else if (SHOWN_EXTENSIONS.has(extension.url)) {
        extensions.push(extension);
      }
    }
  };
  read(code.entry?.extension, false);
  read(code.extensions, true);
  return { properties: [...properties.values()], extensions };
}

/**
 * Whether a designation is one a `designation` parameter asks for: a language (`de`, or
 * `urn:ietf:bcp:47|de`), or a use (`system|code`).
 */
function designationMatches(designation: Designation, wanted: string): boolean {
  const bar = wanted.indexOf('|');
  if (bar < 0) {
    return designation.language === wanted || !!designation.language?.startsWith(`${wanted}-`);
  }
  const system = wanted.slice(0, bar);
  const code = wanted.slice(bar + 1);
  if (system === 'urn:ietf:bcp:47')
    return designation.language?.toLowerCase() === code.toLowerCase();
  return designation.use?.system === system && designation.use?.code === code;
}

function defaultVersion(canonicals: string[] | undefined, url: string): string | undefined {
  for (const canonical of canonicals ?? []) {
    const split = splitCanonical(canonical);
    if (split.url === url) return split.version;
  }
  return undefined;
}

function tooCostly(valueSet: ValueSetResource, max: number): TerminologyError {
  return new TerminologyError(422, {
    severity: 'error',
    code: 'too-costly',
    text: `The value set '${canonicalOf(valueSet)}' expansion has too many codes to produce (>${max})`,
  });
}

/** `filter` text: every word of it starts a word of the display or a designation. */
function matchesText(code: ExpandedCode, text: string): boolean {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  const values = [code.display, code.code, ...(code.entry?.designations ?? []).map((d) => d.value)];
  return values.some((value) => {
    if (!value) return false;
    const own = value.toLowerCase().split(/[^\p{L}\p{N}]+/u);
    return words.every((w) => own.some((o) => o.startsWith(w)));
  });
}

/** Compiles a regular expression that cannot run away (RE2: linear time), anchored whole. */
function safeRegex(pattern: string, at: string): (value: string) => boolean {
  try {
    const compiled = RE2JS.compile(`^(?:${pattern})$`);
    return (value) => compiled.matches(value);
  } catch {
    throw TerminologyError.invalid(`The regular expression '${pattern}' is not valid`, at);
  }
}

/** An R5 filter operation an R4 client carries as an extension of `op` (e.g. `child-of`). */
function r5Op(filter: ConceptFilter): string {
  const extensions = (filter as { _op?: { extension?: Array<{ valueCode?: unknown }> } })._op
    ?.extension;
  const code = extensions?.find((e) => typeof e.valueCode === 'string')?.valueCode;
  return typeof code === 'string' ? code : '';
}

/** The concepts a compose filter admits. */
export function filterSet(
  model: CodeSystemModel,
  filter: ConceptFilter,
  at: string,
): (entry: ConceptEntry) => boolean {
  const { property } = filter;
  const op = filter.op ?? r5Op(filter);
  const value = filter.value;
  if (value === undefined || value === null || value === '') {
    throw new TerminologyError(400, {
      severity: 'error',
      code: 'invalid',
      txCode: 'vs-invalid',
      text: `The system ${model.url} filter with property = ${property}, op = ${op} has no value`,
      path: at,
      messageId: 'UNABLE_TO_HANDLE_SYSTEM_FILTER_WITH_NO_VALUE',
    });
  }
  const isConcept = property === 'concept' || property === 'code';
  if (isConcept && ['is-a', 'descendent-of', 'is-not-a', 'generalizes', 'child-of'].includes(op)) {
    const anchor = model.concept(value);
    if (!anchor) return () => false;
    switch (op) {
      case 'is-a':
        return (entry) => model.subsumes(anchor, entry);
      case 'descendent-of':
        return (entry) => entry !== anchor && model.subsumes(anchor, entry);
      case 'is-not-a':
        return (entry) => !model.subsumes(anchor, entry);
      case 'generalizes':
        return (entry) => model.subsumes(entry, anchor);
      default:
        return (entry) => entry.parents.includes(anchor);
    }
  }
  const valuesOf = (entry: ConceptEntry): string[] => {
    if (isConcept) return [entry.code];
    if (property === 'display') return entry.display === undefined ? [] : [entry.display];
    if (property === 'inactive' && !entry.properties.some((p) => p.code === 'inactive'))
      return [String(entry.inactive)];
    return entry.properties
      .filter((p) => p.code === property)
      .map((p) => {
        const v =
          p.valueCode ??
          p.valueString ??
          p.valueCoding?.code ??
          p.valueBoolean ??
          p.valueInteger ??
          p.valueDecimal ??
          p.valueDateTime;
        return v === undefined ? '' : String(v);
      });
  };
  if (
    !isConcept &&
    property !== 'display' &&
    property !== 'inactive' &&
    !model.propertyDefinition(property) &&
    !model.concepts.some((c) => c.properties.some((p) => p.code === property))
  ) {
    throw new TerminologyError(400, {
      severity: 'error',
      code: 'invalid',
      txCode: 'vs-invalid',
      text: `The filter property '${property}' is not known in the code system ${model.url}`,
      path: at,
    });
  }
  switch (op) {
    case '=':
      return (entry) => valuesOf(entry).includes(value);
    case 'in': {
      const set = new Set(value.split(',').map((v) => v.trim()));
      return (entry) => valuesOf(entry).some((v) => set.has(v));
    }
    case 'not-in': {
      const set = new Set(value.split(',').map((v) => v.trim()));
      return (entry) => !valuesOf(entry).some((v) => set.has(v));
    }
    case 'regex': {
      const test = safeRegex(value, at);
      return (entry) => valuesOf(entry).some(test);
    }
    case 'exists': {
      const wanted = value === 'true';
      return (entry) => valuesOf(entry).length > 0 === wanted;
    }
    default:
      throw new TerminologyError(400, {
        severity: 'error',
        code: 'not-supported',
        txCode: 'vs-invalid',
        text: `The filter operation '${op}' on the property '${property}' is not supported for the code system ${model.url}`,
        path: at,
      });
  }
}
