import type { Request } from 'express';
import type { ConceptView, MappingItem, Page, ServiceContext, Services } from '../../src/services';
import { z } from 'zod';
import {
  bodyOf,
  created,
  flag,
  LIST_QUERY,
  holdersAsked,
  list,
  listParams,
  noContent,
  ok,
  param,
  type Reply,
} from '../http';
import {
  conceptDetail,
  conceptDetailOf,
  conceptItem,
  conceptItemUrl,
  conceptSummary,
  conceptVersionEntry,
} from './concept.mapper';
import { mappingSummary } from './mapping.mapper';
import { optionalParam, repoOf } from './owners';
import { handlers } from './table';

const FILTERS = ['conceptClass', 'datatype', 'locale', 'includeRetired'];

/** Concept lists bring each concept's mappings along when asked (spec core §4.3). */
export const CONCEPTS_QUERY = LIST_QUERY.extend({
  includeMappings: z
    .string()
    .optional()
    .describe('true: each concept with the mappings its source holds from it (default false).'),
  includeInverseMappings: z
    .string()
    .optional()
    .describe('true: each concept with the mappings its source holds to it (default false).'),
});

/** A source's concept list also answers a hierarchy view's first level. */
export const SOURCE_CONCEPTS_QUERY = CONCEPTS_QUERY.extend({
  onlyHierarchyRoot: z
    .string()
    .optional()
    .describe("true: only the source's hierarchy root, telling has_children (none without one)."),
});
/** `/concepts/` also narrows by source id, owner username or org id (spec core §4.3). */
const GLOBAL_FILTERS = [...FILTERS, 'source', 'user', 'org', 'mapcode'];

/**
 * spec core §4.3: concepts of a source, at HEAD or as of a source version; edits go to HEAD and
 * are refused through a version path (the service answers 405).
 */
export function conceptHandlers(services: Services) {
  const { concepts } = services;
  const edit =
    (mode: 'partial' | 'replace') =>
    async (req: Request, ctx: Parameters<typeof concepts.update>[0]): Promise<Reply> =>
      ok(
        conceptDetailOf(
          await concepts.update(ctx, repoOf(req), param(req, 'concept'), bodyOf(req), mode),
        ),
      );
  return handlers({
    listPublic: async (req, ctx) =>
      conceptListReply(
        req,
        ctx,
        services,
        await concepts.listPublic(ctx, listParams(req, GLOBAL_FILTERS)),
      ),
    list: async (req, ctx) =>
      conceptListReply(
        req,
        ctx,
        services,
        await concepts.list(ctx, repoOf(req), listParams(req, FILTERS), {
          onlyHierarchyRoot: flag(req.query.onlyHierarchyRoot),
        }),
      ),
    // OCL answers a hierarchy level as a plain array (the web client reads it so), paged by headers.
    children: async (req, ctx) =>
      conceptListReply(
        req,
        ctx,
        services,
        await concepts.children(ctx, repoOf(req), param(req, 'concept'), listParams(req, FILTERS)),
      ),
    parents: async (req, ctx) =>
      conceptListReply(
        req,
        ctx,
        services,
        await concepts.parents(ctx, repoOf(req), param(req, 'concept'), listParams(req, FILTERS)),
      ),
    create: async (req, ctx) => {
      const made = await concepts.create(ctx, repoOf(req), bodyOf(req));
      return created(conceptDetailOf(made), (conceptSummary(made.view) as { url: string }).url);
    },
    history: async (req, ctx) =>
      list(
        await services.summaries.conceptHistory(
          ctx,
          repoOf(req),
          param(req, 'concept'),
          listParams(req),
          holdersAsked(req),
        ),
        conceptVersionEntry,
        req,
      ),
    reactivate: async (req, ctx) => {
      await concepts.reactivate(ctx, repoOf(req), param(req, 'concept'));
      return noContent();
    },
    get: async (req, ctx) => {
      const include = {
        mappings: req.query.includeMappings === undefined || flag(req.query.includeMappings),
        inverseMappings: flag(req.query.includeInverseMappings),
      };
      return ok(
        conceptDetailOf(
          await concepts.detail(ctx, repoOf(req), param(req, 'concept'), undefined, include),
        ),
      );
    },
    update: edit('partial'),
    replace: edit('replace'),
    retire: async (req, ctx) => {
      const body = bodyOf(req);
      await concepts.retire(
        ctx,
        repoOf(req),
        param(req, 'concept'),
        body.updateComment ?? body.comment,
      );
      return noContent();
    },
    getVersion: async (req, ctx) =>
      ok(
        conceptDetailOf(
          await concepts.detail(
            ctx,
            repoOf(req),
            param(req, 'concept'),
            param(req, 'conceptVersion'),
          ),
        ),
      ),
  });
}

