import type { Request } from 'express';
import { z } from 'zod';
import { AppError } from '../../src/errors';
import { DEFAULT_LIMIT, type ExtrasFilter, type ListParams } from '../../src/services';

/** `true`/`1`/`yes`, case-insensitive. */
export function flag(value: unknown): boolean {
  return typeof value === 'string' && ['true', '1', 'yes'].includes(value.trim().toLowerCase());
}

/** OCL's `includeSourceVersions` / `includeCollectionVersions` of a version list. */
export function holdersAsked(req: Request): boolean {
  return flag(req.query.includeSourceVersions) || flag(req.query.includeCollectionVersions);
}

/** One query parameter as a string (the first when repeated). */
export function queryString(req: Request, name: string): string | undefined {
  const value = req.query[name];
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** A whole number in a query string, from `min` to a billion. */
function wholeNumberText(name: string, min: number) {
  const message = `'${name}' must be a whole number of at least ${min}.`;
  return z
    .string()
    .regex(/^\d+$/, message)
    .refine((v) => Number(v) >= min && Number(v) <= 1_000_000_000, message)
    .optional();
}

/**
 * The query parameters every list reads (spec core §2.1); `listParams` checks the numbers with
 * it, and the OpenAPI document describes list routes with it. Filters are named per list.
 */
export const LIST_QUERY = z.object({
  q: z.string().optional().describe('Search text.'),
  limit: wholeNumberText('limit', 0).describe(`Items a page (default ${DEFAULT_LIMIT}; 0: all).`),
  page: wholeNumberText('page', 1).describe('The page, from 1.'),
  offset: wholeNumberText('offset', 0).describe('Items to skip (instead of page).'),
  sortAsc: z.string().optional().describe('Sort by this field, ascending.'),
  sortDesc: z.string().optional().describe('Sort by this field, descending (not with sortAsc).'),
  updatedSince: z
    .string()
    .optional()
    .describe('Only items changed since (ISO 8601, or YYYY-MM-DD HH:MM:SS in UTC).'),
  verbose: z.string().optional().describe('true: details instead of summaries.'),
  facetsOnly: z.string().optional().describe('true: only the facets (with includeFacets).'),
});

/**
 * The list parameters of spec core §2.1: `limit` (default 10, 0 = all), `page`, `q`,
 * `sortAsc`/`sortDesc`, `updatedSince`, the named filters (comma = OR) and the
 * `includeFacets` header. A malformed value is a 400.
 */
export function listParams(req: Request, filterNames: string[] = []): ListParams {
  const limit = wholeNumber(req, 'limit', DEFAULT_LIMIT);
  const page = wholeNumber(req, 'page', 1);
  const sortAsc = queryString(req, 'sortAsc');
  const sortDesc = queryString(req, 'sortDesc');
  if (sortAsc && sortDesc)
    throw AppError.field('sortAsc', 'Send either sortAsc or sortDesc, not both.');
  const filters: Record<string, string[]> = {};
  for (const name of filterNames) {
    const raw = queryString(req, name);
    const values = raw
      ?.split(',')
      .map((v) => v.trim())
      .filter((v) => v.length > 0);
    if (values && values.length > 0) filters[name] = values;
  }
  const q = queryString(req, 'q')?.trim();
  const updatedSince = queryString(req, 'updatedSince');
  // spec operations §4.10: `offset` counts items (synchronization pages); else `page` does.
  const offset = queryString(req, 'offset')
    ? wholeNumber(req, 'offset', 0)
    : limit > 0
      ? (page - 1) * limit
      : 0;
  return {
    q: q ? q : undefined,
    sortField: sortDesc ?? sortAsc,
    sortDesc: sortDesc !== undefined,
    limit,
    offset,
    filters,
    updatedSince: updatedSince ? parseTimestamp(updatedSince, 'updatedSince') : undefined,
    includeFacets: flag(req.get('includeFacets')) || flag(req.query.facetsOnly),
    extras: extrasFilter(req),
    allVersions: flag(req.query.allVersions),
    verbose: flag(req.query.verbose),
  };
}

/**
 * `extras.<name>=v` filters (spec operations §4.9): space = OR, repeated = AND, `*` wildcards,
 * leading `!` negates, `extras.exists=a,b`; and the older `extras__a__b=v1,v2` (`!=` negates).
 * A dot or `__` in a name reaches into nested attributes.
 */
function extrasFilter(req: Request): ExtrasFilter | undefined {
  const filter: ExtrasFilter = { conditions: [], exists: [] };
  for (const [key, raw] of Object.entries(req.query as Record<string, unknown>)) {
    const values = (Array.isArray(raw) ? raw : [raw]).filter(
      (v): v is string => typeof v === 'string',
    );
    if (key === 'extras.exists') {
      for (const names of values) {
        for (const name of names
          .split(',')
          .map((n) => n.trim())
          .filter(Boolean)) {
          filter.exists.push(name.split('.'));
        }
      }
    } else if (key.startsWith('extras.') && key.length > 'extras.'.length) {
      const path = key.slice('extras.'.length).split('.');
      for (const value of values) {
        const negate = value.startsWith('!');
        const alternatives = (negate ? value.slice(1) : value).split(' ').filter(Boolean);
        if (alternatives.length > 0) filter.conditions.push({ path, values: alternatives, negate });
      }
    } else if (key.startsWith('extras__') && key.length > 'extras__'.length) {
      const negate = key.endsWith('!');
      const path = key.slice('extras__'.length).replace(/!$/, '').split('__');
      for (const value of values) {
        const alternatives = value
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean);
        if (alternatives.length > 0) filter.conditions.push({ path, values: alternatives, negate });
      }
    }
  }
  return filter.conditions.length || filter.exists.length ? filter : undefined;
}

function wholeNumber(req: Request, name: 'limit' | 'page' | 'offset', fallback: number): number {
  const raw = queryString(req, name);
  if (raw === undefined || raw === '') return fallback;
  const checked = LIST_QUERY.shape[name].safeParse(raw);
  if (!checked.success) throw AppError.field(name, checked.error.issues[0].message);
  return Number(raw);
}

/**
 * ISO 8601, `YYYY-MM-DD HH:MM:SS` as OCL documents it, or the `YYYY-MM-DD_HHMMSS` of export file
 * names (spec operations §4.10 step 3); a zone-less time is UTC.
 */
export function parseTimestamp(raw: string, field: string): Date {
  const stamp = /^(\d{4}-\d{2}-\d{2})_(\d{2})(\d{2})(\d{2})$/.exec(raw.trim());
  const text = stamp
    ? `${stamp[1]}T${stamp[2]}:${stamp[3]}:${stamp[4]}`
    : raw.trim().replace(' ', 'T');
  const withZone = /([zZ]|[+-]\d\d:?\d\d)$/.test(text) || !text.includes('T') ? text : `${text}Z`;
  const date = /^\d{4}-\d{2}-\d{2}/.test(text) ? new Date(withZone) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) {
    throw AppError.field(field, `'${raw}' is not a date; use ISO 8601, e.g. 2024-01-31T12:00:00Z.`);
  }
  return date;
}

/** A path parameter as one string. */
export function param(req: Request, name: string): string {
  const value: unknown = req.params[name];
  return Array.isArray(value) ? value.join('/') : String(value);
}
