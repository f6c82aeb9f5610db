import crypto from 'node:crypto';
import {
  createOrg,
  createTestApp,
  createUser,
  tasksSettled,
  uniqueId,
  type TestApp,
  type TestUser,
} from '../factories';
import { createConcept, createRepo, createVersion, retire } from '../factories/content';
import { orgWithPeople } from '../factories/people';
import { dataOf, errorCode, gql, type GqlResponse } from './gql';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const REPO_FIELDS = `uuid id version url name fullName description website externalId publicAccess
  defaultLocale supportedLocales customValidationSchema canonicalUrl extras ownerType owner ownerUrl
  isActive released retired previousVersion processing createdBy updatedBy
  versionsCount activeConcepts activeMappings`;
const SOURCE_FIELDS = `${REPO_FIELDS} sourceType autoidConceptMnemonic ownerOrg { id } ownerUser { username }`;
const COLLECTION_FIELDS = `${REPO_FIELDS} collectionType preferredSource ownerOrg { id } ownerUser { username }`;

const SOURCE = `query($url: String!) { source(url: $url) { ${SOURCE_FIELDS} } }`;
const COLLECTION = `query($url: String!) { collection(url: $url) { ${COLLECTION_FIELDS} } }`;
const CREATE_SOURCE = `mutation($owner: String!, $input: SourceInput!) {
  createSource(owner: $owner, input: $input) { source { ${SOURCE_FIELDS} } }
}`;
const UPDATE_SOURCE = `mutation($url: String!, $input: SourceInput!) {
  updateSource(url: $url, input: $input) { source { ${SOURCE_FIELDS} } }
}`;
const DELETE_SOURCE = `mutation($url: String!) { deleteSource(url: $url) { deletedId } }`;
const CREATE_COLLECTION = `mutation($owner: String!, $input: CollectionInput!) {
  createCollection(owner: $owner, input: $input) { collection { ${COLLECTION_FIELDS} } }
}`;
const UPDATE_COLLECTION = `mutation($url: String!, $input: CollectionInput!) {
  updateCollection(url: $url, input: $input) { collection { ${COLLECTION_FIELDS} } }
}`;
const DELETE_COLLECTION = `mutation($url: String!) { deleteCollection(url: $url) { deletedId } }`;
const CREATE_SOURCE_VERSION = `mutation($url: String!, $input: VersionInput!) {
  createSourceVersion(url: $url, input: $input) { source { ${SOURCE_FIELDS} } }
}`;
const UPDATE_SOURCE_VERSION = `mutation($url: String!, $input: VersionUpdateInput!) {
  updateSourceVersion(url: $url, input: $input) { source { ${SOURCE_FIELDS} } }
}`;
const DELETE_SOURCE_VERSION = `mutation($url: String!) { deleteSourceVersion(url: $url) { deletedId } }`;
const CREATE_COLLECTION_VERSION = `mutation($url: String!, $input: VersionInput!) {
  createCollectionVersion(url: $url, input: $input) { collection { ${COLLECTION_FIELDS} } }
}`;
const UPDATE_COLLECTION_VERSION = `mutation($url: String!, $input: VersionUpdateInput!) {
  updateCollectionVersion(url: $url, input: $input) { collection { ${COLLECTION_FIELDS} } }
}`;
const DELETE_COLLECTION_VERSION = `mutation($url: String!) { deleteCollectionVersion(url: $url) { deletedId } }`;
const VERSIONS = `query($url: String!) {
  source(url: $url) { versionsCount versions(limit: 0) { totalCount items { version url } } }
}`;

/** The arguments each repository list takes (issue 28: sources and collections only their own). */
const LIST_ARGS: Record<'sources' | 'collections' | 'repos', Record<string, string>> = {
  sources: { sourceType: '[String!]' },
  collections: { collectionType: '[String!]' },
  repos: {
    sourceType: '[String!]',
    collectionType: '[String!]',
    repoType: 'String',
    repoTypes: '[RepositoryType!]',
  },
};
const COMMON_ARGS: Record<string, string> = {
  owner: 'String',
  q: 'String',
  limit: 'Int! = 0',
  offset: 'Int! = 0',
  sort: 'String',
  sortBy: 'RepositorySort',
  sortDesc: 'Boolean! = false',
  ownerType: 'String',
  ownerTypes: '[OwnerType!]',
  allVersions: 'Boolean! = false',
  locale: '[String!]',
  extras: '[ExtrasFilterInput!]',
  extrasExists: '[String!]',
};
const listQuery = (field: 'sources' | 'collections' | 'repos') => {
  const args = { ...COMMON_ARGS, ...LIST_ARGS[field] };
  const declared = Object.entries(args).map(([name, type]) => `$${name}: ${type}`);
  const passed = Object.keys(args).map((name) => `${name}: $${name}`);
  return `query(${declared.join(', ')}) {
  ${field}(${passed.join(', ')}) { totalCount items { __typename id version owner } }
}`;
};

interface Item {
  __typename: string;
  id: string;
  version: string;
  owner: string;
}

const sourceUrl = (org: string, id: string, version?: string) =>
  `/orgs/${org}/sources/${id}/${version === undefined ? '' : `${version}/`}`;
const collectionUrl = (org: string, id: string, version?: string) =>
  `/orgs/${org}/collections/${id}/${version === undefined ? '' : `${version}/`}`;

/** A word no other test file writes, to scope searches to this test's records. */
const tag = () => `zq${crypto.randomBytes(7).toString('hex')}`;

function fieldErrorKeys(res: GqlResponse): string[] {
  expect(errorCode(res)).toBe('INVALID');
  return Object.keys(res.errors![0].extensions!.fieldErrors ?? {}).sort();
}

/** A source of `owner` (an owner URL: `/orgs/x/`, `/user/`), made with the shared factory. */
async function makeSource(
  by: TestUser,
  owner: string,
  input: Record<string, unknown> = {},
): Promise<{ id: string; url: string; uuid: string }> {
  const made = await createRepo(t, owner.replace(/\/$/, ''), by, input, 'sources');
  return { id: made.id, url: made.url, uuid: made.body.uuid as string };
}

/** A collection of `owner`, made with the shared factory. */
async function makeCollection(
  by: TestUser,
  owner: string,
  input: Record<string, unknown> = {},
): Promise<{ id: string; url: string }> {
  const made = await createRepo(t, owner.replace(/\/$/, ''), by, input, 'collections');
  return { id: made.id, url: made.url };
}

/** A version of a source (`input.id`, other fields as sent), made with the shared factory. */
async function makeVersion(
  by: TestUser,
  url: string,
  { id, ...fields }: Record<string, unknown>,
): Promise<void> {
  await createVersion(t, url, by, id as string, fields);
}

/** `createSourceVersion`, where its answer is what a test checks. */
async function createSourceVersion(
  by: TestUser,
  url: string,
  input: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  return dataOf(await gql(t, by.auth, CREATE_SOURCE_VERSION, { url, input })).createSourceVersion
    .source as Record<string, unknown>;
}

async function list(
  field: 'sources' | 'collections' | 'repos',
  auth: string | undefined,
  vars: Record<string, unknown>,
): Promise<{ totalCount: number; items: Item[] }> {
  const page = dataOf(await gql(t, auth, listQuery(field), vars))[field];
  return { totalCount: page.totalCount as number, items: page.items as Item[] };
}

async function listIds(
  field: 'sources' | 'collections' | 'repos',
  auth: string | undefined,
  vars: Record<string, unknown>,
): Promise<string[]> {
  return (await list(field, auth, vars)).items.map((i) => i.id);
}

async function versionsOf(auth: string | undefined, url: string) {
  const source = dataOf(await gql(t, auth, VERSIONS, { url })).source;
  return {
    versionsCount: source.versionsCount as number,
    totalCount: source.versions.totalCount as number,
    versions: (source.versions.items as Array<{ version: string }>).map((v) => v.version),
  };
}

