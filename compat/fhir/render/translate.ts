import type { ParameterValue } from '../../../src/services';
import type { TranslationResult } from '../../../src/services/terminology/translate';

/** ConceptMap/$translate's output Parameters (R4) from the core's `TranslationResult`. */
export function translateParameters(result: TranslationResult): {
  resourceType: 'Parameters';
  parameter: ParameterValue[];
} {
  const out: ParameterValue[] = result.matches.map((match) => ({
    name: 'match',
    part: [
      { name: 'concept', valueCoding: match.concept },
      ...(match.source ? [{ name: 'source', valueCoding: match.source }] : []),
      { name: 'equivalence', valueCode: match.equivalence },
      { name: 'originMap', valueCanonical: match.originMap },
      { name: 'relationship', valueCode: match.relationship },
    ],
  }));
  if (result.message !== undefined) out.push({ name: 'message', valueString: result.message });
  out.push({ name: 'result', valueBoolean: result.result });
  return { resourceType: 'Parameters', parameter: out };
}
