import crypto from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { once } from 'node:events';
import { HEAD } from '../../db/entities';
import { AppError } from '../../errors';
import type { JobQueue, TaskActor, TaskHandle } from '../../jobs';
import type { Audience, ExportRow, Repositories } from '../../repositories';
import { authorize, requireUser } from '../shared/access';
import { ANONYMOUS, type Actor } from '../shared/actor';
import type { ServiceContext } from '../shared/context';
import { createLoaders } from '../shared/loaders';
import type { ExportStorage } from './export-storage';
import { refOf, type RepositoryService, type RepoView } from '../content/repository.service';
import type { RepoRef } from '../shared/urls';
import { jsonZip } from './zip';

/** The background task that writes a version's export. */
export const EXPORT_TASK = 'repository-export';

/** The default life of a download address (`EXPORT_URL_TTL_SECONDS`). */
export const DEFAULT_EXPORT_URL_TTL_SECONDS = 300;

/** What the export's JSON may hold ahead of the compression (several batches of items). */
const JSON_BUFFER_BYTES = 1024 * 1024;

/** The payload of an export task: the version by path and by id (a remade version is another). */
export interface ExportJob {
  ref: RepoRef;
  versionId: string;
}

/**
 * The shape of an export's `export.json`: the REST edge's (what a get of the version with
 * `includeConcepts=true&includeMappings=true&includeRetired=true&limit=0` answers). The edge
 * implements it and the composition root of the edges (src/app.ts) passes it in.
 */
export interface ExportSerializer {
  /**
   * Writes the JSON document of a repository version piece by piece (text, or its UTF-8
   * bytes); `write` resolves when the piece may be followed (backpressure).
   */
  write(
    ctx: ServiceContext,
    view: RepoView,
    write: (piece: string | Buffer) => Promise<void>,
  ): Promise<void>;
}

/** An export as its endpoints answer it (spec operations §4.8). */
export type ExportStatus =
  | { state: 'absent' }
  | { state: 'processing'; taskId: string | null }
  | { state: 'ready'; fileName: string; size: number; lastUpdated: Date; download: string };

/**
 * Exports of repository versions (spec operations §3, §4.8, §9.3): a zip holding `export.json`,
 * written by a background task from cursors (memory does not grow with the dictionary) into the
 * storage under a temporary name and published whole, so a file is either complete or absent.
 * A version gets one automatically when it is made.
 *
 * One file serves every reader of the version, so it holds what the least of them sees: it is
 * written as its repository's audience reads it (anonymously for a public repository; for a
 * private one as a plain member of the owning org with no other membership, or as the owning
 * user), never with the rights of whoever asked. It is served only while it still fits what it
 * was written from (`ExportRow.fresh`): a repository whose audience changed, or any narrowing of
 * visibility since, makes it absent until it is asked for again.
 */
export class ExportService {
  private serializer: ExportSerializer | null = null;

  constructor(
    private readonly repos: Repositories,
    private readonly repositories: RepositoryService,
    private readonly jobs: JobQueue,
    private readonly storage: ExportStorage,
    private readonly urlTtlSeconds: number,
  ) {}

  /** The document's shape is the REST edge's; src/app.ts hands it over once, before jobs start. */
  useSerializer(serializer: ExportSerializer): void {
    this.serializer = serializer;
  }

  /** GET/HEAD: the export's state; when ready, with a fresh single-use download token. */
  async status(ctx: ServiceContext, ref: RepoRef): Promise<ExportStatus> {
    const view = await this.version(ctx, ref);
    const row = await this.current(view);
    if (!row) return { state: 'absent' };
    if (row.state === 'processing') return { state: 'processing', taskId: row.taskId };
    const token = crypto.randomBytes(24).toString('base64url');
    await this.repos.exports.addDownload(
      hashOf(token),
      { versionId: view.version.id, fileKey: row.fileKey!, fileName: row.fileName! },
      new Date(Date.now() + this.urlTtlSeconds * 1000),
    );
    return {
      state: 'ready',
      fileName: row.fileName!,
      size: row.size ?? 0,
      lastUpdated: row.lastUpdated!,
      download: token,
    };
  }

  /** The ready export's file (GET on the export path streams it). */
  async open(
    ctx: ServiceContext,
    ref: RepoRef,
  ): Promise<{ fileName: string; size: number; stream: Readable } | null> {
    const view = await this.version(ctx, ref);
    const row = await this.current(view);
    if (row?.state !== 'ready') return null;
    const stream = await this.storage.open(row.fileKey!);
    return stream ? { fileName: row.fileName!, size: row.size ?? 0, stream } : null;
  }

