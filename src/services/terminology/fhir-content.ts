import crypto from 'node:crypto';
import type { ConceptDescription, ConceptName, ConceptVersionEntity } from '../../db/entities';
import { AppError } from '../../errors';
import type { ConceptContent } from '../content/concept.service';
import { isObject, type CodeSystemConcept } from './fhir';
import { mnemonic } from '../shared/validation';

/**
 * The content of FHIR resources a write stores (spec operations §4.7): a CodeSystem's concepts,
 * a ValueSet's compose as collection references, a ConceptMap's groups as mappings. Pure: what
 * is checked here needs no database.
 */

const LOCALE = /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/;

/** A concept of a CodeSystem, as the body gives it. */
export interface FhirConcept {
  code: string;
  /** The display (preferred, in the resource's language) and the designations. */
  names: Array<Omit<ConceptName, 'uuid'>>;
  definition?: string;
  conceptClass?: string;
  datatype?: string;
  retired: boolean;
  parents: string[];
}

/**
 * The concepts of a CodeSystem (nested ones too, their nesting as parents). Every parent must be
 * a concept of the body: the source is made to hold exactly these.
 */
export function fhirConceptsOf(resource: Record<string, unknown>, language: string): FhirConcept[] {
  const found: FhirConcept[] = [];
  const seen = new Set<string>();
  const visit = (concepts: unknown, parent: string | undefined, path: string) => {
    if (concepts === undefined) return;
    if (!Array.isArray(concepts)) throw AppError.field(path, 'Must be a list of concepts.');
    concepts.forEach((raw: unknown, i) => {
      const at = `${path}[${i}]`;
      if (!isObject(raw) || typeof raw.code !== 'string' || raw.code.trim() === '') {
        throw AppError.field(at, 'A concept needs a code.');
      }
      const concept = raw as unknown as CodeSystemConcept;
      const checked = mnemonic.safeParse(concept.code);
      if (!checked.success) {
        throw AppError.field(
          `${at}.code`,
          `Concept '${concept.code}': ${checked.error.issues[0].message}`,
        );
      }
      const code = checked.data;
      if (seen.has(code)) throw AppError.field(at, `The code '${code}' is given twice.`);
      seen.add(code);
      const properties = Array.isArray(concept.property) ? concept.property.filter(isObject) : [];
      const value = (name: string) => {
        const p = properties.find((x) => x.code === name);
        return p === undefined ? undefined : (p.valueString ?? p.valueCode ?? p.valueBoolean);
      };
      const text = (name: string): string | undefined => {
        const v = value(name);
        return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
      };
      const status = value('status');
      const parents = [
        ...(parent !== undefined ? [parent] : []),
        ...properties
          .filter((p) => p.code === 'parent')
          .map((p) => p.valueCode ?? p.valueString ?? p.valueCoding?.code)
          .filter((v): v is string => typeof v === 'string'),
      ];
      const designations = Array.isArray(concept.designation)
        ? concept.designation.filter(isObject)
        : [];
      const display =
        typeof concept.display === 'string' && concept.display.trim() !== ''
          ? concept.display.trim()
          : undefined;
      const names: FhirConcept['names'] = [
        ...(display !== undefined
          ? [{ name: display, locale: language, locale_preferred: true, name_type: null }]
          : []),
        ...designations
          .filter((d) => typeof d.value === 'string' && d.value.trim() !== '')
          .map((d) => ({
            name: String(d.value).trim(),
            locale: typeof d.language === 'string' ? d.language : language,
            locale_preferred: false,
            name_type: typeof d.use?.code === 'string' ? d.use.code : null,
          }))
          // The display comes back as a designation too (reads list every name).
          .filter((d) => !(d.name === display && d.locale === language)),
      ].map((n) => ({ ...n, external_id: null }));
      for (const name of names) {
        if (!LOCALE.test(name.locale)) {
          throw AppError.field(`${at}.designation`, `'${name.locale}' is not a language code.`);
        }
        if (name.name.length > 2000) {
          throw AppError.field(`${at}.designation`, 'A name has at most 2000 characters.');
        }
      }
      const definition =
        typeof concept.definition === 'string' && concept.definition.trim() !== ''
          ? concept.definition.trim()
          : undefined;
      found.push({
        code,
        names,
        definition,
        conceptClass: text('conceptclass'),
        datatype: text('datatype'),
        retired: value('inactive') === true || status === 'retired' || status === 'inactive',
        parents: [...new Set(parents)],
      });
      visit(concept.concept, code, `${at}.concept`);
    });
  };
  visit(resource.concept, undefined, 'concept');
  for (const concept of found) {
    for (const parent of concept.parents) {
      if (!seen.has(parent)) {
        throw AppError.field(
          'concept',
          `Concept '${concept.code}': its parent '${parent}' is not a concept of this CodeSystem.`,
        );
      }
      if (parent === concept.code) {
        throw AppError.field('concept', `Concept '${concept.code}' cannot be its own parent.`);
      }
    }
  }
  return found;
}

