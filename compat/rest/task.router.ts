import { Router } from 'express';
import type { Services } from '../../src/services';
import { list, listParams, ok, param, route } from '../http';
import { taskJson } from './task.mapper';

/** Background tasks: the caller's own, and one by id (its creator or a superuser). */
export function taskRouter(services: Services): Router {
  const { tasks } = services;
  const router = Router();
  router.get(
    '/tasks/',
    route(async (req, ctx) => list(await tasks.list(ctx, listParams(req)), taskJson, req)),
  );
  router.get(
    '/tasks/:id/',
    route(async (req, ctx) => ok(taskJson(await tasks.get(ctx, param(req, 'id'))))),
  );
  return router;
}
