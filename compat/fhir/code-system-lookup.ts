import { parseLanguages, TerminologyError } from '../../src/services';
import type { Operation } from './http';
import { lookupParameters } from './render/lookup';

/** CodeSystem/$lookup: `code` + `system` (+ `version`) or `coding`. */
export const codeSystemLookup: Operation = async (params, ctx, services, req) => {
  const coding = params.coding('coding') ?? {
    system: params.string('system'),
    version: params.string('version'),
    code: params.string('code'),
  };
  if (!coding.code) throw TerminologyError.invalid('No code was given to look up', 'code');
  const result = await services.terminology.lookup(
    ctx,
    {
      coding,
      properties: params.strings('property'),
      languages: parseLanguages(params.string('displayLanguage') ?? req.get('accept-language')),
      useSupplements: params.strings('useSupplement'),
    },
    params.txResources(),
  );
  return lookupParameters(result);
};
