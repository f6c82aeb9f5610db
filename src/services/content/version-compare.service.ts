import { z } from 'zod';
import { HEAD } from '../../db/entities';
import type {
  ConceptDiffDetail,
  DiffKind,
  DiffRow,
  DiffSide,
  DiffSpan,
  MappingDiffDetail,
  Repositories,
} from '../../repositories';
import { AppError } from '../../errors';
import { requireUser } from '../shared/access';
import type { ServiceContext } from '../shared/context';
import type { RepoView } from '../shared/paths';
import { parseRepoUrl, repoUrl } from '../shared/urls';
import { parseInput } from '../shared/validation';
import type { RepositoryService } from './repository.service';

/** How an object changed between two versions (OCL's `new`, `removed`, `changed_*`). */
export type ChangeKind = 'new' | 'removed' | 'retired' | 'major' | 'minor';
export const CHANGE_KINDS: readonly ChangeKind[] = ['new', 'removed', 'retired', 'major', 'minor'];

/**
 * The concepts (or mappings) of one kind that changed, by code, in code order: `new` (active in
 * the newer version, not in the older), `removed` (active in the older, absent from the newer),
 * `retired` (retired in the newer, not in the older), `major` (a different smart checksum: a
 * change of meaning), `minor` (the same smart checksum, a different standard one).
 */
export type ChangeLists = Record<ChangeKind, string[]>;

export interface ContentChanges extends ChangeLists {
  /** Active in both with the same checksums. */
  same: number;
  /** Their codes, when asked for. */
  sameCodes?: string[];
}

/** A compared version: the source at it, and its active concepts and mappings. */
export interface ComparedVersion {
  view: RepoView;
  url: string;
  concepts: number;
  mappings: number;
}

/** Two versions of one source compared: the older first (whatever order they were named in). */
export interface VersionComparison {
  older: ComparedVersion;
  newer: ComparedVersion;
  concepts: ContentChanges;
  mappings: ContentChanges;
}

/** A mapping as a changelog shows it (the newer version's; the older's for a removed one). */
export interface MappingChange {
  kind: ChangeKind;
  code: string;
  mapType: string | null;
  fromConcept: string | null;
  fromSource: string | null;
  toConcept: string | null;
  toSource: string | null;
  externalId: string | null;
  /** A changed mapping as the older version held it. */
  before: Pick<MappingChange, 'mapType' | 'toConcept' | 'toSource'> | null;
}

/** What a changelog shows of a concept version. */
export interface ConceptState {
  displayName: string | null;
  conceptClass: string | null;
  datatype: string | null;
  names: ConceptDiffDetail['names'];
  descriptions: ConceptDiffDetail['descriptions'];
}

/**
 * A concept as a changelog shows it, with the changed mappings from it. A concept that did not
 * change itself but whose mappings did has kind null (OCL's `changed_mappings_only`).
 */
export interface ConceptChange extends ConceptState {
  kind: ChangeKind | null;
  code: string;
  /** A changed concept as the older version held it. */
  before: ConceptState | null;
  mappings: MappingChange[];
}

/** OCL's `$changelog`: the comparison, then each changed concept and mapping described. */
export interface Changelog {
  comparison: VersionComparison;
  /** Changed concepts by kind (in `CHANGE_KINDS` order, then code), then unchanged ones whose mappings changed. */
  concepts: ConceptChange[];
  /** Changed mappings from no concept listed above. */
  mappings: MappingChange[];
}

const compareSchema = z.object({
  version1: z.string({ error: 'Required: the URL of a source version.' }).trim().min(1),
  version2: z.string({ error: 'Required: the URL of a source version.' }).trim().min(1),
});

/** The schema of a comparison's body, for the API reference. */
export const compareInput = { versions: compareSchema };

/**
 * OCL's `$compare` and `$changelog` of two versions of a source. Set-based on the version
 * tables: only rows that began or ended between the two change numbers are read, so comparing
 * two releases of a dictionary costs what changed between them.
 */
export class VersionComparisonService {
  constructor(
    private readonly repos: Repositories,
    private readonly repositories: RepositoryService,
  ) {}

  /** The two versions compared; `sameCodes` lists the unchanged codes too. */
  async compare(
    ctx: ServiceContext,
    input: unknown,
    options: { sameCodes?: boolean } = {},
  ): Promise<VersionComparison> {
    return (await this.compared(ctx, input, options.sameCodes === true)).comparison;
  }

