import { ArgsType, Field, Int, ObjectType } from 'type-graphql';
import {
  repoUrl,
  type CascadeInput,
  type CascadeNode,
  type CascadeResult,
  type CloneResult,
} from '../../services';
import { ConceptObject } from './concept.type';
import { MappingObject } from './mapping.type';

@ArgsType()
export class CascadeArgs {
  @Field(() => [String], {
    nullable: true,
    description: 'Map types to cascade through (all when absent, but `excludeMapTypes`).',
  })
  mapTypes?: string[];

  @Field(() => [String], { nullable: true, description: 'Map types not cascaded through.' })
  excludeMapTypes?: string[];

  @Field(() => [String], {
    nullable: true,
    description:
      'Map types of the mappings listed: `["*"]` every type, `[]` none; absent: those cascaded through.',
  })
  returnMapTypes?: string[];

  @Field(() => String, {
    nullable: true,
    description:
      '`sourceToConcepts` (default: mappings and the concepts they reach) or `sourceMappings`.',
  })
  method?: string;

  @Field(() => Boolean, { nullable: true, description: 'Follow the hierarchy (default true).' })
  cascadeHierarchy?: boolean;

  @Field(() => Boolean, { nullable: true, description: 'Follow mappings (default true).' })
  cascadeMappings?: boolean;

  @Field(() => Int, {
    nullable: true,
    description:
      'Levels cascaded: 0 cascades this concept only (what it reaches is listed, not cascaded), 1 also what it reached, …; absent: all.',
  })
  cascadeLevels?: number;

  @Field(() => Boolean, {
    nullable: true,
    description: 'From targets back to what points at them.',
  })
  reverse?: boolean;

  @Field(() => String, {
    nullable: true,
    description: 'A repository (version) URL: concepts it already holds end their branch.',
  })
  omitIfExistsIn?: string;

  @Field(() => [String], {
    nullable: true,
    description: 'With omitIfExistsIn: a concept there mapped to one by these types counts too.',
  })
  equivalencyMapType?: string[];

  @Field(() => Boolean, { nullable: true, description: 'Retired concepts and mappings too.' })
  includeRetired?: boolean;

  @Field(() => String, {
    nullable: true,
    description:
      'The source or collection (version) URL to cascade in, as REST `…/collections/:collection/[:version/]concepts/:concept/$cascade/` does (no version: the latest released one); absent: the source version this concept was read through.',
  })
  repository?: string;
}

/** The arguments as the service's parameters (spec operations §4.2) name them. */
export function cascadeInputOf(args: CascadeArgs): CascadeInput {
  const list = (values: string[] | undefined): string | undefined =>
    values === undefined ? undefined : values.join(',');
  const bool = (value: boolean | undefined): string | undefined =>
    value === undefined || value === null ? undefined : String(value);
  return {
    mapTypes: list(args.mapTypes),
    excludeMapTypes: list(args.excludeMapTypes),
    returnMapTypes:
      args.returnMapTypes === undefined || args.returnMapTypes === null
        ? undefined
        : args.returnMapTypes.length === 0
          ? 'false'
          : args.returnMapTypes.join(','),
    method: args.method ?? undefined,
    cascadeHierarchy: bool(args.cascadeHierarchy),
    cascadeMappings: bool(args.cascadeMappings),
    cascadeLevels:
      args.cascadeLevels === undefined || args.cascadeLevels === null
        ? undefined
        : String(args.cascadeLevels),
    reverse: bool(args.reverse),
    omitIfExistsIn: args.omitIfExistsIn ?? undefined,
    equivalencyMapType: list(args.equivalencyMapType),
    includeRetired: bool(args.includeRetired),
  };
}

@ObjectType('CascadeStep', {
  description: 'What cascading a concept found: a mapping listed, a concept reached, or both.',
})
export class CascadeStepObject {
  @Field(() => MappingObject, {
    nullable: true,
    description: 'The mapping listed; null when the concept was reached through the hierarchy.',
  })
  mapping!: MappingObject | null;

  @Field(() => CascadeNodeObject, {
    nullable: true,
    description: 'The concept reached, through the mapping or the hierarchy.',
  })
  concept!: CascadeNodeObject | null;
}

@ObjectType('CascadeNode', { description: 'A concept a cascade reached (spec operations §2.6).' })
export class CascadeNodeObject {
  @Field(() => ConceptObject, { description: 'The concept.' })
  concept!: ConceptObject;

