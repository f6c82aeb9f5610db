/** Descriptions that several GraphQL fields and arguments share. */

export const TOTAL_COUNT = 'Records found in all, across every page.';
export const EXTERNAL_ID = 'An id in an external system, for import and export matching.';
export const CREATED_ON = 'When it was created.';
export const CREATED_BY = 'Who created it (a username).';
export const UPDATED_ON = 'When it was last updated.';
export const UPDATED_BY = 'Who last updated it (a username).';
export const EXTRAS = 'Custom attributes.';
/**
 * The deprecation of a field renamed to `name` (issue 28: timestamps end in `On`, as OCL's
 * `created_on`); the old name answers the same for one release.
 */
export function renamedTo(name: string): string {
  return `Renamed \`${name}\` (timestamps end in \`On\`); this name goes in the next release.`;
}

export const OFFSET = 'Records to skip before the page starts (zero-based).';

/** The terminology operations' shared arguments. */
export const DISPLAY_LANGUAGE =
  'The languages displays are wanted in, as an HTTP `Accept-Language` value (e.g. `en,fr;q=0.8`).';
export const TX_RESOURCES =
  'FHIR `tx-resource`: code systems, value sets and concept maps (FHIR R4 JSON) used for this request only, before stored content of the same URL and version; never stored.';
export const OWNER_URL =
  'The owner URL (/orgs/:org/, /users/:user/); none: the server-wide namespace of /fhir/.';
