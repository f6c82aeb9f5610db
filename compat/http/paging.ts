import type { Request, Response } from 'express';
import { baseUrlOf } from '../../src/context';
import type { Page } from '../../src/services';

/** spec core §2.1 paging headers; `next`/`previous` are absolute URLs. */
export function setPagingHeaders(req: Request, res: Response, page: Page<unknown>): void {
  const { total, limit, offset } = page;
  const pageNumber = limit > 0 ? Math.floor(offset / limit) + 1 : 1;
  const pages = limit > 0 ? Math.ceil(total / limit) : total > 0 ? 1 : 0;
  res.setHeader('num_found', String(total));
  res.setHeader('num_returned', String(page.items.length));
  res.setHeader('offset', String(offset));
  res.setHeader('pages', String(pages));
  res.setHeader('page_number', String(pageNumber));
  const link = (n: number): string => {
    const url = new URL(req.originalUrl, baseUrlOf(req));
    url.searchParams.set('page', String(n));
    return url.toString();
  };
  if (limit > 0 && offset + limit < total) res.setHeader('next', link(pageNumber + 1));
  if (limit > 0 && pageNumber > 1) res.setHeader('previous', link(pageNumber - 1));
}
