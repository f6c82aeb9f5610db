import { GraphQLJSONObject } from 'graphql-scalars';
import { ArgsType, Field, InputType, Int, ObjectType } from 'type-graphql';
import type {
  CodeableConcept,
  Coding,
  ExpansionEntry,
  ExpansionPage,
  IssueSpec,
  ValidateResult,
} from '../../services';
import type { LookupResult as CoreLookupResult } from '../../services/terminology/lookup';
import type { TranslationResult } from '../../services/terminology/translate';
import type { FhirResult } from '../../services/terminology/fhir-resource.service';
import { DISPLAY_LANGUAGE, TX_RESOURCES } from './descriptions';

@InputType({ description: 'A FHIR Coding: a code of a code system (version).' })
export class CodingInput implements Coding {
  @Field(() => String, { nullable: true, description: 'The code system canonical URL.' })
  system?: string;

  @Field(() => String, { nullable: true, description: 'The code system version.' })
  version?: string;

  @Field(() => String, { description: 'The code.' })
  code!: string;

  @Field(() => String, { nullable: true, description: 'A display for the code.' })
  display?: string;
}

@ObjectType('Coding', { description: 'A code as the terminology operations answer it.' })
export class CodingObject {
  @Field(() => String, { nullable: true, description: 'The code system canonical URL.' })
  system?: string;

  @Field(() => String, { nullable: true, description: 'The code system version.' })
  version?: string;

  @Field(() => String, { nullable: true, description: 'The code.' })
  code?: string;

  @Field(() => String, { nullable: true, description: 'The display of the code.' })
  display?: string;
}

@InputType({ description: 'A FHIR CodeableConcept: codings that mean one thing, and a text.' })
export class CodeableConceptInput implements CodeableConcept {
  @Field(() => [CodingInput], { nullable: true, description: 'The codings.' })
  coding?: CodingInput[];

  @Field(() => String, { nullable: true, description: 'A text for the concept.' })
  text?: string;
}

@ObjectType('CodeableConcept', { description: 'A CodeableConcept as $validate-code answers it.' })
export class CodeableConceptObject {
  @Field(() => [CodingObject], { description: 'The codings.' })
  coding!: CodingObject[];

  @Field(() => String, { nullable: true, description: 'Its text.' })
  text?: string;
}

/** An issue in the shape of an OperationOutcome issue (severity, code, details, expression). */
export function issueObject(spec: IssueSpec): Record<string, unknown> {
  return {
    severity: spec.severity,
    code: spec.code,
    ...(spec.messageId
      ? {
          extension: [
            {
              url: 'http://hl7.org/fhir/StructureDefinition/operationoutcome-message-id',
              valueString: spec.messageId,
            },
          ],
        }
      : {}),
    details: {
      ...(spec.txCode
        ? {
            coding: [
              { system: 'http://hl7.org/fhir/tools/CodeSystem/tx-issue-type', code: spec.txCode },
            ],
          }
        : {}),
      text: spec.text,
    },
    ...(spec.path ? { expression: [spec.path] } : {}),
  };
}

@ObjectType({ description: 'The answer of $validate-code.' })
export class ValidateCodeResult {
  @Field(() => Boolean, { description: 'Whether the code is valid.' })
  result!: boolean;

  @Field(() => String, { nullable: true, description: 'The issues, joined.' })
  message?: string;

  @Field(() => String, { nullable: true, description: 'The code validated.' })
  code?: string;

  @Field(() => String, { nullable: true, description: 'Its code system canonical URL.' })
  system?: string;

  @Field(() => String, { nullable: true, description: 'The code system version used.' })
  version?: string;

  @Field(() => String, { nullable: true, description: 'The display the code system gives.' })
  display?: string;

  @Field(() => Boolean, { description: 'Whether the code is inactive.' })
  inactive!: boolean;

  @Field(() => String, {
    nullable: true,
    description: "The concept's status when it is not simply active (`retired`, `deprecated`, …).",
  })
  status?: string;

