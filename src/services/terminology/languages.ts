import type { ConceptEntry, CodeSystemModel } from './code-system';
import type { Designation, Extension, ValueSetResource } from './fhir';

/** A language preference list (`displayLanguage` or `Accept-Language`): tags by weight. */
export interface LanguagePreference {
  /** As the caller wrote it, for messages. */
  text: string;
  tags: string[];
}

export function parseLanguages(text: string | undefined): LanguagePreference | undefined {
  if (!text || !text.trim()) return undefined;
  const tags = text
    .split(',')
    .map((part, i) => {
      const [tag, ...rest] = part.trim().split(';');
      const q = rest.map((r) => /^\s*q=([\d.]+)/.exec(r)?.[1]).find(Boolean);
      return { tag: tag.trim(), weight: q === undefined ? 1 : Number(q), i };
    })
    .filter((t) => t.tag && t.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.i - b.i)
    .map((t) => t.tag);
  return tags.length > 0 ? { text, tags } : undefined;
}

const EXPANSION_PARAMETER = 'http://hl7.org/fhir/StructureDefinition/valueset-expansion-parameter';

/**
 * The display languages a value set asks for when the request names none: its compose's
 * `displayLanguage` expansion parameter, else its own language.
 */
export function valueSetLanguages(valueSet: ValueSetResource): LanguagePreference | undefined {
  const compose = valueSet.compose as { extension?: Extension[] } | undefined;
  const parameter = (compose?.extension ?? [])
    .filter((e) => e.url === EXPANSION_PARAMETER)
    .map((e) => (e.extension as Extension[] | undefined) ?? [])
    .find((parts) => parts.some((p) => p.url === 'name' && p.valueCode === 'displayLanguage'));
  const value = parameter?.find((p) => p.url === 'value');
  const language = value?.valueCode ?? value?.valueString ?? valueSet.language;
  return parseLanguages(typeof language === 'string' ? language : undefined);
}

/** Whether a designation's language answers a wanted tag (`en` answers `en-AU` and back). */
export function languageMatches(wanted: string, actual: string | undefined): boolean {
  if (!actual) return false;
  if (wanted === '*') return true;
  const w = wanted.toLowerCase();
  const a = actual.toLowerCase();
  return a === w || a.startsWith(`${w}-`) || w.startsWith(`${a}-`);
}

/** The language of a concept's `display`: the code system's, else English. */
export function displayLanguageOf(model: CodeSystemModel): string {
  return model.resource.language ?? 'en';
}

/** Every display a concept has: its display (in the code system's language) and designations. */
export function displaysOf(model: CodeSystemModel, entry: ConceptEntry): Designation[] {
  const all: Designation[] = [];
  if (entry.display !== undefined)
    all.push({ language: displayLanguageOf(model), value: entry.display });
  for (const designation of entry.designations) {
    if (typeof designation?.value === 'string') all.push(designation);
  }
  return all;
}

/**
 * The display to show for a concept: the first wanted language that has one (the display
 * itself, or a designation that is not of a special use), else the display.
 */
export function preferredDisplay(
  model: CodeSystemModel,
  entry: ConceptEntry,
  languages: LanguagePreference | undefined,
): string | undefined {
  if (!languages) return entry.display;
  for (const tag of languages.tags) {
    if (entry.display !== undefined && languageMatches(tag, displayLanguageOf(model)))
      return entry.display;
    const designation = entry.designations.find(
      (d) => languageMatches(tag, d.language) && isDisplayUse(d),
    );
    if (designation) return designation.value;
  }
  return entry.display;
}

function isDisplayUse(designation: Designation): boolean {
  const use = designation.use;
  if (!use) return true;
  return use.code === 'display' || use.code === '900000000000013009' || use.code === 'preferred';
}
