import { z } from 'zod';
import type { RouteRow } from '../rest';
import { API_VERSION, snakeCase } from '../http';

/** spec core §7: every 4xx/5xx REST answer (also `errorBody` in compat/http/errors.ts). */
const ERROR_BODY = z
  .object({
    code: z.string().describe('The HTTP status text, e.g. "Not Found".'),
    message: z.string(),
    errors: z
      .record(z.string(), z.array(z.string()))
      .optional()
      .describe('Messages by field, under the names the request used.'),
  })
  .describe('An error (spec core §7).');

/** A JSON Schema from a zod schema, in the dialect OpenAPI 3.1 uses (JSON Schema 2020-12). */
function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const converted: Record<string, unknown> = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
  });
  // The document names the dialect once (OpenAPI 3.1's default is 2020-12).
  delete converted.$schema;
  return converted;
}

/**
 * A JSON body as a client sends it: the schema the service validates it with, its top-level
 * property names (and `required`) in snake_case, the form `bodyOf` turns into the service's
 * camelCase (nested names pass as sent, so they stay as the schema names them). A body the
 * service reads without a schema is described in words.
 */
function requestBodySchema(row: RouteRow): Record<string, unknown> {
  if (!row.input) return row.inputNote ? { description: row.inputNote } : {};
  let schema: Record<string, unknown>;
  try {
    schema = jsonSchema(row.input);
  } catch {
    // A schema zod cannot render leaves this one body undescribed, not the document unserved.
    return {};
  }
  const { properties, required } = schema;
  if (properties && typeof properties === 'object') {
    schema.properties = Object.fromEntries(
      Object.entries(properties).map(([name, property]) => [snakeCase(name), property]),
    );
  }
  if (Array.isArray(required)) schema.required = required.map((name) => snakeCase(String(name)));
  return schema;
}

/** `/orgs/:org/sources/` → `/orgs/{org}/sources/`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z]+)/g, '{$1}');
}

/** The resources the reference groups operations by. */
const RESOURCES = [
  'orgs',
  'users',
  'members',
  'repos',
  'sources',
  'collections',
  'concepts',
  'mappings',
  'references',
  'expansions',
  'extras',
  'export',
  'exports',
  'url-registry',
  'importers',
  'tasks',
  'pins',
  'following',
  'events',
];

/**
 * The reference groups a route by the innermost resource its path names
 * (`/orgs/:org/sources/:source/concepts/:concept/names/` → `concepts`), else its first segment.
 */
function tagOf(row: RouteRow): string {
  const segments = row.path.split('/').filter(Boolean);
  return segments.filter((s) => RESOURCES.includes(s)).pop() ?? segments[0] ?? 'service';
}

function operationOf(row: RouteRow): Record<string, unknown> {
  const parameters: object[] = [...row.path.matchAll(/:([A-Za-z]+)/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  for (const [name, field] of Object.entries(row.query?.shape ?? {})) {
    const { description, ...schema } = jsonSchema(field as z.ZodType);
    parameters.push({ name, in: 'query', required: false, description, schema });
  }
  const operation: Record<string, unknown> = {
    summary: row.summary,
    tags: [tagOf(row)],
    'x-access': row.access,
    // Issue 28 parity: the GraphQL field answering the same, or why there is none.
    ...(row.graphql ? { 'x-graphql': row.graphql } : {}),
    ...(row.transportOnly ? { 'x-transport-only': row.transportOnly } : {}),
    // public: credentials optional (they widen what is seen); otherwise required.
    security: row.access === 'public' ? [{}, { token: [] }] : [{ token: [] }],
    responses: {
      '2XX': {
        description: 'Success (OCL JSON; lists carry the paging headers of spec core §2.1).',
      },
      '4XX': {
        description: 'Refused: bad input, no credentials or rights, not found, wrong method.',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    },
  };
  if (parameters.length > 0) operation.parameters = parameters;
  if (row.body) {
    // The rows that read their body themselves are the bulk imports (bulk-import.handlers.ts).
    const options = {
      file_url: { type: 'string', description: 'Where to fetch the file instead of sending it.' },
      update_if_exists: { type: 'boolean', description: 'Update what exists (default true).' },
    };
    operation.requestBody = {
      required: true,
      description:
        'The import file (OCL JSON lines or CSV) as the body, as a multipart `file`, or named ' +
        'by `file_url`; `format` (`json` or `csv`) when the name or type does not say.',
      content: {
        'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
        'text/csv': { schema: { type: 'string' } },
        'application/json': {
          schema: {
            description: 'JSON lines, or an object wrapping them (`data`) or naming the file.',
            oneOf: [
              { type: 'string', description: 'JSON lines' },
              {
                type: 'object',
                properties: {
                  data: { description: 'JSON lines as text, or a list of the objects' },
                  ...options,
                },
              },
            ],
          },
        },
        'multipart/form-data': {
          schema: {
            type: 'object',
            properties: {
              file: { type: 'string', format: 'binary' },
              format: { type: 'string', enum: ['json', 'csv'] },
              ...options,
            },
          },
        },
      },
    };
  } else if (row.input || row.inputNote) {
    const schema = requestBodySchema(row);
    operation.requestBody = {
      required: Array.isArray(schema.required) && schema.required.length > 0,
      content: { 'application/json': { schema } },
    };
  }
  return operation;
}

/**
 * The OpenAPI 3.1 description of the REST edge, generated from the route table: one operation
 * per row (paths, methods, path parameters, access as `security`, and each JSON body as the
 * schema its service validates it with, in the wire's snake_case).
 */
export function openApiDocument(rows: readonly RouteRow[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const row of rows) {
    const at = (paths[openApiPath(row.path)] ??= {});
    at[row.method.toLowerCase()] = operationOf(row);
  }
  const sorted = Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b)));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Terminology Registry: OCL REST API',
      version: API_VERSION,
      description:
        'The Open Concept Lab compatible REST edge. GraphQL is at /graphql and FHIR R4 at /fhir/ ' +
        '(see /fhir/metadata). Paths end with a slash; JSON in and out.',
    },
    paths: sorted,
    components: {
      schemas: { Error: jsonSchema(ERROR_BODY) },
      securitySchemes: {
        token: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: '`Token <API token>` (from POST /users/login/) or `Bearer <OIDC token>`.',
        },
      },
    },
  };
}
