import type {
  ChangeKind,
  Changelog,
  ComparedVersion,
  ConceptChange,
  ContentChanges,
  MappingChange,
  VersionComparison,
} from '../../src/services';

/**
 * OCL's `$compare` and `$changelog` answers (oclapi2 `Source.compare`, `Source.changelog`):
 * `verbosity` 0 counts the changes, 1 adds the unchanged, 2 lists the changed codes, 3 the
 * unchanged codes too; a changelog at 4 adds each concept's names, descriptions, class and
 * datatype (and their former values), each mapping's external id and former target.
 */
export const VERBOSITY = { same: 1, changedCodes: 2, sameCodes: 3, enriched: 4 } as const;

/** OCL's key for each kind of change. */
const KEY: Record<ChangeKind, string> = {
  new: 'new',
  removed: 'removed',
  retired: 'changed_retired',
  major: 'changed_major',
  minor: 'changed_minor',
};

function metaOf(v: ComparedVersion) {
  return { uri: v.url, concepts: v.concepts, mappings: v.mappings };
}

/** A group: its count, or `{total, mnemonic}` when its codes are shown (and there are some). */
function group(
  codes: string[],
  showCodes: boolean,
): number | { total: number; mnemonic: string[] } {
  return showCodes && codes.length > 0 ? { total: codes.length, mnemonic: codes } : codes.length;
}

function changesJson(changes: ContentChanges, verbosity: number): Record<string, unknown> {
  const codes = verbosity >= VERBOSITY.changedCodes;
  const body: Record<string, unknown> = {
    new: group(changes.new, codes),
    removed: group(changes.removed, codes),
    changed_total: changes.retired.length + changes.major.length + changes.minor.length,
    changed_retired: group(changes.retired, codes),
    changed_major: group(changes.major, codes),
    changed_minor: group(changes.minor, codes),
  };
  if (verbosity >= VERBOSITY.same) {
    body.same_total = changes.same;
    // Both checksums equal: OCL's "same" is smart-equal, which standard-equal implies here.
    body.same_minor = 0;
    body.same_major =
      changes.sameCodes && changes.sameCodes.length > 0
        ? { total: changes.same, mnemonic: changes.sameCodes }
        : changes.same;
  }
  return body;
}

/** `POST /sources/$compare/`. */
export function comparisonJson(comparison: VersionComparison, verbosity: number): object {
  return {
    meta: { version1: metaOf(comparison.older), version2: metaOf(comparison.newer) },
    concepts: changesJson(comparison.concepts, verbosity),
    mappings: changesJson(comparison.mappings, verbosity),
  };
}

function conciseJson(changes: ContentChanges): object {
  return {
    new: changes.new.length,
    removed: changes.removed.length,
    changed_total: changes.retired.length + changes.major.length + changes.minor.length,
    changed_retired: changes.retired.length,
    changed_major: changes.major.length,
    changed_minor: changes.minor.length,
  };
}

function mappingJson(m: MappingChange, enriched: boolean): Record<string, unknown> {
  return {
    id: m.code,
    from_concept: m.fromConcept,
    from_source: m.fromSource,
    to_concept: m.toConcept,
    to_source: m.toSource,
    map_type: m.mapType,
    ...(enriched
      ? {
          external_id: m.externalId,
          ...(m.before
            ? {
                prev_to_concept: m.before.toConcept,
                prev_to_source: m.before.toSource,
                prev_map_type: m.before.mapType,
              }
            : {}),
        }
      : {}),
  };
}

function namesJson(c: Pick<ConceptChange, 'names'>) {
  return c.names.map((n) => ({
    external_id: n.external_id,
    name: n.name,
    type: n.name_type,
    locale: n.locale,
    locale_preferred: n.locale_preferred,
  }));
}

function descriptionsJson(c: Pick<ConceptChange, 'descriptions'>) {
  return c.descriptions.map((d) => ({
    external_id: d.external_id,
    description: d.description,
    type: d.description_type,
    locale: d.locale,
  }));
}

function conceptJson(c: ConceptChange, enriched: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { id: c.code, display_name: c.displayName };
  if (enriched && c.kind !== null) {
    Object.assign(body, {
      concept_class: c.conceptClass,
      datatype: c.datatype,
      names: namesJson(c),
      descriptions: descriptionsJson(c),
    });
    if (c.before) {
      Object.assign(body, {
        prev_names: namesJson(c.before),
        prev_descriptions: descriptionsJson(c.before),
        prev_concept_class: c.before.conceptClass,
        prev_datatype: c.before.datatype,
      });
    }
  }
  if (c.mappings.length > 0) {
    const mappings: Record<string, unknown[]> = {};
    for (const m of c.mappings) (mappings[KEY[m.kind]] ??= []).push(mappingJson(m, enriched));
    body.mappings = mappings;
  }
  return body;
}

/** `POST /sources/$changelog/`. */
export function changelogJson(log: Changelog, verbosity: number): Record<string, unknown> {
  const enriched = verbosity >= VERBOSITY.enriched;
  const concepts: Record<string, Record<string, unknown>> = {};
  for (const c of log.concepts) {
    const key = c.kind === null ? 'changed_mappings_only' : KEY[c.kind];
    (concepts[key] ??= {})[c.code] = conceptJson(c, enriched);
  }
  const mappings: Record<string, Record<string, unknown>> = {};
  for (const m of log.mappings) (mappings[KEY[m.kind]] ??= {})[m.code] = mappingJson(m, enriched);
  const { older, newer } = log.comparison;
  return {
    meta: {
      version1: metaOf(older),
      version2: metaOf(newer),
      ...(verbosity > 0
        ? {
            diff: {
              concepts: conciseJson(log.comparison.concepts),
              mappings: conciseJson(log.comparison.mappings),
            },
          }
        : {}),
    },
    concepts,
    mappings,
  };
}
