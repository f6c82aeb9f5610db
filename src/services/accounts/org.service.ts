import { z } from 'zod';
import type { MemberRole, OrganizationEntity, UserEntity } from '../../db/entities';
import { AppError } from '../../errors';
import {
  isUniqueViolation,
  type OrgCounts,
  type OrgSortKey,
  type Repositories,
} from '../../repositories';
import { authorize, requireUser, viewerOf } from '../shared/access';
import type { ServiceContext } from '../shared/context';
import { pageOf, resolveSort, windowOf, type ListParams, type Page } from '../shared/list';
import { stripUndefined, type UserItem, type UserService } from './user.service';
import {
  extras,
  mnemonic,
  optionalText,
  parseInput,
  publicAccess,
  requiredText,
  website,
} from '../shared/validation';
import { removeRowExtra, setRowExtra } from '../shared/extras';
import { orgSubject, recordEvent } from '../community/event.service';

const createSchema = z.object({
  id: mnemonic,
  name: requiredText,
  company: optionalText,
  website,
  location: optionalText,
  extras,
  publicAccess: publicAccess.optional(),
});

const updateSchema = z.object({
  name: requiredText.optional(),
  company: optionalText.optional(),
  website: website.optional(),
  location: optionalText.optional(),
  extras: extras.optional(),
  publicAccess: publicAccess.optional(),
});

const roleSchema = z.object({
  role: z.enum(['admin', 'member'], { error: 'Must be admin or member.' }).optional(),
});

/** The schemas the service validates its input with, for the API reference. */
export const orgInput = { create: createSchema, edit: updateSchema, member: roleSchema };

export type CreateOrgInput = z.input<typeof createSchema>;
export type UpdateOrgInput = z.input<typeof updateSchema>;

/** spec core §4.2 org list sorts, under every spelling clients use. */
const SORTS: Record<string, OrgSortKey> = {
  bestmatch: 'bestMatch',
  lastupdate: 'lastUpdate',
  lastupdated: 'lastUpdate',
  name: 'name',
  id: 'id',
  datecreated: 'dateCreated',
};

/** An org as its detail shows it: what one service call answers. */
export interface OrgDetail {
  org: OrganizationEntity;
  counts: OrgCounts;
}

/** An org as a list shows it: with its counts when the list is verbose. */
export interface OrgItem {
  org: OrganizationEntity;
  /** Present on the items of a list read with `verbose`. */
  counts?: OrgCounts;
}

export class OrgService {
  constructor(
    private readonly repos: Repositories,
    private readonly users: UserService,
  ) {}

  /** An org's detail: the org and its counts, in one statement; private ones as `get`. */
  async detail(ctx: ServiceContext, id: string): Promise<OrgDetail> {
    const found = await this.repos.orgs.findWithCounts(id);
    if (!found) throw AppError.notFound(`Organization '${id}'`);
    await authorize(ctx, { action: 'org.view', org: found.org });
    return found;
  }

  /** An org; a private one answers 401/403 to those outside it (spec core §7). */
  async get(ctx: ServiceContext, id: string): Promise<OrganizationEntity> {
    const org = await this.repos.orgs.findByMnemonic(id);
    if (!org) throw AppError.notFound(`Organization '${id}'`);
    await authorize(ctx, { action: 'org.view', org });
    return org;
  }

  /** Orgs the caller may see; with `member`, only that user's orgs. */
  async list(
    ctx: ServiceContext,
    params: ListParams,
    member?: UserEntity,
  ): Promise<Page<OrganizationEntity>> {
    const sort = resolveSort(params, SORTS, { key: 'bestMatch', desc: false });
    const filter = {
      q: params.q,
      company: params.filters.company,
      location: params.filters.location,
      updatedSince: params.updatedSince,
      memberUserId: member?.id,
      extras: params.extras,
    };
    const viewer = viewerOf(ctx.actor);
    const slice = await this.repos.orgs.search(filter, viewer, sort, windowOf(params));
    const facets = params.includeFacets ? await this.repos.orgs.facets(filter, viewer) : undefined;
    return pageOf(slice.rows, slice.total, params, facets);
  }

