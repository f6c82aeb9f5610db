import { z } from 'zod';
import {
  HEAD,
  type RepositoryEntity,
  type RepositoryKind,
  type RepositorySnapshot,
  type RepositoryVersionEntity,
} from '../../db/entities';
import { AppError } from '../../errors';
import {
  isUniqueViolation,
  type ContainedVersion,
  type OwnerKey,
  type Repositories,
  type RepoSearch,
  type RepoSortKey,
  type SortSpec,
} from '../../repositories';
import { authorize, requireUser, viewerOf } from '../shared/access';
import { announceChange } from '../shared/changes';
import type { ServiceContext } from '../shared/context';
import { pageOf, resolveSort, windowOf, type ListParams, type Page } from '../shared/list';
import {
  parseConceptUrl,
  repoUrl,
  type ConceptRef,
  type OwnerRef,
  type RepoRef,
} from '../shared/urls';
import { stripUndefined } from '../accounts/user.service';
import type { Owner, PathResolver, RepoCounts, RepoView } from '../shared/paths';
import { recordEvent, repoSubject } from '../community/event.service';
import {
  extras,
  mnemonic,
  notReserved,
  optionalText,
  parseInput,
  publicAccess,
  requiredText,
  website,
} from '../shared/validation';
import { removeRowExtra, setRowExtra } from '../shared/extras';

export type { Owner, RepoCounts, RepoView } from '../shared/paths';

/**
 * What the repository service tells others about the versions it makes; the composition root
 * (src/services/index.ts) passes the listeners in.
 */
export interface VersionEvents {
  /**
   * What else happens when a collection version is made. It is called before the transaction
   * and answers the work to do inside it, on the transaction's repositories only (what it reads
   * as the caller included), once the version is made.
   */
  collectionVersion(
    ctx: ServiceContext,
    head: { owner: Owner; repo: RepositoryEntity | null },
    autoexpand: boolean,
  ): Promise<((r: Repositories, made: RepoView) => Promise<void>) | null>;
  /** After a version was made and its transaction committed (its automatic export, spec operations §3). */
  versionMade(ctx: ServiceContext, made: RepoView): Promise<void>;
}

/** A repository the same transaction makes before its version. */
export interface PendingRepo {
  owner: Owner;
  kind: RepositoryKind;
}

/** Work prepared as the caller, before a transaction, to run inside it on its repositories. */
export type TransactionStep<T> = (r: Repositories) => Promise<T>;

/** A repository as its detail shows it: what one service call answers. */
export interface RepoDetail {
  view: RepoView;
  counts: RepoCounts;
  /** A collection version's default expansion (OCL `expansion_url`); only where it is read. */
  expansionUrl?: string | null;
}

const locale = z
  .string({ error: 'Must be a string.' })
  .trim()
  .regex(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/, 'Must be a locale code such as en or pt-BR.');

/** A comma-separated string (spec core §2.4) or a list of locale codes. */
const LOCALE = /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/;

/** A comma-separated string (spec core §2.4) or a list of locale codes; errors name the field. */
const locales = z
  .union([z.string(), z.array(z.string())], { error: 'Must be comma-separated locale codes.' })
  .transform((v) =>
    (Array.isArray(v) ? v : v.split(',')).map((l) => l.trim()).filter((l) => l.length > 0),
  )
  .refine((list) => list.length > 0 && list.length <= 200, 'Between 1 and 200 locales.')
  .refine(
    (list) => list.every((l) => LOCALE.test(l)),
    'Each must be a locale code such as en or pt-BR.',
  );

const autoIdScheme = z
  .enum(['sequential', 'uuid'], { error: 'Must be sequential, uuid or null.' })
  .nullish();
const startFrom = z
  .number({ error: 'Must be a whole number.' })
  .int('Must be a whole number.')
  .min(0)
  .nullish();

const autoIdFields = {
  autoidConceptMnemonic: autoIdScheme,
  autoidConceptExternalId: autoIdScheme,
  autoidMappingMnemonic: autoIdScheme,
  autoidMappingExternalId: autoIdScheme,
  autoidConceptMnemonicStartFrom: startFrom,
  autoidConceptExternalIdStartFrom: startFrom,
  autoidMappingMnemonicStartFrom: startFrom,
  autoidMappingExternalIdStartFrom: startFrom,
  autoidConceptNameExternalId: z.enum(['uuid'], { error: 'Must be uuid or null.' }).nullish(),
  autoidConceptDescriptionExternalId: z
    .enum(['uuid'], { error: 'Must be uuid or null.' })
    .nullish(),
};
const AUTO_ID_KEYS = Object.keys(autoIdFields) as Array<keyof typeof autoIdFields>;

