import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { ArgsType, Field, ID, Int, ObjectType } from 'type-graphql';
import { HEAD } from '../../db/entities';
import { AppError } from '../../errors';
import {
  DEFAULT_LIMIT,
  repoUrl,
  type AddedReference,
  type AddOutcome,
  type ExpansionView,
  type Page,
  type ReferenceView,
  type RepoView,
} from '../../services';
import {
  CREATED_BY,
  CREATED_ON,
  enumTyped,
  OFFSET,
  renamedTo,
  TOTAL_COUNT,
  UPDATED_ON,
} from './descriptions';
import { connectionPageOf, EDGE_CURSOR, PAGE_INFO, PageInfoObject } from './connection.type';
import { ReferenceResourceType } from './enums';
import { CursorListArgs } from './list.args';
import { TaskType } from './task.type';

/** The REST URL of a collection at one of its versions (HEAD: the version-less URL). */
function collectionUrlAt(collection: RepoView, version: string): string {
  return version === HEAD
    ? repoUrl(collection.owner, 'collection', collection.repo.mnemonic)
    : repoUrl(collection.owner, 'collection', collection.repo.mnemonic, version);
}

@ObjectType('Reference', {
  description: 'A collection reference, stored as given (spec operations §2.4).',
})
export class ReferenceObject {
  view: ReferenceView;

  @Field(() => ID, { description: 'The reference id.' })
  id: string;

  @Field({ description: 'The reference expression, as given.' })
  expression: string;

  @Field({ description: 'False for an exclusion.' })
  include: boolean;

  @Field(() => ReferenceResourceType, { description: 'What it takes in.' })
  resourceType: ReferenceResourceType;

  @Field(() => String, { nullable: true, description: 'The repository URL referenced.' })
  system: string | null;

  @Field(() => String, { nullable: true, description: 'The repository version, if one is named.' })
  version: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The concept or mapping id, if one is named.',
  })
  code: string | null;

  @Field(() => String, { nullable: true, description: 'The concept or mapping version, if named.' })
  resourceVersion: string | null;

  @Field(() => GraphQLJSON, { nullable: true, description: '`[{property, op, value}]`.' })
  filter: unknown;

  @Field(() => GraphQLJSON, {
    nullable: true,
    description:
      'Its cascade: `sourcemappings`, `sourcetoconcepts` or an object of cascade parameters; null for none.',
  })
  cascade: unknown;

  @Field(() => String, {
    nullable: true,
    description: 'The namespace it is forced to resolve in (an owner URL); null for none.',
  })
  namespace: string | null;

  @Field(() => String, {
    nullable: true,
    description: "A display name overriding the concept's in expansions; null for none.",
  })
  display: string | null;

  @Field({ description: 'Always the same content: a repository or resource version is named.' })
  static: boolean;

  @Field({ description: 'The REST URL of this reference, at the collection version read.' })
  url: string;

  @Field({ description: 'When it was added.' })
  createdOn: Date;

  @Field(() => String, { nullable: true, description: 'Who added it (a username).' })
  createdBy: string | null;

  @Field(() => Date, {
    nullable: true,
    description: "When the version's default expansion last evaluated the references.",
    deprecationReason: renamedTo('lastResolvedOn'),
  })
  lastResolvedAt: Date | null;

  @Field(() => Date, {
    nullable: true,
    description: "When the version's default expansion last evaluated the references.",
  })
  get lastResolvedOn(): Date | null {
    return this.lastResolvedAt;
  }

  @Field(() => Int, { nullable: true, description: 'Concepts this reference selected then.' })
  resolvedConcepts: number | null;

  @Field(() => Int, { nullable: true, description: 'Mappings this reference selected then.' })
  resolvedMappings: number | null;

  static from(view: ReferenceView): ReferenceObject {
    const { collection, reference: r } = view;
    return Object.assign(new ReferenceObject(), {
      view,
      id: r.id,
      expression: r.expression,
      include: r.include,
      resourceType: r.resourceType as ReferenceResourceType,
      system: r.system,
      version: r.version,
      code: r.code,
      resourceVersion: r.resourceVersion,
      filter: r.filter,
      cascade: r.cascade,
      namespace: r.namespace,
      display: r.display,
      static: r.version !== null || r.resourceVersion !== null,
      url: `${collectionUrlAt(collection, collection.version.mnemonic)}references/${r.id}/`,
      createdOn: r.createdAt,
      createdBy: r.createdBy,
      lastResolvedAt: view.result?.lastResolvedAt ?? null,
      resolvedConcepts: view.result?.concepts ?? null,
      resolvedMappings: view.result?.mappings ?? null,
    });
  }
}

