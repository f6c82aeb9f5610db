import request from 'supertest';
import {
  addMember,
  createOrg,
  createTestApp,
  createUser,
  uniqueId,
  type TestApp,
  type TestUser,
} from '../factories';
import { createRepo, createVersion } from '../factories/content';
import { as } from '../factories/http';

/**
 * One fixture, read by every test below (tests that change things make their own):
 * org O (public) with sources s1, s2, s3 (private) and collections c1, c2 (private); user A's own
 * source u1 and collection uc1. Every id carries `tag`, so `q=tag` scopes the global lists.
 */
let t: TestApp;
let tag: string;
let ownerA: TestUser;
let member: TestUser;
let outsider: TestUser;
let org: { id: string };
let otherOrg: { id: string };

const id = (suffix: string) => `${tag}-${suffix}`;

beforeAll(async () => {
  t = await createTestApp();
  tag = uniqueId('rl').replace('-', '');
  ownerA = await createUser(t);
  member = await createUser(t);
  outsider = await createUser(t);
  org = await createOrg(t, ownerA);
  await addMember(t, org.id, ownerA, member);
  otherOrg = await createOrg(t, outsider);
  const make = (owner: string, kind: 'sources' | 'collections', body: Record<string, unknown>) =>
    createRepo(t, owner, ownerA, body, kind);
  const o = `/orgs/${org.id}`;
  await make(o, 'sources', {
    id: id('s1'),
    name: 'Alpha Diagnoses',
    description: 'malaria and fever terms',
    source_type: 'dictionary',
    supported_locales: 'en,fr',
    custom_validation_schema: 'OpenMRS',
    canonical_url: `http://example.org/${tag}/s1`,
    extras: { program: 'FY19', tier: 'Gold', nested: { level: 'deep' } },
  });
  await make(o, 'sources', {
    id: id('s2'),
    name: 'Beta Labs',
    full_name: 'Beta Laboratory Catalogue',
    source_type: 'reference',
    default_locale: 'es',
    supported_locales: 'es',
    extras: { program: 'FY20', tier: 'silver' },
  });
  await make(o, 'sources', {
    id: id('s3'),
    name: 'Gamma Private',
    public_access: 'None',
    extras: { program: 'FY19' },
  });
  await make(o, 'collections', {
    short_code: id('c1'),
    name: 'Delta Subset',
    collection_type: 'Subset',
    extras: { program: 'FY21' },
  });
  await make(o, 'collections', {
    short_code: id('c2'),
    name: 'Epsilon Value Set',
    collection_type: 'ValueSet',
    public_access: 'None',
  });
  await make('/user', 'sources', {
    id: id('u1'),
    name: 'Zeta Personal',
    source_type: 'externalDictionary',
  });
  await make('/user', 'collections', {
    short_code: id('uc1'),
    name: 'Eta Mine',
    collection_type: 'Subset',
  });
  await createVersion(t, `${o}/sources/${id('s1')}/`, ownerA, 'v1', { released: true });
});
afterAll(async () => t.close());

type Row = { id: string; short_code: string; version: string };

/** A list's entries as fixture names (`s1`), version rows as `s1@v1`; sorted by id unless asked. */
async function listed(
  url: string,
  query: Record<string, string> | string = {},
  caller?: TestUser | string,
): Promise<string[]> {
  const req = request(t.app).get(url).set(as(caller));
  const res =
    typeof query === 'string'
      ? await req.query(/sort(Asc|Desc)=/.test(query) ? query : `sortAsc=id&${query}`)
      : await req.query(
          'sortAsc' in query || 'sortDesc' in query ? query : { sortAsc: 'id', ...query },
        );
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as Row[]).map((r) => {
    const name = r.short_code.startsWith(`${tag}-`)
      ? r.short_code.slice(tag.length + 1)
      : r.short_code;
    return r.version === 'HEAD' ? name : `${name}@${r.id}`;
  });
}

