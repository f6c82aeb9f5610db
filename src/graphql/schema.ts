import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { CollectionContentResolver, CollectionResolver } from './resolvers/collection.resolver';
import { CompareResolver } from './resolvers/compare.resolver';
import { ConceptResolver, SourceConceptsResolver } from './resolvers/concept.resolver';
import {
  ConceptMappingsResolver,
  MappingResolver,
  SourceMappingsResolver,
} from './resolvers/mapping.resolver';
import { OidcResolver } from './resolvers/oidc.resolver';
import { OrgResolver } from './resolvers/org.resolver';
import { TerminologyResolver } from './resolvers/terminology.resolver';
import { FhirResourceResolver } from './resolvers/fhir-resource.resolver';
import {
  OrgRepositoriesResolver,
  RepositoryFieldsResolver,
  RepositoryResolver,
  UserRepositoriesResolver,
} from './resolvers/repository.resolver';
import { TaskResolver } from './resolvers/task.resolver';
import { BulkImportResolver } from './resolvers/bulk-import.resolver';
import { ExportResolver } from './resolvers/export.resolver';
import { UserResolver } from './resolvers/user.resolver';
import { UrlRegistryResolver } from './resolvers/url-registry.resolver';
import { MatchResolver } from './resolvers/match.resolver';
import {
  CollectionWebClientResolver,
  ConceptHoldersResolver,
  MappingHoldersResolver,
  OrgWebClientResolver,
  RepositorySummaryResolver,
  UserWebClientResolver,
  WebClientResolver,
} from './resolvers/web-client.resolver';

/** The schema as declared by the resolvers, before the permission layer. */
export async function buildGraphqlSchema(): Promise<GraphQLSchema> {
  const schema = await buildSchema({
    resolvers: [
      UserResolver,
      CompareResolver,
      TaskResolver,
      BulkImportResolver,
      OrgResolver,
      RepositoryResolver,
      RepositoryFieldsResolver,
      OrgRepositoriesResolver,
      UserRepositoriesResolver,
      ConceptResolver,
      SourceConceptsResolver,
      MappingResolver,
      ConceptMappingsResolver,
      SourceMappingsResolver,
      UrlRegistryResolver,
      MatchResolver,
      CollectionResolver,
      CollectionContentResolver,
      TerminologyResolver,
      FhirResourceResolver,
      ExportResolver,
      WebClientResolver,
      UserWebClientResolver,
      OrgWebClientResolver,
      RepositorySummaryResolver,
      CollectionWebClientResolver,
      ConceptHoldersResolver,
      MappingHoldersResolver,
      OidcResolver,
    ],
    // Input is validated once, in the services, for every edge.
    validate: false,
  });
  // type-graphql makes the root types itself, without a way to describe them.
  const query = schema.getQueryType();
  if (query) {
    query.description =
      'Reads: orgs, users, sources, collections, concepts and mappings, searches, the FHIR ' +
      'terminology operations and `$match`. Every field is nullable: a missing or refused object ' +
      'is null with its error, and the other fields still answer.';
  }
  const mutation = schema.getMutationType();
  if (mutation) {
    mutation.description =
      'Writes, each one service call with the same rules as its REST twin: a refused change ' +
      'is an error and changes nothing.';
  }
  return schema;
}

/** The SDL committed as `schema/schema.graphql`. */
export function printSdl(schema: GraphQLSchema): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
