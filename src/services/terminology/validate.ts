import type { CodeSystemModel, ConceptEntry } from './code-system';
import {
  canonicalOf,
  Expander,
  type CodeSet,
  type ExpandedCode,
  type ExpansionOptions,
} from './expand';
import type { CodeableConcept, Coding, ParameterValue, ValueSetResource } from './fhir';
import { isTerminologyError, type IssueSpec, issueOf, TerminologyError } from './issues';
import { displaysOf, languageMatches, type LanguagePreference } from './languages';
import { compareVersions, type TerminologyLibrary } from './library';

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
    if (valueSet) this.expander.requireSupplementsOf(valueSet);
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
    // Against a value set, the answer names the coding found in it (none: no code, no system).
    const chosen = valueSet ? members[0] : (checks.find((c) => c.entry) ?? checks[0]);
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

  /**
   * Checks one coding. A coding naming no version, against a value set that includes several
   * versions of its system, is checked in each (latest first): the first where it is valid wins,
   * else the latest answers.
   */
  private async check(
    given: Coding,
    prefix: string,
    bare: boolean,
    valueSet: ValueSetResource | undefined,
    inConcept: boolean,
  ): Promise<CodingCheck> {
    const versions =
      valueSet && given.system && given.version === undefined && !this.options.systemVersion
        ? includedVersions(valueSet, given.system)
        : [];
    if (versions.length < 2) return this.checkIn(given, prefix, bare, valueSet, inConcept);
    const checks: CodingCheck[] = [];
    for (const version of versions) {
      const check = await this.checkIn(given, prefix, bare, valueSet, inConcept, version);
      if (check.valid) return check;
      checks.push(check);
    }
    return checks[0];
  }

  /** Checks one coding: its system, its code, its display, its status, its membership. */
  private async checkIn(
    given: Coding,
    prefix: string,
    bare: boolean,
    valueSet: ValueSetResource | undefined,
    inConcept: boolean,
    included?: string,
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
          const several = systems.size > 1;
          issues.push({
            severity: 'error',
            code: 'not-found',
            txCode: 'cannot-infer',
            text:
              `The System URI could not be determined for the code '${coding.code}' in the ValueSet '${vsName(valueSet)}'` +
              (several
                ? `: value set expansion has multiple matches: [${[...systems].join(', ')}]`
                : ''),
            path: at('code'),
            messageId: several
              ? 'Unable_to_resolve_system__value_set_has_multiple_matches'
              : 'UNABLE_TO_INFER_CODESYSTEM',
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
    if (valueSet) pinned = included ?? this.pinnedVersion(valueSet, system);
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
      const missing = `A definition for CodeSystem '${system}'${version ? ` version '${version}'` : ''} could not be found, so the code cannot be validated`;
      const text = !version
        ? missing
        : known.length > 0
          ? `${missing}. Valid versions: ${known.join(', ')}`
          : `${missing}. No versions of this code system are known`;
      issues.push({
        severity: 'error',
        code: 'not-found',
        txCode: 'not-found',
        text,
        path: at('system'),
        messageId: !version
          ? 'UNKNOWN_CODESYSTEM'
          : known.length > 0
            ? 'UNKNOWN_CODESYSTEM_VERSION'
            : 'UNKNOWN_CODESYSTEM_VERSION_NONE',
      });
      return failed(valueSet ? [notInVs()] : []);
    }
    if (model.content === 'supplement') {
      return failed([
        {
          severity: 'error',
          code: 'invalid',
          txCode: 'invalid-data',
          text: `CodeSystem ${model.canonical} is a supplement, so can't be used as a value in ${at('system')}`,
          path: at('system'),
          messageId: 'CODESYSTEM_CS_NO_SUPPLEMENT',
        },
      ]);
    }
    const entry = coding.code === undefined ? undefined : model.concept(coding.code);
    if (!entry && model.content === 'fragment') return this.unknownInFragment(coding, model, at);
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
      const found = set.codes.find(
        (c) =>
          c.system === system &&
          c.code === entry.code &&
          (!set.showVersions || c.version === model.version),
      );
      member = found !== undefined;
      if (member) issues.push(...statusChecks(set));
      if (found && deprecatedIn(found)) {
        issues.push({
          severity: 'warning',
          code: 'business-rule',
          txCode: 'code-comment',
          text: `The presence of the concept '${entry.code}' in the system '${system}' in the value set ${vsName(valueSet)} is marked with a status of deprecated and its use should be reviewed`,
          path: at('code'),
          messageId: 'CONCEPT_DEPRECATED_IN_VALUESET',
          issueOnly: true,
        });
      }
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
    const all = displaysOf(model, entry);
    const candidates = languages
      ? all.filter((d) => languages.tags.some((t) => languageMatches(t, d.language)) || !d.language)
      : all;
    const caseless = !model.caseSensitive;
    const same = (a: string, b: string) =>
      caseless ? a.toLowerCase() === b.toLowerCase() : a === b;
    if (candidates.some((d) => same(d.value, display))) return undefined;
    if (!languages && all.some((d) => same(d.value, display))) return undefined;
    const squash = (s: string) => s.replace(/\s+/g, ' ').trim();
    const whitespace = candidates.some((d) => same(squash(d.value), squash(display)));
    const shown = (candidates.length > 0 ? candidates : all).filter(
      (d, i, list) => list.findIndex((o) => o.value === d.value && o.language === d.language) === i,
    );
    // No display in the wanted languages, where the code system says what language it is in.
    const noneForLanguage = candidates.length === 0 && !!languages && !!model.resource.language;
    const valid =
      noneForLanguage && languages
        ? `There are no valid display names found for language(s) '${languages.tags.join(', ')}'. Default display is '${entry.display ?? ''}'`
        : shown.length === 1
          ? `Valid display is '${shown[0].value}' (${shown[0].language ?? 'en'})`
          : `Valid display is one of ${shown.length} choices: ${shown.map((d) => `'${d.value}' (${d.language ?? 'en'})`).join(' or ')}`;
    const text =
      `${whitespace ? 'Wrong whitespace in Display Name' : 'Wrong Display Name'} '${display}' for ${model.url}#${entry.code}. ${valid}` +
      (noneForLanguage ? '' : ` (for the language(s) '${languages?.tags.join(', ') ?? '--'}')`);
    return {
      severity: this.options.lenientDisplay ? 'warning' : 'error',
      code: 'invalid',
      txCode: 'invalid-display',
      text,
      path,
      messageId: noneForLanguage
        ? 'NO_VALID_DISPLAY_FOUND_NONE_FOR_LANG_ERR'
        : whitespace
          ? 'Display_Name_WS_for__should_be_one_of__instead_of'
          : 'Display_Name_for__should_be_one_of__instead_of',
    };
  }

  /** A code a fragment does not hold may be valid in another fragment: only a warning. */
  private unknownInFragment(
    coding: Coding,
    model: CodeSystemModel,
    at: (field: string) => string,
  ): CodingCheck {
    const version = model.version ? ` version '${model.version}'` : '';
    return {
      coding,
      model,
      valid: true,
      member: true,
      issues: [
        {
          severity: 'warning',
          code: 'code-invalid',
          txCode: 'invalid-code',
          text: `Unknown Code '${coding.code}' in the CodeSystem '${model.url}'${version} - note that the code system is labeled as a fragment, so the code may be valid in some other fragment`,
          path: at('code'),
          messageId: 'UNKNOWN_CODE_IN_FRAGMENT',
          issueOnly: true,
        },
      ],
    };
  }
}

