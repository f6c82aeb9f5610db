import { Field, ID, ObjectType, type ClassType } from 'type-graphql';
import { AppError } from '../../errors';

/**
 * Mutation payloads (issue 28 part 4; docs/api-graphql.md "Mutations"). Every mutation answers
 * an object type named `<Mutation>Payload`: the changed object and its id, the deleted id and URL,
 * and `userErrors` where an operation can partly fail. The shapes repeat, so they are made here by
 * three small factories rather than written out one by one: `entityPayload` (the object written),
 * `deletePayload` (what was deleted) and `UserErrorObject`/`userError` for the parts refused.
 * Whole-operation failures stay GraphQL errors (`INVALID`, `NOT_FOUND`, `FORBIDDEN`, …).
 */

@ObjectType('UserError', {
  description:
    'A part of a mutation that was refused while the rest of it was done: the input it names, why, and a code.',
})
export class UserErrorObject {
  @Field(() => [String], {
    nullable: true,
    description:
      'The path of the input refused, from the argument down (`["references", "2"]`); null when it is the whole input.',
  })
  field: string[] | null;

  @Field({ description: 'Why it was refused, in words.' })
  message: string;

  @Field({
    description:
      'Why it was refused, as a code: an error code (`NOT_FOUND`, `INVALID`, `FORBIDDEN`, …) or `NOT_ADDED`.',
  })
  code: string;
}

/** One user error. */
export function userError(
  field: Array<string | number> | null,
  message: string,
  code: string,
): UserErrorObject {
  return Object.assign(new UserErrorObject(), {
    field: field?.map(String) ?? null,
    message,
    code,
  });
}

/** The description of `userErrors` on every payload that has it. */
export const USER_ERRORS =
  'The parts of the input that were refused while the rest was done; empty when all of it was.';

/** A payload that names its changed object `K`, with its `id` (and `url`, when it has one). */
export type EntityPayload<K extends string, T> = { [P in K]: T } & {
  id: string;
  url: string | null;
};

/** What an `entityPayload` is made of. */
interface EntityPayloadSpec<K extends string> {
  /** The GraphQL type name, `<Mutation>Payload`. */
  name: string;
  /** What the mutation did, said of the payload. */
  description: string;
  /** The field of the changed object (`concept`, `source`, …). */
  field: K;
  /** Its GraphQL type. */
  type: () => ClassType<object>;
  /** The description of that field. */
  fieldDescription: string;
  /** The object may not be readable after the change (then null; the nullability rule). */
  nullable?: boolean;
  /** The description of `id`. */
  idDescription?: string;
  /** Whether the object has a REST URL (`url`), and its description. */
  urlDescription?: string;
}

/** The classes made, by name: each payload type is made once, however often it is asked for. */
const made = new Map<string, ClassType<object>>();

/**
 * An object type `{ <field>: T, id: ID!, url: String }` for a mutation that writes one object.
 * Build values with `payloadOf`.
 */
export function entityPayload<K extends string, T>(
  spec: EntityPayloadSpec<K>,
): ClassType<EntityPayload<K, T>> {
  const existing = made.get(spec.name);
  if (existing) return existing as ClassType<EntityPayload<K, T>>;
  class Payload {}
  Object.defineProperty(Payload, 'name', { value: spec.name });
  Field(spec.type, { nullable: spec.nullable ?? false, description: spec.fieldDescription })(
    Payload.prototype,
    spec.field,
  );
  Field(() => ID, {
    description: spec.idDescription ?? `The id of the ${spec.field} (its \`id\`).`,
  })(Payload.prototype, 'id');
  if (spec.urlDescription !== undefined) {
    Field(() => String, { nullable: true, description: spec.urlDescription })(
      Payload.prototype,
      'url',
    );
  }
  ObjectType(spec.name, { description: spec.description })(Payload);
  made.set(spec.name, Payload);
  return Payload as ClassType<EntityPayload<K, T>>;
}

/** A value of a payload type: `values` copied onto a new instance. */
export function payloadOf<P extends object>(type: ClassType<P>, values: P): P {
  return Object.assign(new type(), values);
}

/** What a delete answers: the id (and the URL, when it has one) of what it deleted. */
export interface DeletePayload {
  deletedId: string;
  url: string | null;
}

/**
 * An object type `{ deletedId: ID!, url: String }` for a mutation that deletes (or deactivates)
 * one thing; `what` names it in the descriptions.
 */
export function deletePayload(
  name: string,
  description: string,
  what: string,
  urlDescription = `The REST URL of the ${what} deleted.`,
): ClassType<DeletePayload> {
  const existing = made.get(name);
  if (existing) return existing as ClassType<DeletePayload>;
  class Payload {}
  Object.defineProperty(Payload, 'name', { value: name });
  Field(() => ID, { description: `The id of the ${what} deleted.` })(
    Payload.prototype,
    'deletedId',
  );
  Field(() => String, { nullable: true, description: urlDescription })(Payload.prototype, 'url');
  ObjectType(name, { description })(Payload);
  made.set(name, Payload);
  return Payload as ClassType<DeletePayload>;
}

/** A REST URL as a caller gave it, with its leading and trailing slash (as REST answers them). */
export function slashed(url: string): string {
  const text = url.trim();
  return `${text.startsWith('/') ? '' : '/'}${text}${text.endsWith('/') ? '' : '/'}`;
}

/**
 * An object read again after a change that answered nothing of it: null when the caller may not
 * read it now (a refusal or absence of the read is not the mutation's failure; the change is done).
 */
export async function readableAfter<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof AppError && READ_REFUSALS.has(error.code)) return null;
    throw error;
  }
}

const READ_REFUSALS = new Set(['NOT_FOUND', 'FORBIDDEN', 'UNAUTHENTICATED', 'GONE']);
