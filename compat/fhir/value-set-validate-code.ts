import { TerminologyError, type CodeInput } from '../../src/services';
import { validateCodeParameters } from './render/validate-code';
import type { Operation } from './http';
import { validateOptions, valueSetTarget } from './options';
import type { OperationParams } from './parameters';

/** The code to validate, in whichever of the three forms it was given. */
export function codeInput(
  params: OperationParams,
  versionParam: string,
  system?: string,
): CodeInput {
  const concept = params.codeableConcept('codeableConcept');
  if (concept) return { kind: 'codeableConcept', concept };
  const coding = params.coding('coding');
  if (coding)
    return { kind: 'coding', coding: system && !coding.system ? { ...coding, system } : coding };
  const code = params.string('code');
  if (code === undefined) {
    throw TerminologyError.invalid(
      'Unable to find code to validate (looked for coding | codeableConcept | code+system | code+inferSystem in parameters',
    );
  }
  return {
    kind: 'code',
    coding: {
      system: params.string('system') ?? system,
      version: params.string(versionParam),
      code,
      display: params.string('display'),
    },
  };
}

/** ValueSet/$validate-code (type and instance level). */
export const valueSetValidateCode: Operation = async (params, ctx, services, req) => {
  const result = await services.terminology.validateInValueSet(
    ctx,
    valueSetTarget(params, req),
    codeInput(params, 'systemVersion'),
    params.txResources(),
    validateOptions(params, req),
  );
  return validateCodeParameters(result);
};
