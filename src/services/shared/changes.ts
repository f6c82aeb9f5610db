import type { Repositories } from '../../repositories';
import type { RepoView } from './paths';
import { repoUrl } from './urls';

/** What a watcher of a repository is told changed (`repositoryChanged`). */
export const REPOSITORY_CHANGE_KINDS = [
  'CONCEPT_CREATED',
  'CONCEPT_UPDATED',
  'CONCEPT_RETIRED',
  'CONCEPT_REACTIVATED',
  'MAPPING_CREATED',
  'MAPPING_UPDATED',
  'MAPPING_RETIRED',
  'MAPPING_REACTIVATED',
  /**
   * Many objects at once: a bulk import batch, a `$clone`, a FHIR resource write (a code system's
   * concepts, a concept map's mappings, a value set's references).
   */
  'CONTENT_CHANGED',
  'REFERENCES_ADDED',
  'REFERENCES_REMOVED',
  'VERSION_CREATED',
  'VERSION_UPDATED',
  'VERSION_DELETED',
  'REPOSITORY_UPDATED',
  'REPOSITORY_DELETED',
] as const;

export type RepositoryChangeKind = (typeof REPOSITORY_CHANGE_KINDS)[number];

/**
 * Tells the watchers of `view`'s repository, in every process, that `actor` made a change of
 * `kind` to `url` (none: to the repository, or to many of its objects). Called inside the
 * change's transaction (`r`): the notice goes out at its commit, never for a change rolled back.
 */
export async function announceChange(
  r: Repositories,
  view: Pick<RepoView, 'repo'>,
  actor: { username: string },
  kind: RepositoryChangeKind,
  url = '',
): Promise<void> {
  await r.notifications.publish({
    topic: 'repository',
    repositoryId: view.repo.id,
    kind,
    url,
    actor: actor.username,
    at: new Date().toISOString(),
  });
}

/** The URL of a concept or mapping of a source, as REST names it (at HEAD). */
export function contentUrl(
  source: Pick<RepoView, 'repo' | 'owner'>,
  type: 'concepts' | 'mappings',
  id: string,
): string {
  return `${repoUrl(source.owner, source.repo.kind, source.repo.mnemonic)}${type}/${encodeURIComponent(id)}/`;
}
