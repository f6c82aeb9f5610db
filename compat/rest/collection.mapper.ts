import { HEAD } from '../../src/db/entities';
import {
  repoUrl,
  type AddedReference,
  type ExpansionCounts,
  type ExpansionView,
  type ReferenceView,
} from '../../src/services';

/** A collection reference (spec operations §2.4 fields, OCL's reference JSON). */
export function referenceJson({ collection, reference: r, result }: ReferenceView): object {
  return {
    type: 'Reference',
    id: Number(r.id),
    expression: r.expression,
    reference_type: r.resourceType === 'Mapping' ? 'mappings' : 'concepts',
    resource_type: r.resourceType,
    include: r.include,
    include_exclude: r.include ? 'Include' : 'Exclude',
    system: r.system,
    version: r.version,
    code: r.code,
    resource_version: r.resourceVersion,
    filter: r.filter,
    cascade: r.cascade,
    namespace: r.namespace,
    display: r.display,
    // Static: always the same content (a repository version or a resource version is named).
    static: r.version !== null || r.resourceVersion !== null,
    url: `${repoUrl(collection.owner, 'collection', collection.repo.mnemonic)}references/${r.id}/`,
    created_at: r.createdAt,
    created_by: r.createdBy,
    ...(result
      ? {
          last_resolved_at: result.lastResolvedAt,
          concepts: result.concepts,
          mappings: result.mappings,
        }
      : {}),
  };
}

/** One line of an add's answer (OCL `{added, expression, message}`). */
export function addedJson(result: AddedReference): object {
  return {
    added: result.added,
    expression: result.expression,
    message: result.message,
    ...(result.reference ? { id: Number(result.reference.id) } : {}),
  };
}

/** spec operations §2.1. */
export function expansionJson(
  { collection, expansion: e }: ExpansionView,
  options: { summary?: ExpansionCounts; verbose?: boolean } = {},
): object {
  const at =
    e.versionMnemonic === HEAD
      ? repoUrl(collection.owner, 'collection', collection.repo.mnemonic, HEAD)
      : repoUrl(collection.owner, 'collection', collection.repo.mnemonic, e.versionMnemonic);
  return {
    type: 'Expansion',
    id: Number(e.id),
    mnemonic: e.mnemonic,
    parameters: e.parameters,
    canonical_url: e.canonicalUrl,
    url: `${at}expansions/${encodeURIComponent(e.mnemonic)}/`,
    collection_version: e.versionMnemonic,
    collection_version_url: at,
    is_processing: e.isProcessing,
    created_on: e.createdAt,
    created_by: e.createdBy,
    updated_on: e.updatedAt,
    ...(options.summary
      ? {
          summary: {
            active_concepts: options.summary.activeConcepts,
            active_mappings: options.summary.activeMappings,
          },
        }
      : {}),
    ...(options.verbose
      ? {
          resolved_repo_versions: e.resolved.filter((s) => s.resolved).map((s) => s.url),
          unresolved_repo_versions: e.resolved
            .filter((s) => !s.resolved)
            .map((s) => ({ system: s.system, version: s.version })),
        }
      : {}),
  };
}
