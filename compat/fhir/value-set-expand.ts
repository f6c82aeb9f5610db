import type { Operation } from './http';
import { expansionOptions, valueSetTarget } from './options';

/** ValueSet/$expand (type and instance level). */
export const valueSetExpand: Operation = (params, ctx, services, req) =>
  services.terminology.expand(
    ctx,
    valueSetTarget(params, req),
    params.txResources(),
    expansionOptions(params, req),
  );