describe('createSource', () => {
  let admin: TestUser;
  let outsider: TestUser;
  let org: string;
  beforeAll(async () => {
    const people = await orgWithPeople(t);
    ({ admin, outsider } = people);
    org = people.org.id;
  });

  test('an org administrator creates a source with the defaults filled in', async () => {
    const id = uniqueId('src');
    const source = dataOf(
      await gql(t, admin.auth, CREATE_SOURCE, {
        owner: `/orgs/${org}/`,
        input: { id, name: 'Clinical terms', description: 'Diagnoses', extras: { a: 1 } },
      }),
    ).createSource.source;
    expect(source).toMatchObject({
      id,
      version: 'HEAD',
      url: `/orgs/${org}/sources/${id}/`,
      name: 'Clinical terms',
      fullName: 'Clinical terms',
      description: 'Diagnoses',
      extras: { a: 1 },
      publicAccess: 'VIEW',
      defaultLocale: 'en',
      supportedLocales: ['en'],
      sourceType: 'dictionary',
      ownerType: 'ORGANIZATION',
      owner: org,
      ownerUrl: `/orgs/${org}/`,
      ownerOrg: { id: org },
      ownerUser: null,
      isActive: true,
      released: false,
      retired: false,
      previousVersion: null,
      createdBy: admin.username,
      updatedBy: admin.username,
      versionsCount: 1,
      activeConcepts: 0,
      activeMappings: 0,
    });
    const read = dataOf(await gql(t, undefined, SOURCE, { url: source.url })).source;
    expect(read).toEqual(source);
  });

  test('the default locale is always among the supported locales', async () => {
    const source = dataOf(
      await gql(t, admin.auth, CREATE_SOURCE, {
        owner: `/orgs/${org}/`,
        input: {
          id: uniqueId('src'),
          name: 'French',
          defaultLocale: 'fr',
          supportedLocales: ['en', 'es'],
        },
      }),
    ).createSource.source;
    expect(source.defaultLocale).toBe('fr');
    expect(source.supportedLocales).toEqual(['fr', 'en', 'es']);
    expect(source.supportedLocales).toContain(source.defaultLocale);
  });

  test('an outsider is refused with FORBIDDEN and nothing is created (members may create)', async () => {
    const id = uniqueId('src');
    const res = await gql(t, outsider.auth, CREATE_SOURCE, {
      owner: `/orgs/${org}/`,
      input: { id, name: 'Nope' },
    });
    expect(errorCode(res)).toBe('FORBIDDEN');
    expect(res.data).toBeNull();
    expect(errorCode(await gql(t, t.admin, SOURCE, { url: sourceUrl(org, id) }))).toBe('NOT_FOUND');
  });

  test('an anonymous caller is refused with UNAUTHENTICATED and nothing is created', async () => {
    const id = uniqueId('src');
    const res = await gql(t, undefined, CREATE_SOURCE, {
      owner: `/orgs/${org}/`,
      input: { id, name: 'Nope' },
    });
    expect(errorCode(res)).toBe('UNAUTHENTICATED');
    expect(errorCode(await gql(t, t.admin, SOURCE, { url: sourceUrl(org, id) }))).toBe('NOT_FOUND');
  });

  test('a user outside the org is refused with FORBIDDEN', async () => {
    const id = uniqueId('src');
    const res = await gql(t, outsider.auth, CREATE_SOURCE, {
      owner: `/orgs/${org}/`,
      input: { id, name: 'Nope' },
    });
    expect(errorCode(res)).toBe('FORBIDDEN');
    expect(errorCode(await gql(t, t.admin, SOURCE, { url: sourceUrl(org, id) }))).toBe('NOT_FOUND');
  });

  test('a user creates a source under /user/, owned by them', async () => {
    const user = await createUser(t);
    const id = uniqueId('src');
    const source = dataOf(
      await gql(t, user.auth, CREATE_SOURCE, { owner: '/user/', input: { id, name: 'Mine' } }),
    ).createSource.source;
    expect(source).toMatchObject({
      id,
      url: `/users/${user.username}/sources/${id}/`,
      ownerType: 'USER',
      owner: user.username,
      ownerUrl: `/users/${user.username}/`,
      ownerOrg: null,
      ownerUser: { username: user.username },
      versionsCount: 1,
    });
    const read = dataOf(
      await gql(t, undefined, SOURCE, { url: `/users/${user.username}/sources/${id}/` }),
    ).source;
    expect(read.uuid).toBe(source.uuid);
  });

  test("a user may create under /users/<self>/ but not under another user's space", async () => {
    const user = await createUser(t);
    const other = await createUser(t);
    const mine = await gql(t, user.auth, CREATE_SOURCE, {
      owner: `/users/${user.username}/`,
      input: { id: uniqueId('src'), name: 'Mine' },
    });
    expect(dataOf(mine).createSource.source.owner).toBe(user.username);
    const id = uniqueId('src');
    const theirs = await gql(t, user.auth, CREATE_SOURCE, {
      owner: `/users/${other.username}/`,
      input: { id, name: 'Theirs' },
    });
    expect(errorCode(theirs)).toBe('FORBIDDEN');
    expect(
      errorCode(
        await gql(t, other.auth, SOURCE, { url: `/users/${other.username}/sources/${id}/` }),
      ),
    ).toBe('NOT_FOUND');
  });

  test('an anonymous caller cannot create under /user/', async () => {
    const res = await gql(t, undefined, CREATE_SOURCE, {
      owner: '/user/',
      input: { id: uniqueId('src'), name: 'Nope' },
    });
    expect(errorCode(res)).toBe('UNAUTHENTICATED');
  });

  test('an id taken by a source or a collection of the owner, in any case, is INVALID on id', async () => {
    const { id: sourceId } = await makeSource(admin, `/orgs/${org}/`);
    const { id: collectionId } = await makeCollection(admin, `/orgs/${org}/`);
    for (const dup of [
      sourceId,
      sourceId.toUpperCase(),
      collectionId,
      collectionId.toUpperCase(),
    ]) {
      const asSource = await gql(t, admin.auth, CREATE_SOURCE, {
        owner: `/orgs/${org}/`,
        input: { id: dup, name: 'Again' },
      });
      expect(fieldErrorKeys(asSource)).toEqual(['id']);
      const asCollection = await gql(t, admin.auth, CREATE_COLLECTION, {
        owner: `/orgs/${org}/`,
        input: { id: dup, name: 'Again' },
      });
      expect(fieldErrorKeys(asCollection)).toEqual(['id']);
    }
    // Nothing was created: each id is still only the original repository.
    for (const dup of [sourceId.toUpperCase(), collectionId, collectionId.toUpperCase()]) {
      expect(errorCode(await gql(t, t.admin, SOURCE, { url: sourceUrl(org, dup) }))).toBe(
        'NOT_FOUND',
      );
    }
    for (const dup of [sourceId, sourceId.toUpperCase(), collectionId.toUpperCase()]) {
      expect(errorCode(await gql(t, t.admin, COLLECTION, { url: collectionUrl(org, dup) }))).toBe(
        'NOT_FOUND',
      );
    }
    expect(
      dataOf(await gql(t, undefined, SOURCE, { url: sourceUrl(org, sourceId) })).source.name,
    ).toBe(`Source ${sourceId}`);
  });

  test('the same id is free in another owner', async () => {
    const { id } = await makeSource(admin, `/orgs/${org}/`);
    const otherOrg = (await createOrg(t, admin)).id;
    const again = await makeSource(admin, `/orgs/${otherOrg}/`, { id });
    expect(again.url).toBe(sourceUrl(otherOrg, id));
    const mine = await makeSource(admin, '/user/', { id });
    expect(mine.url).toBe(`/users/${admin.username}/sources/${id}/`);
  });

  test('bad values are INVALID with a field error each and nothing is created', async () => {
    const id = uniqueId('src');
    const res = await gql(t, admin.auth, CREATE_SOURCE, {
      owner: `/orgs/${org}/`,
      input: {
        id,
        name: 'Bad',
        defaultLocale: 'not a locale!',
        canonicalUrl: 'nope',
        website: 'example.org',
        autoidConceptMnemonic: 'random',
      },
    });
    expect(fieldErrorKeys(res)).toEqual([
      'autoidConceptMnemonic',
      'canonicalUrl',
      'defaultLocale',
      'website',
    ]);
    expect(errorCode(await gql(t, t.admin, SOURCE, { url: sourceUrl(org, id) }))).toBe('NOT_FOUND');
  });

  test('a bad supported locale is INVALID on supportedLocales', async () => {
    const id = uniqueId('src');
    const res = await gql(t, admin.auth, CREATE_SOURCE, {
      owner: `/orgs/${org}/`,
      input: { id, name: 'Bad', supportedLocales: ['en', 'not a locale!'] },
    });
    const keys = fieldErrorKeys(res);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^supportedLocales/);
    expect(errorCode(await gql(t, t.admin, SOURCE, { url: sourceUrl(org, id) }))).toBe('NOT_FOUND');
  });

  test('a missing name, a malformed id or a missing id are INVALID on that field', async () => {
    const id = uniqueId('src');
    const noName = await gql(t, admin.auth, CREATE_SOURCE, {
      owner: `/orgs/${org}/`,
      input: { id },
    });
    expect(fieldErrorKeys(noName)).toEqual(['name']);
    const badId = await gql(t, admin.auth, CREATE_SOURCE, {
      owner: `/orgs/${org}/`,
      input: { id: 'has space/slash', name: 'X' },
    });
    expect(fieldErrorKeys(badId)).toEqual(['id']);
    const noId = await gql(t, admin.auth, CREATE_SOURCE, {
      owner: `/orgs/${org}/`,
      input: { name: 'X' },
    });
    expect(fieldErrorKeys(noId)).toEqual(['id']);
    expect(errorCode(await gql(t, t.admin, SOURCE, { url: sourceUrl(org, id) }))).toBe('NOT_FOUND');
  });

  test('a malformed owner is INVALID on owner; an unknown org is NOT_FOUND', async () => {
    const malformed = await gql(t, admin.auth, CREATE_SOURCE, {
      owner: `/orgz/${org}/`,
      input: { id: uniqueId('src'), name: 'X' },
    });
    expect(fieldErrorKeys(malformed)).toEqual(['owner']);
    const unknown = await gql(t, admin.auth, CREATE_SOURCE, {
      owner: `/orgs/${uniqueId('noorg')}/`,
      input: { id: uniqueId('src'), name: 'X' },
    });
    expect(errorCode(unknown)).toBe('NOT_FOUND');
  });
});

