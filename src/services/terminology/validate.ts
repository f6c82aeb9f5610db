import { STANDARDS_STATUS, type CodeSystemModel, type ConceptEntry } from './code-system';
import {
  canonicalOf,
  Expander,
  VALUESET_DEPRECATED,
  warnedStatuses,
  type CodeSet,
  type ExpandedCode,
  type ExpansionOptions,
} from './expand';
import type {
  CanonicalResource,
  CodeableConcept,
  Coding,
  ConceptSetComponent,
  Designation,
  ValueSetResource,
} from './fhir';
import { standardsStatusOf } from './fhir';
import { AppError } from '../../errors';
import { isTerminologyError, type IssueSpec, TerminologyError } from './issues';
import { displaysOf, isLanguageTag, languageMatches, type LanguagePreference } from './languages';
import {
  compareVersions,
  presentVersions,
  splitCanonical,
  versionMatches,
  type TerminologyLibrary,
} from './library';

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
  /** The code as the code system spells it, when the input differs from it by case. */
  normalizedCode?: string;
  issues: IssueSpec[];
  /** Unknown code systems the value set depends on: the answer could not be settled. */
  unknownSystems: string[];
  /** Unknown code systems of the input that the value set does not use. */
  unknownInputSystems: string[];
}

/** The outcome of checking one coding. */
interface CodingCheck {
  coding: Coding;
  model?: CodeSystemModel;
  entry?: ConceptEntry;
  valid: boolean;
  issues: IssueSpec[];
  /**
   * Found in the code system and in the value set (display issues aside); undefined when that
   * cannot be decided (the value set draws on a code system, or version, that is unknown).
   */
  member?: boolean;
  /** Code systems (`url|version`) that could not be found. */
  unknown: string[];
  /**
   * The unknown code systems are the input's only: the value set does not use them
   * (`x-unknown-system`, not `x-caused-by-unknown-system`).
   */
  unknownInput?: boolean;
  /** The value set could not be evaluated (content it names is missing). */
  valueSetMissing?: boolean;
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
    this.expander = new Expander(library, options, true);
  }

  async validate(input: CodeInput, valueSet?: ValueSetResource): Promise<ValidateResult> {
    if (valueSet) this.expander.requireSupplementsOf(valueSet);
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
      normalizedCode: normalizedCodeOf(check),
      issues: uniqueIssues([...check.issues, ...(await this.valueSetStatusIssues(valueSet))]),
      ...unknownSystemsOf([check]),
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
    const issues = uniqueIssues([
      ...checks.flatMap((c) => c.issues),
      ...(await this.valueSetStatusIssues(valueSet)),
    ]);
    const members = checks.filter((c) => c.member);
    // Against a value set, the answer names the coding found in it (none: no code, no system).
    const chosen = valueSet ? members[0] : (checks.find((c) => c.entry) ?? checks[0]);
    const valid =
      members.length > 0 &&
      checks.every((c) => c.valid || !c.member) &&
      members.some((c) => c.valid);
    // Not when membership could not be settled (an unknown code system or a missing value set).
    if (
      valueSet &&
      checks.every((c) => c.member === false) &&
      !checks.some((c) => c.valueSetMissing)
    ) {
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
      normalizedCode: chosen && normalizedCodeOf(chosen),
      issues,
      ...unknownSystemsOf(checks),
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
    /** Code systems (`url|version`) that could not be found (`x-caused-by-unknown-system`). */
    const unknown: string[] = [];
    const notInVs = (text?: string): IssueSpec => ({
      severity: inConcept ? 'information' : 'error',
      code: 'code-invalid',
      txCode: inConcept ? 'this-code-not-in-vs' : 'not-in-vs',
      text:
        text ??
        `The provided code '${describe(coding)}' was not found in the value set '${valueSet ? vsName(valueSet) : ''}'`,
      path: at('code'),
      messageId: 'None_of_the_provided_codes_are_in_the_value_set_one',
    });
    const failed = (extra: IssueSpec[] = [], member = false): CodingCheck => ({
      coding,
      valid: false,
      issues: [...issues, ...extra],
      member,
      unknown,
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
          const text = `The System URI could not be determined for the code '${coding.code}' in the ValueSet '${vsName(valueSet)}'`;
          issues.push({
            severity: 'error',
            code: 'not-found',
            txCode: 'cannot-infer',
            text:
              systems.size > 1
                ? `${text}: value set expansion has multiple matches: [${[...systems].join(', ')}]`
                : text,
            path: at('code'),
            messageId:
              systems.size > 1
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

    // The code system version: the value set's include decides it, else the coding's (or the
    // request's), each subject to the version parameters.
    const stated = coding.version ?? this.options.systemVersion;
    const include = valueSet ? includeFor(valueSet, coding, included) : undefined;
    const version = include
      ? await this.includeVersion(system, include.version, stated, at, issues, unknown)
      : stated;
    const wanted = this.expander.versionBase(system, version);
    const stored = await this.library.codeSystem(system, wanted);
    const model = stored && (await this.expander.withSupplements(stored));
    if (!model) {
      const known = await this.library.knownVersions(system);
      const namesValueSet =
        known.length === 0 && (await this.library.valueSet(system)) !== undefined;
      issues.push(...systemReferenceIssues(system, namesValueSet, at('system')));
      if (!namesValueSet) {
        issues.push(await this.unknownSystem(system, wanted, at('system'), unknown));
      }
      // Membership cannot be settled when the value set draws on the unknown code system.
      const dependedOn =
        valueSet !== undefined && (include !== undefined || includesSystem(valueSet, system));
      return {
        ...failed(valueSet && !dependedOn ? [notInVs()] : []),
        member: dependedOn ? undefined : false,
        // Not what decided the result (x-unknown-system), when the value set does not use it.
        unknownInput: valueSet !== undefined && !dependedOn,
      };
    }
    if (model.content === 'supplement') {
      issues.push({
        severity: 'error',
        code: 'invalid',
        txCode: 'invalid-data',
        text: `CodeSystem ${model.canonical} is a supplement, so can't be used as a value in ${at('system')}`,
        path: at('system'),
        messageId: 'CODESYSTEM_CS_NO_SUPPLEMENT',
      });
      return failed(valueSet ? [notInVs()] : []);
    }
    const refused = this.expander.versionCheckIssue(model, at('version'));
    if (refused) issues.push(refused);
    issues.push(...statusIssues(model.resource));
    const entry = coding.code === undefined ? undefined : model.concept(coding.code);
    if (!entry) {
      // Only membership is asked: a code the code system lacks is simply not in the value set.
      if (this.options.membershipOnly) return { ...failed(valueSet ? [notInVs()] : []), model };
      if (model.content === 'fragment')
        return this.fragmentCheck(coding, model, valueSet, issues, at('code'), notInVs);
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
    if (entry.code !== coding.code) {
      issues.push({
        severity: 'information',
        code: 'business-rule',
        txCode: 'code-rule',
        text: `The code '${coding.code}' differs from the correct code '${entry.code}' by case. Although the code system '${model.canonical}' is case insensitive, implementers are strongly encouraged to use the correct case anyway`,
        path: at('code'),
        messageId: 'CODE_CASE_DIFFERENCE',
      });
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
    } else if (entry.deprecated && !this.options.membershipOnly) {
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
        if (!isTerminologyError(error) || error.code !== 'NOT_FOUND') throw error;
        return {
          ...failed(error.issues.map(asValidationIssue)),
          model,
          entry,
          valueSetMissing: true,
        };
      }
      // Where the compose names several versions, the code must be there in the version used.
      const found = set.codes.find(
        (c) =>
          c.system === system &&
          c.code === entry.code &&
          (!set.showVersions || c.version === model.version),
      );
      member = found !== undefined;
      if (found && isDeprecatedInValueSet(found)) {
        issues.push({
          severity: 'warning',
          code: 'business-rule',
          txCode: 'code-comment',
          text: `The presence of the concept '${entry.code}' in the system '${system}' in the value set ${vsName(valueSet)} is marked with a status of deprecated and its use should be reviewed`,
          path: at('code'),
          messageId: 'CONCEPT_DEPRECATED_IN_VALUESET',
          inMessage: false,
        });
      }
      if (!member) {
        const inactiveOnly =
          entry.inactive &&
          (this.options.activeOnly || valueSet.compose?.inactive === false) &&
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
        text: `Code '${system}#${entry.code}' is abstract, and not allowed in this context`,
        path: at('code'),
        messageId: 'ABSTRACT_CODE_NOT_ALLOWED',
      });
      // A code that may not be used is not a member of the value set here.
      if (valueSet && member) issues.push(notInVs());
      member = false;
    }
    if (coding.display !== undefined && !this.options.membershipOnly) {
      const problem = this.displayProblem(model, entry, coding.display, at('display'));
      if (problem) issues.push(problem);
    }
    const valid = member && !issues.some((i) => i.severity === 'error' || i.severity === 'fatal');
    return { coding, model, entry, valid, issues, member, unknown };
  }

  /**
   * A code a fragment does not hold may be in another fragment: a warning, and the code is
   * taken as valid where the value set includes the whole system.
   */
  private fragmentCheck(
    coding: Coding,
    model: CodeSystemModel,
    valueSet: ValueSetResource | undefined,
    issues: IssueSpec[],
    path: string,
    notInVs: () => IssueSpec,
  ): CodingCheck {
    issues.push({
      severity: 'warning',
      code: 'code-invalid',
      txCode: 'invalid-code',
      text: `Unknown Code '${coding.code}' in the CodeSystem '${model.url}' version '${model.version ?? ''}' - note that the code system is labeled as a fragment, so the code may be valid in some other fragment`,
      path,
      messageId: 'UNKNOWN_CODE_IN_FRAGMENT',
    });
    const member =
      !valueSet ||
      (valueSet.compose?.include ?? []).some(
        (i) => i.system === model.url && !i.concept?.length && !i.filter?.length,
      );
    if (!member) issues.push(notInVs());
    return { coding, model, valid: member, issues, member, unknown: [] };
  }

  private members(valueSet: ValueSetResource): Promise<CodeSet> {
    this.codeSet ??= this.expander.codesOf(valueSet);
    return this.codeSet;
  }

  private withInactive(valueSet: ValueSetResource): Promise<CodeSet> {
    const compose = valueSet.compose && { ...valueSet.compose, inactive: undefined };
    return new Expander(this.library, { ...this.options, activeOnly: false }, true).codesOf({
      ...valueSet,
      compose,
    });
  }

  /** `status-check` issues for the value set and the value sets it includes. */
  private async valueSetStatusIssues(valueSet?: ValueSetResource): Promise<IssueSpec[]> {
    if (!valueSet) return [];
    const set = await this.members(valueSet).catch(() => undefined);
    const included = await Promise.all(
      [...(set?.usedValueSets ?? [])].map((canonical) => {
        const { url, version } = splitCanonical(canonical);
        return this.library.valueSet(url, version);
      }),
    );
    return [valueSet, ...included].flatMap((vs) => (vs ? statusIssues(vs) : []));
  }

  /**
   * The code system version a value set's include uses for a coding: the include's (as the
   * version parameters settle it), or the coding's where that one is allowed; with the issues
   * when the coding names another version, or one that does not exist.
   */
  private async includeVersion(
    system: string,
    versionVS: string | undefined,
    versionCoding: string | undefined,
    at: (field: string) => string,
    issues: IssueSpec[],
    unknown: string[],
  ): Promise<string | undefined> {
    let result = this.expander.versionBase(system, versionVS);
    if (!versionCoding) return result;
    if (result && versionMatches(result, versionCoding)) result = versionCoding;
    if (!result && (await this.library.knownVersions(system)).includes(versionCoding))
      result = versionCoding;
    const model = await this.library.codeSystem(system, this.expander.versionBase(system, result));
    const mismatch = (
      version: string,
      where: string,
      messageId: string,
      severity: IssueSpec['severity'] = 'error',
    ) =>
      issues.push({
        severity,
        code: 'invalid',
        txCode: 'vs-invalid',
        text: `The code system '${system}' version '${version}'${where} in the ValueSet include is different to the one in the value ('${versionCoding}')`,
        path: at('version'),
        messageId,
        // A warning about the default version is not repeated in the message.
        inMessage: severity !== 'warning',
      });
    if (model && !versionMatches(versionCoding, model.version)) {
      if (!result)
        mismatch(
          model.version ?? '',
          ' for the versionless include',
          'VALUESET_VALUE_MISMATCH_DEFAULT',
          'warning',
        );
      else if (result !== versionVS)
        mismatch(
          result,
          ` resulting from the version '${versionVS ?? ''}'`,
          'VALUESET_VALUE_MISMATCH_CHANGED',
        );
      else mismatch(result, '', 'VALUESET_VALUE_MISMATCH');
      if (!(await this.library.codeSystem(system, versionCoding)))
        issues.push(await this.unknownSystem(system, versionCoding, at('system'), unknown));
    } else if (!model && result !== versionCoding) {
      mismatch(result ?? '', '', 'VALUESET_VALUE_MISMATCH');
    }
    return result;
  }

  /** The issue for a code system (version) that is not known; records it in `unknown`. */
  private async unknownSystem(
    system: string,
    version: string | undefined,
    path: string,
    unknown: string[],
  ): Promise<IssueSpec> {
    const known = version ? await this.library.knownVersions(system) : [];
    unknown.push(version && known.length > 0 ? `${system}|${version}` : system);
    const missing = `A definition for CodeSystem '${system}'${version ? ` version '${version}'` : ''} could not be found, so the code cannot be validated`;
    const text = !version
      ? missing
      : known.length > 0
        ? `${missing}. Valid versions: ${presentVersions(known)}`
        : `${missing}. No versions of this code system are known`;
    return {
      severity: 'error',
      code: 'not-found',
      txCode: 'not-found',
      text,
      path,
      messageId: !version
        ? 'UNKNOWN_CODESYSTEM'
        : known.length > 0
          ? 'UNKNOWN_CODESYSTEM_VERSION'
          : 'UNKNOWN_CODESYSTEM_VERSION_NONE',
    };
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
      throw AppError.withIssues('INVALID', {
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
    // A designation of a special use in no stated language is not offered as a display.
    const shown = candidates.filter(
      (d, i, list) =>
        (d.language !== undefined || d.use === undefined) &&
        list.findIndex((o) => o.value === d.value && o.language === d.language) === i,
    );
    const named = (d: Designation) => `'${d.value}'${d.language ? ` (${d.language})` : ''}`;
    const valid =
      shown.length === 1
        ? `Valid display is ${named(shown[0])}`
        : `Valid display is one of ${shown.length} choices: ${shown.map(named).join(' or ')}`;
    return issue(
      `${whitespace ? 'Wrong whitespace in Display Name' : 'Wrong Display Name'} '${display}' for ${model.url}#${entry.code}. ${valid} (for the language(s) '${languages?.tags.join(', ') ?? '--'}')`,
      whitespace
        ? 'Display_Name_WS_for__should_be_one_of__instead_of'
        : 'Display_Name_for__should_be_one_of__instead_of',
    );
  }
}

/** A designation whose standards status says it is no longer to be used. */
function isDeprecated(designation: Designation): boolean {
  const status = standardsStatusOf(designation);
  return status === 'deprecated' || status === 'withdrawn';
}

/** The versions of a system a value set's includes name, latest first. */
function includedVersions(valueSet: ValueSetResource, system: string): string[] {
  const versions = (valueSet.compose?.include ?? [])
    .filter((i) => i.system === system && i.version !== undefined)
    .map((i) => i.version as string);
  return [...new Set(versions)].sort((a, b) => compareVersions(b, a));
}

/** Concept statuses the answer reports (`status`); others (active, inactive, local codes) not. */
const REPORTED_STATUSES = new Set(['retired', 'deprecated', 'withdrawn', 'experimental', 'draft']);

function statusOf(entry: ConceptEntry | undefined): string | undefined {
  return entry?.status && REPORTED_STATUSES.has(entry.status) ? entry.status : undefined;
}

function normalizedCodeOf(check: CodingCheck): string | undefined {
  return check.entry && check.entry.code !== check.coding.code ? check.entry.code : undefined;
}

/** `Reference to draft CodeSystem …`: what a reference to a resource of that status warns. */
function statusIssues(resource: CanonicalResource): IssueSpec[] {
  return warnedStatuses(resource).map((status) => ({
    severity: 'information',
    code: 'business-rule',
    txCode: 'status-check',
    text: `Reference to ${status} ${resource.resourceType} ${canonicalOf(resource)}`,
    messageId: `MSG_${status.toUpperCase()}`,
  }));
}

/** Whether a value set marks its code deprecated (valueset-deprecated or standards-status). */
function isDeprecatedInValueSet(code: ExpandedCode): boolean {
  return (code.extension ?? []).some(
    (e) =>
      (e.url === VALUESET_DEPRECATED && (e.valueCode === 'true' || e.valueBoolean === true)) ||
      (e.url === STANDARDS_STATUS && e.valueCode === 'deprecated'),
  );
}

/** A system that is no code system's URL: a local reference, or a value set's URL. */
function systemReferenceIssues(system: string, namesValueSet: boolean, path: string): IssueSpec[] {
  const issues: IssueSpec[] = [];
  if (!/^[a-z][a-z0-9+.-]*:/i.test(system)) {
    issues.push({
      severity: 'error',
      code: 'invalid',
      txCode: 'invalid-data',
      text: `${path} must be an absolute reference, not a local reference`,
      path,
      messageId: 'Terminology_TX_System_Relative',
    });
  }
  if (namesValueSet) {
    issues.push({
      severity: 'error',
      code: 'invalid',
      txCode: 'invalid-data',
      text: `The Coding references a value set, not a code system ('${system}')`,
      path,
      messageId: 'Terminology_TX_System_ValueSet2',
    });
  }
  return issues;
}

/** Whether a value set's compose draws on a code system (its includes and excludes). */
function includesSystem(valueSet: ValueSetResource, system: string): boolean {
  const compose = valueSet.compose;
  return [...(compose?.include ?? []), ...(compose?.exclude ?? [])].some(
    (c) => c.system === system,
  );
}

/** The same issue once (codings of one concept can raise it each). */
function uniqueIssues(issues: IssueSpec[]): IssueSpec[] {
  return issues.filter(
    (issue, i) => issues.findIndex((o) => o.text === issue.text && o.path === issue.path) === i,
  );
}

/** The unknown code systems of the checks, by whether the value set depends on them. */
function unknownSystemsOf(
  checks: CodingCheck[],
): Pick<ValidateResult, 'unknownSystems' | 'unknownInputSystems'> {
  const systems = (input: boolean) => [
    ...new Set(checks.filter((c) => !!c.unknownInput === input).flatMap((c) => c.unknown)),
  ];
  return { unknownSystems: systems(false), unknownInputSystems: systems(true) };
}

/** `system|version#code ('display')`, as messages name a coding. */
function describe(coding: Coding): string {
  const system = coding.system ?? '';
  const versioned = coding.version ? `${system}|${coding.version}` : system;
  const display = coding.display !== undefined ? ` ('${coding.display}')` : '';
  return `${versioned}#${coding.code ?? ''}${display}`;
}

/**
 * The include of a value set that a coding falls under: among those naming its system (and
 * listing its code, when they list codes), the one whose version the coding names, else the one
 * with the latest version. `version`: only the includes of that version (a versionless coding
 * checked in each version the value set includes).
 */
function includeFor(
  valueSet: ValueSetResource,
  coding: Coding,
  version?: string,
): ConceptSetComponent | undefined {
  const naming = (valueSet.compose?.include ?? []).filter(
    (i) => i.system === coding.system && (version === undefined || i.version === version),
  );
  const listing = naming.filter(
    (i) => !i.concept?.length || i.concept.some((c) => c.code === coding.code),
  );
  const candidates = listing.length > 0 ? listing : naming;
  const named = candidates.find(
    (i) => i.version && coding.version && versionMatches(i.version, coding.version),
  );
  return (
    named ??
    candidates.reduce<ConceptSetComponent | undefined>(
      (best, i) => (!best || compareVersions(i.version, best.version) > 0 ? i : best),
      undefined,
    )
  );
}

function vsName(valueSet: ValueSetResource): string {
  return valueSet.url ? canonicalOf(valueSet) : '(unidentified)';
}

/** The output parameters of $validate-code, by name (the edge orders them). */
/** Validation names a missing included value set as any value set it cannot resolve. */
function asValidationIssue(issue: IssueSpec): IssueSpec {
  return issue.messageId === 'VS_EXP_IMPORT_UNK_PINNED'
    ? { ...issue, messageId: 'Unable_to_resolve_value_Set_' }
    : issue;
}

export { TerminologyError };
