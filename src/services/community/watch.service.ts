import { NOTIFY_CHANNEL, type Notifications } from '../../db/notifications';
import { HEAD } from '../../db/entities';
import { AppError, fromDatabaseError, isAppError } from '../../errors';
import { isFinished, type TaskView } from '../../jobs';
import type { Logger } from '../../logger';
import { watchesOpen } from '../../metrics/registry';
import {
  decodeNotice,
  type Notice,
  type Repositories,
  type RepositoryNotice,
} from '../../repositories';
import { can, requireUser } from '../shared/access';
import { REPOSITORY_CHANGE_KINDS, type RepositoryChangeKind } from '../shared/changes';
import type { ServiceContext } from '../shared/context';
import { Feed, type Delivery } from '../shared/feed';
import { createLoaders } from '../shared/loaders';
import { mayViewRepo, type RepoView } from '../shared/paths';
import { repoUrl, type RepoRef } from '../shared/urls';
import type { TaskService } from './task.service';

/** How long a new watch waits for the listening connection; then it is refused (UNAVAILABLE). */
const READY_WAIT_MS = 10_000;

function unavailable(): AppError {
  return new AppError(
    'UNAVAILABLE',
    'Subscriptions are not available now; try again shortly.',
    undefined,
    5,
  );
}
/** Deliveries a watch keeps for a reader that does not read them; past that it ends. */
export const MAX_WAITING_DELIVERIES = 1000;

/** A change in a watched repository, as its watcher is told. */
export interface RepositoryChange {
  kind: RepositoryChangeKind;
  /** What changed: a concept's, mapping's or version's URL, or the repository's. */
  url: string;
  /** The repository's URL (at HEAD). */
  repositoryUrl: string;
  /** Username of who made the change. */
  actor: string;
  at: Date;
}

/** What the watches read through: the same services every edge calls. */
interface WatchDeps {
  tasks: TaskService;
  repository(ctx: ServiceContext, ref: RepoRef): Promise<RepoView>;
  /** The watcher's context as it is now (see `WatchService.fresh`). */
  fresh(ctx: ServiceContext): Promise<ServiceContext>;
  /** A failure as the error that ends a watch (logged when it is a bug). */
  typed(error: unknown): AppError;
}

interface Watch {
  readonly topic: 'task' | 'repository';
  readonly key: string;
  notice(notice: Notice): void;
  /** Notices may have been missed meanwhile (the listening connection was lost). */
  resumed(): void;
  /** Ends the watch (the process stops). */
  end(): void;
}

const slow = (): AppError =>
  new AppError(
    'UNAVAILABLE',
    `More than ${MAX_WAITING_DELIVERIES} changes waited to be read; subscribe again.`,
  );

/**
 * A task as its watcher sees it: read again at each notice (state, progress or outcome written),
 * delivered when it differs from what was delivered last, and last once it has finished.
 */
class TaskWatch implements Watch {
  readonly topic = 'task';
  readonly key: string;
  readonly feed: Feed<Delivery<TaskView>>;
  private tail: Promise<void> = Promise.resolve();
  private queued = false;
  private last = '';

  constructor(
    private readonly deps: WatchDeps,
    private readonly ctx: ServiceContext,
    private readonly id: string,
    onClose: (watch: Watch) => void,
  ) {
    this.key = `task:${id}`;
    this.feed = new Feed(() => onClose(this), MAX_WAITING_DELIVERIES);
  }

  /** The first read, as the caller: throws (and delivers nothing) when they may not see it. */
  start(): Promise<void> {
    const first = this.deps.tasks.get(this.ctx, this.id).then((task) => this.deliver(task));
    this.tail = first.catch(() => undefined);
    return first;
  }

  notice(): void {
    this.refresh();
  }

  resumed(): void {
    this.refresh();
  }

  end(): void {
    this.feed.finish();
  }

  /** One read for however many notices came while the last one ran. */
  private refresh(): void {
    if (this.queued) return;
    this.queued = true;
    this.tail = this.tail.then(async () => {
      this.queued = false;
      if (!this.feed.open) return;
      try {
        this.deliver(await this.deps.tasks.get(await this.deps.fresh(this.ctx), this.id));
      } catch (error) {
        this.feed.finish({ error: this.deps.typed(error) });
      }
    });
  }

