import type { ServiceContext } from '../shared/context';
import {
  Expander,
  forValueSet,
  withDisplayLanguage,
  type ExpansionOptions,
  type ExpansionPage,
  type PagedSource,
} from './expand';
import type { Coding, ConceptSetComponent, TerminologyResource, ValueSetResource } from './fhir';
import { isTerminologyError, TerminologyError, type IssueSpec } from './issues';
import {
  TerminologyLibrary,
  splitCanonical,
  storedMembersOf,
  storedSourceOf,
  type CodeFocus,
  type StoredMembers,
  type StoredTerminology,
} from './library';
import {
  lookup,
  subsumes,
  type LookupInput,
  type LookupResult,
  type SubsumptionResult,
} from './lookup';
import { translate, type TranslateInput, type TranslationResult } from './translate';
import { Validator, type CodeInput, type ValidateOptions, type ValidateResult } from './validate';

/** Which value set an operation works on: stored or brought (`tx-resource`), or given inline. */
export interface ValueSetTarget {
  url?: string;
  version?: string;
  valueSet?: ValueSetResource;
  /** The resource id of an instance-level operation (`/ValueSet/:id/$expand`). */
  id?: string;
}

/** The terminology operations, over the caller's visible content and the request's own resources. */
export class TerminologyService {
  constructor(
    private readonly storedFor: (ctx: ServiceContext) => StoredTerminology | undefined,
    /** The most codes an expansion may hold before it is refused as too costly. */
    readonly maxExpansion: number,
    /** The most codes an expansion without paging answers. */
    readonly maxUnpaged: number,
  ) {}

  /**
   * The content one request works with. `focus`: the operation asks about these codes only, so
   * stored code systems are read by code (see `CodeFocus`), not whole.
   */
  library(
    ctx: ServiceContext,
    resources: TerminologyResource[],
    focus?: CodeFocus,
  ): TerminologyLibrary {
    return new TerminologyLibrary(this.storedFor(ctx), resources, focus);
  }

  /**
   * ValueSet/$expand. A stored collection version whose members come from stored source
   * versions (`expandStoredPage`), asked for a page only (`sqlPageable`), is paged in the
   * database; anything else is expanded in memory (`expandInMemory`). Both answer alike: the
   * page, not rendered (the FHIR edge renders it as a ValueSet).
   */
  async expand(
    ctx: ServiceContext,
    target: ValueSetTarget,
    resources: TerminologyResource[],
    options: Omit<ExpansionOptions, 'maxCodes'>,
  ): Promise<ExpansionPage> {
    if (sqlPageable({ target, resources, options })) {
      const paged = await this.expandStoredPage(ctx, target, options);
      if (paged) return paged;
    }
    return this.expandInMemory(ctx, target, resources, options);
  }

  /** $expand over the whole value set, its code systems read whole. */
  async expandInMemory(
    ctx: ServiceContext,
    target: ValueSetTarget,
    resources: TerminologyResource[],
    options: Omit<ExpansionOptions, 'maxCodes'>,
  ): Promise<ExpansionPage> {
    const library = this.library(ctx, resources);
    const valueSet = await this.valueSetOf(library, target, options.defaultValueSetVersions);
    return new Expander(library, {
      ...forValueSet(options, valueSet),
      maxCodes: this.maxExpansion,
      maxUnpagedCodes: this.maxUnpaged,
    }).expand(valueSet);
  }

  /**
   * The stored collection version `target.url` names, read as its definition and its members (no
   * concept read whole), with the library that read it; none when it is not a stored one.
   */
  private async storedValueSet(
    ctx: ServiceContext,
    target: ValueSetTarget,
  ): Promise<
    { library: TerminologyLibrary; valueSet: ValueSetResource; members: StoredMembers } | undefined
  > {
    if (!target.url) return undefined;
    // Code systems are read as definitions, none of their concepts read whole.
    const library = this.library(ctx, [], { codes: [], ancestors: false, children: false });
    const { url, version: stated } = splitCanonical(target.url);
    const valueSet = await library.storedValueSetDefinition(url, target.version ?? stated);
    const members = valueSet && storedMembersOf(valueSet);
    return valueSet && members ? { library, valueSet, members } : undefined;
  }

