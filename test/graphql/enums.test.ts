import fs from 'node:fs';
import path from 'node:path';
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInterfaceType,
  isIntrospectionType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLSchema,
} from 'graphql';
import { createTestApp, uniqueId, type TestApp } from '../factories';
import { orgWithPeople } from '../factories/people';
import { dataOf, errorCode, gql } from './gql';

/**
 * The enum rules of the schema (docs/api-graphql.md, issue 28 part 3), on the committed SDL:
 * closed sets are enums, not strings; enum values are SCREAMING_SNAKE_CASE (an old spelling kept
 * for one release is deprecated, naming its new one); no type name carries a role suffix
 * (`Object`); `url` is a REST URL (a URL registry entry's canonical URL is `canonicalUrl`); and the
 * source and collection lists take only their own arguments. Then that old spellings still work
 * and an unknown enum value is refused.
 */
const sdl: GraphQLSchema = buildSchema(
  fs.readFileSync(path.join(__dirname, '..', '..', 'schema', 'schema.graphql'), 'utf8'),
);

/**
 * Names of arguments and fields whose values are a closed set: an enum, or deprecated beside one.
 * (`state` is not among them: OAuth's `state` is opaque text; `Task.state` is an enum anyway.)
 */
const CLOSED = new Set([
  'sort',
  'sortBy',
  'ownerType',
  'ownerTypes',
  'repoType',
  'repoTypes',
  'resourceType',
  'resourceTypes',
  'sourceOwnerType',
  'kind',
  'role',
  'publicAccess',
  'outcome',
]);

function fieldsOf(schema: GraphQLSchema): Array<[string, GraphQLField<unknown, unknown>]> {
  return Object.values(schema.getTypeMap())
    .filter((type) => !isIntrospectionType(type))
    .flatMap((type) =>
      isObjectType(type) || isInterfaceType(type)
        ? Object.values(type.getFields()).map((f) => [type.name, f] as [string, typeof f])
        : [],
    );
}

describe('GraphQL enums on the emitted SDL', () => {
  it('types every closed set as an enum (a string only deprecated beside its enum)', () => {
    const strings: string[] = [];
    const typed = (where: string, item: GraphQLField<unknown, unknown> | GraphQLArgument) => {
      if (!CLOSED.has(item.name) || item.deprecationReason) return;
      if (!isEnumType(getNamedType(item.type))) strings.push(where);
    };
    for (const [typeName, field] of fieldsOf(sdl)) {
      typed(`${typeName}.${field.name}`, field);
      for (const arg of field.args) typed(`${typeName}.${field.name}(${arg.name})`, arg);
    }
    expect(strings).toEqual([]);
    expect(String(sdl.getQueryType()!.getFields().subsumes.type)).toBe('SubsumesOutcome');
  });

  it('each list that sorts takes sortBy, an enum of its own keys', () => {
    const sortBy = (type: string, field: string) => {
      const fields = (
        sdl.getType(type) as { getFields(): Record<string, GraphQLField<unknown, unknown>> }
      ).getFields();
      return String(fields[field].args.find((a) => a.name === 'sortBy')?.type);
    };
    expect(sortBy('Query', 'users')).toBe('UserSort');
    expect(sortBy('Query', 'orgs')).toBe('OrgSort');
    expect(sortBy('Organization', 'members')).toBe('UserSort');
    expect(sortBy('User', 'orgs')).toBe('OrgSort');
    for (const field of ['sources', 'collections', 'repos']) {
      expect(sortBy('Query', field)).toBe('RepositorySort');
    }
    expect(sortBy('Query', 'concepts')).toBe('ConceptSort');
    expect(sortBy('Source', 'concepts')).toBe('ConceptSort');
    expect(sortBy('Query', 'mappings')).toBe('MappingSort');
    expect(sortBy('Query', 'urlRegistry')).toBe('UrlRegistrySort');
  });

  it('spells enum values in SCREAMING_SNAKE_CASE; an old spelling is deprecated and names its new one', () => {
    const offending: string[] = [];
    let deprecated = 0;
    for (const type of Object.values(sdl.getTypeMap())) {
      if (!isEnumType(type) || isIntrospectionType(type)) continue;
      const names = new Set(type.getValues().map((v) => v.name));
      for (const value of type.getValues()) {
        if (/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/.test(value.name)) continue;
        const newName = /`(\w+)`/.exec(value.deprecationReason ?? '')?.[1];
        if (newName && names.has(newName) && newName !== value.name) deprecated += 1;
        else offending.push(`${type.name}.${value.name}`);
      }
    }
    expect(offending).toEqual([]);
    expect(deprecated).toBeGreaterThan(0);
  });

  it('names no type by its role (no `Object` suffix)', () => {
    // `JSONObject` is graphql-scalars' scalar: a JSON object is what it holds, not a role.
    const named = Object.values(sdl.getTypeMap())
      .filter((type) => !isScalarType(type) && type.name.endsWith('Object'))
      .map((type) => type.name);
    expect(named).toEqual([]);
  });

  it("names a URL registry entry's canonical URL canonicalUrl, keeping url deprecated", () => {
    const entry = sdl.getType('UrlRegistryEntry') as {
      getFields(): Record<string, GraphQLField<unknown, unknown>>;
    };
    const { canonicalUrl, url } = entry.getFields();
    expect(String(canonicalUrl.type)).toBe('String!');
    expect(canonicalUrl.deprecationReason).toBeUndefined();
    expect(url.deprecationReason).toMatch(/`canonicalUrl`/);
  });

  it('gives sources(...) source arguments, collections(...) collection ones and repos(...) both', () => {
    const fields = sdl.getQueryType()!.getFields();
    const args = (field: string) => fields[field].args.map((a) => a.name);
    const sourceOnly = ['sourceType'];
    const collectionOnly = ['collectionType', 'contains'];
    const both = ['repoType', 'repoTypes'];
    for (const field of ['sources', 'collections']) {
      const own = field === 'sources' ? sourceOnly : collectionOnly;
      const other = field === 'sources' ? collectionOnly : sourceOnly;
      expect(args(field)).toEqual(expect.arrayContaining(own));
      for (const name of [...other, ...both]) expect(args(field)).not.toContain(name);
    }
    expect(args('repos')).toEqual(
      expect.arrayContaining([...sourceOnly, ...collectionOnly, ...both]),
    );
  });
});

