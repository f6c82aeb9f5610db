/**
 * The evaluation of a collection's references into an expansion (spec operations §2.2, §4.1),
 * shared by reference changes (the HEAD auto-expansion) and expansions: every function works on
 * the repositories of the caller's transaction only.
 */

import { HEAD } from '../../db/entities';
import { AppError } from '../../errors';
import {
  AUTO_EXPANSION,
  type NewReference,
  type ReferenceRow,
  type Repositories,
  type ResolvedSystem,
  type Selection,
} from '../../repositories';
import type { ServiceContext } from '../shared/context';
import { isRepoView, type RepositoryService, type RepoView } from '../content/repository.service';
import { ownerUrl, repoUrl, type RepoRef } from '../shared/urls';
import type { ExpansionParameters, SystemVersion } from './expansion-parameters';
import type { ReferenceResolver, Resolution } from './reference-resolver';
import { walkCascade } from './cascade-walk';
import { cascadeParametersOf } from './reference-input';

/** How an expansion is evaluated. */
export interface Evaluation {
  expansionId: string;
  parameters: ExpansionParameters;
  /** The repositories its references name, resolved once in its transaction before it. */
  resolved: ResolvedRepositories;
  /**
   * Store the version of every member read (a frozen collection version, an expansion made
   * once); otherwise references without a version follow their target (the HEAD auto-expansion).
   */
  pinAll: boolean;
}

/** What resolving a reference's repository depends on. */
type SystemReference = Pick<NewReference, 'system' | 'version' | 'namespace'>;

/** Resolutions by `resolutionKey`, made in the transaction before the evaluation reads them. */
export type ResolvedRepositories = Map<string, Resolution>;

/** Evaluates every reference of a collection version into an (empty) expansion. */
export async function evaluateVersion(
  r: Repositories,
  evaluation: Evaluation,
  references: ReferenceRow[],
): Promise<void> {
  const resolved = await evaluate(r, evaluation, references);
  await r.collections.recomputeMembers(evaluation.expansionId, 'c');
  await r.collections.recomputeMembers(evaluation.expansionId, 'm');
  await r.collections.finishExpansion(evaluation.expansionId, resolved);
}

/**
 * Evaluates references into an expansion's reference rows, set-based: references naming one
 * concept or mapping of the same repository version go in one statement per repository; the
 * rest (whole repositories, filters, cascades, other collections) one statement each.
 * Answers the systems it resolved (or could not).
 */
