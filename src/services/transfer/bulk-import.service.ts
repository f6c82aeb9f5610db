import crypto from 'node:crypto';
import { setImmediate } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import type { ConceptVersionEntity, MappingVersionEntity } from '../../db/entities';
import { AppError, isAppError } from '../../errors';
import type { TaskView } from '../../jobs';
import type { ImportFormat, Repositories } from '../../repositories';
import { requireUser } from '../shared/access';
import { announceChange } from '../shared/changes';
import type { CollectionReferences } from '../collections/references';
import {
  conceptContentOf,
  type ConceptContent,
  type ConceptService,
} from '../content/concept.service';
import type { ServiceContext } from '../shared/context';
import { camelKeys, csvLines, jsonLines, type ImportLine, type LineType } from './import-lines';
import {
  mappingContentOf,
  mappingVersionRow,
  type EndCache,
  type MappingContent,
  type MappingService,
} from '../content/mapping.service';
import type { OrgService } from '../accounts/org.service';
import type { RepositoryService, RepoView } from '../content/repository.service';
import type { TaskService } from '../community/task.service';
import type { OwnerRef, RepoRef } from '../shared/urls';
import type { UserService } from '../accounts/user.service';

export const BULK_IMPORT_TASK = 'bulk-import';

/** What the queued task carries: the import whose file and settings the database holds. */
export interface BulkImportJob {
  importId: string;
}

/** How each line ended (OCL's report keys). */
export type LineOutcome =
  | 'created'
  | 'updated'
  | 'unchanged'
  | 'invalid'
  | 'exists'
  | 'failed'
  | 'deleted'
  | 'not_found'
  | 'permission_denied';

export interface LineFailure {
  line: number;
  type: string | null;
  id: string | null;
  outcome: LineOutcome;
  reason: string;
}

/** An import's report (OCL's keys), growing as batches commit. */
export interface ImportReport extends Record<LineOutcome, number> {
  total: number;
  processed: number;
  elapsed_seconds: number;
  /** Every line that was not created, updated, deleted or unchanged, with why. */
  failures: LineFailure[];
  /** The user who cancelled the import, when one did (lines after that were not read). */
  cancelled_by: string | null;
}

export interface StartImport {
  /** The file (JSON lines or CSV); or `fileUrl` where the administrator allows it. */
  content?: Buffer;
  fileUrl?: string;
  /** By content when absent: JSON lines when the first character is `{`, CSV otherwise. */
  format?: ImportFormat;
  /** Lines naming existing content update it (default); false: they are reported `exists`. */
  updateIfExists?: boolean;
  /** A named queue runs one import of its user at a time (OCL's `[:queue/]`). */
  queue?: string;
}

export interface BulkImportOptions {
  /** The largest file accepted, in bytes. */
  maxBytes: number;
  /** Hosts `file_url` may name; empty: `file_url` is refused. */
  fileUrlHosts: string[];
}

/** Lines of one type written by one statement per table, in one transaction. */
export const BATCH_SIZE = 2000;
/** The most failures a report lists (it counts all of them). */
const MAX_FAILURES_LISTED = 10_000;
/**
 * Concepts (or mappings) an import creates before it refreshes their tables' planner statistics,
 * and again each time it has created 4 times as many.
 */
const ANALYZE_FIRST = 1000;
/** Lines drafted between two turns of the event loop (the batch being written goes on). */
const YIELD_EVERY = 25;
/** How often a running import saves its report (and its task's progress). */
const SAVE_EVERY_MS = 1000;

const OUTCOME_OF_ERROR: Record<string, LineOutcome> = {
  INVALID: 'invalid',
  NOT_FOUND: 'not_found',
  FORBIDDEN: 'permission_denied',
  UNAUTHENTICATED: 'permission_denied',
  UNCHANGED: 'unchanged',
  CONFLICT: 'exists',
  NOT_ALLOWED: 'invalid',
};

type Line = Extract<ImportLine, { fields: unknown }>;

/**
 * Bulk imports (OCL's `/importers/bulk-import/`): a file of JSON lines or CSV, run as a
 * background task as its uploader. Every line is checked by the same service rules as the API;
 * concepts and mappings are written set-based, a batch per transaction, so a batch lands whole
 * or not at all, and an import that stops can simply be run again (what landed is `unchanged`).
 */
export class BulkImportService {
  constructor(
    private readonly repos: Repositories,
    private readonly tasks: TaskService,
    private readonly orgs: OrgService,
    private readonly users: UserService,
    private readonly repositories: RepositoryService,
    private readonly concepts: ConceptService,
    private readonly mappings: MappingService,
    private readonly references: CollectionReferences,
    readonly options: BulkImportOptions,
  ) {}

