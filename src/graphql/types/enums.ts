import { registerEnumType } from 'type-graphql';

/**
 * The closed sets the schema once passed as strings (issue 28), as enums. Values are
 * SCREAMING_SNAKE_CASE; each one's internal value is what the services take and answer (REST's
 * spelling), so resolvers pass them through unchanged.
 */

export enum OwnerType {
  ORGANIZATION = 'Organization',
  USER = 'User',
}
registerEnumType(OwnerType, {
  name: 'OwnerType',
  description: 'What kind of owner: an org or a user (REST `Organization`, `User`).',
  valuesConfig: {
    ORGANIZATION: { description: 'An organization.' },
    USER: { description: 'A user.' },
  },
});

export enum RepositoryType {
  SOURCE = 'Source',
  COLLECTION = 'Collection',
}
registerEnumType(RepositoryType, {
  name: 'RepositoryType',
  description: 'What kind of repository (REST `Source`, `Collection`).',
  valuesConfig: {
    SOURCE: { description: 'A source: concepts and mappings authored in it.' },
    COLLECTION: { description: 'A collection: references to concepts and mappings of sources.' },
  },
});

export enum ReferenceResourceType {
  CONCEPT = 'Concept',
  MAPPING = 'Mapping',
}
registerEnumType(ReferenceResourceType, {
  name: 'ReferenceResourceType',
  description: 'What a collection reference takes in (REST `Concept`, `Mapping`).',
  valuesConfig: {
    CONCEPT: { description: 'Concepts.' },
    MAPPING: { description: 'Mappings.' },
  },
});

export enum PinResourceType {
  SOURCE = 'Source',
  COLLECTION = 'Collection',
  ORGANIZATION = 'Organization',
}
registerEnumType(PinResourceType, {
  name: 'PinResourceType',
  description: 'What a pin shows (REST `Source`, `Collection`, `Organization`).',
  valuesConfig: {
    SOURCE: { description: 'A source.' },
    COLLECTION: { description: 'A collection.' },
    ORGANIZATION: { description: 'An organization.' },
  },
});

/** The kinds of background task, by the name each is queued under (`src/services`). */
export enum TaskKind {
  BULK_IMPORT = 'bulk-import',
  ADD_REFERENCES = 'collection.references.add',
  EXPORT = 'repository-export',
  FHIR_WRITE = 'fhir-write',
  OTHER = 'other',
}
registerEnumType(TaskKind, {
  name: 'TaskKind',
  description:
    'What kind of work a task does (REST `task` names: `bulk-import`, `collection.references.add`, `repository-export`, `fhir-write`).',
  valuesConfig: {
    BULK_IMPORT: { description: 'A bulk import (`startBulkImport`).' },
    ADD_REFERENCES: { description: 'A large or background reference add (`addReferences`).' },
    EXPORT: { description: "The export of a repository version (`requestExport`, a release's)." },
    FHIR_WRITE: { description: 'A large FHIR resource write (`createFhirResource`, …).' },
    OTHER: { description: 'A kind this schema does not know yet (a newer server’s).' },
  },
});

const TASK_KINDS = new Set<string>(Object.values(TaskKind));

/** A task's kind as the schema names it; a kind it does not know is OTHER, never an error. */
export function taskKindOf(kind: string): TaskKind {
  return TASK_KINDS.has(kind) ? (kind as TaskKind) : TaskKind.OTHER;
}

export enum SubsumesOutcome {
  EQUIVALENT = 'equivalent',
  SUBSUMES = 'subsumes',
  SUBSUMED_BY = 'subsumed-by',
  NOT_SUBSUMED = 'not-subsumed',
}
registerEnumType(SubsumesOutcome, {
  name: 'SubsumesOutcome',
  description:
    'The outcome of CodeSystem/$subsumes, code A relative to code B (FHIR `equivalent`, `subsumes`, `subsumed-by`, `not-subsumed`).',
  valuesConfig: {
    EQUIVALENT: { description: 'A and B are the same concept.' },
    SUBSUMES: { description: 'A subsumes B (B is below A).' },
    SUBSUMED_BY: { description: 'A is subsumed by B (A is below B).' },
    NOT_SUBSUMED: { description: 'Neither subsumes the other.' },
  },
});

/*
 * The sort keys of each list (`sortBy`), their internal values the names the services resolve
 * (`resolveSort`: `BEST_MATCH` and `bestMatch` are one name there).
 */