export async function evaluate(
  r: Repositories,
  evaluation: Evaluation,
  references: ReferenceRow[],
): Promise<ResolvedSystem[]> {
  const p = evaluation.parameters;
  // Every repository was resolved once, before this evaluation, in the same transaction.
  const targets = await targetsOf(references, p, async (asked) =>
    asked.map((reference) => resolutionOf(evaluation.resolved, reference)),
  );
  const systems = new Map<string, ResolvedSystem>();
  const groups = new Map<
    string,
    {
      group: Omit<Selection, 'referenceId' | 'include' | 'codes' | 'versionId' | 'filters'>;
      items: Array<{ referenceId: string; code: string; include: boolean }>;
    }
  >();
  const changeAt = new Map<string, string>();
  for (const { reference, system, resolution } of targets) {
    const label = `${system.system}${system.version ? `|${system.version}` : ''}`;
    systems.set(label, {
      system: system.system,
      version: system.version,
      url: resolution.repo ? versionUrlOf(resolution.repo) : null,
      resolved: resolution.resolved,
    });
    if (!resolution.repo) continue;
    const view = resolution.repo;
    const resource = reference.resourceType === 'Mapping' ? 'm' : 'c';
    let seq = view.version.seq;
    if (p.date) {
      const key = view.repo.id;
      if (!changeAt.has(key)) {
        const at = await r.collections.changeAt(view.repo.id, p.date);
        if (at === null) {
          throw AppError.field(
            'date',
            `'${view.repo.mnemonic}' had no content on ${p.date.toISOString()}.`,
          );
        }
        changeAt.set(key, at);
      }
      const at = changeAt.get(key)!;
      seq = seq === null || BigInt(at) < BigInt(seq) ? at : seq;
    }
    const pin = evaluation.pinAll || seq !== null;
    if (view.repo.kind === 'collection') {
      if (view.version.expansionId === null) continue;
      await r.collections.selectMembers(
        evaluation.expansionId,
        {
          referenceId: reference.id,
          include: reference.include,
          resource,
          codes: reference.code === null ? undefined : [reference.code],
          activeOnly: p.activeOnly ?? false,
          pin: evaluation.pinAll,
        },
        view.version.expansionId,
      );
      continue;
    }
    const cascade = resource === 'c' ? cascadeParametersOf(reference.cascade) : null;
    if (
      reference.code !== null &&
      reference.resourceVersion === null &&
      !reference.filter &&
      !cascade
    ) {
      const key = `${resource}:${view.repo.id}:${seq}:${pin}`;
      const entry = groups.get(key) ?? {
        group: {
          resource,
          repositoryId: view.repo.id,
          seq,
          pin,
          activeOnly: p.activeOnly ?? false,
          text: p.filter,
        },
        items: [],
      };
      entry.items.push({
        referenceId: reference.id,
        code: reference.code,
        include: reference.include,
      });
      groups.set(key, entry);
      continue;
    }
    if (reference.filter?.some((f) => f.op === 'regex')) {
      for (const f of reference.filter.filter((x) => x.op === 'regex')) {
        if (!(await r.collections.isValidRegex(f.value))) {
          throw AppError.invalid(`'${f.value}' is not a valid regular expression.`);
        }
      }
    }
    const selection: Selection = {
      referenceId: reference.id,
      include: reference.include,
      resource,
      repositoryId: view.repo.id,
      seq,
      pin,
      codes: reference.code === null ? undefined : [reference.code],
      versionId: reference.resourceVersion ?? undefined,
      filters: reference.filter ?? undefined,
      activeOnly: p.activeOnly ?? false,
      text: p.filter,
    };
    await r.collections.select(evaluation.expansionId, selection);
    if (cascade) {
      // The one cascade walk ($cascade's), from every concept the reference selected, in the
      // source and version it names; what it reaches joins the reference's rows.
      const scope = { kind: 'source' as const, repositoryId: view.repo.id, seq };
      const selected = await r.collections.objectsOf(evaluation.expansionId, [reference.id]);
      const starts = await r.cascade.conceptsById(scope, selected.c, true);
      const walk = await walkCascade(
        r.cascade,
        scope,
        starts,
        { ...cascade, includeRetired: cascade.includeRetired && !selection.activeOnly },
        [],
        null,
      );
      const startIds = new Set(starts.map((c) => c.conceptId));
      await r.collections.insertRows(evaluation.expansionId, reference.id, reference.include, [
        ...[...walk.nodes.values()]
          .filter((n) => !startIds.has(n.concept.conceptId))
          .map((n) => ({
            resource: 'c' as const,
            objectId: n.concept.conceptId,
            versionId: pin ? n.concept.versionId : null,
          })),
        ...[...walk.mappings.values()].map((m) => ({
          resource: 'm' as const,
          objectId: m.mappingId,
          versionId: pin ? m.versionId : null,
        })),
      ]);
    }
  }
  for (const { group, items } of groups.values()) {
    await r.collections.selectCodes(evaluation.expansionId, group, items);
  }
  return [...systems.values()];
}

/** A repository version an evaluation read, and the one evaluating again would read. */
export interface ResolutionChange {
  resolved: string;
  latest: string;
}

/**
 * What evaluating `references` under `p` again would resolve differently from `before` (an
 * expansion's resolutions), resolving as the caller now: each repository version URL read then
 * whose system now resolves to another version. A system read at HEAD resolves to HEAD again.
 */
