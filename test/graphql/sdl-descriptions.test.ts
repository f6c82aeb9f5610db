import {
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isIntrospectionType,
  isObjectType,
  isSpecifiedScalarType,
  type GraphQLSchema,
} from 'graphql';
import { buildGraphqlSchema } from '../../src/graphql/schema';

/** Whether a description says something. */
function described(description: string | null | undefined): boolean {
  return typeof description === 'string' && description.trim() !== '';
}

/**
 * Every type, field, argument, input field and enum value of the schema that has no description,
 * as `Type`, `Type.field`, `Type.field(argument)` or `Type.VALUE`. Introspection types and the
 * built-in scalars are GraphQL's own.
 */
function undescribed(schema: GraphQLSchema): string[] {
  const missing: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (isIntrospectionType(type) || isSpecifiedScalarType(type)) continue;
    if (!described(type.description)) missing.push(type.name);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (!described(field.description)) missing.push(`${type.name}.${field.name}`);
        for (const arg of field.args) {
          if (!described(arg.description)) {
            missing.push(`${type.name}.${field.name}(${arg.name})`);
          }
        }
      }
    } else if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (!described(field.description)) missing.push(`${type.name}.${field.name}`);
      }
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) {
        if (!described(value.description)) missing.push(`${type.name}.${value.name}`);
      }
    }
  }
  return missing.sort();
}

test('every type, field, argument, input field and enum value of the schema is described', async () => {
  expect(undescribed(await buildGraphqlSchema())).toEqual([]);
});
