import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, InputType, Int, ObjectType } from 'type-graphql';
import type {
  Coding,
  ExpansionEntry,
  ExpansionPage,
  IssueSpec,
  ValidateResult,
} from '../../services';
import type { LookupResult as CoreLookupResult } from '../../services/terminology/lookup';
import type { TranslationResult } from '../../services/terminology/translate';

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

/** An issue in the shape of an OperationOutcome issue (severity, code, details, expression). */
function issueObject(spec: IssueSpec): Record<string, unknown> {
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
    };
  }
}
