import type { Services } from '../../src/services';
import { list, listParams, ok, param } from '../http';
import { handlers } from './table';
import { taskJson } from './task.mapper';

/** Background tasks: the caller's own, and one by id (its creator or a superuser). */
export function taskHandlers(services: Services) {
  const { tasks } = services;
  return handlers({
    list: async (req, ctx) => list(await tasks.list(ctx, listParams(req)), taskJson, req),
    get: async (req, ctx) => ok(taskJson(await tasks.get(ctx, param(req, 'id')))),
  });
}
