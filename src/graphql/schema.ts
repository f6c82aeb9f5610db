import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema, type PubSub } from 'type-graphql';
import { CollectionContentResolver, CollectionResolver } from './resolvers/collection.resolver';
import { CompareResolver } from './resolvers/compare.resolver';
import { ConceptResolver, SourceConceptsResolver } from './resolvers/concept.resolver';
import { ConceptItemResolver } from './resolvers/concept-item.resolver';
import { ExtrasResolver } from './resolvers/extras.resolver';
import { StatusResolver } from './resolvers/status.resolver';
import {
  ConceptMappingsResolver,
  MappingEndResolver,
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
import { SubscriptionResolver } from './resolvers/subscription.resolver';
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
      ConceptItemResolver,
      ExtrasResolver,
      StatusResolver,
      MappingResolver,
      MappingEndResolver,
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
      SubscriptionResolver,
    ],
    // Input is validated once, in the services, for every edge.
    validate: false,
    pubSub: NO_TOPICS,
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
  const subscription = schema.getSubscriptionType();
  if (subscription) {
    subscription.description =
      'Events over WebSocket (`graphql-transport-ws` on `/graphql`, the token in ' +
      "`connectionParams.authorization`), told by any server process: a task's progress, a " +
      "repository's changes. Every field is nullable: an event the subscriber may no longer see " +
      'is null with its error, and ends the subscription.';
  }
  return schema;
}

/**
 * type-graphql wants a pub/sub for its topic-based subscriptions; ours each name their own
 * source (`subscribe`: a watch of the services), so no topic is ever used.
 */
const NO_TOPICS: PubSub = {
  publish: () => undefined,
  subscribe: () => {
    throw new Error('Subscriptions name their own source (`subscribe`); topics are not used.');
  },
};

/** The SDL committed as `schema/schema.graphql`. */
export function printSdl(schema: GraphQLSchema): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
