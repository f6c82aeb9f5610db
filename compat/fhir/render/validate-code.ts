import type { Issue, IssueSpec, ParameterValue, ValidateResult } from '../../../src/services';

const TX_ISSUE_TYPE = 'http://hl7.org/fhir/tools/CodeSystem/tx-issue-type';
const MESSAGE_ID = 'http://hl7.org/fhir/StructureDefinition/operationoutcome-message-id';

/** An OperationOutcome issue (R4) from a terminology issue. */
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

/** $validate-code's output Parameters (R4) from the core's `ValidateResult`. */
export function validateCodeParameters(result: ValidateResult): {
  resourceType: 'Parameters';
  parameter: ParameterValue[];
} {
  const out: ParameterValue[] = [];
  if (result.code !== undefined) out.push({ name: 'code', valueCode: result.code });
  if (result.normalizedCode !== undefined)
    out.push({ name: 'normalized-code', valueCode: result.normalizedCode });
  if (result.codeableConcept)
    out.push({ name: 'codeableConcept', valueCodeableConcept: result.codeableConcept });
  if (result.display !== undefined) out.push({ name: 'display', valueString: result.display });
  if (result.inactive) out.push({ name: 'inactive', valueBoolean: true });
  if (result.issues.length > 0) {
    out.push({
      name: 'issues',
      resource: {
        resourceType: 'OperationOutcome',
        issue: result.issues.map(issueOf),
      } as never,
    });
  }
  const message = messageOf(result.issues);
  if (message) out.push({ name: 'message', valueString: message });
  out.push({ name: 'result', valueBoolean: result.result });
  if (result.status !== undefined) out.push({ name: 'status', valueCode: result.status });
  if (result.system !== undefined) out.push({ name: 'system', valueUri: result.system });
  if (result.version !== undefined) out.push({ name: 'version', valueString: result.version });
  for (const system of result.unknownSystems)
    out.push({ name: 'x-caused-by-unknown-system', valueCanonical: system });
  for (const system of result.unknownInputSystems)
    out.push({ name: 'x-unknown-system', valueCanonical: system });
  return { resourceType: 'Parameters', parameter: out };
}

/**
 * Notes about the content used (its status, a value set deprecating a code, a code system that is
 * only a fragment), not about the code: they stay out of the `message`.
 */
const NOTES = new Set([
  'UNKNOWN_CODE_IN_FRAGMENT',
  'CONCEPT_DEPRECATED_IN_VALUESET',
  'MSG_DRAFT',
  'MSG_EXPERIMENTAL',
  'MSG_DEPRECATED',
  'MSG_WITHDRAWN',
]);

/**
 * The `message`: the texts of the issues it repeats, sorted, joined. An issue says so itself
 * (IssueSpec.inMessage); else the issues about the code (errors, warnings, and display notes)
 * are repeated, not notes about the content used.
 */
function messageOf(issues: IssueSpec[]): string | undefined {
  const told = issues.filter(
    (i) =>
      i.inMessage ??
      (!NOTES.has(i.messageId ?? '') &&
        (i.severity !== 'information' || i.txCode === 'invalid-display')),
  );
  const texts = [...new Set(told.map((i) => i.text))].sort();
  return texts.length > 0 ? texts.join('; ') : undefined;
}
