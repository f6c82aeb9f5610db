import type { OrganizationEntity } from '../../db/entities';
import type { ServiceContext } from '../shared/context';
import type { FollowService, FollowView } from '../community/follow.service';
import { defaultListParams } from '../shared/list';
import type { OrgService } from './org.service';
import type { PinService, PinView } from '../community/pin.service';
import type { UserDetail, UserService } from './user.service';

/** What a user detail may carry besides the user (OCL's `include…` parameters). */
export interface ProfileInclude {
  subscribedOrgs?: boolean;
  authGroups?: boolean;
  pins?: boolean;
  following?: boolean;
}

/** A user detail with what the web client asks for on sign-in. */
export interface UserProfile extends UserDetail {
  /** The user's orgs the caller may see (OCL `subscribed_orgs`: the client's edit menus). */
  subscribedOrgs?: OrganizationEntity[];
  /** OCL's auth groups; this service has none (superusers are its staff). */
  authGroups?: string[];
  pins?: PinView[];
  following?: FollowView[];
}

/** User details as the web client reads them: one service call for `/user/?include…`. */
export class ProfileService {
  constructor(
    private readonly users: UserService,
    private readonly orgs: OrgService,
    private readonly pins: PinService,
    private readonly follows: FollowService,
  ) {}

  /** The user (the caller when `username` is undefined) with what `include` asks for. */
  async detail(
    ctx: ServiceContext,
    username: string | undefined,
    include: ProfileInclude,
  ): Promise<UserProfile> {
    const detail: UserProfile = await this.users.detail(ctx, username);
    const { user } = detail;
    const [orgs, pins, following] = await Promise.all([
      include.subscribedOrgs
        ? this.orgs.listItems(ctx, defaultListParams({ limit: 0 }), {
            type: 'user',
            username: user.username,
          })
        : undefined,
      include.pins ? this.pins.ofUser(ctx, user) : undefined,
      include.following ? this.follows.ofUser(ctx, user) : undefined,
    ]);
    if (orgs) detail.subscribedOrgs = orgs.items.map((item) => item.org);
    if (include.authGroups) detail.authGroups = [];
    if (pins) detail.pins = pins;
    if (following) detail.following = following;
    return detail;
  }
}
