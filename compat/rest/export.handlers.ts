import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../../src/errors';
import { defaultListParams, type ExportSerializer, type Services } from '../../src/services';
import { flag, noContent, ok, param, type Reply } from '../http';
import { repoOf } from './owners';
import { writeRepoDocument } from './repo-document';
import { handlers } from './table';

/** spec operations §4.8: `includeConcepts=true&includeMappings=true&includeRetired=true&limit=0`. */
const EXPORT_INCLUDE = {
  concepts: true,
  mappings: true,
  params: defaultListParams({ limit: 0, filters: { includeRetired: ['true'] } }),
};

/** An export file holds what the version's get with every item answers: the one serializer. */
export function exportSerializer(services: Services): ExportSerializer {
  return {
    write: (ctx, view, write) => writeRepoDocument(services, ctx, view, EXPORT_INCLUDE, write),
  };
}

/** Where a download address leads (spec operations §4.8 `exportURL`). */
const DOWNLOAD_PATH = '/exports/';

/** `attachment` with the file name, also in RFC 5987 form for names beyond ASCII. */
function disposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

/** Copies a file into the answer; a client that goes away closes the file. */
function pipeInto(file: Readable, out: Writable): Promise<void> {
  return pipeline(file, out);
}

/**
 * spec operations §4.8: `/[:ownerType/]:owner/:repoType/:repo/:repoVersion/export/` — GET (and
 * HEAD) the file, POST to ask for it, DELETE it; and the single-use download addresses.
 */
export function exportHandlers(services: Services) {
  const { exports } = services;

  return handlers({
    download: async (req) => {
      if (req.method === 'HEAD')
        throw new AppError('NOT_ALLOWED', 'A download address is for GET.');
      const file = await exports.download(param(req, 'token'));
      return {
        kind: 'stream',
        status: 200,
        type: 'application/zip',
        headers: { 'Content-Disposition': disposition(file.fileName) },
        body: (out) => pipeInto(file.stream, out),
      };
    },
    get: async (req, ctx): Promise<Reply> => {
      const status = await exports.status(ctx, repoOf(req));
      if (status.state === 'absent') return noContent();
      if (status.state === 'processing') return { kind: 'empty', status: 208 };
      const headers = {
        'Content-Disposition': disposition(status.fileName),
        'Content-Length': String(status.size),
        exportURL: `${ctx.baseUrl}${DOWNLOAD_PATH}${status.download}/`,
      };
      const reply: Reply = { kind: 'stream', status: 200, type: 'application/zip', headers };
      if (req.method === 'HEAD') return reply;
      const file = await exports.open(ctx, repoOf(req));
      if (!file) return noContent();
      return {
        ...reply,
        body: (out) => pipeInto(file.stream, out),
      };
    },
    request: async (req, ctx): Promise<Reply> => {
      const asked = await exports.request(ctx, repoOf(req));
      // OCL answers an existing file 303 (to GET it), or 204 with `noRedirect` (the web client
      // asks so); spec operations §4.8 answers 200.
      if (asked.outcome === 'exists')
        return flag(req.query.noRedirect) ? noContent() : ok({ detail: 'The export exists.' });
      if (asked.outcome === 'processing') {
        throw new AppError('CONFLICT', 'The export is being written.');
      }
      return {
        kind: 'json',
        status: 202,
        body: { detail: 'The export is being written.', task: asked.taskId },
      };
    },
    remove: async (req, ctx) => {
      await exports.remove(ctx, repoOf(req));
      return noContent();
    },
  });
}