  /**
   * Orgs as a list shows them, with their counts (one batched statement) when `verbose`; with
   * `memberOf`, only the orgs of that user (`self`: the caller, who must be signed in).
   */
  async listItems(
    ctx: ServiceContext,
    params: ListParams,
    memberOf?: { type: 'self' } | { type: 'user'; username: string },
  ): Promise<Page<OrgItem>> {
    const member =
      memberOf === undefined
        ? undefined
        : memberOf.type === 'self'
          ? await this.users.me(ctx)
          : await this.users.get(ctx, memberOf.username);
    const page = await this.list(ctx, params, member);
    if (!params.verbose) return { ...page, items: page.items.map((org) => ({ org })) };
    const counts = await Promise.all(page.items.map((org) => this.counts(ctx, org)));
    return { ...page, items: page.items.map((org, i) => ({ org, counts: counts[i] })) };
  }

  /** Members of an org as a user list shows them (with their counts when `verbose`). */
  async memberItems(ctx: ServiceContext, id: string, params: ListParams): Promise<Page<UserItem>> {
    return this.users.withCounts(ctx, await this.members(ctx, id, params), params);
  }

  counts(ctx: ServiceContext, org: OrganizationEntity): Promise<OrgCounts> {
    return ctx.loaders.orgCounts.load(org.id);
  }

  /** The detail of an org just written. */
  private async detailOf(ctx: ServiceContext, org: OrganizationEntity): Promise<OrgDetail> {
    return { org, counts: await this.counts(ctx, org) };
  }

  /** The caller's role in the org, or null. */
  roleOf(ctx: ServiceContext, org: OrganizationEntity): Promise<MemberRole | null> {
    return ctx.loaders.actorRole.load(org.id);
  }

  /** `POST /orgs/`: any authenticated user; the creator becomes its first administrator. */
  async create(ctx: ServiceContext, input: unknown): Promise<OrgDetail> {
    await authorize(ctx, { action: 'org.create' });
    const actor = requireUser(ctx);
    const { id, ...data } = parseInput(createSchema, input);
    if (await this.repos.orgs.mnemonicTaken(id)) throw orgTaken(id);
    try {
      const made = await this.repos.transaction(async (repos) => {
        const org = await repos.orgs.insert({
          ...data,
          mnemonic: id,
          publicAccess: data.publicAccess ?? 'View',
          createdBy: actor.username,
          updatedBy: actor.username,
        });
        await repos.orgs.upsertMembership(org.id, actor.id, 'admin');
        await recordEvent(repos, actor, 'Created', orgSubject(org));
        return org;
      });
      return await this.detailOf(ctx, made);
    } catch (error) {
      if (isUniqueViolation(error)) throw orgTaken(id);
      throw error;
    }
  }

  /** Partial update by a member (spec core §4.2); `id` never changes. */
  async update(ctx: ServiceContext, id: string, input: unknown): Promise<OrgDetail> {
    const org = await this.get(ctx, id);
    await authorize(ctx, { action: 'org.edit', org });
    const record = (input ?? {}) as Record<string, unknown>;
    if (record.id !== undefined && record.id !== org.mnemonic) {
      throw AppError.field('id', 'The organization id cannot be changed.');
    }
    const changes = stripUndefined(parseInput(updateSchema, input));
    const updatedBy = requireUser(ctx).username;
    const saved = await this.repos.transaction(async (r) => {
      // Applied to the row as committed, under its lock: parallel edits of other fields stay.
      const current = await r.orgs.lock(org.id);
      return r.orgs.save(Object.assign(current, changes, { updatedBy }));
    });
    return this.detailOf(ctx, saved);
  }

  /** One custom attribute of the org set (spec operations §4.9); answers its stored value. */
  async setExtra(ctx: ServiceContext, id: string, name: string, input: unknown): Promise<unknown> {
    const org = await this.get(ctx, id);
    await authorize(ctx, { action: 'org.edit', org });
    const row = { table: 'organizations', id: org.id } as const;
    return setRowExtra(this.repos, row, name, input, requireUser(ctx).username);
  }

