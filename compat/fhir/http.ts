import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { fromDatabaseError, isAppError, type AppError } from '../../src/errors';
import { requestContext } from '../../src/context';
import {
  TerminologyError,
  type IssueSpec,
  type ServiceContext,
  type Services,
} from '../../src/services';
import { OperationParams } from './parameters';
import { issueOf } from './render/validate-code';

export const FHIR_JSON = 'application/fhir+json';

/** The paths of the FHIR edge: `/fhir/…` and the owner namespaces of spec ops §4.7. */
export function isFhirPath(path: string): boolean {
  return /^\/(fhir(\/|$)|(orgs|users)\/[^/]+\/(CodeSystem|ValueSet|ConceptMap)(\/|$))/.test(path);
}

/** Writes a FHIR resource (R4 JSON). */
export function sendResource(res: Response, status: number, body: unknown): void {
  res.status(status).type(`${FHIR_JSON}; charset=utf-8`).send(JSON.stringify(body));
}

function outcome(issues: IssueSpec[]) {
  return {
    resourceType: 'OperationOutcome',
    issue: issues.map((i) => ({ ...issueOf(i), diagnostics: i.text })),
  };
}

export function sendOutcome(res: Response, status: number, issues: IssueSpec[]): void {
  sendResource(res, status, outcome(issues));
}

const ISSUE_OF_APP_ERROR: Record<AppError['code'], [number, string]> = {
  NOT_FOUND: [404, 'not-found'],
  INVALID: [400, 'invalid'],
  UNAUTHENTICATED: [401, 'login'],
  FORBIDDEN: [403, 'forbidden'],
  CONFLICT: [409, 'conflict'],
  UNCHANGED: [200, 'informational'],
  NOT_ALLOWED: [405, 'not-supported'],
  GONE: [410, 'deleted'],
  RATE_LIMITED: [429, 'throttled'],
  UNAVAILABLE: [503, 'transient'],
};

/** The status of an error stated as issues: its code's, 422 for an operation refused as too costly. */
function statusOfIssues(error: AppError): number {
  if (error.code === 'INVALID' && error.issues?.some((i) => i.code === 'too-costly')) return 422;
  return ISSUE_OF_APP_ERROR[error.code][0];
}

/**
 * Answers every error on a FHIR path as an OperationOutcome (issue `code`, `details`,
 * `diagnostics`); other paths go on to the REST error handler. Bugs are still 500s, logged.
 */
export function fhirErrorHandler(
  error: unknown,
  req: Request,
  res: Response,
  next: NextFunction,
): void {
  if (res.headersSent || !isFhirPath(req.path)) {
    next(error);
    return;
  }
  const typed = isAppError(error) ? error : fromDatabaseError(error);
  if (typed?.issues) {
    sendOutcome(res, statusOfIssues(typed), typed.issues);
    return;
  }
  if (typed) {
    const [status, code] = ISSUE_OF_APP_ERROR[typed.code];
    if (typed.retryAfterSeconds !== undefined)
      res.setHeader('Retry-After', String(typed.retryAfterSeconds));
    sendOutcome(res, status, [{ severity: 'error', code, text: typed.message }]);
    return;
  }
  const httpError = error as { status?: number; message?: string };
  if (typeof httpError.status === 'number' && httpError.status >= 400 && httpError.status < 500) {
    sendOutcome(res, httpError.status, [
      {
        severity: 'error',
        code: httpError.status === 413 ? 'too-long' : 'structure',
        text:
          httpError.status === 400
            ? 'The body is not valid JSON'
            : (httpError.message ?? 'Bad request'),
      },
    ]);
    return;
  }
  next(error);
}

/**
 * Whether an Accept header admits FHIR R4 JSON: `application/fhir+json`, `application/json` or a
 * wildcard, with any `fhirVersion` parameter naming 4.0 (FHIR clients name their version).
 */
function acceptsJson(accept: string | undefined): boolean {
  if (!accept) return true;
  return accept.split(',').some((item) => {
    const [type, ...parameters] = item.split(';').map((part) => part.trim().toLowerCase());
    if (!['application/fhir+json', 'application/json', 'application/*', '*/*'].includes(type))
      return false;
    const version = parameters.find((p) => p.startsWith('fhirversion='));
    const q = parameters.find((p) => p.startsWith('q='));
    return (!version || version.slice(12).startsWith('4.0')) && q !== 'q=0';
  });
}

const JSON_FORMATS = new Set(['json', 'application/json', 'application/fhir+json', 'fhir+json']);

/**
 * FHIR content negotiation, before anything reads the body: JSON only (`_format`, `Accept`,
 * `Content-Type`), answered as FHIR servers answer (406, 415) with an OperationOutcome.
 */
export const negotiate: RequestHandler = (req, res, next) => {
  if (!isFhirPath(req.path)) {
    next();
    return;
  }
  const format = req.query._format;
  if (format !== undefined) {
    const first: unknown = Array.isArray(format) ? format[0] : format;
    const value = (typeof first === 'string' ? first : '').split(';')[0].trim();
    if (!JSON_FORMATS.has(value)) {
      sendOutcome(res, 406, [
        {
          severity: 'error',
          code: 'not-supported',
          text: `The format '${value}' is not supported; this server speaks FHIR R4 JSON (application/fhir+json)`,
        },
      ]);
      return;
    }
  } else if (!acceptsJson(req.get('accept'))) {
    sendOutcome(res, 406, [
      {
        severity: 'error',
        code: 'not-supported',
        text: `None of the accepted formats '${req.get('accept')}' can be produced; this server speaks FHIR R4 JSON (application/fhir+json)`,
      },
    ]);
    return;
  }
  const hasBody =
    Number(req.get('content-length') ?? 0) > 0 || req.get('transfer-encoding') !== undefined;
  if (hasBody && !req.is(['application/json', 'application/*+json'])) {
    sendOutcome(res, 415, [
      {
        severity: 'error',
        code: 'not-supported',
        text: `The content type '${req.get('content-type') ?? ''}' is not supported; send FHIR R4 JSON (application/fhir+json)`,
      },
    ]);
    return;
  }
  next();
};

/** An operation: its parameters in, a resource out (200). */
export type Operation = (
  params: OperationParams,
  ctx: ServiceContext,
  services: Services,
  req: Request,
) => Promise<unknown>;

export function operation(services: Services, handler: Operation): RequestHandler {
  return async (req, res) => {
    const params = OperationParams.of(req);
    const body = await handler(params, requestContext(res), services, req);
    sendResource(res, 200, body);
  };
}

export { TerminologyError };