describe('source(url)', () => {
  let admin: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let org: string;
  beforeAll(async () => {
    const people = await orgWithPeople(t);
    ({ admin, member, outsider } = people);
    org = people.org.id;
  });

  test('reads HEAD, with or without the surrounding slashes and as …/HEAD/', async () => {
    const { id, uuid } = await makeSource(admin, `/orgs/${org}/`);
    for (const url of [
      sourceUrl(org, id),
      `orgs/${org}/sources/${id}`,
      sourceUrl(org, id, 'HEAD'),
    ]) {
      const source = dataOf(await gql(t, undefined, SOURCE, { url })).source;
      expect(source).toMatchObject({ uuid, id, version: 'HEAD', url: sourceUrl(org, id) });
    }
  });

  test('reads a version by its id, with its own uuid and url', async () => {
    const { id, url, uuid } = await makeSource(admin, `/orgs/${org}/`);
    const created = await createSourceVersion(admin, url, { id: 'v1', description: 'First' });
    const v1 = dataOf(await gql(t, undefined, SOURCE, { url: sourceUrl(org, id, 'v1') })).source;
    expect(v1).toMatchObject({
      id,
      version: 'v1',
      url: sourceUrl(org, id, 'v1'),
      description: 'First',
      uuid: created.uuid,
      versionsCount: 2,
    });
    expect(v1.uuid).not.toBe(uuid);
  });

  test('latest is NOT_FOUND until a version is released, then the newest released one', async () => {
    const { id, url } = await makeSource(admin, `/orgs/${org}/`);
    const latest = { url: sourceUrl(org, id, 'latest') };
    expect(errorCode(await gql(t, undefined, SOURCE, latest))).toBe('NOT_FOUND');
    await makeVersion(admin, url, { id: 'v1' });
    expect(errorCode(await gql(t, undefined, SOURCE, latest))).toBe('NOT_FOUND');
    await makeVersion(admin, url, { id: 'v2', released: true });
    await makeVersion(admin, url, { id: 'v3' });
    const read = dataOf(await gql(t, undefined, SOURCE, latest)).source;
    expect(read).toMatchObject({ version: 'v2', released: true, url: sourceUrl(org, id, 'v2') });
  });

  test('a malformed url is INVALID on url', async () => {
    const { id } = await makeSource(admin, `/orgs/${org}/`);
    for (const url of [
      `/orgs/${org}/`,
      'nonsense',
      `/orgs/${org}/sources/`,
      `/orgs/${org}/collections/${id}/`,
      `/orgs/${org}/sources/${id}/v1/extra/`,
      `/orgz/${org}/sources/${id}/`,
    ]) {
      expect(fieldErrorKeys(await gql(t, admin.auth, SOURCE, { url }))).toEqual(['url']);
    }
  });

  test('an unknown source, version or owner is NOT_FOUND, even to the superuser', async () => {
    const { id } = await makeSource(admin, `/orgs/${org}/`);
    for (const url of [
      sourceUrl(org, uniqueId('nosrc')),
      sourceUrl(org, id, 'v9'),
      sourceUrl(uniqueId('noorg'), id),
      `/users/${uniqueId('nouser')}/sources/${id}/`,
    ]) {
      expect(errorCode(await gql(t, t.admin, SOURCE, { url }))).toBe('NOT_FOUND');
    }
  });

  test('a collection is not a source: source() of a collection id is NOT_FOUND', async () => {
    const { id } = await makeCollection(admin, `/orgs/${org}/`);
    expect(errorCode(await gql(t, t.admin, SOURCE, { url: sourceUrl(org, id) }))).toBe('NOT_FOUND');
    const { id: sourceId } = await makeSource(admin, `/orgs/${org}/`);
    expect(
      errorCode(await gql(t, t.admin, COLLECTION, { url: collectionUrl(org, sourceId) })),
    ).toBe('NOT_FOUND');
  });

  describe('a private source (publicAccess None)', () => {
    let id: string;
    beforeAll(async () => {
      ({ id } = await makeSource(admin, `/orgs/${org}/`, { publicAccess: 'None' }));
      await makeVersion(admin, sourceUrl(org, id), { id: 'v1', released: true });
    });

    test('is refused to an anonymous caller with UNAUTHENTICATED', async () => {
      for (const version of [undefined, 'v1', 'latest']) {
        const res = await gql(t, undefined, SOURCE, { url: sourceUrl(org, id, version) });
        expect(errorCode(res)).toBe('UNAUTHENTICATED');
        expect(res.data).toEqual({ source: null });
      }
    });

    test('is refused to a signed-in outsider with FORBIDDEN', async () => {
      for (const version of [undefined, 'v1', 'latest']) {
        const res = await gql(t, outsider.auth, SOURCE, { url: sourceUrl(org, id, version) });
        expect(errorCode(res)).toBe('FORBIDDEN');
      }
    });

    test('is readable by a plain member of the org and by the superuser', async () => {
      for (const auth of [member.auth, admin.auth, t.admin]) {
        const head = dataOf(await gql(t, auth, SOURCE, { url: sourceUrl(org, id) })).source;
        expect(head).toMatchObject({ id, publicAccess: 'NONE', version: 'HEAD' });
        const v1 = dataOf(await gql(t, auth, SOURCE, { url: sourceUrl(org, id, 'v1') })).source;
        expect(v1.version).toBe('v1');
      }
    });

    test("a user's private source is readable by that user only (and the superuser)", async () => {
      const user = await createUser(t);
      const mine = await makeSource(user, '/user/', { publicAccess: 'None' });
      expect(dataOf(await gql(t, user.auth, SOURCE, { url: mine.url })).source.id).toBe(mine.id);
      expect(dataOf(await gql(t, t.admin, SOURCE, { url: mine.url })).source.id).toBe(mine.id);
      expect(errorCode(await gql(t, outsider.auth, SOURCE, { url: mine.url }))).toBe('FORBIDDEN');
      expect(errorCode(await gql(t, undefined, SOURCE, { url: mine.url }))).toBe('UNAUTHENTICATED');
    });
  });
});

