import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, Int, ObjectType, type ClassType } from 'type-graphql';
import { CloneOutcomeObject } from './cascade.type';
import { AddedReferenceObject, ExpansionObject } from './collection.type';
import { ConceptObject } from './concept.type';
import { MappingObject } from './mapping.type';
import { OrganizationType } from './org.type';
import { CollectionObject, RepositoryObject, SourceObject } from './repository.type';
import { TaskType } from './task.type';
import { UrlRegistryEntryType } from './url-registry.type';
import { UserType } from './user.type';
import { FollowObject, PinObject } from './web-client.type';
import {
  deletePayload,
  type DeletePayload,
  entityPayload,
  USER_ERRORS,
  payloadOf,
  UserErrorObject,
  type EntityPayload,
} from './payload.type';

/*
 * The payload of every mutation (docs/api-graphql.md "Mutations"), made by the factories of
 * payload.type.ts where the shape is the common one; the few that carry more are classes below.
 */

const VERSION_LESS_URL = 'Its version-less REST URL.';
const REPO_URL = 'The REST URL of the repository at the version written (HEAD: version-less).';

function conceptPayloadType(name: string, description: string): ClassType<ConceptPayload> {
  return entityPayload<'concept', ConceptObject>({
    name,
    description,
    field: 'concept',
    type: () => ConceptObject,
    fieldDescription: 'The concept at the version the mutation made.',
    idDescription: 'The concept id within its source.',
    urlDescription: VERSION_LESS_URL,
  });
}
export const CreateConceptPayload = conceptPayloadType(
  'CreateConceptPayload',
  'A concept created.',
);
export const UpdateConceptPayload = conceptPayloadType(
  'UpdateConceptPayload',
  'A concept edited: its new version.',
);
export const RetireConceptPayload = conceptPayloadType(
  'RetireConceptPayload',
  'A concept retired: its new, retired version.',
);
export const ReactivateConceptPayload = conceptPayloadType(
  'ReactivateConceptPayload',
  'A concept reactivated: its new, active version.',
);

function mappingPayloadType(name: string, description: string): ClassType<MappingPayload> {
  return entityPayload<'mapping', MappingObject>({
    name,
    description,
    field: 'mapping',
    type: () => MappingObject,
    fieldDescription: 'The mapping at the version the mutation made.',
    idDescription: 'The mapping id within its source.',
    urlDescription: VERSION_LESS_URL,
  });
}
export const CreateMappingPayload = mappingPayloadType(
  'CreateMappingPayload',
  'A mapping created.',
);
export const UpdateMappingPayload = mappingPayloadType(
  'UpdateMappingPayload',
  'A mapping edited: its new version.',
);
export const RetireMappingPayload = mappingPayloadType(
  'RetireMappingPayload',
  'A mapping retired: its new, retired version.',
);
export const ReactivateMappingPayload = mappingPayloadType(
  'ReactivateMappingPayload',
  'A mapping reactivated: its new, active version.',
);