  /** Stores the file and queues its import as the caller: the task (PENDING). */
  async start(ctx: ServiceContext, input: StartImport): Promise<TaskView> {
    const actor = requireUser(ctx);
    const queue = input.queue ?? 'default';
    if (!/^[\w.-]{1,50}$/.test(queue)) {
      throw AppError.field('queue', 'A queue name is letters, digits, _ . or - (at most 50).');
    }
    let content = input.content;
    if (input.fileUrl !== undefined) {
      if (content?.length) throw AppError.invalid('Send either a file or file_url, not both.');
      content = await this.download(input.fileUrl);
    }
    if (content && content.length > this.options.maxBytes) {
      throw AppError.field('file', `The file is larger than ${this.options.maxBytes} bytes.`);
    }
    const text = content?.toString('utf8') ?? '';
    if (text.trim() === '') {
      throw AppError.field('file', 'The import is empty: send JSON lines or CSV.');
    }
    if (text.includes('\u0000')) {
      throw AppError.field('file', 'The file holds a NUL character: it is not JSON lines or CSV.');
    }
    const format = input.format ?? (text.trimStart().startsWith('{') ? 'jsonl' : 'csv');
    // Each new import drops what ended ones left behind (killed imports' files, old records).
    await this.repos.bulkImports.pruneEnded();
    // Checked and recorded under the queue's lock: of parallel starts in one queue, one wins.
    const importId = await this.repos.transaction(async (repos) => {
      if (queue !== 'default') {
        await repos.lockNamed(`bulk-import-queue:${actor.username}:${queue}`);
        if (await repos.bulkImports.activeInQueue(queue, actor.username)) {
          throw new AppError('CONFLICT', 'Already Queued');
        }
      }
      return repos.bulkImports.insert({
        queue,
        format,
        updateIfExists: input.updateIfExists ?? true,
        content: text,
        createdBy: actor.username,
      });
    });
    let task: TaskView;
    try {
      task = await this.tasks.enqueue(ctx, BULK_IMPORT_TASK, { importId } satisfies BulkImportJob, {
        summary: `Bulk import (${format}, queue ${queue})`,
      });
    } catch (error) {
      // Never queued: it must not hold its queue.
      await this.repos.bulkImports.saveReport(importId, null, true);
      throw error;
    }
    await this.repos.bulkImports.setTask(importId, task.id);
    return task;
  }

  /** An import's task and its report so far (null before its first batch). */
  async status(
    ctx: ServiceContext,
    taskId: string,
  ): Promise<{ task: TaskView; report: ImportReport | null }> {
    const task = await this.tasks.get(ctx, taskId);
    const record = await this.repos.bulkImports.findByTask(task.id);
    if (!record) throw AppError.notFound(`Bulk import task '${taskId}'`);
    return { task, report: (record.report as ImportReport | null) ?? null };
  }

  /**
   * Cancels an import (its creator or a superuser): a queued one never starts, a running one
   * stops after the batch it is writing; what committed stays. A finished one is a 400.
   */
  async cancel(ctx: ServiceContext, taskId: string): Promise<TaskView> {
    const actor = requireUser(ctx);
    const { task } = await this.status(ctx, taskId);
    if (task.state === 'SUCCESS' || task.state === 'FAILURE') {
      throw AppError.invalid(`The import has already ended (${task.state}).`);
    }
    const record = await this.repos.bulkImports.findByTask(task.id);
    await this.repos.bulkImports.cancel(record!.id, actor.username);
    return task;
  }

  /** Runs an import (the task's handler), as its uploader. */
  async run(
    ctx: ServiceContext,
    job: BulkImportJob,
    progress: (done: number, total: number | null, message?: string) => Promise<void>,
  ): Promise<ImportReport> {
    const started = Date.now();
    const record = await this.repos.bulkImports.find(job.importId);
    const text = await this.repos.bulkImports.content(job.importId);
    if (!record || text === null) throw AppError.notFound('The import file');
    const { total, lines } = record.format === 'csv' ? csvLines(text) : jsonLines(text);
    const report = emptyReport(total);
    let saved = Date.now();
    const save = async (final: boolean): Promise<void> => {
      report.elapsed_seconds = Math.round((Date.now() - started) / 10) / 100;
      await this.repos.bulkImports.saveReport(record.id, report, final);
      saved = Date.now();
    };
    const batches = batchesOf(lines);
    const prepare = (batch: ImportLine[]): Promise<Writer> =>
      this.prepareBatch(ctx, batch, record.updateIfExists, report);
    try {
      let ahead: Promise<Writer> | null = null;
      const analyzeAt = { Concept: ANALYZE_FIRST, Mapping: ANALYZE_FIRST };
      const created = { Concept: 0, Mapping: 0 };
      for (let batch = batches.next(); !batch.done;) {
        const cancelledBy = await this.repos.bulkImports.cancelledBy(record.id);
        if (cancelledBy) {
          report.cancelled_by = cancelledBy;
          break;
        }
        const write: Writer = await (ahead ?? prepare(batch.value));
        const writing = write();
        // The next batch is read and checked while this one is written, when nothing this one
        // writes can change how it reads (server and database work at once).
        const next = batches.next();
        ahead = !next.done && independent(batch.value, next.value) ? prepare(next.value) : null;
        const createdBefore = report.created;
        await writing;
        const kind = contentKindOf(batch.value);
        if (kind) {
          created[kind] += report.created - createdBefore;
          if (created[kind] >= analyzeAt[kind]) {
            await this.repos.bulkImports.analyzeContent(kind);
            analyzeAt[kind] = 4 * created[kind];
          }
        }
        report.processed += batch.value.length;
        batch = next;
        if (Date.now() - saved >= SAVE_EVERY_MS) {
          await save(false);
          await progress(
            report.processed,
            report.total,
            `${report.processed} of ${report.total} lines`,
          );
        }
      }
    } finally {
      await save(true);
    }
    await progress(report.processed, report.total, `${report.processed} of ${report.total} lines`);
    if (report.cancelled_by) {
      throw AppError.invalid(
        `Cancelled by ${report.cancelled_by} after ${report.processed} of ${report.total} lines.`,
      );
    }
    return report;
  }