describe('owner lists: {owner}/sources/, {owner}/collections/ (spec core §4.5, §4.6)', () => {
  it.each([
    ['anonymous', undefined, ['s1', 's2']],
    ['an outsider', 'outsider', ['s1', 's2']],
    ['a member', 'member', ['s1', 's2', 's3']],
    ['the administrator', 'ownerA', ['s1', 's2', 's3']],
    ['a superuser', 'superuser', ['s1', 's2', 's3']],
  ] as const)('an org’s sources, seen by %s', async (_who, role, expected) => {
    const caller =
      role === undefined
        ? undefined
        : role === 'superuser'
          ? t.admin
          : { outsider, member, ownerA }[role];
    expect(await listed(`/orgs/${org.id}/sources/`, {}, caller)).toEqual(expected);
  });

  it('an org’s collections: private ones only for members', async () => {
    expect(await listed(`/orgs/${org.id}/collections/`)).toEqual(['c1']);
    expect(await listed(`/orgs/${org.id}/collections/`, {}, outsider)).toEqual(['c1']);
    expect(await listed(`/orgs/${org.id}/collections/`, {}, member)).toEqual(['c1', 'c2']);
  });

  it('a user’s sources and collections, at /users/:user/ and at /user/', async () => {
    expect(await listed(`/users/${ownerA.username}/sources/`)).toEqual(['u1']);
    expect(await listed(`/users/${ownerA.username}/collections/`)).toEqual(['uc1']);
    expect(await listed('/user/sources/', {}, ownerA)).toEqual(['u1']);
    expect(await listed('/user/collections/', {}, ownerA)).toEqual(['uc1']);
    expect(await listed('/user/sources/', {}, member)).toEqual([]);
  });

  it('a summary has the documented fields', async () => {
    const res = await request(t.app)
      .get(`/orgs/${org.id}/sources/`)
      .query({ q: id('s1') });
    expect(res.body[0]).toEqual({
      type: 'Source',
      id: id('s1'),
      short_code: id('s1'),
      name: 'Alpha Diagnoses',
      url: `/orgs/${org.id}/sources/${id('s1')}/`,
      owner: org.id,
      owner_type: 'Organization',
      owner_url: `/orgs/${org.id}/`,
      version: 'HEAD',
      source_type: 'dictionary',
    });
  });

  it('answers 404 for an unknown owner, 401 for /user/ lists without credentials', async () => {
    expect((await request(t.app).get(`/orgs/${uniqueId('ghost')}/sources/`)).status).toBe(404);
    expect((await request(t.app).get(`/users/${uniqueId('ghost')}/collections/`)).status).toBe(404);
    expect((await request(t.app).get('/user/sources/')).status).toBe(401);
    expect((await request(t.app).get('/user/repos/')).status).toBe(401);
  });
});

describe('global lists: /sources/, /collections/ show public repositories only', () => {
  it.each([
    ['anonymous', undefined],
    ['a member', 'member'],
    ['a superuser', 'superuser'],
  ] as const)('for %s', async (_who, role) => {
    const caller = role === undefined ? undefined : role === 'superuser' ? t.admin : member;
    expect(await listed('/sources/', { q: tag }, caller)).toEqual(['s1', 's2', 'u1']);
    expect(await listed('/collections/', { q: tag }, caller)).toEqual(['c1', 'uc1']);
  });
});

describe('the orgs of a user: /users/:user/orgs/sources/, /user/orgs/...', () => {
  it('lists the repositories of the user’s orgs; private ones only to their members', async () => {
    const url = `/users/${ownerA.username}/orgs/sources/`;
    expect(await listed(url)).toEqual(['s1', 's2']);
    expect(await listed(url, {}, outsider)).toEqual(['s1', 's2']);
    expect(await listed(url, {}, member)).toEqual(['s1', 's2', 's3']);
    expect(await listed(`/users/${member.username}/orgs/collections/`)).toEqual(['c1']);
    expect(await listed(`/users/${member.username}/orgs/collections/`, {}, member)).toEqual([
      'c1',
      'c2',
    ]);
  });

  it('/user/orgs/ lists the caller’s orgs’ repositories, not the caller’s own', async () => {
    expect(await listed('/user/orgs/sources/', {}, ownerA)).toEqual(['s1', 's2', 's3']);
    expect(await listed('/user/orgs/collections/', {}, member)).toEqual(['c1', 'c2']);
    expect(await listed('/user/orgs/sources/', {}, outsider)).toEqual([]);
    expect((await request(t.app).get('/user/orgs/sources/')).status).toBe(401);
  });
});

