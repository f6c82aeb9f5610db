import { Router, type RequestHandler } from 'express';
import type { Services } from '../../src/services';
import { batchValidateCode } from './batch-validate-code';
import { codeSystemLookup } from './code-system-lookup';
import { codeSystemSubsumes } from './code-system-subsumes';
import { codeSystemValidateCode } from './code-system-validate-code';
import { conceptMapTranslate } from './concept-map-translate';
import { operation, sendOutcome, sendResource, type Operation } from './http';
import { capabilityStatement, terminologyCapabilities, versions } from './metadata';
import { fhirResourceRouter } from './resources';
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

/** The prefixes the operations answer under (spec ops §4.7). */
const PREFIXES = ['/fhir', '/orgs/:org', '/users/:user'];

/**
 * The FHIR R4 edge: metadata, the terminology operations and the resource reads, each answer a
 * FHIR resource, each error an OperationOutcome.
 */
export function fhirRouter(services: Services): Router {
  const router = Router();
  router.get('/fhir/metadata', (req, res) => {
    sendResource(
      res,
      200,
      req.query.mode === 'terminology' ? terminologyCapabilities(req) : capabilityStatement(req),
    );
  });
  router.get('/fhir/\\$versions', (_req, res) => sendResource(res, 200, versions()));
  for (const prefix of PREFIXES) {
    for (const [type, operations] of Object.entries(OPERATIONS)) {
      for (const [name, handler] of Object.entries(operations)) {
        const handle = operation(services, handler);
        for (const path of [`${prefix}/${type}/\\$${name}`, `${prefix}/${type}/:id/\\$${name}`]) {
          router.get(path, ...(KEPT_OPERATIONS.has(name) ? [cacheable] : []), handle);
          router.post(path, handle);
        }
      }
    }
  }
  router.use(fhirResourceRouter(services));
  router.all('/fhir/{*rest}', notFound);
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
