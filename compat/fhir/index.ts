import { Router, type RequestHandler } from 'express';
import type { Services } from '../../src/services';
import { batchValidateCode } from './batch-validate-code';
import { codeSystemLookup } from './code-system-lookup';
import { codeSystemSubsumes } from './code-system-subsumes';
import { codeSystemValidateCode } from './code-system-validate-code';
import { conceptMapTranslate } from './concept-map-translate';
import { operation, sendOutcome, sendResource, type Operation } from './http';
import { capabilityStatement, terminologyCapabilities, versions } from './metadata';
import { fhirResourceHandler } from './resources';
import { FHIR_ROUTES } from './routes';
import { cacheable } from '../http';
import { valueSetExpand } from './value-set-expand';
import { valueSetValidateCode } from './value-set-validate-code';

export { fhirErrorHandler, isFhirPath, negotiate } from './http';

/** Operations by resource type: name → handler (type and instance level, GET and POST). */
const OPERATIONS: Record<string, Record<string, Operation>> = {
  CodeSystem: {
    lookup: codeSystemLookup,
    'validate-code': codeSystemValidateCode,
    subsumes: codeSystemSubsumes,
  },
  ValueSet: {
    expand: valueSetExpand,
    'validate-code': valueSetValidateCode,
    'batch-validate-code': batchValidateCode,
  },
  ConceptMap: { translate: conceptMapTranslate },
};

/**
 * The operations whose GET answers each process may keep until content changes (`AnswerCache`):
 * reads of stored content by their parameters alone. Not `$expand`, whose answer carries the time
 * it was made.
 */
const KEPT_OPERATIONS = new Set(['lookup', 'validate-code', 'subsumes', 'translate']);

const METHODS = { GET: 'get', POST: 'post', PUT: 'put', DELETE: 'delete', ALL: 'all' } as const;

/** A table path as Express reads it: `$` is escaped. */
function expressPath(path: string): string {
  return path.replace(/\$/g, '\\$');
}

/**
 * The FHIR R4 edge: metadata, the terminology operations and the resource reads, each answer a
 * FHIR resource, each error an OperationOutcome. Every route is a row of `FHIR_ROUTES`
 * (routes.ts), registered in its order.
 */
export function fhirRouter(services: Services): Router {
  const router = Router();
  const resource = fhirResourceHandler(services);
  for (const route of FHIR_ROUTES) {
    const path = expressPath(route.path);
    switch (route.interaction) {
      case 'metadata':
        router.get(path, (req, res) => {
          sendResource(
            res,
            200,
            req.query.mode === 'terminology'
              ? terminologyCapabilities(req)
              : capabilityStatement(req),
          );
        });
        break;
      case 'versions':
        router.get(path, (_req, res) => sendResource(res, 200, versions()));
        break;
      case 'operation': {
        const name = route.operation!;
        const handle = operation(services, OPERATIONS[route.type!][name]);
        if (route.method === 'GET') {
          router.get(path, ...(KEPT_OPERATIONS.has(name) ? [cacheable] : []), handle);
        } else {
          router.post(path, handle);
        }
        break;
      }
      case 'not-found':
        router.all(path, notFound);
        break;
      case 'create':
      case 'update':
      case 'delete':
      case 'search':
      case 'read-by-id':
      case 'read':
      case 'history':
      case 'version-read':
        router[METHODS[route.method]](path, resource(route));
    }
  }
  return router;
}

const notFound: RequestHandler = (req, res) => {
  sendOutcome(res, 404, [
    {
      severity: 'error',
      code: 'not-found',
      text: `No FHIR endpoint ${req.method} ${req.path}`,
    },
  ]);
};
