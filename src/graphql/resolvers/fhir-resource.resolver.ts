import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Ctx, Int, Query, Resolver } from 'type-graphql';
import { AppError } from '../../errors';
import type { GraphQLContext } from '../context';
import type { FhirResourceType, StoredResource } from '../../services/fhir-resource.service';

/**
 * The FHIR resource reads of `GET /fhir/X/?url=…&version=…` (spec operations §4.7) as GraphQL
 * queries: the same service call, the resource as FHIR R4 JSON; null when nothing the caller may
 * see matches (no version-less answer without a released version, as the FHIR edge).
 */
@Resolver()
export class FhirResourceResolver {
  @Query(() => GraphQLJSONObject, {
    nullable: true,
    description:
      'A source version as a FHIR R4 CodeSystem, by canonical URL; without version, the latest released one. `page`: its concepts 100 at a time.',
  })
  codeSystem(
    @Arg('url', () => String) url: string,
    @Arg('version', () => String, { nullable: true }) version: string | null,
    @Arg('page', () => Int, { nullable: true }) page: number | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<StoredResource | null> {
    return readByUrl(ctx, 'CodeSystem', url, version, page);
  }

  @Query(() => GraphQLJSONObject, {
    nullable: true,
    description:
      'A collection version as a FHIR R4 ValueSet, by canonical URL; without version, the latest released one. `page`: its members 100 at a time.',
  })
  valueSet(
    @Arg('url', () => String) url: string,
    @Arg('version', () => String, { nullable: true }) version: string | null,
    @Arg('page', () => Int, { nullable: true }) page: number | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<StoredResource | null> {
    return readByUrl(ctx, 'ValueSet', url, version, page);
  }

  @Query(() => GraphQLJSONObject, {
    nullable: true,
    description:
      "A source version's mappings as a FHIR R4 ConceptMap, by canonical URL; without version, the latest released one. `page`: its mappings 100 at a time.",
  })
  conceptMap(
    @Arg('url', () => String) url: string,
    @Arg('version', () => String, { nullable: true }) version: string | null,
    @Arg('page', () => Int, { nullable: true }) page: number | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<StoredResource | null> {
    return readByUrl(ctx, 'ConceptMap', url, version, page);
  }
}

async function readByUrl(
  ctx: GraphQLContext,
  type: FhirResourceType,
  url: string,
  version: string | null,
  page: number | null,
): Promise<StoredResource | null> {
  // One resource: every released version is a list, which the FHIR search answers.
  if (version === '*') throw AppError.field('version', 'Name one version, or none for the latest.');
  const found = await ctx.services.fhirResources.search(
    ctx,
    type,
    { kind: 'global' },
    { url, version: version ?? undefined, page: page ?? undefined, count: 1 },
  );
  return found.resources[0] ?? null;
}
