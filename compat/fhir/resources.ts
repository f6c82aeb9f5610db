import crypto from 'node:crypto';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { baseUrlOf, requestContext } from '../../src/context';
import { AppError } from '../../src/errors';
import type { OwnerRef, ServiceContext, Services, TaskView } from '../../src/services';
import type {
  FhirNamespace,
  FhirResourceType,
  FhirResult,
  FhirSearchInput,
  FhirTarget,
  StoredResource,
} from '../../src/services/terminology/fhir-resource.service';
import { param, queryString } from '../http';

const TYPES: FhirResourceType[] = ['CodeSystem', 'ValueSet', 'ConceptMap'];

/** The owner namespaces of spec operations §4.7. */
const OWNERS: Array<{ prefix: string; ref: (req: Request) => OwnerRef }> = [
  { prefix: '/orgs/:org', ref: (req) => ({ type: 'org', id: param(req, 'org') }) },
  { prefix: '/users/:user', ref: (req) => ({ type: 'user', username: param(req, 'user') }) },
];

/** The element of each type that holds its content (concepts, members, mappings). */
const CONTENT: Record<FhirResourceType, string> = {
  CodeSystem: 'concept',
  ValueSet: 'compose',
  ConceptMap: 'group',
};

/** Elements every resource keeps whatever `_elements` or `_summary` leave out. */
const MANDATORY = ['resourceType', 'id', 'meta'];

/** FHIR's tag of a resource that does not hold all its elements. */
const SUBSETTED = {
  system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationValue',
  code: 'SUBSETTED',
  display: 'Resource encoded in summary mode',
};

/**
 * The FHIR-format resource endpoints (spec operations §2.8, §4.7): sources read as CodeSystem and
 * ConceptMap, collections as ValueSet, under `/fhir/` (server-wide ids, see `globalIdOf`) and in
 * the owner namespaces; creates, updates and deletes. Paths are given in full; operations (`$…`) are routed elsewhere, before
 * this router, and are passed on if they reach it. Errors are AppErrors, for the FHIR error
 * handler to answer as OperationOutcomes.
 */
export function fhirResourceRouter(services: Services): Router {
  const resources = services.fhirResources;
  const router = Router();

  for (const type of TYPES) {
    // spec operations §4.7: create in the global namespace (owner and id from the accession
    // identifier) or in an owner's.
    const create = (namespace: (req: Request) => FhirNamespace): RequestHandler =>
      handle(async (req, ctx) => {
        const made = await resources.create(ctx, type, namespace(req), req.body);
        if ('task' in made) return { status: 202, task: made.task };
        return { status: 201, location: made.location, body: made.resource };
      });
    router.post(
      `/fhir/${type}`,
      create(() => ({ kind: 'global' })),
    );
    for (const owner of OWNERS) {
      router.post(
        `${owner.prefix}/${type}`,
        create((req) => ({ kind: 'owner', owner: owner.ref(req) })),
      );
    }
    // Updates and deletes by server-wide id and in the owner namespaces.
    const update = (target: (req: Request) => FhirTarget): RequestHandler =>
      handle(async (req, ctx) => {
        const written = await resources.update(ctx, type, target(req), req.body);
        return 'task' in written ? { status: 202, task: written.task } : written.resource;
      });
    const remove = (target: (req: Request) => FhirTarget): RequestHandler =>
      handle(async (req, ctx) => {
        await resources.remove(ctx, type, target(req));
        return NO_CONTENT;
      });
    const global = (req: Request): FhirTarget => ({ kind: 'global', id: param(req, 'id') });
    router.put(`/fhir/${type}/:id`, update(global));
    router.delete(`/fhir/${type}/:id`, remove(global));
    for (const owner of OWNERS) {
      const target = (req: Request): FhirTarget => ({
        kind: 'owner',
        owner: owner.ref(req),
        id: param(req, 'id'),
      });
      router.put(`${owner.prefix}/${type}/:id`, update(target));
      router.delete(`${owner.prefix}/${type}/:id`, remove(target));
    }
    router.get(
      `/fhir/${type}`,
      handle(async (req, ctx) => {
        const view = viewOf(req, type);
        const result = await resources.search(ctx, type, { kind: 'global' }, view.search);
        return bundle(req, type, result, view);
      }),
    );
    router.get(
      `/fhir/${type}/:id`,
      handle(async (req, ctx) => {
        const view = viewOf(req, type);
        const read = await resources.readById(ctx, type, param(req, 'id'), view.search.page);
        return view.shape(read.resource);
      }),
    );

    for (const owner of OWNERS) {
      const base = `${owner.prefix}/${type}`;
      router.get(
        base,
        handle(async (req, ctx) => {
          const view = viewOf(req, type);
          const namespace = { kind: 'owner', owner: owner.ref(req) } as const;
          return bundle(req, type, await resources.search(ctx, type, namespace, view.search), view);
        }),
      );
      // spec operations §2.8: version-less, the latest released version; none released, an
      // empty searchset.
      router.get(
        `${base}/:id`,
        handle(async (req, ctx) => {
          const view = viewOf(req, type);
          const read = await resources.read(
            ctx,
            type,
            owner.ref(req),
            param(req, 'id'),
            undefined,
            view.search.page,
          );
          if (read) return view.shape(read.resource);
          return bundle(
            req,
            type,
            { resources: [], total: 0, pages: 'entries', page: 1, more: false },
            view,
          );
        }),
      );
      const versions = handle(async (req, ctx) => {
        const view = viewOf(req, type);
        const { count, page, countOnly } = view.search;
        const result = await resources.versions(ctx, type, owner.ref(req), param(req, 'id'), {
          count,
          page,
          countOnly,
        });
        return bundle(req, type, result, view);
      });
      router.get(`${base}/:id/version`, versions);
      router.get(
        `${base}/:id/version/:version`,
        handle(async (req, ctx) => {
          const version = param(req, 'version');
          if (version === '*') return versions;
          const view = viewOf(req, type);
          const read = await resources.read(
            ctx,
            type,
            owner.ref(req),
            param(req, 'id'),
            version,
            view.search.page,
          );
          return view.shape(read!.resource);
        }),
      );
    }
  }
  return router;
}