describe('updateSource', () => {
  let admin: TestUser;
  let member: TestUser;
  let org: string;
  beforeAll(async () => {
    const people = await orgWithPeople(t);
    ({ admin, member } = people);
    org = people.org.id;
  });

  test('changes only the fields sent', async () => {
    const { id, url } = await makeSource(admin, `/orgs/${org}/`, {
      name: 'Original',
      description: 'Kept',
      website: 'https://kept.example.org',
      canonicalUrl: 'http://example.org/fhir/kept',
      extras: { keep: true },
      sourceType: 'Interface Terminology',
      supportedLocales: ['en', 'fr'],
      autoidConceptMnemonic: 'sequential',
    });
    const updated = dataOf(
      await gql(t, admin.auth, UPDATE_SOURCE, { url, input: { name: 'Renamed' } }),
    ).updateSource.source;
    expect(updated).toMatchObject({
      id,
      version: 'HEAD',
      name: 'Renamed',
      // fullName was filled from the name at creation and is not re-derived.
      fullName: 'Original',
      description: 'Kept',
      website: 'https://kept.example.org',
      canonicalUrl: 'http://example.org/fhir/kept',
      extras: { keep: true },
      sourceType: 'Interface Terminology',
      supportedLocales: ['en', 'fr'],
      autoidConceptMnemonic: 'sequential',
      publicAccess: 'VIEW',
      updatedBy: admin.username,
    });
    const read = dataOf(await gql(t, undefined, SOURCE, { url })).source;
    expect(read).toEqual(updated);
  });

  test('a version created before keeps the old metadata while HEAD shows the new', async () => {
    const { id, url } = await makeSource(admin, `/orgs/${org}/`, {
      name: 'Before',
      description: 'Old text',
      extras: { era: 'old' },
    });
    await makeVersion(admin, url, { id: 'v1' });
    dataOf(
      await gql(t, admin.auth, UPDATE_SOURCE, {
        url,
        input: { name: 'After', description: 'New text', extras: { era: 'new' } },
      }),
    );
    const v1 = dataOf(await gql(t, undefined, SOURCE, { url: sourceUrl(org, id, 'v1') })).source;
    expect(v1).toMatchObject({
      version: 'v1',
      name: 'Before',
      description: 'Old text',
      extras: { era: 'old' },
    });
    const head = dataOf(await gql(t, undefined, SOURCE, { url })).source;
    expect(head).toMatchObject({
      version: 'HEAD',
      name: 'After',
      description: 'New text',
      extras: { era: 'new' },
    });
    // A version made now freezes the new metadata.
    const v2 = await createSourceVersion(admin, url, { id: 'v2' });
    expect(v2).toMatchObject({ version: 'v2', name: 'After' });
  });

  test('making a source private hides it from outsiders', async () => {
    const outsider = await createUser(t);
    const { url } = await makeSource(admin, `/orgs/${org}/`);
    dataOf(await gql(t, admin.auth, UPDATE_SOURCE, { url, input: { publicAccess: 'None' } }));
    expect(errorCode(await gql(t, outsider.auth, SOURCE, { url }))).toBe('FORBIDDEN');
    expect(dataOf(await gql(t, member.auth, SOURCE, { url })).source.publicAccess).toBe('NONE');
  });

  test('a changed id or bad values are INVALID and nothing changes', async () => {
    const { id, url } = await makeSource(admin, `/orgs/${org}/`, { name: 'Stays' });
    const changedId = await gql(t, admin.auth, UPDATE_SOURCE, {
      url,
      input: { id: uniqueId('src'), name: 'Moved' },
    });
    expect(fieldErrorKeys(changedId)).toEqual(['id']);
    const bad = await gql(t, admin.auth, UPDATE_SOURCE, {
      url,
      input: { name: ' ', canonicalUrl: 'nope', defaultLocale: 'not a locale!' },
    });
    expect(fieldErrorKeys(bad)).toEqual(['canonicalUrl', 'defaultLocale', 'name']);
    const read = dataOf(await gql(t, undefined, SOURCE, { url })).source;
    expect(read).toMatchObject({ id, name: 'Stays', canonicalUrl: null, defaultLocale: 'en' });
  });

  test('an outsider is FORBIDDEN, an anonymous caller UNAUTHENTICATED', async () => {
    const { url } = await makeSource(admin, `/orgs/${org}/`, { name: 'Stays' });
    const outsider = await createUser(t);
    expect(
      errorCode(await gql(t, outsider.auth, UPDATE_SOURCE, { url, input: { name: 'X' } })),
    ).toBe('FORBIDDEN');
    expect(errorCode(await gql(t, undefined, UPDATE_SOURCE, { url, input: { name: 'X' } }))).toBe(
      'UNAUTHENTICATED',
    );
    expect(dataOf(await gql(t, undefined, SOURCE, { url })).source.name).toBe('Stays');
  });

  test('updating an unknown source is NOT_FOUND', async () => {
    const res = await gql(t, t.admin, UPDATE_SOURCE, {
      url: sourceUrl(org, uniqueId('nosrc')),
      input: { name: 'X' },
    });
    expect(errorCode(res)).toBe('NOT_FOUND');
  });
});

describe('deleteSource', () => {
  test('an org administrator deletes a source with its versions; its id is free again', async () => {
    const admin = await createUser(t);
    const org = (await createOrg(t, admin)).id;
    const { id, url } = await makeSource(admin, `/orgs/${org}/`);
    await makeVersion(admin, url, { id: 'v1' });
    expect(dataOf(await gql(t, admin.auth, DELETE_SOURCE, { url }))).toEqual({
      deleteSource: { deletedId: expect.any(String) },
    });
    for (const version of [undefined, 'v1']) {
      expect(errorCode(await gql(t, t.admin, SOURCE, { url: sourceUrl(org, id, version) }))).toBe(
        'NOT_FOUND',
      );
    }
    expect(await listIds('sources', t.admin, { owner: `/orgs/${org}/` })).toEqual([]);
    const again = await makeSource(admin, `/orgs/${org}/`, { id });
    expect(again.url).toBe(url);
  });

  test('an outsider is FORBIDDEN and an anonymous caller UNAUTHENTICATED; the source stays', async () => {
    const admin = await createUser(t);
    const outsider = await createUser(t);
    const org = (await createOrg(t, admin)).id;
    const { id, url } = await makeSource(admin, `/orgs/${org}/`);
    expect(errorCode(await gql(t, outsider.auth, DELETE_SOURCE, { url }))).toBe('FORBIDDEN');
    expect(errorCode(await gql(t, undefined, DELETE_SOURCE, { url }))).toBe('UNAUTHENTICATED');
    expect(dataOf(await gql(t, undefined, SOURCE, { url })).source.id).toBe(id);
  });
});

