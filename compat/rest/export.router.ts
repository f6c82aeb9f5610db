import { Router, type Request } from 'express';
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { RepositoryKind } from '../../src/db/entities';
import { AppError } from '../../src/errors';
import {
  defaultListParams,
  type ExportSerializer,
  type RepoRef,
  type Services,
} from '../../src/services';
import { noContent, ok, param, route, type Reply } from '../http';
import { OWNER_PREFIXES } from './owners';
import { writeRepoDocument } from './repo-document';

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

const KINDS: Array<{ segment: string; kind: RepositoryKind }> = [
  { segment: 'sources', kind: 'source' },
  { segment: 'collections', kind: 'collection' },
];

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
export function exportRouter(services: Services): Router {
  const { exports } = services;
  const router = Router();

  router.get(
    `${DOWNLOAD_PATH}:token/`,
    route(async (req) => {
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
    }),
  );

  for (const owner of OWNER_PREFIXES) {
    for (const { segment, kind } of KINDS) {
      const path = `${owner.prefix}/${segment}/:repo/:version/export/`;
      const ref = (req: Request): RepoRef => ({
        owner: owner.ref(req),
        kind,
        id: param(req, 'repo'),
        version: param(req, 'version'),
      });
      router
        .route(path)
        .get(
          route(async (req, ctx): Promise<Reply> => {
            const status = await exports.status(ctx, ref(req));
            if (status.state === 'absent') return noContent();
            if (status.state === 'processing') return { kind: 'empty', status: 208 };
            const headers = {
              'Content-Disposition': disposition(status.fileName),
              'Content-Length': String(status.size),
              exportURL: `${ctx.baseUrl}${DOWNLOAD_PATH}${status.download}/`,
            };
            const reply: Reply = { kind: 'stream', status: 200, type: 'application/zip', headers };
            if (req.method === 'HEAD') return reply;
            const file = await exports.open(ctx, ref(req));
            if (!file) return noContent();
            return {
              ...reply,
              body: (out) => pipeInto(file.stream, out),
            };
          }),
        )
        .post(
          route(async (req, ctx): Promise<Reply> => {
            const asked = await exports.request(ctx, ref(req));
            if (asked.outcome === 'exists') return ok({ detail: 'The export exists.' });
            if (asked.outcome === 'processing') {
              throw new AppError('CONFLICT', 'The export is being written.');
            }
            return {
              kind: 'json',
              status: 202,
              body: { detail: 'The export is being written.', task: asked.taskId },
            };
          }),
        )
        .delete(
          route(async (req, ctx) => {
            await exports.remove(ctx, ref(req));
            return noContent();
          }),
        );
    }
  }
  return router;
}
