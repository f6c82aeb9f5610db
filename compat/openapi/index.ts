export { DOC_PATHS, docsRouter } from './router';
export { openApiDocument, openApiPath } from './document';
