import type { AppError } from '../../src/errors';
import {
  mappingEnd,
  repoUrl,
  type CascadeNode,
  type CascadeResult,
  type CloneResult,
  type MappingItem,
} from '../../src/services';
import { conceptSummary } from './concept.mapper';
import { mappingUrl } from './mapping.mapper';

/**
 * The Bundle of spec operations §2.6: flat (every concept and mapping once, `total`) or
 * hierarchy (the starting concept with nested `entries`; a concept reached twice appears each
 * time, with what cascading it found under its first appearance only).
 */
export function cascadeBundle(result: CascadeResult, requestedUrl: string): object {
  const { repo, parameters } = result;
  const base = {
    resourceType: 'Bundle',
    type: 'searchset',
    requested_url: requestedUrl,
    repo_version_url: `${repoUrl(repo.owner, repo.repo.kind, repo.repo.mnemonic)}${repo.version.mnemonic}/`,
    meta: { lastUpdated: lastUpdated(result) },
    // Not in the spec: says when the walk stopped at the limit (CASCADE_MAX_RESOURCES).
    limit_reached: result.limitReached,
    limit: result.maxResources,
  };
  const hierarchy = parameters.view === 'hierarchy';
  if (hierarchy) {
    return { ...base, total: null, entry: hierarchyEntry(result) };
  }
  const entry = flatEntries(result);
  return { ...base, total: entry.length, entry };
}

function flatEntries(result: CascadeResult): object[] {
  const entries: object[] = [];
  const mappings = new Set<string>();
  for (const node of result.nodes.values()) {
    entries.push(conceptEntry(node));
    for (const step of node.steps) {
      if (!step.mapping || mappings.has(step.mapping.view.version.id)) continue;
      mappings.add(step.mapping.view.version.id);
      entries.push(mappingEntry(step.mapping, result.parameters.reverse, false));
    }
  }
  return entries;
}

function hierarchyEntry(result: CascadeResult): object {
  const shown = new Set<string>();
  const render = (node: CascadeNode): object => {
    const first = !shown.has(node.view.concept.id);
    shown.add(node.view.concept.id);
    const entries: object[] = [];
    if (first) {
      for (const step of node.steps) {
        if (step.mapping) entries.push(mappingEntry(step.mapping, result.parameters.reverse, true));
        const reached = step.conceptId ? result.nodes.get(step.conceptId) : undefined;
        if (reached) entries.push(render(reached));
      }
    }
    return { ...conceptEntry(node), entries };
  };
  return render(result.nodes.get(result.rootId)!);
}

function conceptEntry(node: CascadeNode): object {
  const summary = conceptSummary(node.view) as Record<string, unknown>;
  return {
    type: 'Concept',
    id: summary.id,
    uuid: node.view.version.id,
    url: summary.url,
    version_url: summary.version_url,
    retired: summary.retired,
    display_name: summary.display_name,
    concept_class: summary.concept_class,
    datatype: summary.datatype,
    source: summary.source,
    owner: summary.owner,
    terminal: node.terminal,
  };
}

/** A mapping entry: the end away from the concept cascaded, and what the walk reached there. */
function mappingEntry(item: MappingItem, reverse: boolean, hierarchy: boolean): object {
  const { view, ends } = item;
  const side = reverse ? 'from' : 'to';
  const end = mappingEnd(view, side, ends[side]);
  const target = {
    concept_code: end.conceptCode,
    concept_url: end.conceptUrl,
    concept_name: end.conceptNameResolved ?? end.conceptName,
    source_owner: end.sourceOwner,
    source_name: end.sourceName,
  };
  const url = mappingUrl(view);
  return {
    type: 'Mapping',
    id: view.mapping.mnemonic,
    uuid: view.version.id,
    url,
    version_url: `${url}${view.version.id}/`,
    retired: view.version.retired,
    map_type: view.version.mapType,
    sort_weight: view.version.sortWeight,
    [`${side}_concept_code`]: target.concept_code,
    [`${side}_concept_url`]: target.concept_url,
    ...Object.fromEntries(
      Object.entries(target).map(([name, value]) => [`cascade_target_${name}`, value]),
    ),
    ...(hierarchy
      ? Object.fromEntries(Object.entries(target).map(([name, value]) => [`target_${name}`, value]))
      : {}),
  };
}

/**
 * spec operations §4.3: by expression, `{status, bundle}` with the concepts and mappings created
 * (201; 200 when every concept had an equivalent already), or `{status, message}` for an
 * expression that failed and wrote nothing.
 */
export function cloneResponse(result: CloneResult, statusOf: (error: AppError) => number): object {
  const { destination } = result;
  const repoVersionUrl = `${repoUrl(destination.owner, 'source', destination.repo.mnemonic)}HEAD/`;
  return Object.fromEntries(
    [...result.outcomes].map(([expression, outcome]): [string, object] => {
      if (!outcome.ok) {
        return [expression, { status: statusOf(outcome.error), message: outcome.error.message }];
      }
      const entry = [
        ...outcome.concepts.map((view) => {
          const summary = conceptSummary(view) as Record<string, unknown>;
          const { id, type, url, version_url, retired } = summary;
          return { id, type, url, version_url, retired };
        }),
        ...outcome.mappings.map((item) => ({
          ...mappingEntry(item, false, false),
          from_concept_code: item.view.version.fromConceptCode,
        })),
      ];
      return [
        expression,
        {
          status: entry.length > 0 ? 201 : 200,
          bundle: {
            resourceType: 'Bundle',
            type: 'searchset',
            total: entry.length,
            entry,
            requested_url: expression,
            repo_version_url: repoVersionUrl,
            limit_reached: outcome.limitReached,
          },
        },
      ];
    }),
  );
}

/** The newest change among what the answer shows. */
function lastUpdated(result: CascadeResult): string {
  let newest = result.repo.version.createdAt;
  for (const node of result.nodes.values()) {
    if (node.view.version.createdAt > newest) newest = node.view.version.createdAt;
    for (const step of node.steps) {
      const at = step.mapping?.view.version.createdAt;
      if (at && at > newest) newest = at;
    }
  }
  return newest.toISOString();
}
