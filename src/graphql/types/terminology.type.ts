import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, InputType, ObjectType } from 'type-graphql';
import type { Coding, IssueSpec, ValidateResult } from '../../services';
import type { LookupResult as CoreLookupResult } from '../../services/terminology/lookup';
import type { TranslationResult } from '../../services/terminology/translate';

@InputType({ description: 'A FHIR Coding: a code of a code system (version).' })
export class CodingInput implements Coding {
  @Field(() => String, { nullable: true, description: 'The code system canonical URL.' })
  system?: string;

  @Field(() => String, { nullable: true })
  version?: string;

  @Field(() => String)
  code!: string;

  @Field(() => String, { nullable: true })
  display?: string;
}

@ObjectType({ description: 'A code as the terminology operations answer it.' })
export class CodingObject {
  @Field(() => String, { nullable: true })
  system?: string;

  @Field(() => String, { nullable: true })
  version?: string;

  @Field(() => String, { nullable: true })
  code?: string;

  @Field(() => String, { nullable: true })
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
  @Field(() => Boolean)
  result!: boolean;

  @Field(() => String, { nullable: true, description: 'The issues, joined.' })
  message?: string;

  @Field(() => String, { nullable: true })
  code?: string;

  @Field(() => String, { nullable: true })
  system?: string;

  @Field(() => String, { nullable: true })
  version?: string;

  @Field(() => String, { nullable: true, description: 'The display the code system gives.' })
  display?: string;

  @Field(() => Boolean)
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

@ObjectType({ description: 'A designation of a concept: a name in a language, of a use.' })
export class DesignationObject {
  @Field(() => String, { nullable: true })
  language?: string;

  @Field(() => CodingObject, { nullable: true })
  use?: CodingObject;

  @Field(() => String)
  value!: string;
}

@ObjectType({ description: 'A property of a concept ($lookup): its code and value.' })
export class LookupProperty {
  @Field(() => String)
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

  @Field(() => String, { nullable: true })
  version?: string;

  @Field(() => String, { nullable: true })
  display?: string;

  @Field(() => String, { nullable: true })
  definition?: string;

  @Field(() => Boolean)
  abstract!: boolean;

  @Field(() => [DesignationObject])
  designations!: DesignationObject[];

  @Field(() => [LookupProperty])
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
function textOf(value: Record<string, unknown>): string | undefined {
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

  @Field(() => CodingObject)
  concept!: CodingObject;

  @Field(() => String, { nullable: true, description: 'The concept map (url|version).' })
  originMap?: string;
}

@ObjectType({ description: 'The answer of $translate.' })
export class TranslateResult {
  @Field(() => Boolean)
  result!: boolean;

  @Field(() => String, { nullable: true })
  message?: string;

  @Field(() => [TranslationMatch])
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
