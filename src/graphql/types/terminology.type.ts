import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, InputType, ObjectType } from 'type-graphql';
import type { Coding, ParameterValue, ValidateResult } from '../../services';

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

  static from(result: ValidateResult, issues: Record<string, unknown>[]): ValidateCodeResult {
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
      issues,
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

  static from(parameters: ParameterValue[]): LookupResult {
    const value = (name: string) => parameters.find((p) => p.name === name);
    const text = (name: string) => {
      const found = value(name);
      return (found?.valueString ?? found?.valueCode) as string | undefined;
    };
    const partValue = (part: ParameterValue | undefined) => {
      if (!part) return undefined;
      for (const [key, v] of Object.entries(part)) {
        if (key.startsWith('value') && key.length > 5)
          return typeof v === 'object' && v !== null
            ? ((v as Coding).code ?? JSON.stringify(v))
            : String(v);
      }
      return undefined;
    };
    const parts = (p: ParameterValue) => (name: string) => p.part?.find((x) => x.name === name);
    return {
      name: text('name') ?? '',
      version: text('version'),
      display: text('display'),
      definition: text('definition'),
      abstract: value('abstract')?.valueBoolean === true,
      designations: parameters
        .filter((p) => p.name === 'designation')
        .map((p) => ({
          language: parts(p)('language')?.valueCode as string | undefined,
          use: parts(p)('use')?.valueCoding as CodingObject | undefined,
          value: (parts(p)('value')?.valueString as string | undefined) ?? '',
        })),
      properties: parameters
        .filter((p) => p.name === 'property')
        .map((p) => ({
          code: (parts(p)('code')?.valueCode as string | undefined) ?? '',
          value: partValue(parts(p)('value')),
          description: parts(p)('description')?.valueString as string | undefined,
        })),
    };
  }
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

  static from(parameters: ParameterValue[]): TranslateResult {
    return {
      result: parameters.find((p) => p.name === 'result')?.valueBoolean === true,
      message: parameters.find((p) => p.name === 'message')?.valueString as string | undefined,
      matches: parameters
        .filter((p) => p.name === 'match')
        .map((p) => {
          const part = (name: string) => p.part?.find((x) => x.name === name);
          return {
            equivalence: (part('equivalence')?.valueCode as string | undefined) ?? 'relatedto',
            concept: (part('concept')?.valueCoding as CodingObject | undefined) ?? {},
            originMap: part('originMap')?.valueCanonical as string | undefined,
          };
        }),
    };
  }
}
