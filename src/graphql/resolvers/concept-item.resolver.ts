import { Arg, Ctx, Mutation, Resolver } from 'type-graphql';
import type { ConceptDescription, ConceptName } from '../../db/entities';
import { parseConceptUrl, type ConceptRef, type ConceptView } from '../../services';
import { AppError } from '../../errors';
import type { GraphQLContext } from '../context';
import {
  AddConceptDescriptionPayload,
  AddConceptNamePayload,
  ConceptDescriptionEdit,
  ConceptNameEdit,
  DeleteConceptDescriptionPayload,
  DeleteConceptNamePayload,
  UpdateConceptDescriptionPayload,
  UpdateConceptNamePayload,
  type ConceptItemPayload,
} from '../types/concept-item.type';
import {
  ConceptDescriptionInput,
  ConceptNameInput,
  ConceptObject,
  descriptionObjectOf,
  nameObjectOf,
  type ConceptDescriptionObject,
  type ConceptNameObject,
} from '../types/concept.type';
import { payloadOf, type DeletePayload } from '../types/payload.type';

const CONCEPT_URL =
  'The REST URL of the concept (`/orgs/O/sources/S/concepts/C/`); items are written at HEAD.';
const UUID = 'The uuid of the item (`ConceptName.uuid`, `ConceptDescription.uuid`).';

/** What an item write answers (the service's `ConceptItemView`). */
type ConceptItemView = ConceptView & { item: ConceptName | ConceptDescription };

/** A concept URL naming a concept version names nothing to write. */
function conceptRef(url: string): ConceptRef {
  const ref = parseConceptUrl(url);
  if (ref.conceptVersion !== undefined) {
    throw AppError.field('url', `'${url}' names a concept version; items are written at HEAD.`);
  }
  return ref;
}

function nameAnswer(view: ConceptItemView): ConceptItemPayload<ConceptNameObject> {
  const concept = ConceptObject.from(view);
  return {
    item: nameObjectOf(view.item as ConceptName),
    id: view.item.uuid,
    url: `${concept.url}names/${encodeURIComponent(view.item.uuid)}/`,
    concept,
  };
}

function descriptionAnswer(view: ConceptItemView): ConceptItemPayload<ConceptDescriptionObject> {
  const concept = ConceptObject.from(view);
  return {
    item: descriptionObjectOf(view.item as ConceptDescription),
    id: view.item.uuid,
    url: `${concept.url}descriptions/${encodeURIComponent(view.item.uuid)}/`,
    concept,
  };
}

/** REST `…/concepts/C/names/` and `…/descriptions/` writes (issue 28 parity). */
@Resolver()
export class ConceptItemResolver {
  @Mutation(() => AddConceptNamePayload, {
    description: 'Adds a name to a concept, as REST `POST …/concepts/C/names/`.',
  })
  async addConceptName(
    @Arg('url', { description: CONCEPT_URL }) url: string,
    @Arg('input', { description: 'The new name.' }) input: ConceptNameInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConceptItemPayload<ConceptNameObject>> {
    const ref = conceptRef(url);
    return payloadOf(
      AddConceptNamePayload,
      nameAnswer(
        await ctx.services.concepts.addItem(ctx, ref.source, ref.id, 'names', { ...input }),
      ),
    );
  }

  @Mutation(() => UpdateConceptNamePayload, {
    description: 'Changes a name of a concept, as REST `PUT`/`PATCH …/concepts/C/names/:uuid/`.',
  })
  async updateConceptName(
    @Arg('url', { description: CONCEPT_URL }) url: string,
    @Arg('uuid', { description: UUID }) uuid: string,
    @Arg('input', { description: 'The fields to change.' }) input: ConceptNameEdit,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConceptItemPayload<ConceptNameObject>> {
    const ref = conceptRef(url);
    return payloadOf(
      UpdateConceptNamePayload,
      nameAnswer(
        await ctx.services.concepts.updateItem(ctx, ref.source, ref.id, 'names', uuid, {
          ...input,
        }),
      ),
    );
  }

  @Mutation(() => DeleteConceptNamePayload, {
    description:
      'Removes a name of a concept, as REST `DELETE …/concepts/C/names/:uuid/` (a concept keeps one name).',
  })
  async deleteConceptName(
    @Arg('url', { description: CONCEPT_URL }) url: string,
    @Arg('uuid', { description: UUID }) uuid: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<DeletePayload> {
    const ref = conceptRef(url);
    const view = await ctx.services.concepts.removeItem(ctx, ref.source, ref.id, 'names', uuid);
    return payloadOf(DeleteConceptNamePayload, {
      deletedId: uuid,
      url: `${ConceptObject.from(view).url}names/${encodeURIComponent(uuid)}/`,
    });
  }

  @Mutation(() => AddConceptDescriptionPayload, {
    description: 'Adds a description to a concept, as REST `POST …/concepts/C/descriptions/`.',
  })
  async addConceptDescription(
    @Arg('url', { description: CONCEPT_URL }) url: string,
    @Arg('input', { description: 'The new description.' }) input: ConceptDescriptionInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConceptItemPayload<ConceptDescriptionObject>> {
    const ref = conceptRef(url);
    return payloadOf(
      AddConceptDescriptionPayload,
      descriptionAnswer(
        await ctx.services.concepts.addItem(ctx, ref.source, ref.id, 'descriptions', {
          ...input,
        }),
      ),
    );
  }

  @Mutation(() => UpdateConceptDescriptionPayload, {
    description:
      'Changes a description of a concept, as REST `PUT`/`PATCH …/concepts/C/descriptions/:uuid/`.',
  })
  async updateConceptDescription(
    @Arg('url', { description: CONCEPT_URL }) url: string,
    @Arg('uuid', { description: UUID }) uuid: string,
    @Arg('input', { description: 'The fields to change.' }) input: ConceptDescriptionEdit,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConceptItemPayload<ConceptDescriptionObject>> {
    const ref = conceptRef(url);
    return payloadOf(
      UpdateConceptDescriptionPayload,
      descriptionAnswer(
        await ctx.services.concepts.updateItem(ctx, ref.source, ref.id, 'descriptions', uuid, {
          ...input,
        }),
      ),
    );
  }

  @Mutation(() => DeleteConceptDescriptionPayload, {
    description:
      'Removes a description of a concept, as REST `DELETE …/concepts/C/descriptions/:uuid/`.',
  })
  async deleteConceptDescription(
    @Arg('url', { description: CONCEPT_URL }) url: string,
    @Arg('uuid', { description: UUID }) uuid: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<DeletePayload> {
    const ref = conceptRef(url);
    const view = await ctx.services.concepts.removeItem(
      ctx,
      ref.source,
      ref.id,
      'descriptions',
      uuid,
    );
    return payloadOf(DeleteConceptDescriptionPayload, {
      deletedId: uuid,
      url: `${ConceptObject.from(view).url}descriptions/${encodeURIComponent(uuid)}/`,
    });
  }
}