  /**
   * $expand of a stored collection version paged in the database: none (the in-memory path
   * answers) unless the version is stored, found by its definition alone, and its members come
   * from stored source versions of distinct systems, each telling codes apart by case. The page
   * runs through the member sources in the order the whole value set has its includes.
   */
  private async expandStoredPage(
    ctx: ServiceContext,
    target: ValueSetTarget,
    options: Omit<ExpansionOptions, 'maxCodes'>,
  ): Promise<ExpansionPage | undefined> {
    const stored = await this.storedValueSet(ctx, target);
    if (!stored) return undefined;
    const { library, valueSet, members } = stored;
    const sources = await members.sources();
    if (sources.length === 0 || !distinctSystems(sources.map((s) => s.include))) return undefined;
    const parts: PagedSource[] = [];
    for (const member of sources) {
      const { include } = member;
      const model = await library.codeSystem(include.system as string, include.version);
      const source = model && storedSourceOf(model.resource);
      if (!model || !source || model.resource.caseSensitive === false) return undefined;
      parts.push({
        include,
        count: (read) => member.count(source, read),
        page: (read, offset, limit) => member.page(source, read, offset, limit),
        texts: (read, needles) => member.texts(source, read, needles),
        byIds: (read, ids) => member.byIds(source, read, ids),
      });
    }
    return new Expander(library, {
      ...forValueSet(options, valueSet),
      maxCodes: this.maxExpansion,
      maxUnpagedCodes: this.maxUnpaged,
    }).expandPaged(valueSet, parts);
  }

  /**
   * ValueSet/$validate-code. A stored collection version asked about by code (`byCodeValidatable`)
   * is answered from the asked codes' membership and concept rows (`validateStoredByCode`);
   * anything else reads the value set whole (`validateInMemory`). Both answer alike.
   */
  async validateInValueSet(
    ctx: ServiceContext,
    target: ValueSetTarget,
    input: CodeInput,
    resources: TerminologyResource[],
    options: Omit<ValidateOptions, 'maxCodes'>,
  ): Promise<ValidateResult> {
    if (byCodeValidatable({ target, input, resources, options })) {
      const answer = await this.validateStoredByCode(ctx, target, input, options);
      if (answer) return answer;
    }
    return this.validateInMemory(ctx, target, input, resources, options);
  }

  /**
   * ValueSet/$validate-code of a stored collection version by code: none (the in-memory path
   * answers) unless the version is stored, found by its definition alone, and its members come
   * from sources of distinct systems that tell codes apart by case. The value set is evaluated
   * as its includes as far as the asked codes tell (`StoredMembers.includesAmong`: each include
   * lists the asked codes among its members, else one member standing for the rest), over code
   * systems read by those codes: each asked code is found, or not, in the same include as the
   * whole value set would have it, and checked by the same `Validator`.
   */
  private async validateStoredByCode(
    ctx: ServiceContext,
    target: ValueSetTarget,
    input: CodeInput,
    options: Omit<ValidateOptions, 'maxCodes'>,
  ): Promise<ValidateResult | undefined> {
    const stored = await this.storedValueSet(ctx, target);
    if (!stored) return undefined;
    const { library: definitions, valueSet, members } = stored;
    const asked = codesOf(input);
    const include = await members.includesAmong(asked);
    if (include.length === 0 || !distinctSystems(include)) return undefined;
    for (const { system } of include) {
      const versions = await definitions.codeSystemVersions(system as string);
      if (versions.some((version) => version.caseSensitive === false)) return undefined;
    }
    const listed = include.flatMap((i) => (i.concept ?? []).map((c) => c.code));
    const library = definitions.refocused({
      codes: [...new Set([...asked, ...listed])],
      ancestors: false,
      children: false,
    });
    const narrowed: ValueSetResource = { ...valueSet, compose: { include } };
    return new Validator(library, {
      ...forValueSet(options, narrowed),
      maxCodes: this.maxExpansion,
    }).validate(input, narrowed);
  }

