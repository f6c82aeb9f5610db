import type { Request, Response } from 'express';
import { baseUrlOf } from '../../src/context';
import type { Page } from '../../src/services';

/**
 * spec core §2.1 paging headers; `next`/`previous` are absolute URLs. A list counted only up to
 * its cap (`LIST_COUNT_CAP`) says so as Elasticsearch does: `num_found` is the cap and
 * `num_found_relation: gte` (at least that many; `pages` likewise); `next` then follows from
 * whether items follow this page.
 */
export function setPagingHeaders(req: Request, res: Response, page: Page<unknown>): void {
  const { total, limit, offset } = page;
  const pageNumber = limit > 0 ? Math.floor(offset / limit) + 1 : 1;
  const pages = limit > 0 ? Math.ceil(total / limit) : total > 0 ? 1 : 0;
  res.setHeader('num_found', String(total));
  if (page.totalExact === false) res.setHeader('num_found_relation', 'gte');
  res.setHeader('num_returned', String(page.items.length));
  res.setHeader('offset', String(offset));
  res.setHeader('pages', String(pages));
  res.setHeader('page_number', String(pageNumber));
  const link = (n: number): string => {
    const url = new URL(req.originalUrl, baseUrlOf(req));
    url.searchParams.set('page', String(n));
    return url.toString();
  };
  const more = page.totalExact === false ? page.hasNextPage === true : offset + limit < total;
  if (limit > 0 && more) res.setHeader('next', link(pageNumber + 1));
  if (limit > 0 && pageNumber > 1) res.setHeader('previous', link(pageNumber - 1));
}
