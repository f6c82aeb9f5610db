import crypto from 'node:crypto';
import { RE2JS } from 're2js';
import { STANDARDS_STATUS, type CodeSystemModel, type ConceptEntry } from './code-system';
import type {
  CanonicalResource,
  CodeSystemConcept,
  CodeSystemResource,
  ConceptFilter,
  ConceptProperty,
  ConceptSetComponent,
  Designation,
  Extension,
  JsonObject,
  ParameterValue,
  ValueSetResource,
} from './fhir';
import { valueOf } from './fhir';
import { AppError } from '../../errors';
import { type IssueSpec, TerminologyError } from './issues';
import {
  chooseDisplay,
  displayLanguageOf,
  parseLanguages,
  PREFERRED_FOR_LANGUAGE,
  type DisplayChoice,
  type LanguagePreference,
} from './languages';
import {
  compareVersions,
  presentVersions,
  splitCanonical,
  versionMatches,
  type MemberRead,
  type MemberTexts,
  type TerminologyLibrary,
} from './library';

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
  /** The most codes an expansion without `count`/`offset` answers (more must be paged). */
  maxUnpagedCodes?: number;
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
  /** Extensions the value set itself gives the code (e.g. valueset-deprecated, labels). */
  extension?: Extension[];
  /** Found by walking its code system's hierarchy: it may sit under its parent. */
  nested?: boolean;
}

/** What expanding a value set found, before paging and rendering. */
export interface CodeSet {
  codes: ExpandedCode[];
  /** Code systems (`url|version`) and value sets used, for the expansion's parameters. */
  usedCodeSystems: Set<string>;
  usedValueSets: Set<string>;
  usedSupplements: Set<string>;
  warnings: ParameterValue[];
  /** One include walking one code system's hierarchy, nothing excluded or combined. */
  hierarchical: boolean;
  /** The compose names several versions of a system: the codes say which version. */
  showVersions: boolean;
}

/** A property the codes of an expansion page carry: its code, and the URI defining it. */
export interface ExpansionPropertyDefinition {
  code: string;
  uri?: string;
}

/** A property value of an expanded code (`valueCode`, `valueString`, …). */
export interface ExpandedProperty {
  code: string;
  value: Omit<ConceptProperty, 'code'>;
}

/** One code of an expansion page as shown. */
export interface ExpansionEntry {
  system: string;
  /** Shown only when the expansion holds several versions of a system. */
  version?: string;
  code: string;
  /** In the display language chosen. */
  display?: string;
  abstract: boolean;
  inactive: boolean;
  /** Only when designations were asked for. */
  designations: Designation[];
  /** The properties asked for, the status of a code not active, label/order/weight. */
  properties: ExpandedProperty[];
  /** Extensions repeated on the code (the value set's deprecation, rendering, definitions). */
  extensions: Extension[];
  /** The codes under it, when the page is shown as a tree. */
  contains: ExpansionEntry[];
}

/** What $expand answers: a page of a value set's expansion and how it was made. */
export interface ExpansionPage {
  /**
   * The value set expanded, as it was read: its definition (a stored collection version paged in
   * the database is read without its compose, the members).
   */
  valueSet: ValueSetResource;
  /** A URN naming this expansion. */
  identifier: string;
  /** When it was made (ISO 8601). */
  timestamp: string;
  /** Codes in the whole expansion (after `filter`), not only on this page. */
  total: number;
  /** Set when the request paged (`count` or `offset`). */
  offset?: number;
  count?: number;
  /**
   * The parameters it was made with, in order: those of the request echoed, the value sets,
   * code systems and supplements used (`used-*`), then its notes (`warning-*`, `used-fragment`,
   * `versionsMatch`).
   */
  parameters: ParameterValue[];
  /** The code systems (URLs) only fragments of which were used: codes may be missing. */
  fragments: string[];
  /** The properties the page's codes carry. */
  properties: ExpansionPropertyDefinition[];
  /** The page's codes (roots, when shown as a tree). */
  contains: ExpansionEntry[];
}

/**
 * One member source of a stored value set at the code system version its include reads, as
 * `Expander.expandPaged` pages it (a `StoredMemberSource` read at that version).
 */
export interface PagedSource {
  include: ConceptSetComponent;
  /** How many members have a concept in the code system version (as `read` takes). */
  count(read: MemberRead): Promise<number>;
  /** Those concepts, `offset` on, at most `limit` (all without), in member order. */
  page(read: MemberRead, offset: number, limit?: number): Promise<CodeSystemConcept[]>;
  /**
   * The texts of those concepts (as `read` takes) whose texts hold every one of `needles` (see
   * `filterNeedles`), in member order; more may come, none that holds them all is left out.
   */
  texts(read: MemberRead, needles: string[]): Promise<MemberTexts[]>;
  /** Those concepts by their ids (`MemberTexts.id`), in the order of `ids`. */
  byIds(read: MemberRead, ids: string[]): Promise<CodeSystemConcept[]>;
}

const sum = (numbers: number[]) => numbers.reduce((total, n) => total + n, 0);

const VERSION_RULES = ['system-version', 'check-system-version', 'force-system-version'];

