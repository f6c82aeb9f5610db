import type { JsonObject, ValueSetResource } from '../../src/services';
import type { Operation } from './http';
import { expansionOptions, valueSetTarget } from './options';

const R5 = 'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion';

/** ValueSet/$expand (type and instance level). */
export const valueSetExpand: Operation = async (params, ctx, services, req) =>
  asR4(
    await services.terminology.expand(
      ctx,
      valueSetTarget(params, req),
      params.txResources(),
      expansionOptions(params, req),
    ),
  );

/**
 * R4 has no `expansion.property` nor `contains.property` (R5 added them): they travel as the
 * R5 cross-version extensions R4 clients read.
 */
function asR4(valueSet: ValueSetResource): ValueSetResource {
  const expansion = valueSet.expansion;
  if (!expansion) return valueSet;
  const { property, contains, ...rest } = expansion;
  const out: JsonObject = { ...rest };
  if (Array.isArray(property) && property.length > 0) {
    out.extension = [
      ...(Array.isArray(rest.extension) ? rest.extension : []),
      ...(property as JsonObject[]).map((p) => ({
        url: `${R5}.property`,
        extension: Object.entries(p).map(([key, value]) => ({
          url: key,
          [key === 'uri' ? 'valueUri' : 'valueCode']: value,
        })),
      })),
    ];
  }
  if (Array.isArray(contains)) out.contains = (contains as JsonObject[]).map(containsAsR4);
  return { ...valueSet, expansion: out };
}

function containsAsR4(item: JsonObject): JsonObject {
  const { property, contains, ...rest } = item;
  const out: JsonObject = { ...rest };
  if (Array.isArray(property) && property.length > 0) {
    out.extension = [
      ...(Array.isArray(rest.extension) ? rest.extension : []),
      ...(property as JsonObject[]).map((p): JsonObject => {
        const { code, ...value } = p;
        return {
          url: `${R5}.contains.property`,
          extension: [
            { url: 'code', valueCode: code ?? null },
            { url: 'value', ...value },
          ],
        };
      }),
    ];
  }
  if (Array.isArray(contains)) out.contains = (contains as JsonObject[]).map(containsAsR4);
  return out;
}
