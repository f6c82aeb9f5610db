import { HEAD } from '../../db/entities';
import { AppError } from '../../errors';
import type { Repositories } from '../../repositories';
import { requireUser } from '../shared/access';
import { announceChange, contentUrl, type RepositoryChangeKind } from '../shared/changes';
import type { ServiceContext } from '../shared/context';
import { withExtra, withoutExtra } from '../shared/extras';
import type { RepoRef } from '../shared/urls';
import type { RepoView } from './repository.service';

/** What every content version holds that its edits read. */
interface VersionBase {
  retired: boolean;
  extras: Record<string, unknown> | null;
  checksumStandard: string | null;
}

/** What every content edit writes. */
interface ContentBase {
  retired: boolean;
  extras: Record<string, unknown> | null;
}

/**
 * A versioned content kind (concepts, mappings), as the edits they share see it: where its
 * objects and versions are, how a version becomes content and content a version row.
 */
export interface ContentKind<
  O extends { id: string; mnemonic: string },
  V extends VersionBase,
  C extends ContentBase,
  View,
> {
  /** `Concept` or `Mapping`, as messages name it. */
  label: 'Concept' | 'Mapping';
  /** The object of that id in a source (its HEAD), on `repos`. */
  find(repos: Repositories, repositoryId: string, id: string): Promise<O | null>;
  /** The versions of the kind on `repos`. */
  versions(repos: Repositories): {
    findVersionAt(objectId: string, seq: string | null): Promise<V | null>;
    endCurrent(objectId: string, seq: string): Promise<void>;
    insertVersion(row: Partial<V>): Promise<V>;
  };
  /** The object a version belongs to, as the version row needs it. */
  objectOf(version: V): O;
  contentOf(version: V): C;
  versionRow(
    source: RepoView,
    object: O,
    content: C,
    seq: string,
    username: string,
    comment: string | null,
  ): Partial<V>;
  /** Checked inside the transaction before a version is written (e.g. mapping uniqueness). */
  beforeWrite?(repos: Repositories, source: RepoView, content: C, objectId: string): Promise<void>;
  viewOf(source: RepoView, object: O, version: V): View;
}

/**
 * The version mechanics concepts and mappings share (spec core §9.4): every accepted edit is a
 * new version in HEAD, an edit that changes nothing (same standard checksum) is `UNCHANGED`
 * (208), retiring and reactivating are edits, and so are one custom attribute's set and remove
 * (spec operations §4.9). Every edit here runs on a source HEAD the caller may edit.
 */
export class VersionedContent<
  O extends { id: string; mnemonic: string },
  V extends VersionBase,
  C extends ContentBase,
  View,
