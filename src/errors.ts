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

/**
 * One issue of an error as the terminology operations state it; the FHIR edge answers it as an
 * OperationOutcome issue, the others read the error's code and message.
 */
export interface ErrorIssue {
  severity: 'fatal' | 'error' | 'warning' | 'information';
  /** The OperationOutcome issue type (`code-invalid`, `not-found`, `invalid`, `too-costly`, …). */
  code: string;
  /** The tx-issue-type code (`not-in-vs`, `invalid-code`, `invalid-display`, …). */
  txCode?: string;
  text: string;
  /** The FHIRPath of the input element the issue is about. */
  path?: string;
  /** The message's id in the FHIR validator's catalogue (the message-id extension). */
  messageId?: string;
  /**
   * Whether $validate-code's `message` repeats it (false: reported only among the issues, as
   * HL7's validator does for some). Unset: the validator's rule decides.
   */
  inMessage?: boolean;
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly fieldErrors?: FieldErrors,
    /** For RATE_LIMITED and UNAVAILABLE: when the caller may try again (the Retry-After header). */
    readonly retryAfterSeconds?: number,
    /** What went wrong, issue by issue (the terminology operations state theirs so). */
    readonly issues?: ErrorIssue[],
  ) {
    super(message);
    this.name = 'AppError';
  }

  /** An error stated as issues; its message is their texts. */
  static withIssues(code: ErrorCode, issue: ErrorIssue | ErrorIssue[]): AppError {
    const issues = Array.isArray(issue) ? issue : [issue];
    return new AppError(code, issues.map((i) => i.text).join('; '), undefined, undefined, issues);
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

/** SQLSTATEs of a busy database: the work was refused or cancelled, nothing was changed. */
const BUSY_STATES = new Set([
  '57014', // query_canceled: statement_timeout
  '25P03', // idle_in_transaction_session_timeout
  '55P03', // lock_not_available: lock_timeout
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '53300', // too_many_connections
  '57P01', // admin_shutdown
]);

/**
 * A database failure as the typed error it means for the caller, or undefined for a bug. A busy
 * database (no free connection in time, a statement or transaction over its time limit, a
 * deadlock) is a 503 to retry; a value Postgres cannot take (SQLSTATE class 22) is bad input.
 * Services refuse bad input before it reaches Postgres; this is the backstop every edge shares.
 */
export function fromDatabaseError(error: unknown): AppError | undefined {
  if (!(error instanceof Error)) return undefined;
  // pg-pool's acquire timeout (`connectionTimeoutMillis`) carries no SQLSTATE.
  if (/timeout exceeded when trying to connect/i.test(error.message)) return busy();
  // TypeORM's QueryFailedError copies the driver's fields; keep reading the driver's own too.
  const state =
    (error as { code?: unknown }).code ??
    (error as { driverError?: { code?: unknown } }).driverError?.code;
  if (typeof state !== 'string') return undefined;
  if (BUSY_STATES.has(state)) return busy();
  // A unique index refused a row a parallel request wrote first; services name their own.
  if (state === '23505') return new AppError('CONFLICT', 'It already exists.');
  if (state.startsWith('22')) {
    return AppError.invalid('The request holds a value the database cannot store.');
  }
  return undefined;
}

function busy(): AppError {
  return new AppError(
    'UNAVAILABLE',
    'The service is busy; nothing was changed. Try again shortly.',
    undefined,
    RETRY_AFTER_BUSY_SECONDS,
  );
}

const RETRY_AFTER_BUSY_SECONDS = 2;
