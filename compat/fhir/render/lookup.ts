import type { ParameterValue } from '../../../src/services';
import type { LookupResult } from '../../../src/services/terminology/lookup';

/** CodeSystem/$lookup's output Parameters (R4) from the core's `LookupResult`. */
export function lookupParameters(result: LookupResult): {
  resourceType: 'Parameters';
  parameter: ParameterValue[];
} {
  const out: ParameterValue[] = [];
  out.push({ name: 'abstract', valueBoolean: result.abstract });
  out.push({ name: 'code', valueCode: result.code });
  if (result.definition !== undefined)
    out.push({ name: 'definition', valueString: result.definition });
  for (const designation of result.designations) {
    const part: ParameterValue[] = [];
    if (designation.language) part.push({ name: 'language', valueCode: designation.language });
    if (designation.use) part.push({ name: 'use', valueCoding: designation.use });
    if (designation.source) part.push({ name: 'source', valueCanonical: designation.source });
    part.push({ name: 'value', valueString: designation.value });
    out.push({ name: 'designation', part });
  }
  if (result.display !== undefined) out.push({ name: 'display', valueString: result.display });
  out.push({ name: 'name', valueString: result.name });
  for (const property of result.properties) {
    out.push({
      name: 'property',
      part: [
        { name: 'code', valueCode: property.code },
        ...(property.description !== undefined
          ? [{ name: 'description', valueString: property.description }]
          : []),
        { name: 'value', ...property.value },
      ],
    });
  }
  out.push({ name: 'system', valueUri: result.system });
  for (const supplement of result.usedSupplements)
    out.push({ name: 'used-supplement', valueCanonical: supplement });
  if (result.version) out.push({ name: 'version', valueString: result.version });
  return { resourceType: 'Parameters', parameter: out };
}