@ObjectType('ReferenceEdge', { description: 'A reference of a page, with its cursor.' })
export class ReferenceEdge {
  @Field({ description: EDGE_CURSOR })
  cursor: string;

  @Field(() => ReferenceObject, { description: 'The reference.' })
  node: ReferenceObject;
}

@ObjectType('ReferencePage', {
  description:
    'A page of collection references: `items` (offset paging), or the same as a Relay connection (`edges`, `pageInfo`; cursor paging).',
})
export class ReferencePage {
  @Field(() => Int, { description: TOTAL_COUNT })
  totalCount: number | Promise<number>;

  @Field(() => [ReferenceObject], { description: 'The references of this page.' })
  items: ReferenceObject[];

  @Field(() => [ReferenceEdge], {
    description: 'The references of this page with their cursors, in the order of `items`.',
  })
  edges: ReferenceEdge[];

  @Field(() => PageInfoObject, { description: PAGE_INFO })
  pageInfo: PageInfoObject;

  static of(page: Page<ReferenceView>): ReferencePage {
    const items = page.items.map((view) => ReferenceObject.from(view));
    return connectionPageOf(page, items);
  }
}

@ArgsType()
export class ReferenceListArgs extends CursorListArgs {
  @Field({ nullable: true, description: 'Only inclusions (true) or only exclusions (false).' })
  include?: boolean;

  @Field({
    nullable: true,
    description: '`Concept` or `Mapping`.',
    deprecationReason: enumTyped('resourceTypes'),
  })
  resourceType?: string;

  @Field(() => [ReferenceResourceType], {
    nullable: true,
    description: 'References taking in any of these (none or empty: both).',
  })
  resourceTypes?: ReferenceResourceType[];
}

/** The `resourceType` filter the service takes: one value, or none for both. */
export function resourceTypeFilterOf(args: ReferenceListArgs): string[] | undefined {
  if (args.resourceType != null && args.resourceTypes != null) {
    throw AppError.field('resourceType', 'Not with `resourceTypes`; `resourceType` is deprecated.');
  }
  if (args.resourceType != null) return [args.resourceType];
  const wanted = new Set(args.resourceTypes ?? []);
  return wanted.size === 1 ? [...wanted] : undefined;
}

@ObjectType('AddedReference', { description: 'The answer for one reference of an add.' })
export class AddedReferenceObject {
  @Field({ description: 'Whether it was added.' })
  added: boolean;

  @Field({ description: 'The reference expression, as given.' })
  expression: string;

  @Field({ description: 'What happened to it, in words (why not, when refused).' })
  message: string;

  @Field(() => ReferenceObject, { nullable: true, description: 'The stored reference, if added.' })
  reference: ReferenceObject | null;

  static from(result: AddedReference, collection: RepoView): AddedReferenceObject {
    return Object.assign(new AddedReferenceObject(), {
      added: result.added,
      expression: result.expression,
      message: result.message,
      reference: result.reference
        ? ReferenceObject.from({ collection, reference: result.reference })
        : null,
    });
  }
}

@ObjectType('ReferencesAdded', {
  description:
    'What an add answers: each reference’s result, or — for an add of more than 2,000 references still running after 25 s, or when `background` was asked — the task running it (read it with `task(id)`).',
})
export class ReferencesAddedObject {
  @Field(() => [AddedReferenceObject], {
    nullable: true,
    description: 'One per reference given, in order; null while the task runs.',
  })
  results: AddedReferenceObject[] | null;

  @Field(() => TaskType, { nullable: true, description: 'The task, when the add became one.' })
  task: TaskType | null;

  static from(outcome: AddOutcome): ReferencesAddedObject {
    return Object.assign(new ReferencesAddedObject(), {
      results:
        'results' in outcome
          ? outcome.results.map((result) => AddedReferenceObject.from(result, outcome.collection))
          : null,
      task: 'task' in outcome ? TaskType.from(outcome.task) : null,
    });
  }
}

