import { Field, Int, ObjectType } from 'type-graphql';
import type { Page } from '../../services';

/*
 * List facets (REST `includeFacets` header, `facetsOnly`; issue 28 parity): how many of the
 * whole list's matches have each value of a field, counted as REST counts them, over what the
 * caller may see. Asked with a list's `includeFacets: true`; `facetsOnly` is selecting `facets`
 * without `items`.
 */

@ObjectType('FacetValue', { description: 'One value of a facet and how many matches have it.' })
export class FacetValueObject {
  @Field({ description: 'The value.' })
  value: string;

  @Field(() => Int, { description: 'How many of the matches (the whole list) have it.' })
  count: number;
}

@ObjectType('Facet', { description: 'The values of one field over every match of a list.' })
export class FacetObject {
  @Field({ description: 'The field, as REST names it (`conceptClass`, `locale`, `owner`, …).' })
  field: string;

  @Field(() => [FacetValueObject], { description: 'Its values, most frequent first.' })
  values: FacetValueObject[];
}

/** The description of every page's `facets`. */
export const FACETS =
  "The list's facets (REST `includeFacets`): null unless asked with `includeFacets: true`.";

/** A page's facet counts as GraphQL shows them; null when none were asked for. */
export function facetsOf(page: Pick<Page<unknown>, 'facets'>): FacetObject[] | null {
  if (!page.facets) return null;
  return Object.entries(page.facets).map(([field, values]) => ({
    field,
    values: values.map(([value, count]) => ({ value, count })),
  }));
}
