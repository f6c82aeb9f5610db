import type { CodeSystemModel, ConceptEntry } from './code-system';
import { canonicalOf, Expander, type CodeSet, type ExpansionOptions } from './expand';
import type {
  CodeableConcept,
  Coding,
  Designation,
  Extension,
  ParameterValue,
  ValueSetResource,
} from './fhir';
import { standardsStatusOf } from './fhir';
import { isTerminologyError, type IssueSpec, issueOf, TerminologyError } from './issues';
import { displaysOf, isLanguageTag, languageMatches, type LanguagePreference } from './languages';
import type { TerminologyLibrary } from './library';

const VALUESET_DEPRECATED = 'http://hl7.org/fhir/StructureDefinition/valueset-deprecated';

/** What $validate-code was asked to check, in the form it was given. */
export type CodeInput =
  | { kind: 'code'; coding: Coding }
  | { kind: 'coding'; coding: Coding }
  | { kind: 'codeableConcept'; concept: CodeableConcept };

export interface ValidateOptions extends ExpansionOptions {
  inferSystem?: boolean;
  /** Display mismatches are warnings, not errors. */
  lenientDisplay?: boolean;
  /** `abstract`: whether abstract (not selectable) codes are valid. */
  abstractAllowed?: boolean;
  /** `systemVersion` of ValueSet/$validate-code: the code system version when the input has none. */
  systemVersion?: string;
  /** Only membership is checked (`valueset-membership-only`). */
  membershipOnly?: boolean;
}

/** The answer of $validate-code, as the output parameters name it. */
export interface ValidateResult {
  result: boolean;
  code?: string;
  system?: string;
  version?: string;
  display?: string;
  inactive?: boolean;
  /** The concept's status when it is not simply active (`retired`, `deprecated`, …). */
  status?: string;
  codeableConcept?: CodeableConcept;
  issues: IssueSpec[];
  unknownSystems: string[];
}

/** The outcome of checking one coding. */
interface CodingCheck {
  coding: Coding;
  model?: CodeSystemModel;
  entry?: ConceptEntry;
  valid: boolean;
  issues: IssueSpec[];
  /** Found in the code system and in the value set (display issues aside). */
  member: boolean;
}

/**
 * $validate-code against a value set (or, with no value set, against the code system the coding
 * names): code, display, status and membership, with the issues tx-issue-type names.
 */
export class Validator {
  private readonly expander: Expander;
  private codeSet?: Promise<CodeSet>;

  constructor(
    private readonly library: TerminologyLibrary,
    private readonly options: ValidateOptions,
  ) {
    this.expander = new Expander(library, options);
  }

  async validate(input: CodeInput, valueSet?: ValueSetResource): Promise<ValidateResult> {
    await this.expander.checkSupplements();
    if (input.kind === 'codeableConcept') return this.validateConcept(input.concept, valueSet);
    const prefix = input.kind === 'code' ? '' : 'Coding.';
    const check = await this.check(input.coding, prefix, input.kind === 'code', valueSet, false);
    const coding = check.coding;
    const result: ValidateResult = {
      result: check.valid,
      code: coding.code,
      system: coding.system,
      version: check.model?.version,
      display: check.entry
        ? (this.bestDisplay(check.model as CodeSystemModel, check.entry) ?? undefined)
        : undefined,
      inactive: check.entry?.inactive || undefined,
      status: statusOf(check.entry),
      issues: check.issues,
      unknownSystems: check.model || !coding.system ? [] : [coding.system],
    };
    return result;
  }