  /** One custom attribute of the org removed; 404 when it has none such. */
  async removeExtra(ctx: ServiceContext, id: string, name: string): Promise<void> {
    const org = await this.get(ctx, id);
    await authorize(ctx, { action: 'org.edit', org });
    const row = { table: 'organizations', id: org.id, label: `organization '${id}'` } as const;
    await removeRowExtra(this.repos, row, name, requireUser(ctx).username);
  }

  /** spec core §4.2: superuser only; removes the org with its memberships and repositories. */
  async delete(ctx: ServiceContext, id: string): Promise<void> {
    const org = await this.get(ctx, id);
    await authorize(ctx, { action: 'org.delete', org });
    await this.repos.orgs.delete(org.id);
  }

  /** Members of an org, given by id or as the record the caller already holds. */
  async members(
    ctx: ServiceContext,
    org: string | OrganizationEntity,
    params: ListParams,
  ): Promise<Page<UserEntity>> {
    const record = typeof org === 'string' ? await this.get(ctx, org) : org;
    await authorize(ctx, { action: 'org.viewMembers', org: record });
    return this.users.listMembers(record.id, params);
  }

  /** Whether `username` belongs to the org; only members may ask. */
  async isMember(
    ctx: ServiceContext,
    org: string | OrganizationEntity,
    username: string,
  ): Promise<boolean> {
    const record = typeof org === 'string' ? await this.get(ctx, org) : org;
    await authorize(ctx, { action: 'org.checkMember', org: record });
    const user = await this.activeUser(username);
    return (await this.repos.orgs.findMembership(record.id, user.id)) !== null;
  }

  /**
   * Adds a member or changes a member's role (spec core §4.2: an administrative member). Without
   * `role` a new member is a plain member and an existing one keeps theirs.
   */
  async addMember(
    ctx: ServiceContext,
    id: string,
    username: string,
    input?: unknown,
  ): Promise<void> {
    const org = await this.get(ctx, id);
    await authorize(ctx, { action: 'org.manageMembers', org });
    const { role: sent } = parseInput(roleSchema, input);
    const user = await this.activeUser(username);
    await this.repos.transaction(async (repos) => {
      const current = await repos.orgs.findMembership(org.id, user.id);
      const role = sent ?? current?.role ?? 'member';
      if (current?.role === 'admin' && role !== 'admin') await this.assertNotLastAdmin(repos, org);
      if (current?.role === role) return;
      await repos.orgs.upsertMembership(org.id, user.id, role);
      if (!current) await recordEvent(repos, user, 'Joined', orgSubject(org));
    });
  }

  /**
   * Removes a membership (the user stays; spec core §4.2: an administrative member); 404 when the
   * user is not a member.
   */
  async removeMember(ctx: ServiceContext, id: string, username: string): Promise<void> {
    const org = await this.get(ctx, id);
    await authorize(ctx, { action: 'org.manageMembers', org });
    // A deactivated user's membership can still be removed.
    const user = await this.repos.users.findByUsername(username);
    if (!user) throw AppError.notFound(`User '${username}'`);
    await this.repos.transaction(async (repos) => {
      const membership = await repos.orgs.findMembership(org.id, user.id);
      if (!membership) throw AppError.notFound(`Membership of '${username}' in '${id}'`);
      if (membership.role === 'admin') await this.assertNotLastAdmin(repos, org);
      await repos.orgs.deleteMembership(org.id, user.id);
    });
  }

  private async activeUser(username: string): Promise<UserEntity> {
    const user = await this.repos.users.findByUsername(username);
    if (!user || !user.isActive) throw AppError.notFound(`User '${username}'`);
    return user;
  }

  /** An org keeps at least one administrator, or nobody but a superuser could manage it. */
  private async assertNotLastAdmin(repos: Repositories, org: OrganizationEntity): Promise<void> {
    await repos.orgs.lock(org.id);
    if ((await repos.orgs.countAdmins(org.id)) <= 1) {
      throw new AppError('CONFLICT', `'${org.mnemonic}' must keep at least one administrator.`);
    }
  }
}

function orgTaken(id: string): AppError {
  return AppError.field('id', `An organization with id '${id}' already exists.`);
}
