import request from 'supertest';
import { uniqueId, type TestApp } from './index';
import { createConcept, createMappingBetween, createRepo, createVersion } from './content';
import { orgWithPeople } from './people';

/**
 * The terminology operations' fixture: an org (`orgFields` over the defaults) with an admin and a
 * member; its source S with a canonical URL (concept A; B under A; mapping A SAME-AS B), released
 * as v1; and a collection V with a canonical URL whose references are `members` of S v1, released
 * as c1. `frenchName` gives A a preferred French name too.
 */
export async function terminologyWorld(
  t: TestApp,
  options: { orgFields?: Record<string, unknown>; members?: string[]; frenchName?: boolean } = {},
) {
  const {
    org: { id: org },
    admin,
    member,
  } = await orgWithPeople(t, options.orgFields ?? {});
  const system = `http://example.org/tx/${uniqueId('cs')}`;
  const source = await createRepo(t, `/orgs/${org}`, admin, { id: 'S', canonical_url: system });
  const concept = (id: string) => `/orgs/${org}/sources/S/concepts/${id}/`;
  await createConcept(t, source.url, admin, {
    id: 'A',
    names: [
      { name: 'Alpha', locale: 'en', locale_preferred: true },
      ...(options.frenchName ? [{ name: 'Alpha fr', locale: 'fr', locale_preferred: true }] : []),
    ],
  });
  await createConcept(t, source.url, admin, {
    id: 'B',
    names: [{ name: 'Beta', locale: 'en', locale_preferred: true }],
    parent_concept_urls: [concept('A')],
  });
  await createMappingBetween(t, source.url, admin, ['M1', 'SAME-AS', concept('A'), concept('B')]);
  await createVersion(t, source.url, admin, 'v1', { released: true });
  const valueSet = `http://example.org/tx/${uniqueId('vs')}`;
  const collection = await createRepo(
    t,
    `/orgs/${org}`,
    admin,
    { id: 'V', canonical_url: valueSet },
    'collections',
  );
  const expressions = (options.members ?? ['A']).map(
    (id) => `/orgs/${org}/sources/S/v1/concepts/${id}/`,
  );
  await request(t.app)
    .put(`${collection.url}references/`)
    .set('Authorization', admin.auth)
    .send({ data: { expressions } })
    .expect(200);
  await createVersion(t, collection.url, admin, 'c1', { released: true });
  return { org, admin, member, system, valueSet };
}