const keyOf = (system: string, code: string) => `${system}#${code}`;

export const VALUESET_DEPRECATED = 'http://hl7.org/fhir/StructureDefinition/valueset-deprecated';

/**
 * The statuses a reference to a resource warns of: `draft` and `experimental` code systems,
 * and `deprecated` or `withdrawn` (standards-status, or retired) code systems and value sets.
 */
export function warnedStatuses(resource: CanonicalResource): string[] {
  const standards = resource.extension?.find((e) => e.url === STANDARDS_STATUS)?.valueCode;
  const found: string[] = [];
  if (resource.resourceType === 'CodeSystem') {
    if (resource.status === 'draft') found.push('draft');
    if (resource.experimental === true) found.push('experimental');
  }
  if (standards === 'deprecated') found.push('deprecated');
  if (standards === 'withdrawn' || resource.status === 'retired') found.push('withdrawn');
  return found;
}

type ValueSetCompose = NonNullable<ValueSetResource['compose']>;

/**
 * Code sets of stored value sets (see `Expander.codesOf`), by the options that decided them, with
 * the code system versions (models) they were evaluated over.
 */
const CODE_SETS = new WeakMap<
  ValueSetResource,
  Map<string, { models: CodeSystemModel[]; set: CodeSet }>
>();

/**
 * A value set whose code set may be reused: a stored one (only those are frozen: shared by the
 * requests that read it) whose compose draws on code systems only, without supplements of its
 * own; what it draws on is then the code system versions it resolves to.
 */
function reusable(valueSet: ValueSetResource): boolean {
  const compose = valueSet.compose;
  if (!Object.isFrozen(valueSet) || !compose || (valueSet.extension ?? []).length > 0) return false;
  return [...(compose.include ?? []), ...(compose.exclude ?? [])].every(
    (c) => c.system !== undefined && (c.valueSet ?? []).length === 0,
  );
}

/** A code set with nothing found yet. */
function emptyCodeSet(): CodeSet {
  return {
    codes: [],
    usedCodeSystems: new Set(),
    usedValueSets: new Set(),
    usedSupplements: new Set(),
    warnings: [],
    hierarchical: false,
    showVersions: false,
  };
}

/** A code set the caller may change (its lists and sets); its codes frozen when kept. */
function copyOf(set: CodeSet, freeze = false): CodeSet {
  if (freeze) for (const code of set.codes) Object.freeze(code);
  return {
    ...set,
    codes: [...set.codes],
    usedCodeSystems: new Set(set.usedCodeSystems),
    usedValueSets: new Set(set.usedValueSets),
    usedSupplements: new Set(set.usedSupplements),
    warnings: [...set.warnings],
  };
}

/** A code's key, with its version when versions tell codes apart. */
const versionedKeyOf = (code: ExpandedCode, versioned: boolean) =>
  versioned ? `${code.system}|${code.version ?? ''}#${code.code}` : keyOf(code.system, code.code);

/**
 * The expansion engine: evaluates a value set's compose (includes, excludes, concept lists,
 * filters, included value sets) over the library's code systems.
 */
export class Expander {
  /** The version parameters (`name|url|version`) that decided a code system version. */
  private readonly usedRules = new Set<string>();
  /** Supplements the value sets being expanded require (`valueset-supplement`). */
  private readonly requiredSupplements = new Set<string>();

  /**
   * @param validating for $validate-code: a code system version `check-system-version` does not
   * allow is not refused (the validator reports it on the coding)
   */
  constructor(
    private readonly library: TerminologyLibrary,
    private readonly options: ExpansionOptions,
    private readonly validating = false,
  ) {}

  /**
   * Every code of a value set, each once, in compose order. A stored value set (shared, frozen)
   * over code systems only is evaluated once for the code system versions it resolves to and the
   * options that change its codes; later requests reuse that while they resolve the same ones.
   */
  async codesOf(valueSet: ValueSetResource, path: string[] = []): Promise<CodeSet> {
    if (path.length > 0 || !reusable(valueSet)) return this.evaluate(valueSet, path);
    const compose = valueSet.compose!;
    // A code system that cannot be used: the evaluation says so, in its own words.
    const models = await Promise.all(
      [...(compose.include ?? []), ...(compose.exclude ?? [])].map((c) => this.codeSystemFor(c)),
    ).catch(() => null);
    if (!models) return this.evaluate(valueSet, path);
    let kept = CODE_SETS.get(valueSet);
    if (!kept) {
      kept = new Map();
      CODE_SETS.set(valueSet, kept);
    }
    const key = this.codeSetKey();
    const found = kept.get(key);
    if (found && found.models.every((model, i) => model === models[i])) {
      this.requireSupplementsOf(valueSet);
      return copyOf(found.set);
    }
    const set = await this.evaluate(valueSet, path);
    kept.set(key, { models, set: copyOf(set, true) });
    return set;
  }

  /** What of the options decides which codes a value set has (not how they are shown). */
  private codeSetKey(): string {
    const o = this.options;
    return JSON.stringify([
      this.validating,
      o.activeOnly,
      o.maxCodes,
      o.systemVersions,
      o.checkSystemVersions,
      o.forceSystemVersions,
      o.useSupplements,
    ]);
  }