export async function resolutionChanges(
  resolver: ReferenceResolver,
  ctx: ServiceContext,
  collection: Pick<RepoView, 'owner'>,
  p: ExpansionParameters,
  references: SystemReference[],
  before: ResolvedSystem[],
  within: Repositories,
): Promise<ResolutionChange[]> {
  const now = await resolveFor(resolver, ctx, collection, p, references, within);
  const targets = await targetsOf(references, p, async (asked) =>
    asked.map((reference) => resolutionOf(now, reference)),
  );
  const changes = new Map<string, string>();
  for (const { system, resolution } of targets) {
    const was = before.find((s) => s.system === system.system && s.version === system.version);
    if (!was?.url || !resolution.repo) continue;
    const latest = versionUrlOf(resolution.repo);
    if (latest !== was.url) changes.set(was.url, latest);
  }
  return [...changes].map(([resolved, latest]) => ({ resolved, latest }));
}

/**
 * Resolves, as the caller, every repository that evaluating `references` under the parameters
 * `p` reads (see `targetsOf`), once, inside the transaction that evaluates them: `within` is
 * the repositories its work received, so every statement runs on its connection.
 */
export async function resolveFor(
  resolver: ReferenceResolver,
  ctx: ServiceContext,
  collection: Pick<RepoView, 'owner'>,
  p: ExpansionParameters,
  references: SystemReference[],
  within: Repositories,
): Promise<ResolvedRepositories> {
  const resolved: ResolvedRepositories = new Map();
  if (references.length === 0) return resolved;
  await targetsOf(references, p, async (asked) => {
    const resolutions = await resolveAll(resolver, ctx, asked, collection, within);
    asked.forEach((reference, i) => resolved.set(resolutionKey(reference), resolutions[i]));
    return resolutions;
  });
  return resolved;
}

/**
 * Resolves each reference's repository (distinct ones once) as the caller, in the namespace
 * of the collection's owner unless the reference names another (spec operations §4.4).
 */
function resolveAll(
  resolver: ReferenceResolver,
  ctx: ServiceContext,
  references: SystemReference[],
  collection: Pick<RepoView, 'owner'>,
  within: Repositories,
): Promise<Resolution[]> {
  return resolver.resolveMany(
    ctx,
    references.map((reference) => ({
      url: reference.system!,
      version: reference.version,
      namespace: reference.namespace,
    })),
    ownerUrl(collection.owner),
    within,
  );
}

/** The HEAD auto-expansion, made when a collection predates it. */
export async function headExpansionId(r: Repositories, collection: RepoView): Promise<string> {
  const head =
    collection.version.mnemonic === HEAD
      ? collection.version
      : await r.repos.findVersion(collection.repo.id, HEAD);
  if (head?.expansionId) return head.expansionId;
  const id = await r.collections.insertExpansion({
    collectionId: collection.repo.id,
    versionId: head!.id,
    mnemonic: AUTO_EXPANSION,
    parameters: {},
    canonicalUrl: collection.repo.canonicalUrl,
    createdBy: head!.createdBy,
  });
  await r.collections.setDefaultExpansion(head!.id, id);
  return id;
}

/** A collection by its path, or as a service already resolved it. */
export function collectionAt(
  repositories: RepositoryService,
  ctx: ServiceContext,
  ref: RepoRef | RepoView,
): Promise<RepoView> {
  return repositories.at(ctx, isRepoView(ref) ? ref : { ...ref, kind: 'collection' });
}

function resolutionKey(reference: SystemReference): string {
  return `${reference.system}\u0000${reference.version ?? ''}\u0000${reference.namespace ?? ''}`;
}

export function resolutionOf(
  resolved: ResolvedRepositories,
  reference: SystemReference,
): Resolution {
  const resolution = resolved.get(resolutionKey(reference));
  if (!resolution) throw new Error(`'${reference.system}' was not resolved before the evaluation`);
  return resolution;
}

