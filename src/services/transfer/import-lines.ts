import { parse } from 'csv-parse/sync';
import { findInputProblem, inputProblemMessage } from '../../text';

/** OCL's bulk import line types (ocldev JSON lines). */
export const LINE_TYPES = [
  'Organization',
  'User',
  'Source',
  'Source Version',
  'Collection',
  'Collection Version',
  'Concept',
  'Mapping',
  'Reference',
] as const;
export type LineType = (typeof LINE_TYPES)[number];

export const ACTIONS = ['CREATE_OR_UPDATE', 'CREATE', 'UPDATE', 'DELETE'] as const;
export type LineAction = (typeof ACTIONS)[number];

/** One line of an import: its number in the file, and what it holds or why it cannot be read. */
export type ImportLine =
  | {
      line: number;
      type: LineType;
      action: LineAction;
      /** The line's fields other than `type` and `__action`, keys as sent (snake_case). */
      fields: Record<string, unknown>;
    }
  | { line: number; problem: string; type: string | null };

/** An import file's lines: how many, and each as it is read. */
export interface ImportLines {
  total: number;
  lines: Iterable<ImportLine>;
}

/**
 * The lines of a JSON-lines file, each parsed as it is read (an import parses a batch while it
 * writes the one before); blank lines are skipped, others must each be an object.
 */
export function jsonLines(text: string): ImportLines {
  const raw = text.split(/\r?\n/);
  return {
    total: raw.reduce((count, line) => (line.trim() === '' ? count : count + 1), 0),
    lines: parsedLines(raw),
  };
}

function* parsedLines(raw: string[]): Generator<ImportLine> {
  for (const [index, line] of raw.entries()) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      yield { line: index + 1, problem: 'The line is not valid JSON.', type: null };
      continue;
    }
    yield lineOf(index + 1, value);
  }
}

/**
 * The rows of a CSV file of concepts and mappings as import lines (spec ops §4.9): a header row;
 * `resource_type` (or `type`) names each row's type; other columns are the JSON-lines fields of
 * the same names, with `name`/`locale`/`name_type` and `description`/`description_locale` making
 * one name and one description, and `attr:<name>[:<type>]` columns the extras.
 */
export function csvLines(text: string): ImportLines {
  const read = csvRows(text);
  return { total: read.length, lines: read };
}

function csvRows(text: string): ImportLine[] {
  let rows: string[][];
  try {
    rows = parse(text, { bom: true, relax_column_count: true, skip_empty_lines: true });
  } catch (error) {
    return [
      { line: 1, problem: `The file is not valid CSV: ${(error as Error).message}`, type: null },
    ];
  }
  const [header, ...body] = rows;
  if (!header) return [];
  return body.map((row, index) => {
    const line = index + 2;
    try {
      return lineOf(line, csvRecord(header, row));
    } catch (error) {
      return { line, problem: (error as Error).message, type: null };
    }
  });
}

const CSV_NUMBERS = new Set(['sort_weight']);
const CSV_BOOLEANS = new Set(['retired', 'locale_preferred']);
const CSV_LISTS = new Set(['parent_concept_urls']);
const NAME_COLUMNS = new Set(['name', 'locale', 'name_type', 'locale_preferred']);
const DESCRIPTION_COLUMNS = new Set(['description', 'description_locale', 'description_type']);