  /**
   * ValueSet/$batch-validate-code: each request validated as `validateInValueSet` validates it,
   * in order; one that cannot be validated (a `TerminologyError`) is answered by its issues in
   * its place.
   */
  async validateBatch(
    ctx: ServiceContext,
    requests: ValidateRequest[],
  ): Promise<Array<{ result: ValidateResult } | { issues: IssueSpec[] }>> {
    const answers: Array<{ result: ValidateResult } | { issues: IssueSpec[] }> = [];
    for (const { target, input, resources, options } of requests) {
      try {
        answers.push({
          result: await this.validateInValueSet(ctx, target, input, resources, options),
        });
      } catch (error) {
        if (!isTerminologyError(error)) throw error;
        answers.push({ issues: error.issues });
      }
    }
    return answers;
  }

  /** ValueSet/$validate-code over the whole value set, its code systems read whole. */
  async validateInMemory(
    ctx: ServiceContext,
    target: ValueSetTarget,
    input: CodeInput,
    resources: TerminologyResource[],
    options: Omit<ValidateOptions, 'maxCodes'>,
  ): Promise<ValidateResult> {
    const library = this.library(ctx, resources);
    const valueSet = await this.valueSetOf(library, target, options.defaultValueSetVersions);
    return new Validator(library, {
      ...forValueSet(options, valueSet),
      maxCodes: this.maxExpansion,
    }).validate(input, valueSet);
  }

  /** CodeSystem/$validate-code: the code system is the input's system (or `url`). */
  async validateInCodeSystem(
    ctx: ServiceContext,
    input: CodeInput,
    resources: TerminologyResource[],
    options: Omit<ValidateOptions, 'maxCodes'>,
  ): Promise<ValidateResult> {
    const library = this.library(ctx, resources, {
      codes: codesOf(input),
      ancestors: false,
      children: false,
    });
    return new Validator(library, {
      ...withDisplayLanguage(options),
      maxCodes: this.maxExpansion,
    }).validate(input);
  }

  async lookup(
    ctx: ServiceContext,
    input: LookupInput,
    resources: TerminologyResource[],
  ): Promise<LookupResult> {
    const codes = input.coding.code === undefined ? [] : [input.coding.code];
    // A concept's children are read only when its `child` property is asked for.
    const children =
      input.properties.length === 0 ||
      input.properties.includes('*') ||
      input.properties.includes('child');
    return lookup(this.library(ctx, resources, { codes, ancestors: false, children }), input);
  }

  async subsumes(
    ctx: ServiceContext,
    a: Coding,
    b: Coding,
    resources: TerminologyResource[],
  ): Promise<SubsumptionResult> {
    const codes = [a.code, b.code].filter((code): code is string => code !== undefined);
    return subsumes(
      this.library(ctx, resources, { codes, ancestors: true, children: false }),
      a,
      b,
    );
  }

  async translate(
    ctx: ServiceContext,
    input: TranslateInput,
    resources: TerminologyResource[],
  ): Promise<TranslationResult> {
    return translate(this.library(ctx, resources), input);
  }

  private async valueSetOf(
    library: TerminologyLibrary,
    target: ValueSetTarget,
    defaults?: string[],
  ): Promise<ValueSetResource> {
    if (target.valueSet) return target.valueSet;
    if (target.id && !target.url) {
      const found = library.localById('ValueSet', target.id);
      if (!found) throw TerminologyError.notFound(`ValueSet/${target.id} not found`);
      return found as ValueSetResource;
    }
    if (!target.url) throw TerminologyError.invalid('No value set was given (url or valueSet)');
    const { url, version: stated } = splitCanonical(target.url);
    const version =
      target.version ??
      stated ??
      (defaults ?? []).map(splitCanonical).find((d) => d.url === url)?.version;
    const found = await library.valueSet(url, version);
    if (!found) {
      throw TerminologyError.notFound(
        version
          ? `A definition for the value Set '${url}|${version}' could not be found`
          : `A definition for the value Set '${url}' could not be found`,
        'Unable_to_resolve_value_Set_',
      );
    }
    return found;
  }
}

