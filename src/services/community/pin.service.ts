import { z } from 'zod';
import type { OrganizationEntity, UserEntity } from '../../db/entities';
import { AppError } from '../../errors';
import type { PinOwner, PinResourceType, PinRow, Repositories } from '../../repositories';
import { authorize, can, requireUser } from '../shared/access';
import type { ServiceContext } from '../shared/context';
import type { OrgDetail, OrgService } from '../accounts/org.service';
import type { RepoDetail, RepositoryService } from '../content/repository.service';
import type { OwnerRef } from '../shared/urls';
import { ownerUrl } from '../shared/urls';
import type { UserService } from '../accounts/user.service';
import { parseInput } from '../shared/validation';

/** As OCL: an org or a user keeps at most this many pins. */
export const MAX_PINS = 4;

/** A row id (of a pin, or of what a pin names); anything else names none. */
const PIN_ID = /^[1-9][0-9]{0,17}$/;

const RESOURCE_TYPES: Record<string, PinResourceType> = {
  source: 'Source',
  collection: 'Collection',
  organization: 'Organization',
  org: 'Organization',
};

const addSchema = z.object({
  resourceType: z
    .string({ error: 'This field is required.' })
    .transform((v) => RESOURCE_TYPES[v.toLowerCase()])
    .refine((v) => v !== undefined, 'Must be Source, Collection or Organization.'),
  resourceId: z.union(
    [z.number().int().positive().max(Number.MAX_SAFE_INTEGER), z.string().regex(PIN_ID)],
    {
      error: 'Must be the id (uuid) of the resource, a positive whole number.',
    },
  ),
});

const moveSchema = z.object({
  order: z
    .number({ error: 'This field is required: the new position, from 0.' })
    .int('A whole number from 0.')
    .min(0, 'A whole number from 0.'),
});

/** The schemas the service validates its input with, for the API reference. */
export const pinInput = { add: addSchema, move: moveSchema };

/** What a pin shows: the resource's detail (null when it is gone or hidden from the caller). */
export type PinnedResource =
  { kind: 'repo'; detail: RepoDetail } | { kind: 'org'; detail: OrgDetail };

export interface PinView {
  row: PinRow;
  /** The pins' owner's URL (`/orgs/X/`, `/users/x/`). */
  ownerUrl: string;
  resource: PinnedResource | null;
}

interface ResolvedOwner {
  key: PinOwner;
  url: string;
  org?: OrganizationEntity;
  user?: UserEntity;
}

/**
 * Pins (OCL `/orgs/:org/pins/`, `/users/:user/pins/`): repositories and orgs an org or a user
 * shows first, in an order they choose. Every change of one owner's pins runs under that owner's
 * row lock, so parallel adds and moves keep one dense order and never duplicate a pin.
 */
export class PinService {
  constructor(
    private readonly repos: Repositories,
    private readonly users: UserService,
    private readonly orgs: OrgService,
    private readonly repositories: RepositoryService,
  ) {}

  /** An owner's pins in their order; pins of what the caller may not see are left out. */
  async list(ctx: ServiceContext, ownerRef: OwnerRef): Promise<PinView[]> {
    const owner = await this.owner(ctx, ownerRef);
    return this.viewsOf(ctx, owner.url, await this.repos.pins.list(owner.key));
  }

  /** A user's pins (the `includePins` of a user detail). */
  async ofUser(ctx: ServiceContext, user: UserEntity): Promise<PinView[]> {
    return this.viewsOf(
      ctx,
      ownerUrl({ type: 'User', id: user.username }),
      await this.repos.pins.list({ userId: user.id }),
    );
  }

  /** Pins a source, collection or org (by its uuid) after the owner's other pins. */
  async add(ctx: ServiceContext, ownerRef: OwnerRef, input: unknown): Promise<PinView> {
    const owner = await this.owner(ctx, ownerRef);
    await this.authorizeChange(ctx, owner);
    const { resourceType, resourceId } = parseInput(addSchema, input);
    const id = String(resourceId);
    const resource = await this.resource(ctx, resourceType, id);
    if (!resource) {
      throw AppError.field(
        'resource',
        `Resource type ${resourceType} with id ${id} does not exist.`,
      );
    }
    const creator = requireUser(ctx).username;
    const row = await this.repos.transaction(async (r) => {
      await r.pins.lockOwner(owner.key);
      if ((await r.pins.list(owner.key)).length >= MAX_PINS) {
        throw AppError.invalid(`Can only keep max ${MAX_PINS} items pinned.`);
      }
      const made = await r.pins.append(owner.key, resourceType, id, creator);
      if (!made) throw AppError.field('__all__', 'This pin already exists.');
      return made;
    });
    return { row, ownerUrl: owner.url, resource };
  }

