import type { Request } from 'express';
import type { MappingItem, Page, Services } from '../../src/services';
import {
  bodyOf,
  created,
  flag,
  holdersAsked,
  list,
  listParams,
  noContent,
  ok,
  param,
  type Reply,
} from '../http';
import {
  mappingDetail,
  mappingDetailOf,
  mappingSummary,
  mappingVersionEntry,
} from './mapping.mapper';
import { repoOf } from './owners';
import { handlers } from './table';

/** spec core §4.4 list filters. */
const FILTERS = [
  'mapType',
  'includeRetired',
  'updatedBy',
  'concept',
  'fromConcept',
  'toConcept',
  'conceptSource',
  'fromConceptSource',
  'toConceptSource',
  'fromConceptOwner',
  'toConceptOwner',
  'fromConceptOwnerType',
  'toConceptOwnerType',
];

/** spec core §4.4: mappings of a source (HEAD or a version), of one concept, and across sources. */
export function mappingHandlers(services: Services) {
  const { mappings } = services;
  return handlers({
    listPublic: async (req, ctx) =>
      mappingListReply(
        req,
        await mappings.listPublic(
          ctx,
          listParams(req, [...FILTERS, 'owner', 'ownerType', 'source']),
        ),
      ),
    list: async (req, ctx) =>
      mappingListReply(req, await mappings.list(ctx, repoOf(req), listParams(req, FILTERS))),
    create: async (req, ctx) => {
      const body = mappingDetailOf(await mappings.create(ctx, repoOf(req), bodyOf(req)));
      return created(body, (body as { url: string }).url);
    },
    ofConcept: async (req, ctx) =>
      mappingListReply(
        req,
        await mappings.listForConcept(
          ctx,
          repoOf(req),
          param(req, 'concept'),
          flag(req.query.includeInverseMappings),
          listParams(req, FILTERS),
        ),
      ),
    history: async (req, ctx) =>
      list(
        await services.summaries.mappingHistory(
          ctx,
          repoOf(req),
          param(req, 'mapping'),
          listParams(req),
          holdersAsked(req),
        ),
        mappingVersionEntry,
        req,
      ),
    reactivate: async (req, ctx) => {
      await mappings.reactivate(ctx, repoOf(req), param(req, 'mapping'));
      return noContent();
    },
    get: async (req, ctx) =>
      ok(mappingDetailOf(await mappings.detail(ctx, repoOf(req), param(req, 'mapping')))),
    update: async (req, ctx) =>
      ok(
        mappingDetailOf(
          await mappings.update(ctx, repoOf(req), param(req, 'mapping'), bodyOf(req)),
        ),
      ),
    retire: async (req, ctx) => {
      const body = bodyOf(req);
      await mappings.retire(
        ctx,
        repoOf(req),
        param(req, 'mapping'),
        body.updateComment ?? body.comment,
      );
      return noContent();
    },
    getVersion: async (req, ctx) =>
      ok(
        mappingDetailOf(
          await mappings.detail(
            ctx,
            repoOf(req),
            param(req, 'mapping'),
            param(req, 'mappingVersion'),
          ),
        ),
      ),
  });
}

/** Summaries, or details with `verbose=true` (the list resolved ends and counted versions). */
export function mappingListReply(req: Request, page: Page<MappingItem>): Reply {
  if (!flag(req.query.verbose)) {
    return list(page, ({ view, ends }: MappingItem) => mappingSummary(view, ends), req);
  }
  return list(
    page,
    ({ view, ends, versionCount }: MappingItem) => mappingDetail(view, ends, versionCount ?? 0),
    req,
  );
}
