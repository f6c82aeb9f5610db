import { ArgsType, Field } from 'type-graphql';
import { AppError } from '../../errors';
import type { ListParams } from '../../services';
import { OwnerType } from './enums';
import {
  conceptListParamsOf,
  mappingListParamsOf,
  type ConceptListArgs,
  type MappingListArgs,
} from './list.args';

/*
 * The filters of the lists across every public source, REST `/concepts/` and `/mappings/`
 * (spec core §4.3, §4.4): only without a `source` URL (issue 28 parity).
 */

const SOURCE_IDS =
  'Only in sources with these ids (short codes), as REST `source`; a leading `!` excludes one. Only without `source`.';

/** `concepts` without a source: REST `/concepts/`'s own filters. */
@ArgsType()
export class GlobalConceptArgs {
  @Field(() => [String], { nullable: true, description: SOURCE_IDS })
  sourceIds?: string[];

  @Field(() => [String], {
    nullable: true,
    description:
      'Only in sources owned by these users (usernames), as REST `user`. Only without `source`; not with `org`.',
  })
  user?: string[];

  @Field(() => [String], {
    nullable: true,
    description:
      'Only in sources owned by these organizations (ids), as REST `org`. Only without `source`; not with `user`.',
  })
  org?: string[];

  @Field(() => [String], {
    nullable: true,
    description:
      'Only concepts mapped to each of these codes, each `<owner>:<source>:<code>`, as REST `mapcode`. Only without `source`.',
  })
  mapcode?: string[];
}

/** `mappings` without a source: REST `/mappings/`'s own filters. */
@ArgsType()
export class GlobalMappingArgs {
  @Field(() => [String], { nullable: true, description: SOURCE_IDS })
  sourceIds?: string[];

  @Field(() => [String], {
    nullable: true,
    description:
      'Only in sources of these owners (org ids or usernames), as REST `owner`. Only without `source`.',
  })
  owner?: string[];

  @Field(() => [OwnerType], {
    nullable: true,
    description:
      'Only in sources of these kinds of owner, as REST `ownerType` (none or empty: any). Only without `source`.',
  })
  ownerTypes?: OwnerType[];
}

/** The filters given, by their REST names. */
function given(filters: Record<string, string[] | undefined>): ListParams['filters'] {
  return Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined));
}

export function globalConceptParamsOf(
  args: ConceptListArgs,
  global: GlobalConceptArgs,
): ListParams {
  const params = conceptListParamsOf(args);
  return {
    ...params,
    filters: {
      ...params.filters,
      ...given({
        source: global.sourceIds,
        user: global.user,
        org: global.org,
        mapcode: global.mapcode,
      }),
    },
  };
}

export function globalMappingParamsOf(
  args: MappingListArgs,
  global: GlobalMappingArgs,
): ListParams {
  const params = mappingListParamsOf(args);
  return {
    ...params,
    filters: {
      ...params.filters,
      ...given({
        source: global.sourceIds,
        owner: global.owner,
        ownerType: global.ownerTypes?.length ? global.ownerTypes : undefined,
      }),
    },
  };
}

/** The filters across sources mean nothing within one source: refused, not ignored. */
export function refuseGlobalFilters(global: object, sourceArg: string): void {
  const named = Object.entries(global).filter(([, v]) => v !== undefined && v !== null);
  if (named.length > 0) {
    throw AppError.field(named[0][0], `Only without \`${sourceArg}\`: it filters across sources.`);
  }
}