const canonicalUrl = z
  .string({ error: 'Must be a string.' })
  .trim()
  .nullish()
  .transform((v) => (v ? v : null))
  .refine((v) => v === null || /^[a-z][a-z0-9+.-]*:\S+$/i.test(v), 'Must be an absolute URI.');

const shortText = z
  .string({ error: 'Must be a string.' })
  .trim()
  .max(255, 'At most 255 characters.')
  .nullish()
  .transform((v) => (v ? v : null));

/** Fields a source and a collection share, all optional (edits send only what changes). */
const commonFields = {
  name: requiredText.optional(),
  fullName: shortText.optional(),
  description: optionalText.optional(),
  website: website.optional(),
  externalId: shortText.optional(),
  publicAccess: publicAccess.optional(),
  defaultLocale: locale.optional(),
  supportedLocales: locales.optional(),
  customValidationSchema: shortText.optional(),
  canonicalUrl: canonicalUrl.optional(),
  extras: extras.optional(),
  // OCL's `meta`: how clients show the repository (`display.default_filter`), not content.
  meta: extras.optional(),
};

const sourceFields = z.object({
  ...commonFields,
  sourceType: shortText.optional(),
  // OCL's `hierarchy_root_url`: the URL of one of the source's concepts; blank clears it.
  hierarchyRootUrl: z
    .string({ error: 'Must be a string.' })
    .trim()
    .nullish()
    .transform((v) => (v ? v : null))
    .optional(),
  ...Object.fromEntries(AUTO_ID_KEYS.map((k) => [k, autoIdFields[k].optional()])),
});
const collectionFields = z.object({
  ...commonFields,
  collectionType: shortText.optional(),
  preferredSource: shortText.optional(),
});

/** A create also needs `id` and `name`. */
const createFields = { id: mnemonic, name: requiredText };
const FIELDS: Record<RepositoryKind, { create: z.ZodObject; edit: z.ZodObject }> = {
  source: { create: sourceFields.extend(createFields), edit: sourceFields },
  collection: { create: collectionFields.extend(createFields), edit: collectionFields },
};

const RESERVED_VERSION_IDS = [
  'HEAD',
  'latest',
  'versions',
  'concepts',
  'mappings',
  'references',
  'expansions',
  'extras',
  'export',
  'summary',
];

const versionCreateSchema = z.object({
  // HEAD and latest name versions already; the others are sub-resources of a version's URL.
  id: mnemonic.refine(notReserved(RESERVED_VERSION_IDS), 'This version id is reserved.'),
  description: optionalText.optional(),
  released: z.boolean({ error: 'Must be a boolean.' }).optional(),
  retired: z.boolean({ error: 'Must be a boolean.' }).optional(),
  previousVersion: z
    .string({ error: 'Must be a string.' })
    .trim()
    .min(1)
    .refine((v) => v.toLowerCase() !== 'latest', 'Must name a version, not latest.')
    .nullish(),
  externalId: shortText.optional(),
  extras: extras.optional(),
  // A collection version evaluates its references into its own expansion unless false.
  autoexpand: z.boolean({ error: 'Must be a boolean.' }).optional(),
});
const versionUpdateSchema = z.object({
  description: optionalText.optional(),
  released: z.boolean({ error: 'Must be a boolean.' }).optional(),
  retired: z.boolean({ error: 'Must be a boolean.' }).optional(),
  externalId: shortText.optional(),
  extras: extras.optional(),
  // A version's own `meta` (how clients show it): not part of what it froze.
  meta: extras.optional(),
});

/**
 * The schemas the service validates its input with, for the API reference (a source's or
 * collection's create and edit; a version's create and edit).
 */
export const repositoryInput = {
  source: FIELDS.source,
  collection: FIELDS.collection,
  version: { create: versionCreateSchema, edit: versionUpdateSchema },
};

/** spec core §4.5–4.7 sorts, under every spelling clients use. */
const SORTS: Record<string, RepoSortKey> = {
  bestmatch: 'bestMatch',
  lastupdate: 'lastUpdate',
  lastupdated: 'lastUpdate',
  name: 'name',
  id: 'id',
  shortcode: 'id',
  datecreated: 'dateCreated',
  created: 'dateCreated',
};

/** What a repository list may be narrowed to, besides the list parameters. */
export interface RepoScope {
  kind?: RepositoryKind;
  owner?: OwnerRef;
  /** The repositories of every org this user belongs to. */
  ofOrgsOf?: OwnerRef;
  publicOnly?: boolean;
}

/** Sources and collections (spec core §2.4, §2.5, §4.5–4.7) and their versions (§9). */
export class RepositoryService {
  constructor(
    private readonly repos: Repositories,
    private readonly paths: PathResolver,
    private readonly events: VersionEvents,
  ) {}

