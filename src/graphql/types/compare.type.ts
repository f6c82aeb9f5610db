import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import type {
  ConceptChange,
  ContentChanges,
  MappingChange,
  VersionComparison,
} from '../../services';
import {
  ConceptDescriptionObject,
  ConceptNameObject,
  descriptionObjectOf,
  nameObjectOf,
} from './concept.type';

export enum ChangeKindEnum {
  new = 'new',
  removed = 'removed',
  retired = 'retired',
  major = 'major',
  minor = 'minor',
}
registerEnumType(ChangeKindEnum, {
  name: 'ChangeKind',
  description:
    'How a concept or mapping changed between two versions: new (active only in the newer), removed (active in the older, absent from the newer), retired (retired in the newer), major (another smart checksum: a change of meaning), minor (the same smart checksum, another standard one).',
});

@ObjectType('ComparedVersion')
export class ComparedVersionObject {
  @Field({ description: 'The version URL (the source URL for HEAD).' })
  url: string;

  @Field({ description: 'The version id, or HEAD.' })
  version: string;

  @Field(() => Int, { description: 'Active concepts it holds.' })
  concepts: number;

  @Field(() => Int, { description: 'Active mappings it holds.' })
  mappings: number;
}

@ObjectType('ContentChanges', { description: 'Codes that changed, by kind, in code order.' })
export class ContentChangesObject {
  @Field(() => [String])
  new: string[];

  @Field(() => [String])
  removed: string[];

  @Field(() => [String])
  retired: string[];

  @Field(() => [String])
  major: string[];

  @Field(() => [String])
  minor: string[];

  @Field(() => Int, { description: 'Active in both with the same checksums.' })
  same: number;

  static from(changes: ContentChanges): ContentChangesObject {
    const { new: added, removed, retired, major, minor, same } = changes;
    return Object.assign(new ContentChangesObject(), {
      new: added,
      removed,
      retired,
      major,
      minor,
      same,
    });
  }
}

@ObjectType('MappingChangeBefore')
export class MappingChangeBeforeObject {
  @Field(() => String, { nullable: true })
  mapType: string | null;

  @Field(() => String, { nullable: true })
  toConcept: string | null;

  @Field(() => String, { nullable: true })
  toSource: string | null;
}

@ObjectType('MappingChange')
export class MappingChangeObject {
  @Field(() => ChangeKindEnum)
  kind: ChangeKindEnum;

  @Field()
  code: string;

  @Field(() => String, { nullable: true })
  mapType: string | null;

  @Field(() => String, { nullable: true })
  fromConcept: string | null;

  @Field(() => String, { nullable: true })
  fromSource: string | null;

  @Field(() => String, { nullable: true })
  toConcept: string | null;

  @Field(() => String, { nullable: true })
  toSource: string | null;

  @Field(() => String, { nullable: true })
  externalId: string | null;

  @Field(() => MappingChangeBeforeObject, {
    nullable: true,
    description: 'A major or minor change: the mapping as the older version held it.',
  })
  before: MappingChangeBeforeObject | null;

  static from(change: MappingChange): MappingChangeObject {
    return Object.assign(new MappingChangeObject(), change, {
      kind: change.kind as ChangeKindEnum,
    });
  }
}

@ObjectType('ConceptState')
export class ConceptStateObject {
  @Field(() => String, { nullable: true })
  displayName: string | null;

  @Field(() => String, { nullable: true })
  conceptClass: string | null;

  @Field(() => String, { nullable: true })
  datatype: string | null;

  @Field(() => [ConceptNameObject])
  names: ConceptNameObject[];

  @Field(() => [ConceptDescriptionObject])
  descriptions: ConceptDescriptionObject[];
}

@ObjectType('ConceptChange')
export class ConceptChangeObject extends ConceptStateObject {
  @Field(() => ChangeKindEnum, {
    nullable: true,
    description: 'Null: the concept did not change, its mappings did.',
  })
  kind: ChangeKindEnum | null;

  @Field()
  code: string;

  @Field(() => ConceptStateObject, {
    nullable: true,
    description: 'A major or minor change: the concept as the older version held it.',
  })
  before: ConceptStateObject | null;

  @Field(() => [MappingChangeObject], { description: 'Its changed mappings (those from it).' })
  mappings: MappingChangeObject[];

  static from(change: ConceptChange): ConceptChangeObject {
    return Object.assign(new ConceptChangeObject(), stateOf(change), {
      kind: change.kind as ChangeKindEnum | null,
      code: change.code,
      before: change.before ? stateOf(change.before) : null,
      mappings: change.mappings.map((m) => MappingChangeObject.from(m)),
    });
  }
}

function stateOf(state: ConceptChange['before'] & object): ConceptStateObject {
  return {
    displayName: state.displayName,
    conceptClass: state.conceptClass,
    datatype: state.datatype,
    names: state.names.map(nameObjectOf),
    descriptions: state.descriptions.map(descriptionObjectOf),
  };
}

@ObjectType('SourceChangelog')
export class ChangelogObject {
  @Field(() => [ConceptChangeObject], {
    description:
      'Changed concepts by kind (new, removed, retired, major, minor), then unchanged ones whose mappings changed.',
  })
  concepts: ConceptChangeObject[];

  @Field(() => [MappingChangeObject], { description: 'Changed mappings from no concept above.' })
  mappings: MappingChangeObject[];
}

@ObjectType('VersionComparison', {
  description: "Two versions of one source compared (OCL's `$compare`), the older first.",
})
export class VersionComparisonObject {
  /** What the comparison was asked with (the changelog reads it again). */
  input: { version1: string; version2: string };

  @Field(() => ComparedVersionObject)
  older: ComparedVersionObject;

  @Field(() => ComparedVersionObject)
  newer: ComparedVersionObject;

  @Field(() => ContentChangesObject)
  concepts: ContentChangesObject;

  @Field(() => ContentChangesObject)
  mappings: ContentChangesObject;

  static from(
    comparison: VersionComparison,
    input: { version1: string; version2: string },
  ): VersionComparisonObject {
    const side = (v: VersionComparison['older']): ComparedVersionObject => ({
      url: v.url,
      version: v.view.version.mnemonic,
      concepts: v.concepts,
      mappings: v.mappings,
    });
    return Object.assign(new VersionComparisonObject(), {
      input,
      older: side(comparison.older),
      newer: side(comparison.newer),
      concepts: ContentChangesObject.from(comparison.concepts),
      mappings: ContentChangesObject.from(comparison.mappings),
    });
  }
}
