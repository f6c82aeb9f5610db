import { AppError } from '../../errors';

/** A map-type filter: every type, none, or these (compared case-insensitively). */
export type MapTypeFilter = '*' | 'none' | string[];

/** The parameters of spec operations §4.2, parsed. */
export interface CascadeParameters {
  /**
   * Map types to cascade through: null (not given) = all but `excludeMapTypes`; when given
   * (`*` included), `excludeMapTypes` is ignored (spec operations §4.2).
   */
  mapTypes: MapTypeFilter | null;
  excludeMapTypes: string[];
  /** Map types of the mappings listed: null = those cascaded through. */
  returnMapTypes: MapTypeFilter | null;
  method: 'sourcemappings' | 'sourcetoconcepts';
  cascadeHierarchy: boolean;
  cascadeMappings: boolean;
  /** How many levels below the starting concept are cascaded: `*` until nothing further. */
  cascadeLevels: number | '*';
  reverse: boolean;
  view: 'flat' | 'hierarchy';
  /** A repository (version) URL: concepts it already holds end their branch, omitted. */
  omitIfExistsIn: string | null;
  equivalencyMapTypes: string[];
  includeRetired: boolean;
}

/** The parameters as a caller names them (query parameters, GraphQL arguments): text. */
export type CascadeInput = Partial<Record<string, string | undefined>>;

const TRUE = ['true', '1', 'yes'];
const FALSE = ['false', '0', 'no'];

/** spec operations §4.2, with the singular spellings of its examples and `includeMappings`. */
export function parseCascadeParameters(input: CascadeInput): CascadeParameters {
  const text = (name: string): string | undefined => {
    const value = input[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const value = text(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if (TRUE.includes(value)) return true;
    if (FALSE.includes(value)) return false;
    throw AppError.field(name, `${name} must be true or false.`);
  };
  const list = (value: string | undefined): string[] =>
    (value ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
  const filter = (name: string, value: string | undefined): MapTypeFilter | null => {
    if (value === undefined) return null;
    if (value === '*') return '*';
    if (FALSE.includes(value.toLowerCase())) return 'none';
    const types = list(value);
    if (types.length === 0) throw AppError.field(name, `${name} names no map type.`);
    return types;
  };
  const method = (text('method') ?? 'sourcetoconcepts').toLowerCase();
  if (method !== 'sourcemappings' && method !== 'sourcetoconcepts') {
    throw AppError.field('method', "method must be 'sourceMappings' or 'sourceToConcepts'.");
  }
  const levels = text('cascadeLevels') ?? '*';
  if (levels !== '*' && !/^\d{1,6}$/.test(levels)) {
    throw AppError.field('cascadeLevels', "cascadeLevels must be a whole number or '*'.");
  }
  const view = (text('view') ?? 'flat').toLowerCase();
  if (view !== 'flat' && view !== 'hierarchy') {
    throw AppError.field('view', "view must be 'flat' or 'hierarchy'.");
  }
  const mapTypes = filter('mapTypes', text('mapTypes') ?? text('mapType'));
  let returnMapTypes = filter('returnMapTypes', text('returnMapTypes') ?? text('returnMapType'));
  // Deprecated (spec operations §4.2): includeMappings=false lists no mappings.
  if (returnMapTypes === null && !bool('includeMappings', true)) returnMapTypes = 'none';
  return {
    mapTypes,
    excludeMapTypes: list(text('excludeMapTypes') ?? text('excludeMapType')),
    returnMapTypes,
    method,
    cascadeHierarchy: bool('cascadeHierarchy', true),
    cascadeMappings: bool('cascadeMappings', true),
    cascadeLevels: levels === '*' ? '*' : Number(levels),
    reverse: bool('reverse', false),
    view,
    omitIfExistsIn: text('omitIfExistsIn') ?? null,
    equivalencyMapTypes: list(text('equivalencyMapType') ?? text('equivalencyMapTypes')),
    includeRetired: bool('includeRetired', false),
  };
}

/**
 * Cascade parameters given as an object (a reference's `cascade`, `$clone`'s `parameters`): the
 * names as `$cascade` takes them (`snake_case` too), values text, numbers, booleans or lists.
 */
export function cascadeInputOf(object: Record<string, unknown>, field: string): CascadeInput {
  const input: CascadeInput = {};
  for (const [key, value] of Object.entries(object)) {
    if (value === null || value === undefined) continue;
    const name = key.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
    const items: unknown[] = Array.isArray(value) ? value : [value];
    const texts = items.flatMap((v) =>
      typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? [String(v)] : [],
    );
    if (texts.length !== items.length) {
      throw AppError.field(
        `${field}.${key}`,
        `${field}.${key} must be text, a number, a boolean or a list of them.`,
      );
    }
    input[name] = texts.join(',');
  }
  return input;
}
