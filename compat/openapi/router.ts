import path from 'node:path';
import { Router } from 'express';
import { API_VERSION } from '../http';
import type { RouteRow } from '../rest';
import { openApiDocument } from './document';

/** Where the API describes itself. */
export const DOC_PATHS = {
  openapi: '/openapi.json',
  reference: '/reference/',
  graphql: '/graphql',
  fhirMetadata: '/fhir/metadata',
} as const;

/** Swagger UI's browser build, shipped inside its npm package: the reference needs no internet. */
const packageFile = (file: string): string =>
  path.join(path.dirname(require.resolve('swagger-ui-dist/package.json')), file);
const ASSETS: Record<string, string> = {
  'swagger-ui-bundle.js': packageFile('swagger-ui-bundle.js'),
  'swagger-ui.css': packageFile('swagger-ui.css'),
};

const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <title>Terminology Registry · REST API reference</title>
  <link rel="stylesheet" href="${DOC_PATHS.reference}assets/swagger-ui.css" />
</head>
<body style="margin: 0">
  <div id="reference"></div>
  <script src="${DOC_PATHS.reference}assets/swagger-ui-bundle.js"></script>
  <script>
    SwaggerUIBundle({ url: '${DOC_PATHS.openapi}', dom_id: '#reference', deepLinking: true });
  </script>
</body>
</html>`;

const INDEX_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <title>Terminology Registry</title>
</head>
<body style="font-family: sans-serif; margin: 2rem">
  <h1>Terminology Registry</h1>
  <p>API version ${API_VERSION}.</p>
  <ul>
    <li><a href="${DOC_PATHS.reference}">REST API reference</a> (OCL compatible; <a href="${DOC_PATHS.openapi}">OpenAPI 3.1</a>)</li>
    <li><a href="${DOC_PATHS.graphql}">GraphQL</a> (GraphiQL in a browser)</li>
    <li><a href="${DOC_PATHS.fhirMetadata}">FHIR R4 capability statement</a></li>
  </ul>
</body>
</html>`;

/**
 * `GET /` (an index: JSON when asked for JSON, a small page otherwise), `GET /openapi.json`
 * (generated from the REST route table) and `GET /reference/` (Swagger UI over it).
 */
export function docsRouter(rows: readonly RouteRow[]): Router {
  const document = openApiDocument(rows);
  const router = Router();
  router.get('/', (req, res) => {
    if (req.accepts(['text/html', 'application/json']) === 'application/json') {
      res.json({ name: 'Terminology Registry', version: API_VERSION, links: DOC_PATHS });
      return;
    }
    res.type('html').send(INDEX_PAGE);
  });
  router.get(DOC_PATHS.openapi, (_req, res) => {
    res.json(document);
  });
  router.get(DOC_PATHS.reference, (_req, res) => {
    res.type('html').send(REFERENCE_PAGE);
  });
  router.get(`${DOC_PATHS.reference}assets/:file`, (req, res, next) => {
    const file = ASSETS[req.params.file];
    if (!file) {
      next();
      return;
    }
    res.sendFile(file, { maxAge: '1d' });
  });
  return router;
}