  private async validateConcept(
    concept: CodeableConcept,
    valueSet?: ValueSetResource,
  ): Promise<ValidateResult> {
    const codings = Array.isArray(concept.coding) ? concept.coding : [];
    const checks: CodingCheck[] = [];
    for (const [i, coding] of codings.entries()) {
      checks.push(await this.check(coding, `CodeableConcept.coding[${i}].`, false, valueSet, true));
    }
    const issues = checks.flatMap((c) => c.issues);
    const members = checks.filter((c) => c.member);
    const chosen = members[0] ?? checks.find((c) => c.entry) ?? checks[0];
    const valid =
      members.length > 0 &&
      checks.every((c) => c.valid || !c.member) &&
      members.some((c) => c.valid);
    if (valueSet && members.length === 0) {
      issues.push({
        severity: 'error',
        code: 'code-invalid',
        txCode: 'not-in-vs',
        text: `No valid coding was found for the value set '${canonicalOf(valueSet)}'`,
        messageId: 'TX_GENERAL_CC_ERROR_MESSAGE',
      });
    }
    const hasError = issues.some((i) => i.severity === 'error' || i.severity === 'fatal');
    return {
      result: valid && !hasError,
      code: chosen?.coding.code,
      system: chosen?.coding.system,
      version: chosen?.model?.version,
      display:
        chosen?.entry && chosen.model ? this.bestDisplay(chosen.model, chosen.entry) : undefined,
      inactive: chosen?.entry?.inactive || undefined,
      status: statusOf(chosen?.entry),
      codeableConcept: concept,
      issues,
      unknownSystems: checks
        .filter((c) => !c.model && c.coding.system)
        .map((c) => c.coding.system as string),
    };
  }