  /**
   * A download address's file, once: 404 for an unknown token, 410 for a spent or expired one.
   * The token is the credential (spec operations §4.8: single-use, expires).
   */
  async download(token: string): Promise<{ fileName: string; stream: Readable }> {
    const found = /^[\w-]{20,64}$/.test(token)
      ? await this.repos.exports.useDownload(hashOf(token))
      : null;
    if (found === null) throw AppError.notFound('Export download');
    if (found === 'gone') {
      throw new AppError(
        'GONE',
        'This download address was used or has expired; ask for a new one.',
      );
    }
    const stream = await this.storage.open(found.fileKey);
    if (!stream) throw AppError.notFound('Export download');
    return { fileName: found.fileName, stream };
  }

  /**
   * POST: queues the export unless it exists ('exists', 200) or is being written ('processing',
   * 409); 'queued' (202) for the one caller of parallel requests that queued it.
   */
  async request(
    ctx: ServiceContext,
    ref: RepoRef,
  ): Promise<{ outcome: 'queued' | 'exists' | 'processing'; taskId?: string }> {
    requireUser(ctx);
    const view = await this.version(ctx, ref);
    const row = await this.current(view);
    if (row?.state === 'ready') return { outcome: 'exists' };
    const taskId = await this.queue(ctx, view);
    return taskId ? { outcome: 'queued', taskId } : { outcome: 'processing' };
  }

  /** DELETE (administrative access): 404 when there is no file, 409 while it is written. */
  async remove(ctx: ServiceContext, ref: RepoRef): Promise<void> {
    const view = await this.version(ctx, ref);
    await authorize(ctx, { action: 'repo.edit', repo: view.repo });
    const row = await this.current(view);
    if (row?.state === 'processing') {
      throw new AppError('CONFLICT', 'The export is being written; delete it once it is ready.');
    }
    const key = await this.repos.exports.removeReady(view.version.id);
    if (!key) throw AppError.notFound('Export');
    await this.storage.remove(key);
  }

  /**
   * A version's content was replaced (its default expansion re-evaluated) inside the caller's
   * transaction `r`: a file being written from the old content refuses it (409), a written one is
   * withdrawn there, and its file removed once the caller has committed (what this answers).
   */
  async contentReplaced(r: Repositories, versionId: string): Promise<() => Promise<void>> {
    // Held until the caller commits: no export of the version is claimed in between.
    await r.lockNamed(exportLock(versionId));
    const row = await r.exports.find(versionId);
    if (row?.state === 'processing') {
      throw new AppError(
        'CONFLICT',
        "The version's export is being written from its present content; try again once it is ready.",
      );
    }
    const key = await r.exports.removeReady(versionId);
    return async () => {
      if (key) await this.storage.remove(key);
    };
  }

  /** A new version's automatic export (spec operations §3); a failure to queue is only logged. */
  async versionMade(ctx: ServiceContext, view: RepoView): Promise<void> {
    if (!this.jobs.started) return;
    try {
      await this.queue(ctx, view);
    } catch (error) {
      ctx.log.warn({ err: error, version: view.version.id }, 'could not queue the export');
    }
  }

  /** Writes the export: the task's handler. */
  async run(ctx: ServiceContext, job: ExportJob, task: TaskHandle): Promise<object> {
    const serializer = this.serializer;
    if (!serializer) throw new Error('No export serializer was passed in');
    const view = await this.repositories.get(ctx, job.ref);
    if (view.version.id !== job.versionId) {
      throw AppError.notFound(`Version '${job.ref.version}' (it was deleted)`);
    }
    // Read before the first of its content, so a narrowing during the walk leaves it stale.
    const basis = await this.repos.exports.writingBasis(view.version.id);
    const reader = audienceReader(basis.audience);
    const asReader: ServiceContext = {
      ...ctx,
      actor: reader,
      loaders: createLoaders(this.repos, reader),
    };
    const readerView = await this.repositories.get(asReader, job.ref);
    const key = `${view.repo.id}/${view.version.id}.zip`;
    const lastUpdated = view.version.createdAt;
    const fileName = `${view.repo.mnemonic}_${view.version.mnemonic}.${stamp(lastUpdated)}.zip`;
    const pending = await this.storage.create(key);
    try {
      // Room for several batches: the next ones are made while zlib compresses this one.
      const zip = jsonZip({ mtime: lastUpdated, highWaterMark: JSON_BUFFER_BYTES });
      const json = zip.json;
      zip.output.pipe(pending.stream);
      // A store that fails stops the walk at its next write.
      pending.stream.once('error', () => json.destroy());
      let written = 0;
      await serializer.write(asReader, readerView, async (piece) => {
        if (task.signal.aborted) throw new Error('The server is stopping.');
        written += piece.length;
        await writeTo(json, piece);
      });
      json.end();
      await finished(zip.output);
      await task.progress(written, written, 'written');
      await pending.publish();
    } catch (error) {
      await pending.discard();
      await this.repos.exports.markFailed(view.version.id, task.id, String(error));
      throw error;
    }
    const file = { key, name: fileName, size: pending.size, lastUpdated };
    if (!(await this.repos.exports.markReady(view.version.id, task.id, file, basis))) {
      // Deleted or failed meanwhile (e.g. given up as abandoned): the file is not kept.
      await this.storage.remove(key);
      throw new AppError('CONFLICT', 'The export was cancelled while it was written.');
    }
    return { file: fileName, size: pending.size };
  }

