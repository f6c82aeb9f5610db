import { GraphQLJSONObject } from 'graphql-scalars';
import { Query, Resolver } from 'type-graphql';
import { API_VERSION } from '../../services';

/** The service itself (spec core §9.1): REST `/version/` and `/toggles/` (issue 28 parity). */
@Resolver()
export class StatusResolver {
  @Query(() => String, {
    nullable: true,
    description: 'The API version (spec core §9.1), as REST `/version/` and `X-OCL-API-VERSION`.',
  })
  apiVersion(): string {
    return API_VERSION;
  }

  @Query(() => GraphQLJSONObject, {
    nullable: true,
    description: "OCL's feature toggles, as REST `/toggles/`: none here, an empty object.",
  })
  toggles(): Record<string, boolean> {
    return {};
  }
}
