import type { Request } from 'express';
import { AppError } from '../../src/errors';

/** A REST body as service input: a JSON object with its top-level snake_case keys in camelCase. */
export function bodyOf(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw AppError.invalid('The request body must be a JSON object.');
  }
  return Object.fromEntries(Object.entries(body).map(([k, v]) => [camelCase(k), v]));
}

/** A query string as service input, its keys in camelCase like a body's. */
export function queryOf(req: Request): Record<string, unknown> {
  return Object.fromEntries(Object.entries(req.query).map(([k, v]) => [camelCase(k), v]));
}

export function camelCase(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