> {
  constructor(
    private readonly repos: Repositories,
    private readonly kind: ContentKind<O, V, C, View>,
  ) {}

  /** Edits go to HEAD; through a frozen version's path they are 405 (spec core §3, §9.2). */
  assertHeadPath(sourceRef: RepoRef): void {
    if (sourceRef.version !== undefined && sourceRef.version !== HEAD) {
      throw new AppError(
        'NOT_ALLOWED',
        `A source version is frozen; edit ${this.kind.label.toLowerCase()}s through HEAD.`,
      );
    }
  }

  /**
   * The one path of every edit: lock, compare checksums, end the current version, add the new.
   * `next` may give the new version's comment when it depends on the current content.
   */
  async change(
    ctx: ServiceContext,
    source: RepoView,
    id: string,
    comment: string | null,
    next: (current: V) => C & { comment?: string },
  ): Promise<View> {
    const actor = requireUser(ctx);
    const { label } = this.kind;
    return this.repos.transaction(async (repos) => {
      const object = await this.kind.find(repos, source.repo.id, id);
      if (!object) throw AppError.notFound(`${label} '${id}'`);
      const seq = await repos.repos.nextChange(source.repo.id);
      const versions = this.kind.versions(repos);
      const current = await versions.findVersionAt(object.id, null);
      if (!current) throw AppError.notFound(`${label} '${id}'`);
      const { comment: own, ...rest } = next(current);
      const content = rest as unknown as C;
      // Under the source's lock (nextChange): no parallel edit slips past the kind's check.
      await this.kind.beforeWrite?.(repos, source, content, object.id);
      const row = this.kind.versionRow(
        source,
        object,
        content,
        seq,
        actor.username,
        own ?? comment,
      );
      if (row.checksumStandard === current.checksumStandard) {
        // Rolls the transaction back: no change number is spent on an identical edit.
        throw new AppError(
          'UNCHANGED',
          'No changes detected: the standard checksum equals the latest version.',
        );
      }
      await versions.endCurrent(object.id, seq);
      const version = await versions.insertVersion(row);
      await announceChange(
        repos,
        source,
        actor,
        changeKind(label, current.retired, content.retired),
        contentUrl(source, label === 'Concept' ? 'concepts' : 'mappings', object.mnemonic),
      );
      return this.kind.viewOf(source, object, version);
    });
  }

  /**
   * A new version with `content`, inside the caller's transaction, which holds the source's
   * change number `seq`; false (nothing written) when its standard checksum equals the current
   * version's (spec core §9.4).
   */
  async reviseIn(
    repos: Repositories,
    source: RepoView,
    current: V,
    content: C,
    seq: string,
    options: { username: string; comment: string | null },
  ): Promise<boolean> {
    const object = this.kind.objectOf(current);
    await this.kind.beforeWrite?.(repos, source, content, object.id);
    const row = this.kind.versionRow(
      source,
      object,
      content,
      seq,
      options.username,
      options.comment,
    );
    if (row.checksumStandard === current.checksumStandard) return false;
    const versions = this.kind.versions(repos);
    await versions.endCurrent(object.id, seq);
    await versions.insertVersion(row);
    return true;
  }

  /** `DELETE`: a new, retired version; retiring twice is a 400. */
  retire(ctx: ServiceContext, source: RepoView, id: string, comment?: unknown): Promise<View> {
    const { label } = this.kind;
    const note =
      typeof comment === 'string' && comment.trim() ? comment.trim() : `${label} was retired`;
    return this.change(ctx, source, id, note, (current) => {
      if (current.retired) throw AppError.invalid(`${label} is already retired.`);
      return { ...this.kind.contentOf(current), retired: true };
    });
  }

  /** `PUT …/reactivate/`: a new, active version; a 400 when it is not retired. */
  reactivate(ctx: ServiceContext, source: RepoView, id: string): Promise<View> {
    const { label } = this.kind;
    return this.change(ctx, source, id, `${label} was un-retired`, (current) => {
      if (!current.retired) throw AppError.invalid(`${label} is not retired.`);
      return { ...this.kind.contentOf(current), retired: false };
    });
  }

  /**
   * `PUT …/extras/:name/` with `{"<name>": value}`: creates or updates one attribute in a new
   * version; 208 when it already has that value.
   */
  setExtra(
    ctx: ServiceContext,
    source: RepoView,
    id: string,
    name: string,
    input: unknown,
  ): Promise<View> {
    return this.change(ctx, source, id, `Updated extras: ${name}.`, (current) => ({
      ...this.kind.contentOf(current),
      extras: withExtra(current.extras, name, input),
    }));
  }

  /** `DELETE …/extras/:name/`: a new version without that attribute; 404 when it has none such. */
  removeExtra(ctx: ServiceContext, source: RepoView, id: string, name: string): Promise<View> {
    const noun = `${this.kind.label.toLowerCase()} '${id}'`;
    return this.change(ctx, source, id, `Deleted extra ${name}.`, (current) => ({
      ...this.kind.contentOf(current),
      extras: withoutExtra(current.extras, name, noun),
    }));
  }
}

/** What an edit did to a concept or mapping, as its repository's watchers are told. */
function changeKind(
  label: 'Concept' | 'Mapping',
  wasRetired: boolean,
  retired: boolean,
): RepositoryChangeKind {
  const prefix = label === 'Concept' ? 'CONCEPT' : 'MAPPING';
  if (!wasRetired && retired) return `${prefix}_RETIRED`;
  if (wasRetired && !retired) return `${prefix}_REACTIVATED`;
  return `${prefix}_UPDATED`;
}
