/**
 * What HL7's runner does to the server's answer (once converted to R5) before comparing it:
 * `TxTesterScrubbers` removes what the tests do not control, `TxTesterSorters` puts lists into a
 * canonical order (both in org.hl7.fhir.validation/…/special/, hapifhir/org.hl7.fhir.core).
 * Everything here mutates the JSON it is given.
 *
 * Java's sorts run through `Collections.sort` (stable, like Array.prototype.sort) and its
 * comparators call `compareTo` on possibly missing values: a missing value ends the test with a
 * NullPointerException there, and here with the error `javaCompare` throws.
 */
import { javaSplit, type Json, type JsonObject } from './compare';

const isObject = (v: Json | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const objects = (v: Json | undefined): JsonObject[] =>
  Array.isArray(v) ? v.filter(isObject) : isObject(v) ? [v] : [];

/** The list at `o[key]` when it is one (the array itself, so that sorting it sorts `o`). */
const list = (o: JsonObject | undefined, key: string): Json[] => {
  const v = o?.[key];
  return Array.isArray(v) ? v : [];
};

/** Java's `a.compareTo(b)` on strings (UTF-16 code units); a missing side is an NPE. */
export function javaCompare(a: string | null | undefined, b: string | null | undefined): number {
  if (a === null || a === undefined || b === null || b === undefined) {
    throw new Error('NullPointerException while sorting (a compared value is missing)');
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

const str = (v: Json | undefined): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? `${v}` : undefined;

/** The `value[x]` key of an element (`valueCode`, `valueCoding`, …), if any. */
export function valueKey(o: JsonObject): string | undefined {
  return Object.keys(o).find((k) => /^value[A-Z]/.test(k));
}

/** Base.primitiveValue() of an element's value[x]: its text when primitive, else null. */
function primitiveValue(o: JsonObject | undefined): string | null {
  if (!o) return null;
  const k = valueKey(o);
  return k === undefined ? null : (str(o[k]) ?? null);
}

function sortBy<T extends Json>(items: Json[], compare: (a: T, b: T) => number): void {
  if (items.length >= 2) items.sort((a, b) => compare(a as T, b as T));
}

// ---------------------------------------------------------------------------------------------
// TxTesterScrubbers (tight = false, as the txTests command runs it)
// ---------------------------------------------------------------------------------------------

/** TxTesterScrubbers.isManagedExtension: the extensions the tests check; all others go. */
const MANAGED_EXTENSIONS = new Set([
  'http://hl7.org/fhir/StructureDefinition/codesystem-alternate',
  'http://hl7.org/fhir/StructureDefinition/codesystem-conceptOrder',
  'http://hl7.org/fhir/StructureDefinition/codesystem-label',
  'http://hl7.org/fhir/StructureDefinition/coding-sctdescid',
  'http://hl7.org/fhir/StructureDefinition/structuredefinition-standards-status',
  'http://hl7.org/fhir/StructureDefinition/itemWeight',
  'http://hl7.org/fhir/StructureDefinition/rendering-style',
  'http://hl7.org/fhir/StructureDefinition/rendering-xhtml',
  'http://hl7.org/fhir/StructureDefinition/translation',
  'http://hl7.org/fhir/StructureDefinition/valueset-concept-definition',
  'http://hl7.org/fhir/StructureDefinition/valueset-conceptOrder',
  'http://hl7.org/fhir/StructureDefinition/valueset-deprecated',
  'http://hl7.org/fhir/StructureDefinition/valueset-label',
  'http://hl7.org/fhir/StructureDefinition/valueset-supplement',
  'http://hl7.org/fhir/test/CodeSystem/de-multi',
  'http://hl7.org/fhir/test/CodeSystem/en-multi',
  'http://hl7.org/fhir/test/StructureDefinition/unknown-extension-1',
  'http://hl7.org/fhir/test/StructureDefinition/unknown-extension-3',
  'http://hl7.org/fhir/test/StructureDefinition/unknown-extension-4',
  'http://hl7.org/fhir/test/StructureDefinition/unknown-extension-5',
  'http://hl7.org/fhir/test/ValueSet/extensions-bad-supplement',
  'http://hl7.org/fhir/test/ValueSet/simple-all',
  'http://hl7.org/fhir/test/ValueSet/simple-enumerated',
  'http://hl7.org/fhir/StructureDefinition/alternate-code-use',
  'http://hl7.org/fhir/StructureDefinition/alternate-code-status',
  'http://hl7.org/fhir/StructureDefinition/operationoutcome-message-id',
  'http://hl7.org/fhir/test/ValueSet/simple-filter-isa',
  'http://hl7.org/fhir/StructureDefinition/valueset-unclosed',
  'http://hl7.org/fhir/StructureDefinition/valueset-unclosed-reason',
]);

/** Utilities.isAbsoluteUrl. */
export function isAbsoluteUrl(ref: string | undefined): boolean {
  if (ref === undefined || !ref.includes(':')) return false;
  const scheme = ref.slice(0, ref.indexOf(':'));
  const details = ref.slice(ref.indexOf(':') + 1);
  const isToken = /^[a-zA-Z][a-zA-Z0-9_[\]]*$/.test(scheme);
  const known =
    ['http', 'https', 'urn', 'file:'].includes(scheme) ||
    (isToken && scheme === scheme.toLowerCase()) ||
    ['urn:iso:', 'urn:iso-iec:', 'urn:iso-cie:', 'urn:iso-astm:', 'urn:iso-ieee:', 'urn:iec:'].some(
      (p) => ref.startsWith(p),
    );
  return known && details.length > 0 && !details.includes(' ');
}

const isManagedExtension = (ext: Json): boolean => {
  const url = isObject(ext) ? str(ext.url) : undefined;
  return !isAbsoluteUrl(url) || MANAGED_EXTENSIONS.has(url!);
};

/**
 * TxTesterScrubberVisitor through ElementVisitor: every element and resource below (contained
 * ones, primitives' `_x` parts, extensions themselves) loses its unmanaged `extension`s
 * (`modifierExtension` is kept). ValueSet.compose loses its own but is not entered.
 */
function scrubExtensions(node: JsonObject, resourceType: string | undefined): void {
  if (Array.isArray(node.extension)) {
    node.extension = node.extension.filter(isManagedExtension);
    if (node.extension.length === 0) delete node.extension;
  }
  for (const [key, value] of Object.entries(node)) {
    // Java: ElementVisitorInstruction.NO_VISIT_CHILDREN for ValueSet.compose.
    const compose = resourceType === 'ValueSet' && key === 'compose';
    for (const child of objects(value)) {
      if (compose) {
        if (Array.isArray(child.extension)) {
          child.extension = child.extension.filter(isManagedExtension);
          if (child.extension.length === 0) delete child.extension;
        }
      } else {
        scrubExtensions(child, str(child.resourceType));
      }
    }
  }
}

/** TxTesterScrubbers.scrubDomainResource: no text, no meta, only managed extensions. */
export function scrubDomainResource(resource: JsonObject): void {
  delete resource.text;
  delete resource.meta;
  scrubExtensions(resource, str(resource.resourceType));
}

/** TxTesterScrubbers.scrubOperationOutcome. */
export function scrubOperationOutcome(oo: JsonObject): void {
  scrubDomainResource(oo);
  if (!Array.isArray(oo.issue)) return;
  // Issues with diagnostics but no details go; other diagnostics go unless they echo the
  // X-Request-Id (a test checks that a server reports it).
  oo.issue = oo.issue.filter(
    (i) => !(isObject(i) && hasText(i.diagnostics) && !isObject(i.details)),
  );
  for (const issue of objects(oo.issue)) {
    const d = issue.diagnostics;
    if (hasText(d) && !(d as string).toLowerCase().includes('x-request-id'))
      delete issue.diagnostics;
  }
  if (oo.issue.length === 0) delete oo.issue;
}

const hasText = (v: Json | undefined): boolean => typeof v === 'string' && v.length > 0;

/**
 * TxTesterScrubbers.scrubParameters: no meta, no top-level `diagnostics` parameter; resources in
 * parameters scrubbed by type (ValueSet, OperationOutcome, Parameters; others left alone).
 */
export function scrubParameters(p: JsonObject): void {
  delete p.meta;
  if (!Array.isArray(p.parameter)) return;
  p.parameter = p.parameter.filter((pp) => !(isObject(pp) && pp.name === 'diagnostics'));
  for (const pp of objects(p.parameter)) {
    const r = pp.resource;
    if (!isObject(r)) continue;
    if (r.resourceType === 'ValueSet') scrubDomainResource(r);
    if (r.resourceType === 'OperationOutcome') scrubOperationOutcome(r);
    if (r.resourceType === 'Parameters') scrubParameters(r);
  }
  if (p.parameter.length === 0) delete p.parameter;
}

// ---------------------------------------------------------------------------------------------
// TxTesterSorters
// ---------------------------------------------------------------------------------------------

/**
 * ExtensionSorter: by url. Java: the comparator also sorts the extensions' own extensions, so
 * nested lists are ordered only where the outer list has two or more items to compare.
 */
function sortExtensions(items: Json[]): void {
  if (items.length < 2) return;
  for (const e of objects(items)) sortExtensions(list(e, 'extension'));
  sortBy<JsonObject>(items, (a, b) => javaCompare(str(a.url), str(b.url)));
}

const part = (p: JsonObject, name: string): JsonObject | undefined =>
  objects(p.part).find((x) => x.name === name);

/**
 * ParameterSorter: by name; two `property` parameters by their `code` part, then `value` part
 * (lower case); two `designation`s by their `language` part (lower case). As with extensions,
 * comparing sorts each parameter's parts and extensions (so a list of one is left as it is).
 */
function sortParameterList(items: Json[]): void {
  if (items.length < 2) return;
  for (const p of objects(items)) {
    sortExtensions(list(p, 'extension'));
    sortParameterList(list(p, 'part'));
  }
  sortBy<JsonObject>(items, (o1, o2) => {
    const n1 = str(o1.name);
    const n2 = str(o2.name);
    if (n1 !== undefined && n1 === n2 && n1 === 'property') {
      const code1 = primitiveValue(part(o1, 'code'));
      const code2 = primitiveValue(part(o2, 'code'));
      if (code1 === null || code2 === null) {
        throw new Error('NullPointerException while sorting (a property without a code part)');
      }
      if (code1.toLowerCase() !== code2.toLowerCase()) {
        return javaCompare(code1.toLowerCase(), code2.toLowerCase());
      }
      const v1 = part(o1, 'value') ? primitiveValue(part(o1, 'value'))?.toLowerCase() : undefined;
      const v2 = part(o2, 'value') ? primitiveValue(part(o2, 'value'))?.toLowerCase() : undefined;
      if (v1 !== undefined && v2 !== undefined && v1 !== v2) return javaCompare(v1, v2);
    }
    if (n1 !== undefined && n1 === n2 && n1 === 'designation') {
      const l1 = primitiveValue(part(o1, 'language'))?.toLowerCase() ?? '';
      const l2 = primitiveValue(part(o2, 'language'))?.toLowerCase() ?? '';
      if (l1 !== l2) return javaCompare(l1, l2);
      // Java: the `value` part is read through the part's own primitiveValue(), always null.
    }
    return javaCompare(n1, n2);
  });
}

/** OperationIssueSorter: severity, code, first expression, details.text. */
function sortIssues(items: Json[]): void {
  sortBy<JsonObject>(items, (o1, o2) => {
    const keys = [
      (i: JsonObject) => str(i.severity) ?? '',
      (i: JsonObject) => str(i.code) ?? '',
      (i: JsonObject) => (Array.isArray(i.expression) ? str(i.expression[0]) : undefined) ?? '',
      (i: JsonObject) => (isObject(i.details) ? str(i.details.text) : undefined) ?? '',
    ];
    for (const key of keys) {
      const r = javaCompare(key(o1), key(o2));
      if (r !== 0) return r;
    }
    return 0;
  });
}

/**
 * TxTesterSorters.sortParameters: the parameters (above); issues of OperationOutcomes in them;
 * nested Parameters; and a `message` made of several `; `-separated messages, in sorted order.
 */
export function sortParameters(p: JsonObject): void {
  sortParameterList(list(p, 'parameter'));
  for (const pp of objects(p.parameter)) {
    const r = pp.resource;
    if (isObject(r) && r.resourceType === 'OperationOutcome') sortIssues(list(r, 'issue'));
    if (isObject(r) && r.resourceType === 'Parameters') sortParameters(r);
    const k = valueKey(pp);
    const value = k === undefined ? undefined : str(pp[k]);
    if (pp.name === 'message' && k !== undefined && value !== undefined && value.includes('; ')) {
      const bits = javaSplit(value, '; ');
      bits.sort((a, b) => javaCompare(a, b));
      // Java: p.setValue(new StringType(…)), whatever the type was.
      delete pp[k];
      delete pp[`_${k}`];
      pp.valueString = bits.join('; ');
    }
  }
}

/** TxTesterSorters.sortValueSet. */
export function sortValueSet(vs: JsonObject): void {
  sortExtensions(list(vs, 'extension'));
  const expansion = vs.expansion;
  if (!isObject(expansion)) return;
  const parameters = list(expansion, 'parameter');
  if (parameters.length >= 2)
    for (const p of objects(parameters)) sortExtensions(list(p, 'extension'));
  sortBy<JsonObject>(parameters, (o1, o2) => {
    const r = javaCompare(str(o1.name), str(o2.name));
    return r !== 0 ? r : javaCompare(primitiveValue(o1), primitiveValue(o2));
  });
  // PropertyDefnSorter: by uri (a missing one first), then code.
  sortBy<JsonObject>(list(expansion, 'property'), (o1, o2) => {
    const u1 = str(o1.uri);
    const u2 = str(o2.uri);
    const i =
      u1 === undefined || u2 === undefined
        ? u1 === u2
          ? 0
          : u1 === undefined
            ? -1
            : 1
        : javaCompare(u1, u2);
    return i !== 0 ? i : javaCompare(str(o1.code), str(o2.code));
  });
  sortExtensions(list(expansion, 'extension'));
  sortContains(list(expansion, 'contains'));
  for (const cc of objects(expansion.contains)) sortContainsFeatures(cc);
}

/** ContainsSorter: by code. */
function sortContains(items: Json[]): void {
  sortBy<JsonObject>(items, (a, b) => javaCompare(str(a.code), str(b.code)));
}

/** TxTesterSorters.sortContainsFeatures: nested contains, extensions, designations, properties. */
function sortContainsFeatures(cc: JsonObject): void {
  sortContains(list(cc, 'contains'));
  sortExtensions(list(cc, 'extension'));
  // DesignationSorter: by language when both have one, else by value.
  sortBy<JsonObject>(list(cc, 'designation'), (o1, o2) =>
    str(o1.language) !== undefined && str(o2.language) !== undefined
      ? javaCompare(str(o1.language), str(o2.language))
      : javaCompare(str(o1.value), str(o2.value)),
  );
  sortBy<JsonObject>(list(cc, 'property'), (a, b) => javaCompare(str(a.code), str(b.code)));
  for (const c of objects(cc.contains)) sortContainsFeatures(c);
}

const byString = (items: Json[]): void =>
  sortBy<Json>(items, (a, b) => javaCompare(str(a), str(b)));
const byKey = (items: Json[], key: string): void =>
  sortBy<JsonObject>(items, (a, b) => javaCompare(str(a[key]), str(b[key])));

/** Java compares these enums by declaration order (CapabilityStatement.SystemRestfulInteraction). */
const SYSTEM_INTERACTIONS = ['transaction', 'batch', 'search-system', 'history-system'];

/** TxTesterSorters.sortCapStmt. */
export function sortCapStmt(cs: JsonObject): void {
  byString(list(cs, 'format'));
  byString(list(cs, 'instantiates'));
  byString(list(cs, 'imports'));
  byString(list(cs, 'acceptLanguage'));
  byKey(list(cs, 'rest'), 'mode'); // client < server, as the enum's order
  for (const r of objects(cs.rest)) {
    const security = isObject(r.security) ? r.security : undefined;
    if (security) {
      for (const cc of objects(security.service)) {
        sortBy<JsonObject>(list(cc, 'coding'), compareCodings);
      }
      sortBy<JsonObject>(list(security, 'service'), (o1, o2) => {
        const c1 = objects(o1.coding)[0];
        const c2 = objects(o2.coding)[0];
        return c1 && c2 ? compareCodings(c1, c2) : javaCompare(str(o1.text), str(o2.text));
      });
    }
    byKey(list(r, 'resource'), 'type');
    for (const res of objects(r.resource)) {
      byString(list(res, 'supportedProfile'));
      byKey(list(res, 'interaction'), 'code');
      byString(list(res, 'searchInclude'));
      byString(list(res, 'searchRevInclude'));
      byKey(list(res, 'searchParam'), 'name');
      byKey(list(res, 'operation'), 'name');
    }
    sortBy<JsonObject>(list(r, 'interaction'), (a, b) => {
      const i1 = SYSTEM_INTERACTIONS.indexOf(str(a.code) ?? '');
      const i2 = SYSTEM_INTERACTIONS.indexOf(str(b.code) ?? '');
      if (i1 < 0 || i2 < 0)
        throw new Error('NullPointerException while sorting (interaction code)');
      return i1 - i2;
    });
    byKey(list(r, 'searchParam'), 'name');
    byKey(list(r, 'operation'), 'name');
    byString(list(r, 'compartment'));
  }
}

function compareCodings(c1: JsonObject, c2: JsonObject): number {
  const s1 = str(c1.system);
  if (s1 === undefined) throw new Error('NullPointerException while sorting (coding system)');
  return s1 === str(c2.system)
    ? javaCompare(str(c1.code), str(c2.code))
    : javaCompare(s1, str(c2.system));
}

/** TxTesterSorters.sortTermCaps. */
export function sortTermCaps(tc: JsonObject): void {
  byKey(list(tc, 'codeSystem'), 'uri');
  for (const cs of objects(tc.codeSystem)) {
    // TCCodeSystemVersionSorter: a version without a code compares equal to anything.
    sortBy<JsonObject>(list(cs, 'version'), (a, b) =>
      str(a.code) === undefined || str(b.code) === undefined
        ? 0
        : javaCompare(str(a.code), str(b.code)),
    );
    for (const v of objects(cs.version)) {
      byString(list(v, 'language'));
      byString(list(v, 'property'));
      byKey(list(v, 'filter'), 'code');
    }
  }
  if (isObject(tc.expansion)) byKey(list(tc.expansion, 'parameter'), 'name');
}