describe('combined lists: /repos/, {owner}/repos/ (spec core §4.7)', () => {
  it('/repos/ mixes sources and collections the caller may see', async () => {
    expect(await listed('/repos/', { q: tag })).toEqual(['c1', 's1', 's2', 'u1', 'uc1']);
    expect(await listed('/repos/', { q: tag }, member)).toEqual([
      'c1',
      'c2',
      's1',
      's2',
      's3',
      'u1',
      'uc1',
    ]);
    const res = await request(t.app).get('/repos/').query({ q: tag, sortAsc: 'id' });
    expect(res.body.map((r: { type: string }) => r.type)).toEqual([
      'Collection',
      'Source',
      'Source',
      'Source',
      'Collection',
    ]);
  });

  it('{owner}/repos/ for an org, a user and the caller', async () => {
    expect(await listed(`/orgs/${org.id}/repos/`)).toEqual(['c1', 's1', 's2']);
    expect(await listed(`/orgs/${org.id}/repos/`, {}, member)).toEqual([
      'c1',
      'c2',
      's1',
      's2',
      's3',
    ]);
    expect(await listed(`/users/${ownerA.username}/repos/`)).toEqual(['u1', 'uc1']);
    expect(await listed('/user/repos/', {}, ownerA)).toEqual(['u1', 'uc1']);
    expect(await listed(`/orgs/${otherOrg.id}/repos/`)).toEqual([]);
  });

  it('repoType and ownerType narrow the mix', async () => {
    expect(await listed('/repos/', { q: tag, repoType: 'Collection' })).toEqual(['c1', 'uc1']);
    expect(await listed('/repos/', { q: tag, repoType: 'source' })).toEqual(['s1', 's2', 'u1']);
    expect(await listed('/repos/', { q: tag, ownerType: 'User' })).toEqual(['u1', 'uc1']);
    expect(await listed('/repos/', { q: tag, ownerType: 'Organization' })).toEqual([
      'c1',
      's1',
      's2',
    ]);
    expect(await listed('/collections/', { q: tag, repoType: 'Source' })).toEqual([]);
    const bad = await request(t.app).get('/repos/').query({ q: tag, ownerType: 'Alien' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.ownerType).toBeDefined();
  });
});

describe('search and sort', () => {
  it('q matches id, name, full_name and description; every word must match', async () => {
    expect(await listed('/repos/', { q: `${tag} malaria` })).toEqual(['s1']);
    expect(await listed('/repos/', { q: `${tag} beta` })).toEqual(['s2']);
    expect(await listed('/repos/', { q: `${tag} catalogue` })).toEqual(['s2']);
    const exact = await request(t.app)
      .get('/repos/')
      .query({ q: id('uc1') });
    expect(exact.body[0].id).toBe(id('uc1'));
    expect(await listed('/repos/', { q: `${tag} ALPHA diagnoses` })).toEqual(['s1']);
    expect(await listed('/repos/', { q: `${tag} nothinglikethis` })).toEqual([]);
  });

  it('sorts by name and by id, in both directions', async () => {
    const url = `/orgs/${org.id}/repos/`;
    const byName = ['s1', 's2', 'c1', 'c2', 's3'];
    expect(await listed(url, { sortAsc: 'name' }, member)).toEqual(byName);
    expect(await listed(url, { sortDesc: 'name' }, member)).toEqual([...byName].reverse());
    expect(await listed(url, { sortDesc: 'id' }, member)).toEqual(['s3', 's2', 's1', 'c2', 'c1']);
    expect(await listed(url, { sortAsc: 'short_code' }, member)).toEqual([
      'c1',
      'c2',
      's1',
      's2',
      's3',
    ]);
  });

  it('best match puts an exact id first, then orders by name; without q by name', async () => {
    const owner = await createUser(t);
    const own = await createOrg(t, owner);
    const base = uniqueId('bm').replace('-', '');
    for (const [rid, name] of [
      [`${base}-a`, 'Alpha'],
      [base, 'Zulu'],
      [`${base}-b`, 'Mike'],
    ]) {
      await createRepo(t, `/orgs/${own.id}`, owner, { id: rid, name });
    }
    const names = async (query: Record<string, string>): Promise<string[]> => {
      const res = await request(t.app).get(`/orgs/${own.id}/sources/`).query(query);
      return (res.body as Array<{ name: string }>).map((r) => r.name);
    };
    expect(await names({ q: base })).toEqual(['Zulu', 'Alpha', 'Mike']);
    expect(await names({ q: base, sortAsc: 'bestMatch' })).toEqual(['Zulu', 'Alpha', 'Mike']);
    expect(await names({ q: base, sortAsc: 'best_match' })).toEqual(['Zulu', 'Alpha', 'Mike']);
    expect(await names({})).toEqual(['Alpha', 'Mike', 'Zulu']);
  });

  it('sorts by last update, under both spellings', async () => {
    const owner = await createUser(t);
    const own = await createOrg(t, owner);
    const made: string[] = [];
    for (const suffix of ['x', 'y', 'z']) {
      const rid = uniqueId(suffix);
      await createRepo(t, `/orgs/${own.id}`, owner, { id: rid, name: `Source ${suffix}` });
      made.push(rid);
    }
    await request(t.app)
      .patch(`/orgs/${own.id}/sources/${made[0]}/`)
      .set(as(owner))
      .send({ description: 'touched' });
    for (const sortDesc of ['lastUpdate', 'last_update']) {
      const res = await request(t.app).get(`/orgs/${own.id}/sources/`).query({ sortDesc });
      expect(res.body.map((r: { id: string }) => r.id)).toEqual([made[0], made[2], made[1]]);
    }
    const asc = await request(t.app)
      .get(`/orgs/${own.id}/sources/`)
      .query({ sortAsc: 'lastUpdate' });
    expect(asc.body.map((r: { id: string }) => r.id)).toEqual([made[1], made[2], made[0]]);
  });

  it('rejects an unknown sort field and both directions at once with 400', async () => {
    const bad = await request(t.app).get('/repos/').query({ sortAsc: 'shoeSize' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/shoeSize/);
    const both = await request(t.app)
      .get(`/orgs/${org.id}/sources/`)
      .query({ sortAsc: 'name', sortDesc: 'id' });
    expect(both.status).toBe(400);
  });
});

describe('filters (spec core §4.5–4.7)', () => {
  it('sourceType: exact, case-insensitive, comma = OR; collections have none', async () => {
    expect(await listed('/sources/', { q: tag, sourceType: 'reference' })).toEqual(['s2']);
    expect(await listed('/sources/', { q: tag, sourceType: 'dictionary,REFERENCE' })).toEqual([
      's1',
      's2',
    ]);
    expect(await listed('/repos/', { q: tag, sourceType: 'externalDictionary' })).toEqual(['u1']);
    expect(await listed('/repos/', { q: tag, sourceType: 'dictionary' }, member)).toEqual([
      's1',
      's3',
    ]);
    expect(await listed('/sources/', { q: tag, sourceType: 'dict' })).toEqual([]);
  });

  it('collection_type and collectionType', async () => {
    expect(await listed('/collections/', { q: tag, collection_type: 'Subset' })).toEqual([
      'c1',
      'uc1',
    ]);
    expect(await listed('/repos/', { q: tag, collectionType: 'subset' })).toEqual(['c1', 'uc1']);
    expect(
      await listed(`/orgs/${org.id}/collections/`, { collectionType: 'valueset' }, member),
    ).toEqual(['c2']);
    expect(
      await listed(`/orgs/${org.id}/collections/`, { collection_type: 'Subset,ValueSet' }, member),
    ).toEqual(['c1', 'c2']);
  });

  it('locale matches any supported locale; comma = OR', async () => {
    expect(await listed('/repos/', { q: tag, locale: 'fr' })).toEqual(['s1']);
    expect(await listed('/repos/', { q: tag, locale: 'es,fr' })).toEqual(['s1', 's2']);
    expect(await listed(`/orgs/${org.id}/sources/`, { locale: 'en' }, member)).toEqual([
      's1',
      's3',
    ]);
  });

  it('customValidationSchema and canonicalUrl', async () => {
    expect(await listed('/repos/', { q: tag, customValidationSchema: 'openmrs' })).toEqual(['s1']);
    expect(
      await listed('/repos/', { q: tag, canonicalUrl: `http://example.org/${tag}/s1` }),
    ).toEqual(['s1']);
    expect(
      await listed('/repos/', { q: tag, canonicalUrl: `http://example.org/${tag}/none` }),
    ).toEqual([]);
  });

  it('contains on lists matches nothing while no references exist, without error', async () => {
    const contains = `/orgs/${org.id}/sources/${id('s1')}/concepts/1/`;
    expect(await listed('/collections/', { q: tag, contains })).toEqual([]);
    expect(await listed('/repos/', { q: tag, contains }, member)).toEqual([]);
  });

  it('updatedSince keeps the repositories updated since then; a malformed one is a 400', async () => {
    expect(await listed(`/orgs/${org.id}/repos/`, { updatedSince: '2000-01-01' })).toEqual([
      'c1',
      's1',
      's2',
    ]);
    expect(
      await listed(`/orgs/${org.id}/repos/`, { updatedSince: '2999-01-01T00:00:00Z' }),
    ).toEqual([]);
    const bad = await request(t.app)
      .get(`/orgs/${org.id}/repos/`)
      .query({ updatedSince: 'yesterday' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.updatedSince).toBeDefined();
  });
});

describe('extras filters (spec operations §4.9)', () => {
  const q = () => `q=${tag}`;

  it('extras.<name> is exact and case-insensitive', async () => {
    expect(await listed('/repos/', `${q()}&extras.program=fy19`)).toEqual(['s1']);
    expect(await listed('/repos/', `${q()}&extras.program=fy19`, member)).toEqual(['s1', 's3']);
    expect(await listed('/repos/', `${q()}&extras.program=FY1`)).toEqual([]);
    expect(await listed('/repos/', `${q()}&extras.tier=GOLD`)).toEqual(['s1']);
  });

  it('* makes starts-with and contains matches', async () => {
    expect(await listed('/repos/', `${q()}&extras.program=FY1*`)).toEqual(['s1']);
    expect(await listed('/repos/', `${q()}&extras.program=*Y2*`)).toEqual(['c1', 's2']);
    expect(await listed('/repos/', `${q()}&extras.program=*21`)).toEqual(['c1']);
  });

  it('a space between values means OR (as %20 or +)', async () => {
    expect(await listed('/repos/', `${q()}&extras.program=FY19%20FY20`)).toEqual(['s1', 's2']);
    expect(await listed('/repos/', `${q()}&extras.program=FY19+fy21`)).toEqual(['c1', 's1']);
  });

  it('repeated parameters combine with AND', async () => {
    expect(await listed('/repos/', `${q()}&extras.program=FY19&extras.tier=gold`)).toEqual(['s1']);
    expect(await listed('/repos/', `${q()}&extras.program=FY20&extras.tier=gold`)).toEqual([]);
    expect(await listed('/repos/', `${q()}&extras.program=FY*&extras.program=*20`)).toEqual(['s2']);
  });

  it('a leading ! negates; repositories without the attribute count as different', async () => {
    expect(await listed('/repos/', `${q()}&extras.program=!FY19`)).toEqual([
      'c1',
      's2',
      'u1',
      'uc1',
    ]);
    expect(await listed(`/orgs/${org.id}/sources/`, 'extras.program=!FY*', member)).toEqual([]);
    expect(await listed(`/orgs/${org.id}/sources/`, 'extras.tier=!gold')).toEqual(['s2']);
  });

  it('extras.exists requires every named attribute', async () => {
    expect(await listed('/repos/', `${q()}&extras.exists=tier`)).toEqual(['s1', 's2']);
    expect(await listed('/repos/', `${q()}&extras.exists=tier,nested`)).toEqual(['s1']);
    expect(await listed('/repos/', `${q()}&extras.exists=nested.level`)).toEqual(['s1']);
    expect(await listed('/repos/', `${q()}&extras.exists=tier&extras.program=FY20`)).toEqual([
      's2',
    ]);
    expect(await listed('/repos/', `${q()}&extras.exists=absent`)).toEqual([]);
  });

  it('a dotted name reaches nested attributes', async () => {
    expect(await listed('/repos/', `${q()}&extras.nested.level=DEEP`)).toEqual(['s1']);
    expect(await listed('/repos/', `${q()}&extras.nested.level=shallow`)).toEqual([]);
  });

  it('the older extras__a__b form: nested, comma = OR, != negates', async () => {
    expect(await listed('/repos/', `${q()}&extras__nested__level=deep`)).toEqual(['s1']);
    expect(await listed('/repos/', `${q()}&extras__program=FY19,FY20`)).toEqual(['s1', 's2']);
    expect(await listed('/repos/', `${q()}&extras__program!=FY19`)).toEqual([
      'c1',
      's2',
      'u1',
      'uc1',
    ]);
  });

  it('combines with q and the other filters', async () => {
    expect(await listed('/repos/', `q=${tag}%20beta&extras.program=FY20`)).toEqual(['s2']);
    expect(await listed('/repos/', `q=${tag}%20beta&extras.program=FY19`)).toEqual([]);
    expect(
      await listed('/repos/', `${q()}&extras.program=FY*&repoType=Collection`, member),
    ).toEqual(['c1']);
  });
});

describe('allVersions and verbose', () => {
  it('allVersions=true adds a row per version', async () => {
    expect(await listed(`/orgs/${org.id}/sources/`)).toEqual(['s1', 's2']);
    expect(await listed(`/orgs/${org.id}/sources/`, { allVersions: 'true' })).toEqual([
      's1',
      's1@v1',
      's2',
    ]);
    const res = await request(t.app)
      .get(`/orgs/${org.id}/sources/`)
      .query({ allVersions: 'true', q: id('s1') });
    const row = res.body.find((r: { version: string }) => r.version === 'v1');
    expect(row).toMatchObject({
      type: 'Source Version',
      id: 'v1',
      short_code: id('s1'),
      url: `/orgs/${org.id}/sources/${id('s1')}/v1/`,
      name: 'Alpha Diagnoses',
    });
  });

  it('verbose=true answers detail objects with their counts', async () => {
    const res = await request(t.app)
      .get(`/orgs/${org.id}/sources/`)
      .query({ verbose: 'true', sortAsc: 'id' });
    expect(res.body).toHaveLength(2);
    expect(res.body[0]).toMatchObject({
      type: 'Source',
      id: id('s1'),
      description: 'malaria and fever terms',
      supported_locales: 'en,fr',
      extras: { program: 'FY19', tier: 'Gold', nested: { level: 'deep' } },
      versions: 2,
      active_concepts: 0,
      active_mappings: 0,
      autoid_concept_mnemonic: null,
    });
    expect(res.body[1]).toMatchObject({
      id: id('s2'),
      versions: 1,
      full_name: 'Beta Laboratory Catalogue',
    });
    const repos = await request(t.app)
      .get(`/users/${ownerA.username}/repos/`)
      .query({ verbose: 'true', sortAsc: 'id' });
    expect(repos.body[1]).toMatchObject({
      type: 'Collection',
      id: id('uc1'),
      collection_type: 'Subset',
      references_url: `/users/${ownerA.username}/collections/${id('uc1')}/references/`,
      versions: 1,
    });
  });
});

describe('facets (includeFacets header)', () => {
  it('counts sourceType, collectionType, locale, customValidationSchema, ownerType, repoType', async () => {
    const res = await request(t.app)
      .get(`/orgs/${org.id}/repos/`)
      .query({ sortAsc: 'id' })
      .set(as(member))
      .set('includeFacets', 'true');
    expect(res.body.results.map((r: { id: string }) => r.id)).toEqual(
      ['c1', 'c2', 's1', 's2', 's3'].map(id),
    );
    expect(res.body.facets.fields).toEqual({
      sourceType: [
        ['dictionary', 2],
        ['reference', 1],
      ],
      collectionType: [
        ['Subset', 1],
        ['ValueSet', 1],
      ],
      locale: [
        ['en', 4],
        ['es', 1],
        ['fr', 1],
      ],
      customValidationSchema: [['OpenMRS', 1]],
      ownerType: [['Organization', 5]],
      repoType: [
        ['Source', 3],
        ['Collection', 2],
      ],
    });
  });

  it('leave out what the caller may not see, and follow the filters', async () => {
    const anonymous = await request(t.app)
      .get(`/orgs/${org.id}/repos/`)
      .set('includeFacets', 'true');
    expect(anonymous.body.facets.fields).toMatchObject({
      collectionType: [['Subset', 1]],
      repoType: [
        ['Source', 2],
        ['Collection', 1],
      ],
      locale: [
        ['en', 2],
        ['es', 1],
        ['fr', 1],
      ],
    });
    const filtered = await request(t.app)
      .get('/repos/')
      .query({ q: tag, sourceType: 'reference' })
      .set('includeFacets', 'true');
    expect(filtered.body.facets.fields).toMatchObject({
      sourceType: [['reference', 1]],
      repoType: [['Source', 1]],
      locale: [['es', 1]],
    });
  });

  it('facetsOnly=true answers the facets alone; without the header there are none', async () => {
    const only = await request(t.app).get(`/orgs/${org.id}/sources/`).query({ facetsOnly: 'true' });
    expect(Object.keys(only.body)).toEqual(['facets']);
    expect(only.body.facets.fields.repoType).toEqual([['Source', 2]]);
    const plain = await request(t.app).get(`/orgs/${org.id}/sources/`);
    expect(Array.isArray(plain.body)).toBe(true);
  });
});

describe('paging (spec core §2.1)', () => {
  it('pages with the paging headers and links', async () => {
    const first = await request(t.app)
      .get(`/orgs/${org.id}/repos/`)
      .query({ limit: 2, sortAsc: 'id' })
      .set(as(member));
    expect(first.body.map((r: { id: string }) => r.id)).toEqual([id('c1'), id('c2')]);
    expect(first.headers).toMatchObject({
      num_found: '5',
      num_returned: '2',
      offset: '0',
      pages: '3',
      page_number: '1',
    });
    expect(first.headers.previous).toBeUndefined();
    const next = new URL(first.headers.next);
    const second = await request(t.app).get(`${next.pathname}${next.search}`).set(as(member));
    expect(second.body.map((r: { id: string }) => r.id)).toEqual([id('s1'), id('s2')]);
    expect(second.headers).toMatchObject({ offset: '2', page_number: '2' });
    expect(new URL(second.headers.previous).searchParams.get('page')).toBe('1');
    const last = await request(t.app)
      .get(`/orgs/${org.id}/repos/`)
      .query({ limit: 2, page: 3, sortAsc: 'id' })
      .set(as(member));
    expect(last.body.map((r: { id: string }) => r.id)).toEqual([id('s3')]);
    expect(last.headers.next).toBeUndefined();
  });

  it('HEAD answers the headers only', async () => {
    const res = await request(t.app).head('/repos/').query({ q: tag });
    expect(res.status).toBe(200);
    expect(res.headers.num_found).toBe('5');
    expect(res.text).toBeUndefined();
  });

  it('a malformed limit is a 400', async () => {
    const res = await request(t.app).get('/sources/').query({ limit: 'many' });
    expect(res.status).toBe(400);
    expect(res.body.errors.limit).toBeDefined();
  });
});

describe('owners that go away', () => {
  it('a deactivated user’s repositories leave the lists', async () => {
    const user = await createUser(t);
    const rid = uniqueId('gone');
    await request(t.app).post('/user/sources/').set(as(user)).send({ id: rid, name: 'Gone' });
    await request(t.app)
      .post('/user/collections/')
      .set(as(user))
      .send({ short_code: `${rid}-c`, name: 'Gone too' });
    expect(await listed('/repos/', { q: rid })).toEqual([rid, `${rid}-c`]);
    const off = await request(t.app)
      .delete(`/users/${user.username}/`)
      .set('Authorization', t.admin);
    expect(off.status).toBe(204);
    for (const url of ['/repos/', '/sources/', '/collections/']) {
      expect(await listed(url, { q: rid }, t.admin)).toEqual([]);
    }
  });
});
