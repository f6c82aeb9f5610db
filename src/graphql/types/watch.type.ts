import { Field, ObjectType, registerEnumType } from 'type-graphql';
import { renamedTo } from './descriptions';
import {
  REPOSITORY_CHANGE_KINDS,
  type RepositoryChange,
  type RepositoryChangeKind as ServiceChangeKind,
} from '../../services';

/** The services' kinds of change, as a GraphQL enum (one list: the two cannot drift apart). */
export const RepositoryChangeKind = Object.fromEntries(
  REPOSITORY_CHANGE_KINDS.map((kind) => [kind, kind]),
) as { [K in ServiceChangeKind]: K };
export type RepositoryChangeKind = ServiceChangeKind;

registerEnumType(RepositoryChangeKind, {
  name: 'RepositoryChangeKind',
  description: 'What changed in a watched source or collection (`repositoryChanged`).',
  valuesConfig: {
    CONCEPT_CREATED: { description: 'A concept was created; `url` is its URL.' },
    CONCEPT_UPDATED: {
      description: 'A concept got a new version (its fields, names, descriptions or extras).',
    },
    CONCEPT_RETIRED: { description: 'A concept was retired.' },
    CONCEPT_REACTIVATED: { description: 'A retired concept was made active again.' },
    MAPPING_CREATED: { description: 'A mapping was created; `url` is its URL.' },
    MAPPING_UPDATED: { description: 'A mapping got a new version.' },
    MAPPING_RETIRED: { description: 'A mapping was retired.' },
    MAPPING_REACTIVATED: { description: 'A retired mapping was made active again.' },
    CONTENT_CHANGED: {
      description:
        'Many objects at once: a bulk import batch, a `$clone`, or a FHIR resource write (a ' +
        "code system's concepts, a concept map's mappings, a value set's references); `url` is " +
        "the repository's.",
    },
    REFERENCES_ADDED: { description: 'References were added to the collection.' },
    REFERENCES_REMOVED: { description: 'References were removed from the collection.' },
    VERSION_CREATED: { description: 'A version was created; `url` is its URL.' },
    VERSION_UPDATED: {
      description: "A version's description, release or retirement changed; `url` is its URL.",
    },
    VERSION_DELETED: { description: 'A version was deleted; `url` was its URL.' },
    REPOSITORY_UPDATED: {
      description: "The repository's own fields or custom attributes changed.",
    },
    REPOSITORY_DELETED: {
      description: 'The repository was deleted (a collection: deactivated); the last event.',
    },
  },
});

@ObjectType('RepositoryChange', {
  description:
    'One change in a watched source or collection (`repositoryChanged`); read what changed ' +
    'with the queries (`concept(url)`, `source(url)`, …).',
})
export class RepositoryChangeType {
  @Field(() => RepositoryChangeKind, { description: 'What kind of change it was.' })
  kind: RepositoryChangeKind;

  @Field({
    description:
      "The URL of what changed (a concept, a mapping, a version), or the repository's own " +
      'for a change of the repository or of many objects at once.',
  })
  url: string;

  @Field({ description: 'The URL of the repository (at HEAD).' })
  repositoryUrl: string;

  @Field({ description: 'Username of who made the change.' })
  actor: string;

  @Field({ description: 'When the change was made.', deprecationReason: renamedTo('changedOn') })
  at: Date;

  @Field({ description: 'When the change was made.' })
  get changedOn(): Date {
    return this.at;
  }

  static from(change: RepositoryChange): RepositoryChangeType {
    return Object.assign(new RepositoryChangeType(), change);
  }
}
