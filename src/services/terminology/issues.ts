import { AppError } from '../../errors';
import type { Issue, OperationOutcomeResource } from './fhir';

export const TX_ISSUE_TYPE = 'http://hl7.org/fhir/tools/CodeSystem/tx-issue-type';
const MESSAGE_ID = 'http://hl7.org/fhir/StructureDefinition/operationoutcome-message-id';

export interface IssueSpec {
  severity: Issue['severity'];
  /** The OperationOutcome issue type (`code-invalid`, `not-found`, `invalid`, …). */
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
   * HL7's validator does for some). Unset: the validator's rule decides (see messageOf).
   */
  inMessage?: boolean;
}

export function issueOf(spec: IssueSpec): Issue {
  const issue: Issue = { severity: spec.severity, code: spec.code };
  if (spec.messageId) issue.extension = [{ url: MESSAGE_ID, valueString: spec.messageId }];
  issue.details = {
    ...(spec.txCode ? { coding: [{ system: TX_ISSUE_TYPE, code: spec.txCode }] } : {}),
    text: spec.text,
  };
  // `location` is deprecated in R4 in favour of `expression`.
  if (spec.path) issue.expression = [spec.path];
  return issue;
}

export function outcomeOf(issues: IssueSpec[]): OperationOutcomeResource {
  return { resourceType: 'OperationOutcome', issue: issues.map(issueOf) };
}

/**
 * A terminology operation that cannot be answered with a result: the request named something
 * that does not exist, or asked for something the content cannot give. Edges answer it as an
 * OperationOutcome with `status`.
 */
export class TerminologyError extends Error {
  readonly issues: IssueSpec[];

  constructor(
    readonly status: number,
    issue: IssueSpec | IssueSpec[],
  ) {
    const issues = Array.isArray(issue) ? issue : [issue];
    super(issues.map((i) => i.text).join('; '));
    this.name = 'TerminologyError';
    this.issues = issues;
  }

  static notFound(text: string, messageId?: string, path?: string): TerminologyError {
    return new TerminologyError(404, {
      severity: 'error',
      code: 'not-found',
      txCode: 'not-found',
      text,
      messageId,
      path,
    });
  }

  static invalid(text: string, path?: string, messageId?: string): TerminologyError {
    return new TerminologyError(400, {
      severity: 'error',
      code: 'invalid',
      txCode: 'vs-invalid',
      text,
      path,
      messageId,
    });
  }
}

export function isTerminologyError(error: unknown): error is TerminologyError {
  return error instanceof TerminologyError;
}

/** A terminology error as the typed error the other edges answer (GraphQL `extensions.code`). */
export function appErrorOf(error: TerminologyError): AppError {
  const code = error.status === 404 ? 'NOT_FOUND' : 'INVALID';
  return new AppError(code, error.message);
}
