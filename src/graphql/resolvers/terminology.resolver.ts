import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Args, Ctx, Query, Resolver } from 'type-graphql';
import { AppError } from '../../errors';
import {
  inlineValueSet,
  parseLanguages,
  terminologyResources,
  type CodeInput,
  type ExpansionOptions,
  type ParameterValue,
  type TerminologyResource,
  type ValidateOptions,
  type ValidateRequest,
  type ValueSetTarget,
} from '../../services';
import type { GraphQLContext } from '../context';
import { DISPLAY_LANGUAGE, TX_RESOURCES } from '../types/descriptions';
import {
  BatchValidation,
  CodingInput,
  ExpansionArgs,
  issueObject,
  LookupResult,
  TranslateResult,
  ValidateArgs,
  ValidateCodeResult,
  ValidationInput,
  ValueSetArgs,
  ValueSetExpansion,
} from '../types/terminology.type';

const TX_RESOURCES_ARG = { nullable: true, description: TX_RESOURCES } as const;

/**
 * The FHIR terminology operations over the same services as the FHIR edge (compat/fhir/routes.ts
 * names each operation's twin here, and where each FHIR parameter goes).
 */
@Resolver()
export class TerminologyResolver {
  @Query(() => LookupResult, {
    nullable: true,
    description: 'CodeSystem/$lookup: a code of a code system.',
  })
  async lookup(
    @Arg('coding', () => CodingInput, { description: 'The code to look up.' }) coding: CodingInput,
    @Arg('properties', () => [String], {
      nullable: true,
      description: 'The properties to return (`*`: all); none: all.',
    })
    properties: string[] | null,
    @Arg('displayLanguage', () => String, { nullable: true, description: DISPLAY_LANGUAGE })
    displayLanguage: string | null,
    @Arg('useSupplements', () => [String], {
      nullable: true,
      description: 'FHIR `useSupplement`: code system supplements to apply (canonical URLs).',
    })
    useSupplements: string[] | null,
    @Arg('txResources', () => [GraphQLJSONObject], TX_RESOURCES_ARG)
    txResources: Record<string, unknown>[] | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<LookupResult> {
    const result = await ctx.services.terminology.lookup(
      ctx,
      {
        coding,
        properties: properties ?? [],
        languages: parseLanguages(displayLanguage ?? undefined),
        useSupplements: useSupplements ?? [],
      },
      resourcesOf(txResources),
    );
    return LookupResult.from(result);
  }

  @Query(() => ValidateCodeResult, {
    nullable: true,
    description:
      '$validate-code: a coding or CodeableConcept against a value set (`url`, `valueSet` or `id`), or against its code system when no value set is given.',
  })
  async validateCode(
    @Args() args: ValidateArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ValidateCodeResult> {
    const request = validateRequest(args);
    const result = await (hasValueSet(args)
      ? ctx.services.terminology.validateInValueSet(
          ctx,
          request.target,
          request.input,
          request.resources,
          request.options,
        )
      : ctx.services.terminology.validateInCodeSystem(ctx, request.input, request.resources, {
          ...request.options,
          systemVersion: undefined,
        }));
    return ValidateCodeResult.from(result);
  }

  @Query(() => [BatchValidation], {
    nullable: true,
    description:
      'ValueSet/$batch-validate-code: each validation as `validateCode` against a value set makes it, the other arguments its defaults.',
  })
  async batchValidateCode(
    @Arg('validations', () => [ValidationInput], { description: 'The validations to make.' })
    validations: ValidationInput[],
    @Args() shared: ValidateArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<BatchValidation[]> {
    const requests = validations.map((own) => validateRequest({ ...shared, ...definedOf(own) }));
    const answers = await ctx.services.terminology.validateBatch(ctx, requests);
    return answers.map((answer) =>
      'result' in answer
        ? { validation: ValidateCodeResult.from(answer.result), errors: [] }
        : { errors: answer.issues.map(issueObject) },
    );
  }

  @Query(() => ValueSetExpansion, {
    nullable: true,
    description: 'ValueSet/$expand: a page of the value set expansion.',
  })
  async expandValueSet(
    @Args() args: ValueSetArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ValueSetExpansion> {
    const page = await ctx.services.terminology.expand(
      ctx,
      targetOf(args),
      resourcesOf(args.txResources),
      { ...expansionOptions(args), echo: echoOf(args) },
    );
    return ValueSetExpansion.from(page);
  }

  @Query(() => TranslateResult, {
    nullable: true,
    description: 'ConceptMap/$translate: a code through a map.',
  })
  async translate(
    @Arg('coding', () => CodingInput, { description: 'The code to translate.' })
    coding: CodingInput,
    @Arg('url', () => String, { nullable: true, description: 'The concept map canonical URL.' })
    url: string | null,
    @Arg('targetSystem', () => String, {
      nullable: true,
      description: 'Only targets in this code system (canonical URL).',
    })
    targetSystem: string | null,
    @Arg('reverse', () => Boolean, {
      nullable: true,
      description: 'Translate from targets back to sources (default false).',
    })
    reverse: boolean | null,
    @Arg('conceptMapVersion', () => String, {
      nullable: true,
      description: 'The concept map version to use.',
    })
    conceptMapVersion: string | null,
    @Arg('txResources', () => [GraphQLJSONObject], TX_RESOURCES_ARG)
    txResources: Record<string, unknown>[] | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<TranslateResult> {
    const result = await ctx.services.terminology.translate(
      ctx,
      {
        url: url ?? undefined,
        conceptMapVersion: conceptMapVersion ?? undefined,
        coding,
        targetSystem: targetSystem ?? undefined,
        reverse: reverse ?? false,
      },
      resourcesOf(txResources),
    );
    return TranslateResult.from(result);
  }

  @Query(() => String, {
    nullable: true,
    description:
      'CodeSystem/$subsumes: equivalent, subsumes, subsumed-by or not-subsumed (A relative to B).',
  })
  async subsumes(
    @Arg('codingA', () => CodingInput, { description: 'The first code.' }) codingA: CodingInput,
    @Arg('codingB', () => CodingInput, { description: 'The second code.' }) codingB: CodingInput,
    @Arg('txResources', () => [GraphQLJSONObject], TX_RESOURCES_ARG)
    txResources: Record<string, unknown>[] | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<string> {
    return (
      await ctx.services.terminology.subsumes(ctx, codingA, codingB, resourcesOf(txResources))
    ).outcome;
  }
}

function resourcesOf(values: Record<string, unknown>[] | null | undefined): TerminologyResource[] {
  return terminologyResources(values ?? []);
}

const list = (values: string[] | null | undefined): string[] | undefined => values ?? undefined;

/** The expansion parameters, as the FHIR edge reads them (`expansionOptions`, options.ts). */
function expansionOptions(args: ExpansionArgs): Omit<ExpansionOptions, 'maxCodes'> {
  if ((args.count ?? 0) < 0 || (args.offset ?? 0) < 0) {
    throw AppError.invalid('count and offset must be 0 or more.');
  }
  return {
    activeOnly: args.activeOnly ?? undefined,
    filter: args.filter ?? undefined,
    count: args.count ?? undefined,
    offset: args.offset ?? undefined,
    excludeNested: args.excludeNested ?? undefined,
    includeDesignations: args.includeDesignations ?? undefined,
    designations: list(args.designations),
    languages: parseLanguages(args.displayLanguage ?? undefined),
    properties: list(args.properties),
    systemVersions: list(args.systemVersions),
    checkSystemVersions: list(args.checkSystemVersions),
    forceSystemVersions: list(args.forceSystemVersions),
    defaultValueSetVersions: list(args.defaultValueSetVersions),
    useSupplements: list(args.useSupplements),
  };
}

/**
 * The parameters an expansion echoes (FHIR names, as the FHIR edge echoes those given): the
 * arguments set, in this order.
 */
const ECHOED: Array<[keyof ExpansionArgs, string]> = [
  ['activeOnly', 'activeOnly'],
  ['checkSystemVersions', 'check-system-version'],
  ['count', 'count'],
  ['defaultValueSetVersions', 'default-valueset-version'],
  ['designations', 'designation'],
  ['displayLanguage', 'displayLanguage'],
  ['excludeNested', 'excludeNested'],
  ['filter', 'filter'],
  ['forceSystemVersions', 'force-system-version'],
  ['includeDesignations', 'includeDesignations'],
  ['offset', 'offset'],
  ['systemVersions', 'system-version'],
];

function echoOf(args: ExpansionArgs): ParameterValue[] {
  return ECHOED.flatMap(([arg, name]): ParameterValue[] => {
    const value = args[arg];
    if (value === undefined || value === null) return [];
    if (Array.isArray(value)) {
      return value
        .filter((v): v is string => typeof v === 'string')
        .map((v) => ({ name, valueString: v }));
    }
    if (typeof value === 'boolean') return [{ name, valueBoolean: value }];
    if (typeof value === 'number') return [{ name, valueInteger: value }];
    return typeof value === 'string' ? [{ name, valueString: value }] : [];
  });
}

function hasValueSet(args: ValueSetArgs): boolean {
  return Boolean(args.url || args.valueSet || args.id);
}

function targetOf(args: ValueSetArgs): ValueSetTarget {
  return {
    url: args.url ?? undefined,
    version: args.valueSetVersion ?? undefined,
    valueSet: args.valueSet ? inlineValueSet(args.valueSet) : undefined,
    id: args.id ?? undefined,
  };
}

/** The code to validate: a CodeableConcept, or a coding (FHIR's `coding` form). */
function codeInputOf(args: ValidateArgs): CodeInput {
  if (args.codeableConcept) return { kind: 'codeableConcept', concept: args.codeableConcept };
  if (args.coding) return { kind: 'coding', coding: args.coding };
  throw AppError.field('coding', 'Give the code to validate: `coding` or `codeableConcept`.');
}

/** A $validate-code as the FHIR edge reads one (`valueSetTarget`, `codeInput`, `validateOptions`). */
function validateRequest(args: ValidateArgs): ValidateRequest {
  const options: Omit<ValidateOptions, 'maxCodes'> = {
    ...expansionOptions(args),
    inferSystem: args.inferSystem ?? undefined,
    lenientDisplay: args.lenientDisplay ?? undefined,
    abstractAllowed: args.abstract ?? undefined,
    systemVersion: args.systemVersion ?? undefined,
    membershipOnly: args.membershipOnly ?? undefined,
  };
  return {
    target: targetOf(args),
    input: codeInputOf(args),
    resources: resourcesOf(args.txResources),
    options,
  };
}

/** The fields a validation sets (they win over the shared arguments). */
function definedOf(own: ValidationInput): Partial<ValidateArgs> {
  return Object.fromEntries(
    Object.entries(own).filter(([, value]) => value !== undefined && value !== null),
  );
}