  /** The owner named in a path; a private org answers 401/403, an unknown one 404. */
  resolveOwner(ctx: ServiceContext, ref: OwnerRef): Promise<Owner> {
    return this.paths.owner(ctx, ref);
  }

  /** A repository at HEAD, `latest` (newest released) or a version id. */
  get(ctx: ServiceContext, ref: RepoRef): Promise<RepoView> {
    return this.paths.repository(ctx, ref);
  }

  /** A repository's newest released version; null when it has none. */
  latestReleased(ctx: ServiceContext, ref: RepoRef): Promise<RepoView | null> {
    return this.paths.latestReleased(ctx, ref);
  }

  /**
   * A repository named by its path, or the view itself when a service already resolved (and
   * checked) it in the same call: what lets one read-model reuse its resolution.
   */
  async at(ctx: ServiceContext, at: RepoRef | RepoView): Promise<RepoView> {
    return isRepoView(at) ? at : this.get(ctx, at);
  }

  async list(
    ctx: ServiceContext,
    params: ListParams,
    scope: RepoScope = {},
  ): Promise<Page<RepoView>> {
    // spec core §4.5/§4.6: the public lists default to the latest updated first.
    const fallback: SortSpec<RepoSortKey> =
      scope.publicOnly && !params.q
        ? { key: 'lastUpdate', desc: true }
        : { key: 'bestMatch', desc: false };
    const sort = resolveSort(params, SORTS, fallback);
    const search: RepoSearch = {
      kind: scope.kind,
      publicOnly: scope.publicOnly,
      q: params.q,
      sourceType: params.filters.sourceType,
      collectionType: params.filters.collectionType,
      locale: params.filters.locale,
      customValidationSchema: params.filters.customValidationSchema,
      canonicalUrl: params.filters.canonicalUrl,
      contains: params.filters.contains,
      containsVersions: containedVersionsOf(params.filters.contains ?? []),
      ownerType: ownerTypeOf(params.filters.ownerType),
      extras: params.extras,
      updatedSince: params.updatedSince,
      allVersions: params.allVersions,
    };
    const repoType = params.filters.repoType?.map((t) => t.toLowerCase());
    if (repoType?.some((t) => t !== 'source' && t !== 'collection')) {
      throw AppError.field('repoType', 'Must be Source or Collection.');
    }
    if (repoType?.length === 1 && ['source', 'collection'].includes(repoType[0])) {
      if (search.kind && search.kind !== repoType[0]) return pageOf([], 0, params);
      search.kind = repoType[0] as RepositoryKind;
    }
    if (scope.owner) search.owner = keyOf(await this.resolveOwner(ctx, scope.owner));
    if (scope.ofOrgsOf) {
      const member = await this.resolveOwner(ctx, scope.ofOrgsOf);
      if (!member.user) throw AppError.invalid('Only a user has orgs.');
      search.ofOrgsOfUserId = member.user.id;
    }
    const viewer = viewerOf(ctx.actor);
    const slice = await this.repos.repos.search(search, viewer, sort, windowOf(params));
    const facets = params.includeFacets ? await this.repos.repos.facets(search, viewer) : undefined;
    const items = await Promise.all(
      slice.rows.map(async ({ repo, version }) => ({
        repo,
        version,
        owner: await this.ownerOf(ctx, repo),
      })),
    );
    return pageOf(await this.withCounts(ctx, items, params), slice.total, params, facets);
  }

  /**
   * The HEAD view of a repository by id, batched through the request's loaders; null when it
   * does not exist. Callers decide whether the caller may see it.
   */
  async headView(ctx: ServiceContext, repositoryId: string): Promise<RepoView | null> {
    const head = await ctx.loaders.repositoryHead.load(repositoryId);
    if (!head) return null;
    const owner: Owner = head.org
      ? { type: 'Organization', id: head.org.mnemonic, org: head.org }
      : { type: 'User', id: head.user?.username ?? '', user: head.user ?? undefined };
    return { repo: head.repo, version: head.version, owner };
  }

  /** HEAD views of many repositories (e.g. behind a public list), by id. */
  async headViews(ctx: ServiceContext, repositoryIds: string[]): Promise<Map<string, RepoView>> {
    const views = await Promise.all(repositoryIds.map((id) => this.headView(ctx, id)));
    return new Map(
      views.filter((v): v is RepoView => v !== null).map((view) => [view.repo.id, view]),
    );
  }

  /** A repository's detail: the view with its version and content counts. */
  async detail(ctx: ServiceContext, ref: RepoRef): Promise<RepoDetail> {
    return this.detailOf(ctx, await this.get(ctx, ref));
  }

  private async detailOf(ctx: ServiceContext, view: RepoView): Promise<RepoDetail> {
    return { view, counts: await this.counts(ctx, view) };
  }