  /** A version (never HEAD: spec operations §9.3, 405) the caller may read. */
  private async version(ctx: ServiceContext, ref: RepoRef): Promise<RepoView> {
    if (!ref.version || ref.version.toUpperCase() === HEAD) {
      throw new AppError('NOT_ALLOWED', 'Exports exist only for versions, never HEAD.');
    }
    const view = await this.repositories.get(ctx, ref);
    if (view.version.mnemonic === HEAD) {
      throw new AppError('NOT_ALLOWED', 'Exports exist only for versions, never HEAD.');
    }
    return view;
  }

  /**
   * The export row as it is: a processing export whose task has failed (or whose process died)
   * is recorded failed here, so nobody waits for it and it can be requested again; a ready one
   * that no longer fits its audience is removed, so it is absent until asked for again.
   */
  private async current(view: RepoView): Promise<ExportRow | null> {
    const row = await this.repos.exports.find(view.version.id);
    if (!row || row.state === 'failed') return null;
    if (row.state === 'ready' && !row.fresh) {
      const key = await this.repos.exports.removeReady(view.version.id);
      if (key) await this.storage.remove(key);
      return null;
    }
    if (row.state === 'processing' && row.taskId) {
      const task = await this.jobs.find(row.taskId);
      if (!task || task.state === 'FAILURE') {
        await this.repos.exports.markFailed(view.version.id, row.taskId, task?.error ?? 'lost');
        return null;
      }
    }
    return row;
  }

  /** Claims the export and queues its task; the task id, or null when it was claimed already. */
  private async queue(ctx: ServiceContext, view: RepoView): Promise<string | null> {
    // Under the version's export lock: a re-evaluation replacing its content commits first.
    const claimed = await this.repos.transaction(async (r) => {
      await r.lockNamed(exportLock(view.version.id));
      return r.exports.claim(view.version.id);
    });
    if (!claimed) return null;
    try {
      const task = await this.jobs.enqueue(
        EXPORT_TASK,
        {
          ref: { ...refOf(view), version: view.version.mnemonic },
          versionId: view.version.id,
        } satisfies ExportJob,
        {
          actor: await this.runnerOf(ctx, view),
          baseUrl: ctx.baseUrl,
          summary: `Export of ${view.repo.mnemonic} ${view.version.mnemonic}`,
        },
      );
      await this.repos.exports.setTask(view.version.id, task.id);
      return task.id;
    } catch (error) {
      await this.repos.exports.markFailed(view.version.id, null, String(error));
      throw error;
    }
  }

  /**
   * Whose task the export is (who it is listed for and whose activity it needs): the version's
   * creator while active, else the caller. The file is read as its audience, not as them.
   */
  private async runnerOf(ctx: ServiceContext, view: RepoView): Promise<TaskActor> {
    const creator = view.version.createdBy
      ? await this.repos.users.findByUsername(view.version.createdBy)
      : null;
    if (creator?.isActive) {
      return {
        kind: 'user',
        id: creator.id,
        username: creator.username,
        isSuperuser: creator.isSuperuser,
      };
    }
    const actor = requireUser(ctx);
    return { kind: 'user', id: actor.id, username: actor.username, isSuperuser: actor.isSuperuser };
  }
}

/** Who an export for `audience` is read as (see the class comment). */
function audienceReader(audience: Audience): Actor {
  if (audience === 'public') return ANONYMOUS;
  const [kind, id] = audience.split(':') as ['org' | 'user', string];
  return { kind: 'ownerReader', owner: kind === 'org' ? { orgId: id } : { userId: id } };
}

function hashOf(token: string): string {
  return crypto.createHash('sha256').update(token).digest('hex');
}

/** OCL's time stamp in export file names (`%Y-%m-%d_%H%M%S`, UTC; spec operations §4.8). */
export function stamp(at: Date): string {
  const iso = at.toISOString();
  return `${iso.slice(0, 10)}_${iso.slice(11, 19).replace(/:/g, '')}`;
}

/**
 * Writes to a stream, waiting while it is full; fails (rather than wait for ever) when the stream
 * is closed meanwhile (a client that went away, a store that failed).
 */
export async function writeTo(out: Writable, piece: string | Buffer): Promise<void> {
  if (out.destroyed || out.writableEnded) throw new Error('The output was closed.');
  if (out.write(piece)) return;
  const stop = new AbortController();
  try {
    await Promise.race([
      once(out, 'drain', { signal: stop.signal }),
      once(out, 'close', { signal: stop.signal }).then(() => {
        throw new Error('The output was closed.');
      }),
    ]);
  } finally {
    stop.abort();
  }
}

/** The lock a version's export is claimed under (`contentReplaced` holds it too). */
function exportLock(versionId: string): string {
  return `export:${versionId}`;
}
