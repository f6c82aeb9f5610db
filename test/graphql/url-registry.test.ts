import { createTestApp, uniqueId, type TestApp } from '../factories';
import { createRepo } from '../factories/content';
import { orgWithPeople } from '../factories/people';
import { dataOf, errorCode, gql } from './gql';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const canonical = () => `http://example.org/fhir/ValueSet/${uniqueId('vs')}`;

const ENTRY_FIELDS = `id url canonicalUrl namespace name extras isActive owner ownerType ownerUrl entryUrl
  createdAt createdBy updatedAt updatedBy`;
const CREATE = `mutation($owner: String, $input: UrlRegistryEntryInput!) {
  createUrlRegistryEntry(owner: $owner, input: $input) { entry { ${ENTRY_FIELDS} } }
}`;
const UPDATE = `mutation($id: ID!, $owner: String, $input: UrlRegistryEntryInput!) {
  updateUrlRegistryEntry(id: $id, owner: $owner, input: $input) { entry { ${ENTRY_FIELDS} } }
}`;
const DELETE = `mutation($id: ID!, $owner: String) { deleteUrlRegistryEntry(id: $id, owner: $owner) { deletedId } }`;
const ENTRY = `query($id: ID!, $owner: String) { urlRegistryEntry(id: $id, owner: $owner) { ${ENTRY_FIELDS} } }`;
const LIST = `query($owner: String, $q: String, $url: String, $namespace: String, $limit: Int! = 10, $offset: Int! = 0) {
  urlRegistry(owner: $owner, q: $q, url: $url, namespace: $namespace, limit: $limit, offset: $offset) {
    totalCount items { id url name }
  }
}`;
const LOOKUP = `query($url: String!, $owner: String) {
  lookupUrl(url: $url, owner: $owner) { __typename id url version owner }
}`;
const RESOLVE = `query($references: [JSON!]!, $namespace: String) {
  resolveReference(references: $references, namespace: $namespace) {
    referenceType timestamp resolved request resolutionUrl urlRegistryEntry
    result { __typename id version url owner }
  }
}`;

