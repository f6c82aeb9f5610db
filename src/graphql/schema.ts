import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { ConceptResolver, SourceConceptsResolver } from './resolvers/concept.resolver';
import {
  ConceptMappingsResolver,
  MappingResolver,
  SourceMappingsResolver,
} from './resolvers/mapping.resolver';
import { OrgResolver } from './resolvers/org.resolver';
import {
  OrgRepositoriesResolver,
  RepositoryFieldsResolver,
  RepositoryResolver,
  UserRepositoriesResolver,
} from './resolvers/repository.resolver';
import { UserResolver } from './resolvers/user.resolver';

/** The schema as declared by the resolvers, before the permission layer. */
export async function buildGraphqlSchema(): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers: [
      UserResolver,
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
    ],
    // Input is validated once, in the services, for every edge.
    validate: false,
  });
}

/** The SDL committed as `schema/schema.graphql`. */
export function printSdl(schema: GraphQLSchema): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
