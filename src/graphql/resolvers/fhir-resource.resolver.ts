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
import { OWNER_URL } from '../types/descriptions';
import { FhirResourcePage } from '../types/terminology.type';
import type { ClassType } from 'type-graphql';
import { type DeletePayload, payloadOf } from '../types/payload.type';
import {
  CreateFhirResourcePayload,
  deleted,
  DeleteFhirResourcePayload,
  type FhirResourceWritePayload,
  UpdateFhirResourcePayload,
} from '../types/payloads';

export enum FhirType {
  CodeSystem = 'CodeSystem',
  ValueSet = 'ValueSet',
  ConceptMap = 'ConceptMap',
}
registerEnumType(FhirType, {
  name: 'FhirResourceType',
  description: 'A FHIR R4 terminology resource: a source (CodeSystem, ConceptMap) or a collection.',
  valuesConfig: {
    CodeSystem: { description: 'A source version, with its concepts.' },
    ValueSet: { description: 'A collection version, with its members.' },
    ConceptMap: { description: "A source version's mappings." },
  },
});

/**
 * One stored resource: by canonical URL (`GET /fhir/X/?url=…&version=…`), by id in an owner's
 * namespace (`GET {owner}/X/:id[/version/:version]`) or by server-wide id (`GET /fhir/X/:id`).
 */
@ArgsType()
class ResourceReadArgs {
  @Field(() => String, {
    nullable: true,
    description: 'The canonical URL; or name the resource by `id` instead.',
  })
  url?: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'The version (HEAD and drafts too when named with `owner` and `id`); none: the latest released one.',
  })
  version?: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'The resource id: the repository id in the namespace of `owner`, or without `owner` the server-wide id of /fhir/X/:id.',
  })
  id?: string | null;

  @Field(() => String, { nullable: true, description: OWNER_URL })
  owner?: string | null;

  @Field(() => Int, {
    nullable: true,
    description: 'The page of its content, 100 entries a page, from 1 (default 1).',
  })
  page?: number | null;
}

/** The search of `GET {ns}/X/` (spec operations §4.7). */
@ArgsType()
class FhirSearchArgs {
  @Field(() => FhirType, { description: 'The kind of resource.' })
  type: FhirType;

  @Field(() => String, { nullable: true, description: OWNER_URL })
  owner?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The canonical URL (or the repository URL).',
  })
  url?: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'One version (HEAD included), or `*`: every released version; none: the latest released one.',
  })
  version?: string | null;

  @Field(() => String, { nullable: true, description: 'The name (FHIR `name`).' })
  name?: string | null;

  @Field(() => String, { nullable: true, description: 'The title (FHIR `title`).' })
  title?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The status: draft, active or retired.',
  })
  status?: string | null;

  @Field(() => [String], {
    nullable: true,
    description: 'FHIR `_id`: server-wide ids without `owner`, repository ids in its namespace.',
  })
  ids?: string[] | null;

  @Field(() => Int, { nullable: true, description: 'FHIR `_count`: entries per page.' })
  count?: number | null;

  @Field(() => Int, {
    nullable: true,
    description:
      'From 1: the page of entries, or of the content of a one-resource search (`url` or `ids`).',
  })
  page?: number | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'FHIR `_summary=true`: definitions only, without concepts, members or mappings.',
  })
  definitionsOnly?: boolean | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'FHIR `_summary=count`: the total only, no resources.',
  })
  countOnly?: boolean | null;
}

/** The released versions of one resource: `GET {owner}/X/:id/version/`. */
@ArgsType()
class FhirVersionsArgs {
  @Field(() => FhirType, { description: 'The kind of resource.' })
  type: FhirType;

  @Field(() => String, { description: 'The owner URL (/orgs/:org/, /users/:user/).' })
  owner: string;

  @Field(() => String, { description: 'The repository id in its namespace.' })
  id: string;

  @Field(() => Int, { nullable: true, description: 'FHIR `_count`: entries per page.' })
  count?: number | null;

