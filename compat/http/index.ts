/**
 * The glue the edges share, one file per job: writing replies (reply), paging headers (paging),
 * reading queries and path parameters (query), the error body and handler (errors), request and
 * answer formats (formats), refused text (text), snake_case ↔ camelCase (case), 405 (methods),
 * the kept GET answers and writes answered once every process heard them (answer-cache).
 */
export { API_VERSION } from './version';
export { created, list, noContent, ok, redirect, route, type Handler, type Reply } from './reply';
export {
  flag,
  holdersAsked,
  LIST_QUERY,
  listParams,
  param,
  parseTimestamp,
  queryString,
} from './query';
export { errorBody, errorHandler, statusOf } from './errors';
export { requireJsonAnswer, requireJsonBody } from './formats';
export { guardInput, verifyEncoding } from './text';
export { bodyOf, queryOf, snakeCase } from './case';
export { onlyMethods } from './methods';
export { AnswerCache, answerWritesOnceHeard, cacheable } from './answer-cache';
