import { Field, ObjectType } from 'type-graphql';
import type { Page } from '../../services';

@ObjectType('PageInfo', {
  description:
    'Where a page lies in its list (a Relay connection `pageInfo`): the cursors to go on from, and whether items follow. Lists page forward only (`first`/`after`).',
})
export class PageInfoObject {
  @Field({
    description:
      'Whether items follow this page: with `first`, read by fetching one item more than asked (no count); by offset, from `totalCount`.',
  })
  hasNextPage: boolean;

  @Field({
    description:
      'Whether the page starts after a cursor or an offset (items may precede it); never counted.',
  })
  hasPreviousPage: boolean;

  @Field(() => String, {
    nullable: true,
    description: "The first item's cursor; null on an empty page.",
  })
  startCursor: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      "The last item's cursor: `after` of the next page (`first`/`after`); null on an empty page.",
  })
  endCursor: string | null;
}

/** Shared wording of the connection fields of every page type that has them. */
export const EDGE_CURSOR =
  'Opaque: `after` takes it to start the next page after this item (on the same list, same arguments but `first`/`after`).';
export const PAGE_INFO =
  'Where this page lies in its list: the cursor to go on from, and whether more follow.';

/** A page's connection fields (Relay): its items with their cursors, and its `pageInfo`. */
export function connectionOf<T, N>(
  page: Page<T>,
  nodes: N[],
): { edges: Array<{ cursor: string; node: N }>; pageInfo: PageInfoObject } {
  const cursors = page.cursors ?? [];
  // Only an empty page answered early comes without cursors.
  if (cursors.length !== nodes.length) throw new Error('A page of a cursor list without cursors');
  const edges = nodes.map((node, i) => ({ cursor: cursors[i], node }));
  return {
    edges,
    pageInfo: {
      hasNextPage:
        page.hasNextPage ?? (page.limit > 0 && page.offset + page.items.length < page.total),
      hasPreviousPage: page.hasPreviousPage ?? page.offset > 0,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
  };
}

/**
 * A cursor list's page fields: `items`, `edges`, `pageInfo`, `totalCount` and `totalCountExact`,
 * which a cursor page (`first`/`after`) counts only when the query reads them (getters: the
 * fields resolve them).
 */
export function connectionPageOf<T, N>(
  page: Page<T>,
  items: N[],
): {
  totalCount: number | Promise<number>;
  totalCountExact: boolean | Promise<boolean>;
  items: N[];
  edges: Array<{ cursor: string; node: N }>;
  pageInfo: PageInfoObject;
} {
  const fields = { items, ...connectionOf(page, items) };
  const { countTotal } = page;
  if (!countTotal) {
    return { totalCount: page.total, totalCountExact: page.totalExact !== false, ...fields };
  }
  return Object.defineProperties(
    {
      ...fields,
      totalCount: 0,
      totalCountExact: true,
    },
    {
      totalCount: { get: () => countTotal().then((c) => c.total), enumerable: true },
      totalCountExact: { get: () => countTotal().then((c) => c.exact), enumerable: true },
    },
  );
}

/** What `totalCountExact` says, on the pages of lists counted up to a cap. */
export const TOTAL_COUNT_EXACT =
  "Whether `totalCount` is exact. Concept and mapping lists are counted exactly up to the instance's `LIST_COUNT_CAP` (10,000 by default); when more match, `totalCount` is the cap and this is false (at least that many, as Elasticsearch reports a total beyond its count).";
