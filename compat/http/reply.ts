import type { Request, RequestHandler, Response } from 'express';
import type { Writable } from 'node:stream';
import { requestContext } from '../../src/context';
import { zipText, type Page, type ServiceContext } from '../../src/services';
import { setPagingHeaders } from './paging';
import { flag } from './query';

/** What a REST handler returns; only `route` writes HTTP (design §7.1). */
export type Reply =
  | { kind: 'json'; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'empty'; status: number }
  | { kind: 'redirect'; location: string }
  | { kind: 'list'; page: Page<unknown>; render: (item: never) => unknown; facetsOnly: boolean }
  /** A body written piece by piece (a file, a whole repository); none for HEAD requests. */
  | {
      kind: 'stream';
      status: number;
      type: string;
      headers?: Record<string, string>;
      body?: (out: Writable) => Promise<void>;
    };

export const ok = (body: unknown): Reply => ({ kind: 'json', status: 200, body });
export const created = (body: unknown, location: string): Reply => ({
  kind: 'json',
  status: 201,
  body,
  headers: { Location: location },
});
export const noContent = (): Reply => ({ kind: 'empty', status: 204 });
export const redirect = (location: string): Reply => ({ kind: 'redirect', location });
export function list<T>(page: Page<T>, render: (item: T) => unknown, req: Request): Reply {
  return { kind: 'list', page, render: render, facetsOnly: flag(req.query.facetsOnly) };
}

export type Handler = (req: Request, ctx: ServiceContext) => Promise<Reply>;

/** Adapts a handler: the request's context in, the reply written out, errors to the error handler. */
export function route(handler: Handler): RequestHandler {
  return async (req, res) => {
    const reply = await handler(req, requestContext(res));
    await write(req, res, reply);
  };
}

async function write(req: Request, res: Response, reply: Reply): Promise<void> {
  switch (reply.kind) {
    case 'empty':
      res.status(reply.status).end();
      return;
    case 'redirect':
      res.redirect(302, reply.location);
      return;
    case 'json':
      for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
      await sendJson(req, res, reply.status, reply.body);
      return;
    case 'list':
      setPagingHeaders(req, res, reply.page);
      await sendJson(req, res, 200, listBody(req, reply));
      return;
    case 'stream':
      for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
      res.status(reply.status).type(reply.type);
      if (req.method === 'HEAD' || !reply.body) {
        res.end();
        return;
      }
      await reply.body(res);
      res.end();
      return;
  }
}

function listBody(req: Request, reply: Extract<Reply, { kind: 'list' }>): unknown {
  const { page } = reply;
  if (reply.facetsOnly) return { facets: { fields: page.facets ?? {} } };
  const results = page.items.map((item) => reply.render(item as never));
  if (!page.facets || !flag(req.get('includeFacets'))) return results;
  return { facets: { fields: page.facets }, results };
}

/** JSON, or with the `compress: true` request header the JSON zipped (spec core §2.1). */
async function sendJson(req: Request, res: Response, status: number, body: unknown): Promise<void> {
  if (!flag(req.get('compress'))) {
    res.status(status).json(body);
    return;
  }
  const zipped = await zipText(JSON.stringify(body));
  res
    .status(status)
    .type('application/zip')
    .setHeader('Content-Disposition', 'attachment; filename="export.zip"');
  res.end(zipped);
}