  /** The comparison with each changed concept and mapping described. */
  async changelog(ctx: ServiceContext, input: unknown): Promise<Changelog> {
    const { comparison, span, c, m } = await this.compared(ctx, input, false);
    const { newer } = comparison;
    const shown = (rows: Classified[]) =>
      rows.flatMap(({ row, kind }) => [
        shownSide(row, kind).versionId,
        ...(isChange(kind) && row.before ? [row.before.versionId] : []),
      ]);
    const [conceptDetails, mappingDetails] = await Promise.all([
      this.repos.versionDiffs.conceptDetails(shown(c.classified)),
      this.repos.versionDiffs.mappingDetails(shown(m.classified)),
    ]);
    const mappingChanges = m.classified.map(({ row, kind }) => {
      const detail = mappingDetails.get(shownSide(row, kind).versionId)!;
      const was = isChange(kind) && row.before ? mappingDetails.get(row.before.versionId) : null;
      return { fromConceptId: detail.fromConceptId, change: mappingChangeOf(kind, detail, was) };
    });
    const concepts: ConceptChange[] = c.classified.map(({ row, kind }) => {
      const detail = conceptDetails.get(shownSide(row, kind).versionId)!;
      const was = isChange(kind) && row.before ? conceptDetails.get(row.before.versionId) : null;
      return {
        kind,
        code: row.code,
        ...stateOf(detail),
        before: was ? stateOf(was) : null,
        mappings: [],
      };
    });
    // Each changed mapping under the concept it maps from: a changed concept of this source,
    // else an unchanged one (listed for its mappings only), else on its own.
    const byConcept = new Map(c.classified.map(({ row }, i) => [row.objectId, concepts[i]]));
    const ownSource = repoUrl(newer.view.owner, 'source', newer.view.repo.mnemonic);
    const unchangedFrom = [
      ...new Set(
        mappingChanges
          .filter(
            ({ fromConceptId, change }) =>
              fromConceptId !== null &&
              !byConcept.has(fromConceptId) &&
              change.fromSource === ownSource,
          )
          .map(({ fromConceptId }) => fromConceptId!),
      ),
    ];
    const names = await this.repos.versionDiffs.displayNamesAt(unchangedFrom, span.to);
    const mappingsOnly = new Map<string, ConceptChange>();
    const onTheirOwn: MappingChange[] = [];
    for (const { fromConceptId, change } of mappingChanges) {
      const changed = fromConceptId !== null ? byConcept.get(fromConceptId) : undefined;
      if (changed) {
        changed.mappings.push(change);
        continue;
      }
      const unchanged = fromConceptId !== null ? names.get(fromConceptId) : undefined;
      if (!unchanged) {
        onTheirOwn.push(change);
        continue;
      }
      const entry = mappingsOnly.get(fromConceptId!) ?? {
        kind: null,
        code: unchanged.code,
        displayName: unchanged.displayName,
        conceptClass: null,
        datatype: null,
        names: [],
        descriptions: [],
        before: null,
        mappings: [],
      };
      entry.mappings.push(change);
      mappingsOnly.set(fromConceptId!, entry);
    }
    return {
      comparison,
      concepts: [...concepts, ...[...mappingsOnly.values()].sort(byCode)],
      mappings: onTheirOwn,
    };
  }

  /** The two versions compared, with what changed of each kind, classified. */
  private async compared(ctx: ServiceContext, input: unknown, sameCodes: boolean) {
    const { older, newer, span } = await this.versions(ctx, input);
    const [c, m] = await Promise.all(
      (['c', 'm'] as const).map((kind) => this.changesOf(kind, span, sameCodes)),
    );
    const comparison: VersionComparison = {
      older: { ...older, concepts: c.activeBefore, mappings: m.activeBefore },
      newer: { ...newer, concepts: c.activeAfter, mappings: m.activeAfter },
      concepts: c.changes,
      mappings: m.changes,
    };
    return { comparison, span, c, m };
  }

  /** The two versions named, older first, as the caller may read them; one source only. */
  private async versions(
    ctx: ServiceContext,
    input: unknown,
  ): Promise<{
    older: Omit<ComparedVersion, 'concepts' | 'mappings'>;
    newer: Omit<ComparedVersion, 'concepts' | 'mappings'>;
    span: DiffSpan;
  }> {
    requireUser(ctx);
    const data = parseInput(compareSchema, input);
    const [one, two] = await Promise.all(
      (['version1', 'version2'] as const).map(async (field) => {
        let ref;
        try {
          ref = parseRepoUrl(data[field], 'source');
        } catch {
          throw AppError.field(field, `'${data[field]}' is not the URL of a source version.`);
        }
        return this.repositories.get(ctx, ref);
      }),
    );
    if (one.repo.id !== two.repo.id) {
      throw AppError.field('version2', 'Compare two versions of one source.');
    }
    // HEAD (no change number) is the newest; else the earlier change number is the older.
    const later = (a: RepoView, b: RepoView) =>
      a.version.seq === null
        ? b.version.seq !== null
        : b.version.seq !== null && BigInt(a.version.seq) > BigInt(b.version.seq);
    const [older, newer] = later(one, two) ? [two, one] : [one, two];
    const from = older.version.seq ?? older.repo.headSeq;
    return {
      older: { view: older, url: urlOf(older) },
      newer: { view: newer, url: urlOf(newer) },
      span: { repositoryId: older.repo.id, from, to: newer.version.seq },
    };
  }