function sourcePayloadType(name: string, description: string): ClassType<SourcePayload> {
  return entityPayload<'source', RepositoryObject>({
    name,
    description,
    field: 'source',
    type: () => SourceObject,
    fieldDescription: 'The source as the mutation left it (at the version written).',
    idDescription: 'The short code of the source, used in its URL.',
    urlDescription: REPO_URL,
  });
}
function collectionPayloadType(name: string, description: string): ClassType<CollectionPayload> {
  return entityPayload<'collection', RepositoryObject>({
    name,
    description,
    field: 'collection',
    type: () => CollectionObject,
    fieldDescription: 'The collection as the mutation left it (at the version written).',
    idDescription: 'The short code of the collection, used in its URL.',
    urlDescription: REPO_URL,
  });
}
export const CreateSourcePayload = sourcePayloadType('CreateSourcePayload', 'A source created.');
export const UpdateSourcePayload = sourcePayloadType('UpdateSourcePayload', 'A source edited.');
export const CreateSourceVersionPayload = sourcePayloadType(
  'CreateSourceVersionPayload',
  'A source version created.',
);
export const UpdateSourceVersionPayload = sourcePayloadType(
  'UpdateSourceVersionPayload',
  'A source version edited.',
);
export const CreateCollectionPayload = collectionPayloadType(
  'CreateCollectionPayload',
  'A collection created.',
);
export const UpdateCollectionPayload = collectionPayloadType(
  'UpdateCollectionPayload',
  'A collection edited.',
);
export const CreateCollectionVersionPayload = collectionPayloadType(
  'CreateCollectionVersionPayload',
  'A collection version created.',
);
export const UpdateCollectionVersionPayload = collectionPayloadType(
  'UpdateCollectionVersionPayload',
  'A collection version edited.',
);
export const DeleteSourcePayload = deletePayload(
  'DeleteSourcePayload',
  'A source deleted.',
  'source',
);
export const DeleteCollectionPayload = deletePayload(
  'DeleteCollectionPayload',
  'A collection deactivated.',
  'collection',
);
export const DeleteSourceVersionPayload = deletePayload(
  'DeleteSourceVersionPayload',
  'A source version deleted.',
  'version',
);
export const DeleteCollectionVersionPayload = deletePayload(
  'DeleteCollectionVersionPayload',
  'A collection version deleted.',
  'version',
);

function orgPayloadType(
  name: string,
  description: string,
  nullable = false,
): ClassType<OrgPayload> {
  return entityPayload<'org', OrganizationType | null>({
    name,
    description,
    field: 'org',
    type: () => OrganizationType,
    nullable,
    fieldDescription: nullable
      ? 'The org as it is now; null when the caller may no longer read it.'
      : 'The org as the mutation left it.',
    idDescription: 'The org identifier, used in its URL.',
    urlDescription: 'The REST URL of the org.',
  });
}
export const CreateOrgPayload = orgPayloadType('CreateOrgPayload', 'An org created.');
export const UpdateOrgPayload = orgPayloadType('UpdateOrgPayload', 'An org edited.');
export const DeleteOrgPayload = deletePayload('DeleteOrgPayload', 'An org deleted.', 'org');
export const AddMemberPayload = orgPayloadType(
  'AddMemberPayload',
  'A member added to an org, or their role changed.',
  true,
);
export const RemoveMemberPayload = orgPayloadType(
  'RemoveMemberPayload',
  'A membership removed.',
  true,
);

function userPayloadType(
  name: string,
  description: string,
  nullable = false,
): ClassType<UserPayload> {
  return entityPayload<'user', UserType | null>({
    name,
    description,
    field: 'user',
    type: () => UserType,
    nullable,
    fieldDescription: nullable
      ? 'The user as it is now; null when the caller may not read it.'
      : 'The user as the mutation left it.',
    idDescription: 'The username.',
    urlDescription: 'The REST URL of the user.',
  });
}
export const CreateUserPayload = userPayloadType('CreateUserPayload', 'A user created.');
export const SignupPayload = userPayloadType('SignupPayload', 'An account signed up for.');
export const UpdateUserPayload = userPayloadType('UpdateUserPayload', 'A user edited.');
export const DeactivateUserPayload = userPayloadType(
  'DeactivateUserPayload',
  'A user deactivated.',
  true,
);
export const ReactivateUserPayload = userPayloadType(
  'ReactivateUserPayload',
  'A user reactivated.',
  true,
);

