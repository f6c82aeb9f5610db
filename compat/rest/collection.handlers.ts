import type { Request } from 'express';
import type {
  ExpansionDetail,
  ReferenceView,
  RepoRef,
  ServiceContext,
  Services,
} from '../../src/services';
import {
  bodyOf,
  created,
  flag,
  list,
  listParams,
  noContent,
  ok,
  param,
  queryString,
} from '../http';
import { addedJson, expansionJson, referenceJson } from './collection.mapper';
import { conceptDetail } from './concept.mapper';
import { conceptListReply } from './concept.handlers';
import { mappingDetail } from './mapping.mapper';
import { mappingListReply } from './mapping.handlers';
import { optionalParam, repoOf } from './owners';
import { handlers } from './table';
import { taskAccepted } from './task.mapper';

const CONCEPT_FILTERS = ['conceptClass', 'datatype', 'locale', 'includeRetired'];
const MAPPING_FILTERS = ['mapType', 'includeRetired', 'fromConcept', 'toConcept'];
const REFERENCE_FILTERS = ['include', 'resourceType'];

/**
 * spec operations §1.1, §4.1 and OCL's reference endpoints: a collection's references (changed
 * in HEAD, read at any version), its expansions, and the concepts and mappings they hold (of an
 * expansion, or of a collection version: its default expansion).
 */
export function collectionHandlers(services: Services) {
  const { collections, references, expansions } = services;

  async function referenceList(req: Request, ctx: ServiceContext, ref: RepoRef) {
    const page = await references.listReferences(ctx, ref, listParams(req, REFERENCE_FILTERS));
    return list(page, referenceJson, req);
  }

  return handlers({
    references: async (req, ctx) => referenceList(req, ctx, repoOf(req)),
    addReferences: async (req, ctx) => {
      // OCL: large adds run as a task; `async=true` answers 202 at once.
      const outcome = await references.addReferencesOrQueue(ctx, repoOf(req), req.body, {
        cascade: queryString(req, 'cascade') ?? null,
        background: flag(req.query.async),
      });
      return 'results' in outcome ? ok(outcome.results.map(addedJson)) : taskAccepted(outcome.task);
    },
    removeReferences: async (req, ctx) => {
      await references.removeReferences(ctx, repoOf(req), req.body);
      return noContent();
    },
    reference: async (req, ctx) =>
      ok(referenceJson(await references.getReference(ctx, repoOf(req), param(req, 'reference')))),
    removeReference: async (req, ctx) => {
      await references.removeReference(ctx, repoOf(req), param(req, 'reference'));
      return noContent();
    },
    expansions: async (req, ctx) => {
      const page = await expansions.listExpansions(ctx, repoOf(req), listParams(req), {
        summaries: flag(req.query.includeSummary),
      });
      const verbose = flag(req.query.verbose);
      return list(
        page,
        (view: ExpansionDetail) => expansionJson(view, { summary: view.summary, verbose }),
        req,
      );
    },
    createExpansion: async (req, ctx) => {
      const view = await expansions.createExpansion(ctx, repoOf(req), bodyOf(req));
      const body = expansionJson(view) as { url: string };
      return created(body, body.url);
    },
    expansion: async (req, ctx) => {
      const view = await expansions.expansionDetail(ctx, repoOf(req), param(req, 'expansion'));
      return ok(expansionJson(view, { summary: view.summary, verbose: flag(req.query.verbose) }));
    },
    /** OCL answers the flag bare (`true`/`false`); the web client polls it. */
    expansionProcessing: async (req, ctx) =>
      ok(await expansions.processing(ctx, repoOf(req), param(req, 'expansion'))),
    /** `{<version URL the expansion resolved>: <what its repository resolves to now>}`, as OCL. */
    expansionRepoUpdates: async (req, ctx) => {
      const updates = await expansions.repoUpdates(ctx, repoOf(req), param(req, 'expansion'));
      return ok(Object.fromEntries(updates.map((u) => [u.resolved, u.latest])));
    },
    /** Evaluated before answering: 200 with the expansion as it now is. */
    reevaluateExpansion: async (req, ctx) =>
      ok(expansionJson(await expansions.reevaluate(ctx, repoOf(req), param(req, 'expansion')))),
    removeExpansion: async (req, ctx) => {
      await expansions.deleteExpansion(ctx, repoOf(req), param(req, 'expansion'));
      return noContent();
    },
    concepts: async (req, ctx) =>
      conceptListReply(
        req,
        ctx,
        services,
        await collections.listConcepts(
          ctx,
          repoOf(req),
          listParams(req, CONCEPT_FILTERS),
          optionalParam(req, 'expansion'),
        ),
      ),
    mappings: async (req, ctx) =>
      mappingListReply(
        req,
        await collections.listMappings(
          ctx,
          repoOf(req),
          listParams(req, MAPPING_FILTERS),
          optionalParam(req, 'expansion'),
        ),
      ),
    // One member by its id (oclweb3 opens a collection's concept or mapping this way), with
    // the references that brought it in when `includeReferences=true`.
    concept: async (req, ctx) => {
      const { view, references } = await collections.memberConcept(
        ctx,
        repoOf(req),
        param(req, 'concept'),
        optionalParam(req, 'expansion'),
      );
      return ok(withReferences(req, conceptDetail(view, view.versionCount ?? 0), references));
    },
    mapping: async (req, ctx) => {
      const { item, references } = await collections.memberMapping(
        ctx,
        repoOf(req),
        param(req, 'mapping'),
        optionalParam(req, 'expansion'),
      );
      const body = mappingDetail(item.view, item.ends, item.versionCount ?? 0);
      return ok(withReferences(req, body, references));
    },
  });
}

/** A member's detail, with the references that brought it in on `includeReferences=true`. */
function withReferences(req: Request, body: object, references: ReferenceView[]): object {
  return flag(req.query.includeReferences)
    ? { ...body, references: references.map(referenceJson) }
    : body;
}
