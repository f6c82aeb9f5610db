import { TerminologyError } from '../../src/services';
import type { Operation } from './http';
import { subsumesParameters } from './render/subsumes';

/** CodeSystem/$subsumes: `codeA`/`codeB` with `system`, or `codingA`/`codingB`. */
export const codeSystemSubsumes: Operation = async (params, ctx, services) => {
  const system = params.string('system');
  const version = params.string('version');
  const a = params.coding('codingA') ?? { system, version, code: params.string('codeA') };
  const b = params.coding('codingB') ?? { system, version, code: params.string('codeB') };
  if (!a.code || !b.code)
    throw TerminologyError.invalid('Both codeA and codeB (or codingA and codingB) are required');
  return subsumesParameters(await services.terminology.subsumes(ctx, a, b, params.txResources()));
};
