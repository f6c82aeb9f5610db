import type { Request } from 'express';
import {
  isTerminologyError,
  terminologyResources,
  TerminologyError,
  type CodeableConcept,
  type Coding,
  type ParameterValue,
  type TerminologyResource,
} from '../../src/services';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An operation's input parameters, from a `Parameters` body (POST) or the query string (GET),
 * read by name with the type each parameter has. Wrong types are 400s, never 500s.
 */
export class OperationParams {
  private constructor(readonly all: ParameterValue[]) {}

  /** Parameters given as a list (the entries of `$batch-validate-code`). */
  static fromList(all: ParameterValue[]): OperationParams {
    return new OperationParams(all);
  }

  /** The resources of every parameter of a name (e.g. `validation`). */
  resources(name: string): Record<string, unknown>[] {
    return this.all
      .filter((p) => p.name === name)
      .map((p) => {
        if (!isRecord(p.resource))
          throw TerminologyError.invalid(`The parameter '${name}' must be a resource`, name);
        return p.resource;
      });
  }

  static of(req: Request): OperationParams {
    const all: ParameterValue[] = [];
    for (const [name, value] of Object.entries(req.query)) {
      if (name.startsWith('_')) continue;
      for (const item of Array.isArray(value) ? value : [value]) {
        if (typeof item === 'string') all.push({ name, valueString: item });
      }
    }
    if (req.method === 'POST') {
      const body: unknown = req.body;
      if (!isRecord(body) || body.resourceType !== 'Parameters') {
        throw TerminologyError.invalid(
          'The body of an operation must be a Parameters resource',
          'Parameters',
        );
      }
      const parameters = body.parameter ?? [];
      if (
        !Array.isArray(parameters) ||
        !parameters.every((p) => isRecord(p) && typeof p.name === 'string')
      ) {
        throw TerminologyError.invalid('Each parameter must have a name', 'Parameters.parameter');
      }
      all.push(...(parameters as ParameterValue[]));
    }
    return new OperationParams(all);
  }

  has(name: string): boolean {
    return this.all.some((p) => p.name === name);
  }

  private values(name: string): unknown[] {
    return this.all
      .filter((p) => p.name === name)
      .map((p) => {
        for (const [key, value] of Object.entries(p)) {
          if (key.startsWith('value') && key.length > 5) return value;
        }
        return undefined;
      })
      .filter((v) => v !== undefined);
  }

  string(name: string): string | undefined {
    return this.strings(name)[0];
  }

  strings(name: string): string[] {
    return this.values(name).map((value) => {
      if (typeof value === 'string') return value;
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
      throw TerminologyError.invalid(`The parameter '${name}' must be a string`, name);
    });
  }

  boolean(name: string): boolean | undefined {
    const value = this.values(name)[0];
    if (value === undefined) return undefined;
    if (typeof value === 'boolean') return value;
    if (value === 'true') return true;
    if (value === 'false') return false;
    throw TerminologyError.invalid(`The parameter '${name}' must be true or false`, name);
  }

  integer(name: string): number | undefined {
    const value = this.values(name)[0];
    if (value === undefined) return undefined;
    const number = typeof value === 'number' ? value : Number(value);
    if (!Number.isInteger(number) || number < 0 || number > 1_000_000_000) {
      throw TerminologyError.invalid(
        `The parameter '${name}' must be a whole number from 0 (was ${JSON.stringify(value)})`,
        name,
      );
    }
    return number;
  }

  coding(name: string): Coding | undefined {
    const value = this.values(name)[0];
    if (value === undefined) return undefined;
    if (typeof value === 'string') {
      // GET: system|code (the form FHIR's search syntax uses for tokens).
      const bar = value.lastIndexOf('|');
      return bar < 0
        ? { code: value }
        : { system: value.slice(0, bar) || undefined, code: value.slice(bar + 1) };
    }
    if (!isRecord(value))
      throw TerminologyError.invalid(`The parameter '${name}' must be a Coding`, name);
    return checkCoding(value, name);
  }

  codeableConcept(name: string): CodeableConcept | undefined {
    const value = this.values(name)[0];
    if (value === undefined) return undefined;
    if (!isRecord(value) || (value.coding !== undefined && !Array.isArray(value.coding))) {
      throw TerminologyError.invalid(`The parameter '${name}' must be a CodeableConcept`, name);
    }
    const coding = ((value.coding as unknown[]) ?? []).map((c, i) => {
      if (!isRecord(c))
        throw TerminologyError.invalid(`${name}.coding[${i}] must be a Coding`, name);
      return checkCoding(c, `${name}.coding[${i}]`);
    });
    return { ...(value as CodeableConcept), coding };
  }

  resource(name: string): Record<string, unknown> | undefined {
    const found = this.all.find((p) => p.name === name && p.resource !== undefined);
    if (!found) return undefined;
    if (!isRecord(found.resource) || typeof found.resource.resourceType !== 'string') {
      throw TerminologyError.invalid(`The parameter '${name}' must be a resource`, name);
    }
    return found.resource;
  }

  /** The `tx-resource` resources: code systems, value sets and concept maps for this request. */
  txResources(): TerminologyResource[] {
    return terminologyResources(
      this.all.filter((p) => p.name === 'tx-resource').map((p) => p.resource),
    );
  }

  /** Parameters echoed in an expansion, as given (booleans and numbers typed for GET). */
  echo(names: readonly string[]): ParameterValue[] {
    return this.all
      .filter((p) => names.includes(p.name))
      .map((p) => {
        // Canonicals are echoed as the URIs they are (valueUri), whatever type they came as.
        if (typeof p.valueCanonical === 'string')
          return { name: p.name, valueUri: p.valueCanonical };
        if (typeof p.valueString !== 'string' || Object.keys(p).length !== 2) return p;
        const text = p.valueString;
        if (text === 'true' || text === 'false')
          return { name: p.name, valueBoolean: text === 'true' };
        if (/^\d+$/.test(text) && (p.name === 'count' || p.name === 'offset'))
          return { name: p.name, valueInteger: Number(text) };
        return p;
      });
  }
}

function checkCoding(value: Record<string, unknown>, name: string): Coding {
  for (const field of ['system', 'version', 'code', 'display'] as const) {
    if (value[field] !== undefined && typeof value[field] !== 'string') {
      throw TerminologyError.invalid(`${name}.${field} must be a string`, name);
    }
  }
  return value;
}

export { isTerminologyError };