describe('GraphQL enums at work', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  }, 60_000);
  afterAll(async () => t.close());

  it('accepts an old spelling (deprecated) and answers the new one', async () => {
    const { org, admin, outsider } = await orgWithPeople(t);
    // `member` and `None`: the spellings before issue 28, as literals and as variables.
    dataOf(
      await gql(
        t,
        admin.auth,
        `mutation($u: String!) { addMember(org: "${org.id}", username: $u, role: member) { id } }`,
        { u: outsider.username },
      ),
    );
    const id = uniqueId('org');
    const created = dataOf(
      await gql(
        t,
        admin.auth,
        `mutation($input: CreateOrganizationInput!) { createOrg(input: $input) { org { publicAccess myRole } } }`,
        { input: { id, name: 'Enum org', publicAccess: 'None' } },
      ),
    ).createOrg.org;
    expect(created).toEqual({ publicAccess: 'NONE', myRole: 'ADMIN' });
    const read = await gql(t, outsider.auth, `{ org(id: "${org.id}") { myRole } }`);
    expect(dataOf(read).org.myRole).toBe('MEMBER');
    // The deprecated `sort` string and `sortBy` sort alike.
    const members = async (sort: string): Promise<Array<{ username: string }>> => {
      const res = await gql(
        t,
        admin.auth,
        `{ org(id: "${org.id}") { members(${sort}, sortDesc: true) { items { username } } } }`,
      );
      return dataOf(res).org.members.items as Array<{ username: string }>;
    };
    const bySort = await members('sort: "username"');
    const bySortBy = await members('sortBy: USERNAME');
    expect(bySort).toHaveLength(3);
    expect(bySortBy).toEqual(bySort);
  });

  it('refuses an unknown enum value before it runs: a literal at validation, a variable INVALID', async () => {
    const literal = await gql(t, undefined, '{ sources(sortBy: POPULARITY) { totalCount } }');
    expect(errorCode(literal)).toBe('GRAPHQL_VALIDATION_FAILED');
    const quoted = await gql(t, undefined, '{ sources(sortBy: "NAME") { totalCount } }');
    expect(errorCode(quoted)).toBe('GRAPHQL_VALIDATION_FAILED');
    const variable = await gql(
      t,
      undefined,
      'query($t: [OwnerType!]) { repos(ownerTypes: $t) { totalCount } }',
      { t: ['ROBOT'] },
    );
    expect(errorCode(variable)).toBe('INVALID');
    // Keyed by the path within the variable, as the services key theirs.
    expect(Object.keys(variable.errors![0].extensions!.fieldErrors!)).toEqual(['0']);
  });
});