  private async evaluate(valueSet: ValueSetResource, path: string[]): Promise<CodeSet> {
    const canonical = canonicalOf(valueSet);
    if (path.includes(canonical)) throw circularity(canonical, path);
    const set = emptyCodeSet();
    this.requireSupplementsOf(valueSet);
    const compose = valueSet.compose;
    this.statusWarnings(valueSet, set);
    if (!compose) {
      this.fromExpansion(valueSet, set);
      return set;
    }
    const seen = new Set<string>();
    const inner = [...path, canonical];
    const versions = versionHandling(compose);
    if (versions.match) set.warnings.push({ name: 'versionsMatch', valueBoolean: true });
    set.showVersions = versions.differing;
    const key = (code: ExpandedCode) => versionedKeyOf(code, versions.differing && !versions.match);
    for (const [i, include] of byVersionDescending(compose.include ?? [])) {
      const at = `ValueSet.compose.include[${i}]`;
      const found = await this.component(include, at, set, inner, valueSet);
      for (const code of found) {
        if (seen.has(key(code))) continue;
        seen.add(key(code));
        set.codes.push(code);
        if (set.codes.length > this.options.maxCodes)
          throw tooCostly(valueSet, this.options.maxCodes);
      }
    }
    if ((compose.exclude ?? []).length > 0) {
      const excluded = new Set<string>();
      const excludedSystems = new Set<string>();
      for (const [i, exclude] of (compose.exclude ?? []).entries()) {
        const at = `ValueSet.compose.exclude[${i}]`;
        const found = await this.component(exclude, at, set, inner, valueSet);
        if (wholeSystem(exclude) && !versions.otherVersionExcluded)
          excludedSystems.add(exclude.system as string);
        for (const code of found) excluded.add(key(code));
      }
      set.codes = set.codes.filter((c) => !excluded.has(key(c)) && !excludedSystems.has(c.system));
    }
    if (compose.inactive === false || this.options.activeOnly) {
      set.codes = set.codes.filter((c) => !c.entry?.inactive);
    }
    set.hierarchical = keepsHierarchy(compose);
    return set;
  }

  /** Supplements a value set requires (`valueset-supplement`) apply to the code systems used. */
  requireSupplementsOf(valueSet: ValueSetResource): void {
    for (const extension of valueSet.extension ?? []) {
      if (
        extension.url === `${SD}valueset-supplement` &&
        typeof extension.valueCanonical === 'string'
      )
        this.requiredSupplements.add(extension.valueCanonical);
    }
  }

  /** The value set's expansion: filtered by text, paged. */
  async expand(valueSet: ValueSetResource): Promise<ExpansionPage> {
    await this.checkSupplements();
    const set = await this.codesOf(valueSet);
    let codes = set.codes;
    if (this.options.filter) {
      const match = textMatcher(this.options.filter);
      codes = codes.filter((code) => match(filterTextsOf(code)));
    }
    this.checkUnpaged(valueSet, codes.length);
    const offset = this.options.offset ?? 0;
    const page =
      this.options.count !== undefined
        ? codes.slice(offset, offset + this.options.count)
        : codes.slice(offset);
    return this.answer(valueSet, set, codes.length, page);
  }

  /**
   * A stored value set whose members are concepts of code system versions of distinct systems
   * (each part's `include` names one, as the compose the members make would, in its order),
   * expanded a page at a time: each part counts its members and reads a page of their concepts,
   * in member order (with `activeOnly`, those active only). With `filter`, each part's members
   * whose texts may match are read as texts only, matched here, and the page's read by id.
   * Answers as `expand` does over the same members (includes listing concepts, each in turn:
   * nothing nested, no versions shown).
   */
  async expandPaged(valueSet: ValueSetResource, parts: PagedSource[]): Promise<ExpansionPage> {
    await this.checkSupplements();
    const set = emptyCodeSet();
    this.requireSupplementsOf(valueSet);
    this.statusWarnings(valueSet, set);
    const models: CodeSystemModel[] = [];
    for (const part of parts) models.push(await this.codeSystemFor(part.include, set));
    const { activeOnly, properties, includeDesignations, designations } = this.options;
    const read: MemberRead = {
      activeOnly,
      // The `child` property shows each code's children: read only when asked for.
      children: (properties ?? []).includes('child'),
      // Names show as designations or as the display in a language (the options carry the value
      // set's, `forValueSet`), descriptions as the `definition` property: read only when one of
      // them may be shown.
      texts:
        this.options.languages !== undefined ||
        includeDesignations === true ||
        (designations ?? []).length > 0 ||
        (properties ?? []).length > 0,
    };
    // Too costly as `codesOf` finds it: by the members found, before `activeOnly` and `filter`
    // leave any out.
    const found = await Promise.all(parts.map((part) => part.count({})));
    if (sum(found) > this.options.maxCodes) throw tooCostly(valueSet, this.options.maxCodes);
    const shown = await this.shownOf(parts, found, read);
    const total = sum(shown.map((s) => s.count));
    this.checkUnpaged(valueSet, total);
    const { offset = 0, count } = this.options;
    const page: ExpandedCode[] = [];
    // The page runs through the parts in turn: `skip` of the first part read, `left` in all.
    let skip = offset;
    let left = count;
    for (const [i, part] of shown.entries()) {
      if (left === 0) break;
      if (skip >= part.count) {
        skip -= part.count;
        continue;
      }
      const concepts = await part.page(skip, left);
      skip = 0;
      if (left !== undefined) left = Math.max(0, left - concepts.length);
      // The page's concepts as the code system has them (display, designations, status).
      const model = models[i];
      const pageModel = this.library.modelOf({ ...model.resource, concept: concepts });
      for (const concept of concepts) {
        const entry = pageModel.concept(concept.code);
        if (!entry) continue;
        page.push({
          system: model.url,
          version: model.version,
          code: entry.code,
          display: entry.display,
          model: pageModel,
          entry,
        });
      }
    }
    return this.answer(valueSet, set, total, page);
  }

