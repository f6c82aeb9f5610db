import type { Request } from 'express';
import { z } from 'zod';
import { AppError } from '../../src/errors';
import { changelogMarkdown, type Services } from '../../src/services';
import { bodyOf, ok, queryString } from '../http';
import { changelogJson, comparisonJson, VERBOSITY } from './compare.mapper';
import { handlers } from './table';

/** The query of `$compare` and `$changelog` (both also read `verbosity` from the body). */
export const COMPARE_QUERY = z.object({
  verbosity: z
    .string()
    .optional()
    .describe(
      '0: counts; 1: and the unchanged; 2: and the changed ids; 3: and the unchanged ids; 4 ($changelog): names, descriptions and former values.',
    ),
  output: z
    .string()
    .optional()
    .describe('$changelog: `markdown` adds a release note (`markdown`).'),
});

/** `verbosity` 0–4, from the query or the body (as OCL reads it); anything else is a 400. */
function verbosityOf(req: Request): number {
  const raw = queryString(req, 'verbosity') ?? bodyOf(req).verbosity;
  if (raw === undefined || raw === null || raw === '') return 0;
  const value =
    typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw.trim()) : Number.NaN;
  if (!Number.isInteger(value) || value < 0 || value > VERBOSITY.enriched) {
    throw AppError.field('verbosity', 'Must be a whole number from 0 to 4.');
  }
  return value;
}

function outputOf(req: Request): 'json' | 'markdown' {
  const output = queryString(req, 'output') ?? 'json';
  if (output !== 'json' && output !== 'markdown') {
    throw AppError.field('output', 'Must be json or markdown.');
  }
  return output;
}

/**
 * OCL's `POST /sources/$compare/` and `POST /sources/$changelog/` (oclapi2 `core/sources`): two
 * versions of one source, named by their URLs (`version1`, `version2`, in either order), compared.
 */
export function compareHandlers(services: Services) {
  const { versionComparisons } = services;
  return handlers({
    compare: async (req, ctx) => {
      const verbosity = verbosityOf(req);
      const comparison = await versionComparisons.compare(ctx, bodyOf(req), {
        sameCodes: verbosity >= VERBOSITY.sameCodes,
      });
      return ok(comparisonJson(comparison, verbosity));
    },
    changelog: async (req, ctx) => {
      const verbosity = verbosityOf(req);
      const output = outputOf(req);
      const log = await versionComparisons.changelog(ctx, bodyOf(req));
      const body = changelogJson(log, verbosity);
      if (output === 'markdown') body.markdown = changelogMarkdown(log);
      return ok(body);
    },
  });
}
