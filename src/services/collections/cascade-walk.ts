import type { CascadeRepository, CascadeScope, WalkConcept, WalkMapping } from '../../repositories';
import type { CascadeParameters, MapTypeFilter } from './cascade-parameters';

/** What cascading a concept found: a mapping listed, a concept reached, or both. */
export interface WalkStep {
  mapping?: WalkMapping;
  conceptId?: string;
}

export interface WalkNode {
  concept: WalkConcept;
  /** true: cascaded, nothing further; false: cascaded, with results; null: not cascaded. */
  terminal: boolean | null;
  steps: WalkStep[];
}

/** Every concept reached (the starting ones first) and every mapping listed, in order. */
export interface Walk {
  nodes: Map<string, WalkNode>;
  mappings: Map<string, WalkMapping>;
  /** The walk stopped at its limit on resources. */
  limitReached: boolean;
}

function allows(filter: MapTypeFilter, mapType: string | null): boolean {
  if (filter === '*') return true;
  if (filter === 'none') return false;
  const type = (mapType ?? '').toLowerCase();
  return filter.some((t) => t.toLowerCase() === type);
}

/**
 * The one cascade walk (spec operations §4.2), used by `$cascade`, by references with `cascade`
 * and so by expansions: level by level from the starting concepts, through their mappings (to
 * target concepts of the same scope) and their hierarchy, never cascading a concept twice, until
 * `cascadeLevels` or `limit` resources (concepts and mappings; null: no limit); a concept one of
 * the `omit` scopes already holds (itself or an equivalent) is not reached. `reader` is the
 * caller's repository, so that a walk inside a transaction uses only its connection.
 */
export async function walkCascade(
  reader: CascadeRepository,
  scope: CascadeScope,
  starts: readonly WalkConcept[],
  p: CascadeParameters,
  omit: readonly CascadeScope[],
  limit: number | null,
): Promise<Walk> {
  const nodes = new Map<string, WalkNode>();
  const mappings = new Map<string, WalkMapping>();
  let limitReached = false;
  const take = (): boolean => {
    if (limit !== null && nodes.size + mappings.size >= limit) {
      limitReached = true;
      return false;
    }
    return true;
  };
  const add = (concept: WalkConcept): boolean => {
    if (nodes.has(concept.conceptId)) return true;
    if (!take()) return false;
    nodes.set(concept.conceptId, { concept, terminal: null, steps: [] });
    return true;
  };
  const follows = (mapType: string | null): boolean =>
    p.mapTypes === null
      ? !p.excludeMapTypes.some((t) => t.toLowerCase() === (mapType ?? '').toLowerCase())
      : allows(p.mapTypes, mapType);
  const lists = (mapType: string | null): boolean =>
    p.returnMapTypes === null ? follows(mapType) : allows(p.returnMapTypes, mapType);
  const toConcepts = p.method === 'sourcetoconcepts';

  let level = starts.filter(add);
  for (let depth = 0; level.length > 0 && !limitReached; depth += 1) {
    if (p.cascadeLevels !== '*' && depth > p.cascadeLevels) break;
    const ids = level.map((c) => c.conceptId);
    const found = p.cascadeMappings
      ? await reader.mappingsOf(scope, ids, p.reverse, p.includeRetired)
      : [];
    const followed = new Set(toConcepts ? found.filter((m) => follows(m.mapType)) : []);
    const targetOf = (m: WalkMapping): string | null =>
      p.reverse ? m.fromConceptId : m.toConceptId;
    const targetIds = [...followed].map(targetOf).filter((id): id is string => id !== null);
    const [targets, hierarchy] = await Promise.all([
      reader.conceptsById(scope, [...new Set(targetIds)], p.includeRetired),
      p.cascadeHierarchy && toConcepts
        ? reader.hierarchyOf(scope, level, p.reverse, p.includeRetired)
        : Promise.resolve([]),
    ]);
    const fresh = [...targets, ...hierarchy.map((h) => h.to)]
      .map((c) => c.conceptId)
      .filter((id) => !nodes.has(id));
    // omitIfExistsIn (and, for $clone, the destination too): what any of them holds.
    const omitted = new Set<string>();
    for (const scope of omit) {
      const held = await reader.alreadyIn(scope, [...new Set(fresh)], p.equivalencyMapTypes);
      for (const id of held) omitted.add(id);
    }
    const targetById = new Map(targets.map((c) => [c.conceptId, c]));
    const next: WalkConcept[] = [];
    const reach = (concept: WalkConcept | undefined): string | undefined => {
      if (!concept || omitted.has(concept.conceptId)) return undefined;
      const isNew = !nodes.has(concept.conceptId);
      if (!add(concept)) return undefined;
      if (isNew) next.push(concept);
      return concept.conceptId;
    };
    const side = p.reverse ? 'toConceptId' : 'fromConceptId';
    for (const concept of level) {
      const node = nodes.get(concept.conceptId)!;
      for (const m of found) {
        if (m[side] !== concept.conceptId || limitReached) continue;
        const step: WalkStep = {};
        if (lists(m.mapType) && (mappings.has(m.versionId) || take())) {
          mappings.set(m.versionId, m);
          step.mapping = m;
        }
        if (followed.has(m)) {
          const target = targetOf(m);
          step.conceptId = reach(target === null ? undefined : targetById.get(target));
        }
        if (step.mapping || step.conceptId) node.steps.push(step);
      }
      for (const h of hierarchy) {
        if (h.fromConceptId !== concept.conceptId || limitReached) continue;
        const conceptId = reach(h.to);
        if (conceptId) node.steps.push({ conceptId });
      }
      node.terminal = limitReached ? null : node.steps.length === 0;
    }
    level = next;
  }
  return { nodes, mappings, limitReached };
}