  /**
   * What each part shows (`found`: its members found, all of them): how many, and a page of them.
   * With `filter`, those of its members (as `read` takes) whose texts match it; else those
   * `read` takes.
   */
  private async shownOf(
    parts: PagedSource[],
    found: number[],
    read: MemberRead,
  ): Promise<
    Array<{ count: number; page(offset: number, limit?: number): Promise<CodeSystemConcept[]> }>
  > {
    const { filter } = this.options;
    if (filter) {
      const match = textMatcher(filter);
      const needles = filterNeedles(filter);
      const texts = await Promise.all(parts.map((part) => part.texts(read, needles)));
      return parts.map((part, i) => {
        const matched = texts[i].filter(match);
        return {
          count: matched.length,
          page: (offset, limit) =>
            part.byIds(
              read,
              matched
                .slice(offset, limit === undefined ? undefined : offset + limit)
                .map((m) => m.id),
            ),
        };
      });
    }
    const counts = read.activeOnly
      ? await Promise.all(parts.map((part) => part.count(read)))
      : found;
    return parts.map((part, i) => ({
      count: counts[i],
      page: (offset, limit) => part.page(read, offset, limit),
    }));
  }

  /** Refused as too costly: more codes than an expansion without `count`/`offset` answers. */
  private checkUnpaged(valueSet: ValueSetResource, total: number): void {
    const { maxUnpagedCodes, count } = this.options;
    const paged = this.options.offset !== undefined || count !== undefined;
    if (!paged && maxUnpagedCodes !== undefined && total > maxUnpagedCodes)
      throw tooCostly(valueSet, maxUnpagedCodes);
  }

  /** The expansion page: `total` codes, of which `page` is shown. */
  private answer(
    valueSet: ValueSetResource,
    set: CodeSet,
    total: number,
    page: ExpandedCode[],
  ): ExpansionPage {
    const { offset, count } = this.options;
    const parameters: ParameterValue[] = this.echoed();
    for (const used of set.usedValueSets)
      parameters.push({ name: 'used-valueset', valueUri: used });
    for (const used of set.usedCodeSystems)
      parameters.push({ name: 'used-codesystem', valueUri: used });
    for (const used of set.usedSupplements)
      parameters.push({ name: 'used-supplement', valueUri: used });
    parameters.push(...set.warnings);
    const paged = offset !== undefined || count !== undefined;
    return {
      valueSet,
      identifier: `urn:uuid:${crypto.randomUUID()}`,
      timestamp: new Date().toISOString(),
      total,
      ...(paged ? { offset: offset ?? 0 } : {}),
      ...(count !== undefined ? { count } : {}),
      parameters,
      fragments: set.warnings
        .filter((w) => w.name === 'used-fragment')
        .map((w) => splitCanonical(String(w.valueUri)).url),
      properties: this.propertyDefinitions(page),
      contains: this.contains(page, set.hierarchical && this.nests(page), set.showVersions),
    };
  }

  /** The request parameters echoed: the version parameters only where they decided a version. */
  private echoed(): ParameterValue[] {
    return (this.options.echo ?? []).filter(
      (p) =>
        !VERSION_RULES.includes(p.name) ||
        this.usedRules.has(`${p.name}|${String(p.valueUri ?? p.valueCanonical ?? p.valueString)}`),
    );
  }

