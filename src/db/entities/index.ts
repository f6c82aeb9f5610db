import { ApiTokenEntity } from './api-token.entity';
import { MembershipEntity } from './membership.entity';
import { OrganizationEntity } from './organization.entity';
import { UserEntity } from './user.entity';

export { ApiTokenEntity, MembershipEntity, OrganizationEntity, UserEntity };
export type { MemberRole } from './membership.entity';
export type { PublicAccess } from './organization.entity';

export const entities = [UserEntity, ApiTokenEntity, OrganizationEntity, MembershipEntity];
