import { GraphQLError, isObjectType, type GraphQLObjectType, type GraphQLSchema } from 'graphql';
import { applyMiddleware } from 'graphql-middleware';
import { allow, deny, rule, shield } from 'graphql-shield';
import { AppError } from '../errors';
import { isAuthenticated, isSuperuser } from '../services';
import type { GraphQLContext } from './context';

/**
 * The outer gate (design §2): deny by default, so a new root field is closed until listed here.
 * Services still authorize every call; these rules reuse the same policy.
 */
const signedIn = rule({ cache: 'contextual' })((_parent, _args, ctx: GraphQLContext) =>
  isAuthenticated(ctx.actor)
    ? true
    : new AppError('UNAUTHENTICATED', 'Authentication credentials were not provided.'),
);

const superuser = rule({ cache: 'contextual' })((_parent, _args, ctx: GraphQLContext) => {
  if (isSuperuser(ctx.actor)) return true;
  return isAuthenticated(ctx.actor)
    ? new AppError('FORBIDDEN', 'You do not have permission to perform this action.')
    : new AppError('UNAUTHENTICATED', 'Authentication credentials were not provided.');
});

export function withPermissions(schema: GraphQLSchema): GraphQLSchema {
  const objectTypes = Object.values(schema.getTypeMap()).filter(
    (type) =>
      isObjectType(type) &&
      !type.name.startsWith('__') &&
      !['Query', 'Mutation', 'Subscription'].includes(type.name),
  );
  const permissions = shield(
    {
      Query: {
        me: allow,
        oidcLoginUrl: allow,
        oidcLogoutUrl: allow,
        user: allow,
        users: allow,
        org: allow,
        orgs: allow,
        source: allow,
        collection: allow,
        sources: allow,
        collections: allow,
        repos: allow,
        concept: allow,
        concepts: allow,
        mapping: allow,
        mappings: allow,
        task: signedIn,
        tasks: signedIn,
        bulkImport: signedIn,
        urlRegistry: allow,
        urlRegistryEntry: allow,
        lookupUrl: allow,
        resolveReference: allow,
        matchConcepts: signedIn,
        collectionReference: allow,
        expansion: allow,
        lookup: allow,
        validateCode: allow,
        batchValidateCode: allow,
        expandValueSet: allow,
        translate: allow,
        subsumes: allow,
        codeSystem: allow,
        valueSet: allow,
        conceptMap: allow,
        fhirResources: allow,
        fhirResourceVersions: allow,
        compareSourceVersions: signedIn,
        events: allow,
        pins: allow,
        following: allow,
        locales: allow,
        repositorySummary: allow,
        apiVersion: allow,
        toggles: allow,
        oidcSignupUrl: allow,
        oidcPasswordResetUrl: allow,
        lookupValues: allow,
      },
      Mutation: {
        login: allow,
        pin: signedIn,
        movePin: signedIn,
        unpin: signedIn,
        follow: signedIn,
        unfollow: signedIn,
        apiToken: signedIn,
        exchangeOidcCode: allow,
        signup: allow,
        createUser: superuser,
        updateUser: signedIn,
        deactivateUser: superuser,
        reactivateUser: superuser,
        createOrg: signedIn,
        updateOrg: signedIn,
        deleteOrg: superuser,
        addMember: signedIn,
        removeMember: signedIn,
        createSource: signedIn,
        createFhirResource: signedIn,
        updateFhirResource: signedIn,
        deleteFhirResource: signedIn,
        updateSource: signedIn,
        deleteSource: signedIn,
        createCollection: signedIn,
        updateCollection: signedIn,
        deleteCollection: signedIn,
        createSourceVersion: signedIn,
        updateSourceVersion: signedIn,
        deleteSourceVersion: signedIn,
        createCollectionVersion: signedIn,
        updateCollectionVersion: signedIn,
        deleteCollectionVersion: signedIn,
        createConcept: signedIn,
        updateConcept: signedIn,
        retireConcept: signedIn,
        reactivateConcept: signedIn,
        cloneConcepts: signedIn,
        createMapping: signedIn,
        updateMapping: signedIn,
        retireMapping: signedIn,
        reactivateMapping: signedIn,
        createUrlRegistryEntry: signedIn,
        updateUrlRegistryEntry: signedIn,
        deleteUrlRegistryEntry: signedIn,
        addReferences: signedIn,
        removeReferences: signedIn,
        createExpansion: signedIn,
        deleteExpansion: signedIn,
        reevaluateExpansion: signedIn,
        startBulkImport: signedIn,
        cancelBulkImport: signedIn,
        requestExport: signedIn,
        deleteExport: signedIn,
        setExtra: signedIn,
        deleteExtra: signedIn,
        addConceptName: signedIn,
        updateConceptName: signedIn,
        deleteConceptName: signedIn,
        addConceptDescription: signedIn,
        updateConceptDescription: signedIn,
        deleteConceptDescription: signedIn,
        refreshSummary: signedIn,
        verifyEmail: allow,
      },
      Subscription: {
        taskProgress: signedIn,
        repositoryChanged: allow,
      },
      // Fields of records are visible wherever the record is: services scope the records.
      ...Object.fromEntries(objectTypes.map((type) => [type.name, allow])),
    },
    {
      fallbackRule: deny,
      allowExternalErrors: true,
      fallbackError: () =>
        new GraphQLError('Not authorized.', { extensions: { code: 'FORBIDDEN' } }),
    },
  );
  // The rules of record types are all `allow`: kept out of their fields' resolution, where the
  // middleware would make every field of every record (a concept's hundreds of mapping ends) a
  // promise through the shield. Root fields stay gated, deny by default.
  const resolvers = new Map(
    objectTypes.map((type) => [
      type.name,
      new Map(
        Object.entries((type as GraphQLObjectType).getFields()).map(([name, field]) => [
          name,
          field.resolve,
        ]),
      ),
    ]),
  );
  const gated = applyMiddleware(schema, permissions);
  for (const [typeName, fields] of resolvers) {
    const type = gated.getType(typeName) as GraphQLObjectType;
    for (const [name, field] of Object.entries(type.getFields())) field.resolve = fields.get(name);
  }
  return gated;
}
