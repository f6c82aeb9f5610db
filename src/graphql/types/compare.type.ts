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
import { EXTERNAL_ID } from './descriptions';

/** Output only: its values were lower case (`new`) until issue 28. */
export enum ChangeKindEnum {
  NEW = 'new',
  REMOVED = 'removed',
  RETIRED = 'retired',
  MAJOR = 'major',
  MINOR = 'minor',
}
registerEnumType(ChangeKindEnum, {
  name: 'ChangeKind',
  description:
    'How a concept or mapping changed between two versions: NEW (active only in the newer), REMOVED (active in the older, absent from the newer), RETIRED (retired in the newer), MAJOR (another smart checksum: a change of meaning), MINOR (the same smart checksum, another standard one).',
  valuesConfig: {
    NEW: { description: 'Active only in the newer version.' },
    REMOVED: { description: 'Active in the older version, absent from the newer.' },
    RETIRED: { description: 'Retired in the newer version.' },
    MAJOR: { description: 'Another smart checksum: a change of meaning.' },
    MINOR: { description: 'The same smart checksum, another standard one.' },
  },
});

@ObjectType('ComparedVersion', { description: 'One side of a comparison.' })
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
  @Field(() => [String], { description: 'Codes active only in the newer version.' })
  new: string[];

  @Field(() => [String], {
    description: 'Codes active in the older version, absent from the newer.',
  })
  removed: string[];

  @Field(() => [String], { description: 'Codes retired in the newer version.' })
  retired: string[];

  @Field(() => [String], { description: 'Codes whose smart checksum changed.' })
  major: string[];

  @Field(() => [String], {
    description: 'Codes whose standard checksum changed but not their smart one.',
  })
  minor: string[];

  @Field(() => Int, { description: 'Active in both with the same checksums.' })
  same: number;

  @Field(() => [String], {
    nullable: true,
    description:
      'Their codes, when asked with `includeSameCodes` (REST `verbosity` 3 and up); else null.',
  })
  sameCodes: string[] | null;

  static from(changes: ContentChanges): ContentChangesObject {
    const { new: added, removed, retired, major, minor, same } = changes;
    return Object.assign(new ContentChangesObject(), {
      new: added,
      removed,
      retired,
      major,
      minor,
      same,
      sameCodes: changes.sameCodes ?? null,
    });
  }
}

@ObjectType('MappingChangeBefore', {
  description: 'A changed mapping as the older version held it.',
})
export class MappingChangeBeforeObject {
  @Field(() => String, { nullable: true, description: 'Its map type then.' })
  mapType: string | null;

  @Field(() => String, { nullable: true, description: 'The code of its to concept then.' })
  toConcept: string | null;

  @Field(() => String, { nullable: true, description: 'The source URL of its to end then.' })
  toSource: string | null;
}

@ObjectType('MappingChange', {
  description: 'A mapping that changed, as the newer version holds it (the older, when removed).',
})
export class MappingChangeObject {
  @Field(() => ChangeKindEnum, { description: 'How it changed.' })
  kind: ChangeKindEnum;

  @Field({ description: 'The mapping id.' })
  code: string;

  @Field(() => String, { nullable: true, description: 'Its map type.' })
  mapType: string | null;

  @Field(() => String, { nullable: true, description: 'The code of its from concept.' })
  fromConcept: string | null;

  @Field(() => String, { nullable: true, description: 'The source URL of its from end.' })
  fromSource: string | null;

  @Field(() => String, { nullable: true, description: 'The code of its to concept.' })
  toConcept: string | null;

  @Field(() => String, { nullable: true, description: 'The source URL of its to end.' })
  toSource: string | null;

  @Field(() => String, { nullable: true, description: EXTERNAL_ID })
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

@ObjectType('ConceptState', { description: 'What a concept held at one of the versions compared.' })
export class ConceptStateObject {
  @Field(() => String, { nullable: true, description: 'Its display name.' })
  displayName: string | null;

  @Field(() => String, { nullable: true, description: 'Its concept class.' })
  conceptClass: string | null;

  @Field(() => String, { nullable: true, description: 'Its datatype.' })
  datatype: string | null;

  @Field(() => [ConceptNameObject], { description: 'Its names.' })
  names: ConceptNameObject[];

  @Field(() => [ConceptDescriptionObject], { description: 'Its descriptions.' })
  descriptions: ConceptDescriptionObject[];
}

@ObjectType('ConceptChange', {
  description:
    'A concept that changed (or whose mappings did), as the newer version holds it (the older, when removed).',
})
export class ConceptChangeObject extends ConceptStateObject {
  @Field(() => ChangeKindEnum, {
    nullable: true,
    description: 'Null: the concept did not change, its mappings did.',
  })
  kind: ChangeKindEnum | null;

  @Field({ description: 'The concept id.' })
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

@ObjectType('SourceChangelog', {
  description: 'What changed between the two versions compared, concept by concept.',
})
export class ChangelogObject {
  @Field(() => [ConceptChangeObject], {
    description:
      'Changed concepts by kind (new, removed, retired, major, minor), then unchanged ones whose mappings changed.',
  })
  concepts: ConceptChangeObject[];

  @Field(() => [MappingChangeObject], { description: 'Changed mappings from no concept above.' })
  mappings: MappingChangeObject[];

  @Field({
    description:
      'A release note of these changes in Markdown: a summary table, then each change in words (REST `output=markdown`).',
  })
  markdown: string;
}

@ObjectType('VersionComparison', {
  description: "Two versions of one source compared (OCL's `$compare`), the older first.",
})
export class VersionComparisonObject {
  /** What the comparison was asked with (the changelog reads it again). */
  input: { version1: string; version2: string };

  @Field(() => ComparedVersionObject, { description: 'The older version.' })
  older: ComparedVersionObject;

  @Field(() => ComparedVersionObject, { description: 'The newer version.' })
  newer: ComparedVersionObject;

  @Field(() => ContentChangesObject, { description: 'Concept ids that changed.' })
  concepts: ContentChangesObject;

  @Field(() => ContentChangesObject, { description: 'Mapping ids that changed.' })
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
