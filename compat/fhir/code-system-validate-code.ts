import type { Operation } from './http';
import { validateOptions } from './options';
import { codeInput } from './value-set-validate-code';
import { validateCodeParameters } from './render/validate-code';

/** CodeSystem/$validate-code: the code system is `url` (with `version`) or the coding's system. */
export const codeSystemValidateCode: Operation = async (params, ctx, services, req) => {
  const url = params.string('url');
  const input = codeInput(params, 'version', url);
  if (input.kind !== 'codeableConcept' && url && !input.coding.version)
    input.coding.version = params.string('version');
  const result = await services.terminology.validateInCodeSystem(ctx, input, params.txResources(), {
    ...validateOptions(params, req),
    systemVersion: undefined,
  });
  return validateCodeParameters(result);
};
