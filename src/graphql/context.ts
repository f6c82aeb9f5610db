import type { ServiceContext, Services } from '../services';

export interface GraphQLContext extends ServiceContext {
  services: Services;
}