  @Field(() => Int, { nullable: true, description: 'The page of versions, from 1.' })
  page?: number | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'FHIR `_summary=count`: the total only, no resources.',
  })
  countOnly?: boolean | null;
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
      'A source version as a FHIR R4 CodeSystem, by canonical URL, by id in an owner namespace, or by server-wide id; without version, the latest released one. `page`: its concepts 100 at a time.',
  })
  codeSystem(
    @Args() args: ResourceReadArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<StoredResource | null> {
    return readOne(ctx, 'CodeSystem', args);
  }

  @Query(() => GraphQLJSONObject, {
    nullable: true,
    description:
      'A collection version as a FHIR R4 ValueSet, by canonical URL, by id in an owner namespace, or by server-wide id; without version, the latest released one. `page`: its members 100 at a time.',
  })
  valueSet(
    @Args() args: ResourceReadArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<StoredResource | null> {
    return readOne(ctx, 'ValueSet', args);
  }

  @Query(() => GraphQLJSONObject, {
    nullable: true,
    description:
      "A source version's mappings as a FHIR R4 ConceptMap, by canonical URL, by id in an owner namespace, or by server-wide id; without version, the latest released one. `page`: its mappings 100 at a time.",
  })
  conceptMap(
    @Args() args: ResourceReadArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<StoredResource | null> {
    return readOne(ctx, 'ConceptMap', args);
  }

  @Query(() => FhirResourcePage, {
    nullable: true,
    description:
      'GET {ns}/X/: the latest released version of each repository the caller may see (or one version, or every released one: `version: "*"`), as FHIR R4 JSON.',
  })
  async fhirResources(
    @Args() args: FhirSearchArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<FhirResourcePage> {
    const result = await ctx.services.fhirResources.search(
      ctx,
      args.type,
      namespaceOf(args.owner),
      {
        url: args.url ?? undefined,
        version: args.version ?? undefined,
        name: args.name ?? undefined,
        title: args.title ?? undefined,
        status: args.status ?? undefined,
        ids: args.ids && args.ids.length > 0 ? args.ids : undefined,
        count: args.count ?? undefined,
        page: args.page ?? undefined,
        countOnly: args.countOnly ?? undefined,
        definitionsOnly: args.definitionsOnly ?? undefined,
      },
    );
    return FhirResourcePage.from(result);
  }

  @Query(() => FhirResourcePage, {
    nullable: true,
    description:
      'GET {owner}/X/:id/version/: the released versions of one repository, newest first, definitions only.',
  })
  async fhirResourceVersions(
    @Args() args: FhirVersionsArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<FhirResourcePage> {
    const result = await ctx.services.fhirResources.versions(
      ctx,
      args.type,
      parseOwnerUrl(args.owner),
      args.id,
      {
        count: args.count ?? undefined,
        page: args.page ?? undefined,
        countOnly: args.countOnly ?? undefined,
      },
    );
    return FhirResourcePage.from(result);
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
    return writePayload(
      CreateFhirResourcePayload,
      await ctx.services.fhirResources.create(ctx, type, namespaceOf(owner), resource),
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

/** One resource, as `GET /fhir/X/?url=…`, `GET {owner}/X/:id[/version/:v]` or `GET /fhir/X/:id`. */
async function readOne(
  ctx: GraphQLContext,
  type: FhirResourceType,
  { url, version, id, owner, page }: ResourceReadArgs,
): Promise<StoredResource | null> {
  // One resource: every released version is a list, which `fhirResourceVersions` answers.
  if (version === '*') throw AppError.field('version', 'Name one version, or none for the latest.');
  if (url && id) throw AppError.field('id', 'Name the resource by `url` or by `id`, not both.');
  if (id && owner) {
    const read = await ctx.services.fhirResources.read(
      ctx,
      type,
      parseOwnerUrl(owner),
      id,
      version ?? undefined,
      page ?? undefined,
    );
    return read?.resource ?? null;
  }
  if (id) {
    if (version)
      throw AppError.field(
        'version',
        'A server-wide id reads the latest released version; name a version with `owner`.',
      );
    return (await ctx.services.fhirResources.readById(ctx, type, id, page ?? undefined)).resource;
  }
  if (!url) throw AppError.field('url', 'Name the resource: `url`, or `id` (with `owner`).');
  const found = await ctx.services.fhirResources.search(ctx, type, namespaceOf(owner), {
    url,
    version: version ?? undefined,
    page: page ?? undefined,
    count: 1,
  });
  return found.resources[0] ?? null;
}

function namespaceOf(owner: string | null | undefined): FhirNamespace {
  return owner ? { kind: 'owner', owner: parseOwnerUrl(owner) } : { kind: 'global' };
}

function targetOf(owner: string | null, id: string): FhirTarget {
  return owner ? { kind: 'owner', owner: parseOwnerUrl(owner), id } : { kind: 'global', id };
}