const BEST_MATCH = 'Search rank (with `q`); without `q`, the list’s own order.';
const LAST_UPDATE = 'When it was last updated.';
const NAME = 'Its name.';
const ID = 'Its id.';
const DATE_CREATED = 'When it was created.';

export enum UserSort {
  BEST_MATCH = 'bestMatch',
  USERNAME = 'username',
  NAME = 'name',
  DATE_JOINED = 'dateJoined',
  LAST_UPDATE = 'lastUpdate',
}
registerEnumType(UserSort, {
  name: 'UserSort',
  description: 'What a list of users sorts by (REST `sortAsc`/`sortDesc`).',
  valuesConfig: {
    BEST_MATCH: { description: BEST_MATCH },
    USERNAME: { description: 'The username.' },
    NAME: { description: NAME },
    DATE_JOINED: { description: 'When the user signed up.' },
    LAST_UPDATE: { description: LAST_UPDATE },
  },
});

export enum OrgSort {
  BEST_MATCH = 'bestMatch',
  ID = 'id',
  NAME = 'name',
  DATE_CREATED = 'dateCreated',
  LAST_UPDATE = 'lastUpdate',
}
registerEnumType(OrgSort, {
  name: 'OrgSort',
  description: 'What a list of orgs sorts by (REST `sortAsc`/`sortDesc`).',
  valuesConfig: {
    BEST_MATCH: { description: BEST_MATCH },
    ID: { description: ID },
    NAME: { description: NAME },
    DATE_CREATED: { description: DATE_CREATED },
    LAST_UPDATE: { description: LAST_UPDATE },
  },
});

export enum RepositorySort {
  BEST_MATCH = 'bestMatch',
  ID = 'id',
  NAME = 'name',
  DATE_CREATED = 'dateCreated',
  LAST_UPDATE = 'lastUpdate',
}
registerEnumType(RepositorySort, {
  name: 'RepositorySort',
  description: 'What a list of sources or collections sorts by (REST `sortAsc`/`sortDesc`).',
  valuesConfig: {
    BEST_MATCH: { description: BEST_MATCH },
    ID: { description: 'Its id (short code).' },
    NAME: { description: NAME },
    DATE_CREATED: { description: DATE_CREATED },
    LAST_UPDATE: { description: LAST_UPDATE },
  },
});

export enum ConceptSort {
  BEST_MATCH = 'bestMatch',
  ID = 'id',
  NAME = 'name',
  CONCEPT_CLASS = 'conceptClass',
  DATATYPE = 'datatype',
  LAST_UPDATE = 'lastUpdate',
}
registerEnumType(ConceptSort, {
  name: 'ConceptSort',
  description: 'What a list of concepts sorts by (REST `sortAsc`/`sortDesc`).',
  valuesConfig: {
    BEST_MATCH: { description: BEST_MATCH },
    ID: { description: 'Its id (code).' },
    NAME: { description: 'Its display name.' },
    CONCEPT_CLASS: { description: 'Its concept class.' },
    DATATYPE: { description: 'Its datatype.' },
    LAST_UPDATE: { description: LAST_UPDATE },
  },
});

export enum MappingSort {
  BEST_MATCH = 'bestMatch',
  ID = 'id',
  MAP_TYPE = 'mapType',
  SORT_WEIGHT = 'sortWeight',
  LAST_UPDATE = 'lastUpdate',
}
registerEnumType(MappingSort, {
  name: 'MappingSort',
  description: 'What a list of mappings sorts by (REST `sortAsc`/`sortDesc`).',
  valuesConfig: {
    BEST_MATCH: { description: BEST_MATCH },
    ID: { description: ID },
    MAP_TYPE: { description: 'Its map type.' },
    SORT_WEIGHT: { description: 'Its sort weight.' },
    LAST_UPDATE: { description: LAST_UPDATE },
  },
});

export enum UrlRegistrySort {
  BEST_MATCH = 'bestMatch',
  ID = 'id',
  NAME = 'name',
  URL = 'url',
  DATE_CREATED = 'dateCreated',
  LAST_UPDATE = 'lastUpdate',
}
registerEnumType(UrlRegistrySort, {
  name: 'UrlRegistrySort',
  description: 'What a list of URL registry entries sorts by (REST `sortAsc`/`sortDesc`).',
  valuesConfig: {
    BEST_MATCH: { description: BEST_MATCH },
    ID: { description: ID },
    NAME: { description: NAME },
    URL: { description: 'The canonical URL it registers.' },
    DATE_CREATED: { description: DATE_CREATED },
    LAST_UPDATE: { description: LAST_UPDATE },
  },
});
