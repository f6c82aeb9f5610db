import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import type { ConceptDescription, ConceptName } from '../../db/entities';
import { repoUrl, type ConceptDetail, type ConceptView, type Page } from '../../services';
import {
  connectionPageOf,
  EDGE_CURSOR,
  PAGE_INFO,
  PageInfoObject,
  TOTAL_COUNT_EXACT,
} from './connection.type';
import { EXTERNAL_ID, TOTAL_COUNT } from './descriptions';
import { FACETS, FacetObject, facetsOf } from './facets.type';

@ObjectType('ConceptName', { description: 'A name of a concept (spec core §2.6).' })
export class ConceptNameObject {
  @Field(() => ID, { description: 'Addresses the name within its concept.' })
  uuid: string;

  @Field({ description: 'The name text.' })
  name: string;

  @Field({ description: 'Its locale code, e.g. `en`.' })
  locale: string;

  @Field({ description: 'Whether it is the preferred name in its locale.' })
  localePreferred: boolean;

  @Field(() => String, {
    nullable: true,
    description: 'Its name type (e.g. `FULLY_SPECIFIED`); null when unset.',
  })
  nameType: string | null;

  @Field(() => String, { nullable: true, description: EXTERNAL_ID })
  externalId: string | null;
}

@ObjectType('ConceptDescription', { description: 'A description of a concept (spec core §2.6).' })
export class ConceptDescriptionObject {
  @Field(() => ID, { description: 'Addresses the description within its concept.' })
  uuid: string;

  @Field({ description: 'The description text.' })
  description: string;

  @Field({ description: 'Its locale code, e.g. `en`.' })
  locale: string;

  @Field({ description: 'Whether it is the preferred description in its locale.' })
  localePreferred: boolean;

  @Field(() => String, {
    nullable: true,
    description: 'Its description type; null when unset.',
  })
  descriptionType: string | null;

  @Field(() => String, { nullable: true, description: EXTERNAL_ID })
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
  @Field(() => String, {
    nullable: true,
    description: 'Checksum of all the content; null when none was stored.',
  })
  standard: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'Checksum of the content that carries meaning only; null when none was stored.',
  })
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

  @Field({ description: 'The REST URL of this version.' })
  versionUrl: string;

  @Field(() => String, { nullable: true, description: 'Its concept class, e.g. `Diagnosis`.' })
  conceptClass: string | null;

  @Field(() => String, { nullable: true, description: 'Its datatype, e.g. `Numeric` or `N/A`.' })
  datatype: string | null;

  @Field({ description: 'Whether this version is retired.' })
  retired: boolean;

  @Field(() => String, {
    nullable: true,
    description:
      "The preferred name in the source's default locale, else any preferred name, else the first.",
  })
  displayName: string | null;

  @Field(() => String, { nullable: true, description: 'The locale of `displayName`.' })
  displayLocale: string | null;

  @Field(() => String, { nullable: true, description: EXTERNAL_ID })
  externalId: string | null;

  @Field(() => [ConceptNameObject], { description: 'Its names (at least one).' })
  names: ConceptNameObject[];

  @Field(() => [ConceptDescriptionObject], { description: 'Its descriptions.' })
  descriptions: ConceptDescriptionObject[];

  @Field(() => GraphQLJSONObject, { description: 'Custom attributes; empty when none.' })
  extras: Record<string, unknown>;

  @Field(() => [String], { description: 'Its parents in the source (the hierarchy).' })
  parentConceptUrls: string[];

  @Field(() => ChecksumsObject, { description: 'The checksums of this version.' })
  checksums: ChecksumsObject;

  @Field({ description: 'Whether this is the current version in HEAD.' })
  isLatestVersion: boolean;

  @Field(() => String, {
    nullable: true,
    description: 'The comment of the edit that made this version.',
  })
  updateComment: string | null;

  @Field({ description: 'When the concept was created.' })
  createdOn: Date;

  @Field(() => String, { nullable: true, description: 'Who created the concept (a username).' })
  createdBy: string | null;

  @Field({ description: 'When this version was made.' })
  updatedOn: Date;

  @Field(() => String, { nullable: true, description: 'Who made this version (a username).' })
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