  private async changesOf(kind: DiffKind, span: DiffSpan, sameCodes: boolean) {
    const [rows, unchanged] = await Promise.all([
      this.repos.versionDiffs.changed(kind, span),
      sameCodes
        ? this.repos.versionDiffs.unchanged(kind, span, true)
        : this.repos.versionDiffs.unchanged(kind, span, false),
    ]);
    const lists: ChangeLists = { new: [], removed: [], retired: [], major: [], minor: [] };
    const classified: Classified[] = [];
    const sameChanged: string[] = [];
    let activeBefore = 0;
    let activeAfter = 0;
    for (const row of rows) {
      const wasActive = row.before !== null && !row.before.retired;
      const isActive = row.after !== null && !row.after.retired;
      if (wasActive) activeBefore += 1;
      if (isActive) activeAfter += 1;
      const kindOf = classify(row, wasActive, isActive);
      if (kindOf === 'same') sameChanged.push(row.code);
      else if (kindOf !== null) {
        lists[kindOf].push(row.code);
        classified.push({ row, kind: kindOf });
      }
    }
    const spanning = typeof unchanged === 'number' ? unchanged : unchanged.length;
    const changes: ContentChanges = {
      ...lists,
      same: spanning + sameChanged.length,
      ...(Array.isArray(unchanged) ? { sameCodes: [...unchanged, ...sameChanged].sort() } : {}),
    };
    // In the order a changelog lists them: by kind, then code.
    classified.sort(
      (a, b) =>
        CHANGE_KINDS.indexOf(a.kind) - CHANGE_KINDS.indexOf(b.kind) ||
        (a.row.code < b.row.code ? -1 : a.row.code > b.row.code ? 1 : 0),
    );
    return {
      changes,
      classified,
      activeBefore: spanning + activeBefore,
      activeAfter: spanning + activeAfter,
    };
  }
}

interface Classified {
  row: DiffRow;
  kind: ChangeKind;
}

/**
 * How one object changed (OCL's checksum diff): active only in the newer is new; active in the
 * older and retired in the newer is retired, absent from it removed; retired in the newer and in
 * neither's active set before is retired; active in both compares the smart checksum (major),
 * then the standard one (minor). Null: no change either version shows (retired in both).
 */
function classify(row: DiffRow, wasActive: boolean, isActive: boolean): ChangeKind | 'same' | null {
  if (isActive && !wasActive) return 'new';
  if (wasActive && !isActive) return row.after?.retired ? 'retired' : 'removed';
  if (!wasActive && !isActive) return row.after?.retired && !row.before ? 'retired' : null;
  if (row.before!.smart !== row.after!.smart) return 'major';
  if (row.before!.standard !== row.after!.standard) return 'minor';
  return 'same';
}

/** The version a changelog describes: the older one of a removed object, else the newer. */
function shownSide(row: DiffRow, kind: ChangeKind): DiffSide {
  return kind === 'removed' ? row.before! : row.after!;
}

/** Changes with a version before and after, whose older state a changelog shows. */
function isChange(kind: ChangeKind): boolean {
  return kind === 'major' || kind === 'minor';
}

function stateOf(detail: ConceptDiffDetail): ConceptState {
  return {
    displayName: detail.displayName,
    conceptClass: detail.conceptClass,
    datatype: detail.datatype,
    names: detail.names,
    descriptions: detail.descriptions,
  };
}

function mappingChangeOf(
  kind: ChangeKind,
  detail: MappingDiffDetail,
  was: MappingDiffDetail | null | undefined,
): MappingChange {
  return {
    kind,
    code: detail.code,
    mapType: detail.mapType,
    fromConcept: detail.fromConceptCode,
    fromSource: detail.fromSourceUrl,
    toConcept: detail.toConceptCode,
    toSource: detail.toSourceUrl,
    externalId: detail.externalId,
    before: was
      ? { mapType: was.mapType, toConcept: was.toConceptCode, toSource: was.toSourceUrl }
      : null,
  };
}

function urlOf(view: RepoView): string {
  const { owner, repo, version } = view;
  return version.mnemonic === HEAD
    ? repoUrl(owner, 'source', repo.mnemonic)
    : repoUrl(owner, 'source', repo.mnemonic, version.mnemonic);
}

function byCode(a: { code: string }, b: { code: string }): number {
  return a.code < b.code ? -1 : a.code > b.code ? 1 : 0;
}
