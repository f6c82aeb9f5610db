import type { Operation } from './http';
import { translateParameters } from './render/translate';

/**
 * ConceptMap/$translate (spec ops §4.7): `url`, `system`/`code`/`version` or `coding`,
 * `conceptMapVersion`, `targetSystem` (also as `targetsystem` and R5's `sourceSystem`,
 * `sourceCode`, `sourceCoding`, `targetCode`: the latter translates in reverse).
 */
export const conceptMapTranslate: Operation = async (params, ctx, services) => {
  const reverseCode = params.string('targetCode');
  const reverse = params.boolean('reverse') === true || reverseCode !== undefined;
  const coding = params.coding('coding') ??
    params.coding('sourceCoding') ?? {
      system: params.string('system') ?? params.string('sourceSystem'),
      version: params.string('version'),
      code: params.string('code') ?? params.string('sourceCode') ?? reverseCode,
    };
  if (reverseCode !== undefined) coding.system = params.string('targetSystem') ?? coding.system;
  const result = await services.terminology.translate(
    ctx,
    {
      url: params.string('url'),
      conceptMapVersion: params.string('conceptMapVersion'),
      coding,
      targetSystem:
        reverseCode !== undefined
          ? params.string('sourceSystem')
          : (params.string('targetSystem') ?? params.string('targetsystem')),
      reverse,
    },
    params.txResources(),
  );
  return translateParameters(result);
};
