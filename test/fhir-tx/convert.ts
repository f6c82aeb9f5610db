/**
 * The R5 ↔ R4 conversion HL7's runner does when the server is R4: its TerminologyClientR4
 * (org.hl7.fhir.convertors/…/txClient/TerminologyClientR4.java) converts each request — the
 * test's R5 Parameters with the R5 setup resources inside — to R4 before sending, and each answer
 * (and error OperationOutcome) from R4 to R5 before the runner scrubs, sorts and compares it with
 * the expected file, which stays R5. Both go through VersionConvertorFactory_40_50.
 *
 * The Java side parses into a model and converts element by element, so an element the other
 * version does not have is dropped — as is any JSON property the parser does not know. This port
 * does the same for the resources the terminology tests exchange (ValueSet, CodeSystem,
 * ConceptMap, Parameters, OperationOutcome): elements are kept by name, backbone elements are
 * followed, data types are copied as they are (they hardly differ between R4 and R5), and the
 * few R4/R5 differences the converters map are mapped (…40_50.java in conv40_50/resources40_50/).
 * Other resource types (CapabilityStatement, TerminologyCapabilities, Bundle, …) pass through.
 */
import { type Json, type JsonObject } from './compare';

export type Direction = 'r5-to-r4' | 'r4-to-r5';

// VersionConvertorConstants / ExtensionDefinitions
export const EXT_VS_EXP_PROP =
  'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion.property';
export const EXT_EXP_VS_CONT_PROP =
  'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion.contains.property';
export const EXT_VALUESET_FILTER_OP =
  'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.compose.include.filter.op';
export const EXT_VERSION_ALGORITHM =
  'http://hl7.org/fhir/5.0/StructureDefinition/extension-CanonicalResource.versionAlgorithm';
const EXT_OLD_CONCEPTMAP_EQUIVALENCE =
  'http://hl7.org/fhir/1.0/StructureDefinition/extension-ConceptMap.element.target.equivalence';
const EXT_CM_NOMAP_COMMENT =
  'http://hl7.org/fhir/4.0/StructureDefinition/extension-ConceptMap.group.element.target.comment';