  @Field(() => Boolean, {
    nullable: true,
    description:
      'true: cascaded, nothing further; false: cascaded, with results; null: not cascaded.',
  })
  terminal!: boolean | null;

  @Field(() => [CascadeStepObject], {
    description: 'What cascading it found, in order (the hierarchy view: nest as deep as needed).',
  })
  steps!: CascadeStepObject[];
}

@ObjectType('CascadeResult', { description: '`$cascade` from a concept (spec operations §4.2).' })
export class CascadeResultObject {
  @Field({ description: 'The repository version walked.' })
  repoVersionUrl!: string;

  @Field(() => CascadeNodeObject, { description: 'The starting concept: the hierarchy view.' })
  root!: CascadeNodeObject;

  @Field(() => [CascadeNodeObject], {
    description: 'Every concept reached, once, in the order reached: the flat view.',
  })
  concepts!: CascadeNodeObject[];

  @Field(() => [MappingObject], { description: 'Every mapping listed, once.' })
  mappings!: MappingObject[];

  @Field(() => Int, { description: 'Concepts and mappings in the result.' })
  total!: number;

  @Field({ description: 'The walk stopped at the limit (CASCADE_MAX_RESOURCES).' })
  limitReached!: boolean;

  static from(result: CascadeResult): CascadeResultObject {
    const nodes = new Map<string, CascadeNodeObject>();
    const nodeOf = (node: CascadeNode): CascadeNodeObject => {
      let made = nodes.get(node.view.concept.id);
      if (made) return made;
      made = Object.assign(new CascadeNodeObject(), {
        concept: ConceptObject.from(node.view),
        terminal: node.terminal,
        steps: [] as CascadeStepObject[],
      });
      nodes.set(node.view.concept.id, made);
      return made;
    };
    const mappings = new Map<string, MappingObject>();
    for (const node of result.nodes.values()) {
      const made = nodeOf(node);
      made.steps = node.steps.map((step) => {
        const mapping = step.mapping ? MappingObject.of(step.mapping) : null;
        if (mapping && step.mapping) mappings.set(step.mapping.view.version.id, mapping);
        const reached = step.conceptId ? result.nodes.get(step.conceptId) : undefined;
        return Object.assign(new CascadeStepObject(), {
          mapping,
          concept: reached ? nodeOf(reached) : null,
        });
      });
    }
    const { repo } = result;
    return Object.assign(new CascadeResultObject(), {
      repoVersionUrl: `${repoUrl(repo.owner, repo.repo.kind, repo.repo.mnemonic)}${repo.version.mnemonic}/`,
      root: nodes.get(result.rootId)!,
      concepts: [...nodes.values()],
      mappings: [...mappings.values()],
      total: nodes.size + mappings.size,
      limitReached: result.limitReached,
    });
  }
}

@ObjectType('CloneOutcome', {
  description: 'What `cloneConcepts` did for one expression (spec operations §4.3).',
})
export class CloneOutcomeObject {
  @Field({ description: 'The expression, as given.' })
  expression!: string;

  @Field(() => String, {
    nullable: true,
    description: 'Why nothing was written for this expression (an error code), or null.',
  })
  code!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The error message when nothing was written, or null.',
  })
  message!: string | null;

  @Field(() => [ConceptObject], {
    description: 'The concepts created (none when all had an equivalent already).',
  })
  concepts!: ConceptObject[];

  @Field(() => [MappingObject], {
    description: 'The mappings created: from each clone to its original, and the copied ones.',
  })
  mappings!: MappingObject[];

  @Field({ description: 'The walk stopped at the limit: what lies beyond was not cloned.' })
  limitReached!: boolean;

  static list(result: CloneResult): CloneOutcomeObject[] {
    return [...result.outcomes].map(([expression, outcome]) =>
      Object.assign(new CloneOutcomeObject(), {
        expression,
        code: outcome.ok ? null : outcome.error.code,
        message: outcome.ok ? null : outcome.error.message,
        concepts: outcome.ok ? outcome.concepts.map((view) => ConceptObject.from(view)) : [],
        mappings: outcome.ok ? outcome.mappings.map((item) => MappingObject.of(item)) : [],
        limitReached: outcome.ok && outcome.limitReached,
      }),
    );
  }
}