  /** Checks one coding: its system, its code, its display, its status, its membership. */
  private async check(
    given: Coding,
    prefix: string,
    bare: boolean,
    valueSet: ValueSetResource | undefined,
    inConcept: boolean,
  ): Promise<CodingCheck> {
    const coding = { ...given };
    const at = (field: string) => (bare ? field : `${prefix}${field}`);
    const whole = bare ? 'code' : prefix.replace(/\.$/, '');
    const issues: IssueSpec[] = [];
    const notInVs = (text?: string): IssueSpec => ({
      severity: inConcept ? 'information' : 'error',
      code: 'code-invalid',
      txCode: inConcept ? 'this-code-not-in-vs' : 'not-in-vs',
      text:
        text ??
        `The provided code '${describe(coding)}' was not found in the value set '${valueSet ? vsName(valueSet) : ''}'`,
      path: at('code'),
      messageId: inConcept
        ? 'None_of_the_provided_codes_are_in_the_value_set_one'
        : 'None_of_the_provided_codes_are_in_the_value_set_one',
    });
    const failed = (extra: IssueSpec[] = [], member = false): CodingCheck => ({
      coding,
      valid: false,
      issues: [...issues, ...extra],
      member,
    });

    if (!coding.system) {
      if (valueSet && this.options.inferSystem) {
        const set = await this.members(valueSet).catch(() => undefined);
        const systems = new Set(
          (set?.codes ?? []).filter((c) => c.code === coding.code).map((c) => c.system),
        );
        if (systems.size === 1) {
          coding.system = [...systems][0];
        } else {
          issues.push({
            severity: 'error',
            code: 'not-found',
            txCode: 'cannot-infer',
            text: `The System URI could not be determined for the code '${coding.code}' in the ValueSet '${vsName(valueSet)}'`,
            path: at('code'),
            messageId: 'UNABLE_TO_INFER_CODESYSTEM',
          });
          return failed([notInVs()]);
        }
      } else {
        issues.push({
          severity: 'warning',
          code: 'invalid',
          txCode: 'invalid-data',
          text: 'Coding has no system. A code with no system has no defined meaning, and it cannot be validated. A system should be provided',
          path: bare ? 'code' : whole,
          messageId: 'Coding_has_no_system__cannot_validate',
        });
        return failed(valueSet ? [notInVs()] : []);
      }
    }
    const system = coding.system;

    // The code system version: the coding's, else the request's, else the value set's include.
    let version = coding.version ?? this.options.systemVersion;
    let pinned: string | undefined;
    if (valueSet) pinned = this.pinnedVersion(valueSet, system);
    try {
      version = this.expander.versionFor(system, version ?? pinned, 'ValueSet.compose.include');
    } catch (error) {
      if (!isTerminologyError(error)) throw error;
      return failed(error.issues);
    }
    const found = await this.library.codeSystem(system, version);
    const model = found && (await this.expander.withSupplements(found));
    if (!model) {
      const known = (await this.library.codeSystemVersions(system))
        .map((r) => r.version)
        .filter((v): v is string => v !== undefined);
      const text =
        version && known.length > 0
          ? `A definition for CodeSystem '${system}' version '${version}' could not be found, so the code cannot be validated. Valid versions: ${known.join(', ')}`
          : `A definition for CodeSystem '${system}' could not be found, so the code cannot be validated`;
      issues.push({
        severity: 'error',
        code: 'not-found',
        txCode: 'not-found',
        text,
        path: at('system'),
        messageId:
          version && known.length > 0 ? 'UNKNOWN_CODESYSTEM_VERSION' : 'UNKNOWN_CODESYSTEM',
      });
      return failed(valueSet ? [notInVs()] : []);
    }
    if (model.content === 'supplement') {
      issues.push({
        severity: 'error',
        code: 'invalid',
        txCode: 'invalid-data',
        text: `CodeSystem ${model.canonical} is a supplement, so can't be used as a value in Coding.system`,
        path: at('system'),
        messageId: 'CODESYSTEM_CS_NO_SUPPLEMENT',
      });
      return failed(valueSet ? [notInVs()] : []);
    }
    const entry = coding.code === undefined ? undefined : model.concept(coding.code);
    if (!entry) {
      issues.push({
        severity: 'error',
        code: 'code-invalid',
        txCode: 'invalid-code',
        text: model.version
          ? `Unknown code '${coding.code}' in the CodeSystem '${system}' version '${model.version}'`
          : `Unknown code '${coding.code}' in the CodeSystem '${system}'`,
        path: at('code'),
        messageId: model.version ? 'Unknown_Code_in_Version' : 'Unknown_Code_in',
      });
      return { ...failed(valueSet ? [notInVs()] : []), model };
    }
    if (entry.inactive && !this.options.membershipOnly) {
      issues.push({
        severity: 'warning',
        code: 'business-rule',
        txCode: 'code-comment',
        text:
          entry.status && entry.status !== 'inactive'
            ? `The concept '${entry.code}' has a status of ${entry.status} and inactive and its use should be reviewed`
            : `The concept '${entry.code}' has a status of inactive and its use should be reviewed`,
        path: bare ? 'code' : whole,
        messageId: 'INACTIVE_CONCEPT_FOUND',
      });
    }
    if (entry.deprecated && !entry.inactive && !this.options.membershipOnly) {
      issues.push({
        severity: 'warning',
        code: 'business-rule',
        txCode: 'code-comment',
        text: `The concept '${entry.code}' is deprecated and its use should be reviewed`,
        path: bare ? 'code' : whole,
        messageId: 'DEPRECATED_CONCEPT_FOUND',
      });
    }
    let member = true;
    if (valueSet) {
      let set: CodeSet;
      try {
        set = await this.members(valueSet);
      } catch (error) {
        // A value set that cannot be evaluated (a broken filter, a circle) is the request's
        // error; content that is missing is reported in the result.
        if (!isTerminologyError(error) || error.status !== 404) throw error;
        return { ...failed(error.issues), model, entry };
      }
      member = set.codes.some((c) => c.system === system && c.code === entry.code);
      if (!member) {
        const inactiveOnly =
          entry.inactive &&
          this.options.activeOnly &&
          (await this.withInactive(valueSet)).codes.some(
            (c) => c.system === system && c.code === entry.code,
          );
        if (inactiveOnly) {
          issues.push({
            severity: 'error',
            code: 'business-rule',
            txCode: 'code-rule',
            text: `The concept '${entry.code}' is valid but is not active`,
            path: at('code'),
            messageId: 'STATUS_CODE_WARNING_CODE',
          });
        }
        issues.push(notInVs());
      } else if (deprecatedIn(valueSet, system, entry.code)) {
        issues.push({
          severity: 'warning',
          code: 'business-rule',
          txCode: 'code-comment',
          text: `The presence of the concept '${entry.code}' in the system '${system}' in the value set ${canonicalOf(valueSet)} is marked with a status of deprecated and its use should be reviewed`,
          path: at('code'),
          messageId: 'CONCEPT_DEPRECATED_IN_VALUESET',
          inMessage: false,
        });
      }
    }
    if (entry.abstract && this.options.abstractAllowed === false) {
      issues.push({
        severity: 'error',
        code: 'business-rule',
        txCode: 'code-rule',
        text: `The code '${entry.code}' is abstract, and not allowed in this context`,
        path: at('code'),
        messageId: 'ABSTRACT_CODE_NOT_ALLOWED',
      });
    }
    if (coding.display !== undefined && !this.options.membershipOnly) {
      const problem = this.displayProblem(model, entry, coding.display, at('display'));
      if (problem) issues.push(problem);
    }
    const valid = member && !issues.some((i) => i.severity === 'error' || i.severity === 'fatal');
    return { coding, model, entry, valid, issues, member };
  }