const isObject = (v: Json | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const objects = (v: Json | undefined): JsonObject[] =>
  Array.isArray(v) ? v.filter(isObject) : isObject(v) ? [v] : [];
const copy = <T extends Json>(v: T): T => structuredClone(v);

/**
 * How an element is converted: `type` (a data type, copied), `resource` (converted by its own
 * type), or the path of a backbone element's shape.
 */
type Kind = string;
type Shape = Record<string, Kind>;

const T = 'type';
const element = { id: T, extension: T, modifierExtension: T };
const resource = { id: T, meta: T, implicitRules: T, language: T };
const domainResource = {
  ...resource,
  text: T,
  contained: 'resource',
  extension: T,
  modifierExtension: T,
};
const canonical = {
  url: T,
  identifier: T,
  version: T,
  name: T,
  title: T,
  status: T,
  experimental: T,
  date: T,
  publisher: T,
  contact: T,
  description: T,
  useContext: T,
  jurisdiction: T,
  purpose: T,
  copyright: T,
};
const designation = { ...element, language: T, use: T, value: T };

/**
 * The elements both R4 and R5 have, by path — those the converters copy across. An element
 * named `value[x]` stands for any `valueXxx`.
 */
const SHAPES: Record<string, Shape> = {
  ValueSet: {
    ...domainResource,
    ...canonical,
    immutable: T,
    compose: 'ValueSet.compose',
    expansion: 'ValueSet.expansion',
  },
  'ValueSet.compose': {
    ...element,
    lockedDate: T,
    inactive: T,
    include: 'ValueSet.compose.include',
    exclude: 'ValueSet.compose.include',
  },
  'ValueSet.compose.include': {
    ...element,
    system: T,
    version: T,
    concept: 'ValueSet.compose.include.concept',
    filter: 'ValueSet.compose.include.filter',
    valueSet: T,
  },
  'ValueSet.compose.include.concept': {
    ...element,
    code: T,
    display: T,
    designation: 'ValueSet.designation',
  },
  'ValueSet.designation': designation,
  'ValueSet.compose.include.filter': { ...element, property: T, op: T, value: T },
  'ValueSet.expansion': {
    ...element,
    identifier: T,
    timestamp: T,
    total: T,
    offset: T,
    parameter: 'ValueSet.expansion.parameter',
    contains: 'ValueSet.expansion.contains',
  },
  'ValueSet.expansion.parameter': { ...element, name: T, 'value[x]': T },
  'ValueSet.expansion.contains': {
    ...element,
    system: T,
    abstract: T,
    inactive: T,
    version: T,
    code: T,
    display: T,
    designation: 'ValueSet.designation',
    contains: 'ValueSet.expansion.contains',
  },
  CodeSystem: {
    ...domainResource,
    ...canonical,
    caseSensitive: T,
    valueSet: T,
    hierarchyMeaning: T,
    compositional: T,
    versionNeeded: T,
    content: T,
    supplements: T,
    count: T,
    filter: 'CodeSystem.filter',
    property: 'CodeSystem.property',
    concept: 'CodeSystem.concept',
  },
  'CodeSystem.filter': { ...element, code: T, description: T, operator: T, value: T },
  'CodeSystem.property': { ...element, code: T, uri: T, description: T, type: T },
  'CodeSystem.concept': {
    ...element,
    code: T,
    display: T,
    definition: T,
    designation: 'CodeSystem.concept.designation',
    property: 'CodeSystem.concept.property',
    concept: 'CodeSystem.concept',
  },
  'CodeSystem.concept.designation': designation,
  'CodeSystem.concept.property': { ...element, code: T, 'value[x]': T },
  Parameters: { ...resource, parameter: 'Parameters.parameter' },
  'Parameters.parameter': {
    ...element,
    name: T,
    'value[x]': T,
    resource: 'resource',
    part: 'Parameters.parameter',
  },
  OperationOutcome: { ...domainResource, issue: 'OperationOutcome.issue' },
  'OperationOutcome.issue': {
    ...element,
    severity: T,
    code: T,
    details: T,
    diagnostics: T,
    location: T,
    expression: T,
  },
};

/** Converts a resource (R5 → R4 for requests, R4 → R5 for answers); the input is left as is. */
export function convertResource(res: JsonObject, direction: Direction): JsonObject {
  const type = typeof res.resourceType === 'string' ? res.resourceType : '';
  if (type === 'ConceptMap' && direction === 'r5-to-r4') return conceptMapR5toR4(res);
  if (!SHAPES[type]) return copy(res);
  const out = convertElement(res, type, direction);
  return { resourceType: type, ...out };
}

function convertElement(src: JsonObject, path: string, direction: Direction): JsonObject {
  const shape = SHAPES[path];
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(src)) {
    const name = key.startsWith('_') ? key.slice(1) : key;
    const kind = shape[name] ?? (/^value[A-Z]/.test(name) ? shape['value[x]'] : undefined);
    if (kind === undefined) continue; // not an element of both versions: dropped
    if (kind === T || key.startsWith('_')) out[key] = copy(value);
    else if (kind === 'resource')
      out[key] = mapObjects(value, (r) => convertResource(r, direction));
    else out[key] = mapObjects(value, (e) => convertElement(e, kind, direction));
  }
  HOOKS[path]?.(src, out, direction);
  return out;
}

function mapObjects(value: Json, f: (o: JsonObject) => JsonObject): Json {
  if (Array.isArray(value)) return value.map((v) => (isObject(v) ? f(v) : v));
  return isObject(value) ? f(value) : value;
}

const urlOf = (e: JsonObject): string => (typeof e.url === 'string' ? e.url : '');

function extensions(o: JsonObject): JsonObject[] {
  return objects(o.extension);
}

/** Takes the extensions with `url` out of `out` (copyElement's extensionUrlsToIgnore). */
function takeExtensions(out: JsonObject, url: string): JsonObject[] {
  const all = extensions(out);
  const taken = all.filter((e) => e.url === url);
  if (taken.length > 0) {
    const rest = all.filter((e) => e.url !== url);
    if (rest.length > 0) out.extension = rest;
    else delete out.extension;
  }
  return taken;
}

