import type {
  CodeSystemConcept,
  CodeSystemResource,
  ConceptProperty,
  Designation,
  Extension,
  PropertyDefinition,
} from './fhir';
import { standardsStatusOf } from './fhir';

/** The standard concept properties (http://hl7.org/fhir/concept-properties) by what they mean. */
const CONCEPT_PROPERTIES = 'http://hl7.org/fhir/concept-properties#';
const STANDARD = ['status', 'inactive', 'notSelectable', 'parent', 'child', 'deprecated'] as const;
type Standard = (typeof STANDARD)[number];

export const STANDARDS_STATUS =
  'http://hl7.org/fhir/StructureDefinition/structuredefinition-standards-status';

/** A concept of a code system, indexed: its hierarchy, status and designations. */
export interface ConceptEntry {
  code: string;
  display?: string;
  definition?: string;
  designations: Designation[];
  properties: ConceptProperty[];
  extension?: Extension[];
  parents: ConceptEntry[];
  children: ConceptEntry[];
  /** The concept's status property (`active`, `retired`, `deprecated`, …), if it has one. */
  status?: string;
  inactive: boolean;
  /** Not selectable (`notSelectable` true): shown in expansions as `abstract`. */
  abstract: boolean;
  deprecated: boolean;
}

/**
 * A code system as the operations read it: concepts by code (case-insensitively when the code
 * system says so), in document order, with parents and children from nesting and from the
 * `parent`/`child` properties, and supplements' designations and properties merged in.
 */
export class CodeSystemModel {
  readonly url: string;
  readonly version?: string;
  readonly concepts: ConceptEntry[] = [];
  readonly supplements: CodeSystemResource[] = [];
  /** The supplement (`url|version`) each designation a supplement added came from. */
  readonly designationSources = new Map<Designation, string>();
  private readonly byCode = new Map<string, ConceptEntry>();
  private readonly propertyCodes = new Map<Standard, string>();

  constructor(readonly resource: CodeSystemResource) {
    this.url = resource.url ?? '';
    this.version = resource.version;
    for (const name of STANDARD) {
      const defined = (resource.property ?? []).find((p) => p.uri === CONCEPT_PROPERTIES + name);
      this.propertyCodes.set(name, defined?.code ?? name);
    }
    const parentLinks: Array<[ConceptEntry, string]> = [];
    const visit = (concepts: CodeSystemConcept[] | undefined, parent?: ConceptEntry) => {
      for (const concept of concepts ?? []) {
        if (typeof concept?.code !== 'string') continue;
        const entry = this.entryOf(concept);
        if (!this.byCode.has(this.keyOf(entry.code))) {
          this.concepts.push(entry);
          this.byCode.set(this.keyOf(entry.code), entry);
        }
        if (parent) link(parent, entry);
        for (const property of entry.properties) {
          const value = property.valueCode ?? property.valueString ?? property.valueCoding?.code;
          if (value === undefined) continue;
          if (property.code === this.propertyCodes.get('parent')) parentLinks.push([entry, value]);
          if (property.code === this.propertyCodes.get('child'))
            parentLinks.push([entry, `>${value}`]);
        }
        visit(concept.concept, entry);
      }
    };
    visit(resource.concept);
    for (const [entry, other] of parentLinks) {
      const isChild = other.startsWith('>');
      const target = this.concept(isChild ? other.slice(1) : other);
      if (!target) continue;
      if (isChild) link(entry, target);
      else link(target, entry);
    }
  }

  get caseSensitive(): boolean {
    return this.resource.caseSensitive !== false;
  }

  get content(): string {
    return this.resource.content ?? 'complete';
  }

  /** `url|version`, as the operations name a code system version. */
  get canonical(): string {
    return this.version ? `${this.url}|${this.version}` : this.url;
  }

  concept(code: string): ConceptEntry | undefined {
    return this.byCode.get(this.keyOf(code));
  }

