import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import type { ConceptDescription, ConceptName } from '../../db/entities';
import { repoUrl, type ConceptDetail, type ConceptView } from '../../services';

@ObjectType('ConceptName')
export class ConceptNameObject {
  @Field(() => ID)
  uuid: string;

  @Field()
  name: string;

  @Field()
  locale: string;

  @Field()
  localePreferred: boolean;

  @Field(() => String, { nullable: true })
  nameType: string | null;

  @Field(() => String, { nullable: true })
  externalId: string | null;
}

@ObjectType('ConceptDescription')
export class ConceptDescriptionObject {
  @Field(() => ID)
  uuid: string;

  @Field()
  description: string;

  @Field()
  locale: string;

  @Field()
  localePreferred: boolean;

  @Field(() => String, { nullable: true })
  descriptionType: string | null;

  @Field(() => String, { nullable: true })
  externalId: string | null;
}

/** A stored name as GraphQL shows it. */
export function nameObjectOf(n: ConceptName): ConceptNameObject {
  return {
    uuid: n.uuid,
    name: n.name,
    locale: n.locale,
    localePreferred: n.locale_preferred,
    nameType: n.name_type,
    externalId: n.external_id,
  };
}

/** A stored description as GraphQL shows it. */
export function descriptionObjectOf(d: ConceptDescription): ConceptDescriptionObject {
  return {
    uuid: d.uuid,
    description: d.description,
    locale: d.locale,
    localePreferred: d.locale_preferred,
    descriptionType: d.description_type,
    externalId: d.external_id,
  };
}

@ObjectType('Checksums', {
  description: 'spec core §9.4: `standard` decides 208; `smart` ignores minor edits.',
})
export class ChecksumsObject {
  @Field(() => String, { nullable: true })
  standard: string | null;

  @Field(() => String, { nullable: true })
  smart: string | null;
}

@ObjectType('Concept', { description: 'A concept at one of its versions (spec core §2.6).' })
export class ConceptObject {
  view: ConceptView;
  /** What a detail read brought along (version count, mappings), when the query asked for it. */
  detail?: ConceptDetail;

  @Field(() => ID, { description: 'The id of this concept version.' })
  uuid: string;

  @Field({ description: 'The concept id within its source.' })
  id: string;

  @Field({ description: 'The id of this version.' })
  version: string;

  @Field({ description: 'The version-less REST URL.' })
  url: string;

  @Field()
  versionUrl: string;

  @Field(() => String, { nullable: true })
  conceptClass: string | null;

  @Field(() => String, { nullable: true })
  datatype: string | null;

  @Field()
  retired: boolean;

  @Field(() => String, { nullable: true })
  displayName: string | null;

  @Field(() => String, { nullable: true })
  displayLocale: string | null;

  @Field(() => String, { nullable: true })
  externalId: string | null;

  @Field(() => [ConceptNameObject])
  names: ConceptNameObject[];

  @Field(() => [ConceptDescriptionObject])
  descriptions: ConceptDescriptionObject[];

  @Field(() => GraphQLJSONObject)
  extras: Record<string, unknown>;

  @Field(() => [String], { description: 'Its parents in the source (the hierarchy).' })
  parentConceptUrls: string[];

  @Field(() => ChecksumsObject)
  checksums: ChecksumsObject;

  @Field({ description: 'Whether this is the current version in HEAD.' })
  isLatestVersion: boolean;

  @Field(() => String, { nullable: true })
  updateComment: string | null;

  @Field()
  createdOn: Date;

  @Field(() => String, { nullable: true })
  createdBy: string | null;

  @Field({ description: 'When this version was made.' })
  updatedOn: Date;

  @Field(() => String, { nullable: true })
  updatedBy: string | null;

  /** A concept with what its detail read brought along. */
  static of(detail: ConceptDetail): ConceptObject {
    return Object.assign(ConceptObject.from(detail.view), { detail });
  }

  static from(view: ConceptView): ConceptObject {
    const { source, concept, version } = view;
    const url = `${repoUrl(source.owner, 'source', source.repo.mnemonic)}concepts/${encodeURIComponent(concept.mnemonic)}/`;
    return Object.assign(new ConceptObject(), {
      view,
      uuid: version.id,
      id: concept.mnemonic,
      version: version.id,
      url,
      versionUrl: `${url}${version.id}/`,
      conceptClass: version.conceptClass,
      datatype: version.datatype,
      retired: version.retired,
      displayName: version.displayName,
      displayLocale: version.displayLocale,
      externalId: version.externalId,
      names: version.names.map(nameObjectOf),
      descriptions: version.descriptions.map(descriptionObjectOf),
      extras: version.extras ?? {},
      parentConceptUrls: (version.parentCodes ?? []).map(
        (code) =>
          `${repoUrl(source.owner, 'source', source.repo.mnemonic)}concepts/${encodeURIComponent(code)}/`,
      ),
      checksums: { standard: version.checksumStandard, smart: version.checksumSmart },
      isLatestVersion: version.validToSeq === null,
      updateComment: version.updateComment,
      createdOn: concept.createdAt,
      createdBy: concept.createdBy,
      updatedOn: version.createdAt,
      updatedBy: version.createdBy,
    });
  }
}

@ObjectType('ConceptPage')
export class ConceptPage {
  @Field(() => Int)
  totalCount: number;

  @Field(() => [ConceptObject])
  items: ConceptObject[];
}

@InputType('ConceptNameInput')
export class ConceptNameInput {
  @Field({ nullable: true, description: 'Keeps the identity of an existing name.' })
  uuid?: string;

  @Field()
  name: string;

  @Field()
  locale: string;

  @Field({ nullable: true })
  localePreferred?: boolean;

  @Field(() => String, { nullable: true })
  nameType?: string | null;

  @Field(() => String, { nullable: true })
  externalId?: string | null;
}

@InputType('ConceptDescriptionInput')
export class ConceptDescriptionInput {
  @Field({ nullable: true })
  uuid?: string;

  @Field()
  description: string;

  @Field()
  locale: string;

  @Field({ nullable: true })
  localePreferred?: boolean;

  @Field(() => String, { nullable: true })
  descriptionType?: string | null;

  @Field(() => String, { nullable: true })
  externalId?: string | null;
}

@InputType('ConceptInput', {
  description:
    'On update, only the fields sent change; names and descriptions sent replace the old ones.',
})
export class ConceptInput {
  @Field({ nullable: true, description: 'The concept id (create only).' })
  id?: string;

  @Field({ nullable: true })
  conceptClass?: string;

  @Field({ nullable: true })
  datatype?: string;

  @Field(() => String, { nullable: true })
  externalId?: string | null;

  @Field(() => [ConceptNameInput], { nullable: true })
  names?: ConceptNameInput[];

  @Field(() => [ConceptDescriptionInput], { nullable: true })
  descriptions?: ConceptDescriptionInput[];

  @Field(() => GraphQLJSONObject, { nullable: true })
  extras?: Record<string, unknown> | null;

  @Field({ nullable: true })
  retired?: boolean;

  @Field(() => [String], {
    nullable: true,
    description: 'URLs of its parents in the same source (replaces the old ones).',
  })
  parentConceptUrls?: string[];

  @Field(() => String, { nullable: true })
  updateComment?: string | null;
}
