import { Router } from 'express';
import type { Services } from '../../src/services';
import { requireJsonAnswer } from '../http';
import { restRoutes } from './routes';
import { mountTable, type RouteRow } from './table';

export { API_VERSION } from '../http';
export { BULK_IMPORT_PATH } from './bulk-import.handlers';
export { exportSerializer } from './export.handlers';
export { restRoutes } from './routes';
export type { Access, Method, RouteRow } from './table';

/** The OCL REST edge: the route table mounted (documented paths in, OCL JSON shapes out). */
export function restRouter(services: Services, rows: RouteRow[] = restRoutes(services)): Router {
  const router = Router();
  router.use(requireJsonAnswer);
  router.use(mountTable(rows));
  return router;
}