  /**
   * A batch checked and drafted (access, validation, content: no writes), as the work that
   * writes it; never fails (a batch that fails as a whole fails every one of its lines).
   */
  private async prepareBatch(
    ctx: ServiceContext,
    batch: ImportLine[],
    updateIfExists: boolean,
    report: ImportReport,
  ): Promise<Writer> {
    const first = batch[0];
    if (!('fields' in first)) {
      return async () => record(report, first, null, 'invalid', first.problem);
    }
    const lines = batch as Line[];
    const failAll = (error: unknown): void => {
      const [outcome, reason] = outcomeOf(error);
      if (outcome === 'failed') ctx.log.error({ err: error }, 'bulk import batch failed');
      for (const line of lines) record(report, line, idOf(line), outcome, reason);
    };
    const guarded =
      (write: Writer): Writer =>
      () =>
        write().catch(failAll);
    try {
      if (first.type === 'Concept') {
        return guarded(
          await this.contentBatch(ctx, lines, updateIfExists, report, this.conceptKind),
        );
      }
      if (first.type === 'Mapping') {
        return guarded(
          await this.contentBatch(ctx, lines, updateIfExists, report, this.mappingKind),
        );
      }
      return guarded(() => this.otherLine(ctx, first, updateIfExists, report));
    } catch (error) {
      return async () => failAll(error);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Concepts and mappings: a batch of one source, set-based

  /**
   * A batch of concepts or mappings drafted (the API's validation, checksums and search text of
   * each line's content, no writes), as the work that writes it in one transaction.
   */
  private async contentBatch<C extends Content, V extends ContentVersion>(
    ctx: ServiceContext,
    lines: Line[],
    updateIfExists: boolean,
    report: ImportReport,
    kindOf: KindMaker<C, V>,
  ): Promise<Writer> {
    const source = await this.concepts.writableSource(ctx, sourceRefOf(lines[0].fields));
    const actor = requireUser(ctx);
    const kind = kindOf(ctx, source, lines, actor.username);
    const pending: Outcome[] = [];
    const drafts: Array<Draft<C, V>> = [];
    for (const [index, line] of lines.entries()) {
      // Lets the write of the batch before this one go on meanwhile (its answers wait otherwise).
      if (index % YIELD_EVERY === 0) await setImmediate();
      try {
        if (line.action === 'DELETE') {
          drafts.push({ line, ...kind.deleted(line), content: null, row: null });
          continue;
        }
        const draft = await kind.draft(line);
        const object = { id: '', mnemonic: draft.id ?? '' };
        const row = kind.versionRow(object, draft.content, '', draft.comment);
        drafts.push({ line, ...draft, row });
      } catch (error) {
        pending.push([line, idOf(line), ...outcomeOf(error)]);
      }
    }
    return async () => {
      recordAll(report, pending);
      if (drafts.length === 0) return;
      recordAll(
        report,
        await this.repos.transaction(async (repos) => {
          const outcomes = await this.writeContent(repos, kind, source, drafts, updateIfExists);
          if (outcomes.some(([, , outcome]) => WRITTEN.has(outcome))) {
            await announceChange(repos, source, actor, 'CONTENT_CHANGED');
          }
          return outcomes;
        }),
      );
    };
  }

  /** A drafted batch written under the source's lock: each line's outcome. */
  private async writeContent<C extends Content, V extends ContentVersion>(
    repos: Repositories,
    kind: ContentKind<C, V>,
    source: RepoView,
    drafts: Array<Draft<C, V>>,
    updateIfExists: boolean,
  ): Promise<Outcome[]> {
    await repos.bulkImports.deferSearchIndexing();
    const seq = await repos.repos.nextChange(source.repo.id);
    const found = await kind.lookup(repos, drafts);
    const result: Outcome[] = [];
    const ended: string[] = [];
    const versions: Array<Partial<V>> = [];
    const fresh: Array<Draft<C, V>> = [];
    drafts.forEach((draft, index) => {
      const { line } = draft;
      const existing = found.existing(draft, index);
      const decided = decide(line.action, existing !== undefined, updateIfExists);
      if (decided !== 'write') {
        result.push([line, draft.id ?? null, decided, reasonOf(decided, kind.type, draft.id)]);
        return;
      }
      const clash = found.clash(draft, index, existing);
      if (clash !== undefined) {
        result.push([line, draft.id ?? null, 'invalid', clash]);
        return;
      }
      if (!existing) {
        fresh.push(draft);
        return;
      }
      if (line.action === 'DELETE' && existing.retired) {
        result.push([line, existing.mnemonic, 'unchanged', null]);
        return;
      }
      const objectId = kind.objectIdOf(existing);
      const row =
        draft.row && draft.id !== undefined
          ? kind.finish(draft.row, objectId, seq, draft.content!)
          : kind.versionRow(
              { id: objectId, mnemonic: existing.mnemonic },
              draft.content ?? { ...kind.contentOf(existing), retired: true },
              seq,
              draft.comment,
            );
      if (row.checksumStandard === existing.checksumStandard) {
        result.push([line, existing.mnemonic, 'unchanged', null]);
        return;
      }
      ended.push(objectId);
      versions.push(row);
      result.push([
        line,
        existing.mnemonic,
        line.action === 'DELETE' ? 'deleted' : 'updated',
        null,
      ]);
    });
    result.push(...(await this.insertNew(repos, kind, source, seq, fresh, versions)));
    await kind.store(repos).endCurrentOf(ended, seq);
    await kind.store(repos).insertVersions(versions);
    return result;
  }

  /**
   * New concepts or mappings of a batch, ids and external ids by the source's schemes where none
   * is given; their version rows join `versions`.
   */
  private async insertNew<C extends Content, V extends ContentVersion>(
    repos: Repositories,
    kind: ContentKind<C, V>,
    source: RepoView,
    seq: string,
    fresh: Array<Draft<C, V>>,
    versions: Array<Partial<V>>,
  ): Promise<Outcome[]> {
    if (fresh.length === 0) return [];
    const [idScheme, idFrom] = kind.autoid.id;
    const nextId = await counter(
      idScheme,
      idFrom,
      fresh.some((f) => f.id === undefined),
      (from) => kind.nextNumericId(repos, 'mnemonic', from),
    );
    const [externalScheme, externalFrom] = kind.autoid.externalId;
    const nextExternal = await counter(
      externalScheme,
      externalFrom,
      fresh.some((f) => f.content!.externalId === null),
      (from) => kind.nextNumericId(repos, 'external_id', from),
    );
    const items = fresh.map((draft) => {
      let content = kind.forNew(draft.content!);
      if (content.externalId === null && nextExternal) {
        content = { ...content, externalId: nextExternal() };
      }
      return { draft, id: draft.id ?? nextId!(), content };
    });
    const ids = await kind.store(repos).insertObjects(
      items.map((item) => ({
        repositoryId: source.repo.id,
        mnemonic: item.id,
        createdBy: kind.username,
      })),
    );
    return items.map(({ draft, id, content }): Outcome => {
      const objectId = ids.get(id)!;
      // The drafted row holds when nothing was assigned since (ids, external ids, item ids).
      versions.push(
        draft.id !== undefined && content === draft.content
          ? kind.finish(draft.row!, objectId, seq, content)
          : kind.versionRow({ id: objectId, mnemonic: id }, content, seq, draft.comment),
      );
      return [draft.line, id, 'created', null];
    });
  }

  /** Concept lines: parents may name concepts of the same batch. */
  private readonly conceptKind: KindMaker<ConceptContent, ConceptVersionEntity> = (
    _ctx,
    source,
    lines,
    username,
  ) => {
    const known = new Set(lines.map(idOf).filter((id): id is string => id !== null));
    const settings = source.repo.settings;
    return {
      type: 'Concept',
      username,
      autoid: {
        id: [settings.autoidConceptMnemonic, settings.autoidConceptMnemonicStartFrom],
        externalId: [settings.autoidConceptExternalId, settings.autoidConceptExternalIdStartFrom],
      },
      store: (repos) => ({
        insertObjects: (rows) => repos.concepts.insertConcepts(rows),
        insertVersions: (rows) => repos.concepts.insertVersions(rows),
        endCurrentOf: (ids, seq) => repos.concepts.endCurrentOf(ids, seq),
      }),
      draft: (line) =>
        this.concepts.draft(source, camelKeys(line.fields), { assignItemIds: false, known }),
      deleted: (line) => ({ id: idOf(line) ?? undefined, comment: 'Concept was retired' }),
      versionRow: (object, content, seq, comment) =>
        this.concepts.versionRow(source, object as never, content, seq, username, comment),
      finish: (row, conceptId, seq) => Object.assign(row, { conceptId, validFromSeq: seq }),
      forNew: (content) => this.concepts.withItemIds(source, content),
      contentOf: conceptContentOf,
      objectIdOf: (version) => version.conceptId,
      nextNumericId: (repos, column, from) =>
        repos.concepts.nextNumericId(source.repo.id, column, from),
      lookup: async (repos, drafts) => {
        const ids = drafts.flatMap((d) => (d.id !== undefined ? [d.id] : []));
        const current = new Map(
          (await repos.concepts.currentByMnemonics(source.repo.id, ids)).map((v) => [
            v.mnemonic,
            v,
          ]),
        );
        return {
          existing: (draft) => (draft.id !== undefined ? current.get(draft.id) : undefined),
          clash: () => undefined,
        };
      },
    };
  };

  /**
   * Mapping lines: ends resolved as the API resolves them (sources while drafting, concepts in
   * the write, where concepts of earlier batches have landed); one active mapping per map type
   * and ends (spec core §2.7), in the source and in the batch.
   */
  private readonly mappingKind: KindMaker<MappingContent, MappingVersionEntity> = (
    ctx,
    source,
    _lines,
    username,
  ) => {
    const cache: EndCache = new Map();
    const settings = source.repo.settings;
    return {
      type: 'Mapping',
      username,
      autoid: {
        id: [
          settings.autoidMappingMnemonic ?? 'sequential',
          settings.autoidMappingMnemonicStartFrom,
        ],
        externalId: [settings.autoidMappingExternalId, settings.autoidMappingExternalIdStartFrom],
      },
      store: (repos) => ({
        insertObjects: (rows) => repos.mappings.insertMappings(rows),
        insertVersions: (rows) => repos.mappings.insertVersions(rows),
        endCurrentOf: (ids, seq) => repos.mappings.endCurrentOf(ids, seq),
      }),
      draft: (line) => this.mappings.draft(ctx, source, camelKeys(line.fields), cache),
      deleted: (line) => {
        const id = idOf(line);
        if (id === null) throw AppError.invalid('A DELETE line names the mapping by its id.');
        return { id, comment: 'Mapping was retired' };
      },
      versionRow: (object, content, seq, comment) =>
        mappingVersionRow(source, object as never, content, seq, username, comment),
      finish: (row, mappingId, seq, content) =>
        Object.assign(row, {
          mappingId,
          validFromSeq: seq,
          fromConceptId: content.from.conceptId,
          toConceptId: content.to.conceptId,
        }),
      forNew: (content) => content,
      contentOf: mappingContentOf,
      objectIdOf: (version) => version.mappingId,
      nextNumericId: (repos, column, from) =>
        repos.mappings.nextNumericId(source.repo.id, from, column),
      lookup: async (repos, drafts) => {
        await this.mappings.resolveEndConcepts(
          repos,
          drafts.flatMap((d) => (d.content ? [d.content] : [])),
        );
        const byId = await repos.mappings.currentByMnemonics(
          source.repo.id,
          drafts.flatMap((d) => (d.id !== undefined ? [d.id] : [])),
        );
        const duplicates = await repos.mappings.duplicatesOf(
          source.repo.id,
          drafts.map((d) => endsKey(d.content)),
        );
        const mine = new Map(byId.map((v) => [v.mnemonic, v]));
        const current = new Map(
          (
            await repos.mappings.currentVersionsOf([...duplicates.values()].map((d) => d.mappingId))
          ).map((v) => [v.mappingId, v]),
        );
        const seen = new Map<string, string>();
        return {
          // Without an id, a mapping with the same ends and map type is the one the line means.
          existing: (draft, index) => {
            const duplicate = duplicates.get(index);
            if (draft.id !== undefined) return mine.get(draft.id);
            return duplicate ? current.get(duplicate.mappingId) : undefined;
          },
          clash: (draft, index, existing) => {
            if (!draft.content || draft.content.retired) return undefined;
            const key = JSON.stringify(endsKey(draft.content));
            const duplicate = duplicates.get(index);
            const clash =
              duplicate && duplicate.mappingId !== existing?.mappingId
                ? duplicate.mnemonic
                : seen.get(key);
            if (clash !== undefined) {
              return `Mapping '${clash}' already maps these ends with this map type; map_type, from concept, to source and to concept code must be unique.`;
            }
            seen.set(key, draft.id ?? `line ${draft.line.line}`);
            return undefined;
          },
        };
      },
    };
  };

  // ------------------------------------------------------------------------------------------
  // Other lines: one at a time through the services (few per file)

  private async otherLine(
    ctx: ServiceContext,
    line: Line,
    updateIfExists: boolean,
    report: ImportReport,
  ): Promise<void> {
    const id = idOf(line);
    const stored = await this.stored(ctx, line);
    const decided =
      line.type === 'Reference' ? 'write' : decide(line.action, stored !== null, updateIfExists);
    if (decided !== 'write') {
      record(report, line, id, decided, reasonOf(decided, line.type, id ?? undefined));
      return;
    }
    // No checksums for these: a line whose every field equals what is stored changes nothing.
    if (stored && line.action !== 'DELETE' && sameAsStored(line.fields, stored)) {
      record(report, line, id, 'unchanged', null);
      return;
    }
    record(report, line, id, await this.write(ctx, line, stored !== null), null);
  }

  /** What the line names as stored (as the caller may see it), or null. */
  private async stored(ctx: ServiceContext, line: Line): Promise<object | null> {
    const f = line.fields;
    const id = idOf(line);
    switch (line.type) {
      case 'Organization':
        return id === null ? null : this.repos.orgs.findByMnemonic(id);
      case 'User':
        return id === null ? null : this.repos.users.findByUsername(id);
      case 'Source':
      case 'Collection':
        return (
          (await this.found(() => this.repositories.get(ctx, repoRefOf(f, kindOf(line.type), id))))
            ?.repo ?? null
        );
      case 'Source Version':
      case 'Collection Version':
        return (
          (
            await this.found(() =>
              this.repositories.get(ctx, { ...repoRefOf(f, kindOf(line.type)), version: id ?? '' }),
            )
          )?.version ?? null
        );
      case 'Reference':
      case 'Concept':
      case 'Mapping':
        return null;
    }
  }

  private async found<T>(read: () => Promise<T>): Promise<T | null> {
    try {
      return await read();
    } catch (error) {
      if (isAppError(error) && error.code === 'NOT_FOUND') return null;
      throw error;
    }
  }

  private async write(ctx: ServiceContext, line: Line, exists: boolean): Promise<LineOutcome> {
    const f = line.fields;
    const body = camelKeys(f);
    const id = idOf(line);
    const del = line.action === 'DELETE';
    switch (line.type) {
      case 'Organization':
        if (del) await this.orgs.delete(ctx, id ?? '');
        else if (exists) await this.orgs.update(ctx, id!, withoutOwnerFields(body));
        else await this.orgs.create(ctx, body);
        break;
      case 'User':
        if (del) await this.users.deactivate(ctx, id ?? '');
        else if (exists) await this.users.update(ctx, id!, withoutOwnerFields(body));
        else await this.users.create(ctx, body);
        break;
      case 'Source':
      case 'Collection': {
        const ref = repoRefOf(f, kindOf(line.type), id);
        if (del) await this.repositories.delete(ctx, ref);
        else if (exists) await this.repositories.update(ctx, ref, withoutOwnerFields(body));
        else await this.repositories.create(ctx, ref.owner, ref.kind, withoutOwnerFields(body));
        break;
      }
      case 'Source Version':
      case 'Collection Version': {
        const ref = { ...repoRefOf(f, kindOf(line.type)), version: id ?? '' };
        if (del) await this.repositories.deleteVersion(ctx, ref);
        else if (exists) await this.repositories.updateVersion(ctx, ref, withoutOwnerFields(body));
        else
          await this.repositories.createVersion(
            ctx,
            { ...ref, version: undefined },
            withoutOwnerFields(body),
          );
        break;
      }
      case 'Reference': {
        const ref = repoRefOf(f, 'collection');
        if (del) {
          await this.references.removeReferences(ctx, ref, f.data);
          return 'deleted';
        }
        const added = await this.references.addReferences(ctx, ref, f.data, {
          cascade: typeof f.__cascade === 'string' ? f.__cascade : null,
        });
        return added.some((a) => a.added) ? 'created' : 'unchanged';
      }
      case 'Concept':
      case 'Mapping':
        throw new Error('Concepts and mappings are imported in batches.');
    }
    return del ? 'deleted' : exists ? 'updated' : 'created';
  }

  private async download(url: string): Promise<Buffer> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw AppError.field('file_url', `'${url}' is not a URL.`);
    }
    if (
      !['http:', 'https:'].includes(parsed.protocol) ||
      !this.options.fileUrlHosts.includes(parsed.host)
    ) {
      throw AppError.field(
        'file_url',
        'Imports from file_url are allowed only from hosts the administrator lists (IMPORT_FILE_URL_HOSTS).',
      );
    }
    const tooLarge = (): AppError =>
      AppError.field('file', `The file is larger than ${this.options.maxBytes} bytes.`);
    const cutOff = new AbortController();
    const response = await fetch(parsed, {
      redirect: 'error',
      signal: AbortSignal.any([cutOff.signal, AbortSignal.timeout(60_000)]),
    }).catch((error: Error) => {
      throw AppError.field('file_url', `The file could not be downloaded: ${error.message}`);
    });
    if (!response.ok) {
      cutOff.abort();
      throw AppError.field(
        'file_url',
        `The file could not be downloaded (HTTP ${response.status}).`,
      );
    }
    if (Number(response.headers.get('content-length') ?? 0) > this.options.maxBytes) {
      cutOff.abort();
      throw tooLarge();
    }
    // Counted as it arrives: a body without Content-Length must not be read whole into memory.
    const chunks: Uint8Array[] = [];
    let size = 0;
    const body: AsyncIterable<Uint8Array> | null = response.body;
    try {
      for await (const chunk of body ?? []) {
        size += chunk.byteLength;
        if (size > this.options.maxBytes) {
          cutOff.abort();
          throw tooLarge();
        }
        chunks.push(chunk);
      }
    } catch (error) {
      if (isAppError(error)) throw error;
      throw AppError.field(
        'file_url',
        `The file could not be downloaded: ${(error as Error).message}`,
      );
    }
    return Buffer.concat(chunks);
  }
}