function csvRecord(header: string[], row: string[]): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  const extras: Record<string, unknown> = {};
  const cells = new Map<string, string>();
  header.forEach((column, i) => {
    const value = row[i] ?? '';
    const name = column.trim();
    if (value === '' || name === '') return;
    if (name.startsWith('attr:')) {
      const [, attr, type] = name.split(':');
      if (!attr) throw new Error(`Column '${name}' names no attribute.`);
      extras[attr] = typedValue(value, type, name);
      return;
    }
    cells.set(name, value);
  });
  for (const [name, value] of cells) {
    if (NAME_COLUMNS.has(name) || DESCRIPTION_COLUMNS.has(name)) continue;
    const key = name === 'resource_type' ? 'type' : name;
    record[key] = CSV_NUMBERS.has(name)
      ? typedValue(value, 'float', name)
      : CSV_BOOLEANS.has(name)
        ? typedValue(value, 'bool', name)
        : CSV_LISTS.has(name)
          ? value.split('|').map((v) => v.trim())
          : value;
  }
  if (cells.has('name')) {
    record.names = [
      {
        name: cells.get('name'),
        locale: cells.get('locale') ?? 'en',
        name_type: cells.get('name_type') ?? null,
        locale_preferred: cells.has('locale_preferred')
          ? typedValue(cells.get('locale_preferred')!, 'bool', 'locale_preferred')
          : true,
      },
    ];
  }
  if (cells.has('description')) {
    record.descriptions = [
      {
        description: cells.get('description'),
        locale: cells.get('description_locale') ?? cells.get('locale') ?? 'en',
        description_type: cells.get('description_type') ?? null,
      },
    ];
  }
  if (Object.keys(extras).length > 0) record.extras = extras;
  return record;
}

/**
 * A CSV cell as its declared type (spec ops §4.9: bool, str, int, float, list, json); without a
 * type, as the web client infers one: `{}`/`[]` JSON, numbers numeric, true/false boolean.
 */
export function typedValue(value: string, type: string | undefined, column: string): unknown {
  const bad = (what: string): Error => new Error(`Column '${column}': '${value}' is not ${what}.`);
  const text = value.trim();
  switch (type) {
    case 'str':
      return value;
    case 'bool':
      if (/^(true|yes|1)$/i.test(text)) return true;
      if (/^(false|no|0)$/i.test(text)) return false;
      throw bad('a boolean (true or false)');
    case 'int':
      if (!/^[-+]?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw bad('an integer');
      return Number(text);
    case 'float':
      if (text === '' || !Number.isFinite(Number(text))) throw bad('a number');
      return Number(text);
    case 'list': {
      if (text.startsWith('[')) {
        const parsed = parseJson(text, bad);
        if (!Array.isArray(parsed)) throw bad('a list');
        return parsed;
      }
      return text.split(',').map((item) => item.trim());
    }
    case 'json':
      return parseJson(text, bad);
    case undefined:
    case '':
      if (/^[[{]/.test(text)) return parseJson(text, bad);
      if (/^[-+]?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text)) return Number(text);
      if (/^(true|false)$/i.test(text)) return text.toLowerCase() === 'true';
      return value;
    default:
      throw new Error(
        `Column '${column}': unknown attribute type '${type}' (bool, str, int, float, list or json).`,
      );
  }
}

function parseJson(text: string, bad: (what: string) => Error): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw bad('valid JSON');
  }
}

function lineOf(line: number, value: unknown): ImportLine {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { line, problem: 'The line must be a JSON object.', type: null };
  }
  const { type, __action: action, ...fields } = value as Record<string, unknown>;
  const typeName = typeof type === 'string' ? type : null;
  const problem = findInputProblem(value);
  if (problem) return { line, problem: inputProblemMessage(problem, 'the line'), type: typeName };
  if (!LINE_TYPES.includes(type as LineType)) {
    return {
      line,
      problem: `'type' must be one of ${LINE_TYPES.join(', ')}.`,
      type: typeName,
    };
  }
  const upper = typeof action === 'string' ? action.toUpperCase() : 'CREATE_OR_UPDATE';
  if (action !== undefined && !ACTIONS.includes(upper as LineAction)) {
    return { line, problem: `'__action' must be one of ${ACTIONS.join(', ')}.`, type: typeName };
  }
  return { line, type: type as LineType, action: upper as LineAction, fields };
}

/** Top-level snake_case keys in the services' camelCase (as the REST edge passes bodies). */
export function camelKeys(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [camelKey(k), v]));
}

/** Keys already converted (a file repeats the same few on every line), up to a bound. */
const CAMEL_KEYS = new Map<string, string>();

function camelKey(key: string): string {
  let camel = CAMEL_KEYS.get(key);
  if (camel === undefined) {
    camel = key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
    if (CAMEL_KEYS.size < 1000) CAMEL_KEYS.set(key, camel);
  }
  return camel;
}