  /** An include or exclude: its system's codes (listed or filtered), within its value sets. */
  private async component(
    component: ConceptSetComponent,
    at: string,
    set: CodeSet,
    path: string[],
    container: ValueSetResource,
  ): Promise<ExpandedCode[]> {
    let result: ExpandedCode[] | undefined;
    if (component.system) {
      const model = await this.codeSystemFor(component, set);
      result = this.systemCodes(model, component, at);
    }
    for (const reference of component.valueSet ?? []) {
      const contained = reference.startsWith('#');
      const included = contained
        ? containedValueSet(container, reference)
        : await this.includedValueSet(reference, path);
      // A contained value set is part of the definition, not a value set it uses.
      if (!contained) set.usedValueSets.add(canonicalOf(included));
      const inner = await this.codesOf(included, path);
      for (const used of inner.usedCodeSystems) set.usedCodeSystems.add(used);
      for (const used of inner.usedValueSets) set.usedValueSets.add(used);
      for (const warning of inner.warnings) addWarning(set, warning.name, warning.valueUri);
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
        `A definition for the value Set '${wanted ? `${url}|${wanted}` : url}' could not be found`,
        wanted ? 'VS_EXP_IMPORT_UNK_PINNED' : 'Unable_to_resolve_value_Set_',
      );
    }
    if (path.includes(canonicalOf(found))) throw circularity(canonicalOf(found), path);
    return found;
  }

  /** The code system version an include uses (see `versionBase`), if check-system-version allows it. */
  async codeSystemFor(component: ConceptSetComponent, set?: CodeSet): Promise<CodeSystemModel> {
    const system = component.system as string;
    const version = this.versionBase(system, component.version);
    let model = await this.library.codeSystem(system, version);
    if (!model) {
      const known = await this.library.knownVersions(system);
      if (version && known.length > 0) {
        throw TerminologyError.notFound(
          `A definition for CodeSystem '${system}' version '${version}' could not be found, so the value set cannot be expanded. Valid versions: ${presentVersions(known)}`,
          'UNKNOWN_CODESYSTEM_VERSION_EXP',
        );
      }
      throw TerminologyError.notFound(
        `A definition for CodeSystem '${system}' could not be found, so the value set cannot be expanded`,
        'UNKNOWN_CODESYSTEM',
      );
    }
    const refused = !this.validating && this.versionCheckIssue(model);
    if (refused) throw AppError.withIssues('INVALID', refused);
    model = await this.withSupplements(model, set);
    set?.usedCodeSystems.add(model.canonical);
    if (set) this.statusWarnings(model.resource, set);
    return model;
  }

  /**
   * The version of a code system to use: `force-system-version`, else the one stated, else
   * `system-version`, else `check-system-version`. The parameters that decide are echoed.
   */
  versionBase(system: string, stated: string | undefined): string | undefined {
    const rule = (name: string, canonicals: string[] | undefined): string | undefined => {
      const version = defaultVersion(canonicals, system);
      if (version) this.usedRules.add(`${name}|${system}|${version}`);
      return version;
    };
    return (
      rule('force-system-version', this.options.forceSystemVersions) ??
      (stated || undefined) ??
      rule('system-version', this.options.systemVersions) ??
      rule('check-system-version', this.options.checkSystemVersions)
    );
  }

  /** `check-system-version`: the code system version used is not one it allows. */
  versionCheckIssue(model: CodeSystemModel, path?: string): IssueSpec | undefined {
    const required = defaultVersion(this.options.checkSystemVersions, model.url);
    if (!required || versionMatches(required, model.version)) return undefined;
    return {
      severity: 'error',
      code: 'exception',
      txCode: 'version-error',
      text: `The version '${model.version ?? ''}' is not allowed for system '${model.url}': required to be '${required}' by a version-check parameter`,
      path,
      messageId: 'VALUESET_VERSION_CHECK',
    };
  }

  /** Fails when a supplement to apply cannot be found. */
  async checkSupplements(): Promise<void> {
    const canonicals = [...(this.options.useSupplements ?? []), ...this.requiredSupplements];
    for (const canonical of canonicals) await this.supplement(canonical);
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

  /**
   * The code system with the supplements to apply that supplement it (`useSupplement`, and
   * the `valueset-supplement`s of the value sets expanded).
   */
  async withSupplements(model: CodeSystemModel, set?: CodeSet): Promise<CodeSystemModel> {
    let result = model;
    const canonicals = new Set([
      ...(this.options.useSupplements ?? []),
      ...this.requiredSupplements,
    ]);
    for (const canonical of canonicals) {
      const supplement = await this.supplement(canonical);
      if (splitCanonical(supplement.supplements ?? '').url !== model.url) continue;
      result = result.withSupplement(supplement);
      set?.usedSupplements.add(
        supplement.version ? `${supplement.url}|${supplement.version}` : (supplement.url as string),
      );
    }
    return result;
  }

  private statusWarnings(resource: CanonicalResource, set: CodeSet): void {
    for (const status of warnedStatuses(resource))
      addWarning(set, `warning-${status}`, canonicalOf(resource));
    // An expansion over a fragment may miss codes (see unclosed).
    if ('content' in resource && resource.content === 'fragment')
      addWarning(set, 'used-fragment', canonicalOf(resource));
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
      extension?: Extension[],
    ): ExpandedCode => ({
      system,
      version: model.version,
      code: entry.code,
      display: entry.display,
      model,
      entry,
      designations,
      extension,
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
    // A text search over a whole code system finds a flat list (as tx.fhir.org does).
    const filters = component.filter ?? [];
    const nested =
      filters.length === 0
        ? !this.options.filter
        : filters.length === 1 && walksHierarchy(filters[0]);
    return this.filtered(
      model,
      model.concepts.map((entry) => ({ ...code(entry), nested })),
      filters,
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

  /** The properties the page's codes carry: those asked for, and the status of any not active. */
  private propertyDefinitions(page: ExpandedCode[]): ExpansionPropertyDefinition[] {
    const wanted = this.options.properties ?? [];
    const definitions: ExpansionPropertyDefinition[] = [];
    if (page.some((c) => statusOf(c.entry)))
      definitions.push({ code: 'status', uri: `${CONCEPT_PROPERTIES}status` });
    const shown = new Set(page.flatMap((c) => extensionFacets(c).properties.map((p) => p.code)));
    for (const { code, uri } of Object.values(EXTENSION_PROPERTIES)) {
      if (shown.has(code) && !definitions.some((d) => d.code === code))
        definitions.push({ code, uri });
    }
    for (const name of wanted) {
      if (definitions.some((d) => d.code === name)) continue;
      if (name === 'definition' && page.some((c) => c.entry?.definition)) {
        definitions.push({ code: name, uri: `${CONCEPT_PROPERTIES}definition` });
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

  /**
   * Whether the page is shown as a tree: the whole expansion, no `excludeNested`, no offset,
   * and each code under at most one parent.
   */
  private nests(page: ExpandedCode[]): boolean {
    const { excludeNested, offset, count } = this.options;
    if (excludeNested || offset || (count !== undefined && count <= page.length)) return false;
    const entries = new Set(page.map((c) => c.entry));
    return page.every(
      (c) => !c.nested || (c.entry?.parents ?? []).filter((p) => entries.has(p)).length <= 1,
    );
  }

  /** The page's entries: each nested one under its parent when that is there too. */
  private contains(page: ExpandedCode[], tree: boolean, showVersions: boolean): ExpansionEntry[] {
    const shown = new Map(page.map((c) => [c, this.entryOf(c, showVersions)]));
    if (!tree) return [...shown.values()];
    const byEntry = new Map(page.filter((c) => c.entry).map((c) => [c.entry, c]));
    const roots: ExpansionEntry[] = [];
    for (const [code, out] of shown) {
      const parent = code.nested
        ? code.entry?.parents.map((p) => byEntry.get(p)).find((p) => p?.nested)
        : undefined;
      const holder = parent && shown.get(parent);
      if (holder) holder.contains.push(out);
      else roots.push(out);
    }
    return roots;
  }

  private entryOf(code: ExpandedCode, showVersion: boolean): ExpansionEntry {
    // The value set's own deprecation marks (and rendering, definitions) travel with the code.
    const facets = extensionFacets(code);
    const choice =
      code.model && code.entry
        ? chooseDisplay(code.model, code.entry, this.options.languages)
        : { value: code.display };
    return {
      system: code.system,
      version: code.version && showVersion ? code.version : undefined,
      code: code.code,
      display: choice.value,
      abstract: code.entry?.abstract === true,
      inactive: code.entry?.inactive === true,
      designations: this.options.includeDesignations ? this.designationsOf(code, choice) : [],
      properties: [
        ...facets.properties,
        ...this.propertiesOf(code).filter((p) => !facets.properties.some((f) => f.code === p.code)),
      ],
      extensions: facets.extensions,
      contains: [],
    };
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

  private propertiesOf(code: ExpandedCode): ExpandedProperty[] {
    const wanted = this.options.properties ?? [];
    const found: ExpandedProperty[] = [];
    if (!code.entry) return found;
    for (const name of wanted) {
      if (name === 'definition' && code.entry.definition) {
        found.push({ code: 'definition', value: { valueString: code.entry.definition } });
        continue;
      }
      for (const { code: property, ...value } of code.entry.properties) {
        if (property === name) found.push({ code: property, value });
      }
    }
    const status = statusOf(code.entry);
    if (status && !found.some((p) => p.code === 'status'))
      found.push({ code: 'status', value: { valueCode: status } });
    return found;
  }
}

function addWarning(set: CodeSet, name: string, canonical: unknown): void {
  if (!set.warnings.some((w) => w.name === name && w.valueUri === canonical))
    set.warnings.push({ name, valueUri: canonical });
}

const CONCEPT_PROPERTIES = 'http://hl7.org/fhir/concept-properties#';
const SD = 'http://hl7.org/fhir/StructureDefinition/';

/** The status an expansion shows for a code that is not simply active. */
function statusOf(entry: ConceptEntry | undefined): string | undefined {
  if (!entry) return undefined;
  const standards = entry.extension?.find(
    (e) => e.url === `${SD}structuredefinition-standards-status`,
  )?.valueCode;
  const status = entry.status ?? (typeof standards === 'string' ? standards : undefined);
  if (entry.inactive) return status ?? 'inactive';
  return status && status.toLowerCase() !== 'active' ? status : undefined;
}

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
    ((valueSet?.compose && composeParameter(valueSet.compose, 'displayLanguage')) || undefined) ??
      options.acceptLanguage ??
      valueSet?.language,
  );
  if (!languages) return options;
  const echo = [...(options.echo ?? []), { name: 'displayLanguage', valueCode: languages.text }];
  return { ...options, languages, echo };
}

export function canonicalOf(resource: { url?: string; version?: string }): string {
  return resource.version ? `${resource.url}|${resource.version}` : (resource.url ?? '');
}

const EXPANSION_PARAMETER = [
  'http://hl7.org/fhir/StructureDefinition/valueset-expansion-parameter',
  'http://hl7.org/fhir/tools/StructureDefinition/valueset-expansion-parameter',
];

/** A `valueset-expansion-parameter` extension of the compose, by its name. */
function composeParameter(compose: ValueSetCompose, name: string): string | undefined {
  for (const extension of compose.extension ?? []) {
    if (!EXPANSION_PARAMETER.includes(extension.url)) continue;
    const parts = (Array.isArray(extension.extension) ? extension.extension : []) as Extension[];
    if (parts.find((p) => p.url === 'name')?.valueCode !== name) continue;
    const value = parts.find((p) => p.url === 'value');
    const primitive = value?.valueString ?? value?.valueBoolean ?? value?.valueCode;
    return typeof primitive === 'string' || typeof primitive === 'boolean' ? String(primitive) : '';
  }
  return undefined;
}

/**
 * How a compose naming several versions of one code system treats them: as different codes
 * (shown with their versions), or, with `versionsMatch`, as the same code (the latest wins).
 * Excluding only other versions of the one included system means the same codes
 * (`versionsMatch`, echoed) unless the value set says otherwise.
 */
function versionHandling(compose: ValueSetCompose): {
  differing: boolean;
  match: boolean;
  otherVersionExcluded: boolean;
} {
  const includes = compose.include ?? [];
  const excludes = compose.exclude ?? [];
  const stated = composeParameter(compose, 'versionsMatch');
  const versionsOf = new Map<string, string | undefined>();
  const differing = [...excludes, ...includes].some((c) => {
    const system = c.system ?? '';
    if (!versionsOf.has(system)) versionsOf.set(system, c.version);
    return versionsOf.get(system) !== c.version;
  });
  const system = includes[0]?.system;
  const otherVersionExcluded =
    stated !== 'true' &&
    excludes.length > 0 &&
    includes.length > 0 &&
    [...includes, ...excludes].every((c) => system && c.system === system && c.version) &&
    !includes.some((i) => excludes.some((e) => e.version === i.version));
  const match = stated === 'true' || (stated === undefined && otherVersionExcluded);
  return { differing, match, otherVersionExcluded };
}

/** Includes of one system's versions, latest first (the first found wins a merge). */
function byVersionDescending(
  includes: ConceptSetComponent[],
): Array<[number, ConceptSetComponent]> {
  return [...includes.entries()].sort(([, a], [, b]) =>
    a.system === b.system && a.version && b.version ? compareVersions(b.version, a.version) : 0,
  );
}

function wholeSystem(component: ConceptSetComponent): boolean {
  return (
    !!component.system &&
    !component.concept?.length &&
    !component.filter?.length &&
    !component.valueSet?.length
  );
}

/** Java's ValueSetExpander keeps a hierarchy for one include of one system, nothing excluded. */
function keepsHierarchy(compose: ValueSetCompose): boolean {
  const includes = compose.include ?? [];
  if (includes.length !== 1 || (compose.exclude ?? []).length > 0) return false;
  const [include] = includes;
  return (
    !include.valueSet?.length && !include.concept?.length && (include.filter ?? []).length <= 1
  );
}

/** Filters that walk down the hierarchy (the codes found keep their parents). */
function walksHierarchy(filter: ConceptFilter): boolean {
  const op = filter.op ?? r5Op(filter);
  return (
    (filter.property === 'concept' || filter.property === 'code') &&
    ['is-a', 'is-not-a', 'descendent-of'].includes(op)
  );
}

/** Concept extensions that an expansion shows as the R5 standard concept properties. */
const EXTENSION_PROPERTIES: Record<string, { code: string; uri: string; as: string }> = {
  [`${SD}itemWeight`]: {
    code: 'weight',
    uri: `${CONCEPT_PROPERTIES}itemWeight`,
    as: 'valueDecimal',
  },
  [`${SD}codesystem-label`]: {
    code: 'label',
    uri: `${CONCEPT_PROPERTIES}label`,
    as: 'valueString',
  },
  [`${SD}valueset-label`]: { code: 'label', uri: `${CONCEPT_PROPERTIES}label`, as: 'valueString' },
  [`${SD}codesystem-conceptOrder`]: {
    code: 'order',
    uri: `${CONCEPT_PROPERTIES}order`,
    as: 'valueDecimal',
  },
  [`${SD}valueset-conceptOrder`]: {
    code: 'order',
    uri: `${CONCEPT_PROPERTIES}order`,
    as: 'valueDecimal',
  },
  [`${SD}structuredefinition-standards-status`]: {
    code: 'status',
    uri: `${CONCEPT_PROPERTIES}status`,
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
    'coding-sctdescid',
    'codesystem-alternate',
    'valueset-supplement',
  ].map((name) => SD + name),
);

/**
 * What a code's extensions show in an expansion: properties (label, order, weight, and the code
 * system's status), the value set's own overriding the code system's; and the extensions
 * repeated as they are (rendering, the value set's deprecation and definition).
 */
function extensionFacets(code: ExpandedCode): {
  properties: ExpandedProperty[];
  extensions: Extension[];
} {
  const properties = new Map<string, ExpandedProperty>();
  const extensions: Extension[] = [];
  const read = (list: Extension[] | undefined, fromValueSet: boolean) => {
    for (const extension of list ?? []) {
      const mapped = EXTENSION_PROPERTIES[extension.url];
      const isStatus = mapped?.code === 'status';
      if (mapped && !(fromValueSet && isStatus)) {
        const value = valueOf(extension);
        if (value !== undefined && value !== null)
          properties.set(mapped.code, { code: mapped.code, value: { [mapped.as]: value } });
      } else if (SHOWN_EXTENSIONS.has(extension.url)) {
        extensions.push(extension);
      }
    }
  };
  read(code.entry?.extension, false);
  read(code.extension, true);
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

/** A value set the container holds (`#id`): part of its definition, not a value set it uses. */
function containedValueSet(container: ValueSetResource, reference: string): ValueSetResource {
  const found = (container.contained ?? []).find(
    (r): r is ValueSetResource => r.resourceType === 'ValueSet' && r.id === reference.slice(1),
  );
  if (!found) {
    throw TerminologyError.notFound(
      `A definition for the value Set '${reference}' could not be found`,
      'Unable_to_resolve_value_Set_',
    );
  }
  return found;
}

function defaultVersion(canonicals: string[] | undefined, url: string): string | undefined {
  for (const canonical of canonicals ?? []) {
    const split = splitCanonical(canonical);
    if (split.url === url) return split.version;
  }
  return undefined;
}

/** A value set that includes (or excludes) itself, directly or through others. */
function circularity(canonical: string, path: string[]): AppError {
  return AppError.withIssues('INVALID', {
    severity: 'error',
    code: 'processing',
    txCode: 'vs-invalid',
    text: `Found a circularity pointing to ${canonical} processing ValueSet with pathway [${path.join(', ')}]`,
    messageId: 'VALUESET_CIRCULAR_REFERENCE',
  });
}

/** Refused as too costly (`too-costly`: the FHIR edge answers 422). */
function tooCostly(valueSet: ValueSetResource, max: number): AppError {
  return AppError.withIssues('INVALID', {
    severity: 'error',
    code: 'too-costly',
    text: `The value set '${canonicalOf(valueSet)}' expansion has too many codes to produce (>${max})`,
    messageId: 'VALUESET_TOO_COSTLY',
  });
}

/** What `filter` text is matched against: a code, its display and its designations' values. */
export interface FilterTexts {
  code: string;
  display?: string;
  names: ReadonlyArray<string | undefined>;
}

/** The words of `filter` text, lower-cased. */
const filterWords = (text: string): string[] => text.toLowerCase().split(/\s+/).filter(Boolean);

/**
 * `filter` text: every word of it starts a word (lower-cased, between letters and digits) of one
 * of the display, the code or a designation. A code whose texts do not hold every word somewhere
 * is passed over before any is split.
 */
export function textMatcher(text: string): (texts: FilterTexts) => boolean {
  const words = filterWords(text);
  const matches = (value: string | undefined) => {
    if (!value) return false;
    const own = value.toLowerCase().split(/[^\p{L}\p{N}]+/u);
    return words.every((w) => own.some((o) => o.startsWith(w)));
  };
  return (texts) => {
    const all = searchTextOf(texts);
    if (!words.every((w) => all.includes(w))) return false;
    return matches(texts.display) || matches(texts.code) || texts.names.some(matches);
  };
}

/**
 * What every text a code matches `filter` text by holds (see `textMatcher`): the runs of ASCII
 * letters and digits of its words, lower-cased. A database may narrow codes to those whose
 * folded texts hold each of them and leave out none that matches (see
 * `FhirRepository.memberConceptTexts`).
 */
export function filterNeedles(text: string): string[] {
  return [...new Set(filterWords(text).flatMap((w) => w.match(/[a-z0-9]+/g) ?? []))];
}

/** A code's texts `filter` text is matched against, once per code. */
const FILTER_TEXTS = new WeakMap<ExpandedCode, FilterTexts>();

function filterTextsOf(code: ExpandedCode): FilterTexts {
  let texts = FILTER_TEXTS.get(code);
  if (texts === undefined) {
    texts = {
      code: code.code,
      display: code.display,
      names: (code.entry?.designations ?? []).map((d) => d.value),
    };
    FILTER_TEXTS.set(code, texts);
  }
  return texts;
}

/** Everything `filter` text is matched against, lower-cased, once per code. */
const SEARCH_TEXTS = new WeakMap<FilterTexts, string>();

function searchTextOf(texts: FilterTexts): string {
  let text = SEARCH_TEXTS.get(texts);
  if (text === undefined) {
    text = [texts.display, texts.code, ...texts.names].join('\n').toLowerCase();
    SEARCH_TEXTS.set(texts, text);
  }
  return text;
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
    throw AppError.withIssues('INVALID', {
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
    throw AppError.withIssues('INVALID', {
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
      throw AppError.withIssues('INVALID', {
        severity: 'error',
        code: 'not-supported',
        txCode: 'vs-invalid',
        text: `The filter operation '${op}' on the property '${property}' is not supported for the code system ${model.url}`,
        path: at,
      });
  }
}
