import type { ConceptEntry, CodeSystemModel } from './code-system';
import type { Designation } from './fhir';

/** A language preference list (`displayLanguage` or `Accept-Language`): tags by weight. */
export interface LanguagePreference {
  /** As the caller wrote it, for messages. */
  text: string;
  tags: string[];
  /** `*; q=0`: only the wanted languages, no display in another one stands in ("hard"). */
  strict?: boolean;
}

export function parseLanguages(text: string | undefined): LanguagePreference | undefined {
  if (!text || !text.trim()) return undefined;
  const weighted = text.split(',').map((part, i) => {
    const [tag, ...rest] = part.trim().split(';');
    const q = rest.map((r) => /^\s*q=([\d.]+)/.exec(r)?.[1]).find(Boolean);
    return { tag: tag.trim(), weight: q === undefined ? 1 : Number(q), i };
  });
  const tags = weighted
    .filter((t) => t.tag && t.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.i - b.i)
    .map((t) => t.tag);
  if (tags.length === 0) return undefined;
  const strict = weighted.some((t) => t.tag === '*' && t.weight === 0);
  return strict ? { text, tags, strict } : { text, tags };
}

/** Whether a tag is a well-formed language tag (BCP 47 shape), or `*`. */
export function isLanguageTag(tag: string): boolean {
  return tag === '*' || /^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$/.test(tag);
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

/**
 * Every display a concept has: its display (in the code system's language, none when the code
 * system states none) and the designations that are displays (of no special use).
 */
export function displaysOf(model: CodeSystemModel, entry: ConceptEntry): Designation[] {
  const all: Designation[] = [];
  if (entry.display !== undefined)
    all.push({ language: model.resource.language, value: entry.display });
  for (const designation of entry.designations) {
    if (typeof designation?.value === 'string' && isDisplayUse(designation)) all.push(designation);
  }
  return all;
}

/** The use of a designation that is a concept's display in its language. */
export const PREFERRED_FOR_LANGUAGE = {
  system: 'http://terminology.hl7.org/CodeSystem/hl7TermMaintInfra',
  code: 'preferredForLanguage',
  display: 'Preferred For Language',
};

/** The display shown for a concept, and the designation that stands in for its own display. */
export interface DisplayChoice {
  value?: string;
  designation?: Designation;
}

/**
 * The display to show for a concept: the first wanted language that has one (the display
 * itself, or a designation that is not of a special use), else the display — or none when the
 * preference is strict.
 */
export function chooseDisplay(
  model: CodeSystemModel,
  entry: ConceptEntry,
  languages: LanguagePreference | undefined,
): DisplayChoice {
  if (!languages) return { value: entry.display };
  for (const tag of languages.tags) {
    if (entry.display !== undefined && languageMatches(tag, displayLanguageOf(model)))
      return { value: entry.display };
    const designation = entry.designations.find(
      (d) => languageMatches(tag, d.language) && isDisplayUse(d),
    );
    if (designation) return { value: designation.value, designation };
  }
  return languages.strict ? {} : { value: entry.display };
}

/** The display to show for a concept in the wanted languages, else its display. */
export function preferredDisplay(
  model: CodeSystemModel,
  entry: ConceptEntry,
  languages: LanguagePreference | undefined,
): string | undefined {
  return chooseDisplay(model, entry, languages).value ?? entry.display;
}

function isDisplayUse(designation: Designation): boolean {
  const use = designation.use;
  if (!use) return true;
  return use.code === 'display' || use.code === '900000000000013009' || use.code === 'preferred';
}