/** An $expand request: which value set, the resources it brought, and its parameters. */
export interface ExpandRequest {
  target: ValueSetTarget;
  resources: TerminologyResource[];
  options: Omit<ExpansionOptions, 'maxCodes'>;
}

/** The options a page read in the database takes; any other must be unset. */
const PAGED_OPTIONS = new Set([
  'count',
  'offset',
  'echo',
  'activeOnly',
  'filter',
  'languages',
  'acceptLanguage',
  'includeDesignations',
  'designations',
  'properties',
  'excludeNested',
]);
/** The request parameters such a request may have (echoed as given). */
const PAGED_PARAMETERS = new Set([
  'url',
  'valueSetVersion',
  'count',
  'offset',
  'activeOnly',
  'filter',
  'displayLanguage',
  'includeDesignations',
  'designation',
  'excludeNested',
]);

/**
 * Whether an $expand may be paged in the database: a stored value set named by `url` (and
 * `valueSetVersion`), no resources of the request's own, and no parameter but paging,
 * `activeOnly`, `filter` and how each code is shown (languages, designations, properties) — no
 * version rules, supplements or `includeDefinition`.
 */
export function sqlPageable({ target, resources, options }: ExpandRequest): boolean {
  if (!target.url || target.valueSet || resources.length > 0) return false;
  const unset = (value: unknown) =>
    value === undefined || (Array.isArray(value) && value.length === 0);
  return (
    Object.entries(options).every(([name, value]) => PAGED_OPTIONS.has(name) || unset(value)) &&
    (options.echo ?? []).every((p) => PAGED_PARAMETERS.has(p.name))
  );
}

/** A ValueSet/$validate-code request: which value set, the code, resources and parameters. */
export interface ValidateRequest {
  target: ValueSetTarget;
  input: CodeInput;
  resources: TerminologyResource[];
  options: Omit<ValidateOptions, 'maxCodes'>;
}

/** The options a check by code takes; any other must be unset. */
const BY_CODE_OPTIONS = new Set([
  'activeOnly',
  'languages',
  'acceptLanguage',
  'echo',
  'inferSystem',
  'lenientDisplay',
  'abstractAllowed',
  'membershipOnly',
]);

/**
 * Whether a ValueSet/$validate-code may be answered by code: a stored value set named by `url`
 * (and `valueSetVersion`), no resources of the request's own, every coding with a system and a
 * code, and no version rules, supplements or other expansion parameters.
 */
export function byCodeValidatable({ target, input, resources, options }: ValidateRequest): boolean {
  if (!target.url || target.valueSet || resources.length > 0) return false;
  const codings = input.kind === 'codeableConcept' ? input.concept.coding : [input.coding];
  if (!Array.isArray(codings) || codings.length === 0) return false;
  const named = codings.every((c) => typeof c.system === 'string' && typeof c.code === 'string');
  const unset = (value: unknown) =>
    value === undefined || (Array.isArray(value) && value.length === 0);
  return (
    named &&
    Object.entries(options).every(([name, value]) => BY_CODE_OPTIONS.has(name) || unset(value))
  );
}

/** Whether includes name distinct systems (then no two versions of one are shown apart). */
function distinctSystems(includes: ConceptSetComponent[]): boolean {
  const systems = includes.map((include) => include.system);
  return new Set(systems).size === systems.length;
}

/** The codes a $validate-code input names. */
function codesOf(input: CodeInput): string[] {
  const codings = input.kind === 'codeableConcept' ? (input.concept.coding ?? []) : [input.coding];
  return codings.map((c) => c.code).filter((code): code is string => typeof code === 'string');
}