  @Field(() => String, {
    nullable: true,
    description: 'The code as the code system spells it, when the input differs from it by case.',
  })
  normalizedCode?: string;

  @Field(() => CodeableConceptObject, {
    nullable: true,
    description: 'The CodeableConcept validated, when one was given.',
  })
  codeableConcept?: CodeableConceptObject;

  @Field(() => [GraphQLJSONObject], {
    description: 'OperationOutcome issues (severity, code, details with a tx-issue-type).',
  })
  issues!: Record<string, unknown>[];

  static from(result: ValidateResult): ValidateCodeResult {
    const message = [
      ...new Set(result.issues.filter((i) => i.severity !== 'information').map((i) => i.text)),
    ]
      .sort()
      .join('; ');
    return {
      result: result.result,
      message: message || undefined,
      code: result.code,
      system: result.system,
      version: result.version,
      display: result.display,
      inactive: result.inactive === true,
      status: result.status,
      normalizedCode: result.normalizedCode,
      codeableConcept: result.codeableConcept && {
        coding: result.codeableConcept.coding ?? [],
        text: result.codeableConcept.text,
      },
      issues: result.issues.map(issueObject),
    };
  }
}

@ObjectType('Designation', {
  description: 'A designation of a concept: a name in a language, of a use.',
})
export class DesignationObject {
  @Field(() => String, { nullable: true, description: 'Its language code.' })
  language?: string;

  @Field(() => CodingObject, { nullable: true, description: 'Its use (e.g. a synonym).' })
  use?: CodingObject;

  @Field(() => String, { description: 'The name text.' })
  value!: string;
}

@ObjectType({ description: 'A property of a concept ($lookup): its code and value.' })
export class LookupProperty {
  @Field(() => String, { description: 'The property code, e.g. `inactive`.' })
  code!: string;

  @Field(() => String, { nullable: true, description: 'The value, as text.' })
  value?: string;

  @Field(() => String, { nullable: true, description: 'The display of a related concept.' })
  description?: string;
}

@ObjectType({ description: 'The answer of $lookup.' })
export class LookupResult {
  @Field(() => String, { description: 'The code system name.' })
  name!: string;

  @Field(() => String, { nullable: true, description: 'The code system version.' })
  version?: string;

  @Field(() => String, { nullable: true, description: 'The display of the concept.' })
  display?: string;

  @Field(() => String, { nullable: true, description: 'Its definition, when it has one.' })
  definition?: string;

  @Field(() => Boolean, { description: 'Whether the concept is abstract (not for use).' })
  abstract!: boolean;

  @Field(() => [DesignationObject], { description: 'Its designations.' })
  designations!: DesignationObject[];

  @Field(() => [LookupProperty], { description: 'Its properties.' })
  properties!: LookupProperty[];

  static from(result: CoreLookupResult): LookupResult {
    return {
      name: result.name,
      version: result.version,
      display: result.display,
      definition: result.definition,
      abstract: result.abstract,
      designations: result.designations.map((d) => ({
        language: d.language,
        use: d.use,
        value: d.value,
      })),
      properties: result.properties.map((p) => ({
        code: p.code,
        value: textOf(p.value),
        description: p.description,
      })),
    };
  }
}

/** A property value as text: a Coding by its code, a primitive as it prints. */
function textOf(value: object): string | undefined {
  for (const [key, v] of Object.entries(value)) {
    if (key.startsWith('value') && key.length > 5)
      return typeof v === 'object' && v !== null
        ? ((v as Coding).code ?? JSON.stringify(v))
        : String(v);
  }
  return undefined;
}

@ObjectType({ description: 'A target a concept map gives a code.' })
export class TranslationMatch {
  @Field(() => String, { description: 'R4 equivalence (equivalent, wider, narrower, …).' })
  equivalence!: string;

  @Field(() => CodingObject, { description: 'The target code.' })
  concept!: CodingObject;

  @Field(() => String, { nullable: true, description: 'The concept map (url|version).' })
  originMap?: string;
}

