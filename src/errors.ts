/** Stable error codes; each edge maps them once (REST status, GraphQL extensions.code, FHIR issue). */
export type ErrorCode =
  | 'NOT_FOUND'
  | 'INVALID'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'CONFLICT'
  | 'UNCHANGED'
  | 'NOT_ALLOWED'
  | 'GONE'
  | 'RATE_LIMITED'
  /** A service we depend on (e.g. SMTP) failed; nothing was changed. */
  | 'UNAVAILABLE';

/** Field name → messages, for validation failures. */
export type FieldErrors = Record<string, string[]>;

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly fieldErrors?: FieldErrors,
  ) {
    super(message);
    this.name = 'AppError';
  }

  static notFound(what: string): AppError {
    return new AppError('NOT_FOUND', `${what} not found.`);
  }

  static invalid(message: string, fieldErrors?: FieldErrors): AppError {
    return new AppError('INVALID', message, fieldErrors);
  }

  static field(field: string, message: string): AppError {
    return new AppError('INVALID', message, { [field]: [message] });
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