describe('URL registry through GraphQL', () => {
  it('creates, reads, lists, updates and deletes entries of the global and owner registries', async () => {
    const url = canonical();
    const created = dataOf(
      await gql(t, t.admin, CREATE, {
        input: { url, namespace: '/orgs/Elsewhere', name: 'Global', extras: { k: 'v' } },
      }),
    ).createUrlRegistryEntry.entry;
    expect(created).toMatchObject({
      url,
      canonicalUrl: url,
      namespace: '/orgs/Elsewhere/',
      name: 'Global',
      extras: { k: 'v' },
      isActive: true,
      owner: null,
      ownerType: null,
      ownerUrl: '/',
      entryUrl: `/url-registry/${created.id}/`,
      createdBy: 'ocladmin',
    });
    const read = dataOf(await gql(t, undefined, ENTRY, { id: created.id })).urlRegistryEntry;
    expect(read).toEqual(created);
    expect(dataOf(await gql(t, undefined, LIST, { url })).urlRegistry).toEqual({
      totalCount: 1,
      items: [{ id: created.id, url, name: 'Global' }],
    });

    const { org, member } = await orgWithPeople(t);
    const owner = `/orgs/${org.id}/`;
    // `canonicalUrl` (issue 28) names what the deprecated `url` did, in and out.
    const mineUrl = canonical();
    const mine = dataOf(
      await gql(t, member.auth, CREATE, {
        owner,
        input: { canonicalUrl: mineUrl, name: 'Mine' },
      }),
    ).createUrlRegistryEntry.entry;
    expect(mine).toMatchObject({
      url: mineUrl,
      canonicalUrl: mineUrl,
      owner: org.id,
      ownerType: 'ORGANIZATION',
      ownerUrl: owner,
    });
    const both = await gql(t, member.auth, CREATE, {
      owner,
      input: { canonicalUrl: canonical(), url: canonical() },
    });
    expect(errorCode(both)).toBe('INVALID');
    const byCanonical = await gql(
      t,
      undefined,
      `query($u: String!, $o: String) { urlRegistry(owner: $o, canonicalUrl: $u) { items { id } } }`,
      { u: mineUrl, o: owner },
    );
    expect(dataOf(byCanonical).urlRegistry.items).toEqual([{ id: mine.id }]);
    const updated = dataOf(
      await gql(t, member.auth, UPDATE, { id: mine.id, owner, input: { name: 'Renamed' } }),
    ).updateUrlRegistryEntry.entry;
    expect(updated).toMatchObject({ name: 'Renamed', url: mine.url, updatedBy: member.username });
    expect(
      dataOf(await gql(t, undefined, LIST, { owner, q: 'renamed' })).urlRegistry.totalCount,
    ).toBe(1);
    expect(
      dataOf(await gql(t, member.auth, DELETE, { id: mine.id, owner })).deleteUrlRegistryEntry
        .deletedId,
    ).toBeTruthy();
    expect(errorCode(await gql(t, undefined, ENTRY, { id: mine.id, owner }))).toBe('NOT_FOUND');
  });

  it('refuses writes to those who may not make them, and bad input, writing nothing', async () => {
    const { org, outsider } = await orgWithPeople(t);
    const url = canonical();
    expect(errorCode(await gql(t, undefined, CREATE, { input: { url } }))).toBe('UNAUTHENTICATED');
    expect(errorCode(await gql(t, outsider.auth, CREATE, { input: { url } }))).toBe('FORBIDDEN');
    expect(
      errorCode(await gql(t, outsider.auth, CREATE, { owner: `/orgs/${org.id}/`, input: { url } })),
    ).toBe('FORBIDDEN');
    const bad = await gql(t, t.admin, CREATE, { input: { url: 'relative/path', namespace: 'x' } });
    expect(errorCode(bad)).toBe('INVALID');
    expect(bad.errors?.[0].extensions?.fieldErrors).toMatchObject({
      url: [expect.stringMatching(/absolute URI/)],
      namespace: [expect.stringMatching(/owner URL/)],
    });
    expect(errorCode(await gql(t, t.admin, CREATE, { input: {} }))).toBe('INVALID');
    expect(dataOf(await gql(t, undefined, LIST, { url })).urlRegistry.totalCount).toBe(0);
  });

  it('lookupUrl answers the registered repository, or null', async () => {
    const { org, admin } = await orgWithPeople(t);
    const url = canonical();
    const source = await createRepo(t, `/orgs/${org.id}`, admin, { canonical_url: url });
    expect(dataOf(await gql(t, undefined, LOOKUP, { url })).lookupUrl).toBeNull();
    dataOf(await gql(t, t.admin, CREATE, { input: { url, namespace: `/orgs/${org.id}/` } }));
    expect(dataOf(await gql(t, undefined, LOOKUP, { url })).lookupUrl).toEqual({
      __typename: 'Source',
      id: source.id,
      url: source.url,
      version: 'HEAD',
      owner: org.id,
    });
    expect(
      dataOf(await gql(t, undefined, LOOKUP, { url, owner: `/orgs/${org.id}/` })).lookupUrl.id,
    ).toBe(source.id);
  });

  it('resolveReference resolves lists of strings and objects, private ones only for members', async () => {
    const { org, admin, member, outsider } = await orgWithPeople(t);
    const url = canonical();
    const open = await createRepo(t, `/orgs/${org.id}`, admin, { canonical_url: url });
    const closed = await createRepo(t, `/orgs/${org.id}`, admin, { public_access: 'None' });
    const references = [
      `${open.url}concepts/X/`,
      { url, namespace: `/orgs/${org.id}/` },
      url,
      closed.url,
    ];
    const asOutsider = dataOf(
      await gql(t, outsider.auth, RESOLVE, { references }),
    ).resolveReference;
    expect(asOutsider.map((r: { resolved: boolean }) => r.resolved)).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(asOutsider[0]).toMatchObject({
      referenceType: 'relative',
      request: `${open.url}concepts/X/`,
      resolutionUrl: open.url,
      urlRegistryEntry: null,
      result: { __typename: 'Source', id: open.id, version: 'HEAD', url: open.url, owner: org.id },
    });
    expect(asOutsider[1]).toMatchObject({
      referenceType: 'canonical',
      request: { url, namespace: `/orgs/${org.id}/` },
      resolutionUrl: url,
    });
    const asMember = dataOf(await gql(t, member.auth, RESOLVE, { references })).resolveReference;
    expect(asMember[3].resolved).toBe(true);
    const scoped = dataOf(
      await gql(t, undefined, RESOLVE, { references: [url], namespace: `/orgs/${org.id}/` }),
    ).resolveReference;
    expect(scoped[0].result.id).toBe(open.id);
    expect(errorCode(await gql(t, undefined, RESOLVE, { references: [{ version: '1' }] }))).toBe(
      'INVALID',
    );
    expect(
      errorCode(await gql(t, undefined, RESOLVE, { references: [url], namespace: 'bad' })),
    ).toBe('INVALID');
  });
});