function addExtension(out: JsonObject, ext: JsonObject): void {
  out.extension = [...extensions(out), ext];
}

/** The value[x] entries of an element, e.g. `{valueCode: "x"}`. */
function valueOf(o: JsonObject | undefined): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(o ?? {})) {
    if (/^_?value[A-Z]/.test(k)) out[k] = copy(v);
  }
  return out;
}

/** Element.getExtensionString(url) of a sub-extension: its primitive value, if any. */
function extensionString(ext: JsonObject, url: string): string | undefined {
  const found = extensions(ext).filter((e) => e.url === url);
  if (found.length > 1)
    throw new Error(`Multiple matching extensions found for extension '${url}'`);
  const v = Object.entries(found[0] ?? {}).find(([k]) => /^value[A-Z]/.test(k))?.[1];
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'
    ? `${v}`
    : undefined;
}

type Hook = (src: JsonObject, out: JsonObject, direction: Direction) => void;

const HOOKS: Record<string, Hook> = {
  // ValueSet40_50.convertValueSetExpansionComponent: R5 expansion.property ↔ R4 extension.
  'ValueSet.expansion': (src, out, direction) => {
    if (direction === 'r5-to-r4') {
      for (const p of objects(src.property)) {
        const code: JsonObject = { url: 'code' };
        if (typeof p.code === 'string') code.valueCode = p.code;
        const uri: JsonObject = { url: 'uri' };
        if (typeof p.uri === 'string') uri.valueUri = p.uri;
        addExtension(out, { url: EXT_VS_EXP_PROP, extension: [code, uri] });
      }
    } else {
      const properties = takeExtensions(out, EXT_VS_EXP_PROP).map((ext) => {
        const property: JsonObject = {};
        const code = extensionString(ext, 'code');
        if (code !== undefined) property.code = code;
        const uri = extensionString(ext, 'uri');
        if (uri !== undefined) property.uri = uri;
        return property;
      });
      if (properties.length > 0) out.property = properties;
    }
  },
  // ValueSet40_50.convertValueSetExpansionContainsComponent: contains.property ↔ extension.
  'ValueSet.expansion.contains': (src, out, direction) => {
    if (direction === 'r5-to-r4') {
      for (const p of objects(src.property)) {
        const ext: JsonObject = { url: EXT_EXP_VS_CONT_PROP };
        if (p.id !== undefined) ext.id = copy(p.id);
        const own = extensions(p).filter((e) => e.url !== 'code' && e.url !== 'value');
        const code: JsonObject = { url: 'code' };
        if (typeof p.code === 'string') code.valueCode = p.code;
        ext.extension = [...own.map(copy), code, { url: 'value', ...valueOf(p) }];
        addExtension(out, ext);
      }
    } else {
      const properties = takeExtensions(out, EXT_EXP_VS_CONT_PROP).map((ext) => {
        const property: JsonObject = {};
        if (ext.id !== undefined) property.id = copy(ext.id);
        const own = extensions(ext).filter(
          (e) => !['code', 'value[x]', 'value'].includes(urlOf(e)),
        );
        if (own.length > 0) property.extension = own.map(copy);
        const code = extensionString(ext, 'code');
        if (code !== undefined) property.code = code;
        const value =
          extensions(ext).find((e) => e.url === 'value') ??
          extensions(ext).find((e) => e.url === 'value[x]');
        Object.assign(property, valueOf(value));
        return property;
      });
      if (properties.length > 0) out.property = properties;
    }
  },
  // ValueSet40_50.convertFilterOperator: R5's child-of and descendent-leaf travel in R4 as an
  // extension on `op`.
  'ValueSet.compose.include.filter': (_src, out, direction) => {
    if (direction === 'r5-to-r4') {
      if (out.op === 'child-of' || out.op === 'descendent-leaf') {
        const op = isObject(out._op) ? out._op : {};
        addExtension(op, { url: EXT_VALUESET_FILTER_OP, valueCode: out.op });
        out._op = op;
        delete out.op;
      }
    } else if (isObject(out._op)) {
      const [ext] = takeExtensions(out._op, EXT_VALUESET_FILTER_OP);
      if (ext && typeof ext.valueCode === 'string') out.op = ext.valueCode;
      if (Object.keys(out._op).length === 0) delete out._op;
    }
  },
  // CodeSystem40_50.convertCodeSystem: versionAlgorithm[x] ↔ extension.
  CodeSystem: (src, out, direction) => {
    if (direction === 'r5-to-r4') {
      const algorithm = Object.entries(src).filter(([k]) => /^versionAlgorithm[A-Z]/.test(k));
      for (const [k, v] of algorithm) {
        addExtension(out, {
          url: EXT_VERSION_ALGORITHM,
          [k.replace('versionAlgorithm', 'value')]: copy(v),
        });
      }
    } else {
      const [ext] = takeExtensions(out, EXT_VERSION_ALGORITHM);
      for (const [k, v] of Object.entries(valueOf(ext))) {
        if (!k.startsWith('_')) out[k.replace('value', 'versionAlgorithm')] = v;
      }
    }
  },
};

