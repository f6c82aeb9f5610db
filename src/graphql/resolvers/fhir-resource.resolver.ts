import { GraphQLJSONObject } from 'graphql-scalars';
import {
  Arg,
  Args,
  ArgsType,
  Ctx,
  Field,
  Int,
  Mutation,
  Query,
  Resolver,
  registerEnumType,
} from 'type-graphql';
import { AppError } from '../../errors';
import { parseOwnerUrl } from '../../services';
import type {
  FhirNamespace,
  FhirResourceType,
  FhirTarget,
  StoredResource,
} from '../../services/terminology/fhir-resource.service';
import type { GraphQLContext } from '../context';
import { respelled } from '../types/descriptions';
import type { ClassType } from 'type-graphql';
import { type DeletePayload, payloadOf } from '../types/payload.type';
import {
  CreateFhirResourcePayload,
  deleted,
  DeleteFhirResourcePayload,
  type FhirResourceWritePayload,
  UpdateFhirResourcePayload,
} from '../types/payloads';

/** Input only; FHIR's spellings (`CodeSystem`) are still accepted, deprecated, for one release. */
export const FhirType = {
  CodeSystem: 'CodeSystem',
  ValueSet: 'ValueSet',
  ConceptMap: 'ConceptMap',
  CODE_SYSTEM: 'CodeSystem',
  VALUE_SET: 'ValueSet',
  CONCEPT_MAP: 'ConceptMap',
} as const;
export type FhirType = (typeof FhirType)[keyof typeof FhirType];
const CODE_SYSTEM = 'A source version, with its concepts.';
const VALUE_SET = 'A collection version, with its members.';
const CONCEPT_MAP = "A source version's mappings.";
registerEnumType(FhirType, {
  name: 'FhirResourceType',
  description:
    'A FHIR R4 terminology resource: a source (CODE_SYSTEM, CONCEPT_MAP) or a collection (VALUE_SET).',
  valuesConfig: {
    CODE_SYSTEM: { description: CODE_SYSTEM },
    VALUE_SET: { description: VALUE_SET },
    CONCEPT_MAP: { description: CONCEPT_MAP },
    CodeSystem: { description: CODE_SYSTEM, deprecationReason: respelled('CODE_SYSTEM') },
    ValueSet: { description: VALUE_SET, deprecationReason: respelled('VALUE_SET') },
    ConceptMap: { description: CONCEPT_MAP, deprecationReason: respelled('CONCEPT_MAP') },
  },
});

/** A stored resource named by its canonical URL: `GET /fhir/X/?url=…&version=…`. */
@ArgsType()
class CanonicalReadArgs {
  @Field(() => String, { description: 'The canonical URL.' })
  url: string;

  @Field(() => String, {
    nullable: true,
    description: 'The version; none: the latest released one.',
  })
  version?: string | null;

  @Field(() => Int, {
    nullable: true,
    description: 'The page of its content, 100 entries a page, from 1 (default 1).',
  })
  page?: number | null;
}

const OWNER_DESCRIPTION =
  'The owner URL (/orgs/:org/, /users/:user/); none: the server-wide namespace of /fhir/ (the owner and id from the accession identifier, or the server-wide id).';

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
    @Args() args: CanonicalReadArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<StoredResource | null> {
    return readByUrl(ctx, 'CodeSystem', args);
  }

  @Query(() => GraphQLJSONObject, {
    nullable: true,
    description:
      'A collection version as a FHIR R4 ValueSet, by canonical URL; without version, the latest released one. `page`: its members 100 at a time.',
  })
  valueSet(
    @Args() args: CanonicalReadArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<StoredResource | null> {
    return readByUrl(ctx, 'ValueSet', args);
  }

  @Query(() => GraphQLJSONObject, {
    nullable: true,
    description:
      "A source version's mappings as a FHIR R4 ConceptMap, by canonical URL; without version, the latest released one. `page`: its mappings 100 at a time.",
  })
  conceptMap(
    @Args() args: CanonicalReadArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<StoredResource | null> {
    return readByUrl(ctx, 'ConceptMap', args);
  }

  @Mutation(() => CreateFhirResourcePayload, {
    description:
      'POST {ns}/X/: the resource made (a source, a collection, or a source of mappings) and its version, in one transaction. Content of more than 1,000 concepts, mappings or references is written by a background task: the payload then has its `taskId` (read it with `task(id)`).',
  })
  async createFhirResource(
    @Arg('type', () => FhirType, { description: 'The kind of resource.' }) type: FhirType,
    @Arg('resource', () => GraphQLJSONObject, { description: 'The resource, as FHIR R4 JSON.' })
    resource: Record<string, unknown>,
    @Arg('owner', () => String, { nullable: true, description: OWNER_DESCRIPTION })
    owner: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<FhirResourceWritePayload> {
    const namespace: FhirNamespace = owner
      ? { kind: 'owner', owner: parseOwnerUrl(owner) }
      : { kind: 'global' };
    return writePayload(
      CreateFhirResourcePayload,
      await ctx.services.fhirResources.create(ctx, type, namespace, resource),
    );
  }

  @Mutation(() => UpdateFhirResourcePayload, {
    description:
      'PUT {ns}/X/:id: the repository made to match the resource, in one transaction; the resource as stored (or the task writing it, as `createFhirResource`).',
  })
  async updateFhirResource(
    @Arg('type', () => FhirType, { description: 'The kind of resource.' }) type: FhirType,
    @Arg('id', () => String, { description: 'The resource id in its namespace.' }) id: string,
    @Arg('resource', () => GraphQLJSONObject, { description: 'The resource, as FHIR R4 JSON.' })
    resource: Record<string, unknown>,
    @Arg('owner', () => String, { nullable: true, description: OWNER_DESCRIPTION })
    owner: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<FhirResourceWritePayload> {
    const target = targetOf(owner, id);
    return writePayload(
      UpdateFhirResourcePayload,
      await ctx.services.fhirResources.update(ctx, type, target, resource),
    );
  }

  @Mutation(() => DeleteFhirResourcePayload, {
    description: 'DELETE {ns}/X/:id: the repository removed as its REST delete removes it.',
  })
  async deleteFhirResource(
    @Arg('type', () => FhirType, { description: 'The kind of resource.' }) type: FhirType,
    @Arg('id', () => String, { description: 'The resource id in its namespace.' }) id: string,
    @Arg('owner', () => String, { nullable: true, description: OWNER_DESCRIPTION })
    owner: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<DeletePayload> {
    await ctx.services.fhirResources.remove(ctx, type, targetOf(owner, id));
    return deleted(DeleteFhirResourcePayload, id, null);
  }
}

/** A write's payload: the resource as stored, or the task writing it. */
function writePayload(
  type: ClassType<FhirResourceWritePayload>,
  written: { resource: StoredResource } | { task: { id: string; state: string } },
): FhirResourceWritePayload {
  if ('task' in written) {
    return payloadOf(type, {
      resource: null,
      id: null,
      taskId: written.task.id,
      taskState: written.task.state,
    });
  }
  const resource = written.resource as Record<string, unknown>;
  return payloadOf(type, {
    resource,
    id: typeof resource.id === 'string' ? resource.id : null,
    taskId: null,
    taskState: null,
  });
}

async function readByUrl(
  ctx: GraphQLContext,
  type: FhirResourceType,
  { url, version, page }: CanonicalReadArgs,
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

function targetOf(owner: string | null, id: string): FhirTarget {
  return owner ? { kind: 'owner', owner: parseOwnerUrl(owner), id } : { kind: 'global', id };
}