/** Whether every field a line sends (but where it goes and its id) equals the stored one. */
function sameAsStored(fields: Record<string, unknown>, stored: object): boolean {
  const values = stored as Record<string, unknown>;
  return Object.entries(withoutOwnerFields(camelKeys(fields)))
    .filter(([key]) => key !== 'id' && key !== 'username')
    .every(([key, value]) => isDeepStrictEqual(values[key] ?? null, value ?? null));
}

/** A line's outcome, recorded when its batch is written. */
type Outcome = [Line, string | null, LineOutcome, string | null];

/** The outcomes of lines that wrote something. */
const WRITTEN = new Set<LineOutcome>(['created', 'updated', 'deleted']);

/** Writes a prepared batch and records its lines' outcomes. */
type Writer = () => Promise<void>;

/** What concept and mapping contents share. */
interface Content {
  externalId: string | null;
  retired: boolean;
}

/** What concept and mapping versions share. */
interface ContentVersion {
  mnemonic: string;
  retired: boolean;
  checksumStandard: string | null;
}

/** A concept or mapping line checked and drafted. */
interface Draft<C, V> {
  line: Line;
  id: string | undefined;
  /** Null for a DELETE (the stored content, retired). */
  content: C | null;
  comment: string | null;
  /** The version row `content` makes (checksums, search text), less ids and change number. */
  row: Partial<V> | null;
}

