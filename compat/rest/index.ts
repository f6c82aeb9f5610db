import { Router } from 'express';
import type { Services } from '../../src/services';
import { API_VERSION, ok, requireJsonAnswer, route } from '../http';
import { bulkImportRouter } from './bulk-import.router';
import { cascadeRouter } from './cascade.router';
import { collectionRouter } from './collection.router';
import { conceptRouter } from './concept.router';
import { exportRouter } from './export.router';
import { extrasRouter } from './extras.router';
import { mappingRouter } from './mapping.router';
import { matchRouter } from './match.router';
import { orgRouter } from './org.router';
import { repoRouter } from './repo.router';
import { taskRouter } from './task.router';
import { userRouter } from './user.router';
import { referenceRouter } from './reference.router';
import { urlRegistryRouter } from './url-registry.router';
import { webClientRouter } from './web-client.router';

export { API_VERSION } from '../http';
export { BULK_IMPORT_PATH } from './bulk-import.router';

/** The OCL REST edge: documented paths in, OCL JSON shapes out. */
export function restRouter(services: Services): Router {
  const router = Router();
  router.use(requireJsonAnswer);
  router.get(
    '/version/',
    route(async () => ok(API_VERSION)),
  );
  router.get(
    '/healthz/',
    route(async () => {
      await services.ping();
      return ok({ status: 'ok' });
    }),
  );
  router.use(exportRouter(services));
  router.use(webClientRouter(services));
  router.use(taskRouter(services));
  router.use(bulkImportRouter(services));
  router.use(extrasRouter(services));
  router.use(referenceRouter(services));
  router.use(urlRegistryRouter(services));
  router.use(userRouter(services));
  router.use(orgRouter(services));
  router.use(mappingRouter(services));
  router.use(cascadeRouter(services));
  router.use(matchRouter(services));
  router.use(conceptRouter(services));
  router.use(collectionRouter(services));
  router.use(repoRouter(services));
  return router;
}