  private members(valueSet: ValueSetResource): Promise<CodeSet> {
    this.codeSet ??= this.expander.codesOf(valueSet);
    return this.codeSet;
  }

  private withInactive(valueSet: ValueSetResource): Promise<CodeSet> {
    return new Expander(this.library, { ...this.options, activeOnly: false }).codesOf(valueSet);
  }

  /** The version a value set's include pins for a system, if exactly one include names it. */
  private pinnedVersion(valueSet: ValueSetResource, system: string): string | undefined {
    const versions = (valueSet.compose?.include ?? [])
      .filter((i) => i.system === system)
      .map((i) => i.version);
    return versions.length === 1 ? versions[0] : undefined;
  }

  private bestDisplay(model: CodeSystemModel, entry: ConceptEntry): string | undefined {
    const languages = this.options.languages;
    if (!languages) return entry.display;
    for (const tag of languages.tags) {
      const found = displaysOf(model, entry).find((d) => languageMatches(tag, d.language));
      if (found) return found.value;
    }
    return entry.display;
  }

  /** A display that is none of the concept's displays in the wanted languages. */
  private displayProblem(
    model: CodeSystemModel,
    entry: ConceptEntry,
    display: string,
    path: string,
  ): IssueSpec | undefined {
    const languages: LanguagePreference | undefined = this.options.languages;
    const invalidTag = languages?.tags.find((t) => !isLanguageTag(t));
    if (invalidTag !== undefined) {
      throw new TerminologyError(400, {
        severity: 'error',
        code: 'processing',
        txCode: 'invalid-display',
        text: `Invalid displayLanguage: '${languages?.text}'`,
        messageId: 'INVALID_DISPLAY_NAME',
      });
    }
    const known = displaysOf(model, entry);
    const all = known.filter((d) => !isDeprecated(d));
    const candidates = languages
      ? all.filter((d) => languages.tags.some((t) => languageMatches(t, d.language)) || !d.language)
      : all;
    const caseless = !model.caseSensitive;
    const same = (a: string, b: string) =>
      caseless ? a.toLowerCase() === b.toLowerCase() : a === b;
    if (candidates.some((d) => same(d.value, display))) return undefined;
    if (known.some((d) => isDeprecated(d) && same(d.value, display))) {
      const correct = candidates.map((d) => `"${d.value}"`).join(', ');
      return {
        severity: 'warning',
        code: 'invalid',
        txCode: 'display-comment',
        text: `'${display}' is no longer considered a correct display for code '${entry.code}' (status = deprecated). The correct display is one of ${correct}.`,
        path,
        messageId: 'INACTIVE_DISPLAY_FOUND',
        inMessage: false,
      };
    }
    const severity = this.options.lenientDisplay ? 'warning' : 'error';
    const issue = (text: string, messageId: string): IssueSpec => ({
      severity,
      code: 'invalid',
      txCode: 'invalid-display',
      text,
      path,
      messageId,
    });
    if (languages && candidates.length === 0) {
      const wanted = languages.tags.join(', ');
      if (all.some((d) => same(d.value, display))) {
        return {
          ...issue(
            `There are no valid display names found for the code ${model.url}#${entry.code} for language(s) '${wanted}'. The display is '${display}' which is a valid display for the default language`,
            'NO_VALID_DISPLAY_FOUND_NONE_FOR_LANG_OK',
          ),
          severity: 'information',
          inMessage: true,
        };
      }
      return issue(
        `Wrong Display Name '${display}' for ${model.url}#${entry.code}. There are no valid display names found for language(s) '${wanted}'. Default display is '${entry.display ?? ''}'`,
        'NO_VALID_DISPLAY_FOUND_NONE_FOR_LANG_ERR',
      );
    }
    const squash = (s: string) => s.replace(/\s+/g, ' ').trim();
    const whitespace = candidates.some((d) => same(squash(d.value), squash(display)));
    const shown = candidates.filter(
      (d, i, list) => list.findIndex((o) => o.value === d.value && o.language === d.language) === i,
    );
    const named = (d: Designation) => `'${d.value}'${d.language ? ` (${d.language})` : ''}`;
    const valid =
      shown.length === 1
        ? `Valid display is ${named(shown[0])}`
        : `Valid display is one of ${shown.length} choices: ${shown.map(named).join(' or ')}`;
    return issue(
      `${whitespace ? 'Wrong whitespace in Display Name' : 'Wrong Display Name'} '${display}' for ${model.url}#${entry.code}. ${valid} (for the language(s) '${languages?.tags.join(', ') ?? '--'}')`,
      'Display_Name_for__should_be_one_of__instead_of',
    );
  }
}

