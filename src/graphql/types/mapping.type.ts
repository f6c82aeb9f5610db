import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, ID, InputType, Int, ObjectType } from 'type-graphql';
import {
  mappingEnd,
  repoUrl,
  type Ends,
  type MappingItem,
  type MappingView,
  type Page,
  type ResolvedEnd,
} from '../../services';
import { ChecksumsObject } from './concept.type';
import {
  connectionPageOf,
  EDGE_CURSOR,
  PAGE_INFO,
  PageInfoObject,
  TOTAL_COUNT_EXACT,
} from './connection.type';
import { EXTERNAL_ID, TOTAL_COUNT } from './descriptions';
import { OwnerType } from './enums';
import { FACETS, FacetObject, facetsOf } from './facets.type';

@ObjectType('MappingEnd', {
  description: 'One end of a mapping: as given, and what it resolved to (spec core §2.7).',
})
export class MappingEndObject {
  @Field(() => String, { nullable: true, description: 'As given: relative or canonical.' })
  sourceUrl: string | null;

  @Field(() => String, { nullable: true, description: 'The source version given; null for none.' })
  sourceVersion: string | null;

  @Field(() => String, { nullable: true, description: 'The concept code.' })
  conceptCode: string | null;

  @Field(() => String, { nullable: true, description: 'As given.' })
  conceptName: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The concept URL, when the end lies inside the service.',
  })
  conceptUrl: string | null;

  /** The resolved name (`conceptNameResolved`, `MappingEndResolver`): as read, or read when asked. */
  resolvedName: string | null | (() => Promise<string | null>);

  @Field(() => String, {
    nullable: true,
    description:
      "The id of the resolved source's owner (org id or username); null when unresolved.",
  })
  sourceOwner: string | null;

  @Field(() => OwnerType, {
    nullable: true,
    description: 'The kind of that owner; null when unresolved.',
  })
  sourceOwnerType: OwnerType | null;

  @Field(() => String, {
    nullable: true,
    description: 'The id of the resolved source; null when unresolved.',
  })
  sourceName: string | null;

  /** `nameOf`: the concept's name read when asked, for ends resolved without names. */
  static from(
    view: MappingView,
    side: 'from' | 'to',
    end: ResolvedEnd,
    nameOf?: () => Promise<string | null>,
  ): MappingEndObject {
    const { conceptNameResolved, ...fields } = mappingEnd(view, side, end);
    return Object.assign(new MappingEndObject(), fields, {
      resolvedName: nameOf ?? conceptNameResolved,
    });
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

  @Field({ description: 'The mapping id within its source.' })
  id: string;

  @Field({ description: 'The id of this version.' })
  version: string;

  @Field({ description: 'The version-less REST URL.' })
  url: string;

  @Field({ description: 'The REST URL of this version.' })
  versionUrl: string;

  @Field(() => String, { nullable: true, description: 'The relationship, e.g. `SAME-AS`.' })
  mapType: string | null;

  @Field({ description: 'Whether this version is retired.' })
  retired: boolean;

  @Field(() => Float, {
    nullable: true,
    description: 'Orders mapped concepts within a map type; null when unset.',
  })
  sortWeight: number | null;

  @Field(() => String, { nullable: true, description: EXTERNAL_ID })
  externalId: string | null;

  @Field(() => GraphQLJSONObject, { description: 'Custom attributes; empty when none.' })
  extras: Record<string, unknown>;

  @Field(() => ChecksumsObject, { description: 'The checksums of this version.' })
  checksums: ChecksumsObject;

  @Field({ description: 'Whether this is the current version in HEAD.' })
  isLatestVersion: boolean;

  @Field(() => String, {
    nullable: true,
    description: 'The comment of the edit that made this version.',
  })
  updateComment: string | null;

  @Field({ description: 'When the mapping was created.' })
  createdOn: Date;

  @Field(() => String, { nullable: true, description: 'Who created the mapping (a username).' })
  createdBy: string | null;

  @Field({ description: 'When this version was made.' })
  updatedOn: Date;

  @Field(() => String, { nullable: true, description: 'Who made this version (a username).' })
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

@ObjectType('MappingEdge', { description: 'A mapping of a page, with its cursor.' })
export class MappingEdge {
  @Field({ description: EDGE_CURSOR })
  cursor: string;

  @Field(() => MappingObject, { description: 'The mapping.' })
  node: MappingObject;
}

@ObjectType('MappingPage', {
  description:
    'A page of mappings: `items` (offset paging), or the same as a Relay connection (`edges`, `pageInfo`; cursor paging).',
})
export class MappingPage {
  @Field(() => Int, { description: TOTAL_COUNT })
  totalCount: number | Promise<number>;

  @Field(() => Boolean, { description: TOTAL_COUNT_EXACT })
  totalCountExact: boolean | Promise<boolean>;

  @Field(() => [MappingObject], { description: 'The mappings of this page.' })
  items: MappingObject[];

  @Field(() => [MappingEdge], {
    description: 'The mappings of this page with their cursors, in the order of `items`.',
  })
  edges: MappingEdge[];

  @Field(() => PageInfoObject, { description: PAGE_INFO })
  pageInfo: PageInfoObject;

  @Field(() => [FacetObject], { nullable: true, description: FACETS })
  facets?: FacetObject[] | null;

  static of(page: Page<MappingItem>): MappingPage {
    const items = page.items.map((item) => MappingObject.of(item));
    return Object.assign(connectionPageOf(page, items), { facets: facetsOf(page) });
  }
}

@InputType('MappingInput', {
  description:
    'Each end as `*ConceptUrl` (relative), or `*SourceUrl` (relative or canonical) with `*ConceptCode`. On update only what is sent changes.',
})
export class MappingInput {
  @Field({ nullable: true, description: 'The mapping id (create only; assigned when absent).' })
  id?: string;

  @Field({ nullable: true, description: 'The relationship, e.g. `SAME-AS` (required on create).' })
  mapType?: string;

  @Field(() => String, { nullable: true, description: 'The from concept, as a relative URL.' })
  fromConceptUrl?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The from source, as a relative or canonical URL.',
  })
  fromSourceUrl?: string | null;

  @Field(() => String, { nullable: true, description: 'The version of the from source.' })
  fromSourceVersion?: string | null;

  @Field(() => String, { nullable: true, description: 'The code of the from concept.' })
  fromConceptCode?: string | null;

  @Field(() => String, { nullable: true, description: 'A name for the from concept.' })
  fromConceptName?: string | null;

  @Field(() => String, { nullable: true, description: 'The to concept, as a relative URL.' })
  toConceptUrl?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The to source, as a relative or canonical URL.',
  })
  toSourceUrl?: string | null;

  @Field(() => String, { nullable: true, description: 'The version of the to source.' })
  toSourceVersion?: string | null;

  @Field(() => String, { nullable: true, description: 'The code of the to concept.' })
  toConceptCode?: string | null;

  @Field(() => String, { nullable: true, description: 'A name for the to concept.' })
  toConceptName?: string | null;

  @Field(() => Float, {
    nullable: true,
    description: 'Orders mapped concepts within a map type.',
  })
  sortWeight?: number | null;

  @Field(() => String, { nullable: true, description: EXTERNAL_ID })
  externalId?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Custom attributes.' })
  extras?: Record<string, unknown> | null;

  @Field({ nullable: true, description: 'Whether it is retired.' })
  retired?: boolean;

  @Field(() => String, {
    nullable: true,
    description: 'The comment the new version records.',
  })
  updateComment?: string | null;
}