  /** A page's repositories, with their counts when the list is verbose. */
  private async withCounts(
    ctx: ServiceContext,
    views: RepoView[],
    params: ListParams,
  ): Promise<RepoView[]> {
    if (!params.verbose && !params.withCounts) return views;
    return Promise.all(
      views.map(async (view) => ({ ...view, counts: await this.counts(ctx, view) })),
    );
  }

  async counts(ctx: ServiceContext, view: RepoView): Promise<RepoCounts> {
    const [versions, content] = await Promise.all([
      ctx.loaders.versionCounts.load(view.repo.id),
      ctx.loaders.contentCounts.load(view.version.id),
    ]);
    return { versions, ...content };
  }

  /** Creates a source or collection with its HEAD (spec core §4.5, §4.6). */
  async create(
    ctx: ServiceContext,
    ownerRef: OwnerRef,
    kind: RepositoryKind,
    input: unknown,
  ): Promise<RepoDetail> {
    const prepared = await this.prepareCreate(ctx, ownerRef, kind, input);
    const made = await this.repos.transaction(prepared.apply);
    return this.detailOf(ctx, made);
  }

  /**
   * A create checked as the caller (access, fields, a free id) before any transaction; `apply`
   * inserts the repository and its HEAD inside the caller's transaction. A parallel create of the
   * same id that commits first makes `apply` fail with the same 400 as a sequential duplicate.
   */
  async prepareCreate(
    ctx: ServiceContext,
    ownerRef: OwnerRef,
    kind: RepositoryKind,
    input: unknown,
  ): Promise<{ owner: Owner; apply: TransactionStep<RepoView> }> {
    const actor = requireUser(ctx);
    const owner = await this.resolveOwner(ctx, ownerRef);
    await authorize(ctx, {
      action: 'repo.create',
      owner: owner.org ? { org: owner.org } : { user: owner.user! },
    });
    const record = (input ?? {}) as Record<string, unknown>;
    if (
      record.shortCode !== undefined &&
      record.id !== undefined &&
      record.shortCode !== record.id
    ) {
      throw AppError.field('shortCode', 'short_code and id must be the same.');
    }
    // One validation, so that every bad field is reported at once.
    const data = this.parseFields(kind, { ...record, id: record.id ?? record.shortCode }, true);
    if (data.hierarchyRootUrl) {
      throw AppError.field(
        'hierarchyRootUrl',
        'A new source has no concepts yet: set its hierarchy root once the concept is made.',
      );
    }
    const id = data.id as string;
    const key = keyOf(owner);
    if (await this.repos.repos.mnemonicTaken(key, id)) throw repoTaken(owner, id);
    const defaultLocale = data.defaultLocale ?? 'en';
    const values: Partial<RepositoryEntity> = {
      ...stripUndefined(data.fields),
      kind,
      mnemonic: id,
      ownerOrgId: key.orgId ?? null,
      ownerUserId: key.userId ?? null,
      name: data.name,
      fullName: data.fields.fullName ?? data.name,
      publicAccess: data.fields.publicAccess ?? 'View',
      defaultLocale,
      supportedLocales: withDefault(data.fields.supportedLocales ?? [defaultLocale], defaultLocale),
      sourceType: kind === 'source' ? (data.fields.sourceType ?? 'dictionary') : null,
      settings: data.settings,
      createdBy: actor.username,
      updatedBy: actor.username,
    };
    const apply = async (r: Repositories): Promise<RepoView> => {
      try {
        const repo = await r.repos.insert(values, actor.username);
        const head = (await r.repos.findVersion(repo.id, HEAD))!;
        const made = { repo, owner, version: head };
        await recordEvent(r, actor, 'Created', repoSubject(made));
        return made;
      } catch (error) {
        if (isUniqueViolation(error)) throw repoTaken(owner, id);
        throw error;
      }
    };
    return { owner, apply };
  }

  /** Partial update of HEAD's metadata; `id`/`short_code` never change. Versions keep their snapshot. */
  /** One custom attribute of a source or collection set in place; answers its stored value. */
  async setExtra(
    ctx: ServiceContext,
    ref: RepoRef,
    name: string,
    input: unknown,
  ): Promise<unknown> {
    const { repo } = await this.get(ctx, atHead(ref));
    await authorize(ctx, { action: 'repo.edit', repo });
    const row = { table: 'repositories', id: repo.id } as const;
    const actor = requireUser(ctx);
    const stored = await setRowExtra(this.repos, row, name, input, actor.username);
    await announceChange(this.repos, { repo }, actor, 'REPOSITORY_UPDATED');
    return stored;
  }