function entryPayloadType(name: string, description: string): ClassType<EntryPayload> {
  return entityPayload<'entry', UrlRegistryEntryType>({
    name,
    description,
    field: 'entry',
    type: () => UrlRegistryEntryType,
    fieldDescription: 'The entry as the mutation left it.',
    idDescription: 'The entry id.',
  });
}
export const CreateUrlRegistryEntryPayload = entryPayloadType(
  'CreateUrlRegistryEntryPayload',
  'A URL registry entry created.',
);
export const UpdateUrlRegistryEntryPayload = entryPayloadType(
  'UpdateUrlRegistryEntryPayload',
  'A URL registry entry edited.',
);
export const DeleteUrlRegistryEntryPayload = deletePayload(
  'DeleteUrlRegistryEntryPayload',
  'A URL registry entry deactivated.',
  'entry',
  'Null: an entry has no REST URL of its own.',
);

function pinPayloadType(name: string, description: string): ClassType<PinPayloadValue> {
  return entityPayload<'pin', PinObject>({
    name,
    description,
    field: 'pin',
    type: () => PinObject,
    fieldDescription: 'The pin as the mutation left it.',
    idDescription: 'The pin id.',
    urlDescription: 'The REST URL of the pin.',
  });
}
export const PinPayload = pinPayloadType('PinPayload', 'A pin added.');
export const MovePinPayload = pinPayloadType('MovePinPayload', 'A pin moved.');
export const UnpinPayload = deletePayload('UnpinPayload', 'A pin removed.', 'pin');
export const FollowPayload = entityPayload<'follow', FollowObject>({
  name: 'FollowPayload',
  description: 'Something followed.',
  field: 'follow',
  type: () => FollowObject,
  fieldDescription: 'The follow made.',
  idDescription: 'The follow id.',
});
export const UnfollowPayload = deletePayload(
  'UnfollowPayload',
  'A follow ended.',
  'follow',
  "The REST URL of the follow ended (under the follower's `following/`).",
);

function expansionPayloadType(name: string, description: string): ClassType<ExpansionPayload> {
  return entityPayload<'expansion', ExpansionObject>({
    name,
    description,
    field: 'expansion',
    type: () => ExpansionObject,
    fieldDescription: 'The expansion as the mutation left it.',
    idDescription: 'The expansion mnemonic, used in its URL.',
    urlDescription: 'The REST URL of the expansion.',
  });
}
export const CreateExpansionPayload = expansionPayloadType(
  'CreateExpansionPayload',
  'An expansion made.',
);
export const ReevaluateExpansionPayload = expansionPayloadType(
  'ReevaluateExpansionPayload',
  'An expansion evaluated again.',
);
export const DeleteExpansionPayload = deletePayload(
  'DeleteExpansionPayload',
  'An expansion deleted.',
  'expansion',
);

export const CancelBulkImportPayload = entityPayload<'task', TaskType>({
  name: 'CancelBulkImportPayload',
  description: 'An import cancelled.',
  field: 'task',
  type: () => TaskType,
  fieldDescription: 'The import task as the cancel left it.',
  idDescription: 'The task id.',
  urlDescription: 'The REST URL of the task.',
});
export const StartBulkImportPayload = entityPayload<'task', TaskType>({
  name: 'StartBulkImportPayload',
  description:
    'An import queued. It runs after the answer: the lines it refuses are read from `bulkImport(taskId) { report }` (`failures`), not from this payload.',
  field: 'task',
  type: () => TaskType,
  fieldDescription: 'The import task, as queued.',
  idDescription: 'The task id.',
  urlDescription: 'The REST URL of the task.',
});

export const DeleteExportPayload = deletePayload(
  'DeleteExportPayload',
  "A version's export file deleted.",
  'version whose export was',
  'The REST URL of the version.',
);

export const DeleteFhirResourcePayload = deletePayload(
  'DeleteFhirResourcePayload',
  'A FHIR resource deleted (its repository removed as its REST delete removes it).',
  'resource',
  'Null: the resource is addressed by `type` and `id` in its namespace.',
);

/** What a FHIR resource write answers: the resource as stored, or the task writing it. */
export interface FhirResourceWritePayload {
  resource: Record<string, unknown> | null;
  id: string | null;
  taskId: string | null;
  taskState: string | null;
}

