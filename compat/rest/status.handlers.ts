import type { Services } from '../../src/services';
import { API_VERSION, ok } from '../http';
import { handlers } from './table';

/** The API version (spec core §9.1) and the health check that asks the database. */
export function statusHandlers(services: Services) {
  return handlers({
    version: async () => ok(API_VERSION),
    health: async () => {
      await services.ping();
      return ok({ status: 'ok' });
    },
  });
}