  /** One custom attribute of a source or collection removed; 404 when it has none such. */
  async removeExtra(ctx: ServiceContext, ref: RepoRef, name: string): Promise<void> {
    const { repo } = await this.get(ctx, atHead(ref));
    await authorize(ctx, { action: 'repo.edit', repo });
    const label = `${repo.kind} '${repo.mnemonic}'`;
    const row = { table: 'repositories', id: repo.id, label } as const;
    const actor = requireUser(ctx);
    await removeRowExtra(this.repos, row, name, actor.username);
    await announceChange(this.repos, { repo }, actor, 'REPOSITORY_UPDATED');
  }

  async update(ctx: ServiceContext, ref: RepoRef, input: unknown): Promise<RepoDetail> {
    const prepared = await this.prepareUpdate(ctx, ref, input);
    const saved = await this.repos.transaction(prepared.apply);
    return this.detailOf(ctx, { ...prepared.view, repo: saved });
  }

  /**
   * A partial update checked as the caller (access, fields) before any transaction; `apply`
   * writes it inside the caller's transaction.
   */
  async prepareUpdate(
    ctx: ServiceContext,
    ref: RepoRef,
    input: unknown,
  ): Promise<{ view: RepoView; apply: TransactionStep<RepositoryEntity> }> {
    const view = await this.get(ctx, atHead(ref));
    await authorize(ctx, { action: 'repo.edit', repo: view.repo });
    const record = (input ?? {}) as Record<string, unknown>;
    for (const field of ['id', 'shortCode'] as const) {
      if (record[field] !== undefined && record[field] !== view.repo.mnemonic) {
        throw AppError.field(field, 'The id of a repository cannot be changed.');
      }
    }
    const data = this.parseFields(view.repo.kind, input);
    const hierarchyRoot =
      data.hierarchyRootUrl === undefined
        ? undefined
        : await this.hierarchyRootCode(ctx, view, data.hierarchyRootUrl);
    const updatedBy = requireUser(ctx).username;
    const apply = async (r: Repositories): Promise<RepositoryEntity> => {
      // Applied to the row as committed, under its lock: parallel edits of other fields stay.
      const repo = await r.repos.lock(view.repo.id);
      Object.assign(repo, stripUndefined(data.fields));
      if (data.name !== undefined) repo.name = data.name;
      // spec core §2.4: full_name defaults to name when blank.
      if (!repo.fullName) repo.fullName = repo.name;
      if (data.defaultLocale !== undefined) repo.defaultLocale = data.defaultLocale;
      repo.supportedLocales = withDefault(repo.supportedLocales, repo.defaultLocale);
      repo.settings = { ...repo.settings, ...data.settings };
      if (hierarchyRoot !== undefined) repo.hierarchyRoot = hierarchyRoot;
      repo.updatedBy = updatedBy;
      const saved = await r.repos.save(repo);
      await announceChange(r, view, { username: updatedBy }, 'REPOSITORY_UPDATED');
      return saved;
    };
    return { view, apply };
  }

  /**
   * A source is deleted with everything in it; a collection is deactivated (spec core §3): hidden
   * with its data, its id still taken.
   */
  async delete(ctx: ServiceContext, ref: RepoRef): Promise<void> {
    const view = await this.get(ctx, atHead(ref));
    await authorize(ctx, { action: 'repo.edit', repo: view.repo });
    const actor = requireUser(ctx);
    await this.repos.transaction(async (r) => {
      await recordEvent(r, actor, 'Deleted', repoSubject(view));
      await announceChange(r, view, actor, 'REPOSITORY_DELETED');
      if (view.repo.kind === 'source') {
        await r.repos.delete(view.repo.id);
        return;
      }
      view.repo.isActive = false;
      view.repo.updatedBy = actor.username;
      await r.repos.save(view.repo);
    });
  }

  async listVersions(
    ctx: ServiceContext,
    ref: RepoRef,
    params: ListParams,
  ): Promise<Page<RepoView>> {
    const { repo, owner } = await this.get(ctx, { ...ref, version: undefined });
    const slice = await this.repos.repos.listVersions(
      repo.id,
      windowOf(params),
      params.updatedSince,
    );
    const views = slice.rows.map((version) => ({ repo, owner, version }));
    return pageOf(await this.withCounts(ctx, views, params), slice.total, params);
  }

  /**
   * Freezes HEAD as a new version: one row holding the current change number and a metadata
   * snapshot, whatever the size of the repository (design §4).
   */
  async createVersion(ctx: ServiceContext, ref: RepoRef, input: unknown): Promise<RepoDetail> {
    const head = await this.get(ctx, atHead(ref));
    const prepared = await this.prepareVersion(ctx, head, input);
    const version = await this.repos.transaction((r) => prepared.apply(r, head));
    const made: RepoView = { repo: head.repo, owner: head.owner, version };
    await this.versionMade(ctx, made);
    return this.detailOf(ctx, made);
  }