/** How a batch's drafts meet what the source holds. */
interface Lookup<C, V> {
  /** The stored object a draft names (null: a new one). */
  existing(draft: Draft<C, V>, index: number): V | undefined;
  /** Why a draft to be written would break a uniqueness rule, if it would. */
  clash(draft: Draft<C, V>, index: number, existing: V | undefined): string | undefined;
}

type AutoidScheme = 'sequential' | 'uuid' | null | undefined;

/** What sets concepts and mappings apart in a batch; the rest is one shape. */
interface ContentKind<C extends Content, V extends ContentVersion> {
  type: 'Concept' | 'Mapping';
  username: string;
  autoid: {
    id: [AutoidScheme, number | null | undefined];
    externalId: [AutoidScheme, number | null | undefined];
  };
  store(repos: Repositories): {
    insertObjects(
      rows: Array<{ repositoryId: string; mnemonic: string; createdBy: string }>,
    ): Promise<Map<string, string>>;
    insertVersions(rows: Array<Partial<V>>): Promise<void>;
    endCurrentOf(objectIds: string[], seq: string): Promise<void>;
  };
  /** A line's id, content and comment, by the API's rules (an AppError otherwise). */
  draft(line: Line): Promise<{ id: string | undefined; content: C; comment: string | null }>;
  deleted(line: Line): { id: string | undefined; comment: string };
  versionRow(
    object: { id: string; mnemonic: string },
    content: C,
    seq: string,
    comment: string | null,
  ): Partial<V>;
  /**
   * A drafted row completed with what only the write knows, in place (the batch's own object;
   * a copy of each of 2,000 wide rows cost ~10 ms of every batch's transaction).
   */
  finish(row: Partial<V>, objectId: string, seq: string, content: C): Partial<V>;
  /** A new object's content (item ids by the source's scheme). */
  forNew(content: C): C;
  contentOf(version: V): C;
  objectIdOf(version: V): string;
  nextNumericId(
    repos: Repositories,
    column: 'mnemonic' | 'external_id',
    from: number,
  ): Promise<string>;
  lookup(repos: Repositories, drafts: Array<Draft<C, V>>): Promise<Lookup<C, V>>;
}

