import { z } from 'zod';
import { AppError, type FieldErrors } from '../../errors';

/** Validates service input; failures become one 400 with a message per field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const fieldErrors: FieldErrors = {};
  for (const issue of result.error.issues) {
    const field = issue.path.length > 0 ? issue.path.join('.') : '__all__';
    (fieldErrors[field] ??= []).push(issue.message);
  }
  const summary = Object.entries(fieldErrors)
    .map(([field, messages]) => `${field}: ${messages.join(' ')}`)
    .join('; ');
  throw AppError.invalid(`Invalid input. ${summary}`, fieldErrors);
}

/** Identifiers that appear in URLs: users, orgs, repositories (as OCL allows). */
/** Missing and mistyped say different things. */
const stringError = (issue: { input?: unknown }): string =>
  issue.input === undefined ? 'This field is required.' : 'Must be a string.';

export const mnemonic = z
  .string({ error: stringError })
  .trim()
  .min(1, 'This field is required.')
  .max(100, 'At most 100 characters.')
  .regex(/^[a-zA-Z0-9\-._@]+$/, 'Only letters, digits and - . _ @ are allowed.')
  .refine((v) => !/^\.+$/.test(v), 'Cannot be only dots (a URL would read it as a path step).');

/** Names a segment of the URL space already uses, so they cannot be ids there. */
export function notReserved(reserved: string[]) {
  const lower = reserved.map((r) => r.toLowerCase());
  return (v: string): boolean => !lower.includes(v.toLowerCase());
}

export const requiredText = z
  .string({ error: stringError })
  .trim()
  .min(1, 'This field is required.')
  .max(255, 'At most 255 characters.');

/** Optional free text; blank becomes null. */
export const optionalText = z
  .string({ error: 'Must be a string.' })
  .trim()
  .max(1000, 'At most 1000 characters.')
  .nullish()
  .transform((v) => (v ? v : null));

export const website = z
  .string({ error: 'Must be a string.' })
  .trim()
  .nullish()
  .transform((v) => (v ? v : null))
  .refine(
    (v) => v === null || /^https?:\/\/\S+$/i.test(v),
    'Must be a fully specified http(s) URL.',
  );

export const email = z.email({ error: 'Must be a valid email address.' }).max(254);

export const extras = z
  .record(z.string(), z.unknown(), { error: 'Must be an object.' })
  .nullish()
  .transform((v) => v ?? null);

export const publicAccess = z
  .string({ error: 'Must be a string.' })
  .transform((v) => v.trim().toLowerCase())
  .pipe(z.enum(['view', 'edit', 'none'], { error: 'Must be one of View, Edit, None.' }))
  .transform((v) => (v === 'view' ? 'View' : v === 'edit' ? 'Edit' : 'None'));

/** Ordered comma-separated locales, e.g. `en,es`. */
export const localeList = z
  .string({ error: 'Must be a string.' })
  .trim()
  .regex(
    /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*(\s*,\s*[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*)*$/,
    'Must be comma-separated locale codes, e.g. en,es.',
  )
  .transform((v) =>
    v
      .split(',')
      .map((l) => l.trim())
      .join(','),
  );

export const password = z
  .string({ error: 'Must be a string.' })
  .min(8, 'At least 8 characters.')
  .max(200, 'At most 200 characters.');

/** A redirect target after email confirmation; only http(s). */
export const redirectUrl = z
  .string({ error: 'Must be a string.' })
  .trim()
  .regex(/^https?:\/\/\S+$/i, 'Must be an http(s) URL.')
  .nullish()
  .transform((v) => v ?? null);