  /** Tells the listeners a version was made (after its transaction committed). */
  versionMade(ctx: ServiceContext, made: RepoView): Promise<void> {
    return this.events.versionMade(ctx, made);
  }

  /**
   * A version create checked as the caller (access, fields, a free id unless `replacing`)
   * before any transaction; `apply` freezes HEAD inside the caller's transaction, after whatever
   * else it wrote there (a collection version reads and resolves its references in there, those
   * the transaction added first included). `replacing`: a draft version of that id that `apply`
   * deletes and makes again (a FHIR update of a draft); refused when another version is based
   * on it.
   */
  async prepareVersion(
    ctx: ServiceContext,
    head: RepoView | PendingRepo,
    input: unknown,
    options: { replacing?: RepositoryVersionEntity } = {},
  ): Promise<{ apply: (r: Repositories, head: RepoView) => Promise<RepositoryVersionEntity> }> {
    const actor = requireUser(ctx);
    // A pending repository is made by the same transaction, whose caller was allowed to.
    const existing = 'repo' in head ? head.repo : null;
    if (existing) await authorize(ctx, { action: 'repo.edit', repo: existing });
    const data = parseInput(versionCreateSchema, input);
    const replacing = options.replacing;
    if (existing && !replacing && (await this.repos.repos.versionTaken(existing.id, data.id))) {
      throw versionTaken(existing, data.id);
    }
    const kind = existing ? existing.kind : (head as PendingRepo).kind;
    const alsoInside =
      kind === 'collection'
        ? await this.events.collectionVersion(
            ctx,
            { owner: head.owner, repo: existing },
            data.autoexpand ?? true,
          )
        : null;
    const apply = async (r: Repositories, current: RepoView): Promise<RepositoryVersionEntity> => {
      const repo = current.repo;
      try {
        const locked = await r.repos.lockHead(repo.id);
        if (replacing) {
          const dependents = await r.repos.dependentVersions(repo.id, replacing.mnemonic);
          if (dependents.length > 0) {
            throw new AppError(
              'CONFLICT',
              `Version '${replacing.mnemonic}' cannot change: ${dependents.join(', ')} ${dependents.length > 1 ? 'are' : 'is'} based on it.`,
            );
          }
          await r.repos.deleteVersion(replacing.id);
        }
        const newest = (await r.repos.newestVersion(repo.id))?.mnemonic ?? null;
        // HEAD is the most recent version only before the first one is made (spec core §4.6:
        // `previous_version` names the most recent version); that first one has none before it.
        const named = data.previousVersion?.toUpperCase() === HEAD ? HEAD : data.previousVersion;
        if (named === HEAD && newest !== null) {
          throw AppError.field(
            'previousVersion',
            `HEAD is not the most recent version; '${newest}' is.`,
          );
        }
        const previous =
          (named === HEAD ? null : named) ??
          (replacing ? replacing.previousVersion : null) ??
          newest;
        if (named && named !== HEAD && !(await r.repos.findVersion(repo.id, named))) {
          throw AppError.field('previousVersion', `There is no version '${named}'.`);
        }
        const made = await r.repos.insertVersion({
          repositoryId: repo.id,
          mnemonic: data.id,
          seq: locked.seq,
          activeConcepts: locked.activeConcepts,
          activeMappings: locked.activeMappings,
          description: data.description ?? replacing?.description ?? null,
          released: data.released ?? false,
          retired: data.retired ?? false,
          previousVersion: previous,
          externalId: data.externalId ?? replacing?.externalId ?? null,
          extras: data.extras ?? replacing?.extras ?? null,
          metadata: snapshotOf(current.repo),
          createdBy: actor.username,
          updatedBy: actor.username,
        });
        const view = { repo: current.repo, owner: current.owner, version: made };
        await alsoInside?.(r, view);
        await recordEvent(r, actor, 'Created', repoSubject(view));
        await announceChange(r, view, actor, 'VERSION_CREATED', versionUrlOf(view));
        if (made.released) await recordEvent(r, actor, 'Released', repoSubject(view));
        return made;
      } catch (error) {
        if (isUniqueViolation(error)) throw versionTaken(repo, data.id);
        throw error;
      }
    };
    return { apply };
  }

