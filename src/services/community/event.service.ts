import type { OrganizationEntity, UserEntity } from '../../db/entities';
import { HEAD } from '../../db/entities';
import { AppError } from '../../errors';
import type { EventRow, EventScope, Repositories } from '../../repositories';
import { viewerOf } from '../shared/actor';
import type { ServiceContext } from '../shared/context';
import { pageOf, windowOf, type ListParams, type Page } from '../shared/list';
import type { RepoView } from '../shared/paths';
import { ownerUrl, repoUrl } from '../shared/urls';

/** OCL's event kinds. */
export type EventType = 'Created' | 'Released' | 'Deleted' | 'Joined' | 'Followed' | 'Unfollowed';

/** The guest dashboard shows these (OCL's highlights). */
const HIGHLIGHTS: EventType[] = ['Created', 'Released'];

/** What `scopes` of `/users/:user/events/` may name. */
const SCOPES = ['self', 'orgs', 'following', 'all'] as const;

/** The user who did something, as an event's `object` shows them. */
interface Doer {
  id: string;
  username: string;
  name?: string;
}

/** What an event is about: its brief, its URL and where it belongs. */
export interface EventSubject {
  url: string;
  brief: Record<string, unknown>;
  orgId: string | null;
  repositoryId: string | null;
  ownerUserId: string | null;
  public: boolean;
}

export function userBrief(user: Pick<UserEntity, 'username' | 'name'>): Record<string, unknown> {
  return {
    type: 'User',
    username: user.username,
    name: user.name,
    url: `/users/${encodeURIComponent(user.username)}/`,
  };
}

export function orgSubject(org: OrganizationEntity): EventSubject {
  const url = ownerUrl({ type: 'Organization', id: org.mnemonic });
  return {
    url,
    brief: { type: 'Organization', id: org.mnemonic, name: org.name, url },
    orgId: org.id,
    repositoryId: null,
    ownerUserId: null,
    public: org.publicAccess !== 'None',
  };
}

export function userSubject(user: UserEntity): EventSubject {
  const brief = userBrief(user);
  return {
    url: brief.url as string,
    brief,
    orgId: null,
    repositoryId: null,
    ownerUserId: user.id,
    public: true,
  };
}

/** A repository (at HEAD) or one of its versions. */
export function repoSubject(view: RepoView): EventSubject {
  const { repo, owner, version } = view;
  const base = repoUrl(owner, repo.kind, repo.mnemonic);
  const isVersion = version.mnemonic !== HEAD;
  const type = repo.kind === 'source' ? 'Source' : 'Collection';
  const url = isVersion ? repoUrl(owner, repo.kind, repo.mnemonic, version.mnemonic) : base;
  const orgPublic = owner.org ? owner.org.publicAccess !== 'None' : true;
  return {
    url,
    brief: {
      type: isVersion ? `${type} Version` : type,
      id: isVersion ? version.mnemonic : repo.mnemonic,
      short_code: repo.mnemonic,
      name: repo.name,
      url: base,
      ...(isVersion ? { version_url: url } : {}),
      owner: owner.id,
      owner_type: owner.type,
      owner_url: ownerUrl(owner),
    },
    orgId: repo.ownerOrgId,
    repositoryId: repo.id,
    ownerUserId: repo.ownerUserId,
    public: repo.publicAccess !== 'None' && orgPublic,
  };
}

/**
 * Records that `doer` did `type` to `subject`, inside the caller's transaction (`repos`): the
 * event exists exactly when the change does.
 */
export async function recordEvent(
  repos: Repositories,
  doer: Doer,
  type: EventType,
  subject: EventSubject,
): Promise<void> {
  const doerBrief = userBrief({ username: doer.username, name: doer.name ?? doer.username });
  await repos.events.insert({
    eventType: type,
    actorId: doer.id,
    objectUrl: doerBrief.url as string,
    object: doerBrief,
    referencedObjectUrl: subject.url,
    referencedObject: subject.brief,
    orgId: subject.orgId,
    repositoryId: subject.repositoryId,
    ownerUserId: subject.ownerUserId,
    public: subject.public,
  });
}

/** Events (OCL `/events/`, `/users/:user/events/`): what happened, newest first. */
export class EventService {
  constructor(private readonly repos: Repositories) {}

  /** The guest dashboard: what was created and released lately, public events only. */
  async highlights(_ctx: ServiceContext, params: ListParams): Promise<Page<EventRow>> {
    const slice = await this.repos.events.list(
      { types: HIGHLIGHTS },
      { superuser: false, userId: null },
      windowOf(params),
    );
    return pageOf(slice.rows, slice.total, params);
  }

  /**
   * A user's events by `scopes` (comma-separated `self`, `orgs`, `following`, `all`; none:
   * `self`): what they did, what happened in their orgs, to what they follow. Private events
   * only to those who may see what they are about.
   */
  async ofUser(
    ctx: ServiceContext,
    user: UserEntity,
    scopes: string[],
    params: ListParams,
  ): Promise<Page<EventRow>> {
    const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown.length > 0) {
      throw AppError.field('scopes', `Unknown scope '${unknown[0]}'; use ${SCOPES.join(', ')}.`);
    }
    const all = scopes.includes('all');
    const scope: EventScope = {
      actorId: scopes.length === 0 || all || scopes.includes('self') ? user.id : undefined,
      orgsOfUserId: all || scopes.includes('orgs') ? user.id : undefined,
      followedByUserId: all || scopes.includes('following') ? user.id : undefined,
    };
    const slice = await this.repos.events.list(scope, viewerOf(ctx.actor), windowOf(params));
    return pageOf(slice.rows, slice.total, params);
  }
}
