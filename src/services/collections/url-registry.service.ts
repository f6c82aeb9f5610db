import { z } from 'zod';
import type { UrlRegistryEntryEntity } from '../../db/entities';
import { AppError } from '../../errors';
import {
  isUniqueViolation,
  type RegistryKey,
  type Repositories,
  type UrlRegistrySortKey,
} from '../../repositories';
import { authorize, requireUser } from '../shared/access';
import type { ServiceContext } from '../shared/context';
import { pageOf, resolveSort, windowOf, type ListParams, type Page } from '../shared/list';
import type { ReferenceResolver } from './reference-resolver';
import type { Owner, RepositoryService, RepoView } from '../content/repository.service';
import { ownerUrl, parseOwnerUrl, type OwnerRef } from '../shared/urls';
import { stripUndefined } from '../accounts/user.service';
import { extras, parseInput } from '../shared/validation';

/** An entry with the owner of the registry holding it (null: the global registry). */
export interface UrlRegistryEntryView {
  entry: UrlRegistryEntryEntity;
  owner: Owner | null;
}

const ABSOLUTE_URI = /^[a-z][a-z0-9+.-]*:\S+$/i;

const url = z
  .string({
    error: (issue) => (issue.input === undefined ? 'This field is required.' : 'Must be a string.'),
  })
  .trim()
  .min(1, 'This field is required.')
  .max(1000, 'At most 1000 characters.')
  .refine(
    (v) => ABSOLUTE_URI.test(v),
    'Must be an absolute URI, e.g. http://hl7.org/fhir/CodeSystem/x.',
  );

/** `/orgs/X/` or `/users/Y/` (stored in that form); blank is none. */
const namespace = z
  .string({ error: 'Must be a string.' })
  .trim()
  .max(300, 'At most 300 characters.')
  .nullish()
  .transform((v, context) => {
    if (!v) return null;
    const normalized = normalizeNamespace(v);
    if (normalized === null) {
      context.addIssue({
        code: 'custom',
        message: `'${v}' is not an owner URL like /orgs/:org/ or /users/:user/.`,
      });
      return z.NEVER;
    }
    return normalized;
  });

const name = z
  .string({ error: 'Must be a string.' })
  .trim()
  .max(255, 'At most 255 characters.')
  .nullish()
  .transform((v) => (v ? v : null));

const createSchema = z.object({
  url,
  namespace: namespace.optional(),
  name: name.optional(),
  extras: extras.optional(),
});
const updateSchema = z.object({
  url: url.optional(),
  namespace: namespace.optional(),
  name: name.optional(),
  extras: extras.optional(),
});

/** The schemas the service validates its input with, for the API reference. */
export const urlRegistryInput = { create: createSchema, edit: updateSchema };

const SORTS: Record<string, UrlRegistrySortKey> = {
  bestmatch: 'bestMatch',
  lastupdate: 'lastUpdate',
  lastupdated: 'lastUpdate',
  datecreated: 'dateCreated',
  created: 'dateCreated',
  url: 'url',
  name: 'name',
  id: 'id',
};

/**
 * The canonical URL registries (spec operations §2.3, §4.6): the global one (`owner` null) and
 * one per org or user. Reading follows the owner's visibility (the global one is public);
 * writing is for superusers (global), the org's members, or the user.
 */
export class UrlRegistryService {
  constructor(
    private readonly repos: Repositories,
    private readonly repositories: RepositoryService,
    private readonly resolver: ReferenceResolver,
  ) {}

  async list(
    ctx: ServiceContext,
    ownerRef: OwnerRef | null,
    params: ListParams,
  ): Promise<Page<UrlRegistryEntryView>> {
    const owner = await this.registryOwner(ctx, ownerRef);
    const namespaces = params.filters.namespace?.map((n) => {
      const normalized = normalizeNamespace(n);
      if (normalized === null) {
        throw AppError.field('namespace', `'${n}' is not an owner URL like /orgs/:org/.`);
      }
      return normalized;
    });
    const sort = resolveSort(params, SORTS, { key: 'lastUpdate', desc: true });
    const slice = await this.repos.urlRegistry.search(
      keyOf(owner),
      { q: params.q, url: params.filters.url, namespace: namespaces },
      sort,
      windowOf(params),
    );
    return pageOf(
      slice.rows.map((entry) => ({ entry, owner })),
      slice.total,
      params,
    );
  }

  async get(
    ctx: ServiceContext,
    ownerRef: OwnerRef | null,
    id: string,
  ): Promise<UrlRegistryEntryView> {
    const owner = await this.registryOwner(ctx, ownerRef);
    return { entry: await this.find(owner, id), owner };
  }

