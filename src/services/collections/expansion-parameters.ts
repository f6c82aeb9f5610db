import { AppError } from '../../errors';

/** Expansion parameters (spec operations §2.2), checked. */
export interface ExpansionParameters {
  filter?: string;
  date?: Date;
  activeOnly?: boolean;
  count?: number;
  offset?: number;
  displayLanguage?: string;
  includeDesignations?: boolean;
  includeDefinition?: boolean;
  /** `system` or `system|version`: references to it are left out. */
  excludeSystem?: SystemVersion[];
  /** The version to use for a system when a reference names none. */
  systemVersion?: SystemVersion[];
  /** A reference naming another version of the system is an error. */
  checkSystemVersion?: SystemVersion[];
  /** The version to use for a system whatever the reference names. */
  forceSystemVersion?: SystemVersion[];
  url?: string;
  valueSetVersion?: string;
}

export interface SystemVersion {
  system: string;
  version: string | null;
}

/** Parameters of the definition table the service does not implement (status TBD or blank). */
const NOT_SUPPORTED = [
  'valueSet',
  'context',
  'contextDirection',
  'excludeNested',
  'excludeNotForUI',
  'excludePostCoordinated',
  'designation',
];

/** Parses `parameters` of an expansion; the stored form is what was given, normalized. */
export function parseExpansionParameters(input: unknown): {
  parsed: ExpansionParameters;
  stored: Record<string, unknown>;
} {
  if (input === undefined || input === null) return { parsed: {}, stored: {} };
  if (typeof input !== 'object' || Array.isArray(input)) {
    throw AppError.field('parameters', 'Must be an object of expansion parameters.');
  }
  const parsed: ExpansionParameters = {};
  const stored: Record<string, unknown> = {};
  const errors: Record<string, string[]> = {};
  const fail = (name: string, message: string): void => {
    errors[name] = [message];
  };
  for (const [name, value] of Object.entries(input as Record<string, unknown>)) {
    if (NOT_SUPPORTED.includes(name)) {
      fail(name, `The expansion parameter '${name}' is not supported.`);
      continue;
    }
    if (value === null || value === undefined) continue;
    switch (name) {
      case 'filter':
      case 'displayLanguage':
      case 'url':
      case 'valueSetVersion': {
        if (typeof value !== 'string' || value.trim() === '' || value.length > 500) {
          fail(name, 'Must be a non-empty string.');
          break;
        }
        parsed[name] = value.trim();
        stored[name] = value.trim();
        break;
      }
      case 'date': {
        const date = typeof value === 'string' ? new Date(value) : null;
        if (!date || Number.isNaN(date.getTime())) {
          fail(name, 'Must be an ISO 8601 date.');
        } else if (date.getTime() > Date.now()) {
          fail(name, 'Definitions cannot be read at a future date.');
        } else {
          parsed.date = date;
          stored.date = value;
        }
        break;
      }
      case 'activeOnly':
      case 'includeDesignations':
      case 'includeDefinition': {
        const flag = booleanOf(value);
        if (flag === null) fail(name, 'Must be a boolean.');
        else parsed[name] = stored[name] = flag;
        break;
      }
      case 'count':
      case 'offset': {
        const n = typeof value === 'string' ? Number(value) : value;
        if (typeof n !== 'number' || !Number.isInteger(n) || n < 0)
          fail(name, 'Must be 0 or more.');
        else parsed[name] = stored[name] = n;
        break;
      }
      case 'exclude-system':
      case 'system-version':
      case 'check-system-version':
      case 'force-system-version': {
        const list = systemVersionsOf(value, name !== 'exclude-system');
        if (typeof list === 'string') {
          fail(name, list);
          break;
        }
        const key = (
          {
            'exclude-system': 'excludeSystem',
            'system-version': 'systemVersion',
            'check-system-version': 'checkSystemVersion',
            'force-system-version': 'forceSystemVersion',
          } as const
        )[name];
        parsed[key] = list;
        stored[name] = value;
        break;
      }
      default:
        fail(name, `Unknown expansion parameter '${name}'.`);
    }
  }
  if (Object.keys(errors).length > 0) {
    throw AppError.invalid('Some expansion parameters are not valid.', errors);
  }
  return { parsed, stored };
}

/** `system|version` values (a comma-separated string or a list). */
function systemVersionsOf(value: unknown, versionRequired: boolean): SystemVersion[] | string {
  const items =
    typeof value === 'string'
      ? value.split(',')
      : Array.isArray(value) && value.every((v) => typeof v === 'string')
        ? value
        : null;
  if (!items || items.length === 0) return 'Must be system|version values.';
  const list: SystemVersion[] = [];
  for (const item of items.map((i) => i.trim()).filter((i) => i.length > 0)) {
    const at = item.indexOf('|');
    const system = at < 0 ? item : item.slice(0, at);
    const version = at < 0 ? null : item.slice(at + 1) || null;
    if (!system) return `'${item}' names no system.`;
    if (versionRequired && version === null) return `'${item}' must be system|version.`;
    list.push({ system: system.trim(), version: version?.trim() ?? null });
  }
  return list;
}

function booleanOf(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  return null;
}
