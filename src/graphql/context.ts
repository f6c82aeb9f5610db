import type { ServiceContext, Services } from '../services';
import type { ChargeRequests } from './complexity';

export interface GraphQLContext extends ServiceContext {
  services: Services;
  /** Counts a costly query as more requests; absent when nothing is rate-limited. */
  chargeRequests?: ChargeRequests;
}
