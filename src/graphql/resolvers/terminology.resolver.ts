import { AppError } from '../../errors';
import { Arg, Ctx, Int, Query, Resolver } from 'type-graphql';
import { parseLanguages, type CodeInput } from '../../services';
import type { GraphQLContext } from '../context';
import {
  CodingInput,
  LookupResult,
  TranslateResult,
  ValidateCodeResult,
  ValueSetExpansion,
} from '../types/terminology.type';

/** The FHIR terminology operations over the same services as the FHIR edge. */
@Resolver()
export class TerminologyResolver {
  @Query(() => LookupResult, {
    nullable: true,
    description: 'CodeSystem/$lookup: a code of a code system.',
  })
  async lookup(
    @Arg('coding', () => CodingInput) coding: CodingInput,
    @Arg('properties', () => [String], { nullable: true }) properties: string[] | null,
    @Arg('displayLanguage', () => String, { nullable: true }) displayLanguage: string | null,
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
    @Arg('coding', () => CodingInput) coding: CodingInput,
    @Arg('url', () => String, { nullable: true, description: 'The value set canonical URL.' })
    url: string | null,
    @Arg('valueSetVersion', () => String, { nullable: true }) valueSetVersion: string | null,
    @Arg('displayLanguage', () => String, { nullable: true }) displayLanguage: string | null,
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
    @Arg('url', () => String) url: string,
    @Arg('valueSetVersion', () => String, { nullable: true }) valueSetVersion: string | null,
    @Arg('filter', () => String, { nullable: true }) filter: string | null,
    @Arg('count', () => Int, { nullable: true }) count: number | null,
    @Arg('offset', () => Int, { nullable: true }) offset: number | null,
    @Arg('activeOnly', () => Boolean, { nullable: true }) activeOnly: boolean | null,
    @Arg('displayLanguage', () => String, { nullable: true }) displayLanguage: string | null,
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
    @Arg('coding', () => CodingInput) coding: CodingInput,
    @Arg('url', () => String, { nullable: true, description: 'The concept map canonical URL.' })
    url: string | null,
    @Arg('targetSystem', () => String, { nullable: true }) targetSystem: string | null,
    @Arg('reverse', () => Boolean, { nullable: true }) reverse: boolean | null,
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

  @Query(() => String, {
    nullable: true,
    description:
      'CodeSystem/$subsumes: equivalent, subsumes, subsumed-by or not-subsumed (A relative to B).',
  })
  async subsumes(
    @Arg('codingA', () => CodingInput) codingA: CodingInput,
    @Arg('codingB', () => CodingInput) codingB: CodingInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<string> {
    return (await ctx.services.terminology.subsumes(ctx, codingA, codingB, [])).outcome;
  }
}
