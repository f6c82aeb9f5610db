import type { OrganizationEntity } from '../../src/db/entities';
import type { OrgCounts } from '../../src/services';

export const orgUrl = (id: string): string => `/orgs/${encodeURIComponent(id)}/`;

/** spec core §2.3 summary view. */
export function orgSummary(org: OrganizationEntity): object {
  return { id: org.mnemonic, name: org.name, url: orgUrl(org.mnemonic) };
}

/** spec core §2.3 detail view. */
export function orgDetail(org: OrganizationEntity, counts: OrgCounts): object {
  const url = orgUrl(org.mnemonic);
  return {
    type: 'Organization',
    uuid: org.id,
    id: org.mnemonic,
    name: org.name,
    company: org.company,
    website: org.website,
    location: org.location,
    public_access: org.publicAccess,
    extras: org.extras,
    url,
    members_url: `${url}members/`,
    sources_url: `${url}sources/`,
    collections_url: `${url}collections/`,
    repos_url: `${url}repos/`,
    members: counts.members,
    public_sources: counts.publicSources,
    public_collections: counts.publicCollections,
    created_on: org.createdAt.toISOString(),
    created_by: org.createdBy,
    updated_on: org.updatedAt.toISOString(),
    updated_by: org.updatedBy,
  };
}
