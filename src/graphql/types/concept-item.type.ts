import { Field, ID, InputType, ObjectType, type ClassType } from 'type-graphql';
import { ConceptDescriptionObject, ConceptNameObject, ConceptObject } from './concept.type';
import { EXTERNAL_ID } from './descriptions';
import { deletePayload } from './payload.type';

/*
 * One name or description of a concept written on its own (spec core §2.6, REST
 * `…/concepts/C/names/[:uuid/]`, `…/descriptions/[:uuid/]`; issue 28 parity): each write is a new
 * concept version.
 */

@InputType('ConceptNameEdit', {
  description: 'The fields of a name to change; those not sent keep their value.',
})
export class ConceptNameEdit {
  @Field({ nullable: true, description: 'The name text.' })
  name?: string;

  @Field({ nullable: true, description: 'Its locale code, e.g. `en`.' })
  locale?: string;

  @Field({ nullable: true, description: 'Whether it is the preferred name in its locale.' })
  localePreferred?: boolean;

  @Field(() => String, { nullable: true, description: 'Its name type, e.g. `FULLY_SPECIFIED`.' })
  nameType?: string | null;

  @Field(() => String, { nullable: true, description: EXTERNAL_ID })
  externalId?: string | null;
}

@InputType('ConceptDescriptionEdit', {
  description: 'The fields of a description to change; those not sent keep their value.',
})
export class ConceptDescriptionEdit {
  @Field({ nullable: true, description: 'The description text.' })
  description?: string;

  @Field({ nullable: true, description: 'Its locale code, e.g. `en`.' })
  locale?: string;

  @Field({
    nullable: true,
    description: 'Whether it is the preferred description in its locale.',
  })
  localePreferred?: boolean;

  @Field(() => String, { nullable: true, description: 'Its description type.' })
  descriptionType?: string | null;

  @Field(() => String, { nullable: true, description: EXTERNAL_ID })
  externalId?: string | null;
}

/** What an item write answers: the item, its uuid and URL, and the concept's new version. */
export interface ConceptItemPayload<T> {
  item: T;
  id: string;
  url: string;
  concept: ConceptObject;
}

const ID_DESCRIPTION = 'The uuid of the item, which its REST URL uses.';
const URL_DESCRIPTION = 'The REST URL of the item (`…/concepts/C/names/:uuid/`).';
const CONCEPT_DESCRIPTION = 'The concept at the version the mutation made.';

/** A payload type answering one item of `itemType` (a name or a description) as stored. */
function itemPayload<T extends object>(
  itemType: ClassType<T>,
  itemDescription: string,
  name: string,
  description: string,
): ClassType<ConceptItemPayload<T>> {
  @ObjectType(name, { description })
  class Payload {
    @Field(() => itemType, { description: itemDescription })
    item: T;

    @Field(() => ID, { description: ID_DESCRIPTION })
    id: string;

    @Field({ description: URL_DESCRIPTION })
    url: string;

    @Field(() => ConceptObject, { description: CONCEPT_DESCRIPTION })
    concept: ConceptObject;
  }
  Object.defineProperty(Payload, 'name', { value: name });
  return Payload;
}

const namePayload = (name: string, description: string) =>
  itemPayload(ConceptNameObject, 'The name as stored.', name, description);

const descriptionPayload = (name: string, description: string) =>
  itemPayload(ConceptDescriptionObject, 'The description as stored.', name, description);

export const AddConceptNamePayload = namePayload(
  'AddConceptNamePayload',
  'A name added to a concept (a new concept version).',
);
export const UpdateConceptNamePayload = namePayload(
  'UpdateConceptNamePayload',
  'A name of a concept edited (a new concept version).',
);
export const AddConceptDescriptionPayload = descriptionPayload(
  'AddConceptDescriptionPayload',
  'A description added to a concept (a new concept version).',
);
export const UpdateConceptDescriptionPayload = descriptionPayload(
  'UpdateConceptDescriptionPayload',
  'A description of a concept edited (a new concept version).',
);
export const DeleteConceptNamePayload = deletePayload(
  'DeleteConceptNamePayload',
  'A name removed from a concept (a new concept version).',
  'name',
);
export const DeleteConceptDescriptionPayload = deletePayload(
  'DeleteConceptDescriptionPayload',
  'A description removed from a concept (a new concept version).',
  'description',
);
