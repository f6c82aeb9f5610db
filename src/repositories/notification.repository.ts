import type { EntityManager } from 'typeorm';
import { MAX_NOTIFY_BYTES, NOTIFY_CHANNEL } from '../db/notifications';

/** A task's state or progress was written: watchers read it again. */
export interface TaskNotice {
  topic: 'task';
  id: string;
}

/** Something in a repository changed (what a `repositoryChanged` watcher is told). */
export interface RepositoryNotice {
  topic: 'repository';
  repositoryId: string;
  /** What changed (`CONCEPT_CREATED`, …): the services' vocabulary. */
  kind: string;
  /**
   * The URL of what changed; empty for the repository itself, for a change of many objects at
   * once, and for a URL too long for the channel.
   */
  url: string;
  /** Username of who changed it. */
  actor: string;
  /** When, ISO 8601. */
  at: string;
}

/** What goes through the channel: ids and short text only; readers read the rest again. */
export type Notice = TaskNotice | RepositoryNotice;

/** `pg_notify` of one notice as JSON, with the task notices' SQL form (see `TaskRepository`). */
export const taskNoticeSql = (idColumn: string, channelParameter: string): string =>
  `pg_notify(${channelParameter}, json_build_object('topic', 'task', 'id', ${idColumn})::text)`;

/**
 * Publishes notices on the channel every process listens on. On a transaction's connection a
 * notice is delivered at its commit, and never when it rolls back; outside one, at once.
 */
export class NotificationRepository {
  constructor(private readonly em: EntityManager) {}

  async publish(notice: Notice): Promise<void> {
    await this.em.query('SELECT pg_notify($1, $2)', [NOTIFY_CHANNEL, encodeNotice(notice)]);
  }
}

/**
 * A notice as JSON under PostgreSQL's payload limit: a URL too long to fit (an id has no length
 * limit of its own) is left out, and its readers name the repository instead.
 */
export function encodeNotice(notice: Notice): string {
  const text = JSON.stringify(notice);
  if (Buffer.byteLength(text) <= MAX_NOTIFY_BYTES || notice.topic !== 'repository') return text;
  return JSON.stringify({ ...notice, url: '' });
}

/** A notice read from the channel; null for anything else (another version's, or garbage). */
export function decodeNotice(payload: string): Notice | null {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const notice = value as Record<string, unknown>;
  if (notice.topic === 'task' && typeof notice.id === 'string') {
    return { topic: 'task', id: notice.id };
  }
  if (
    notice.topic === 'repository' &&
    typeof notice.repositoryId === 'string' &&
    typeof notice.kind === 'string' &&
    typeof notice.url === 'string' &&
    typeof notice.actor === 'string' &&
    typeof notice.at === 'string'
  ) {
    return {
      topic: 'repository',
      repositoryId: notice.repositoryId,
      kind: notice.kind,
      url: notice.url,
      actor: notice.actor,
      at: notice.at,
    };
  }
  return null;
}
