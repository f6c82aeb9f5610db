import express, { type Request, type RequestHandler } from 'express';
import multer from 'multer';
import { AppError } from '../../src/errors';
import type { ImportFormat, ImportReport, Services, TaskView } from '../../src/services';
import { flag, noContent, ok, param, queryString } from '../http';
import { handlers } from './table';
import { taskAccepted, taskJson } from './task.mapper';

/** The paths whose POST bodies are import files, not JSON (app.ts lets them through unparsed). */
export const BULK_IMPORT_PATH = /^\/importers\/bulk-import\/(?:[^/]+\/)?$/;

/**
 * OCL's bulk import (`/importers/bulk-import/[:queue/]`): POST a file of JSON lines or CSV — the
 * raw body, a multipart `file`, or `{"file_url": …}` where allowed — and get 202 with the task;
 * GET `?task=` for its state and report; DELETE `?task=` (or `{"task_id"}`) to cancel it.
 */
export function bulkImportHandlers(services: Services) {
  const { bulkImports } = services;
  return handlers({
    start: async (req, ctx) => {
      const input = uploadOf(req);
      const task = await bulkImports.start(ctx, {
        ...input,
        queue: req.params.queue === undefined ? undefined : param(req, 'queue'),
      });
      return taskAccepted(task);
    },
    status: async (req, ctx) => {
      const taskId = queryString(req, 'task');
      if (!taskId) throw AppError.field('task', 'Name the import task: ?task=<id>.');
      const { task, report } = await bulkImports.status(ctx, taskId);
      return ok(statusJson(task, report));
    },
    cancel: async (req, ctx) => {
      const fromBody = (req.body as { task_id?: unknown } | undefined)?.task_id;
      const taskId =
        queryString(req, 'task') ?? (typeof fromBody === 'string' ? fromBody : undefined);
      if (!taskId) throw AppError.field('task_id', 'Name the import task to cancel.');
      await bulkImports.cancel(ctx, taskId);
      return noContent();
    },
  });
}

/** Reads an import's file: the raw body, or a multipart upload's `file` (app.ts skips JSON). */
export function importFileReader(services: Services): RequestHandler {
  const maxBytes = services.bulkImports.options.maxBytes;
  const upload = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: maxBytes, files: 1 },
  });
  const raw = express.raw({ type: () => true, limit: maxBytes });
  return (req, res, next) => {
    if (!req.is('multipart/form-data')) return raw(req, res, next);
    upload.single('file')(req, res, (error: unknown) => {
      if (!error) return next();
      // The multipart parser's own errors (no boundary, a truncated body) are the client's too.
      const tooLarge = error instanceof multer.MulterError && error.code === 'LIMIT_FILE_SIZE';
      const message = error instanceof Error ? error.message : 'unreadable';
      next(
        Object.assign(new Error(`The upload was refused: ${message}.`), {
          status: tooLarge ? 413 : 400,
        }),
      );
    });
  };
}

/** What a POST sends: the file (raw or multipart) or `file_url`, and the options. */
function uploadOf(req: Request): {
  content?: Buffer;
  fileUrl?: string;
  format?: ImportFormat;
  updateIfExists: boolean;
} {
  const fields = (req.is('multipart/form-data') ? req.body : {}) as Record<string, unknown>;
  let content = req.file?.buffer ?? (Buffer.isBuffer(req.body) ? req.body : undefined);
  let fileUrl = typeof fields.file_url === 'string' ? fields.file_url : undefined;
  let updateIfExists: unknown = queryString(req, 'update_if_exists') ?? fields.update_if_exists;
  // A JSON body naming the file instead of being it: `{"file_url": …}` or `{"data": …}`.
  if (content && req.is(['application/json', 'application/*+json'])) {
    const wrapper = wrapperOf(content);
    if (wrapper) {
      fileUrl = typeof wrapper.file_url === 'string' ? wrapper.file_url : undefined;
      content =
        typeof wrapper.data === 'string'
          ? Buffer.from(wrapper.data)
          : Array.isArray(wrapper.data)
            ? Buffer.from(wrapper.data.map((line) => JSON.stringify(line)).join('\n'))
            : undefined;
      updateIfExists ??= wrapper.update_if_exists;
    }
  }
  const format =
    queryString(req, 'format') ?? (typeof fields.format === 'string' ? fields.format : undefined);
  const name = req.file?.originalname ?? '';
  if (format !== undefined && format !== 'csv' && format !== 'jsonl' && format !== 'json') {
    throw AppError.field('format', "Must be 'json' (JSON lines) or 'csv'.");
  }
  return {
    content,
    fileUrl,
    format:
      format === 'csv' || (!format && (/\.csv$/i.test(name) || req.is('text/csv')))
        ? 'csv'
        : format
          ? 'jsonl'
          : undefined,
    updateIfExists: updateIfExists === undefined ? true : flag(updateIfExists),
  };
}

const WRAPPER_KEYS = new Set(['data', 'file_url', 'update_if_exists']);

function wrapperOf(content: Buffer): Record<string, unknown> | null {
  if (content.length > 64 * 1024 * 1024) return null;
  try {
    const value: unknown = JSON.parse(content.toString('utf8'));
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
    const keys = Object.keys(value);
    return keys.length > 0 && keys.every((k) => WRAPPER_KEYS.has(k))
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** The task with its report (OCL's summary keys at the top level, failed lines listed). */
function statusJson(task: TaskView, report: ImportReport | null): object {
  return { ...taskJson(task), report };
}
