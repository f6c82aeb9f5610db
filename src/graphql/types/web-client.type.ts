import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import type {
  ContentSummary,
  EventRow,
  FollowView,
  LocaleView,
  PinView,
  RepoSummary,
} from '../../services';
import { ReferenceObject } from './collection.type';
import { renamedTo, TOTAL_COUNT } from './descriptions';
import { PinResourceType } from './enums';
import { ConceptObject } from './concept.type';
import { MappingObject } from './mapping.type';
import { OrganizationType } from './org.type';
import { RepositoryObject, repositoryObject } from './repository.type';

@ObjectType('Pin', { description: 'A repository or org an org or a user shows first.' })
export class PinObject {
  @Field(() => ID, { description: 'The pin id.' })
  id: string;

  @Field(() => Int, { description: 'Its place among the owner’s pins, from 0.' })
  order: number;

  @Field(() => PinResourceType, { description: 'What it pins.' })
  resourceType: PinResourceType;

  @Field(() => RepositoryObject, {
    nullable: true,
    description: 'The pinned source or collection.',
  })
  repository: RepositoryObject | null;

  @Field(() => OrganizationType, { nullable: true, description: 'The pinned org.' })
  org: OrganizationType | null;

  @Field({ description: 'The REST URL of the pin.' })
  url: string;

  @Field({ description: 'When it was pinned.' })
  createdOn: Date;

  @Field({ description: 'Who pinned it (a username).' })
  createdBy: string;

  static from({ row, ownerUrl, resource }: PinView): PinObject {
    return Object.assign(new PinObject(), {
      id: row.id,
      order: row.position,
      resourceType: row.resource_type as PinResourceType,
      repository: resource?.kind === 'repo' ? repositoryObject(resource.detail.view) : null,
      org: resource?.kind === 'org' ? OrganizationType.of(resource.detail) : null,
      url: `${ownerUrl}pins/${row.id}/`,
      createdOn: row.created_at,
      createdBy: row.created_by,
    });
  }
}

@ObjectType('Follow', { description: 'Something a user follows.' })
export class FollowObject {
  @Field(() => ID, { description: 'The follow id.' })
  id: string;

  @Field({ description: '`User`, `Organization`, `Source` or `Collection`.' })
  type: string;

  @Field(() => GraphQLJSONObject, { description: 'The brief of what is followed (OCL `object`).' })
  object: Record<string, unknown>;

  @Field({ description: 'When the user started following it.' })
  followedOn: Date;

  static from({ row, object }: FollowView): FollowObject {
    return Object.assign(new FollowObject(), {
      id: row.id,
      type: row.following_type,
      object,
      followedOn: row.created_at,
    });
  }
}

@ObjectType('Event', { description: 'Something that happened to an org or a repository.' })
export class EventObject {
  @Field(() => ID, { description: 'The event id.' })
  id: string;

  @Field({ description: '`Created`, `Released`, `Deleted`, `Joined`, `Followed`, `Unfollowed`.' })
  eventType: string;

  @Field(() => String, { nullable: true, description: 'Who did it.' })
  actor: string | null;

  @Field(() => GraphQLJSONObject, { description: 'The brief of who did it (OCL `object`).' })
  object: Record<string, unknown>;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: 'The brief of what it happened to, as it was then.',
  })
  referencedObject: Record<string, unknown> | null;

  @Field({ description: 'False when it is about private content.' })
  public: boolean;

  @Field({ description: 'When it happened.', deprecationReason: renamedTo('createdOn') })
  createdAt: Date;

  @Field({ description: 'When it happened.' })
  get createdOn(): Date {
    return this.createdAt;
  }

  static from(row: EventRow): EventObject {
    return Object.assign(new EventObject(), {
      id: row.id,
      eventType: row.event_type,
      actor: row.actor_username,
      object: row.object,
      referencedObject: row.referenced_object,
      public: row.public,
      createdAt: row.created_at,
    });
  }
}

@ObjectType('EventPage', { description: 'A page of events.' })
export class EventPage {
  @Field(() => Int, { description: TOTAL_COUNT })
  totalCount: number;

  @Field(() => [EventObject], { description: 'The events of this page.' })
  items: EventObject[];
}

@ObjectType('Locale', { description: 'A locale of the ISO 639-1 source (REST `/locales/`).' })
export class LocaleObject {
  @Field({ description: 'The concept id: its two-letter code (ISO 639-1).' })
  id: string;

  @Field({ description: 'The two-letter code names and descriptions take.' })
  locale: string;

  @Field(() => String, {
    nullable: true,
    description: "The locale's name: the display name of its concept.",
  })
  displayName: string | null;

  static from({ concept, locale }: LocaleView): LocaleObject {
    return Object.assign(new LocaleObject(), {
      id: concept.concept.mnemonic,
      locale,
      displayName: concept.version.displayName,
    });
  }
}

@ObjectType('VersionTotals', { description: 'How many versions a repository has.' })
export class VersionTotalsObject {
  @Field(() => Int, { description: 'Versions, HEAD not counted.' })
  total: number;

  @Field(() => Int, { description: 'Released versions.' })
  released: number;
}

@ObjectType('RepositorySummary', {
  description: 'What a repository version holds (OCL `summary/`).',
})
export class RepositorySummaryObject {
  @Field(() => Int, { description: 'Active concepts this version holds.' })
  activeConcepts: number;

  @Field(() => Int, { description: 'Active mappings this version holds.' })
  activeMappings: number;

  @Field(() => VersionTotalsObject, { description: "The repository's versions." })
  versions: VersionTotalsObject;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description:
      'With `verbose`: `concepts {active retired conceptClass datatype locale nameType extrasKeys}` and `mappings {active retired mapType}`; distributions are `[value, count]` pairs.',
  })
  content: ContentSummary | null;

  static from(summary: RepoSummary): RepositorySummaryObject {
    return Object.assign(new RepositorySummaryObject(), {
      activeConcepts: summary.activeConcepts,
      activeMappings: summary.activeMappings,
      versions: summary.versions,
      content: summary.content ?? null,
    });
  }
}

@ObjectType('CollectionConcept', {
  description: 'A concept of a collection version, found by its id, and what brought it in.',
})
export class CollectionConceptObject {
  @Field(() => ConceptObject, { description: 'The version the expansion holds.' })
  concept: ConceptObject;

  @Field(() => [ReferenceObject], { description: 'The references that brought it in.' })
  references: ReferenceObject[];
}

@ObjectType('CollectionMapping', {
  description: 'A mapping of a collection version, found by its id, and what brought it in.',
})
export class CollectionMappingObject {
  @Field(() => MappingObject, { description: 'The version the expansion holds.' })
  mapping: MappingObject;

  @Field(() => [ReferenceObject], { description: 'The references that brought it in.' })
  references: ReferenceObject[];
}