function fhirWritePayload(name: string, description: string): ClassType<FhirResourceWritePayload> {
  @ObjectType(name, { description })
  class Payload implements FhirResourceWritePayload {
    @Field(() => GraphQLJSONObject, {
      nullable: true,
      description: 'The resource as stored (FHIR R4 JSON); null while a task writes it.',
    })
    resource: Record<string, unknown> | null;

    @Field(() => ID, {
      nullable: true,
      description: 'The resource id in its namespace; null while a task writes it.',
    })
    id: string | null;

    @Field(() => ID, {
      nullable: true,
      description: 'The task writing the content, when it became one (read it with `task(id)`).',
    })
    taskId: string | null;

    @Field(() => String, {
      nullable: true,
      description: 'The state of that task, when there is one.',
    })
    taskState: string | null;
  }
  return Payload;
}

export const CreateFhirResourcePayload = fhirWritePayload(
  'CreateFhirResourcePayload',
  'A FHIR resource created: the resource as stored, or, for content written by a background task, the task.',
);
export const UpdateFhirResourcePayload = fhirWritePayload(
  'UpdateFhirResourcePayload',
  'A FHIR resource replaced: the resource as stored, or, for content written by a background task, the task.',
);

@ObjectType('ApiTokenPayload', { description: 'A new API token of the caller.' })
export class ApiTokenPayload {
  @Field({
    description: 'The token; send it as `Authorization: Token <token>`. Shown only once.',
  })
  token: string;
}

@ObjectType('RefreshSummaryPayload', {
  description: 'A summary refresh asked for (summaries here are computed on each read).',
})
export class RefreshSummaryPayload {
  @Field({ description: 'The REST URL of the repository (version), as given.' })
  url: string;
}

@ObjectType('AddReferencesPayload', {
  description:
    'What an add answers: each reference’s result, or — for an add of more than 2,000 references still running after 25 s, or when `background` was asked — the task running it (read it with `task(id)`). The references refused are in `userErrors` too; the others were added.',
})
export class AddReferencesPayload {
  @Field({ description: 'The REST URL of the collection (HEAD).' })
  url: string;

  @Field(() => [AddedReferenceObject], {
    nullable: true,
    description: 'One per reference given, in order; null while the task runs.',
  })
  results: AddedReferenceObject[] | null;

  @Field(() => TaskType, { nullable: true, description: 'The task, when the add became one.' })
  task: TaskType | null;

  @Field(() => Int, { description: 'How many references were added (0 while the task runs).' })
  addedCount: number;

  @Field(() => [UserErrorObject], {
    description: `${USER_ERRORS} One per reference refused (\`code\` \`NOT_ADDED\`, \`field\` \`["references", index]\`); empty while the task runs.`,
  })
  userErrors: UserErrorObject[];
}

@ObjectType('RemoveReferencesPayload', {
  description:
    'What a removal answers: the references removed, and those named that the collection did not hold.',
})
export class RemoveReferencesPayload {
  @Field({ description: 'The REST URL of the collection (HEAD).' })
  url: string;

  @Field(() => Int, { description: 'How many references were removed.' })
  removedCount: number;

  @Field(() => [ID], { description: 'The ids of the references removed.' })
  removedIds: string[];

  @Field(() => [UserErrorObject], {
    description: `${USER_ERRORS} One per expression or id named that matched no reference at HEAD (\`code\` \`NOT_FOUND\`, \`field\` \`["expressions", index]\` or \`["ids", index]\`).`,
  })
  userErrors: UserErrorObject[];
}

@ObjectType('CloneConceptsPayload', {
  description:
    'What `$clone` answers: one outcome per expression; those that wrote nothing are in `userErrors` too.',
})
export class CloneConceptsPayload {
  @Field({ description: 'The REST URL of the source copied into.' })
  url: string;