/**
 * The repository each reference is evaluated against under the parameters `p`, with its
 * resolution from `resolve`: first as the reference names it, then — when a system parameter
 * applies — again as the parameters name it. The same steps serve resolving and then reading
 * those resolutions in the evaluation, so the two cannot differ.
 */
async function targetsOf<R extends SystemReference>(
  references: R[],
  p: ExpansionParameters,
  resolve: (asked: SystemReference[]) => Promise<Resolution[]>,
): Promise<Array<{ reference: R; system: SystemVersion; resolution: Resolution }>> {
  const named = references
    .map((reference) => ({ reference, system: systemOf(reference, p, [reference.system!]) }))
    .filter((t): t is { reference: R; system: SystemVersion } => t.system !== null);
  const resolutions = await resolve(named.map((t) => ({ ...t.reference, ...t.system })));
  const targets = named.map((t, i) => ({ ...t, resolution: resolutions[i] }));
  if (!(p.excludeSystem || p.systemVersion || p.checkSystemVersion || p.forceSystemVersion)) {
    return targets;
  }
  // A repository also answers to its canonical URL and its own relative URL, whichever form
  // the reference used: the system parameters are applied again on all of them.
  const again = targets.map((t) => {
    const view = t.resolution.repo;
    if (!view) return { ...t, changed: false };
    const names = [
      t.reference.system!,
      repoUrl(view.owner, view.repo.kind, view.repo.mnemonic),
      ...(view.repo.canonicalUrl ? [view.repo.canonicalUrl] : []),
    ];
    const renamed = systemOf(t.reference, p, names);
    return {
      ...t,
      system: renamed ? { system: t.system.system, version: renamed.version } : null,
      changed: renamed === null || renamed.version !== t.system.version,
    };
  });
  const changed = again.filter((t) => t.system !== null && t.changed);
  const redone = await resolve(changed.map((t) => ({ ...t.reference, ...t.system! })));
  changed.forEach((t, i) => (t.resolution = redone[i]));
  return again
    .filter((t) => t.system !== null)
    .map((t) => ({ reference: t.reference, system: t.system!, resolution: t.resolution }));
}

export function systemLabel(reference: NewReference): string {
  return `${reference.system}${reference.version ? (reference.system!.startsWith('/') ? `${reference.version}/` : `|${reference.version}`) : ''}`;
}

function versionUrlOf(view: RepoView): string {
  const owner = view.owner.type === 'Organization' ? 'orgs' : 'users';
  const kind = view.repo.kind === 'source' ? 'sources' : 'collections';
  const base = `/${owner}/${view.owner.id}/${kind}/${view.repo.mnemonic}/`;
  return view.version.mnemonic === HEAD ? base : `${base}${view.version.mnemonic}/`;
}

/**
 * The system and version a reference is evaluated against under the expansion parameters
 * (spec operations §2.2), the repository answering to any of `names`; null when
 * `exclude-system` leaves it out.
 */
function systemOf(
  reference: Pick<NewReference, 'system' | 'version'>,
  p: ExpansionParameters,
  names: string[],
): SystemVersion | null {
  const system = reference.system!;
  const matches = (s: SystemVersion): boolean => names.includes(s.system);
  if (
    p.excludeSystem?.some(
      (s) => matches(s) && (s.version === null || s.version === reference.version),
    )
  ) {
    return null;
  }
  const forced = p.forceSystemVersion?.find(matches);
  if (forced) return { system, version: forced.version };
  const checked = p.checkSystemVersion?.find(matches);
  if (checked && reference.version !== null && reference.version !== checked.version) {
    throw AppError.field(
      'check-system-version',
      `The collection names version '${reference.version}' of ${system}, not '${checked.version}'.`,
    );
  }
  if (reference.version !== null) return { system, version: reference.version };
  const fallback = checked ?? p.systemVersion?.find(matches);
  return { system, version: fallback?.version ?? null };
}