/** A resource made: 201 with its `Location`. */
interface Created {
  status: 201;
  location: string;
  body: object;
}

/**
 * A write too large for its request (see `FHIR_TASK_THRESHOLD`): 202 with an OperationOutcome
 * naming the task, and where its progress and outcome are read (`/tasks/:id/`, as for REST's
 * tasks; FHIR's asynchronous pattern names it `Content-Location`).
 */
interface Queued {
  status: 202;
  task: TaskView;
}

/** A resource removed: 204 without a body. */
const NO_CONTENT = { status: 204 } as const;

/** What a handler answers: a resource to send, or another handler to pass the request to. */
type Answer = object | Created | Queued | typeof NO_CONTENT | RequestHandler;

/**
 * Adapts a handler: the request's context in, the resource written out (`application/fhir+json`),
 * errors to the error handler. A path segment starting with `$` is an operation: passed on.
 */
function handle(handler: (req: Request, ctx: ServiceContext) => Promise<Answer>): RequestHandler {
  return async (req, res, next) => {
    if (Object.values(req.params).some((v) => typeof v === 'string' && v.startsWith('$'))) {
      next();
      return;
    }
    const answer = await handler(req, requestContext(res));
    if (typeof answer === 'function') {
      await (answer as RequestHandler)(req, res, next);
      return;
    }
    if (answer === NO_CONTENT) {
      res.status(204).end();
      return;
    }
    if (isQueued(answer)) {
      const url = `/tasks/${encodeURIComponent(answer.task.id)}/`;
      res.setHeader('Location', url);
      res.setHeader('Content-Location', url);
      send(res, 202, {
        resourceType: 'OperationOutcome',
        issue: [
          {
            severity: 'information',
            code: 'informational',
            diagnostics: `The write runs as task ${answer.task.id}; its state and outcome are read at ${url}`,
          },
        ],
      });
      return;
    }
    if (isCreated(answer)) {
      res.setHeader('Location', answer.location);
      send(res, 201, answer.body);
      return;
    }
    send(res, 200, answer);
  };
}

function isQueued(answer: object): answer is Queued {
  return 'status' in answer && answer.status === 202 && 'task' in answer;
}

function isCreated(answer: object): answer is Created {
  return 'status' in answer && answer.status === 201 && 'location' in answer;
}

function send(res: Response, status: number, body: unknown): void {
  res.status(status).type('application/fhir+json; charset=utf-8').send(JSON.stringify(body));
}

