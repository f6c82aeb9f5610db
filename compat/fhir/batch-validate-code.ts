import { isTerminologyError, type ParameterValue } from '../../src/services';
import type { Operation } from './http';
import { OperationParams } from './parameters';
import { valueSetValidateCode } from './value-set-validate-code';

/**
 * ValueSet/$batch-validate-code: each `validation` Parameters is validated as
 * ValueSet/$validate-code would, with the request's other parameters as defaults (its own win).
 * An entry that cannot be validated answers an OperationOutcome in its place.
 */
export const batchValidateCode: Operation = async (params, ctx, services, req) => {
  const shared = params.all.filter((p) => p.name !== 'validation');
  const parameter: ParameterValue[] = [];
  for (const entry of params.resources('validation')) {
    const own = Array.isArray(entry.parameter) ? (entry.parameter as ParameterValue[]) : [];
    const names = new Set(own.map((p) => p.name));
    const merged = [...shared.filter((p) => !names.has(p.name)), ...own];
    try {
      const resource = await valueSetValidateCode(
        OperationParams.fromList(merged),
        ctx,
        services,
        req,
      );
      parameter.push({ name: 'validation', resource: resource as never });
    } catch (error) {
      if (!isTerminologyError(error)) throw error;
      parameter.push({
        name: 'validation',
        resource: {
          resourceType: 'OperationOutcome',
          issue: error.issues.map((i) => ({
            severity: i.severity,
            code: i.code,
            details: { text: i.text },
          })),
        },
      });
    }
  }
  return { resourceType: 'Parameters', parameter };
};