@ObjectType('ExpansionSummary', { description: 'The counts of an expansion.' })
export class ExpansionSummaryObject {
  @Field(() => Int, { description: 'Active concepts it holds.' })
  activeConcepts: number;

  @Field(() => Int, { description: 'Active mappings it holds.' })
  activeMappings: number;
}

@ObjectType('ExpansionSystem', {
  description: 'A repository version an expansion evaluated references against.',
})
export class ExpansionSystemObject {
  @Field({ description: 'The repository URL, relative or canonical, as references named it.' })
  system: string;

  @Field(() => String, { nullable: true, description: 'The version named, if one was.' })
  version: string | null;

  @Field(() => String, { nullable: true, description: 'The repository version URL, if resolved.' })
  url: string | null;

  @Field({ description: 'Whether it resolved to a repository version in the service.' })
  resolved: boolean;
}

@ObjectType('ExpansionRepoUpdate', {
  description:
    'A repository version an expansion resolved, and the version its repository resolves to now (re-evaluating would read that one).',
})
export class ExpansionRepoUpdateObject {
  @Field({ description: 'The version URL the expansion resolved.' })
  resolved: string;

  @Field({ description: "What the repository's URL without a version resolves to now." })
  latest: string;
}

@ObjectType('Expansion', {
  description: 'A collection version evaluated under its parameters (spec operations §2.1).',
})
export class ExpansionObject {
  view: ExpansionView;

  @Field(() => ID, { description: 'Its internal id.' })
  id: string;

  @Field({ description: 'Identifies the expansion in its URL.' })
  mnemonic: string;

  @Field(() => GraphQLJSONObject, {
    description: 'The evaluation parameters (spec operations §2.2).',
  })
  parameters: Record<string, unknown>;

  @Field(() => String, {
    nullable: true,
    description: "Its canonical URL (by default the collection's).",
  })
  canonicalUrl: string | null;

  @Field({ description: 'The REST URL of this expansion.' })
  url: string;

  @Field({ description: '`HEAD` or the version id.' })
  collectionVersion: string;

  @Field({ description: 'The REST URL of the collection version it belongs to.' })
  collectionVersionUrl: string;

  @Field({ description: 'True while it is being evaluated.' })
  isProcessing: boolean;

  @Field(() => [ExpansionSystemObject], {
    description: 'The repository versions its references resolved to (or did not).',
  })
  resolvedRepoVersions: ExpansionSystemObject[];

  @Field({ description: CREATED_ON })
  createdOn: Date;

  @Field(() => String, { nullable: true, description: CREATED_BY })
  createdBy: string | null;

  @Field({ description: UPDATED_ON })
  updatedOn: Date;

  static from(view: ExpansionView): ExpansionObject {
    const { collection, expansion: e } = view;
    const at = repoUrl(collection.owner, 'collection', collection.repo.mnemonic, e.versionMnemonic);
    return Object.assign(new ExpansionObject(), {
      view,
      id: e.id,
      mnemonic: e.mnemonic,
      parameters: e.parameters,
      canonicalUrl: e.canonicalUrl,
      url: `${at}expansions/${encodeURIComponent(e.mnemonic)}/`,
      collectionVersion: e.versionMnemonic,
      collectionVersionUrl: at,
      isProcessing: e.isProcessing,
      resolvedRepoVersions: e.resolved.map((s) => ({ ...s })),
      createdOn: e.createdAt,
      createdBy: e.createdBy,
      updatedOn: e.updatedAt,
    });
  }
}

@ObjectType('ExpansionPage', { description: 'A page of expansions.' })
export class ExpansionPage {
  @Field(() => Int, { description: TOTAL_COUNT })
  totalCount: number;

  @Field(() => [ExpansionObject], { description: 'The expansions of this page.' })
  items: ExpansionObject[];
}

@ArgsType()
export class ExpansionListArgs {
  @Field(() => Int, {
    defaultValue: DEFAULT_LIMIT,
    description: 'Page size; 0 returns everything.',
  })
  limit: number;

  @Field(() => Int, { defaultValue: 0, description: OFFSET })
  offset: number;

  @Field({
    defaultValue: false,
    description: 'The expansions of every version of the collection, not only this one.',
  })
  allVersions: boolean;
}