describe('source versions', () => {
  let admin: TestUser;
  let org: string;
  beforeAll(async () => {
    const people = await orgWithPeople(t);
    ({ admin } = people);
    org = people.org.id;
  });

  test('createSourceVersion freezes HEAD under the new id', async () => {
    const { id, url } = await makeSource(admin, `/orgs/${org}/`, { name: 'Frozen' });
    const v1 = await createSourceVersion(admin, url, {
      id: 'v1',
      description: 'First release',
      released: true,
      externalId: 'ext-1',
      extras: { notes: 'x' },
    });
    expect(v1).toMatchObject({
      id,
      version: 'v1',
      url: sourceUrl(org, id, 'v1'),
      name: 'Frozen',
      description: 'First release',
      released: true,
      retired: false,
      processing: false,
      previousVersion: null,
      createdBy: admin.username,
      versionsCount: 2,
    });
  });

  test('HEAD and latest are reserved version ids (INVALID on id)', async () => {
    const { url } = await makeSource(admin, `/orgs/${org}/`);
    for (const reserved of ['HEAD', 'latest', 'Latest', 'head']) {
      const res = await gql(t, admin.auth, CREATE_SOURCE_VERSION, { url, input: { id: reserved } });
      expect(fieldErrorKeys(res)).toEqual(['id']);
    }
    expect((await versionsOf(admin.auth, url)).versionsCount).toBe(1);
  });

  test('a version id already used, in any case, is a CONFLICT', async () => {
    const { url } = await makeSource(admin, `/orgs/${org}/`);
    await makeVersion(admin, url, { id: 'v1', description: 'original' });
    for (const dup of ['v1', 'V1']) {
      const res = await gql(t, admin.auth, CREATE_SOURCE_VERSION, { url, input: { id: dup } });
      expect(errorCode(res)).toBe('CONFLICT');
    }
    expect(await versionsOf(admin.auth, url)).toEqual({
      versionsCount: 2,
      totalCount: 2,
      versions: ['v1', 'HEAD'],
    });
  });

  test('previousVersion defaults to the newest version; an explicit one must exist', async () => {
    const { id, url } = await makeSource(admin, `/orgs/${org}/`);
    expect((await createSourceVersion(admin, url, { id: 'v1' })).previousVersion).toBeNull();
    expect((await createSourceVersion(admin, url, { id: 'v2' })).previousVersion).toBe('v1');
    expect((await createSourceVersion(admin, url, { id: 'v3' })).previousVersion).toBe('v2');
    expect(
      (await createSourceVersion(admin, url, { id: 'v4', previousVersion: 'v1' })).previousVersion,
    ).toBe('v1');
    const unknown = await gql(t, admin.auth, CREATE_SOURCE_VERSION, {
      url,
      input: { id: 'v5', previousVersion: 'nope' },
    });
    expect(fieldErrorKeys(unknown)).toEqual(['previousVersion']);
    expect(errorCode(await gql(t, admin.auth, SOURCE, { url: sourceUrl(org, id, 'v5') }))).toBe(
      'NOT_FOUND',
    );
  });

  test('an outsider may not create versions (FORBIDDEN); anonymous UNAUTHENTICATED', async () => {
    const { url } = await makeSource(admin, `/orgs/${org}/`);
    const outsider = await createUser(t);
    expect(
      errorCode(await gql(t, outsider.auth, CREATE_SOURCE_VERSION, { url, input: { id: 'v1' } })),
    ).toBe('FORBIDDEN');
    expect(
      errorCode(await gql(t, undefined, CREATE_SOURCE_VERSION, { url, input: { id: 'v1' } })),
    ).toBe('UNAUTHENTICATED');
    expect((await versionsOf(admin.auth, url)).versionsCount).toBe(1);
  });

  test('updateSourceVersion sets released and description; latest follows', async () => {
    const { id, url } = await makeSource(admin, `/orgs/${org}/`, { description: 'HEAD text' });
    await makeVersion(admin, url, { id: 'v1' });
    const latest = { url: sourceUrl(org, id, 'latest') };
    expect(errorCode(await gql(t, undefined, SOURCE, latest))).toBe('NOT_FOUND');
    const updated = dataOf(
      await gql(t, admin.auth, UPDATE_SOURCE_VERSION, {
        url: sourceUrl(org, id, 'v1'),
        input: { released: true, description: 'Now released' },
      }),
    ).updateSourceVersion.source;
    expect(updated).toMatchObject({
      version: 'v1',
      released: true,
      description: 'Now released',
      updatedBy: admin.username,
    });
    expect(dataOf(await gql(t, undefined, SOURCE, latest)).source).toMatchObject({
      version: 'v1',
      description: 'Now released',
    });
    // HEAD's own description is untouched.
    expect(dataOf(await gql(t, undefined, SOURCE, { url })).source.description).toBe('HEAD text');
    // Unreleasing makes latest disappear again.
    dataOf(
      await gql(t, admin.auth, UPDATE_SOURCE_VERSION, {
        url: sourceUrl(org, id, 'v1'),
        input: { released: false },
      }),
    );
    expect(errorCode(await gql(t, undefined, SOURCE, latest))).toBe('NOT_FOUND');
    const v1 = dataOf(await gql(t, undefined, SOURCE, { url: sourceUrl(org, id, 'v1') })).source;
    expect(v1).toMatchObject({ released: false, description: 'Now released' });
  });

  test('updateSourceVersion by an outsider is FORBIDDEN; of an unknown version NOT_FOUND', async () => {
    const { id, url } = await makeSource(admin, `/orgs/${org}/`);
    await makeVersion(admin, url, { id: 'v1' });
    const v1 = sourceUrl(org, id, 'v1');
    const outsider = await createUser(t);
    expect(
      errorCode(
        await gql(t, outsider.auth, UPDATE_SOURCE_VERSION, { url: v1, input: { released: true } }),
      ),
    ).toBe('FORBIDDEN');
    expect(dataOf(await gql(t, undefined, SOURCE, { url: v1 })).source.released).toBe(false);
    expect(
      errorCode(
        await gql(t, admin.auth, UPDATE_SOURCE_VERSION, {
          url: sourceUrl(org, id, 'v9'),
          input: { released: true },
        }),
      ),
    ).toBe('NOT_FOUND');
  });

  test('deleting HEAD is NOT_ALLOWED', async () => {
    const { id, url } = await makeSource(admin, `/orgs/${org}/`);
    const res = await gql(t, admin.auth, DELETE_SOURCE_VERSION, {
      url: sourceUrl(org, id, 'HEAD'),
    });
    expect(errorCode(res)).toBe('NOT_ALLOWED');
    expect(await versionsOf(admin.auth, url)).toEqual({
      versionsCount: 1,
      totalCount: 1,
      versions: ['HEAD'],
    });
  });

  test('deleting a version another is based on is a CONFLICT; a leaf is deleted', async () => {
    const { id, url } = await makeSource(admin, `/orgs/${org}/`);
    await makeVersion(admin, url, { id: 'v1' });
    await makeVersion(admin, url, { id: 'v2' });
    const conflict = await gql(t, admin.auth, DELETE_SOURCE_VERSION, {
      url: sourceUrl(org, id, 'v1'),
    });
    expect(errorCode(conflict)).toBe('CONFLICT');
    expect(conflict.errors![0].message).toContain('v2');
    expect(
      dataOf(await gql(t, admin.auth, DELETE_SOURCE_VERSION, { url: sourceUrl(org, id, 'v2') })),
    ).toEqual({ deleteSourceVersion: { deletedId: expect.any(String) } });
    expect(errorCode(await gql(t, admin.auth, SOURCE, { url: sourceUrl(org, id, 'v2') }))).toBe(
      'NOT_FOUND',
    );
    // With v2 gone, v1 is a leaf and may go too.
    dataOf(await gql(t, admin.auth, DELETE_SOURCE_VERSION, { url: sourceUrl(org, id, 'v1') }));
    expect(await versionsOf(admin.auth, url)).toEqual({
      versionsCount: 1,
      totalCount: 1,
      versions: ['HEAD'],
    });
  });

  test('deleteSourceVersion by an outsider is FORBIDDEN and of an unknown version NOT_FOUND', async () => {
    const { id, url } = await makeSource(admin, `/orgs/${org}/`);
    await makeVersion(admin, url, { id: 'v1' });
    const outsider = await createUser(t);
    expect(
      errorCode(
        await gql(t, outsider.auth, DELETE_SOURCE_VERSION, { url: sourceUrl(org, id, 'v1') }),
      ),
    ).toBe('FORBIDDEN');
    expect(
      errorCode(await gql(t, admin.auth, DELETE_SOURCE_VERSION, { url: sourceUrl(org, id, 'v9') })),
    ).toBe('NOT_FOUND');
    expect((await versionsOf(admin.auth, url)).versions).toEqual(['v1', 'HEAD']);
  });
});

