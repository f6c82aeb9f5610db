import type {
  ExpandedProperty,
  ExpansionEntry,
  ExpansionPage,
  ExpansionPropertyDefinition,
  JsonObject,
  ValueSetResource,
} from '../../../src/services';

const SD = 'http://hl7.org/fhir/StructureDefinition/';
/**
 * R4 has no `expansion.property` nor `contains.property` (R5 added them): they travel as the R5
 * cross-version extensions R4 clients read.
 */
const R5 = 'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion';

/** What an expansion leaves out of its value set unless `includeDefinition` is true. */
const DEFINITION_ONLY = [
  'compose',
  'extension',
  'publisher',
  'description',
  'purpose',
  'contact',
  'copyright',
  'text',
] as const;

/**
 * ValueSet/$expand's output (R4): the value set with the expansion page. The expansion stands
 * for the definition: unless `includeDefinition` asks for it, the compose and the narrative
 * parts are not repeated (as tx.fhir.org and HL7's validator do).
 */
export function expandedValueSet(
  page: ExpansionPage,
  { includeDefinition = false }: { includeDefinition?: boolean } = {},
): ValueSetResource {
  const expansion: JsonObject = {
    identifier: page.identifier,
    timestamp: page.timestamp,
    total: page.total,
  };
  if (page.offset !== undefined) expansion.offset = page.offset;
  expansion.parameter = page.parameters as unknown as JsonObject[];
  const extensions = [...unclosed(page.fragments), ...page.properties.map(propertyDefinition)];
  if (extensions.length > 0) expansion.extension = extensions;
  if (page.contains.length > 0) expansion.contains = page.contains.map(entry);
  const valueSet: ValueSetResource = { ...page.valueSet, expansion };
  if (!includeDefinition) {
    for (const field of DEFINITION_ONLY) delete valueSet[field];
  }
  return valueSet;
}

/** An expansion over fragments of code systems may miss codes: it says so, and why. */
function unclosed(fragments: string[]): JsonObject[] {
  if (fragments.length === 0) return [];
  return [
    { url: `${SD}valueset-unclosed`, valueBoolean: true },
    ...fragments.map((system) => ({
      url: `${SD}valueset-unclosed-reason`,
      valueString: `This extension is based on a fragment of the code system ${system}`,
    })),
  ];
}

function propertyDefinition({ code, uri }: ExpansionPropertyDefinition): JsonObject {
  return {
    url: `${R5}.property`,
    extension: [
      { url: 'code', valueCode: code },
      ...(uri !== undefined ? [{ url: 'uri', valueUri: uri }] : []),
    ],
  };
}

function entry(item: ExpansionEntry): JsonObject {
  const out: JsonObject = {};
  if (item.extensions.length > 0) out.extension = item.extensions as unknown as JsonObject[];
  out.system = item.system;
  if (item.version !== undefined) out.version = item.version;
  if (item.abstract) out.abstract = true;
  if (item.inactive) out.inactive = true;
  out.code = item.code;
  if (item.display !== undefined) out.display = item.display;
  if (item.designations.length > 0) out.designation = item.designations as unknown as JsonObject[];
  if (item.properties.length > 0) {
    out.extension = [
      ...((out.extension as JsonObject[] | undefined) ?? []),
      ...item.properties.map(property),
    ];
  }
  if (item.contains.length > 0) out.contains = item.contains.map(entry);
  return out;
}

function property({ code, value }: ExpandedProperty): JsonObject {
  return {
    url: `${R5}.contains.property`,
    extension: [
      { url: 'code', valueCode: code },
      { url: 'value', ...(value as JsonObject) },
    ],
  };
}