  /** The definition of a property by its code, from the code system or a supplement. */
  propertyDefinition(code: string): PropertyDefinition | undefined {
    for (const resource of [this.resource, ...this.supplements]) {
      const found = (resource.property ?? []).find((p) => p.code === code);
      if (found) return found;
    }
    return undefined;
  }

  /** The code of a standard property in this code system (its own code for the standard URI). */
  standardProperty(name: Standard): string {
    return this.propertyCodes.get(name) ?? name;
  }

  /** Every concept below `entry` (not itself), each once. */
  descendants(entry: ConceptEntry): ConceptEntry[] {
    const seen = new Set<ConceptEntry>([entry]);
    const found: ConceptEntry[] = [];
    const stack = [...entry.children].reverse();
    while (stack.length > 0) {
      const next = stack.pop() as ConceptEntry;
      if (seen.has(next)) continue;
      seen.add(next);
      found.push(next);
      for (let i = next.children.length - 1; i >= 0; i -= 1) stack.push(next.children[i]);
    }
    return found;
  }

  /** Whether `ancestor` is `entry` or above it. */
  subsumes(ancestor: ConceptEntry, entry: ConceptEntry): boolean {
    if (ancestor === entry) return true;
    const seen = new Set<ConceptEntry>();
    const stack = [...entry.parents];
    while (stack.length > 0) {
      const next = stack.pop() as ConceptEntry;
      if (next === ancestor) return true;
      if (seen.has(next)) continue;
      seen.add(next);
      stack.push(...next.parents);
    }
    return false;
  }

  /** Supplements add designations and properties to this code system's concepts. */
  withSupplement(supplement: CodeSystemResource): CodeSystemModel {
    const merged = new CodeSystemModel(this.resource);
    merged.supplements.push(...this.supplements, supplement);
    const add = (concepts: CodeSystemConcept[] | undefined, source: CodeSystemResource) => {
      const canonical = source.version ? `${source.url}|${source.version}` : (source.url ?? '');
      for (const concept of concepts ?? []) {
        const entry = merged.concept(concept.code);
        if (entry) {
          const added = [...(concept.designation ?? [])];
          if (concept.display && source.language)
            added.push({ language: source.language, value: concept.display });
          for (const designation of added) merged.designationSources.set(designation, canonical);
          entry.designations.push(...added);
          entry.properties.push(...(concept.property ?? []));
          if (concept.extension)
            entry.extension = [...(entry.extension ?? []), ...concept.extension];
        }
        add(concept.concept, source);
      }
    };
    for (const earlier of merged.supplements.slice(0, -1)) add(earlier.concept, earlier);
    add(supplement.concept, supplement);
    return merged;
  }

  private keyOf(code: string): string {
    return this.caseSensitive ? code : code.toLowerCase();
  }

  private entryOf(concept: CodeSystemConcept): ConceptEntry {
    const properties = Array.isArray(concept.property) ? [...concept.property] : [];
    const value = (name: Standard) =>
      properties.find((p) => p.code === this.propertyCodes.get(name));
    const status =
      value('status')?.valueCode ?? value('status')?.valueString ?? standardsStatusOf(concept);
    const inactive =
      value('inactive')?.valueBoolean === true ||
      status === 'retired' ||
      status === 'inactive' ||
      (concept.extension ?? []).some(
        (e) =>
          e.url === 'http://hl7.org/fhir/StructureDefinition/codesystem-concept-status' &&
          (e.valueCode === 'retired' || e.valueCode === 'inactive'),
      );
    return {
      code: concept.code,
      display: concept.display,
      definition: concept.definition,
      designations: Array.isArray(concept.designation) ? [...concept.designation] : [],
      properties,
      extension: concept.extension,
      parents: [],
      children: [],
      status,
      inactive,
      abstract: value('notSelectable')?.valueBoolean === true,
      deprecated: status === 'deprecated' || value('deprecated') !== undefined,
    };
  }
}

function link(parent: ConceptEntry, child: ConceptEntry): void {
  if (!parent.children.includes(child)) parent.children.push(child);
  if (!child.parents.includes(parent)) child.parents.push(parent);
}