  /** Moves a pin to position `order` (from 0); the others keep their relative order. */
  async move(
    ctx: ServiceContext,
    ownerRef: OwnerRef,
    pinId: string,
    input: unknown,
  ): Promise<PinView> {
    const owner = await this.owner(ctx, ownerRef);
    await this.authorizeChange(ctx, owner);
    const { order } = parseInput(moveSchema, input);
    const row = await this.repos.transaction(async (r) => {
      await r.pins.lockOwner(owner.key);
      const pins = await r.pins.list(owner.key);
      const at = pins.findIndex((p) => p.id === pinId);
      if (at < 0) throw AppError.notFound(`Pin '${pinId}'`);
      if (order >= pins.length) {
        throw AppError.field('order', `Must be from 0 to ${pins.length - 1}.`);
      }
      const ids = pins.map((p) => p.id);
      ids.splice(at, 1);
      ids.splice(order, 0, pinId);
      await r.pins.renumber(owner.key, ids);
      return { ...pins[at], position: order };
    });
    const [view] = await this.viewsOf(ctx, owner.url, [row]);
    return view ?? { row, ownerUrl: owner.url, resource: null };
  }

  /** Unpins; the others close up. */
  async remove(ctx: ServiceContext, ownerRef: OwnerRef, pinId: string): Promise<void> {
    const owner = await this.owner(ctx, ownerRef);
    await this.authorizeChange(ctx, owner);
    if (!PIN_ID.test(pinId)) throw AppError.notFound(`Pin '${pinId}'`);
    await this.repos.transaction(async (r) => {
      await r.pins.lockOwner(owner.key);
      if (!(await r.pins.find(owner.key, pinId))) throw AppError.notFound(`Pin '${pinId}'`);
      await r.pins.delete(owner.key, pinId);
      const rest = (await r.pins.list(owner.key)).map((p) => p.id);
      await r.pins.renumber(owner.key, rest);
    });
  }

  private async owner(ctx: ServiceContext, ref: OwnerRef): Promise<ResolvedOwner> {
    if (ref.type === 'org') {
      const org = await this.orgs.get(ctx, ref.id);
      return {
        key: { orgId: org.id },
        url: ownerUrl({ type: 'Organization', id: org.mnemonic }),
        org,
      };
    }
    const user =
      ref.type === 'self' ? await this.users.me(ctx) : await this.users.get(ctx, ref.username);
    return { key: { userId: user.id }, url: ownerUrl({ type: 'User', id: user.username }), user };
  }

  /** An org's pins are its members'; a user's their own (superusers may change any). */
  private async authorizeChange(ctx: ServiceContext, owner: ResolvedOwner): Promise<void> {
    if (owner.org) await authorize(ctx, { action: 'org.edit', org: owner.org });
    else await authorize(ctx, { action: 'user.manage', user: owner.user! });
  }

  private async viewsOf(ctx: ServiceContext, url: string, rows: PinRow[]): Promise<PinView[]> {
    const views = await Promise.all(
      rows.map(async (row) => ({
        row,
        ownerUrl: url,
        resource: await this.resource(ctx, row.resource_type, row.resource_id),
      })),
    );
    return views.filter((v) => v.resource !== null);
  }

  /** The pinned resource as the caller may see it; null when gone or hidden. */
  private async resource(
    ctx: ServiceContext,
    type: PinResourceType,
    id: string,
  ): Promise<PinnedResource | null> {
    if (type === 'Organization') {
      const org = await ctx.loaders.orgById.load(id);
      if (!org || !(await can(ctx, { action: 'org.view', org }))) return null;
      return { kind: 'org', detail: { org, counts: await this.orgs.counts(ctx, org) } };
    }
    const view = await this.repositories.headView(ctx, id);
    if (!view || view.repo.kind !== (type === 'Source' ? 'source' : 'collection')) return null;
    if (!view.repo.isActive || !(await can(ctx, { action: 'repo.view', repo: view.repo })))
      return null;
    return { kind: 'repo', detail: { view, counts: await this.repositories.counts(ctx, view) } };
  }
}