/**
 * The content a concept version takes from the body: what FHIR carries (names, definition,
 * parents, status) replaces; what only OCL has (concept class and datatype unless given as
 * properties, external id, extras, name types) stays as it is. Names and descriptions equal to
 * those stored are kept as stored, so that a resource read and written back changes nothing.
 */
export function conceptContentFrom(
  concept: FhirConcept,
  language: string,
  current: ConceptContent | null,
): ConceptContent {
  const stored = current?.names ?? [];
  const same = (a: { name: string; locale: string }, b: { name: string; locale: string }) =>
    a.name === b.name && a.locale === b.locale;
  const names: ConceptName[] =
    concept.names.length === 0
      ? stored.length > 0
        ? stored
        : [
            {
              uuid: crypto.randomUUID(),
              name: concept.code,
              locale: language,
              locale_preferred: true,
              name_type: null,
              external_id: null,
            },
          ]
      : concept.names.length === stored.length &&
          concept.names.every((n) => stored.some((s) => same(n, s)))
        ? stored
        : concept.names.map(
            (n) => stored.find((s) => same(n, s)) ?? { ...n, uuid: crypto.randomUUID() },
          );
  const storedDescriptions = current?.descriptions ?? [];
  const descriptions: ConceptDescription[] =
    concept.definition === undefined
      ? []
      : storedDescriptions[0]?.description === concept.definition
        ? storedDescriptions
        : [
            {
              uuid: crypto.randomUUID(),
              description: concept.definition,
              locale: language,
              locale_preferred: true,
              description_type: null,
              external_id: null,
            },
            ...storedDescriptions.slice(1),
          ];
  return {
    conceptClass: concept.conceptClass ?? current?.conceptClass ?? 'Misc',
    datatype: concept.datatype ?? current?.datatype ?? 'N/A',
    externalId: current?.externalId ?? null,
    names,
    descriptions,
    extras: current?.extras ?? null,
    retired: concept.retired,
    parentCodes: concept.parents,
  };
}

/** The codes of the current concept versions, by code. */
export function byCode<T extends Pick<ConceptVersionEntity, 'mnemonic'>>(
  versions: T[],
): Map<string, T> {
  return new Map(versions.map((v) => [v.mnemonic, v]));
}

/** Whether the body lists every concept (FHIR `content` complete, the default). */
export function listsEveryConcept(resource: Record<string, unknown>): boolean {
  const content = resource.content;
  return content === undefined || content === 'complete';
}

/** spec operations §4.7 rule 5: a ValueSet's includes (each naming its system) and excludes. */
export function referenceInputs(resource: Record<string, unknown>): Array<Record<string, unknown>> {
  const compose = resource.compose;
  if (compose === undefined) return [];
  if (!isObject(compose)) throw AppError.field('compose', 'Must be an object.');
  const components = (field: 'include' | 'exclude') => {
    const list = compose[field];
    if (list === undefined) return [];
    if (!Array.isArray(list)) throw AppError.field(`compose.${field}`, 'Must be a list.');
    return list.map((item: unknown, i) => {
      const at = `compose.${field}[${i}]`;
      if (!isObject(item)) throw AppError.field(at, 'Must be an object.');
      if (typeof item.system !== 'string' || item.system.trim() === '') {
        throw AppError.field(`${at}.system`, 'system is required.');
      }
      if (item.valueSet !== undefined) {
        throw AppError.field(`${at}.valueSet`, 'Including other value sets is not supported here.');
      }
      return {
        system: item.system,
        ...(typeof item.version === 'string' ? { version: item.version } : {}),
        ...(item.concept !== undefined ? { concept: item.concept } : {}),
        ...(item.filter !== undefined ? { filter: item.filter } : {}),
        ...(field === 'exclude' ? { exclude: true } : {}),
      };
    });
  };
  return [...components('include'), ...components('exclude')];
}

/** One mapping of a ConceptMap, as the mapping service takes it (OCL fields). */
export interface FhirMapping {
  mapType: string;
  fromSourceUrl: string;
  fromSourceVersion?: string;
  fromConceptCode: string;
  fromConceptName?: string;
  toSourceUrl: string;
  toSourceVersion?: string;
  toConceptCode: string;
  toConceptName?: string;
}

