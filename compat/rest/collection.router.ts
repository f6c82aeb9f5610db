import { Router, type Request } from 'express';
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
  onlyMethods,
  param,
  queryString,
  route,
} from '../http';
import { addedJson, expansionJson, referenceJson } from './collection.mapper';
import { conceptDetail } from './concept.mapper';
import { conceptListReply } from './concept.router';
import { mappingDetail } from './mapping.mapper';
import { mappingListReply } from './mapping.router';
import { OWNER_PREFIXES } from './owners';
import { taskAccepted } from './task.mapper';

const CONCEPT_FILTERS = ['conceptClass', 'datatype', 'locale', 'includeRetired'];
const MAPPING_FILTERS = ['mapType', 'includeRetired', 'fromConcept', 'toConcept'];
const REFERENCE_FILTERS = ['include', 'resourceType'];

/**
 * spec operations §1.1, §4.1 and OCL's reference endpoints: a collection's references, its
 * expansions, and the concepts and mappings they hold. Mounted before the repository routes,
 * whose `:version` segment would otherwise take `references` and `expansions`.
 */
export function collectionRouter(services: Services): Router {
  const { collections } = services;
  const router = Router();

  for (const owner of OWNER_PREFIXES) {
    const base = `${owner.prefix}/collections/:collection`;
    const at = (req: Request): RepoRef => ({
      owner: owner.ref(req),
      kind: 'collection',
      id: param(req, 'collection'),
      version: req.params.version === undefined ? undefined : param(req, 'version'),
    });

    // References: changed in HEAD, read at any version.
    router
      .route(`${base}/references/`)
      .get(route(async (req, ctx) => referenceList(req, ctx, at(req))))
      .put(
        route(async (req, ctx) => {
          // OCL: large adds run as a task; `async=true` answers 202 at once.
          const outcome = await collections.addReferencesOrQueue(ctx, at(req), req.body, {
            cascade: queryString(req, 'cascade') ?? null,
            background: flag(req.query.async),
          });
          return 'results' in outcome
            ? ok(outcome.results.map(addedJson))
            : taskAccepted(outcome.task);
        }),
      )
      .delete(
        route(async (req, ctx) => {
          await collections.removeReferences(ctx, at(req), req.body);
          return noContent();
        }),
      )
      .all(onlyMethods('GET', 'PUT', 'DELETE'));
    router
      .route(`${base}/references/:reference/`)
      .get(
        route(async (req, ctx) =>
          ok(referenceJson(await collections.getReference(ctx, at(req), param(req, 'reference')))),
        ),
      )
      .delete(
        route(async (req, ctx) => {
          await collections.removeReference(ctx, at(req), param(req, 'reference'));
          return noContent();
        }),
      )
      .all(onlyMethods('GET', 'DELETE'));
    router
      .route(`${base}/:version/references/`)
      .get(route(async (req, ctx) => referenceList(req, ctx, at(req))))
      .all(onlyMethods('GET'));
    router
      .route(`${base}/:version/references/:reference/`)
      .get(
        route(async (req, ctx) =>
          ok(referenceJson(await collections.getReference(ctx, at(req), param(req, 'reference')))),
        ),
      )
      .all(onlyMethods('GET'));

    // Expansions: across versions, or of one version (HEAD included).
    router
      .route(`${base}/expansions/`)
      .get(route(async (req, ctx) => expansionList(req, ctx, at(req))))
      .all(onlyMethods('GET'));
    router
      .route(`${base}/:version/expansions/`)
      .get(route(async (req, ctx) => expansionList(req, ctx, at(req))))
      .post(
        route(async (req, ctx) => {
          const view = await collections.createExpansion(ctx, at(req), bodyOf(req));
          const body = expansionJson(view) as { url: string };
          return created(body, body.url);
        }),
      )
      .all(onlyMethods('GET', 'POST'));
    const expansionPath = `${base}/:version/expansions/:expansion/`;
    router
      .route(expansionPath)
      .get(
        route(async (req, ctx) => {
          const view = await collections.expansionDetail(ctx, at(req), param(req, 'expansion'));
          return ok(
            expansionJson(view, { summary: view.summary, verbose: flag(req.query.verbose) }),
          );
        }),
      )
      .delete(
        route(async (req, ctx) => {
          await collections.deleteExpansion(ctx, at(req), param(req, 'expansion'));
          return noContent();
        }),
      )
      .all(onlyMethods('GET', 'DELETE'));
    // The concepts and mappings of an expansion, or of a collection version (its default
    // expansion).
    const expansionOf = (req: Request): string | undefined =>
      req.params.expansion === undefined ? undefined : param(req, 'expansion');
    for (const path of [expansionPath, `${base}/`, `${base}/:version/`]) {
      router
        .route(`${path}concepts/`)
        .get(
          route(async (req, ctx) =>
            conceptListReply(
              req,
              await collections.listConcepts(
                ctx,
                at(req),
                listParams(req, CONCEPT_FILTERS),
                expansionOf(req),
              ),
            ),
          ),
        )
        .all(onlyMethods('GET'));
      router
        .route(`${path}mappings/`)
        .get(
          route(async (req, ctx) =>
            mappingListReply(
              req,
              await collections.listMappings(
                ctx,
                at(req),
                listParams(req, MAPPING_FILTERS),
                expansionOf(req),
              ),
            ),
          ),
        )
        .all(onlyMethods('GET'));
      // One member by its id (oclweb3 opens a collection's concept or mapping this way), with
      // the references that brought it in when `includeReferences=true`.
      router
        .route(`${path}concepts/:concept/`)
        .get(
          route(async (req, ctx) => {
            const { view, references } = await collections.memberConcept(
              ctx,
              at(req),
              param(req, 'concept'),
              expansionOf(req),
            );
            return ok(withReferences(req, conceptDetail(view, view.versionCount ?? 0), references));
          }),
        )
        .all(onlyMethods('GET'));
      router
        .route(`${path}mappings/:mapping/`)
        .get(
          route(async (req, ctx) => {
            const { item, references } = await collections.memberMapping(
              ctx,
              at(req),
              param(req, 'mapping'),
              expansionOf(req),
            );
            const body = mappingDetail(item.view, item.ends, item.versionCount ?? 0);
            return ok(withReferences(req, body, references));
          }),
        )
        .all(onlyMethods('GET'));
    }
  }

  async function referenceList(req: Request, ctx: ServiceContext, ref: RepoRef) {
    const page = await collections.listReferences(ctx, ref, listParams(req, REFERENCE_FILTERS));
    return list(page, referenceJson, req);
  }

  async function expansionList(req: Request, ctx: ServiceContext, ref: RepoRef) {
    const page = await collections.listExpansions(ctx, ref, listParams(req), {
      summaries: flag(req.query.includeSummary),
    });
    const verbose = flag(req.query.verbose);
    return list(
      page,
      (view: ExpansionDetail) => expansionJson(view, { summary: view.summary, verbose }),
      req,
    );
  }

  return router;
}

/** A member's detail, with the references that brought it in on `includeReferences=true`. */
function withReferences(req: Request, body: object, references: ReferenceView[]): object {
  return flag(req.query.includeReferences)
    ? { ...body, references: references.map(referenceJson) }
    : body;
}