describe('Source.versions and counts', () => {
  let admin: TestUser;
  let org: string;
  beforeAll(async () => {
    admin = await createUser(t);
    org = (await createOrg(t, admin)).id;
  });

  test('versions are listed newest first with HEAD last; versionsCount counts HEAD', async () => {
    const { id, url } = await makeSource(admin, `/orgs/${org}/`);
    for (const v of ['2024-01', '2024-02', '2023-12']) await makeVersion(admin, url, { id: v });
    expect(await versionsOf(undefined, url)).toEqual({
      versionsCount: 4,
      totalCount: 4,
      versions: ['2023-12', '2024-02', '2024-01', 'HEAD'],
    });
    const paged = dataOf(
      await gql(
        t,
        undefined,
        `query($url: String!) { source(url: $url) {
          versions(limit: 2, offset: 1) { totalCount items { version url } } } }`,
        { url },
      ),
    ).source.versions;
    expect(paged).toEqual({
      totalCount: 4,
      items: [
        { version: '2024-02', url: sourceUrl(org, id, '2024-02') },
        { version: '2024-01', url: sourceUrl(org, id, '2024-01') },
      ],
    });
    // A version sees the same list of versions.
    expect((await versionsOf(undefined, sourceUrl(org, id, '2024-01'))).versions).toEqual([
      '2023-12',
      '2024-02',
      '2024-01',
      'HEAD',
    ]);
  });

  test('activeConcepts follows HEAD while a version keeps the count it was frozen with', async () => {
    const { id, url } = await makeSource(admin, `/orgs/${org}/`);
    const counts = async (version?: string) => {
      const s = dataOf(
        await gql(t, undefined, SOURCE, { url: sourceUrl(org, id, version) }),
      ).source;
      return [s.activeConcepts as number, s.activeMappings as number];
    };
    await createConcept(t, url, admin, { id: 'C1' });
    expect(await counts()).toEqual([1, 0]);
    await makeVersion(admin, url, { id: 'v1' });
    await createConcept(t, url, admin, { id: 'C2' });
    await createConcept(t, url, admin, { id: 'C3' });
    expect(await counts()).toEqual([3, 0]);
    expect(await counts('v1')).toEqual([1, 0]);
    await makeVersion(admin, url, { id: 'v2', released: true });
    await retire(t, url, admin, 'concepts', 'C1');
    expect(await counts()).toEqual([2, 0]);
    expect(await counts('v1')).toEqual([1, 0]);
    expect(await counts('v2')).toEqual([3, 0]);
    expect(await counts('latest')).toEqual([3, 0]);
    // The counts agree when the versions are read as a list.
    const listed = dataOf(
      await gql(
        t,
        undefined,
        `query($url: String!) { source(url: $url) {
          versions(limit: 0) { items { version activeConcepts } } } }`,
        { url },
      ),
    ).source.versions.items;
    expect(listed).toEqual([
      { version: 'v2', activeConcepts: 3 },
      { version: 'v1', activeConcepts: 1 },
      { version: 'HEAD', activeConcepts: 2 },
    ]);
  });
});

describe('collections', () => {
  let admin: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let org: string;
  beforeAll(async () => {
    const people = await orgWithPeople(t);
    ({ admin, member, outsider } = people);
    org = people.org.id;
  });

  test('an org administrator creates a collection with the defaults filled in', async () => {
    const id = uniqueId('col');
    const created = dataOf(
      await gql(t, admin.auth, CREATE_COLLECTION, {
        owner: `/orgs/${org}/`,
        input: {
          id,
          name: 'Starter set',
          collectionType: 'Value Set',
          preferredSource: 'CIEL',
          canonicalUrl: 'http://example.org/vs/starter',
        },
      }),
    ).createCollection.collection;
    expect(created).toMatchObject({
      id,
      version: 'HEAD',
      url: collectionUrl(org, id),
      name: 'Starter set',
      fullName: 'Starter set',
      collectionType: 'Value Set',
      preferredSource: 'CIEL',
      canonicalUrl: 'http://example.org/vs/starter',
      publicAccess: 'VIEW',
      defaultLocale: 'en',
      supportedLocales: ['en'],
      ownerType: 'ORGANIZATION',
      owner: org,
      ownerOrg: { id: org },
      isActive: true,
      versionsCount: 1,
      activeConcepts: 0,
      createdBy: admin.username,
    });
    const read = dataOf(
      await gql(t, undefined, COLLECTION, { url: collectionUrl(org, id) }),
    ).collection;
    expect(read).toEqual(created);
  });

  test('createCollection: an outsider FORBIDDEN, anonymous UNAUTHENTICATED, bad values INVALID', async () => {
    const id = uniqueId('col');
    const input = { id, name: 'Nope' };
    const stranger = await createUser(t);
    expect(
      errorCode(await gql(t, stranger.auth, CREATE_COLLECTION, { owner: `/orgs/${org}/`, input })),
    ).toBe('FORBIDDEN');
    expect(
      errorCode(await gql(t, undefined, CREATE_COLLECTION, { owner: `/orgs/${org}/`, input })),
    ).toBe('UNAUTHENTICATED');
    const bad = await gql(t, admin.auth, CREATE_COLLECTION, {
      owner: `/orgs/${org}/`,
      input: { ...input, canonicalUrl: 'nope', defaultLocale: 'not a locale!' },
    });
    expect(fieldErrorKeys(bad)).toEqual(['canonicalUrl', 'defaultLocale']);
    expect(errorCode(await gql(t, t.admin, COLLECTION, { url: collectionUrl(org, id) }))).toBe(
      'NOT_FOUND',
    );
  });

  test('a user creates a collection in their own space', async () => {
    const user = await createUser(t);
    const { id, url } = await makeCollection(user, '/user/');
    expect(url).toBe(`/users/${user.username}/collections/${id}/`);
    const read = dataOf(await gql(t, undefined, COLLECTION, { url })).collection;
    expect(read).toMatchObject({ ownerType: 'USER', ownerUser: { username: user.username } });
  });

  test('updateCollection changes only the fields sent', async () => {
    const { id, url } = await makeCollection(admin, `/orgs/${org}/`, {
      name: 'Before',
      collectionType: 'Subset',
      description: 'Kept',
      extras: { k: 'v' },
    });
    const updated = dataOf(
      await gql(t, admin.auth, UPDATE_COLLECTION, {
        url,
        input: { preferredSource: 'LOINC', publicAccess: 'None' },
      }),
    ).updateCollection.collection;
    expect(updated).toMatchObject({
      id,
      name: 'Before',
      collectionType: 'Subset',
      description: 'Kept',
      extras: { k: 'v' },
      preferredSource: 'LOINC',
      publicAccess: 'NONE',
      updatedBy: admin.username,
    });
    expect(errorCode(await gql(t, outsider.auth, COLLECTION, { url }))).toBe('FORBIDDEN');
    expect(dataOf(await gql(t, member.auth, COLLECTION, { url })).collection).toEqual(updated);
    expect(
      errorCode(await gql(t, outsider.auth, UPDATE_COLLECTION, { url, input: { name: 'X' } })),
    ).toBe('FORBIDDEN');
  });

  test('deleteCollection deactivates: NOT_FOUND to the owner, inactive to the superuser, unlisted', async () => {
    const { id, url } = await makeCollection(admin, `/orgs/${org}/`);
    const { id: kept } = await makeCollection(admin, `/orgs/${org}/`);
    const stranger = await createUser(t);
    expect(errorCode(await gql(t, stranger.auth, DELETE_COLLECTION, { url }))).toBe('FORBIDDEN');
    expect(errorCode(await gql(t, undefined, DELETE_COLLECTION, { url }))).toBe('UNAUTHENTICATED');
    expect(dataOf(await gql(t, admin.auth, DELETE_COLLECTION, { url }))).toEqual({
      deleteCollection: { deletedId: expect.any(String) },
    });
    for (const auth of [admin.auth, member.auth, undefined]) {
      expect(errorCode(await gql(t, auth, COLLECTION, { url }))).toBe('NOT_FOUND');
    }
    expect(
      errorCode(await gql(t, admin.auth, UPDATE_COLLECTION, { url, input: { name: 'Back' } })),
    ).toBe('NOT_FOUND');
    const bySuperuser = dataOf(await gql(t, t.admin, COLLECTION, { url })).collection;
    expect(bySuperuser).toMatchObject({ id, isActive: false, updatedBy: admin.username });
    for (const auth of [admin.auth, t.admin]) {
      expect(await listIds('collections', auth, { owner: `/orgs/${org}/` })).not.toContain(id);
      expect(await listIds('collections', auth, { owner: `/orgs/${org}/` })).toContain(kept);
      expect(await listIds('repos', auth, { owner: `/orgs/${org}/` })).not.toContain(id);
    }
    // Its id stays taken.
    const again = await gql(t, admin.auth, CREATE_COLLECTION, {
      owner: `/orgs/${org}/`,
      input: { id, name: 'Again' },
    });
    expect(fieldErrorKeys(again)).toEqual(['id']);
  });

  test('collection versions are created, read, released and deleted like source versions', async () => {
    const { id, url } = await makeCollection(admin, `/orgs/${org}/`, { name: 'Frozen' });
    const v1 = dataOf(
      await gql(t, admin.auth, CREATE_COLLECTION_VERSION, {
        url,
        input: { id: 'v1', description: 'First' },
      }),
    ).createCollectionVersion.collection;
    expect(v1).toMatchObject({
      id,
      version: 'v1',
      url: collectionUrl(org, id, 'v1'),
      name: 'Frozen',
      description: 'First',
      released: false,
      previousVersion: null,
      versionsCount: 2,
    });
    const v2 = dataOf(
      await gql(t, admin.auth, CREATE_COLLECTION_VERSION, { url, input: { id: 'v2' } }),
    ).createCollectionVersion.collection;
    expect(v2.previousVersion).toBe('v1');
    for (const reserved of ['HEAD', 'latest']) {
      const res = await gql(t, admin.auth, CREATE_COLLECTION_VERSION, {
        url,
        input: { id: reserved },
      });
      expect(fieldErrorKeys(res)).toEqual(['id']);
    }
    expect(
      errorCode(await gql(t, admin.auth, CREATE_COLLECTION_VERSION, { url, input: { id: 'v1' } })),
    ).toBe('CONFLICT');
    const stranger = await createUser(t);
    expect(
      errorCode(
        await gql(t, stranger.auth, CREATE_COLLECTION_VERSION, { url, input: { id: 'v3' } }),
      ),
    ).toBe('FORBIDDEN');

    const latest = { url: collectionUrl(org, id, 'latest') };
    expect(errorCode(await gql(t, undefined, COLLECTION, latest))).toBe('NOT_FOUND');
    const released = dataOf(
      await gql(t, admin.auth, UPDATE_COLLECTION_VERSION, {
        url: collectionUrl(org, id, 'v1'),
        input: { released: true },
      }),
    ).updateCollectionVersion.collection;
    expect(released).toMatchObject({ version: 'v1', released: true, description: 'First' });
    expect(dataOf(await gql(t, undefined, COLLECTION, latest)).collection.version).toBe('v1');

    expect(
      errorCode(
        await gql(t, admin.auth, DELETE_COLLECTION_VERSION, {
          url: collectionUrl(org, id, 'HEAD'),
        }),
      ),
    ).toBe('NOT_ALLOWED');
    expect(
      errorCode(
        await gql(t, admin.auth, DELETE_COLLECTION_VERSION, { url: collectionUrl(org, id, 'v1') }),
      ),
    ).toBe('CONFLICT');
    expect(
      dataOf(
        await gql(t, admin.auth, DELETE_COLLECTION_VERSION, { url: collectionUrl(org, id, 'v2') }),
      ),
    ).toEqual({ deleteCollectionVersion: { deletedId: expect.any(String) } });
    expect(
      errorCode(await gql(t, undefined, COLLECTION, { url: collectionUrl(org, id, 'v2') })),
    ).toBe('NOT_FOUND');
    expect(dataOf(await gql(t, undefined, COLLECTION, { url })).collection.versionsCount).toBe(2);
  });

  test('collection() of a malformed or source url is INVALID on url', async () => {
    const { id } = await makeCollection(admin, `/orgs/${org}/`);
    for (const url of [sourceUrl(org, id), `/orgs/${org}/collections/`, 'nonsense']) {
      expect(fieldErrorKeys(await gql(t, undefined, COLLECTION, { url }))).toEqual(['url']);
    }
  });
});