/**
 * The map type of a ConceptMap target: the one our equivalence extension carries (a round trip
 * keeps it), else the inverse of `equivalenceOf`: equivalent/equal → SAME-AS, wider/subsumes →
 * NARROWER-THAN, narrower/specializes → BROADER-THAN, any other → the equivalence upper-cased.
 */
export function mapTypeOf(target: Record<string, unknown>, at: string): string {
  const extensions = Array.isArray(target.extension) ? target.extension.filter(isObject) : [];
  const carried = extensions.find(
    (e) =>
      typeof e.url === 'string' &&
      e.url.endsWith('/ConceptMap/equivalence') &&
      typeof e.valueString === 'string' &&
      e.valueString.trim() !== '',
  );
  if (carried) return String(carried.valueString).trim();
  const equivalence = target.equivalence;
  if (typeof equivalence !== 'string' || equivalence.trim() === '') {
    throw AppError.field(`${at}.equivalence`, 'equivalence is required.');
  }
  switch (equivalence) {
    case 'equivalent':
    case 'equal':
      return 'SAME-AS';
    case 'wider':
    case 'subsumes':
      return 'NARROWER-THAN';
    case 'narrower':
    case 'specializes':
      return 'BROADER-THAN';
    case 'unmatched':
      throw AppError.field(`${at}.equivalence`, 'An unmatched element maps to nothing.');
    default:
      return equivalence.toUpperCase();
  }
}

/**
 * The mappings of a ConceptMap: each `group.element.target` is a mapping from
 * `group.source`/`element.code` to `group.target`/`target.code`. URLs of this server's own
 * repositories (`{base}/orgs/…/sources/…/`) are stored relative, as mapping ends name them.
 */
export function fhirMappingsOf(resource: Record<string, unknown>, baseUrl: string): FhirMapping[] {
  const groups = resource.group;
  if (groups === undefined) return [];
  if (!Array.isArray(groups)) throw AppError.field('group', 'Must be a list.');
  const local = (url: string) => (url.startsWith(`${baseUrl}/`) ? url.slice(baseUrl.length) : url);
  const text = (record: Record<string, unknown>, field: string, at: string) => {
    const value = record[field];
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') throw AppError.field(`${at}.${field}`, 'Must be a string.');
    return value.trim() === '' ? undefined : value.trim();
  };
  const found: FhirMapping[] = [];
  const seen = new Set<string>();
  groups.forEach((group: unknown, g) => {
    const at = `group[${g}]`;
    if (!isObject(group)) throw AppError.field(at, 'Must be an object.');
    const source = text(group, 'source', at);
    const target = text(group, 'target', at);
    if (source === undefined) throw AppError.field(`${at}.source`, 'source is required.');
    if (target === undefined) throw AppError.field(`${at}.target`, 'target is required.');
    const elements = group.element ?? [];
    if (!Array.isArray(elements)) throw AppError.field(`${at}.element`, 'Must be a list.');
    elements.forEach((element: unknown, e) => {
      const eat = `${at}.element[${e}]`;
      if (!isObject(element)) throw AppError.field(eat, 'Must be an object.');
      const code = text(element, 'code', eat);
      if (code === undefined) throw AppError.field(`${eat}.code`, 'code is required.');
      const targets = element.target ?? [];
      if (!Array.isArray(targets)) throw AppError.field(`${eat}.target`, 'Must be a list.');
      targets.forEach((item: unknown, i) => {
        const tat = `${eat}.target[${i}]`;
        if (!isObject(item)) throw AppError.field(tat, 'Must be an object.');
        const toCode = text(item, 'code', tat);
        if (toCode === undefined) throw AppError.field(`${tat}.code`, 'code is required.');
        const mapping: FhirMapping = {
          mapType: mapTypeOf(item, tat),
          fromSourceUrl: local(source),
          fromSourceVersion: text(group, 'sourceVersion', at),
          fromConceptCode: code,
          fromConceptName: text(element, 'display', eat),
          toSourceUrl: local(target),
          toSourceVersion: text(group, 'targetVersion', at),
          toConceptCode: toCode,
          toConceptName: text(item, 'display', tat),
        };
        const key = mappingKey(mapping);
        if (seen.has(key)) throw AppError.field(tat, 'This mapping is given twice.');
        seen.add(key);
        found.push(mapping);
      });
    });
  });
  return found;
}

/** What tells one mapping from another (spec core §2.7 uniqueness): map type and both ends. */
export function mappingKey(m: {
  mapType: string | null;
  fromSourceUrl: string | null;
  fromConceptCode: string | null;
  toSourceUrl: string | null;
  toConceptCode: string | null;
}): string {
  return JSON.stringify([
    m.mapType,
    m.fromSourceUrl,
    m.fromConceptCode,
    m.toSourceUrl,
    m.toConceptCode,
  ]);
}