@ObjectType({ description: 'The answer of $translate.' })
export class TranslateResult {
  @Field(() => Boolean, { description: 'Whether any translation was found.' })
  result!: boolean;

  @Field(() => String, {
    nullable: true,
    description: 'What was found, in words; null when a search without a map `url` found some.',
  })
  message?: string;

  @Field(() => [TranslationMatch], { description: 'The translations found.' })
  matches!: TranslationMatch[];

  static from(result: TranslationResult): TranslateResult {
    return {
      result: result.result,
      message: result.message,
      matches: result.matches.map((match) => ({
        equivalence: match.equivalence,
        concept: match.concept,
        originMap: match.originMap,
      })),
    };
  }
}

@ObjectType('ExpandedProperty', { description: 'A property value of an expanded code.' })
export class ExpandedPropertyObject {
  @Field(() => String, { description: 'The property code.' })
  code!: string;

  @Field(() => String, { nullable: true, description: 'The value, as text.' })
  value?: string;
}

@ObjectType('ExpansionParameter', {
  description: 'A parameter an expansion was made with (or a note it makes).',
})
export class ExpansionParameterObject {
  @Field(() => String, { description: 'The parameter name.' })
  name!: string;

  @Field(() => String, { nullable: true, description: 'The value, as text.' })
  value?: string;
}

@ObjectType('ExpandedCode', { description: 'A code of a value set expansion.' })
export class ExpandedCodeObject {
  @Field(() => String, { description: 'Its code system canonical URL.' })
  system!: string;

  @Field(() => String, {
    nullable: true,
    description: 'Shown when the expansion holds several versions of the system.',
  })
  version?: string;

  @Field(() => String, { description: 'The code.' })
  code!: string;

  @Field(() => String, { nullable: true, description: 'Its display.' })
  display?: string;

  @Field(() => Boolean, { description: 'Whether it is abstract (not selectable).' })
  abstract!: boolean;

  @Field(() => Boolean, { description: 'Whether it is inactive.' })
  inactive!: boolean;

  @Field(() => [DesignationObject], { description: 'Only when designations were asked for.' })
  designations!: DesignationObject[];

  @Field(() => [ExpandedPropertyObject], { description: 'Its properties.' })
  properties!: ExpandedPropertyObject[];

  @Field(() => [ExpandedCodeObject], { description: 'The codes under it (a hierarchy).' })
  contains!: ExpandedCodeObject[];

  static from(entry: ExpansionEntry): ExpandedCodeObject {
    return {
      system: entry.system,
      version: entry.version,
      code: entry.code,
      display: entry.display,
      abstract: entry.abstract,
      inactive: entry.inactive,
      designations: entry.designations.map((d) => ({
        language: d.language,
        use: d.use,
        value: d.value,
      })),
      properties: entry.properties.map((p) => ({ code: p.code, value: textOf(p.value) })),
      contains: entry.contains.map((c) => ExpandedCodeObject.from(c)),
    };
  }
}

@ObjectType({ description: 'The answer of ValueSet/$expand: a page of the expansion.' })
export class ValueSetExpansion {
  @Field(() => String, { nullable: true, description: 'The value set canonical URL.' })
  url?: string;

  @Field(() => String, { nullable: true, description: 'The value set version.' })
  version?: string;

  @Field(() => String, { nullable: true, description: 'The value set name.' })
  name?: string;

  @Field(() => String, { nullable: true, description: 'The value set title.' })
  title?: string;

  @Field(() => String, { description: 'A URN naming this expansion.' })
  identifier!: string;

  @Field(() => String, { description: 'When it was made (ISO 8601).' })
  timestamp!: string;

  @Field(() => Int, { description: 'Codes in the whole expansion, not only on this page.' })
  total!: number;

  @Field(() => Int, { nullable: true, description: 'Set when the request paged.' })
  offset?: number;

