import type { Coding, ConceptMapResource } from './fhir';
import { TerminologyError } from './issues';
import { splitCanonical, type TerminologyLibrary } from './library';
import { canonicalOf } from './expand';

export interface TranslateInput {
  /** The concept map (`url`, `url|version`), or none to search every map for the source. */
  url?: string;
  conceptMapVersion?: string;
  coding: Coding;
  targetSystem?: string;
  /** Translate from target to source. */
  reverse?: boolean;
}

/** R4 equivalence from an R5 relationship (and our map types). */
function equivalenceOf(target: { equivalence?: string; relationship?: string }): string {
  if (target.equivalence) return target.equivalence;
  switch (target.relationship ?? '') {
    case 'equivalent':
      return 'equivalent';
    case 'source-is-narrower-than-target':
      return 'wider';
    case 'source-is-broader-than-target':
      return 'narrower';
    case 'not-related-to':
      return 'unmatched';
    default:
      return 'relatedto';
  }
}

function relationshipOf(equivalence: string): string {
  switch (equivalence) {
    case 'equivalent':
    case 'equal':
      return 'equivalent';
    case 'wider':
    case 'subsumes':
      return 'source-is-narrower-than-target';
    case 'narrower':
    case 'specializes':
      return 'source-is-broader-than-target';
    case 'unmatched':
    case 'disjoint':
      return 'not-related-to';
    default:
      return 'related-to';
  }
}

/** A code a concept map gives the input code. */
export interface TranslationMatch {
  /** The code matched: a target (a source when reversed, with `source` the code it maps from). */
  concept: Coding;
  source?: Coding;
  /** R4 equivalence. */
  equivalence: string;
  /** R5 relationship. */
  relationship: string;
  /** The concept map (`url|version`). */
  originMap: string;
}

/** What ConceptMap/$translate answers. */
export interface TranslationResult {
  result: boolean;
  message?: string;
  matches: TranslationMatch[];
}

/** ConceptMap/$translate: the targets a map gives a code (or the sources, reversed). */
export async function translate(
  library: TerminologyLibrary,
  input: TranslateInput,
): Promise<TranslationResult> {
  // spec ops §4.7: `url`, `system` and `code` are mandatory. Without a map, R5's form (which
  // the HL7 terminology tests use) searches every map from the system to a named target system.
  if (!input.coding.code) throw TerminologyError.invalid('No code was given to translate', 'code');
  if (!input.coding.system) {
    throw TerminologyError.invalid('The code system (system) is required', 'system');
  }
  if (!input.url && !input.targetSystem) {
    throw TerminologyError.invalid('The concept map (url) or a targetSystem is required', 'url');
  }
  const maps: ConceptMapResource[] = [];
  if (input.url) {
    const { url, version } = splitCanonical(input.url);
    const found = await library.conceptMap(url, input.conceptMapVersion ?? version);
    if (!found) {
      throw TerminologyError.notFound(
        `A definition for the ConceptMap '${input.url}' could not be found`,
        'Unable_to_resolve_ConceptMap',
        'url',
      );
    }
    maps.push(found);
  } else {
    maps.push(...library.localConceptMaps());
  }
  const { system, code } = input.coding;
  const matches: TranslationMatch[] = [];
  for (const map of maps) {
    for (const group of map.group ?? []) {
      const [from, to] = input.reverse
        ? [group.target, group.source]
        : [group.source, group.target];
      if (system && from !== system) continue;
      if (input.targetSystem && to !== input.targetSystem) continue;
      for (const element of group.element ?? []) {
        for (const target of element.target ?? []) {
          const [fromCode, toCode] = input.reverse
            ? [target.code, element.code]
            : [element.code, target.code];
          if (fromCode !== code || !toCode) continue;
          const equivalence = equivalenceOf(target);
          const concept: Coding = { system: to, code: toCode };
          const display = input.reverse ? element.display : target.display;
          if (display) concept.display = display;
          // Reversed (as tx.fhir.org answers): the concept is the target matched, with the
          // source it maps from.
          matches.push({
            ...(input.reverse
              ? { concept: { system: from, code: fromCode }, source: concept }
              : { concept }),
            equivalence,
            originMap: canonicalOf(map),
            relationship: target.relationship ?? relationshipOf(equivalence),
          });
        }
      }
    }
  }
  const subject = `'${system ?? ''}#${code}'${input.targetSystem ? ` to '${input.targetSystem}'` : ''}`;
  // spec ops §4.7 answers `message` with every result; a search of every map by system (R5's
  // form, without `url`) answers as tx.fhir.org does, with a message only when nothing matched.
  const message =
    matches.length === 0
      ? `No translations found for ${subject}`
      : input.url
        ? `${matches.length} translation${matches.length === 1 ? '' : 's'} found for ${subject}`
        : undefined;
  return { result: matches.length > 0, ...(message !== undefined ? { message } : {}), matches };
}
