import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { ArgsType, Field, ID, Int, ObjectType } from 'type-graphql';
import { HEAD } from '../../db/entities';
import {
  DEFAULT_LIMIT,
  repoUrl,
  type AddedReference,
  type AddOutcome,
  type ExpansionView,
  type ReferenceView,
  type RepoView,
} from '../../services';
import { ListArgs } from './list.args';
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

  @Field(() => ID)
  id: string;

  @Field()
  expression: string;

  @Field({ description: 'False for an exclusion.' })
  include: boolean;

  @Field({ description: '`Concept` or `Mapping`.' })
  resourceType: string;

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

  @Field(() => GraphQLJSON, { nullable: true })
  cascade: unknown;

  @Field(() => String, { nullable: true })
  namespace: string | null;

  @Field(() => String, { nullable: true })
  display: string | null;

  @Field({ description: 'Always the same content: a repository or resource version is named.' })
  static: boolean;

  @Field({ description: 'The REST URL of this reference, at the collection version read.' })
  url: string;

  @Field()
  createdOn: Date;

  @Field(() => String, { nullable: true })
  createdBy: string | null;

  @Field(() => Date, {
    nullable: true,
    description: "When the version's default expansion last evaluated the references.",
  })
  lastResolvedAt: Date | null;

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
      resourceType: r.resourceType,
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

@ObjectType('ReferencePage')
export class ReferencePage {
  @Field(() => Int)
  totalCount: number;

  @Field(() => [ReferenceObject])
  items: ReferenceObject[];
}

@ArgsType()
export class ReferenceListArgs extends ListArgs {
  @Field({ nullable: true, description: 'Only inclusions (true) or only exclusions (false).' })
  include?: boolean;

  @Field({ nullable: true, description: '`Concept` or `Mapping`.' })
  resourceType?: string;
}

@ObjectType('AddedReference', { description: 'The answer for one reference of an add.' })
export class AddedReferenceObject {
  @Field()
  added: boolean;

  @Field()
  expression: string;

  @Field()
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

@ObjectType('ExpansionSummary')
export class ExpansionSummaryObject {
  @Field(() => Int)
  activeConcepts: number;

  @Field(() => Int)
  activeMappings: number;
}

@ObjectType('ExpansionSystem', {
  description: 'A repository version an expansion evaluated references against.',
})
export class ExpansionSystemObject {
  @Field()
  system: string;

  @Field(() => String, { nullable: true })
  version: string | null;

  @Field(() => String, { nullable: true, description: 'The repository version URL, if resolved.' })
  url: string | null;

  @Field()
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

  @Field(() => ID)
  id: string;

  @Field()
  mnemonic: string;

  @Field(() => GraphQLJSONObject)
  parameters: Record<string, unknown>;

  @Field(() => String, { nullable: true })
  canonicalUrl: string | null;

  @Field()
  url: string;

  @Field({ description: '`HEAD` or the version id.' })
  collectionVersion: string;

  @Field()
  collectionVersionUrl: string;

  @Field()
  isProcessing: boolean;

  @Field(() => [ExpansionSystemObject], {
    description: 'The repository versions its references resolved to (or did not).',
  })
  resolvedRepoVersions: ExpansionSystemObject[];

  @Field()
  createdOn: Date;

  @Field(() => String, { nullable: true })
  createdBy: string | null;

  @Field()
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

@ObjectType('ExpansionPage')
export class ExpansionPage {
  @Field(() => Int)
  totalCount: number;

  @Field(() => [ExpansionObject])
  items: ExpansionObject[];
}

@ArgsType()
export class ExpansionListArgs {
  @Field(() => Int, {
    defaultValue: DEFAULT_LIMIT,
    description: 'Page size; 0 returns everything.',
  })
  limit: number;

  @Field(() => Int, { defaultValue: 0 })
  offset: number;

  @Field({
    defaultValue: false,
    description: 'The expansions of every version of the collection, not only this one.',
  })
  allVersions: boolean;
}