@ObjectType('ConceptEdge', { description: 'A concept of a page, with its cursor.' })
export class ConceptEdge {
  @Field({ description: EDGE_CURSOR })
  cursor: string;

  @Field(() => ConceptObject, { description: 'The concept.' })
  node: ConceptObject;
}

@ObjectType('ConceptPage', {
  description:
    'A page of concepts: `items` (offset paging), or the same as a Relay connection (`edges`, `pageInfo`; cursor paging).',
})
export class ConceptPage {
  @Field(() => Int, { description: TOTAL_COUNT })
  totalCount: number | Promise<number>;

  @Field(() => Boolean, { description: TOTAL_COUNT_EXACT })
  totalCountExact: boolean | Promise<boolean>;

  @Field(() => [ConceptObject], { description: 'The concepts of this page.' })
  items: ConceptObject[];

  @Field(() => [ConceptEdge], {
    description: 'The concepts of this page with their cursors, in the order of `items`.',
  })
  edges: ConceptEdge[];

  @Field(() => PageInfoObject, { description: PAGE_INFO })
  pageInfo: PageInfoObject;

  @Field(() => [FacetObject], { nullable: true, description: FACETS })
  facets?: FacetObject[] | null;

  static of(page: Page<ConceptView>): ConceptPage {
    const items = page.items.map((view) => ConceptObject.from(view));
    return Object.assign(connectionPageOf(page, items), { facets: facetsOf(page) });
  }
}

@InputType('ConceptNameInput', { description: 'A name of a concept, as sent.' })
export class ConceptNameInput {
  @Field({ nullable: true, description: 'Keeps the identity of an existing name.' })
  uuid?: string;

  @Field({ description: 'The name text.' })
  name: string;

  @Field({ description: 'Its locale code, e.g. `en`.' })
  locale: string;

  @Field({
    nullable: true,
    description: 'Whether it is the preferred name in its locale (default false).',
  })
  localePreferred?: boolean;

  @Field(() => String, { nullable: true, description: 'Its name type, e.g. `FULLY_SPECIFIED`.' })
  nameType?: string | null;

  @Field(() => String, { nullable: true, description: EXTERNAL_ID })
  externalId?: string | null;
}

@InputType('ConceptDescriptionInput', { description: 'A description of a concept, as sent.' })
export class ConceptDescriptionInput {
  @Field({ nullable: true, description: 'Keeps the identity of an existing description.' })
  uuid?: string;

  @Field({ description: 'The description text.' })
  description: string;

  @Field({ description: 'Its locale code, e.g. `en`.' })
  locale: string;

  @Field({
    nullable: true,
    description: 'Whether it is the preferred description in its locale (default false).',
  })
  localePreferred?: boolean;

  @Field(() => String, { nullable: true, description: 'Its description type.' })
  descriptionType?: string | null;

  @Field(() => String, { nullable: true, description: EXTERNAL_ID })
  externalId?: string | null;
}

@InputType('ConceptInput', {
  description:
    'On update, only the fields sent change; names and descriptions sent replace the old ones.',
})
export class ConceptInput {
  @Field({ nullable: true, description: 'The concept id (create only).' })
  id?: string;

  @Field({ nullable: true, description: 'Its concept class (required on create).' })
  conceptClass?: string;

  @Field({ nullable: true, description: 'Its datatype.' })
  datatype?: string;

  @Field(() => String, { nullable: true, description: EXTERNAL_ID })
  externalId?: string | null;

  @Field(() => [ConceptNameInput], {
    nullable: true,
    description: 'Its names (at least one; required on create).',
  })
  names?: ConceptNameInput[];

  @Field(() => [ConceptDescriptionInput], { nullable: true, description: 'Its descriptions.' })
  descriptions?: ConceptDescriptionInput[];

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Custom attributes.' })
  extras?: Record<string, unknown> | null;

  @Field({ nullable: true, description: 'Whether it is retired.' })
  retired?: boolean;

  @Field(() => [String], {
    nullable: true,
    description: 'URLs of its parents in the same source (replaces the old ones).',
  })
  parentConceptUrls?: string[];

  @Field(() => String, {
    nullable: true,
    description: 'The comment the new version records.',
  })
  updateComment?: string | null;
}