  /** Edits a version's description, release and retirement; what it contains never changes. */
  async updateVersion(ctx: ServiceContext, ref: RepoRef, input: unknown): Promise<RepoDetail> {
    if (ref.version === undefined) throw AppError.field('url', 'Name the version to edit.');
    const view = await this.get(ctx, ref);
    await authorize(ctx, { action: 'repo.edit', repo: view.repo });
    if (view.version.mnemonic === HEAD) {
      const record = (input ?? {}) as Record<string, unknown>;
      if (record.released !== undefined || record.retired !== undefined) {
        throw AppError.field(
          record.released !== undefined ? 'released' : 'retired',
          'HEAD is never released or retired; create a version.',
        );
      }
      return this.update(ctx, ref, input);
    }
    const record = (input ?? {}) as Record<string, unknown>;
    if (record.id !== undefined && record.id !== view.version.mnemonic) {
      throw AppError.field('id', 'The id of a version cannot be changed.');
    }
    const changes = stripUndefined(parseInput(versionUpdateSchema, input));
    const updatedBy = requireUser(ctx).username;
    const actor = requireUser(ctx);
    const version = await this.repos.transaction(async (r) => {
      // Applied to the row as committed, under its lock: parallel edits of other fields stay.
      const current = await r.repos.lockVersion(view.version.id);
      const releasing = changes.released === true && !current.released;
      const saved = await r.repos.saveVersion(Object.assign(current, changes, { updatedBy }));
      if (releasing)
        await recordEvent(r, actor, 'Released', repoSubject({ ...view, version: saved }));
      await announceChange(r, view, actor, 'VERSION_UPDATED', versionUrlOf(view));
      return saved;
    });
    return this.detailOf(ctx, { ...view, version });
  }

  /** Deletes a version; never HEAD, never one another version is based on. */
  async deleteVersion(ctx: ServiceContext, ref: RepoRef): Promise<void> {
    const view = await this.get(ctx, ref);
    if (ref.version === undefined) throw AppError.field('url', 'Name the version to delete.');
    await authorize(ctx, { action: 'repo.edit', repo: view.repo });
    if (view.version.mnemonic === HEAD)
      throw new AppError('NOT_ALLOWED', 'HEAD cannot be deleted.');
    const dependents = await this.repos.repos.dependentVersions(
      view.repo.id,
      view.version.mnemonic,
    );
    if (dependents.length > 0) {
      throw new AppError(
        'CONFLICT',
        `Version '${view.version.mnemonic}' cannot be deleted: ${dependents.join(', ')} ${dependents.length > 1 ? 'are' : 'is'} based on it.`,
      );
    }
    const actor = requireUser(ctx);
    await this.repos.transaction(async (r) => {
      await r.repos.deleteVersion(view.version.id);
      await announceChange(r, view, actor, 'VERSION_DELETED', versionUrlOf(view));
    });
  }

  private async ownerOf(ctx: ServiceContext, repo: RepositoryEntity): Promise<Owner> {
    if (repo.ownerOrgId !== null) {
      const org = await ctx.loaders.orgById.load(repo.ownerOrgId);
      return { type: 'Organization', id: org?.mnemonic ?? '', org: org ?? undefined };
    }
    const user = await ctx.loaders.userById.load(repo.ownerUserId as string);
    return { type: 'User', id: user?.username ?? '', user: user ?? undefined };
  }

  /**
   * The code of the concept a hierarchy root URL names (null clears the root). It must name a
   * concept of this very source (OCL answers 400 otherwise), at HEAD: the root is the concept,
   * and each version shows its own version of it.
   */
  private async hierarchyRootCode(
    ctx: ServiceContext,
    view: RepoView,
    url: string | null,
  ): Promise<string | null> {
    if (url === null) return null;
    const notOurs = AppError.field(
      'hierarchyRootUrl',
      `'${url}' is not a concept of this source: the hierarchy root must be one of its concepts.`,
    );
    let ref: ConceptRef;
    try {
      ref = parseConceptUrl(url);
    } catch {
      throw notOurs;
    }
    if (ref.conceptVersion !== undefined || (ref.source.version ?? HEAD) !== HEAD) {
      throw AppError.field(
        'hierarchyRootUrl',
        `'${url}' names a version; name the concept (…/concepts/<id>/): each version shows its own.`,
      );
    }
    const named = await this.get(ctx, { ...ref.source, version: undefined }).catch(() => {
      throw notOurs;
    });
    if (named.repo.id !== view.repo.id) throw notOurs;
    const concept = await this.repos.concepts.findConcept(view.repo.id, ref.id);
    if (!concept) throw notOurs;
    return concept.mnemonic;
  }