type KindMaker<C extends Content, V extends ContentVersion> = (
  ctx: ServiceContext,
  source: RepoView,
  lines: Line[],
  username: string,
) => ContentKind<C, V>;

function recordAll(report: ImportReport, outcomes: Outcome[]): void {
  for (const [line, id, outcome, reason] of outcomes) record(report, line, id, outcome, reason);
}

/**
 * Whether `next` may be drafted while `current` is written: both are concepts or mappings (they
 * create no owners or sources that drafts resolve) and no concept of `next` names parents (which
 * `current` may be adding).
 */
function independent(current: ImportLine[], next: ImportLine[]): boolean {
  return (
    contentKindOf(current) !== null &&
    contentKindOf(next) !== null &&
    next.every((line) => !('fields' in line) || !line.fields.parent_concept_urls)
  );
}

/** Concept or Mapping for a batch of those, else null. */
function contentKindOf(batch: ImportLine[]): 'Concept' | 'Mapping' | null {
  const first = batch[0];
  return 'fields' in first && (first.type === 'Concept' || first.type === 'Mapping')
    ? first.type
    : null;
}

/** What a line's action does with what exists: write, or the outcome without writing. */
function decide(
  action: Line['action'],
  exists: boolean,
  updateIfExists: boolean,
): 'write' | 'exists' | 'not_found' {
  switch (action) {
    case 'CREATE':
      return exists ? 'exists' : 'write';
    case 'UPDATE':
    case 'DELETE':
      return exists ? 'write' : 'not_found';
    case 'CREATE_OR_UPDATE':
      return exists && !updateIfExists ? 'exists' : 'write';
  }
}