// ---------------------------------------------------------------------------------------------
// ConceptMap40_50 (R5 → R4 only: the translate tests send R5 ConceptMaps as tx-resources)
// ---------------------------------------------------------------------------------------------

/** Copies `keys` (and their `_key` parts) from `src` to `out`. */
function pick(src: JsonObject, out: JsonObject, keys: string[]): void {
  for (const k of keys) {
    if (src[k] !== undefined) out[k] = copy(src[k]);
    if (src[`_${k}`] !== undefined) out[`_${k}`] = copy(src[`_${k}`]);
  }
}

/** copyElement / copyBackboneElement: id, extensions (less some urls), modifierExtension. */
function elementBase(src: JsonObject, ignore: string[] = []): JsonObject {
  const out: JsonObject = {};
  pick(src, out, ['id', 'modifierExtension']);
  const ext = extensions(src).filter((e) => !ignore.includes(urlOf(e)));
  if (ext.length > 0) out.extension = ext.map(copy);
  return out;
}

const RELATIONSHIP_TO_EQUIVALENCE: Record<string, string> = {
  'related-to': 'relatedto',
  equivalent: 'equivalent',
  'source-is-narrower-than-target': 'wider',
  'source-is-broader-than-target': 'narrower',
  'not-related-to': 'disjoint',
};

const UNMAPPED_MODE: Record<string, string> = {
  'use-source-code': 'provided',
  fixed: 'fixed',
  'other-map': 'other-map',
};