/** What the value set's expansion warned of (draft, experimental, deprecated, withdrawn content). */
function statusChecks(set: CodeSet): IssueSpec[] {
  const checks: IssueSpec[] = [];
  for (const warning of set.warnings) {
    const status = /^warning-(draft|experimental|deprecated|withdrawn)$/.exec(warning.name)?.[1];
    const canonical = warning.valueUri;
    if (!status || typeof canonical !== 'string') continue;
    const type = set.usedCodeSystems.has(canonical) ? 'CodeSystem' : 'ValueSet';
    checks.push({
      severity: 'information',
      code: 'business-rule',
      txCode: 'status-check',
      text: `Reference to ${status} ${type} ${canonical}`,
      messageId: `MSG_${status.toUpperCase()}`,
    });
  }
  return checks;
}

/** Whether the value set marks the code deprecated (`valueset-deprecated`, standards status). */
function deprecatedIn(code: ExpandedCode): boolean {
  const sd = 'http://hl7.org/fhir/StructureDefinition/';
  return (code.extensions ?? []).some(
    (e) =>
      (e.url === `${sd}valueset-deprecated` &&
        (e.valueBoolean === true || e.valueCode === 'true')) ||
      (e.url === `${sd}structuredefinition-standards-status` && e.valueCode === 'deprecated'),
  );
}

/** The versions of a system a value set's includes name, latest first. */
function includedVersions(valueSet: ValueSetResource, system: string): string[] {
  const versions = (valueSet.compose?.include ?? [])
    .filter((i) => i.system === system && i.version !== undefined)
    .map((i) => i.version as string);
  return [...new Set(versions)].sort((a, b) => compareVersions(b, a));
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

/** The `message`: the texts of the issues that are not merely informational, sorted, joined. */
function messageOf(issues: IssueSpec[]): string | undefined {
  const texts = [
    ...new Set(
      issues.filter((i) => i.severity !== 'information' && !i.issueOnly).map((i) => i.text),
    ),
  ].sort();
  return texts.length > 0 ? texts.join('; ') : undefined;
}

export { TerminologyError };