  @Field(() => [ExpansionParameterObject], {
    description: 'The parameters used: those given, the code systems and value sets used, notes.',
  })
  parameters!: ExpansionParameterObject[];

  @Field(() => [ExpandedCodeObject], { description: "The page's codes (roots of a hierarchy)." })
  contains!: ExpandedCodeObject[];

  @Field(() => GraphQLJSONObject, {
    description:
      'The value set expanded, as FHIR R4 JSON with its definition (compose): FHIR `includeDefinition`.',
  })
  definition!: Record<string, unknown>;

  static from(page: ExpansionPage): ValueSetExpansion {
    return {
      url: page.valueSet.url,
      version: page.valueSet.version,
      name: page.valueSet.name,
      title: page.valueSet.title,
      identifier: page.identifier,
      timestamp: page.timestamp,
      total: page.total,
      offset: page.offset,
      parameters: page.parameters.map((p) => ({ name: p.name, value: textOf(p) })),
      contains: page.contains.map((c) => ExpandedCodeObject.from(c)),
      definition: page.valueSet,
    };
  }
}

/**
 * The expansion parameters (FHIR `EXPANSION_PARAMETERS`) that $expand and $validate-code share,
 * each named as in FHIR or in the plural of a repeated FHIR parameter.
 */
@ArgsType()
export class ExpansionArgs {
  @Field(() => String, { nullable: true, description: 'Text that restricts the codes returned.' })
  filter?: string | null;

  @Field(() => Int, {
    nullable: true,
    description: 'Page size (0 or more); none: every code, within the unpaged limit.',
  })
  count?: number | null;

  @Field(() => Int, {
    nullable: true,
    description: 'Codes to skip before the page starts (0 or more).',
  })
  offset?: number | null;

  @Field(() => Boolean, { nullable: true, description: 'Leave inactive codes out.' })
  activeOnly?: boolean | null;

  @Field(() => String, { nullable: true, description: DISPLAY_LANGUAGE })
  displayLanguage?: string | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'FHIR `excludeNested`: the codes as a flat list, no hierarchy.',
  })
  excludeNested?: boolean | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'FHIR `includeDesignations`: each code with its designations.',
  })
  includeDesignations?: boolean | null;

  @Field(() => [String], {
    nullable: true,
    description:
      'FHIR `designation`: the designations wanted, each a language or the `system|code` of a use.',
  })
  designations?: string[] | null;

  @Field(() => [String], {
    nullable: true,
    description: 'FHIR `property`: the properties each code carries (codes of properties).',
  })
  properties?: string[] | null;

  @Field(() => [String], {
    nullable: true,
    description:
      'FHIR `system-version`: the version of a code system (`url|version`) where the value set names none.',
  })
  systemVersions?: string[] | null;

  @Field(() => [String], {
    nullable: true,
    description:
      'FHIR `check-system-version`: a value set naming another version of the code system (`url|version`) is an error.',
  })
  checkSystemVersions?: string[] | null;

  @Field(() => [String], {
    nullable: true,
    description:
      'FHIR `force-system-version`: this version of the code system (`url|version`) whatever the value set says.',
  })
  forceSystemVersions?: string[] | null;

  @Field(() => [String], {
    nullable: true,
    description:
      'FHIR `default-valueset-version`: the version of an included value set (`url|version`) that names none.',
  })
  defaultValueSetVersions?: string[] | null;

  @Field(() => [String], {
    nullable: true,
    description: 'FHIR `useSupplement`: code system supplements to apply (canonical URLs).',
  })
  useSupplements?: string[] | null;

  @Field(() => [GraphQLJSONObject], { nullable: true, description: TX_RESOURCES })
  txResources?: Record<string, unknown>[] | null;
}

/** The value set of a ValueSet operation: stored or brought by canonical URL, inline, or by id. */
@ArgsType()
export class ValueSetArgs extends ExpansionArgs {
  @Field(() => String, {
    nullable: true,
    description: 'The value set canonical URL (`url|version` too).',
  })
  url?: string | null;