/** How a request wants its resources: the search, and what of each resource to show. */
interface View {
  search: FhirSearchInput;
  definitionsOnly: boolean;
  /** The resource as `_summary` / `_elements` ask. */
  shape: (resource: StoredResource) => object;
}

const SUMMARIES = ['true', 'false', 'count', 'text', 'data'];

/** The search parameters of spec operations §4.7 and FHIR's `_count`, `_summary`, `_elements`. */
function viewOf(req: Request, type: FhirResourceType): View {
  const summary = queryString(req, '_summary');
  if (summary !== undefined && !SUMMARIES.includes(summary)) {
    throw AppError.field('_summary', `Must be one of ${SUMMARIES.join(', ')}.`);
  }
  const elementsParam = queryString(req, '_elements');
  const elements = elementsParam
    ?.split(',')
    .map((e) => e.trim())
    .filter((e) => e.length > 0);
  const content = CONTENT[type];
  const definitionsOnly =
    summary === 'true' ||
    summary === 'count' ||
    (elements !== undefined && !elements.includes(content));
  const ids = listOf(req, '_id');
  const search: FhirSearchInput = {
    url: queryString(req, 'url'),
    version: queryString(req, 'version'),
    name: queryString(req, 'name'),
    title: queryString(req, 'title'),
    status: queryString(req, 'status'),
    ids: ids.length > 0 ? ids : undefined,
    count: wholeNumber(req, '_count'),
    page: wholeNumber(req, 'page'),
    countOnly: summary === 'count',
    definitionsOnly,
  };
  const shape = (resource: StoredResource): object => {
    if (elements !== undefined) {
      const kept = Object.fromEntries(
        Object.entries(resource).filter(([k]) => MANDATORY.includes(k) || elements.includes(k)),
      );
      return subsetted(kept);
    }
    if (summary === 'true') {
      const { [content]: _content, ...rest } = resource as Record<string, unknown>;
      void _content;
      return subsetted(rest);
    }
    return resource;
  };
  return { search, definitionsOnly, shape };
}

function subsetted(resource: Record<string, unknown>): object {
  const meta = (resource.meta ?? {}) as Record<string, unknown>;
  const tags = Array.isArray(meta.tag) ? (meta.tag as unknown[]) : [];
  return { ...resource, meta: { ...meta, tag: [...tags, SUBSETTED] } };
}

/** A searchset Bundle (spec operations §2.8) with `self`, and `prev`/`next` where they exist. */
function bundle(req: Request, type: FhirResourceType, result: FhirResult, view: View): object {
  const base = baseUrlOf(req);
  const at = (page: number): string => {
    const url = new URL(req.originalUrl, base);
    url.searchParams.set('page', String(page));
    return url.toString();
  };
  const link = [{ relation: 'self', url: new URL(req.originalUrl, base).toString() }];
  if (result.page > 1) link.push({ relation: 'prev', url: at(result.page - 1) });
  if (result.more) link.push({ relation: 'next', url: at(result.page + 1) });
  const global = req.path.startsWith('/fhir/');
  return {
    resourceType: 'Bundle',
    id: crypto.randomUUID(),
    meta: { lastUpdated: new Date().toISOString() },
    type: 'searchset',
    total: result.total,
    link,
    ...(view.search.countOnly
      ? {}
      : {
          entry: result.resources.map((resource) => ({
            fullUrl: global
              ? `${base}/fhir/${type}/${resource.id}`
              : `${base}${accessionOf(resource) ?? ''}`,
            resource: view.shape(resource),
            search: { mode: 'match' },
          })),
        }),
  };
}

/** The resource URI its accession identifier holds. */
function accessionOf(resource: StoredResource): string | undefined {
  const identifier = Array.isArray(resource.identifier)
    ? resource.identifier[0]
    : resource.identifier;
  const value = identifier?.value;
  return typeof value === 'string' ? value : undefined;
}

/** Every value of a token parameter, repeated or comma-separated. */
function listOf(req: Request, name: string): string[] {
  const raw = req.query[name];
  const values = (Array.isArray(raw) ? raw : [raw]).filter(
    (v): v is string => typeof v === 'string',
  );
  return values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v.length > 0);
}

function wholeNumber(req: Request, name: string): number | undefined {
  const raw = queryString(req, name);
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d{1,9}$/.test(raw)) throw AppError.field(name, `'${name}' must be a whole number.`);
  return Number(raw);
}