function reasonOf(outcome: LineOutcome, type: string, id: string | undefined): string | null {
  const what = `${type} '${id ?? ''}'`;
  if (outcome === 'exists') return `${what} already exists.`;
  if (outcome === 'not_found') return `${what} does not exist.`;
  return null;
}

/**
 * Consecutive lines that share a batch: concepts (or mappings) of one source with the same kind
 * of action (a DELETE is a barrier), up to BATCH_SIZE and no id twice; anything else alone.
 */
export function* batchesOf(lines: Iterable<ImportLine>): Generator<ImportLine[]> {
  let batch: ImportLine[] = [];
  let ids = new Set<string>();
  let key: string | null = null;
  for (const line of lines) {
    const lineKey =
      'fields' in line && (line.type === 'Concept' || line.type === 'Mapping')
        ? JSON.stringify([line.type, line.action === 'DELETE', ...sourceKey(line.fields)])
        : null;
    const id = 'fields' in line ? idOf(line) : null;
    if (
      batch.length > 0 &&
      (lineKey === null ||
        lineKey !== key ||
        batch.length >= BATCH_SIZE ||
        (id !== null && ids.has(id)))
    ) {
      yield batch;
      batch = [];
      ids = new Set();
    }
    batch.push(line);
    key = lineKey;
    if (id !== null) ids.add(id);
  }
  if (batch.length > 0) yield batch;
}

