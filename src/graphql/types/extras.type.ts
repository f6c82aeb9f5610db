import { GraphQLJSON } from 'graphql-scalars';
import { Field, ObjectType } from 'type-graphql';

/*
 * One custom attribute written on its own (spec operations §4.9, REST `…/extras/:name/`): the
 * service changes that attribute only, so parallel writes of others are kept.
 */

const EXTRAS_URL = 'The REST URL of the resource whose attribute was written, as given.';

@ObjectType('SetExtraPayload', { description: 'One custom attribute set.' })
export class SetExtraPayload {
  @Field({ description: EXTRAS_URL })
  url: string;

  @Field({ description: 'The name of the attribute.' })
  name: string;

  @Field(() => GraphQLJSON, {
    nullable: true,
    description: 'The value stored (as REST answers it: `{"<name>": value}`).',
  })
  value: unknown;
}

@ObjectType('DeleteExtraPayload', { description: 'One custom attribute removed.' })
export class DeleteExtraPayload {
  @Field({ description: 'The name of the attribute removed.' })
  deletedId: string;

  @Field(() => String, { nullable: true, description: EXTRAS_URL })
  url: string | null;
}