  private deliver(task: TaskView): void {
    const seen = JSON.stringify([task.state, task.progress, task.error, task.finishedAt]);
    if (seen !== this.last) {
      this.last = seen;
      if (!this.feed.push({ value: task })) {
        this.feed.finish({ error: slow() });
        return;
      }
    }
    if (isFinished(task)) this.feed.finish();
  }
}

/**
 * A repository's changes as its watcher sees them: the notices that came while the last ones
 * were delivered are delivered together, after one check that the watcher may see the
 * repository now (fresh rights: memberships change); a refusal ends the watch with its error.
 */
class RepositoryWatch implements Watch {
  readonly topic = 'repository';
  readonly key: string;
  readonly feed: Feed<Delivery<RepositoryChange>>;
  private tail: Promise<void> = Promise.resolve();
  private pending: RepositoryNotice[] = [];

  constructor(
    private readonly deps: WatchDeps,
    private readonly ctx: ServiceContext,
    private readonly ref: RepoRef,
    /** The repository as the watcher last saw it. */
    private view: RepoView,
    onClose: (watch: Watch) => void,
  ) {
    this.key = `repository:${view.repo.id}`;
    this.feed = new Feed(() => onClose(this), MAX_WAITING_DELIVERIES);
  }

  notice(notice: Notice): void {
    if (notice.topic !== 'repository' || !this.feed.open) return;
    this.pending.push(notice);
    if (this.pending.length > MAX_WAITING_DELIVERIES) {
      this.pending = [];
      this.feed.finish({ error: slow() });
      return;
    }
    if (this.pending.length === 1) this.tail = this.tail.then(() => this.flush());
  }

  /** Changes made while the connection was lost are not told (nothing records them). */
  resumed(): void {}

  end(): void {
    this.feed.finish();
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0 || !this.feed.open) return;
    try {
      await this.check(batch);
    } catch (error) {
      this.feed.finish({ error: this.deps.typed(error) });
      return;
    }
    for (const notice of batch) {
      if (!(REPOSITORY_CHANGE_KINDS as readonly string[]).includes(notice.kind)) continue;
      if (!this.feed.open) return;
      if (!this.feed.push({ value: this.changeOf(notice) })) {
        this.feed.finish({ error: slow() });
        return;
      }
      if (notice.kind === 'REPOSITORY_DELETED') {
        this.feed.finish();
        return;
      }
    }
  }

  /**
   * Throws unless the watcher may see the repository now. A deleted one (or a deactivated
   * collection) cannot be read: its deletion is told to a watcher who may see it as it last was.
   */
  private async check(batch: RepositoryNotice[]): Promise<void> {
    const ctx = await this.deps.fresh(this.ctx);
    try {
      const view = await this.deps.repository(ctx, this.ref);
      // Another repository under the same URL is not the one watched.
      if (view.repo.id !== this.view.repo.id) throw AppError.notFound(`'${this.repositoryUrl()}'`);
      this.view = view;
    } catch (error) {
      const deleted = batch.some((notice) => notice.kind === 'REPOSITORY_DELETED');
      if (!deleted || !isAppError(error) || error.code !== 'NOT_FOUND') throw error;
      const { repo, owner } = this.view;
      const visible =
        (await mayViewRepo(ctx, repo)) &&
        (!owner.org || (await can(ctx, { action: 'org.view', org: owner.org })));
      if (!visible) throw error;
    }
  }

  private changeOf(notice: RepositoryNotice): RepositoryChange {
    const repositoryUrl = this.repositoryUrl();
    return {
      kind: notice.kind as RepositoryChangeKind,
      url: notice.url || repositoryUrl,
      repositoryUrl,
      actor: notice.actor,
      at: new Date(notice.at),
    };
  }

  private repositoryUrl(): string {
    const { owner, repo } = this.view;
    return repoUrl(owner, repo.kind, repo.mnemonic);
  }
}

/**
 * Watches (GraphQL subscriptions): a task's progress, a repository's changes. Writers publish
 * small notices (ids, a kind, a URL) through the database (`pg_notify`, at their commit), so a
 * change made by any process reaches the watchers of every process through its one listening
 * connection (`Notifications`). Nothing in a notice is delivered on its word: each
 * delivery reads again, through the services, as the watcher with their rights as they are then.
 */
export class WatchService {
  private readonly watches = new Map<string, Set<Watch>>();
  private readonly deps: WatchDeps;
  private log: Logger | undefined;
  private stopped = false;