function conceptMapR5toR4(src: JsonObject): JsonObject {
  const out: JsonObject = { resourceType: 'ConceptMap', ...elementBase(src) };
  pick(src, out, ['meta', 'implicitRules', 'language', 'text']);
  if (Array.isArray(src.contained)) {
    out.contained = objects(src.contained).map((r) => convertResource(r, 'r5-to-r4'));
  }
  pick(src, out, ['url']);
  // R4 has one identifier.
  const [identifier] = objects(src.identifier);
  if (identifier) out.identifier = copy(identifier);
  pick(src, out, ['version', 'name', 'title', 'status', 'experimental', 'date', 'publisher']);
  pick(src, out, ['contact', 'description', 'useContext', 'jurisdiction', 'purpose', 'copyright']);
  for (const [r5, r4] of [
    ['sourceScopeUri', 'sourceUri'],
    ['sourceScopeCanonical', 'sourceCanonical'],
    ['targetScopeUri', 'targetUri'],
    ['targetScopeCanonical', 'targetCanonical'],
  ] as const) {
    if (src[r5] !== undefined) out[r4] = copy(src[r5]);
  }
  const attributes = objects(src.additionalAttribute);
  const groups = objects(src.group).map((g) => {
    const group = elementBase(g);
    for (const side of ['source', 'target'] as const) {
      if (typeof g[side] === 'string') {
        // CanonicalPair: url|version
        const [url, version] = g[side].split('|');
        group[side] = url!;
        if (version !== undefined) group[`${side}Version`] = version;
      }
    }
    const elements = objects(g.element).map((e) => {
      const el = elementBase(e, [EXT_CM_NOMAP_COMMENT]);
      pick(e, el, ['code', 'display']);
      if (e.noMap === true) {
        const target: JsonObject = { equivalence: 'unmatched' };
        const comment = extensions(e).find((x) => x.url === EXT_CM_NOMAP_COMMENT);
        if (comment && typeof comment.valueString === 'string')
          target.comment = comment.valueString;
        el.target = [target];
      } else {
        const targets = objects(e.target).map((t) => conceptMapTarget(t, attributes));
        if (targets.length > 0) el.target = targets;
      }
      return el;
    });
    if (elements.length > 0) group.element = elements;
    if (isObject(g.unmapped)) {
      const u = g.unmapped;
      const unmapped = elementBase(u);
      if (typeof u.mode === 'string' && UNMAPPED_MODE[u.mode])
        unmapped.mode = UNMAPPED_MODE[u.mode]!;
      pick(u, unmapped, ['code', 'display']);
      if (u.otherMap !== undefined) unmapped.url = copy(u.otherMap);
      group.unmapped = unmapped;
    }
    return group;
  });
  if (groups.length > 0) out.group = groups;
  return out;
}

function conceptMapTarget(t: JsonObject, attributes: JsonObject[]): JsonObject {
  const target = elementBase(t, [EXT_OLD_CONCEPTMAP_EQUIVALENCE]);
  pick(t, target, ['code', 'display']);
  const old = extensions(t).find((e) => e.url === EXT_OLD_CONCEPTMAP_EQUIVALENCE);
  if (old && typeof old.valueCode === 'string') target.equivalence = old.valueCode;
  else if (typeof t.relationship === 'string') {
    const equivalence = RELATIONSHIP_TO_EQUIVALENCE[t.relationship];
    if (equivalence) target.equivalence = equivalence;
  } else target.equivalence = 'relatedto';
  pick(t, target, ['comment']);
  for (const key of ['dependsOn', 'product'] as const) {
    const others = objects(t[key]).map((o) => {
      const other = elementBase(o);
      if (typeof o.attribute === 'string') {
        const uri = attributes.find((a) => a.code === o.attribute)?.uri;
        if (uri !== undefined) other.property = copy(uri);
      }
      if (isObject(o.valueCoding)) {
        pick(o.valueCoding, other, ['system', 'display']);
        if (o.valueCoding.code !== undefined) other.value = copy(o.valueCoding.code);
      } else {
        const v = Object.entries(o).find(([k]) => /^value[A-Z]/.test(k))?.[1];
        if (v !== undefined && !isObject(v) && !Array.isArray(v)) other.value = `${v}`;
      }
      return other;
    });
    if (others.length > 0) target[key] = others;
  }
  return target;
}

/**
 * What the Java composer leaves out after a parse: empty objects and lists and null values (an
 * element with nothing in it is not written). In the `_x` lists of primitives, a null keeps its
 * place (it lines the list up with `x`), unless all of them are null.
 */
export function dropEmpty(v: Json, inPrimitiveList = false): Json | undefined {
  if (v === null) return inPrimitiveList ? null : undefined;
  if (Array.isArray(v)) {
    const items = v.map((x) => dropEmpty(x, inPrimitiveList));
    if (inPrimitiveList) {
      return items.some((x) => x !== null && x !== undefined)
        ? items.map((x) => x ?? null)
        : undefined;
    }
    const kept = items.filter((x): x is Json => x !== undefined);
    return kept.length > 0 ? kept : undefined;
  }
  if (typeof v === 'object') {
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) {
      const y = dropEmpty(x, k.startsWith('_') && Array.isArray(x));
      if (y !== undefined) out[k] = y;
    }
    return Object.keys(out).length > 0 ? out : inPrimitiveList ? null : undefined;
  }
  return v;
}
