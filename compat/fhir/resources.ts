import crypto from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
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
import type { FhirRoute } from './routes';

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

/** The owner a route's namespace names (spec operations §4.7). */
function ownerOf(route: FhirRoute, req: Request): OwnerRef {
  return route.namespace === 'org'
    ? { type: 'org', id: param(req, 'org') }
    : { type: 'user', username: param(req, 'user') };
}

/**
 * The FHIR-format resource endpoints (spec operations §2.8, §4.7): sources read as CodeSystem and
 * ConceptMap, collections as ValueSet, under `/fhir/` (server-wide ids, see `globalIdOf`) and in
 * the owner namespaces; creates, updates and deletes. The handler of each resource row of
 * `FHIR_ROUTES`; operations (`$…`) are registered before these rows, and are passed on if they
 * reach one. Errors are AppErrors, for the FHIR error handler to answer as OperationOutcomes.
 */
export function fhirResourceHandler(services: Services): (route: FhirRoute) => RequestHandler {
  const resources = services.fhirResources;
  return (route) => {
    const type = route.type!;
    const global = route.namespace === 'fhir';
    const target = (req: Request): FhirTarget =>
      global
        ? { kind: 'global', id: param(req, 'id') }
        : { kind: 'owner', owner: ownerOf(route, req), id: param(req, 'id') };
    const namespace = (req: Request): FhirNamespace =>
      global ? { kind: 'global' } : { kind: 'owner', owner: ownerOf(route, req) };
    const versions = handle(async (req, ctx) => {
      const view = viewOf(req, type);
      const { count, page, countOnly } = view.search;
      const result = await resources.versions(ctx, type, ownerOf(route, req), param(req, 'id'), {
        count,
        page,
        countOnly,
      });
      return bundle(req, type, result, view);
    });
    switch (route.interaction) {
      // spec operations §4.7: create in the global namespace (owner and id from the accession
      // identifier) or in an owner's.
      case 'create':
        return handle(async (req, ctx) => {
          const made = await resources.create(ctx, type, namespace(req), req.body);
          if ('task' in made) return { status: 202, task: made.task };
          return { status: 201, location: made.location, body: made.resource };
        });
      // Updates and deletes by server-wide id and in the owner namespaces.
      case 'update':
        return handle(async (req, ctx) => {
          const written = await resources.update(ctx, type, target(req), req.body);
          return 'task' in written ? { status: 202, task: written.task } : written.resource;
        });
      case 'delete':
        return handle(async (req, ctx) => {
          await resources.remove(ctx, type, target(req));
          return NO_CONTENT;
        });
      case 'search':
        return handle(async (req, ctx) => {
          const view = viewOf(req, type);
          return bundle(
            req,
            type,
            await resources.search(ctx, type, namespace(req), view.search),
            view,
          );
        });
      case 'read-by-id':
        return handle(async (req, ctx) => {
          const view = viewOf(req, type);
          const read = await resources.readById(ctx, type, param(req, 'id'), view.search.page);
          return view.shape(read.resource);
        });
      // spec operations §2.8: version-less, the latest released version; none released, an
      // empty searchset.
      case 'read':
        return handle(async (req, ctx) => {
          const view = viewOf(req, type);
          const read = await resources.read(
            ctx,
            type,
            ownerOf(route, req),
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
        });
      case 'history':
        return versions;
      case 'version-read':
        return handle(async (req, ctx) => {
          const version = param(req, 'version');
          if (version === '*') return versions;
          const view = viewOf(req, type);
          const read = await resources.read(
            ctx,
            type,
            ownerOf(route, req),
            param(req, 'id'),
            version,
            view.search.page,
          );
          return view.shape(read!.resource);
        });
      case 'metadata':
      case 'versions':
      case 'operation':
      case 'not-found':
        throw new Error(`Not a resource route: ${route.interaction} ${route.path}`);
    }
  };
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
