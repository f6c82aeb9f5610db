import { GraphQLJSON } from 'graphql-scalars';
import { Arg, Ctx, Mutation, Resolver } from 'type-graphql';
import { AppError } from '../../errors';
import {
  parseConceptUrl,
  parseMappingUrl,
  parseOwnerUrl,
  parseRepoUrl,
  type ConceptRef,
  type MappingRef,
  type OwnerRef,
  type RepoRef,
} from '../../services';
import type { GraphQLContext } from '../context';
import { DeleteExtraPayload, SetExtraPayload } from '../types/extras.type';
import { payloadOf, slashed } from '../types/payload.type';

/** What a URL of `setExtra`/`deleteExtra` names: each kind is one service's own extras. */
type Holder =
  | { kind: 'owner'; owner: OwnerRef }
  | { kind: 'repo'; ref: RepoRef }
  | { kind: 'concept'; ref: ConceptRef }
  | { kind: 'mapping'; ref: MappingRef };

const URL_ARG =
  'The REST URL of what holds the attribute: an organization (`/orgs/O/`), a user (`/users/U/`, `/user/` for the caller), a source or collection (at HEAD), a concept (at HEAD or through a source version, as REST) or a mapping (at HEAD).';

/** The URL parsed as REST routes `…/extras/:name/` (no writes at versions but concepts'). */
function holderOf(url: string): Holder {
  const path = slashed(url);
  const atVersion = () => AppError.field('url', `'${url}': extras are written at HEAD only.`);
  if (path.includes('/concepts/')) {
    const ref = parseConceptUrl(path);
    if (ref.conceptVersion !== undefined) throw atVersion();
    return { kind: 'concept', ref };
  }
  if (path.includes('/mappings/')) {
    const ref = parseMappingUrl(path);
    if (ref.mappingVersion !== undefined || ref.source.version !== undefined) throw atVersion();
    return { kind: 'mapping', ref };
  }
  if (/\/(sources|collections)\//.test(path)) {
    const ref = parseRepoUrl(path);
    if (ref.version !== undefined) throw atVersion();
    return { kind: 'repo', ref };
  }
  return { kind: 'owner', owner: parseOwnerUrl(path) };
}

/** Issue 28 parity: REST `PUT`/`DELETE …/extras/:name/` of every resource that has extras. */
@Resolver()
export class ExtrasResolver {
  @Mutation(() => SetExtraPayload, {
    description:
      'Sets one custom attribute (`extras`) of an organization, user, source, collection, concept or mapping, leaving the others as they are, as REST `PUT …/extras/:name/` (a concept or mapping: a new version).',
  })
  async setExtra(
    @Arg('url', { description: URL_ARG }) url: string,
    @Arg('name', { description: 'The name of the attribute.' }) name: string,
    @Arg('value', () => GraphQLJSON, {
      nullable: true,
      description: 'Its value: any JSON value.',
    })
    value: unknown,
    @Ctx() ctx: GraphQLContext,
  ): Promise<SetExtraPayload> {
    const holder = holderOf(url);
    const input = { [name]: value ?? null };
    const { services } = ctx;
    let stored: unknown;
    switch (holder.kind) {
      case 'owner': {
        const { owner } = holder;
        stored =
          owner.type === 'org'
            ? await services.orgs.setExtra(ctx, owner.id, name, input)
            : await services.users.setExtra(
                ctx,
                owner.type === 'user' ? owner.username : undefined,
                name,
                input,
              );
        break;
      }
      case 'repo':
        stored = await services.repositories.setExtra(ctx, holder.ref, name, input);
        break;
      case 'concept': {
        const { ref } = holder;
        const view = await services.concepts.setExtra(ctx, ref.source, ref.id, name, input);
        stored = view.version.extras?.[name];
        break;
      }
      case 'mapping': {
        const { ref } = holder;
        const view = await services.mappings.setExtra(ctx, ref.source, ref.id, name, input);
        stored = view.version.extras?.[name];
        break;
      }
    }
    return payloadOf(SetExtraPayload, { url: slashed(url), name, value: stored ?? null });
  }

  @Mutation(() => DeleteExtraPayload, {
    description:
      'Removes one custom attribute (`extras`), leaving the others, as REST `DELETE …/extras/:name/`; NOT_FOUND when there is none such.',
  })
  async deleteExtra(
    @Arg('url', { description: URL_ARG }) url: string,
    @Arg('name', { description: 'The name of the attribute.' }) name: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<DeleteExtraPayload> {
    const holder = holderOf(url);
    const { services } = ctx;
    switch (holder.kind) {
      case 'owner': {
        const { owner } = holder;
        if (owner.type === 'org') await services.orgs.removeExtra(ctx, owner.id, name);
        else {
          await services.users.removeExtra(
            ctx,
            owner.type === 'user' ? owner.username : undefined,
            name,
          );
        }
        break;
      }
      case 'repo':
        await services.repositories.removeExtra(ctx, holder.ref, name);
        break;
      case 'concept':
        await services.concepts.removeExtra(ctx, holder.ref.source, holder.ref.id, name);
        break;
      case 'mapping':
        await services.mappings.removeExtra(ctx, holder.ref.source, holder.ref.id, name);
        break;
    }
    return payloadOf(DeleteExtraPayload, { deletedId: name, url: slashed(url) });
  }
}
