import crypto from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { ConceptVersionEntity, MappingVersionEntity } from '../db/entities';
import { AppError, isAppError } from '../errors';
import type { TaskView } from '../jobs';
import type { ImportFormat, Repositories } from '../repositories';
import { requireUser } from './access';
import type { CollectionService } from './collection.service';
import { conceptContentOf, type ConceptContent, type ConceptService } from './concept.service';
import type { ServiceContext } from './context';
import { camelKeys, csvLines, jsonLines, type ImportLine, type LineType } from './import-lines';
import {
  mappingContentOf,
  mappingVersionRow,
  type EndCache,
  type MappingContent,
  type MappingService,
} from './mapping.service';
import type { OrgService } from './org.service';
import type { RepositoryService, RepoView } from './repository.service';
import type { TaskService } from './task.service';
import type { OwnerRef, RepoRef } from './urls';
import type { UserService } from './user.service';

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
const BATCH_SIZE = 1000;
/** The most failures a report lists (it counts all of them). */
const MAX_FAILURES_LISTED = 10_000;
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
    private readonly collections: CollectionService,
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
    const lines = record.format === 'csv' ? csvLines(text) : jsonLines(text);
    const report = emptyReport(lines.length);
    let saved = Date.now();
    const save = async (final: boolean): Promise<void> => {
      report.elapsed_seconds = Math.round((Date.now() - started) / 10) / 100;
      await this.repos.bulkImports.saveReport(record.id, report, final);
      saved = Date.now();
    };
    const batches = [...batchesOf(lines)];
    const prepare = (batch: ImportLine[]): Promise<Writer> =>
      this.prepareBatch(ctx, batch, record.updateIfExists, report);
    try {
      let ahead: Promise<Writer> | null = null;
      for (const [index, batch] of batches.entries()) {
        const cancelledBy = await this.repos.bulkImports.cancelledBy(record.id);
        if (cancelledBy) {
          report.cancelled_by = cancelledBy;
          break;
        }
        const write: Writer = await (ahead ?? prepare(batch));
        // The next batch is checked while this one is written, when nothing this one writes
        // can change how it reads (server and database work at once).
        const next = batches[index + 1];
        ahead = next && independent(batch, next) ? prepare(next) : null;
        await write();
        report.processed += batch.length;
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
        return guarded(await this.conceptBatch(ctx, lines, updateIfExists, report));
      }
      if (first.type === 'Mapping') {
        return guarded(await this.mappingBatch(ctx, lines, updateIfExists, report));
      }
      return guarded(() => this.otherLine(ctx, first, updateIfExists, report));
    } catch (error) {
      return async () => failAll(error);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Concepts and mappings: a batch of one source, set-based

  private async conceptBatch(
    ctx: ServiceContext,
    lines: Line[],
    updateIfExists: boolean,
    report: ImportReport,
  ): Promise<Writer> {
    const source = await this.concepts.writableSource(ctx, sourceRefOf(lines[0].fields));
    const username = requireUser(ctx).username;
    const pending: Outcome[] = [];
    const known = new Set(lines.map(idOf).filter((id): id is string => id !== null));
    const drafts: Array<{
      line: Line;
      id: string | undefined;
      content: ConceptContent | null;
      comment: string | null;
    }> = [];
    for (const line of lines) {
      if (line.action === 'DELETE') {
        drafts.push({
          line,
          id: idOf(line) ?? undefined,
          content: null,
          comment: 'Concept was retired',
        });
        continue;
      }
      try {
        const draft = await this.concepts.draft(source, camelKeys(line.fields), {
          assignItemIds: false,
          known,
        });
        drafts.push({ line, ...draft });
      } catch (error) {
        pending.push([line, idOf(line), ...outcomeOf(error)]);
      }
    }
    if (drafts.length === 0) return async () => recordAll(report, pending);
    return async () => {
      recordAll(report, pending);
      const outcomes = await this.repos.transaction(async (repos) => {
        const seq = await repos.repos.nextChange(source.repo.id);
        const ids = drafts.map((d) => d.id).filter((id): id is string => id !== undefined);
        const current = new Map(
          (await repos.concepts.currentByMnemonics(source.repo.id, ids)).map((v) => [
            v.mnemonic,
            v,
          ]),
        );
        const result: Array<[Line, string | null, LineOutcome, string | null]> = [];
        const ended: string[] = [];
        const versions: Array<Partial<ConceptVersionEntity>> = [];
        const fresh: Array<{
          id: string | undefined;
          content: ConceptContent;
          comment: string | null;
          line: Line;
        }> = [];
        for (const draft of drafts) {
          const { line } = draft;
          const existing = draft.id !== undefined ? current.get(draft.id) : undefined;
          const decided = decide(line.action, existing !== undefined, updateIfExists);
          if (decided !== 'write') {
            result.push([line, draft.id ?? null, decided, reasonOf(decided, 'Concept', draft.id)]);
            continue;
          }
          if (!existing) {
            fresh.push({ id: draft.id, content: draft.content!, comment: draft.comment, line });
            continue;
          }
          const content = draft.content ?? { ...conceptContentOf(existing), retired: true };
          if (line.action === 'DELETE' && existing.retired) {
            result.push([line, existing.mnemonic, 'unchanged', null]);
            continue;
          }
          const concept = { id: existing.conceptId, mnemonic: existing.mnemonic };
          const row = this.concepts.versionRow(
            source,
            concept as never,
            content,
            seq,
            username,
            draft.comment,
          );
          if (row.checksumStandard === existing.checksumStandard) {
            result.push([line, existing.mnemonic, 'unchanged', null]);
            continue;
          }
          ended.push(existing.conceptId);
          versions.push(row);
          result.push([
            line,
            existing.mnemonic,
            line.action === 'DELETE' ? 'deleted' : 'updated',
            null,
          ]);
        }
        await this.insertConcepts(repos, source, seq, username, fresh, versions);
        for (const item of fresh) result.push([item.line, item.id ?? null, 'created', null]);
        await repos.concepts.endCurrentOf(ended, seq);
        await repos.concepts.insertVersions(versions);
        return result;
      });
      recordAll(report, outcomes);
    };
  }

  /** New concepts of a batch: ids and external ids by the source's schemes where none is given. */
  private async insertConcepts(
    repos: Repositories,
    source: RepoView,
    seq: string,
    username: string,
    fresh: Array<{ id: string | undefined; content: ConceptContent; comment: string | null }>,
    versions: Array<Partial<ConceptVersionEntity>>,
  ): Promise<void> {
    if (fresh.length === 0) return;
    const settings = source.repo.settings;
    const nextId = await counter(
      settings.autoidConceptMnemonic,
      settings.autoidConceptMnemonicStartFrom,
      fresh.some((f) => f.id === undefined),
      (from) => repos.concepts.nextNumericId(source.repo.id, 'mnemonic', from),
    );
    const nextExternal = await counter(
      settings.autoidConceptExternalId,
      settings.autoidConceptExternalIdStartFrom,
      fresh.some((f) => f.content.externalId === null),
      (from) => repos.concepts.nextNumericId(source.repo.id, 'external_id', from),
    );
    for (const item of fresh) {
      item.id ??= nextId!();
      item.content = this.concepts.withItemIds(source, item.content);
      if (item.content.externalId === null && nextExternal)
        item.content.externalId = nextExternal();
    }
    const ids = await repos.concepts.insertConcepts(
      fresh.map((item) => ({
        repositoryId: source.repo.id,
        mnemonic: item.id,
        createdBy: username,
      })),
    );
    for (const item of fresh) {
      const concept = { id: ids.get(item.id!)!, mnemonic: item.id! };
      versions.push(
        this.concepts.versionRow(
          source,
          concept as never,
          item.content,
          seq,
          username,
          item.comment,
        ),
      );
    }
  }

  private async mappingBatch(
    ctx: ServiceContext,
    lines: Line[],
    updateIfExists: boolean,
    report: ImportReport,
  ): Promise<Writer> {
    const source = await this.concepts.writableSource(ctx, sourceRefOf(lines[0].fields));
    const username = requireUser(ctx).username;
    const pending: Outcome[] = [];
    const cache: EndCache = new Map();
    const drafts: Array<{
      line: Line;
      id: string | undefined;
      content: MappingContent | null;
      comment: string | null;
    }> = [];
    for (const line of lines) {
      if (line.action === 'DELETE') {
        if (idOf(line) === null)
          pending.push([line, null, 'invalid', 'A DELETE line names the mapping by its id.']);
        else drafts.push({ line, id: idOf(line)!, content: null, comment: 'Mapping was retired' });
        continue;
      }
      try {
        drafts.push({
          line,
          ...(await this.mappings.draft(ctx, source, camelKeys(line.fields), cache)),
        });
      } catch (error) {
        pending.push([line, idOf(line), ...outcomeOf(error)]);
      }
    }
    if (drafts.length === 0) return async () => recordAll(report, pending);
    return async () => {
      recordAll(report, pending);
      const outcomes = await this.repos.transaction(async (repos) => {
        const seq = await repos.repos.nextChange(source.repo.id);
        await this.mappings.resolveEndConcepts(
          repos,
          drafts.flatMap((d) => (d.content ? [d.content] : [])),
        );
        const byId = new Map(
          (
            await repos.mappings.currentByMnemonics(
              source.repo.id,
              drafts.flatMap((d) => (d.id !== undefined ? [d.id] : [])),
            )
          ).map((v) => [v.mnemonic, v]),
        );
        // spec core §2.7: one active mapping per map type and ends, in the source and in the batch.
        const duplicates = await repos.mappings.duplicatesOf(
          source.repo.id,
          drafts.map((d) => endsKey(d.content)),
        );
        const current = new Map(
          (
            await repos.mappings.currentVersionsOf([...duplicates.values()].map((d) => d.mappingId))
          ).map((v) => [v.mappingId, v]),
        );
        const seen = new Map<string, string>();
        const result: Array<[Line, string | null, LineOutcome, string | null]> = [];
        const ended: string[] = [];
        const versions: Array<Partial<MappingVersionEntity>> = [];
        const fresh: Array<{
          id: string | undefined;
          content: MappingContent;
          comment: string | null;
          line: Line;
        }> = [];
        drafts.forEach((draft, index) => {
          const { line } = draft;
          const duplicate = duplicates.get(index);
          // Without an id, a mapping with the same ends and map type is the one the line means.
          const existing =
            draft.id !== undefined
              ? byId.get(draft.id)
              : duplicate
                ? current.get(duplicate.mappingId)
                : undefined;
          const key = draft.content ? JSON.stringify(endsKey(draft.content)) : null;
          const clash =
            draft.content && !draft.content.retired
              ? duplicate && duplicate.mappingId !== existing?.mappingId
                ? duplicate.mnemonic
                : seen.get(key!)
              : undefined;
          const decided = decide(line.action, existing !== undefined, updateIfExists);
          if (decided !== 'write') {
            result.push([line, draft.id ?? null, decided, reasonOf(decided, 'Mapping', draft.id)]);
            return;
          }
          if (clash !== undefined) {
            result.push([
              line,
              draft.id ?? null,
              'invalid',
              `Mapping '${clash}' already maps these ends with this map type; map_type, from concept, to source and to concept code must be unique.`,
            ]);
            return;
          }
          if (key && draft.content && !draft.content.retired)
            seen.set(key, draft.id ?? `line ${line.line}`);
          if (!existing) {
            fresh.push({ id: draft.id, content: draft.content!, comment: draft.comment, line });
            return;
          }
          if (line.action === 'DELETE' && existing.retired) {
            result.push([line, existing.mnemonic, 'unchanged', null]);
            return;
          }
          const content = draft.content ?? { ...mappingContentOf(existing), retired: true };
          const mapping = { id: existing.mappingId, mnemonic: existing.mnemonic };
          const row = mappingVersionRow(
            source,
            mapping as never,
            content,
            seq,
            username,
            draft.comment,
          );
          if (row.checksumStandard === existing.checksumStandard) {
            result.push([line, existing.mnemonic, 'unchanged', null]);
            return;
          }
          ended.push(existing.mappingId);
          versions.push(row);
          result.push([
            line,
            existing.mnemonic,
            line.action === 'DELETE' ? 'deleted' : 'updated',
            null,
          ]);
        });
        await this.insertMappings(repos, source, seq, username, fresh, versions);
        for (const item of fresh) result.push([item.line, item.id ?? null, 'created', null]);
        await repos.mappings.endCurrentOf(ended, seq);
        await repos.mappings.insertVersions(versions);
        return result;
      });
      recordAll(report, outcomes);
    };
  }

  /** New mappings of a batch: ids and external ids by the source's schemes where none is given. */
  private async insertMappings(
    repos: Repositories,
    source: RepoView,
    seq: string,
    username: string,
    fresh: Array<{ id: string | undefined; content: MappingContent; comment: string | null }>,
    versions: Array<Partial<MappingVersionEntity>>,
  ): Promise<void> {
    if (fresh.length === 0) return;
    const settings = source.repo.settings;
    const nextId = await counter(
      settings.autoidMappingMnemonic ?? 'sequential',
      settings.autoidMappingMnemonicStartFrom,
      fresh.some((f) => f.id === undefined),
      (from) => repos.mappings.nextNumericId(source.repo.id, from),
    );
    const nextExternal = await counter(
      settings.autoidMappingExternalId,
      settings.autoidMappingExternalIdStartFrom,
      fresh.some((f) => f.content.externalId === null),
      (from) => repos.mappings.nextNumericId(source.repo.id, from, 'external_id'),
    );
    for (const item of fresh) {
      item.id ??= nextId!();
      if (item.content.externalId === null && nextExternal)
        item.content.externalId = nextExternal();
    }
    const ids = await repos.mappings.insertMappings(
      fresh.map((item) => ({
        repositoryId: source.repo.id,
        mnemonic: item.id,
        createdBy: username,
      })),
    );
    for (const item of fresh) {
      const mapping = { id: ids.get(item.id!)!, mnemonic: item.id! };
      versions.push(
        mappingVersionRow(source, mapping as never, item.content, seq, username, item.comment),
      );
    }
  }

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
          await this.collections.removeReferences(ctx, ref, f.data);
          return 'deleted';
        }
        const added = await this.collections.addReferences(ctx, ref, f.data, {
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
    const response = await fetch(parsed, {
      redirect: 'error',
      signal: AbortSignal.timeout(60_000),
    }).catch((error: Error) => {
      throw AppError.field('file_url', `The file could not be downloaded: ${error.message}`);
    });
    if (!response.ok)
      throw AppError.field(
        'file_url',
        `The file could not be downloaded (HTTP ${response.status}).`,
      );
    const length = Number(response.headers.get('content-length') ?? 0);
    if (length > this.options.maxBytes) {
      throw AppError.field('file', `The file is larger than ${this.options.maxBytes} bytes.`);
    }
    return Buffer.from(await response.arrayBuffer());
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

/** Writes a prepared batch and records its lines' outcomes. */
type Writer = () => Promise<void>;

function recordAll(report: ImportReport, outcomes: Outcome[]): void {
  for (const [line, id, outcome, reason] of outcomes) record(report, line, id, outcome, reason);
}

/**
 * Whether `next` may be drafted while `current` is written: both are concepts or mappings (they
 * create no owners or sources that drafts resolve) and no concept of `next` names parents (which
 * `current` may be adding).
 */
function independent(current: ImportLine[], next: ImportLine[]): boolean {
  const content = (batch: ImportLine[]): boolean =>
    'fields' in batch[0] && (batch[0].type === 'Concept' || batch[0].type === 'Mapping');
  return (
    content(current) &&
    content(next) &&
    next.every((line) => !('fields' in line) || !line.fields.parent_concept_urls)
  );
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
export function* batchesOf(lines: ImportLine[]): Generator<ImportLine[]> {
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
async function counter(
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
