import type { SubsumptionResult } from '../../../src/services/terminology/lookup';

/** CodeSystem/$subsumes' output Parameters (R4): the outcome only. */
export function subsumesParameters(result: SubsumptionResult): {
  resourceType: 'Parameters';
  parameter: Array<{ name: string; valueCode: string }>;
} {
  return {
    resourceType: 'Parameters',
    parameter: [{ name: 'outcome', valueCode: result.outcome }],
  };
}
