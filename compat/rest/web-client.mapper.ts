import type {
  ConceptView,
  Distribution,
  EventRow,
  FollowView,
  LocaleView,
  PinView,
  RepoSummary,
  UserProfile,
} from '../../src/services';
import { conceptSummary } from './concept.mapper';
import { orgDetail, orgSummary } from './org.mapper';
import { repoDetail } from './repo.mapper';
import { userDetail } from './user.mapper';

/** An event (OCL's EventSerializer). */
export function eventJson(row: EventRow): object {
  const referenced = row.referenced_object as { type?: string; id?: string } | null;
  return {
    id: Number(row.id),
    type: 'Event',
    event_type: row.event_type,
    description: referenced
      ? `${row.event_type} ${referenced.type ?? ''}:${referenced.id ?? (referenced as { username?: string }).username ?? ''}`
      : row.event_type,
    object: row.object,
    referenced_object: row.referenced_object,
    actor: row.actor_username
      ? {
          username: row.actor_username,
          name: row.actor_name,
          url: `/users/${encodeURIComponent(row.actor_username)}/`,
        }
      : null,
    public: row.public,
    url: `${row.object_url}events/${row.id}/`,
    created_at: row.created_at,
  };
}

/** A pin (OCL's PinSerializer): the pinned resource's detail in `resource`. */
export function pinJson({ row, ownerUrl, resource }: PinView): object {
  let body: object | null = null;
  if (resource?.kind === 'org') body = orgDetail(resource.detail.org, resource.detail.counts);
  if (resource?.kind === 'repo') {
    const { view, counts } = resource.detail;
    body = {
      ...repoDetail(view, counts),
      summary: {
        active_concepts: counts.activeConcepts,
        active_mappings: counts.activeMappings,
        versions: counts.versions,
      },
    };
  }
  return {
    id: Number(row.id),
    created_at: row.created_at,
    resource_uri: (body as { url?: string } | null)?.url ?? null,
    resource_type: row.resource_type,
    resource_id: Number(row.resource_id),
    user_id: row.user_id === null ? null : Number(row.user_id),
    organization_id: row.org_id === null ? null : Number(row.org_id),
    resource: body,
    uri: `${ownerUrl}pins/${row.id}/`,
    order: row.position,
    created_by: row.created_by,
  };
}

/** A follow (OCL's FollowingSerializer). */
export function followJson({ row, follower, object }: FollowView): object {
  return {
    id: Number(row.id),
    type: 'Follow',
    follow_date: row.created_at,
    object,
    url: `/users/${encodeURIComponent(follower.username)}/following/${row.id}/`,
  };
}

/** A user detail with what `include…` asked for. */
export function profileJson(profile: UserProfile): object {
  const { user, counts, rateLimits } = profile;
  return {
    ...userDetail(user, counts, rateLimits),
    ...(profile.subscribedOrgs && { subscribed_orgs: profile.subscribedOrgs.map(orgSummary) }),
    ...(profile.authGroups && { auth_groups: profile.authGroups }),
    ...(profile.pins && { pins: profile.pins.map(pinJson) }),
    ...(profile.following && { following: profile.following.map(followJson) }),
  };
}

/** `[value, count]` pairs as OCL's distribution lists (`{field: value, count}`). */
function distributionOf(field: string, pairs: Distribution): object[] {
  return pairs.map(([value, count]) => ({ [field]: value, count }));
}

/** `{repo}[/:version]/summary/`: plain, `verbose`, or `verbose` with `distribution`. */
export function summaryJson(
  summary: RepoSummary,
  options: { verbose: boolean; distribution: string[] },
): object {
  const { view, content } = summary;
  const { repo, version } = view;
  const head = version.mnemonic === 'HEAD';
  const ids = { id: head ? repo.mnemonic : version.mnemonic, uuid: head ? repo.id : version.id };
  if (!options.verbose || !content) {
    return {
      ...ids,
      active_concepts: summary.activeConcepts,
      active_mappings: summary.activeMappings,
      versions: summary.versions.total + 1,
    };
  }
  if (options.distribution.length > 0) {
    const all: Record<string, unknown> = {
      concept_class: distributionOf('concept_class', content.concepts.conceptClass),
      datatype: distributionOf('datatype', content.concepts.datatype),
      name_type: distributionOf('type', content.concepts.nameType),
      name_locale: distributionOf('locale', content.concepts.locale),
      map_type: distributionOf('map_type', content.mappings.mapType),
      concepts_extras: content.concepts.extrasKeys,
    };
    return {
      ...ids,
      distribution: Object.fromEntries(options.distribution.map((d) => [d, all[d]])),
    };
  }
  const meta = version.metadata ?? repo;
  return {
    ...ids,
    concepts: {
      active: content.concepts.active,
      retired: content.concepts.retired,
      concept_class: content.concepts.conceptClass,
      datatype: content.concepts.datatype,
      locale: content.concepts.locale,
      name_type: content.concepts.nameType,
    },
    mappings: {
      active: content.mappings.active,
      retired: content.mappings.retired,
      map_type: content.mappings.mapType,
    },
    versions: summary.versions,
    default_locale: meta.defaultLocale,
    supported_locales: meta.supportedLocales,
  };
}

/** A lookup value (OCL's ConceptLookupListSerializer); `verbose` adds the name and locale. */
export function lookupJson(concept: ConceptView, verbose: boolean, locale?: string): object {
  const summary = conceptSummary(concept) as { id: string; url: string };
  return {
    uuid: concept.version.id,
    id: summary.id,
    url: summary.url,
    ...(verbose ? { display_name: concept.version.displayName, locale: locale ?? null } : {}),
  };
}

/** `/locales/`: a locale with its two-letter code in `locale`. */
export function localeJson({ concept, locale }: LocaleView, verbose: boolean): object {
  return lookupJson(concept, verbose, locale);
}