/**
 * Names and descriptions (spec core §2.6): read at the concept's latest version or at one of its
 * versions (`:conceptVersion`); written only at the latest (the table has no writes at versions).
 */
export function conceptItemHandlers(services: Services, part: 'names' | 'descriptions') {
  const { concepts } = services;
  return handlers({
    list: async (req, ctx) => {
      const view = await concepts.get(
        ctx,
        repoOf(req),
        param(req, 'concept'),
        optionalParam(req, 'conceptVersion'),
      );
      return ok(view.version[part].map((item) => conceptItem(part, item)));
    },
    get: async (req, ctx) => {
      const { item } = await concepts.getItem(
        ctx,
        repoOf(req),
        param(req, 'concept'),
        part,
        param(req, 'uuid'),
        optionalParam(req, 'conceptVersion'),
      );
      return ok(conceptItem(part, item));
    },
    add: async (req, ctx) => {
      const view = await concepts.addItem(
        ctx,
        repoOf(req),
        param(req, 'concept'),
        part,
        bodyOf(req),
      );
      return created(conceptItem(part, view.item), conceptItemUrl(view, part, view.item.uuid));
    },
    update: async (req, ctx) => {
      const view = await concepts.updateItem(
        ctx,
        repoOf(req),
        param(req, 'concept'),
        part,
        param(req, 'uuid'),
        bodyOf(req),
      );
      return ok(conceptItem(part, view.item));
    },
    remove: async (req, ctx) => {
      await concepts.removeItem(ctx, repoOf(req), param(req, 'concept'), part, param(req, 'uuid'));
      return noContent();
    },
  });
}

/** A concept's extras (operations §4.9): each change is a new concept version. */
export function conceptExtrasHandlers(services: Services) {
  const { concepts } = services;
  return handlers({
    list: async (req, ctx) => {
      const view = await concepts.get(
        ctx,
        repoOf(req),
        param(req, 'concept'),
        optionalParam(req, 'conceptVersion'),
      );
      return ok(view.version.extras ?? {});
    },
    get: async (req, ctx) => {
      const name = param(req, 'name');
      const value = await concepts.getExtra(
        ctx,
        repoOf(req),
        param(req, 'concept'),
        name,
        optionalParam(req, 'conceptVersion'),
      );
      return ok({ [name]: value });
    },
    set: async (req, ctx) => {
      const name = param(req, 'name');
      // The raw body: `bodyOf` would rename a snake_case attribute.
      const view = await concepts.setExtra(ctx, repoOf(req), param(req, 'concept'), name, req.body);
      return ok({ [name]: view.version.extras?.[name] });
    },
    remove: async (req, ctx) => {
      await concepts.removeExtra(ctx, repoOf(req), param(req, 'concept'), param(req, 'name'));
      return noContent();
    },
  });
}

/**
 * Summaries, or details with `verbose=true` (the list read their version counts); with
 * `includeMappings` / `includeInverseMappings` (spec core §4.3: off by default, verbose or not)
 * each item also carries the mappings its source holds from it / to it, read for the whole page
 * at once.
 */
export async function conceptListReply(
  req: Request,
  ctx: ServiceContext,
  services: Services,
  page: Page<ConceptView>,
): Promise<Reply> {
  const render = flag(req.query.verbose)
    ? (view: ConceptView): object => conceptDetail(view, view.versionCount ?? 0)
    : conceptSummary;
  const itemsOf = async (asked: unknown, inverse: boolean): Promise<MappingItem[][] | undefined> =>
    flag(asked) ? services.mappings.itemsOfConcepts(ctx, page.items, inverse) : undefined;
  const [mappings, inverse] = await Promise.all([
    itemsOf(req.query.includeMappings, false),
    itemsOf(req.query.includeInverseMappings, true),
  ]);
  if (!mappings && !inverse) return list(page, render, req);
  const at = new Map(page.items.map((view, i) => [view, i]));
  const summaries = (items: MappingItem[]): object[] =>
    items.map(({ view, ends }) => mappingSummary(view, ends));
  return list(
    page,
    (view: ConceptView) => {
      const i = at.get(view)!;
      return {
        ...render(view),
        ...(mappings ? { mappings: summaries(mappings[i]) } : {}),
        ...(inverse ? { inverse_mappings: summaries(inverse[i]) } : {}),
      };
    },
    req,
  );
}