  async create(
    ctx: ServiceContext,
    ownerRef: OwnerRef | null,
    input: unknown,
  ): Promise<UrlRegistryEntryView> {
    const actor = requireUser(ctx);
    const owner = await this.registryOwner(ctx, ownerRef);
    await this.authorizeEdit(ctx, owner);
    const data = parseInput(createSchema, input);
    const key = keyOf(owner);
    if (await this.repos.urlRegistry.urlTaken(key, data.url)) throw urlTaken(data.url);
    try {
      const entry = await this.repos.urlRegistry.insert({
        ownerOrgId: key?.orgId ?? null,
        ownerUserId: key?.userId ?? null,
        url: data.url,
        namespace: data.namespace ?? null,
        name: data.name ?? null,
        extras: data.extras ?? null,
        isActive: true,
        createdBy: actor.username,
        updatedBy: actor.username,
      });
      return { entry, owner };
    } catch (error) {
      if (isUniqueViolation(error)) throw urlTaken(data.url);
      throw error;
    }
  }

  /** Partial: only what is sent changes (PUT and PATCH alike). */
  async update(
    ctx: ServiceContext,
    ownerRef: OwnerRef | null,
    id: string,
    input: unknown,
  ): Promise<UrlRegistryEntryView> {
    const actor = requireUser(ctx);
    const owner = await this.registryOwner(ctx, ownerRef);
    const entry = await this.find(owner, id);
    await this.authorizeEdit(ctx, owner);
    const data = parseInput(updateSchema, input);
    if (
      data.url !== undefined &&
      (await this.repos.urlRegistry.urlTaken(keyOf(owner), data.url, entry.id))
    ) {
      throw urlTaken(data.url);
    }
    Object.assign(entry, stripUndefined(data));
    entry.updatedBy = actor.username;
    try {
      return { entry: await this.repos.urlRegistry.save(entry), owner };
    } catch (error) {
      if (isUniqueViolation(error)) throw urlTaken(entry.url);
      throw error;
    }
  }

  /** The entry stops counting (and its URL is free again); its row stays, inactive. */
  async delete(ctx: ServiceContext, ownerRef: OwnerRef | null, id: string): Promise<void> {
    const actor = requireUser(ctx);
    const owner = await this.registryOwner(ctx, ownerRef);
    const entry = await this.find(owner, id);
    await this.authorizeEdit(ctx, owner);
    entry.isActive = false;
    entry.updatedBy = actor.username;
    await this.repos.urlRegistry.save(entry);
  }

  /**
   * `$lookup` (spec operations §4.6): the repository a URL is registered to, through this
   * registry (an owner's falls back on the global one); null when none the caller may see.
   */
  async lookup(
    ctx: ServiceContext,
    ownerRef: OwnerRef | null,
    url: unknown,
  ): Promise<RepoView | null> {
    const owner = await this.registryOwner(ctx, ownerRef);
    if (typeof url !== 'string' || !url.trim()) {
      throw AppError.field('url', 'Give the canonical URL to look up, e.g. ?url=http://…');
    }
    return (await this.resolver.lookup(ctx, owner, url.trim())).repo;
  }

  /** The owner of a registry, read as its profile is (private org: 401/403); null is global. */
  private async registryOwner(ctx: ServiceContext, ref: OwnerRef | null): Promise<Owner | null> {
    return ref ? this.repositories.resolveOwner(ctx, ref) : null;
  }

  private async authorizeEdit(ctx: ServiceContext, owner: Owner | null): Promise<void> {
    await authorize(ctx, {
      action: 'registry.edit',
      owner: owner === null ? null : owner.org ? { org: owner.org } : { user: owner.user! },
    });
  }

  private async find(owner: Owner | null, id: string): Promise<UrlRegistryEntryEntity> {
    const entry = /^\d{1,18}$/.test(id)
      ? await this.repos.urlRegistry.findById(keyOf(owner), id)
      : null;
    if (!entry) throw AppError.notFound(`URL registry entry '${id}'`);
    return entry;
  }
}

/** The relative URL of an entry: `/url-registry/1/` or `/orgs/X/url-registry/1/`. */
export function registryEntryUrl(view: UrlRegistryEntryView): string {
  return `${view.owner ? ownerUrl(view.owner) : '/'}url-registry/${view.entry.id}/`;
}

function keyOf(owner: Owner | null): RegistryKey {
  if (!owner) return null;
  return owner.org ? { orgId: owner.org.id } : { userId: owner.user!.id };
}

/** `/orgs/X/` or `/users/Y/` as stored; null for anything else (`/user/` names no one in particular). */
function normalizeNamespace(value: string): string | null {
  try {
    const ref = parseOwnerUrl(value);
    if (ref.type === 'self') return null;
    return ref.type === 'org'
      ? ownerUrl({ type: 'Organization', id: ref.id })
      : ownerUrl({ type: 'User', id: ref.username });
  } catch {
    return null;
  }
}

function urlTaken(url: string): AppError {
  return AppError.field('url', `This registry already has an active entry for '${url}'.`);
}
