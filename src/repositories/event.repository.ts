import type { EntityManager } from 'typeorm';
import type { Slice, Viewer, Window } from './list';

export interface NewEvent {
  eventType: string;
  actorId: string;
  objectUrl: string;
  object: Record<string, unknown>;
  referencedObjectUrl: string | null;
  referencedObject: Record<string, unknown> | null;
  /** What the event is about: the org it belongs to, the repository, the owning user. */
  orgId: string | null;
  repositoryId: string | null;
  ownerUserId: string | null;
  public: boolean;
}

export interface EventRow {
  id: string;
  event_type: string;
  object_url: string;
  object: Record<string, unknown>;
  referenced_object_url: string | null;
  referenced_object: Record<string, unknown> | null;
  public: boolean;
  created_at: Date;
  actor_username: string | null;
  actor_name: string | null;
}

/** Which events a list reads (spec: OCL's `scopes` of `/users/:user/events/`). */
export interface EventScope {
  /** Events the user made. */
  actorId?: string;
  /** Events about the orgs (and their repositories) this user belongs to. */
  orgsOfUserId?: string;
  /** Events about what this user follows. */
  followedByUserId?: string;
  /** Only these kinds (the guest dashboard's highlights). */
  types?: string[];
}

/**
 * An event is public while it was public when it happened and what it is about still is: a
 * repository or org made private since takes its past events with it.
 */
const STILL_PUBLIC = `(e.public
  AND NOT EXISTS (SELECT 1 FROM repositories er WHERE er.id = e.repository_id AND er.public_access = 'None')
  AND NOT EXISTS (SELECT 1 FROM organizations eo WHERE eo.id = e.org_id AND eo.public_access = 'None'))`;

export class EventRepository {
  constructor(private readonly em: EntityManager) {}

  async insert(event: NewEvent): Promise<void> {
    await this.em.query(
      `INSERT INTO events (event_type, actor_id, object_url, object, referenced_object_url,
         referenced_object, org_id, repository_id, owner_user_id, public)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        event.eventType,
        event.actorId,
        event.objectUrl,
        event.object,
        event.referencedObjectUrl,
        event.referencedObject,
        event.orgId,
        event.repositoryId,
        event.ownerUserId,
        event.public,
      ],
    );
  }

  /** Newest first; private events only to those who may see what they are about. */
  async list(scope: EventScope, viewer: Viewer, window: Window): Promise<Slice<EventRow>> {
    const params: unknown[] = [];
    const add = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    const anyOf: string[] = [];
    if (scope.actorId) anyOf.push(`e.actor_id = ${add(scope.actorId)}::bigint`);
    if (scope.orgsOfUserId) {
      anyOf.push(
        `e.org_id IN (SELECT org_id FROM org_memberships WHERE user_id = ${add(scope.orgsOfUserId)}::bigint)`,
      );
    }
    if (scope.followedByUserId) {
      const me = add(scope.followedByUserId);
      anyOf.push(`EXISTS (SELECT 1 FROM follows f WHERE f.follower_id = ${me}::bigint AND (
          (f.following_type = 'Organization' AND f.following_id = e.org_id)
          OR (f.following_type IN ('Source', 'Collection') AND f.following_id = e.repository_id)
          OR (f.following_type = 'User' AND (f.following_id = e.actor_id OR f.following_id = e.owner_user_id))))`);
    }
    const where: string[] = [];
    if (anyOf.length > 0) where.push(`(${anyOf.join(' OR ')})`);
    if (scope.types) where.push(`e.event_type = ANY(${add(scope.types)}::text[])`);
    if (!viewer.superuser) {
      const me = add(viewer.userId ?? '0');
      where.push(`(${STILL_PUBLIC} OR e.actor_id = ${me}::bigint OR e.owner_user_id = ${me}::bigint
        OR EXISTS (SELECT 1 FROM org_memberships vm WHERE vm.org_id = e.org_id AND vm.user_id = ${me}::bigint))`);
    }
    const filter = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    const [{ total }] = await this.em.query<Array<{ total: number }>>(
      `SELECT count(*)::int AS total FROM events e ${filter}`,
      params,
    );
    const limit = window.limit === 0 ? 'ALL' : add(window.limit);
    const rows = await this.em.query<EventRow[]>(
      `SELECT e.id::text AS id, e.event_type, e.object_url, e.object, e.referenced_object_url,
         e.referenced_object, ${STILL_PUBLIC} AS public, e.created_at, u.username AS actor_username, u.name AS actor_name
       FROM events e LEFT JOIN users u ON u.id = e.actor_id
       ${filter} ORDER BY e.created_at DESC, e.id DESC LIMIT ${limit} OFFSET ${add(window.offset)}`,
      params,
    );
    return { rows, total };
  }
}