/** Rows written by one statement each, BATCH_SIZE at a time (FHIR writes share the size). */
export function* batchesOfSize<T>(rows: readonly T[]): Generator<T[]> {
  for (let at = 0; at < rows.length; at += BATCH_SIZE) yield rows.slice(at, at + BATCH_SIZE);
}

function sourceKey(fields: Record<string, unknown>): unknown[] {
  return [fields.owner, fields.owner_type ?? 'Organization', fields.source];
}

function idOf(line: ImportLine): string | null {
  if (!('fields' in line)) return null;
  const id = line.type === 'User' ? line.fields.username : line.fields.id;
  return typeof id === 'string' && id !== '' ? id : typeof id === 'number' ? String(id) : null;
}

function kindOf(type: LineType): 'source' | 'collection' {
  return type.startsWith('Source') ? 'source' : 'collection';
}

function ownerOf(fields: Record<string, unknown>): OwnerRef {
  const owner = fields.owner;
  if (typeof owner !== 'string' || owner === '')
    throw AppError.field('owner', 'This field is required.');
  const type = fields.owner_type ?? 'Organization';
  if (type === 'Organization') return { type: 'org', id: owner };
  if (type === 'User') return { type: 'user', username: owner };
  throw AppError.field('owner_type', "Must be 'Organization' or 'User'.");
}

function sourceRefOf(fields: Record<string, unknown>): RepoRef {
  return repoRefOf(fields, 'source');
}

/** The repository a line names: by `source`/`collection` (content lines), or `id` (its own line). */
function repoRefOf(
  fields: Record<string, unknown>,
  kind: 'source' | 'collection',
  id?: string | null,
): RepoRef {
  const name = id ?? fields[kind];
  if (typeof name !== 'string' || name === '')
    throw AppError.field(kind, 'This field is required.');
  return { owner: ownerOf(fields), kind, id: name };
}

/** A line's body without the fields that name where it goes. */
function withoutOwnerFields(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(body).filter(
      ([k]) => !['owner', 'ownerType', 'source', 'collection'].includes(k),
    ),
  );
}

function endsKey(content: MappingContent | null): {
  mapType: string;
  fromCode: string | null;
  fromSourceUrl: string | null;
  toCode: string | null;
  toSourceUrl: string | null;
} {
  return {
    mapType: content?.mapType ?? '',
    fromCode: content?.from.code ?? null,
    fromSourceUrl: content?.from.sourceUrl ?? null,
    toCode: content?.to.code ?? null,
    toSourceUrl: content?.to.sourceUrl ?? null,
  };
}

/**
 * A scheme's next ids for one batch, from one query: uuids, or numbers from the lowest free one
 * up (the batch holds the source's lock, so nobody else takes them). Null when none is needed.
 */
export async function counter(
  scheme: 'sequential' | 'uuid' | null | undefined,
  startFrom: number | null | undefined,
  needed: boolean,
  first: (from: number) => Promise<string>,
): Promise<(() => string) | null> {
  if (!needed || !scheme) return null;
  if (scheme === 'uuid') return () => crypto.randomUUID();
  let next = BigInt(await first(startFrom ?? 1));
  return () => String(next++);
}

function outcomeOf(error: unknown): [LineOutcome, string] {
  if (isAppError(error)) {
    const fields = error.fieldErrors
      ? ` (${Object.entries(error.fieldErrors)
          .map(([k, v]) => `${k}: ${v.join(' ')}`)
          .join('; ')})`
      : '';
    return [OUTCOME_OF_ERROR[error.code] ?? 'failed', `${error.message}${fields}`];
  }
  return ['failed', 'The line could not be written because of an internal error.'];
}

function emptyReport(total: number): ImportReport {
  return {
    total,
    processed: 0,
    created: 0,
    updated: 0,
    unchanged: 0,
    invalid: 0,
    exists: 0,
    failed: 0,
    deleted: 0,
    not_found: 0,
    permission_denied: 0,
    elapsed_seconds: 0,
    failures: [],
    cancelled_by: null,
  };
}

function record(
  report: ImportReport,
  line: ImportLine,
  id: string | null,
  outcome: LineOutcome,
  reason: string | null,
): void {
  report[outcome] += 1;
  if (['created', 'updated', 'deleted', 'unchanged'].includes(outcome)) return;
  if (report.failures.length >= MAX_FAILURES_LISTED) return;
  report.failures.push({
    line: line.line,
    type: line.type,
    id,
    outcome,
    reason: reason ?? outcome,
  });
}