/**
 * Whether the value set lists the concept as deprecated in it (valueset-deprecated, or a
 * standards-status of deprecated).
 */
function deprecatedIn(valueSet: ValueSetResource, system: string, code: string): boolean {
  const deprecated = (concept: { extension?: Extension[] }) =>
    standardsStatusOf(concept) === 'deprecated' ||
    (concept.extension ?? []).some(
      (e) => e.url === VALUESET_DEPRECATED && (e.valueBoolean === true || e.valueCode === 'true'),
    );
  return (valueSet.compose?.include ?? [])
    .filter((include) => include.system === system)
    .some((include) => (include.concept ?? []).some((c) => c.code === code && deprecated(c)));
}

/** A designation whose standards status says it is no longer to be used. */
function isDeprecated(designation: Designation): boolean {
  const status = standardsStatusOf(designation);
  return status === 'deprecated' || status === 'withdrawn';
}

function statusOf(entry: ConceptEntry | undefined): string | undefined {
  if (!entry) return undefined;
  if (entry.status && entry.status !== 'active') return entry.status;
  return entry.inactive ? 'inactive' : undefined;
}

/** `system|version#code ('display')`, as messages name a coding. */
function describe(coding: Coding): string {
  const system = coding.system ?? '';
  const versioned = coding.version ? `${system}|${coding.version}` : system;
  const display = coding.display !== undefined ? ` ('${coding.display}')` : '';
  return `${versioned}#${coding.code ?? ''}${display}`;
}

function vsName(valueSet: ValueSetResource): string {
  return valueSet.url ? canonicalOf(valueSet) : '(unidentified)';
}

/** The output parameters of $validate-code, by name (the edge orders them). */
export function validateParameters(result: ValidateResult): ParameterValue[] {
  const out: ParameterValue[] = [];
  if (result.code !== undefined) out.push({ name: 'code', valueCode: result.code });
  if (result.codeableConcept)
    out.push({ name: 'codeableConcept', valueCodeableConcept: result.codeableConcept });
  if (result.display !== undefined) out.push({ name: 'display', valueString: result.display });
  if (result.inactive) out.push({ name: 'inactive', valueBoolean: true });
  if (result.issues.length > 0) {
    out.push({
      name: 'issues',
      resource: {
        resourceType: 'OperationOutcome',
        issue: result.issues.map(issueOf),
      } as never,
    });
  }
  const message = messageOf(result.issues);
  if (message) out.push({ name: 'message', valueString: message });
  out.push({ name: 'result', valueBoolean: result.result });
  if (result.status !== undefined) out.push({ name: 'status', valueCode: result.status });
  if (result.system !== undefined) out.push({ name: 'system', valueUri: result.system });
  if (result.version !== undefined) out.push({ name: 'version', valueString: result.version });
  for (const system of result.unknownSystems)
    out.push({ name: 'x-caused-by-unknown-system', valueCanonical: system });
  return out;
}

/** The `message`: the texts of the issues it repeats (see IssueSpec.inMessage), sorted, joined. */
function messageOf(issues: IssueSpec[]): string | undefined {
  const texts = [
    ...new Set(
      issues.filter((i) => i.inMessage ?? i.severity !== 'information').map((i) => i.text),
    ),
  ].sort();
  return texts.length > 0 ? texts.join('; ') : undefined;
}

export { TerminologyError };
