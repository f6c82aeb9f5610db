import { AppError } from '../../errors';
import { Arg, Ctx, Int, Query, Resolver } from 'type-graphql';
import { parseLanguages, type CodeInput } from '../../services';
import type { GraphQLContext } from '../context';
import { SubsumesOutcome } from '../types/enums';
import {
  CodingInput,
  LookupResult,
  TranslateResult,
  ValidateCodeResult,
  ValueSetExpansion,
} from '../types/terminology.type';

const DISPLAY_LANGUAGE =
  'The languages displays are wanted in, as an HTTP `Accept-Language` value (e.g. `en,fr;q=0.8`).';
const VALUE_SET_VERSION = 'The value set version to use.';

/** The FHIR terminology operations over the same services as the FHIR edge. */
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
    @Ctx() ctx: GraphQLContext,
  ): Promise<LookupResult> {
    const result = await ctx.services.terminology.lookup(
      ctx,
      {
        coding,
        properties: properties ?? [],
        languages: parseLanguages(displayLanguage ?? undefined),
        useSupplements: [],
      },
      [],
    );
    return LookupResult.from(result);
  }

  @Query(() => ValidateCodeResult, {
    nullable: true,
    description:
      '$validate-code: a coding against a value set (`url`), or against its code system when no value set is given.',
  })
  async validateCode(
    @Arg('coding', () => CodingInput, { description: 'The code to validate.' })
    coding: CodingInput,
    @Arg('url', () => String, { nullable: true, description: 'The value set canonical URL.' })
    url: string | null,
    @Arg('valueSetVersion', () => String, { nullable: true, description: VALUE_SET_VERSION })
    valueSetVersion: string | null,
    @Arg('displayLanguage', () => String, { nullable: true, description: DISPLAY_LANGUAGE })
    displayLanguage: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ValidateCodeResult> {
    const input: CodeInput = { kind: 'coding', coding };
    const options = { languages: parseLanguages(displayLanguage ?? undefined) };
    const result = await (url
      ? ctx.services.terminology.validateInValueSet(
          ctx,
          { url, version: valueSetVersion ?? undefined },
          input,
          [],
          options,
        )
      : ctx.services.terminology.validateInCodeSystem(ctx, input, [], options));
    return ValidateCodeResult.from(result);
  }

  @Query(() => ValueSetExpansion, {
    nullable: true,
    description: 'ValueSet/$expand: a page of the value set expansion.',
  })
  async expandValueSet(
    @Arg('url', () => String, { description: 'The value set canonical URL.' }) url: string,
    @Arg('valueSetVersion', () => String, { nullable: true, description: VALUE_SET_VERSION })
    valueSetVersion: string | null,
    @Arg('filter', () => String, {
      nullable: true,
      description: 'Text that restricts the codes returned.',
    })
    filter: string | null,
    @Arg('count', () => Int, {
      nullable: true,
      description: 'Page size (0 or more); none: every code, within the unpaged limit.',
    })
    count: number | null,
    @Arg('offset', () => Int, {
      nullable: true,
      description: 'Codes to skip before the page starts (0 or more).',
    })
    offset: number | null,
    @Arg('activeOnly', () => Boolean, { nullable: true, description: 'Leave inactive codes out.' })
    activeOnly: boolean | null,
    @Arg('displayLanguage', () => String, { nullable: true, description: DISPLAY_LANGUAGE })
    displayLanguage: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ValueSetExpansion> {
    if ((count ?? 0) < 0 || (offset ?? 0) < 0) {
      throw AppError.invalid('count and offset must be 0 or more.');
    }
    const page = await ctx.services.terminology.expand(
      ctx,
      { url, version: valueSetVersion ?? undefined },
      [],
      {
        filter: filter ?? undefined,
        count: count ?? undefined,
        offset: offset ?? undefined,
        activeOnly: activeOnly ?? undefined,
        languages: parseLanguages(displayLanguage ?? undefined),
      },
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
    @Ctx() ctx: GraphQLContext,
  ): Promise<TranslateResult> {
    const result = await ctx.services.terminology.translate(
      ctx,
      {
        url: url ?? undefined,
        coding,
        targetSystem: targetSystem ?? undefined,
        reverse: reverse ?? false,
      },
      [],
    );
    return TranslateResult.from(result);
  }

  @Query(() => SubsumesOutcome, {
    nullable: true,
    description: 'CodeSystem/$subsumes: how code A relates to code B.',
  })
  async subsumes(
    @Arg('codingA', () => CodingInput, { description: 'The first code.' }) codingA: CodingInput,
    @Arg('codingB', () => CodingInput, { description: 'The second code.' }) codingB: CodingInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<SubsumesOutcome> {
    const { outcome } = await ctx.services.terminology.subsumes(ctx, codingA, codingB, []);
    return outcome as SubsumesOutcome;
  }
}