  @Field(() => [CloneOutcomeObject], { description: 'One per expression given, in order.' })
  outcomes: CloneOutcomeObject[];

  @Field(() => [ConceptObject], {
    description: 'Every concept created, across the expressions.',
  })
  concepts: ConceptObject[];

  @Field(() => [UserErrorObject], {
    description: `${USER_ERRORS} One per expression that wrote nothing (\`code\` its error code, \`field\` \`["expressions", index]\`).`,
  })
  userErrors: UserErrorObject[];
}

/** The payload of a mutation that wrote one object: the object, its `id` and its `url`. */
function valueOf<K extends string, T extends { id: string; url?: string }>(
  type: ClassType<EntityPayload<K, T>>,
  field: K,
  object: T,
): EntityPayload<K, T> {
  return payloadOf(type, {
    [field]: object,
    id: object.id,
    url: object.url ?? null,
  } as EntityPayload<K, T>);
}

export type ConceptPayload = EntityPayload<'concept', ConceptObject>;
export const conceptPayload = (
  type: ClassType<ConceptPayload>,
  concept: ConceptObject,
): ConceptPayload => valueOf(type, 'concept', concept);

export type MappingPayload = EntityPayload<'mapping', MappingObject>;
export const mappingPayload = (
  type: ClassType<MappingPayload>,
  mapping: MappingObject,
): MappingPayload => valueOf(type, 'mapping', mapping);

export type SourcePayload = EntityPayload<'source', RepositoryObject>;
export const sourcePayload = (
  type: ClassType<SourcePayload>,
  source: RepositoryObject,
): SourcePayload => valueOf(type, 'source', source);

export type CollectionPayload = EntityPayload<'collection', RepositoryObject>;
export const collectionPayload = (
  type: ClassType<CollectionPayload>,
  collection: RepositoryObject,
): CollectionPayload => valueOf(type, 'collection', collection);

export type OrgPayload = EntityPayload<'org', OrganizationType | null>;
export const orgPayload = (
  type: ClassType<OrgPayload>,
  id: string,
  org: OrganizationType | null,
): OrgPayload => payloadOf(type, { org, id, url: `/orgs/${id}/` });

export type UserPayload = EntityPayload<'user', UserType | null>;
export const userPayload = (
  type: ClassType<UserPayload>,
  username: string,
  user: UserType | null,
): UserPayload => payloadOf(type, { user, id: username, url: `/users/${username}/` });

export type EntryPayload = EntityPayload<'entry', UrlRegistryEntryType>;
export const entryPayload = (
  type: ClassType<EntryPayload>,
  entry: UrlRegistryEntryType,
): EntryPayload => payloadOf(type, { entry, id: entry.id, url: null });

export type PinPayloadValue = EntityPayload<'pin', PinObject>;
export const pinPayload = (type: ClassType<PinPayloadValue>, pin: PinObject): PinPayloadValue =>
  valueOf(type, 'pin', pin);

export type ExpansionPayload = EntityPayload<'expansion', ExpansionObject>;
export const expansionPayload = (
  type: ClassType<ExpansionPayload>,
  expansion: ExpansionObject,
): ExpansionPayload => payloadOf(type, { expansion, id: expansion.mnemonic, url: expansion.url });

export type TaskPayload = EntityPayload<'task', TaskType>;
export const taskPayload = (type: ClassType<TaskPayload>, task: TaskType): TaskPayload =>
  valueOf(type, 'task', task);

/** A delete's payload. */
export const deleted = (
  type: ClassType<DeletePayload>,
  deletedId: string,
  url: string | null,
): DeletePayload => payloadOf(type, { deletedId, url });

export type FollowPayloadValue = EntityPayload<'follow', FollowObject>;
export const followPayload = (
  type: ClassType<FollowPayloadValue>,
  follow: FollowObject,
): FollowPayloadValue => valueOf(type, 'follow', follow);
