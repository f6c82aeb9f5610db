import type { NextFunction, Request, Response } from 'express';
import { STATUS_CODES } from 'node:http';
import {
  fromDatabaseError,
  isAppError,
  type AppError,
  type ErrorCode,
  type FieldErrors,
} from '../../src/errors';
import type { Logger } from '../../src/logger';
import { capEchoes } from '../../src/text';
import { snakeCase } from './case';

const STATUS: Record<ErrorCode, number> = {
  NOT_FOUND: 404,
  INVALID: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  CONFLICT: 409,
  UNCHANGED: 208,
  NOT_ALLOWED: 405,
  GONE: 410,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
};

/** The REST error body of spec core §7: `{code, message, errors?}`, field names as sent. */
export function errorBody(status: number, message: string, fieldErrors?: FieldErrors): object {
  const body: { code: string; message: string; errors?: FieldErrors } = {
    code: STATUS_CODES[status] ?? 'Error',
    message,
  };
  if (fieldErrors) body.errors = fieldErrors;
  return body;
}

/**
 * Field errors under the names the client used: a query parameter as sent (`updatedSince`),
 * a body field in its REST spelling (`preferred_locale`), not the service's camelCase.
 */
function restFieldNames(
  req: Request,
  fieldErrors: FieldErrors | undefined,
): FieldErrors | undefined {
  if (!fieldErrors) return undefined;
  const query = req.query as Record<string, unknown>;
  const rename = (field: string): string => (field in query ? field : snakeCase(field));
  return Object.fromEntries(Object.entries(fieldErrors).map(([k, v]) => [rename(k), v]));
}

export function statusOf(error: AppError): number {
  return STATUS[error.code];
}

/**
 * The one error handler of the REST edge: typed errors to their status, body-parser failures to
 * 400/413, anything else is a bug: logged, answered 500 without internals.
 */
export function errorHandler(
  error: unknown,
  req: Request,
  res: Response,
  next: NextFunction,
): void {
  if (res.headersSent) {
    next(error);
    return;
  }
  const typed = isAppError(error) ? error : fromDatabaseError(error);
  if (typed) {
    const status = statusOf(typed);
    if (typed.retryAfterSeconds !== undefined) {
      res.setHeader('Retry-After', String(typed.retryAfterSeconds));
    }
    res
      .status(status)
      .json(errorBody(status, capEchoes(typed.message), restFieldNames(req, typed.fieldErrors)));
    return;
  }
  const httpError = error as { status?: number; type?: string; message?: string };
  if (typeof httpError.status === 'number' && httpError.status >= 400 && httpError.status < 500) {
    const message =
      httpError.type === 'entity.parse.failed'
        ? 'Malformed JSON in the request body.'
        : httpError.type === 'entity.too.large'
          ? 'The request body is too large.'
          : (httpError.message ?? 'Bad request.');
    res.status(httpError.status).json(errorBody(httpError.status, message));
    return;
  }
  (req as Request & { log?: Logger }).log?.error({ err: error }, 'unhandled error');
  res.status(500).json(errorBody(500, 'Internal server error.'));
}