  constructor(
    private readonly repos: Repositories,
    /** The process's listening connection: watches wait for it to be live (else refused). */
    private readonly notifications: Notifications,
    tasks: TaskService,
    repository: (ctx: ServiceContext, ref: RepoRef) => Promise<RepoView>,
  ) {
    this.deps = {
      tasks,
      repository,
      fresh: (ctx) => this.fresh(ctx),
      typed: (error) => this.typed(error),
    };
    notifications.on(NOTIFY_CHANNEL, (payload) => this.dispatch(payload));
    // Notices may have been missed (the connection was lost, or is back): each watch reads again.
    notifications.onGap(() => {
      for (const watches of this.watches.values()) for (const watch of watches) watch.resumed();
    });
  }

  /** The logger of the watches' failures (the app's). */
  useLogger(log: Logger): void {
    this.log = log;
  }

  /**
   * The task `id` as its creator (or a superuser) sees it (the rule of `TaskService.get`): now,
   * then at each change of its state or progress, ending after it has finished. Refused at once
   * (the error thrown) when the caller may not see it.
   */
  async task(ctx: ServiceContext, id: string): Promise<AsyncIterableIterator<Delivery<TaskView>>> {
    requireUser(ctx);
    await this.ready();
    const watch = new TaskWatch(this.deps, ctx, id, (w) => this.remove(w));
    this.add(watch);
    try {
      await watch.start();
    } catch (error) {
      await watch.feed.return();
      throw error;
    }
    return watch.feed;
  }

  /**
   * The changes of a repository (at HEAD: a version's URL is refused) from now on, each once, in
   * the order they were committed, while the caller may see it; its deletion ends the watch.
   */
  async repository(
    ctx: ServiceContext,
    ref: RepoRef,
  ): Promise<AsyncIterableIterator<Delivery<RepositoryChange>>> {
    if (ref.version !== undefined && ref.version !== HEAD) {
      throw AppError.field('url', 'A repository is watched by its own URL, without a version.');
    }
    const view = await this.deps.repository(ctx, ref);
    await this.ready();
    const watch = new RepositoryWatch(this.deps, ctx, ref, view, (w) => this.remove(w));
    this.add(watch);
    return watch.feed;
  }

  /** How many watches are open in this process. */
  openWatches(): number {
    let open = 0;
    for (const watches of this.watches.values()) open += watches.size;
    return open;
  }

  /** Ends every watch (their readers see them complete). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const watches of [...this.watches.values()]) for (const watch of [...watches]) watch.end();
  }

  private add(watch: Watch): void {
    const watches = this.watches.get(watch.key) ?? new Set<Watch>();
    this.watches.set(watch.key, watches.add(watch));
    watchesOpen.inc({ topic: watch.topic });
  }

  private remove(watch: Watch): void {
    const watches = this.watches.get(watch.key);
    if (!watches?.delete(watch)) return;
    if (watches.size === 0) this.watches.delete(watch.key);
    watchesOpen.dec({ topic: watch.topic });
  }

  private dispatch(payload: string): void {
    const notice = decodeNotice(payload);
    if (!notice) return;
    const key = notice.topic === 'task' ? `task:${notice.id}` : `repository:${notice.repositoryId}`;
    for (const watch of this.watches.get(key) ?? []) watch.notice(notice);
  }

  /** Waits until the listening connection is live (at most `READY_WAIT_MS`). */
  private async ready(): Promise<void> {
    if (this.stopped) throw unavailable();
    try {
      await this.notifications.whenLive(READY_WAIT_MS);
    } catch {
      throw unavailable();
    }
  }

  /**
   * The watcher's context as it is now: their account read again (a deactivated one ends the
   * watch; a superuser's rights follow the flag) and new loaders, so that nothing read for an
   * earlier delivery (memberships, rights) is reused.
   */
  private async fresh(ctx: ServiceContext): Promise<ServiceContext> {
    let { actor } = ctx;
    if (actor.kind === 'user') {
      const [user] = await this.repos.users.findByIds([actor.id]);
      if (!user?.isActive) {
        throw new AppError('UNAUTHENTICATED', 'This account is no longer active.');
      }
      actor = { ...actor, isSuperuser: user.isSuperuser };
    }
    return { ...ctx, actor, loaders: createLoaders(this.repos, actor) };
  }

  private typed(error: unknown): AppError {
    if (isAppError(error)) return error;
    const database = fromDatabaseError(error);
    if (database) return database;
    this.log?.error({ err: error }, 'a subscription failed');
    return new AppError('UNAVAILABLE', 'The subscription failed; subscribe again.');
  }
}
