import { AppError, isAppError, type ErrorIssue } from '../../errors';

/** An issue of a terminology operation (an OperationOutcome issue, a $validate-code issue). */
export type IssueSpec = ErrorIssue;

/**
 * A terminology operation that cannot be answered with a result: the request named something
 * that does not exist (NOT_FOUND), or asked for something the content cannot give (INVALID). The
 * errors are `AppError`s carrying their issues; the FHIR edge answers them as an OperationOutcome.
 */
export const TerminologyError = {
  notFound(text: string, messageId?: string, path?: string): AppError {
    return AppError.withIssues('NOT_FOUND', {
      severity: 'error',
      code: 'not-found',
      txCode: 'not-found',
      text,
      messageId,
      path,
    });
  },

  invalid(text: string, path?: string, messageId?: string): AppError {
    return AppError.withIssues('INVALID', {
      severity: 'error',
      code: 'invalid',
      txCode: 'vs-invalid',
      text,
      path,
      messageId,
    });
  },
};

/** An error stated as issues (a terminology error). */
export function isTerminologyError(error: unknown): error is AppError & { issues: IssueSpec[] } {
  return isAppError(error) && error.issues !== undefined;
}

/** The error the other edges answer: terminology errors are `AppError`s already. */
export function appErrorOf(error: AppError): AppError {
  return error;
}
