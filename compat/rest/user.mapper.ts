import type { UserEntity } from '../../src/db/entities';
import type { UserCounts, UserRateLimits } from '../../src/services';

export const userUrl = (username: string): string => `/users/${encodeURIComponent(username)}/`;

/** spec core §2.2 summary view. */
export function userSummary(user: UserEntity): object {
  return { username: user.username, name: user.name, url: userUrl(user.username) };
}

/**
 * spec core §2.2 detail view; with `rateLimits` (for the user themself and superusers) also the
 * user's own request limits (null: the instance's).
 */
export function userDetail(
  user: UserEntity,
  counts: UserCounts,
  rateLimits?: UserRateLimits,
): object {
  const url = userUrl(user.username);
  return {
    type: 'User',
    uuid: user.id,
    username: user.username,
    name: user.name,
    first_name: user.firstName,
    last_name: user.lastName,
    company: user.company,
    location: user.location,
    email: user.email,
    preferred_locale: user.preferredLocale,
    website: user.website,
    extras: user.extras,
    is_superuser: user.isSuperuser,
    // OCL's staff flag: the web client gives staff every menu; here superusers are the staff.
    is_staff: user.isSuperuser,
    is_active: user.isActive,
    verified: user.verified,
    url,
    orgs_url: `${url}orgs/`,
    organizations_url: `${url}orgs/`,
    sources_url: `${url}sources/`,
    collections_url: `${url}collections/`,
    orgs: counts.orgs,
    public_sources: counts.publicSources,
    public_collections: counts.publicCollections,
    created_on: user.createdAt.toISOString(),
    created_by: user.createdBy,
    updated_on: user.updatedAt.toISOString(),
    updated_by: user.updatedBy,
    ...(rateLimits
      ? {
          rate_limit_per_minute: rateLimits.perMinute,
          rate_limit_per_day: rateLimits.perDay,
          match_approved: user.matchApproved,
        }
      : {}),
  };
}