describe('lists', () => {
  let admin: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let org: string;
  let word: string;
  let pub: string;
  let priv: string;
  let coll: string;
  let userSource: string;
  let user: TestUser;
  beforeAll(async () => {
    const people = await orgWithPeople(t);
    ({ admin, member, outsider } = people);
    org = people.org.id;
    user = await createUser(t);
    word = tag();
    pub = (
      await makeSource(admin, `/orgs/${org}/`, {
        name: 'Bravo',
        description: `about ${word}`,
        sourceType: 'Interface Terminology',
        supportedLocales: ['en', 'sw'],
        extras: { tier: 'Gold', meta: { region: 'east' } },
      })
    ).id;
    await makeVersion(admin, sourceUrl(org, pub), { id: 'v1' });
    priv = (
      await makeSource(admin, `/orgs/${org}/`, {
        name: 'Alpha',
        description: `about ${word}`,
        publicAccess: 'None',
        extras: { tier: 'silver' },
      })
    ).id;
    coll = (
      await makeCollection(admin, `/orgs/${org}/`, {
        name: 'Charlie',
        description: `about ${word}`,
        supportedLocales: ['fr'],
        collectionType: 'Subset',
      })
    ).id;
    userSource = (
      await makeSource(user, '/user/', {
        name: 'Delta',
        description: `about ${word}`,
        defaultLocale: 'sw',
      })
    ).id;
  });

  test('sources(owner) includes a private source only for those who may see it', async () => {
    for (const auth of [admin.auth, member.auth, t.admin]) {
      expect((await listIds('sources', auth, { owner: `/orgs/${org}/` })).sort()).toEqual(
        [pub, priv].sort(),
      );
    }
    for (const auth of [outsider.auth, undefined]) {
      expect(await list('sources', auth, { owner: `/orgs/${org}/` })).toEqual({
        totalCount: 1,
        items: [{ __typename: 'Source', id: pub, version: 'HEAD', owner: org }],
      });
    }
  });

  test('sources(owner) for a user, for /user/, and collections(owner)', async () => {
    expect(await listIds('sources', undefined, { owner: `/users/${user.username}/` })).toEqual([
      userSource,
    ]);
    expect(await listIds('sources', user.auth, { owner: '/user/' })).toEqual([userSource]);
    expect(await list('collections', undefined, { owner: `/orgs/${org}/` })).toEqual({
      totalCount: 1,
      items: [{ __typename: 'Collection', id: coll, version: 'HEAD', owner: org }],
    });
  });

  test('a malformed owner is INVALID on owner; an unknown owner NOT_FOUND', async () => {
    expect(
      fieldErrorKeys(await gql(t, undefined, listQuery('sources'), { owner: 'nonsense' })),
    ).toEqual(['owner']);
    expect(
      errorCode(
        await gql(t, undefined, listQuery('sources'), { owner: `/orgs/${uniqueId('noorg')}/` }),
      ),
    ).toBe('NOT_FOUND');
  });

  test('sources() without owner lists public sources only, whoever asks', async () => {
    for (const auth of [undefined, outsider.auth, member.auth, t.admin]) {
      expect((await listIds('sources', auth, { q: word })).sort()).toEqual(
        [pub, userSource].sort(),
      );
      expect(await listIds('collections', auth, { q: word })).toEqual([coll]);
    }
  });

  test('repos(q) lists sources and collections together that the caller may see', async () => {
    for (const auth of [undefined, outsider.auth]) {
      expect((await listIds('repos', auth, { q: word })).sort()).toEqual(
        [pub, coll, userSource].sort(),
      );
    }
    for (const auth of [member.auth, t.admin]) {
      const page = await list('repos', auth, { q: word, sort: 'name' });
      expect(page.totalCount).toBe(4);
      expect(page.items.map((i) => [i.__typename, i.id])).toEqual([
        ['Source', priv],
        ['Source', pub],
        ['Collection', coll],
        ['Source', userSource],
      ]);
    }
  });

  test('repos filters by repoType and ownerType', async () => {
    expect(await listIds('repos', t.admin, { q: word, repoType: 'Collection' })).toEqual([coll]);
    expect((await listIds('repos', t.admin, { q: word, repoType: 'Source' })).sort()).toEqual(
      [pub, priv, userSource].sort(),
    );
    expect(await listIds('repos', t.admin, { q: word, ownerType: 'User' })).toEqual([userSource]);
    expect(
      (await listIds('repos', t.admin, { q: word, ownerType: 'Organization' })).sort(),
    ).toEqual([pub, priv, coll].sort());
    expect(
      fieldErrorKeys(await gql(t, t.admin, listQuery('repos'), { q: word, ownerType: 'Robot' })),
    ).toEqual(['ownerType']);
    // The enum-typed filters (issue 28) answer as the deprecated strings do; empty is no filter.
    expect(await listIds('repos', t.admin, { q: word, repoTypes: ['COLLECTION'] })).toEqual([coll]);
    expect(
      (await listIds('repos', t.admin, { q: word, repoTypes: ['SOURCE', 'COLLECTION'] })).sort(),
    ).toEqual([pub, priv, coll, userSource].sort());
    expect(await listIds('repos', t.admin, { q: word, ownerTypes: ['USER'] })).toEqual([
      userSource,
    ]);
    expect((await listIds('repos', t.admin, { q: word, ownerTypes: [] })).sort()).toEqual(
      [pub, priv, coll, userSource].sort(),
    );
    expect(
      fieldErrorKeys(
        await gql(t, t.admin, listQuery('repos'), {
          q: word,
          ownerType: 'User',
          ownerTypes: ['USER'],
        }),
      ),
    ).toEqual(['ownerType']);
    // A collections list takes no source argument, nor `repoType`: refused before it runs.
    for (const args of ['repoType: "Source"', 'sourceType: ["Dictionary"]']) {
      const res = await gql(t, t.admin, `{ collections(${args}) { totalCount } }`);
      expect(res.errors?.[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    }
    const res = await gql(t, t.admin, `{ sources(contains: ["/x/"]) { totalCount } }`);
    expect(res.errors?.[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  test('repos with allVersions lists every version row', async () => {
    const page = await list('repos', undefined, {
      q: word,
      allVersions: true,
      repoType: 'Source',
      ownerType: 'Organization',
    });
    expect(page.totalCount).toBe(2);
    expect(page.items.map((i) => `${i.id}@${i.version}`).sort()).toEqual(
      [`${pub}@HEAD`, `${pub}@v1`].sort(),
    );
    expect(
      (await list('repos', undefined, { q: word, repoType: 'Source', ownerType: 'Organization' }))
        .totalCount,
    ).toBe(1);
  });

  test('repos filters by sourceType and locale, case-insensitively for the type', async () => {
    expect(
      await listIds('repos', t.admin, { q: word, sourceType: ['interface terminology'] }),
    ).toEqual([pub]);
    expect(
      (await listIds('repos', t.admin, { q: word, sourceType: ['Dictionary'] })).sort(),
    ).toEqual([priv, userSource].sort());
    expect((await listIds('repos', t.admin, { q: word, locale: ['sw'] })).sort()).toEqual(
      [pub, userSource].sort(),
    );
    expect(await listIds('repos', t.admin, { q: word, locale: ['fr'] })).toEqual([coll]);
    expect(await listIds('repos', t.admin, { q: word, collectionType: ['subset'] })).toEqual([
      coll,
    ]);
  });

  test('repos filters by extras values, negation, nested names and presence', async () => {
    const ids = (vars: Record<string, unknown>) => listIds('repos', t.admin, { q: word, ...vars });
    expect(await ids({ extras: [{ name: 'tier', values: ['gold'] }] })).toEqual([pub]);
    expect((await ids({ extras: [{ name: 'tier', values: ['gold', 'SILVER'] }] })).sort()).toEqual(
      [pub, priv].sort(),
    );
    expect(await ids({ extras: [{ name: 'tier', values: ['s*'] }] })).toEqual([priv]);
    expect(
      (await ids({ extras: [{ name: 'tier', values: ['gold'], negate: true }] })).sort(),
    ).toEqual([priv, coll, userSource].sort());
    expect(await ids({ extras: [{ name: 'meta.region', values: ['East'] }] })).toEqual([pub]);
    expect((await ids({ extrasExists: ['tier'] })).sort()).toEqual([pub, priv].sort());
    expect(await ids({ extrasExists: ['meta.region'] })).toEqual([pub]);
    expect(await ids({ extrasExists: ['nothing'] })).toEqual([]);
  });

  test('lists sort by name, descending on request, and page with a whole totalCount', async () => {
    const vars = { owner: `/orgs/${org}/`, sort: 'name' };
    expect(await listIds('repos', admin.auth, vars)).toEqual([priv, pub, coll]);
    // `sortBy` (issue 28), the enum of the sort keys, sorts as the deprecated `sort` does.
    const byEnum = { owner: `/orgs/${org}/`, sortBy: 'NAME', sortDesc: true };
    expect(await listIds('repos', admin.auth, byEnum)).toEqual([coll, pub, priv]);
    expect(
      fieldErrorKeys(await gql(t, admin.auth, listQuery('repos'), { ...vars, sortBy: 'NAME' })),
    ).toEqual(['sort']);
    expect(await listIds('repos', admin.auth, { ...vars, sortDesc: true })).toEqual([
      coll,
      pub,
      priv,
    ]);
    const second = await list('repos', admin.auth, { ...vars, limit: 1, offset: 1 });
    expect(second.totalCount).toBe(3);
    expect(second.items.map((i) => i.id)).toEqual([pub]);
  });

  test('an unknown sort is INVALID on sort', async () => {
    for (const field of ['sources', 'collections', 'repos'] as const) {
      const res = await gql(t, undefined, listQuery(field), { q: word, sort: 'popularity' });
      expect(fieldErrorKeys(res)).toEqual(['sort']);
    }
  });

  test('Organization.sources and collections list the org repositories the caller may see', async () => {
    const query = `query($id: String!) { org(id: $id) {
      sources(limit: 0, sort: "name") { totalCount items { id ownerOrg { id } } }
      collections(limit: 0) { totalCount items { __typename id } }
    } }`;
    const byMember = dataOf(await gql(t, member.auth, query, { id: org })).org;
    expect(byMember.sources).toEqual({
      totalCount: 2,
      items: [
        { id: priv, ownerOrg: { id: org } },
        { id: pub, ownerOrg: { id: org } },
      ],
    });
    expect(byMember.collections).toEqual({
      totalCount: 1,
      items: [{ __typename: 'Collection', id: coll }],
    });
    const byOutsider = dataOf(await gql(t, outsider.auth, query, { id: org })).org;
    expect(byOutsider.sources).toEqual({
      totalCount: 1,
      items: [{ id: pub, ownerOrg: { id: org } }],
    });
  });

  test('User.sources and collections list the repositories the user owns', async () => {
    const hidden = await makeSource(user, '/user/', { publicAccess: 'None' });
    const userCollection = await makeCollection(user, '/user/');
    const query = `query($u: String!) { user(username: $u) {
      sources(limit: 0) { totalCount items { id ownerUser { username } } }
      collections(limit: 0) { items { id } }
    } }`;
    const byOwner = dataOf(await gql(t, user.auth, query, { u: user.username })).user;
    expect(byOwner.sources.items.map((i: { id: string }) => i.id).sort()).toEqual(
      [userSource, hidden.id].sort(),
    );
    expect(byOwner.sources.items[0].ownerUser).toEqual({ username: user.username });
    expect(byOwner.collections.items).toEqual([{ id: userCollection.id }]);
    const byOther = dataOf(await gql(t, outsider.auth, query, { u: user.username })).user;
    expect(byOther.sources).toEqual({
      totalCount: 1,
      items: [{ id: userSource, ownerUser: { username: user.username } }],
    });
  });
});

describe('N+1', () => {
  test('an org page of sources with their counts costs the same queries for 3 and 12 sources', async () => {
    const admin = await createUser(t);
    const query = `query($id: String!) { org(id: $id) { sources(limit: 0) { totalCount items {
      id versionsCount activeConcepts activeMappings ownerOrg { id } } } } }`;
    const measure = async (n: number): Promise<number> => {
      const org = (await createOrg(t, admin)).id;
      for (let i = 0; i < n; i++) {
        const { url } = await makeSource(admin, `/orgs/${org}/`);
        await makeVersion(admin, url, { id: 'v1' });
      }
      // A version's export runs in the background: let it finish outside the count.
      await tasksSettled(t, admin.username);
      t.queries.count = 0;
      const res = await gql(t, admin.auth, query, { id: org });
      const count = t.queries.count;
      const sources = dataOf(res).org.sources;
      expect(sources.totalCount).toBe(n);
      expect(sources.items).toHaveLength(n);
      for (const item of sources.items) {
        expect(item).toMatchObject({
          versionsCount: 2,
          activeConcepts: 0,
          activeMappings: 0,
          ownerOrg: { id: org },
        });
      }
      return count;
    };
    const three = await measure(3);
    const twelve = await measure(12);
    console.log(`org sources page: ${three} queries for 3 sources, ${twelve} for 12`);
    expect(twelve).toBe(three);
  });
});
