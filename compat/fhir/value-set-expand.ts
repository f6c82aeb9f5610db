import type { Operation } from './http';
import { expansionOptions, valueSetTarget } from './options';
import { expandedValueSet } from './render/expand';

/** ValueSet/$expand (type and instance level): the service's page, rendered as a ValueSet. */
export const valueSetExpand: Operation = async (params, ctx, services, req) => {
  const options = expansionOptions(params, req);
  const includeDefinition = params.boolean('includeDefinition');
  const page = await services.terminology.expand(
    ctx,
    valueSetTarget(params, req),
    params.txResources(),
    options,
  );
  return expandedValueSet(page, { includeDefinition });
};