  /** The fields of a create (`id` and `name` required) or of a partial update. */
  private parseFields(kind: RepositoryKind, input: unknown, creating = false) {
    const schema = FIELDS[kind][creating ? 'create' : 'edit'];
    const parsed = parseInput(schema, input);
    const settings: Record<string, unknown> = {};
    const fields: Partial<RepositoryEntity> = {};
    for (const [key, value] of Object.entries(parsed)) {
      if ((AUTO_ID_KEYS as string[]).includes(key)) {
        if (value !== undefined) settings[key] = value ?? null;
      } else if (!['name', 'defaultLocale', 'id', 'hierarchyRootUrl'].includes(key)) {
        (fields as Record<string, unknown>)[key] = value;
      }
    }
    return {
      id: parsed.id as string | undefined,
      name: parsed.name as string | undefined,
      defaultLocale: parsed.defaultLocale as string | undefined,
      hierarchyRootUrl: parsed.hierarchyRootUrl as string | null | undefined,
      fields,
      settings,
    };
  }
}

/**
 * A reference for acting on the repository itself: no version, or HEAD. Naming another version
 * there (e.g. deleting through `…/v1/`) is refused rather than applied to the whole repository.
 */
function atHead(ref: RepoRef): RepoRef {
  if (ref.version !== undefined && ref.version !== HEAD) {
    throw AppError.field(
      'url',
      `'${ref.version}' is a version; this acts on the repository (its HEAD).`,
    );
  }
  return { ...ref, version: undefined };
}

/** The reference that reads this view's repository again (at HEAD). */
export function refOf(view: RepoView): RepoRef {
  const { owner, repo } = view;
  return {
    owner:
      owner.type === 'Organization'
        ? { type: 'org', id: owner.id }
        : { type: 'user', username: owner.id },
    kind: repo.kind,
    id: repo.mnemonic,
  };
}

function keyOf(owner: Owner): OwnerKey {
  return owner.org ? { orgId: owner.org.id } : { userId: owner.user!.id };
}

function ownerTypeOf(values: string[] | undefined): 'Organization' | 'User' | undefined {
  if (!values || values.length !== 1) return undefined;
  const value = values[0].toLowerCase();
  if (value === 'organization' || value === 'org') return 'Organization';
  if (value === 'user') return 'User';
  throw AppError.field('ownerType', 'Must be Organization or User.');
}

/** The default locale is always among the supported ones, first when it was missing. */
function withDefault(locales: string[], defaultLocale: string): string[] {
  return locales.includes(defaultLocale) ? locales : [defaultLocale, ...locales];
}

function snapshotOf(repo: RepositoryEntity): RepositorySnapshot {
  return {
    name: repo.name,
    fullName: repo.fullName,
    description: repo.description,
    website: repo.website,
    externalId: repo.externalId,
    publicAccess: repo.publicAccess,
    defaultLocale: repo.defaultLocale,
    supportedLocales: repo.supportedLocales,
    sourceType: repo.sourceType,
    collectionType: repo.collectionType,
    preferredSource: repo.preferredSource,
    customValidationSchema: repo.customValidationSchema,
    canonicalUrl: repo.canonicalUrl,
    hierarchyRoot: repo.hierarchyRoot,
    extras: repo.extras,
  };
}

/** The code of a source's hierarchy root as the view sees it (a version froze its own). */
export function hierarchyRootOf(view: RepoView): string | null {
  return (view.version.metadata ?? view.repo).hierarchyRoot ?? null;
}

/** The concept a source's hierarchy view starts at, by its version-less URL; null for none. */
export function hierarchyRootUrl(view: RepoView): string | null {
  const code = hierarchyRootOf(view);
  const { owner, repo } = view;
  return code === null
    ? null
    : `${repoUrl(owner, repo.kind, repo.mnemonic)}concepts/${encodeURIComponent(code)}/`;
}

function repoTaken(owner: Owner, id: string): AppError {
  return AppError.field('id', `'${owner.id}' already has a source or collection with id '${id}'.`);
}

function versionTaken(repo: RepositoryEntity, id: string): AppError {
  return new AppError('CONFLICT', `'${repo.mnemonic}' already has a version '${id}'.`);
}

/** A resolved repository view, told from a path naming one. */
export function isRepoView(at: RepoRef | RepoView): at is RepoView {
  return 'repo' in at;
}

/** A concept or mapping version URL: `…/concepts/:code/:versionId/` (spec core §4.5). */
const VERSION_URL = /\/(concepts|mappings)\/([^/]+)\/(\d{1,18})\/?$/;

/** The concept and mapping versions that `contains` values name by their URLs. */
function containedVersionsOf(values: string[]): ContainedVersion[] {
  return values.flatMap((value) => {
    const match = VERSION_URL.exec(value.trim());
    if (!match) return [];
    let code: string;
    try {
      code = decodeURIComponent(match[2]);
    } catch {
      return [];
    }
    return [{ resource: match[1] === 'concepts' ? 'c' : 'm', code, versionId: match[3] } as const];
  });
}

/** A repository version's URL, as REST names it. */
function versionUrlOf({ owner, repo, version }: RepoView): string {
  return repoUrl(owner, repo.kind, repo.mnemonic, version.mnemonic);
}
