import {
  isTerminologyError,
  type IssueSpec,
  type ParameterValue,
  type ValidateRequest,
} from '../../src/services';
import type { Operation } from './http';
import { validateOptions, valueSetTarget } from './options';
import { OperationParams } from './parameters';
import { validateCodeParameters } from './render/validate-code';
import { codeInput } from './value-set-validate-code';

/**
 * ValueSet/$batch-validate-code: each `validation` Parameters is validated as
 * ValueSet/$validate-code would, with the request's other parameters as defaults (its own win),
 * in one service call (`validateBatch`). An entry that cannot be read or validated answers an
 * OperationOutcome in its place.
 */
export const batchValidateCode: Operation = async (params, ctx, services, req) => {
  const shared = params.all.filter((p) => p.name !== 'validation');
  const entries = params.resources('validation').map((entry): Entry => {
    const own = Array.isArray(entry.parameter) ? (entry.parameter as ParameterValue[]) : [];
    const names = new Set(own.map((p) => p.name));
    const merged = OperationParams.fromList([...shared.filter((p) => !names.has(p.name)), ...own]);
    try {
      return {
        request: {
          target: valueSetTarget(merged, req),
          input: codeInput(merged, 'systemVersion'),
          resources: merged.txResources(),
          options: validateOptions(merged, req),
        },
      };
    } catch (error) {
      if (!isTerminologyError(error)) throw error;
      return { issues: error.issues };
    }
  });
  const requests = entries.flatMap((e) => ('request' in e ? [e.request] : []));
  const answers = await services.terminology.validateBatch(ctx, requests);
  let next = 0;
  const parameter: ParameterValue[] = entries.map((entry) => {
    const answer = 'request' in entry ? answers[next++] : entry;
    return {
      name: 'validation',
      resource: ('result' in answer
        ? validateCodeParameters(answer.result)
        : outcomeOf(answer.issues)) as never,
    };
  });
  return { resourceType: 'Parameters', parameter };
};

/** An entry read as a request, or the issues that kept it from being read. */
type Entry = { request: ValidateRequest } | { issues: IssueSpec[] };

function outcomeOf(issues: IssueSpec[]) {
  return {
    resourceType: 'OperationOutcome',
    issue: issues.map((i) => ({
      severity: i.severity,
      code: i.code,
      details: { text: i.text },
    })),
  };
}
