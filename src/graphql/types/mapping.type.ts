import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, ID, InputType, Int, ObjectType } from 'type-graphql';
import {
  mappingEnd,
  repoUrl,
  type Ends,
  type MappingItem,
  type MappingView,
  type ResolvedEnd,
} from '../../services';
import { ChecksumsObject } from './concept.type';

@ObjectType('MappingEnd', {
  description: 'One end of a mapping: as given, and what it resolved to (spec core §2.7).',
})
export class MappingEndObject {
  @Field(() => String, { nullable: true, description: 'As given: relative or canonical.' })
  sourceUrl: string | null;

  @Field(() => String, { nullable: true })
  sourceVersion: string | null;

  @Field(() => String, { nullable: true })
  conceptCode: string | null;

  @Field(() => String, { nullable: true, description: 'As given.' })
  conceptName: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The concept URL, when the end lies inside the service.',
  })
  conceptUrl: string | null;

  @Field(() => String, {
    nullable: true,
    description: "The target concept's display name, when resolved.",
  })
  conceptNameResolved: string | null;

  @Field(() => String, { nullable: true })
  sourceOwner: string | null;

  @Field(() => String, { nullable: true })
  sourceOwnerType: string | null;

  @Field(() => String, { nullable: true })
  sourceName: string | null;

  static from(view: MappingView, side: 'from' | 'to', end: ResolvedEnd): MappingEndObject {
    return Object.assign(new MappingEndObject(), mappingEnd(view, side, end));
  }
}

@ObjectType('Mapping', { description: 'A mapping at one of its versions (spec core §2.7).' })
export class MappingObject {
  view: MappingView;
  /** Its ends, when the read that found it resolved them. */
  ends?: Ends;
  /** Its version count, when the read that found it counted them. */
  versionCount?: number;

  @Field(() => ID, { description: 'The id of this mapping version.' })
  uuid: string;

  @Field()
  id: string;

  @Field()
  version: string;

  @Field()
  url: string;

  @Field()
  versionUrl: string;

  @Field(() => String, { nullable: true })
  mapType: string | null;

  @Field()
  retired: boolean;

  @Field(() => Float, { nullable: true })
  sortWeight: number | null;

  @Field(() => String, { nullable: true })
  externalId: string | null;

  @Field(() => GraphQLJSONObject)
  extras: Record<string, unknown>;

  @Field(() => ChecksumsObject)
  checksums: ChecksumsObject;

  @Field()
  isLatestVersion: boolean;

  @Field(() => String, { nullable: true })
  updateComment: string | null;

  @Field()
  createdOn: Date;

  @Field(() => String, { nullable: true })
  createdBy: string | null;

  @Field()
  updatedOn: Date;

  @Field(() => String, { nullable: true })
  updatedBy: string | null;

  /** A mapping with its ends already resolved. */
  static of(item: MappingItem & { versionCount?: number }): MappingObject {
    const { ends, versionCount } = item;
    return Object.assign(MappingObject.from(item.view), { ends, versionCount });
  }

  static from(view: MappingView): MappingObject {
    const { source, mapping, version } = view;
    const url = `${repoUrl(source.owner, 'source', source.repo.mnemonic)}mappings/${encodeURIComponent(mapping.mnemonic)}/`;
    return Object.assign(new MappingObject(), {
      view,
      uuid: version.id,
      id: mapping.mnemonic,
      version: version.id,
      url,
      versionUrl: `${url}${version.id}/`,
      mapType: version.mapType,
      retired: version.retired,
      sortWeight: version.sortWeight,
      externalId: version.externalId,
      extras: version.extras ?? {},
      checksums: { standard: version.checksumStandard, smart: version.checksumSmart },
      isLatestVersion: version.validToSeq === null,
      updateComment: version.updateComment,
      createdOn: mapping.createdAt,
      createdBy: mapping.createdBy,
      updatedOn: version.createdAt,
      updatedBy: version.createdBy,
    });
  }
}

@ObjectType('MappingPage')
export class MappingPage {
  @Field(() => Int)
  totalCount: number;

  @Field(() => [MappingObject])
  items: MappingObject[];
}

@InputType('MappingInput', {
  description:
    'Each end as `*ConceptUrl` (relative), or `*SourceUrl` (relative or canonical) with `*ConceptCode`. On update only what is sent changes.',
})
export class MappingInput {
  @Field({ nullable: true, description: 'The mapping id (create only; assigned when absent).' })
  id?: string;

  @Field({ nullable: true })
  mapType?: string;

  @Field(() => String, { nullable: true })
  fromConceptUrl?: string | null;

  @Field(() => String, { nullable: true })
  fromSourceUrl?: string | null;

  @Field(() => String, { nullable: true })
  fromSourceVersion?: string | null;

  @Field(() => String, { nullable: true })
  fromConceptCode?: string | null;

  @Field(() => String, { nullable: true })
  fromConceptName?: string | null;

  @Field(() => String, { nullable: true })
  toConceptUrl?: string | null;

  @Field(() => String, { nullable: true })
  toSourceUrl?: string | null;

  @Field(() => String, { nullable: true })
  toSourceVersion?: string | null;

  @Field(() => String, { nullable: true })
  toConceptCode?: string | null;

  @Field(() => String, { nullable: true })
  toConceptName?: string | null;

  @Field(() => Float, { nullable: true })
  sortWeight?: number | null;

  @Field(() => String, { nullable: true })
  externalId?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  extras?: Record<string, unknown> | null;

  @Field({ nullable: true })
  retired?: boolean;

  @Field(() => String, { nullable: true })
  updateComment?: string | null;
}