  @Field(() => String, { nullable: true, description: 'The value set version to use.' })
  valueSetVersion?: string | null;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: 'FHIR `valueSet`: a value set given inline (FHIR R4 JSON), instead of `url`.',
  })
  valueSet?: Record<string, unknown> | null;

  @Field(() => String, {
    nullable: true,
    description:
      'The id of a value set among `txResources` (FHIR `/ValueSet/:id/$…`), instead of `url`.',
  })
  id?: string | null;
}

/** The parameters of $validate-code beside the value set's. */
@ArgsType()
export class ValidateArgs extends ValueSetArgs {
  @Field(() => CodingInput, {
    nullable: true,
    description: 'The code to validate (FHIR `coding`, or `code`, `system`, `display`).',
  })
  coding?: CodingInput | null;

  @Field(() => CodeableConceptInput, {
    nullable: true,
    description: 'FHIR `codeableConcept`: codings to validate together, instead of `coding`.',
  })
  codeableConcept?: CodeableConceptInput | null;

  @Field(() => String, {
    nullable: true,
    description:
      'FHIR `systemVersion` (value sets only): the code system version when the coding names none.',
  })
  systemVersion?: string | null;

  @Field(() => Boolean, {
    nullable: true,
    description: "FHIR `inferSystem`: the code's system is inferred from the value set.",
  })
  inferSystem?: boolean | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'FHIR `lenient-display-validation`: a wrong display is a warning, not an error.',
  })
  lenientDisplay?: boolean | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'FHIR `abstract`: whether abstract (not selectable) codes are valid.',
  })
  abstract?: boolean | null;

  @Field(() => Boolean, {
    nullable: true,
    description:
      'FHIR `valueset-membership-only`: only membership is checked (not displays nor status).',
  })
  membershipOnly?: boolean | null;
}

@InputType({
  description:
    'One validation of $batch-validate-code: what it sets wins over the arguments shared by all.',
})
export class ValidationInput {
  @Field(() => String, {
    nullable: true,
    description: 'The value set canonical URL (`url|version` too).',
  })
  url?: string;

  @Field(() => String, { nullable: true, description: 'The value set version to use.' })
  valueSetVersion?: string;

  @Field(() => CodingInput, { nullable: true, description: 'The code to validate.' })
  coding?: CodingInput;

  @Field(() => CodeableConceptInput, {
    nullable: true,
    description: 'Codings to validate together, instead of `coding`.',
  })
  codeableConcept?: CodeableConceptInput;

  @Field(() => String, {
    nullable: true,
    description: 'The code system version when the coding names none.',
  })
  systemVersion?: string;

  @Field(() => String, { nullable: true, description: DISPLAY_LANGUAGE })
  displayLanguage?: string;
}

@ObjectType({
  description:
    'The answer to one validation of $batch-validate-code: its result, or the issues that kept it from being validated.',
})
export class BatchValidation {
  @Field(() => ValidateCodeResult, {
    nullable: true,
    description: 'The validation; null when it could not be made.',
  })
  validation?: ValidateCodeResult;

  @Field(() => [GraphQLJSONObject], {
    description: 'Why it could not be validated (OperationOutcome issues); empty otherwise.',
  })
  errors!: Record<string, unknown>[];
}

@ObjectType({ description: 'A page of FHIR resources, as a FHIR searchset Bundle pages them.' })
export class FhirResourcePage {
  @Field(() => Int, { description: 'Resources matching, over every page.' })
  total!: number;

  @Field(() => Int, { description: 'This page, from 1.' })
  page!: number;

  @Field(() => Boolean, { description: 'Whether a next page exists.' })
  more!: boolean;

  @Field(() => [GraphQLJSONObject], { description: 'The resources of this page, FHIR R4 JSON.' })
  resources!: Record<string, unknown>[];

  static from(result: FhirResult): FhirResourcePage {
    return {
      total: result.total,
      page: result.page,
      more: result.more,
      resources: result.resources,
    };
  }
}
