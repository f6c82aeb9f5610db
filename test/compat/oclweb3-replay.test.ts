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
import {
  createConcept,
  createMappingBetween,
  createRepo,
  createVersion,
  type TestRepo,
} from '../factories/content';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  POST_LOGOUT_REDIRECT_URI,
  REDIRECT_URI,
  signInAtProvider,
  startProvider,
  type TestProvider,
} from '../oidc/provider';

/**
 * Issue 15 part 6: the requests oclweb3 makes, page by page (`../shared/notes/oclweb3.md`),
 * replayed against the server the notes describe, each with the headers the client sends
 * (`Token` authorization, `INCLUDESEARCHLATEST`, `X-OCL-CLIENT`, its origin), asserting the
 * status and the fields the client reads. The client file that reads them is named beside each.
 *
 * The world: org DEMO with member jdoe (signed in through the identity provider, as oclweb3 only
 * signs in that way); DEMO's source CLIN with 30 concepts named in en and fr, 20 mappings and a
 * released v1.0; source ICDX; collection MALARIA with 10 references and v1; jdoe's source MYSRC.
 * DEMO and jdoe carry a unique suffix so that the file also runs against a kept database.
 */

const ORIGIN = 'http://127.0.0.1:4002';
const EDITOR_PARAMS = 'includeSubscribedOrgs=true&includeAuthGroups=true&includePins=true';
const SIGN_IN_USER = `/user/?${EDITOR_PARAMS}&includeFollowing=true`;

let provider: TestProvider;
let t: TestApp;
let w: World;

interface World {
  demo: string;
  owner: TestUser;
  jdoe: TestUser;
  /** jdoe's access token from the identity provider, as the client keeps it. */
  token: string;
  clin: TestRepo;
  icdx: TestRepo;
  malaria: TestRepo;
  mysrc: TestRepo;
  /** An org jdoe is not a member of, with a source. */
  other: { org: string; source: TestRepo };
}

/** What the client does to sign in: the login redirect, the provider, the code exchange. */
async function ssoSignIn(login: string): Promise<request.Response> {
  const state = uniqueId('state');
  const nonce = uniqueId('nonce');
  const start = await request(t.app)
    .get('/users/login/')
    .query({ client_id: CLIENT_ID, state, nonce, redirect_uri: REDIRECT_URI });
  expect(start.status).toBe(302);
  const authorize = new URL(start.headers.location);
  expect(authorize.origin).toBe(provider.issuer);
  expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
    client_id: CLIENT_ID,
    state,
    nonce,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
  });
  const back = await signInAtProvider(start.headers.location, login);
  expect(back.searchParams.get('state')).toBe(state);
  return client(undefined).post('/users/oidc/code-exchange/', {
    code: back.searchParams.get('code'),
    redirect_uri: REDIRECT_URI,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
  });
}

/** Requests as oclweb3's APIService sends them: its headers, and `Token` when signed in. */
function client(token: string | undefined) {
  const headers = {
    Origin: ORIGIN,
    Accept: '*/*',
    INCLUDESEARCHLATEST: 'true',
    'X-OCL-CLIENT': 'oclweb3/3.0.0-alpha',
    ...(token ? { Authorization: `Token ${token}` } : {}),
  };
  const checked = async (req: request.Test) => {
    const res = await req;
    // Every answer carries CORS headers the browser needs to hand it to the client.
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
    return res;
  };
  return {
    get: (path: string) => checked(request(t.app).get(path).set(headers)),
    post: (path: string, body: unknown) =>
      checked(
        request(t.app)
          .post(path)
          .set(headers)
          .send(body as object),
      ),
    put: (path: string, body: unknown) =>
      checked(
        request(t.app)
          .put(path)
          .set(headers)
          .send(body as object),
      ),
    patch: (path: string, body: unknown) =>
      checked(
        request(t.app)
          .patch(path)
          .set(headers)
          .send(body as object),
      ),
    delete: (path: string, body?: unknown) =>
      checked(
        body === undefined
          ? request(t.app).delete(path).set(headers)
          : request(t.app)
              .delete(path)
              .set(headers)
              .send(body as object),
      ),
  };
}

const asJdoe = () => client(w.token);
const anonymous = () => client(undefined);

/** `hasAccessToURL` of oclweb3 (common/utils.js), our own rendering of what it computes. */
function hasAccessToURL(user: Record<string, unknown>, url: string): boolean {
  if (user.is_staff || user.is_superuser) return true;
  const [ownerType, owner] = url.split('/').filter(Boolean);
  if (!ownerType || !owner) return false;
  if (ownerType === 'users') return user.username === owner;
  if (ownerType === 'orgs') {
    const orgs = (user.subscribed_orgs ?? []) as Array<{ id: string }>;
    return orgs.some((o) => o.id === owner);
  }
  return false;
}

const CLASSES = ['Diagnosis', 'Symptom', 'Drug'];
const conceptId = (i: number) => `C${String(i).padStart(2, '0')}`;

async function seed(): Promise<World> {
  const signedIn = await ssoSignIn(uniqueId('jdoe'));
  expect(signedIn.status).toBe(200);
  const token = signedIn.body.access_token as string;
  const me = await client(token).get('/user/');
  const jdoe: TestUser = {
    username: me.body.username,
    password: '',
    email: me.body.email,
    auth: `Token ${token}`,
  };
  const owner = await createUser(t);
  const demo = (await createOrg(t, owner, { id: uniqueId('DEMO'), name: 'Demo' })).id;
  // An administrator of DEMO: spec core §5 rule 7 gives repository edits and membership to an
  // org's owners, while the client offers its Manage menus to every member (docs/rights.md).
  await addMember(t, demo, owner, jdoe, 'admin');
  const org = `/orgs/${demo}`;
  const clin = await createRepo(t, org, owner, {
    id: 'CLIN',
    name: 'Clinical',
    default_locale: 'en',
    supported_locales: ['en', 'fr'],
  });
  const icdx = await createRepo(t, org, owner, { id: 'ICDX', name: 'ICD-X' });
  for (let i = 1; i <= 30; i += 1) {
    await createConcept(t, clin.url, owner, {
      id: conceptId(i),
      concept_class: CLASSES[i % 3],
      datatype: 'None',
      names: [
        {
          name: `Concept ${i}`,
          locale: 'en',
          locale_preferred: true,
          name_type: 'Fully-Specified',
        },
        { name: `Concept ${i} (fr)`, locale: 'fr', locale_preferred: true },
      ],
      ...(i <= 3 ? { extras: { icd: `B5${i}` } } : {}),
    });
  }
  for (let i = 1; i <= 10; i += 1)
    await createConcept(t, icdx.url, owner, { id: `I${String(i).padStart(2, '0')}` });
  const concept = (i: number) => `${clin.url}concepts/${conceptId(i)}/`;
  // Ten within CLIN (C01 and C07 each with five children), ten from CLIN to ICDX.
  for (let i = 0; i < 10; i += 1) {
    const parent = i < 5 ? 1 : 7;
    await createMappingBetween(t, clin.url, owner, [
      `M${i + 1}`,
      'NARROWER-THAN',
      concept(parent),
      concept(parent + 1 + (i % 5)),
    ]);
  }
  for (let i = 0; i < 10; i += 1) {
    await createMappingBetween(t, clin.url, owner, [
      `M${i + 11}`,
      'SAME-AS',
      concept(13 + i),
      `${icdx.url}concepts/I${String(i + 1).padStart(2, '0')}/`,
    ]);
  }
  // ICDX holds one mapping from a CLIN concept: the concept page's "other sources" list.
  await createMappingBetween(t, icdx.url, owner, [
    'BACK',
    'SAME-AS',
    concept(13),
    `${icdx.url}concepts/I01/`,
  ]);
  await createVersion(t, clin.url, owner, 'v1.0', { released: true });
  const malaria = await createRepo(t, org, owner, { id: 'MALARIA' }, 'collections');
  const expressions = [
    ...[1, 2, 3, 4, 5, 6, 7, 8].map((i) => `${clin.url}v1.0/concepts/${conceptId(i)}/`),
    `${clin.url}v1.0/mappings/M1/`,
    `${clin.url}v1.0/mappings/M2/`,
  ];
  await request(t.app)
    .put(`${malaria.url}references/`)
    .set('Authorization', owner.auth)
    .send({ data: { expressions } })
    .expect(200);
  await createVersion(t, malaria.url, owner, 'v1');
  const mysrc = await createRepo(t, `/users/${jdoe.username}`, jdoe, { id: 'MYSRC' });
  const stranger = await createUser(t);
  const otherOrg = (await createOrg(t, stranger)).id;
  const otherSource = await createRepo(t, `/orgs/${otherOrg}`, stranger, { id: 'THEIRS' });
  return {
    demo,
    owner,
    jdoe,
    token,
    clin,
    icdx,
    malaria,
    mysrc,
    other: { org: otherOrg, source: otherSource },
  };
}

beforeAll(async () => {
  provider = await startProvider();
  t = await createTestApp(provider.env);
  // What the service does on start (LOOKUP_SOURCES=on): the concept form's pick lists.
  await t.services.lookups.ensure();
  w = await seed();
}, 180_000);
afterAll(async () => {
  await t?.close();
  await provider?.stop();
});

describe('CORS, as the browser asks before each call', () => {
  it('answers every preflight 204 with the origin, the methods and the headers the client sends', async () => {
    for (const [path, method] of [
      ['/orgs/', 'GET'],
      [SIGN_IN_USER, 'GET'],
      [`${w.clin.url}concepts/`, 'POST'],
      [`${w.clin.url}concepts/C01/`, 'PUT'],
      [`${w.clin.url}concepts/C01/`, 'DELETE'],
      ['/users/oidc/code-exchange/', 'POST'],
    ]) {
      const res = await request(t.app)
        .options(path)
        .set('Origin', ORIGIN)
        .set('Access-Control-Request-Method', method)
        .set(
          'Access-Control-Request-Headers',
          'authorization,content-type,includesearchlatest,x-ocl-client',
        );
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
      expect(res.headers['access-control-allow-methods']).toContain(method);
      const allowed = res.headers['access-control-allow-headers'].toLowerCase();
      for (const h of ['authorization', 'content-type', 'includesearchlatest', 'x-ocl-client'])
        expect(allowed).toContain(h);
    }
  });

  it('exposes the paging headers the client reads', async () => {
    const res = await anonymous().get(`${w.clin.url}concepts/?q=&page=1&limit=25`);
    const exposed = res.headers['access-control-expose-headers'].toLowerCase();
    for (const h of ['num_found', 'num_returned', 'pages', 'page_number', 'next', 'previous'])
      expect(exposed).toContain(h);
    expect(res.headers).toMatchObject({ num_found: '30', num_returned: '25', page_number: '1' });
    expect(res.headers.pages).toBe('2');
  });
});

describe('sign-in (users/OIDLoginCallback.jsx, common/utils.js)', () => {
  it('redirects to the provider, exchanges the code for {access_token} and reads the signed-in user', async () => {
    const res = await ssoSignIn(w.jdoe.username);
    expect(res.status).toBe(200);
    expect(typeof res.body.access_token).toBe('string');
    const user = await client(res.body.access_token).get(SIGN_IN_USER);
    expect(user.status).toBe(200);
    expect(user.body).toMatchObject({
      username: w.jdoe.username,
      url: `/users/${w.jdoe.username}/`,
      is_staff: false,
      auth_groups: [],
      pins: [],
      following: [],
    });
    expect(user.body.subscribed_orgs).toEqual([
      { id: w.demo, name: 'Demo', url: `/orgs/${w.demo}/` },
    ]);
  });

  it('signs out through the provider with what the client kept: no id token (it stores "null")', async () => {
    // The provider sends the browser back with a code only, so the client's `id_token` is the
    // string "null" (users/OIDLoginCallback.jsx); its sign-out sends it as the hint.
    const res = await anonymous().get(
      `/users/logout/?id_token_hint=null&post_logout_redirect_uri=${POST_LOGOUT_REDIRECT_URI}`,
    );
    expect(res.status).toBe(302);
    const target = new URL(res.headers.location);
    expect(target.origin).toBe(provider.issuer);
    expect(target.searchParams.get('post_logout_redirect_uri')).toBe(POST_LOGOUT_REDIRECT_URI);
    const page = await fetch(target, { redirect: 'manual' });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('logout');
  });

  it('logs out on a token the server does not know: 401', async () => {
    const res = await client('not-a-token').get(SIGN_IN_USER);
    expect(res.status).toBe(401);
  });
});

describe('home and dashboards (app/App.jsx, dashboard/*.jsx)', () => {
  it('reads the API version and the feature toggles', async () => {
    expect((await anonymous().get('/version/')).status).toBe(200);
    const toggles = await anonymous().get('/toggles/');
    expect(toggles.status).toBe(200);
    expect(toggles.body).toEqual({});
  });

  it("shows guests public events, and jdoe what happened in DEMO, by each dashboard's scope", async () => {
    const guest = await anonymous().get('/events/?limit=10&page=1');
    expect(guest.status).toBe(200);
    expect(Array.isArray(guest.body)).toBe(true);
    expect(guest.headers.page_number).toBe('1');
    const get = (scopes: string, limit: number) =>
      asJdoe().get(`/users/${w.jdoe.username}/events/?scopes=${scopes}&limit=${limit}&page=1`);
    const all = await get('following,orgs', 10);
    expect(all.status).toBe(200);
    expect(all.headers.page_number).toBe('1');
    const about = all.body.map(
      (e: { event_type: string; referenced_object: { url: string; version_url?: string } }) =>
        `${e.event_type} ${e.referenced_object.version_url ?? e.referenced_object.url}`,
    );
    expect(about).toEqual(
      expect.arrayContaining([
        `Created ${w.clin.url}`,
        `Released ${w.clin.url}v1.0/`,
        `Created ${w.malaria.url}v1/`,
      ]),
    );
    for (const e of all.body)
      expect(e).toEqual(
        expect.objectContaining({
          id: expect.anything(),
          event_type: expect.any(String),
          actor: expect.objectContaining({ username: expect.any(String) }),
          created_at: expect.any(String),
        }),
      );
    const self = await get('self', 5);
    expect(self.body.map((e: { event_type: string }) => e.event_type)).toEqual(
      expect.arrayContaining(['Created', 'Joined']),
    );
    for (const scope of ['following', 'orgs']) expect((await get(scope, 10)).status).toBe(200);
  });

  it('searches orgs, sources, repositories and concepts with the paging the client sends', async () => {
    const orgs = await anonymous().get(
      '/orgs/?q=&page=1&limit=25&includeSearchMeta=true&sortAsc=name&verbose=true',
    );
    expect(orgs.status).toBe(200);
    expect(Number(orgs.headers.num_found)).toBeGreaterThanOrEqual(2);
    const demo = await anonymous().get(
      `/orgs/?q=${w.demo}&page=1&limit=25&includeSearchMeta=true&verbose=true`,
    );
    expect(demo.body.map((o: { id: string }) => o.id)).toContain(w.demo);
    const concepts = await anonymous().get(
      `/concepts/?q=Concept%2012&page=1&limit=25&includeSearchMeta=true`,
    );
    expect(concepts.status).toBe(200);
    expect(concepts.body.map((c: { url: string }) => c.url)).toContain(
      `${w.clin.url}concepts/C12/`,
    );
    const elsewhere = await anonymous().get(
      `/concepts/?q=Concept%2012&source=!CLIN&page=1&limit=25&includeSearchMeta=true`,
    );
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body.map((c: { source: string }) => c.source)).not.toContain('CLIN');
    for (const path of ['/sources/', '/repos/']) {
      const res = await anonymous().get(`${path}?q=CLIN&page=1&limit=25&includeSearchMeta=true`);
      expect(res.status).toBe(200);
      expect(res.body.map((r: { url: string }) => r.url)).toContain(w.clin.url);
    }
  });
});

describe('org page (orgs/OrgHome.jsx)', () => {
  it('reads the org, its members, its repositories and its pins', async () => {
    const org = await asJdoe().get(`/orgs/${w.demo}/?includeOverview=true`);
    expect(org.status).toBe(200);
    expect(org.body).toMatchObject({ id: w.demo, name: 'Demo', url: `/orgs/${w.demo}/` });
    const members = await asJdoe().get(`/orgs/${w.demo}/members/?verbose=true`);
    expect(members.status).toBe(200);
    expect(members.body.map((m: { username: string }) => m.username).sort()).toEqual(
      [w.owner.username, w.jdoe.username].sort(),
    );
    const repos = await asJdoe().get(`/orgs/${w.demo}/repos/?page=1&limit=25`);
    expect(repos.body.map((r: { short_code: string }) => r.short_code).sort()).toEqual([
      'CLIN',
      'ICDX',
      'MALARIA',
    ]);
    expect((await asJdoe().get(`/orgs/${w.demo}/pins/`)).body).toEqual([]);
  });

  it('lets jdoe, a member, pin a repository, and shows the pin to everyone', async () => {
    expect(hasAccessToURL((await asJdoe().get(SIGN_IN_USER)).body, `/orgs/${w.demo}/`)).toBe(true);
    const pin = await asJdoe().post(`/orgs/${w.demo}/pins/`, {
      resource_type: 'Source',
      resource_id: w.clin.body.uuid,
    });
    expect(pin.status).toBe(201);
    const pins = await anonymous().get(`/orgs/${w.demo}/pins/`);
    expect(pins.body).toHaveLength(1);
    expect(pins.body[0]).toMatchObject({
      resource_type: 'Source',
      resource: { url: w.clin.url, short_code: 'CLIN' },
    });
    expect((await asJdoe().delete(pins.body[0].uri)).status).toBe(204);
  });
});

describe('source page (repos/RepoHome.jsx, RepoSummary.jsx, VersionsTable.jsx)', () => {
  it('reads HEAD with its summary, the owner and the summary panel', async () => {
    const head = await asJdoe().get(`${w.clin.url}?includeSummary=true`);
    expect(head.status).toBe(200);
    expect(head.body).toMatchObject({
      id: 'CLIN',
      url: w.clin.url,
      version: 'HEAD',
      default_locale: 'en',
      // spec core §2.4: a comma-separated string (OCL answers a list; the client spreads it).
      supported_locales: 'en,fr',
      summary: { active_concepts: 30, active_mappings: 20 },
    });
    expect((await asJdoe().get(`/orgs/${w.demo}/`)).status).toBe(200);
    const summary = await asJdoe().get(`${w.clin.url}summary/?verbose=true`);
    expect(summary.status).toBe(200);
    expect(summary.body.concepts).toMatchObject({ active: 30, retired: 0 });
    expect(summary.body.concepts.concept_class).toHaveLength(3);
    expect(summary.body.concepts.locale).toEqual([
      ['en', 30],
      ['fr', 30],
    ]);
    expect(summary.body.concepts.datatype).toEqual([['None', 30]]);
    expect(Array.isArray(summary.body.concepts.name_type)).toBe(true);
    expect(summary.body.mappings).toMatchObject({ active: 20, retired: 0 });
    expect(summary.body.mappings.map_type).toEqual(
      expect.arrayContaining([
        ['NARROWER-THAN', 10],
        ['SAME-AS', 10],
      ]),
    );
    expect(summary.body.versions).toEqual({ total: 1, released: 1 });
  });

  it('lists versions with their summaries; the client opens the latest released one', async () => {
    const versions = await asJdoe().get(
      `${w.clin.url}versions/?verbose=true&includeSummary=true&limit=100&page=1`,
    );
    expect(versions.status).toBe(200);
    expect(versions.body.map((v: { id: string }) => v.id)).toEqual(['v1.0', 'HEAD']);
    for (const v of versions.body) {
      expect(typeof v.summary.active_concepts).toBe('number');
      expect(typeof v.summary.active_mappings).toBe('number');
      expect(Date.parse(v.created_on)).not.toBeNaN();
      expect(v.version_url).toBe(`${w.clin.url}${v.id}/`);
    }
    const released = versions.body.find((v: { released: boolean }) => v.released);
    expect(released).toMatchObject({ id: 'v1.0', summary: { active_concepts: 30 } });
    const v1 = await asJdoe().get(`${released.version_url}?includeSummary=true`);
    expect(v1.body).toMatchObject({ id: 'v1.0', version_url: released.version_url });
    const summary = await asJdoe().get(`${released.version_url}summary/?verbose=true`);
    expect(summary.body.concepts).toMatchObject({ active: 30 });
  });

  it('pages concepts and mappings of the version, filtered by concept class', async () => {
    const v = `${w.clin.url}v1.0/`;
    const page2 = await asJdoe().get(
      `${v}concepts/?q=&page=2&limit=25&includeSearchMeta=true&sortAsc=id`,
    );
    expect(page2.status).toBe(200);
    expect(page2.headers).toMatchObject({ num_found: '30', num_returned: '5', page_number: '2' });
    expect(page2.body.map((c: { id: string }) => c.id)).toEqual([
      'C26',
      'C27',
      'C28',
      'C29',
      'C30',
    ]);
    const drugs = await asJdoe().get(
      `${v}concepts/?q=&page=1&limit=25&includeSearchMeta=true&conceptClass=Drug`,
    );
    expect(drugs.headers.num_found).toBe('10');
    expect(drugs.body.every((c: { concept_class: string }) => c.concept_class === 'Drug')).toBe(
      true,
    );
    const mappings = await asJdoe().get(
      `${v}mappings/?q=&page=1&limit=25&includeSearchMeta=true&sortAsc=id`,
    );
    expect(mappings.headers.num_found).toBe('20');
    expect(mappings.body[0]).toEqual(
      expect.objectContaining({
        map_type: expect.any(String),
        from_concept_url: expect.any(String),
        to_concept_url: expect.any(String),
      }),
    );
  });
});

describe('default filters (repos/RepoHome.jsx onSaveAsDefaultFilters)', () => {
  it('saves the applied filters into meta.display.default_filter with PATCH, and reads them back', async () => {
    const src = await createRepo(t, `/orgs/${w.demo}`, w.owner, { id: uniqueId('FILT') });
    const repo = (await asJdoe().get(`${src.url}?includeSummary=true`)).body;
    const meta = {
      ...repo.meta,
      display: { ...repo.meta?.display, default_filter: { conceptClass: ['Drug'] } },
    };
    const saved = await asJdoe().patch(repo.version_url || repo.url, { meta });
    expect(saved.status).toBe(200);
    const again = await asJdoe().get(`${src.url}?includeSummary=true`);
    expect(again.body.meta.display.default_filter).toEqual({ conceptClass: ['Drug'] });
  });
});

describe('hierarchy view (repos/RepoEdit form, search/Search.jsx, search/TableResults.jsx)', () => {
  it('sets the root, lists it with has_children and opens each level by children/, at HEAD and at a version', async () => {
    const src = await createRepo(t, `/orgs/${w.demo}`, w.owner, { id: uniqueId('HIER') });
    const parentOf = (code: string) => ({ parent_concept_urls: [`${src.url}concepts/${code}/`] });
    await createConcept(t, src.url, w.owner, { id: 'ROOT' });
    await createConcept(t, src.url, w.owner, { id: 'K1', ...parentOf('ROOT') });
    await createConcept(t, src.url, w.owner, { id: 'K2', ...parentOf('K1') });
    await createConcept(t, src.url, w.owner, { id: 'K3', ...parentOf('ROOT') });
    // The source form sends the root's URL; the client offers Hierarchy once the detail has it.
    const saved = await asJdoe().put(src.url, { hierarchy_root_url: `${src.url}concepts/ROOT/` });
    expect(saved.status).toBe(200);
    const detail = await asJdoe().get(`${src.url}?includeSummary=true`);
    expect(detail.body.hierarchy_root_url).toBe(`${src.url}concepts/ROOT/`);
    await createVersion(t, src.url, w.owner, 'v1');
    for (const base of [`${src.url}concepts/`, `${src.url}v1/concepts/`]) {
      // Search.jsx: onlyHierarchyRoot, and no sort (it would leave the hierarchy path).
      const roots = await asJdoe().get(
        `${base}?q=&page=1&limit=25&includeSearchMeta=true&onlyHierarchyRoot=true`,
      );
      expect(roots.status).toBe(200);
      expect(roots.body).toEqual([
        expect.objectContaining({
          id: 'ROOT',
          has_children: true,
          url: `${src.url}concepts/ROOT/`,
        }),
      ]);
      // TableResults.getChildrenURL: the listing URL up to concepts/, the row's code, children/.
      const childrenUrl = (row: { url: string }) =>
        `${base.replace(/concepts\/.*$/, '')}${row.url.replace(/^.*\/concepts\//, 'concepts/')}children/`;
      const level1 = await asJdoe().get(childrenUrl(roots.body[0]));
      expect(Array.isArray(level1.body)).toBe(true);
      expect(
        level1.body.map((c: { id: string; has_children: boolean }) => [c.id, c.has_children]),
      ).toEqual([
        ['K1', true],
        ['K3', false],
      ]);
      const level2 = await asJdoe().get(childrenUrl(level1.body[0]));
      expect(level2.body.map((c: { id: string }) => c.id)).toEqual(['K2']);
    }
  });
});

describe('concept page (concepts/ConceptHome.jsx, History.jsx)', () => {
  const conceptUrl = () => `${w.clin.url}v1.0/concepts/C01/`;

  it('reads the concept and its repository', async () => {
    const concept = await asJdoe().get(conceptUrl());
    expect(concept.status).toBe(200);
    expect(concept.body).toMatchObject({
      id: 'C01',
      source_url: w.clin.url,
      concept_class: 'Symptom',
      owner: w.demo,
      owner_type: 'Organization',
      source: 'CLIN',
    });
    expect(concept.body.names.map((n: { locale: string }) => n.locale).sort()).toEqual([
      'en',
      'fr',
    ]);
    expect((await asJdoe().get(`${w.clin.url}v1.0/`)).status).toBe(200);
  });

  it('shows Associations: children by $cascade hierarchy, parents with reverse', async () => {
    const cascade = (url: string, reverse: boolean) =>
      asJdoe().get(
        `${url}$cascade/?uri=${encodeURIComponent(w.clin.url)}&cascadeLevels=1&method=sourceToConcepts&view=hierarchy${reverse ? '&reverse=true' : ''}`,
      );
    const children = await cascade(conceptUrl(), false);
    expect(children.status).toBe(200);
    const entries = children.body.entry.entries as Array<{ type: string; id?: string }>;
    expect(
      entries
        .filter((e) => e.type === 'Concept')
        .map((e) => e.id)
        .sort(),
    ).toEqual(['C02', 'C03', 'C04', 'C05', 'C06']);
    expect(entries.filter((e) => e.type === 'Mapping')).toHaveLength(5);
    const parents = await cascade(`${w.clin.url}v1.0/concepts/C03/`, true);
    expect(parents.status).toBe(200);
    expect(
      (parents.body.entry.entries as Array<{ type: string; id?: string }>)
        .filter((e) => e.type === 'Concept')
        .map((e) => e.id),
    ).toEqual(['C01']);
    const leaf = await cascade(`${w.clin.url}v1.0/concepts/C30/`, false);
    expect(leaf.body.entry.entries).toEqual([]);
  });

  it("lists the owner's mappings of the concept held in its other sources (source=!CLIN)", async () => {
    const owned = (side: 'from' | 'to') =>
      asJdoe().get(
        `/mappings/?ownerType=Organization&owner=${w.demo}&${side}Concept=C13&${side}ConceptSource=CLIN&source=!CLIN&brief=true&pageSize=1000`,
      );
    const from = await owned('from');
    expect(from.status).toBe(200);
    expect(from.body.map((m: { url: string }) => m.url)).toEqual([`${w.icdx.url}mappings/BACK/`]);
    expect((await owned('to')).body).toEqual([]);
  });

  it('shows History: each version with the repository versions that hold it', async () => {
    const edit = await asJdoe().put(`${w.clin.url}concepts/C02/`, {
      names: [{ name: 'Renamed', locale: 'en', locale_preferred: true }],
      update_comment: 'renamed by jdoe',
    });
    expect(edit.status).toBe(200);
    const versions = await asJdoe().get(
      `${w.clin.url}concepts/C02/versions/?includeCollectionVersions=true&includeSourceVersions=true`,
    );
    expect(versions.status).toBe(200);
    expect(versions.body).toHaveLength(2);
    for (const v of versions.body) {
      expect(typeof v.uuid).toBe('string');
      expect(Date.parse(v.version_created_on)).not.toBeNaN();
      expect(Array.isArray(v.source_versions)).toBe(true);
      expect(Array.isArray(v.collection_versions)).toBe(true);
    }
    const [latest, first] = versions.body;
    expect(latest).toMatchObject({ update_comment: 'renamed by jdoe', source_versions: [] });
    expect(first).toMatchObject({
      source_versions: [`${w.clin.url}v1.0/`],
      collection_versions: [`${w.malaria.url}v1/`],
    });
    // The client then reads the source's versions (HEAD last) and files each concept version
    // under the repository version whose `version_url` its `source_versions` holds.
    const repoVersions = await asJdoe().get(`${w.clin.url}versions/`);
    const urls = repoVersions.body.map((v: { version_url: string }) => v.version_url);
    expect(urls[urls.length - 1]).toBe(`${w.clin.url}HEAD/`);
    expect(urls).toContain(first.source_versions[0]);
  });
});

describe('mapping page (mappings/MappingHome.jsx, FromConceptCard.jsx, ToConceptCard.jsx)', () => {
  it('reads the mapping with both ends resolved, and its history', async () => {
    const mapping = await asJdoe().get(`${w.clin.url}v1.0/mappings/M11/`);
    expect(mapping.status).toBe(200);
    expect(mapping.body).toMatchObject({
      id: 'M11',
      map_type: 'SAME-AS',
      from_concept_url: `${w.clin.url}concepts/C13/`,
      from_concept_code: 'C13',
      from_concept_name_resolved: 'Concept 13',
      to_concept_url: `${w.icdx.url}concepts/I01/`,
      to_concept_code: 'I01',
      to_concept_name_resolved: 'Name I01',
    });
    const versions = await asJdoe().get(
      `${w.clin.url}mappings/M11/versions/?includeCollectionVersions=true&includeSourceVersions=true`,
    );
    expect(versions.status).toBe(200);
    expect(versions.body[0]).toMatchObject({
      source_versions: [`${w.clin.url}v1.0/`],
      collection_versions: [],
    });
    expect(typeof versions.body[0].uuid).toBe('string');
    expect(Date.parse(versions.body[0].version_created_on)).not.toBeNaN();
    expect((await asJdoe().get(`${w.clin.url}versions/`)).status).toBe(200);
  });

  it('retires and reactivates the mapping as jdoe, with the reason the dialog asks', async () => {
    const url = `${w.clin.url}mappings/M20/`;
    expect((await asJdoe().delete(url, { comment: 'wrong target' })).status).toBe(204);
    expect((await asJdoe().get(url)).body.retired).toBe(true);
    expect((await asJdoe().put(`${url}reactivate/`, { comment: 'right after all' })).status).toBe(
      204,
    );
    expect((await asJdoe().get(url)).body.retired).toBe(false);
  });
});

describe('collection page (repos/RepoHome.jsx, references/*)', () => {
  it('finds the default expansion of HEAD by expansion_url and pages its concepts and mappings', async () => {
    const head = await asJdoe().get(`${w.malaria.url}?includeSummary=true`);
    expect(head.status).toBe(200);
    expect(head.body).toMatchObject({ version: 'HEAD', summary: { active_concepts: 8 } });
    const expansions = await asJdoe().get(
      `${w.malaria.url}HEAD/expansions/?includeSummary=true&verbose=true`,
    );
    expect(expansions.status).toBe(200);
    const selected = expansions.body.find(
      (e: { url: string }) => e.url === head.body.expansion_url,
    );
    expect(selected).toBeDefined();
    expect(selected.mnemonic).toEqual(expect.any(String));
    const base = `${w.malaria.url}HEAD/expansions/${selected.mnemonic}/`;
    const concepts = await asJdoe().get(
      `${base}concepts/?q=&page=1&limit=25&includeSearchMeta=true`,
    );
    expect(concepts.status).toBe(200);
    expect(concepts.headers.num_found).toBe('8');
    const mappings = await asJdoe().get(
      `${base}mappings/?q=&page=1&limit=25&includeSearchMeta=true`,
    );
    expect(mappings.body.map((m: { id: string }) => m.id).sort()).toEqual(['M1', 'M2']);
  });

  it('does the same at v1 through the version detail', async () => {
    const versions = await asJdoe().get(
      `${w.malaria.url}versions/?verbose=true&includeSummary=true&limit=100&page=1`,
    );
    const v1 = versions.body.find((v: { id: string }) => v.id === 'v1');
    expect(v1.summary).toMatchObject({ active_concepts: 8, active_mappings: 2 });
    const detail = await asJdoe().get(`${v1.version_url}?includeSummary=true`);
    expect(detail.body.expansion_url).toEqual(expect.stringContaining(`${w.malaria.url}v1/`));
    const expansions = await asJdoe().get(
      `${detail.body.expansions_url}?includeSummary=true&verbose=true`,
    );
    const selected = expansions.body.find(
      (e: { url: string }) => e.url === detail.body.expansion_url,
    );
    const concepts = await asJdoe().get(
      `${w.malaria.url}v1/expansions/${selected.mnemonic}/concepts/?q=&page=1&limit=25`,
    );
    expect(concepts.headers.num_found).toBe('8');
  });

  it("shows each version's expansions with their repository updates and processing state, and rebuilds one (CollectionVersionsTab.jsx)", async () => {
    const version = `${w.malaria.url}v1/`;
    const detail = await asJdoe().get(`${version}?includeSummary=true`);
    const expansions = await asJdoe().get(`${version}expansions/?includeSummary=true&verbose=true`);
    const selected = expansions.body.find(
      (e: { url: string }) => e.url === detail.body.expansion_url,
    );
    // fetchResolvedRepoUpdates: an object (its keys are what the row warns about).
    const updates = await asJdoe().get(
      `${version}expansions/${selected.mnemonic}/resolved-repo-updates/`,
    );
    expect(updates.status).toBe(200);
    expect(updates.body).toEqual({});
    // pollExpansionProcessing: parseProcessingValue reads a bare boolean (or "true"/"false").
    const processing = await asJdoe().get(`${selected.url}processing/`);
    expect(processing.status).toBe(200);
    expect(processing.body).toBe(false);
    // onRebuildExpansion: any of 200, 201, 202 is success.
    const rebuilt = await asJdoe().post(`${selected.url}re-evaluate/`, undefined);
    expect([200, 201, 202]).toContain(rebuilt.status);
    const concepts = await asJdoe().get(`${selected.url}concepts/?q=&page=1&limit=25`);
    expect(concepts.headers.num_found).toBe('8');
  });

  it('opens a member concept and mapping with the references that brought them in', async () => {
    for (const [path, expression] of [
      ['concepts/C01/', `${w.clin.url}v1.0/concepts/C01/`],
      ['mappings/M1/', `${w.clin.url}v1.0/mappings/M1/`],
    ]) {
      for (const at of [w.malaria.url, `${w.malaria.url}v1/`]) {
        const res = await asJdoe().get(`${at}${path}?includeReferences=true`);
        expect([at, path, res.status]).toEqual([at, path, 200]);
        expect(res.body.url).toBe(`${w.clin.url}${path}`);
        expect(res.body.references).toEqual([
          expect.objectContaining({ id: expect.any(Number), expression }),
        ]);
      }
    }
    // The concept as the collection pinned it (v1.0), not as HEAD renamed it since.
    const pinned = await asJdoe().get(`${w.malaria.url}concepts/C02/`);
    expect(pinned.body.display_name).toBe('Concept 2');
    expect(pinned.body.references).toBeUndefined();
  });

  it('shows the summary panel and each reference with its results', async () => {
    const summary = await asJdoe().get(`${w.malaria.url}summary/?verbose=true`);
    expect(summary.body.concepts).toMatchObject({ active: 8, retired: 0 });
    expect(summary.body.mappings).toMatchObject({ active: 2 });
    const refs = await asJdoe().get(
      `${w.malaria.url}references/?q=&page=1&limit=25&verbose=true&includeResolvedRepoVersions=true`,
    );
    expect(refs.status).toBe(200);
    expect(refs.body).toHaveLength(10);
    for (const r of refs.body) {
      expect(Date.parse(r.last_resolved_at)).not.toBeNaN();
      expect(r.concepts + r.mappings).toBe(1);
    }
  });
});

describe('user profile (users/UserHome.jsx, UserProfile.jsx, UserForm.jsx)', () => {
  it("reads jdoe's profile, repositories, pins and events", async () => {
    const user = await asJdoe().get(
      `/users/${w.jdoe.username}/?includeSubscribedOrgs=true&includeFollowing=true`,
    );
    expect(user.status).toBe(200);
    expect(user.body.subscribed_orgs.map((o: { id: string }) => o.id)).toEqual([w.demo]);
    expect(user.body).toHaveProperty('first_name');
    expect(user.body).toHaveProperty('last_name');
    const repos = await asJdoe().get(`/users/${w.jdoe.username}/repos/`);
    expect(repos.body.map((r: { url: string }) => r.url)).toEqual([w.mysrc.url]);
    expect((await asJdoe().get(`/users/${w.jdoe.username}/pins/`)).body).toEqual([]);
    const events = await asJdoe().get(`/users/${w.jdoe.username}/events/?limit=5&page=1`);
    expect(events.status).toBe(200);
    expect(Array.isArray(events.body)).toBe(true);
  });

  it('reads the API token the client shows: signed in through the provider, a working API token', async () => {
    const res = await asJdoe().get('/users/api-token/');
    expect(res.status).toBe(200);
    expect(res.body.token).toEqual(expect.any(String));
    const me = await client(res.body.token).get('/user/');
    expect(me.body.username).toBe(w.jdoe.username);
  });

  it('saves the profile form and reads it back as the sign-in cache does', async () => {
    const res = await asJdoe().put(`/users/${w.jdoe.username}/`, {
      first_name: 'Jane',
      last_name: 'Doe',
      company: 'DEMO',
      location: 'Nairobi',
      website: 'https://example.org',
      preferred_locale: 'fr',
      bio: '',
    });
    expect(res.status).toBe(200);
    const me = await asJdoe().get(SIGN_IN_USER);
    expect(me.body).toMatchObject({
      first_name: 'Jane',
      last_name: 'Doe',
      company: 'DEMO',
      location: 'Nairobi',
      preferred_locale: 'fr',
    });
  });
});

describe('concept form (concepts/ConceptForm.jsx, concepts/utils.js)', () => {
  it('loads its pick lists from the OCL lookup sources and /locales/', async () => {
    for (const [source, value] of [
      ['Classes', 'Diagnosis'],
      ['Datatypes', 'None'],
      ['NameTypes', 'Fully-Specified'],
      ['DescriptionTypes', 'Definition'],
    ]) {
      const res = await asJdoe().get(`/orgs/OCL/sources/${source}/concepts/lookup/`);
      expect(res.status).toBe(200);
      expect(res.body.map((c: { id: string }) => c.id)).toContain(value);
    }
    const locales = await asJdoe().get('/locales/?verbose=true');
    expect(locales.status).toBe(200);
    const fr = locales.body.find((l: { locale: string }) => l.locale === 'fr');
    expect(fr).toEqual(
      expect.objectContaining({ id: expect.any(String), uuid: expect.anything() }),
    );
    expect(fr.display_name).toMatch(/French/);
    const extras = await asJdoe().get(
      `${w.clin.url}summary/?verbose=true&distribution=concepts_extras`,
    );
    expect(extras.body.distribution.concepts_extras).toEqual(['icd']);
  });

  it('creates, edits, retires and reactivates a concept as jdoe, a member of DEMO', async () => {
    const created = await asJdoe().post(`${w.clin.url}concepts/`, {
      id: 'NEW1',
      concept_class: 'Diagnosis',
      datatype: 'N/A',
      external_id: '',
      extras: {},
      comment: '',
      names: [
        {
          locale: 'en',
          name_type: 'Fully-Specified',
          name: 'New concept',
          external_id: '',
          locale_preferred: true,
        },
      ],
    });
    expect(created.status).toBe(201);
    expect(created.body.url).toBe(`${w.clin.url}concepts/NEW1/`);
    const concept = created.body;
    const edited = await asJdoe().put(`${w.clin.url}concepts/NEW1/`, {
      id: 'NEW1',
      concept_class: concept.concept_class,
      datatype: concept.datatype,
      external_id: concept.external_id || '',
      extras: { note: 'edited' },
      parent_concept_urls: concept.parent_concept_urls || [],
      names: concept.names.map((n: Record<string, unknown>) => ({
        locale: n.locale,
        name_type: n.name_type,
        locale_preferred: n.locale_preferred || false,
        name: `${String(n.name)} (edited)`,
        external_id: n.external_id || '',
      })),
      update_comment: 'edited in the form',
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({
      url: `${w.clin.url}concepts/NEW1/`,
      display_name: 'New concept (edited)',
      extras: { note: 'edited' },
    });
    const retired = await asJdoe().delete(`${w.clin.url}concepts/NEW1/`, { comment: 'a mistake' });
    expect(retired.status).toBe(204);
    expect((await asJdoe().get(`${w.clin.url}concepts/NEW1/`)).body.retired).toBe(true);
    const back = await asJdoe().put(`${w.clin.url}concepts/NEW1/reactivate/`, {
      comment: 'not a mistake',
    });
    expect(back.status).toBe(204);
    expect((await asJdoe().get(`${w.clin.url}concepts/NEW1/`)).body.retired).toBe(false);
  });

  it("answers a concept without a name's locale with the 400 the form shows", async () => {
    const res = await asJdoe().post(`${w.clin.url}concepts/`, {
      id: 'NOLOCALE',
      concept_class: 'Diagnosis',
      datatype: 'N/A',
      names: [{ name_type: 'Fully-Specified', name: 'x', locale_preferred: true }],
    });
    expect(res.status).toBe(400);
    expect((await asJdoe().get(`${w.clin.url}concepts/NOLOCALE/`)).status).toBe(404);
  });

  it('lets jdoe do exactly what hasAccessToURL offers: every item of the Manage menus (repos/RepoManagementList.jsx, orgs/OrgHeader.jsx) in DEMO and MYSRC, none in another org', async () => {
    const user = (await asJdoe().get(SIGN_IN_USER)).body as Record<string, unknown>;
    const targets: Array<[string, TestRepo]> = [
      [`/orgs/${w.demo}`, w.clin],
      [`/users/${w.jdoe.username}`, w.mysrc],
      [`/orgs/${w.other.org}`, w.other.source],
    ];
    for (const [owner, repo] of targets) {
      const offered = hasAccessToURL(user, repo.url);
      const expectStatus = (what: string, res: request.Response, allowed: number) =>
        expect([repo.url, what, res.status]).toEqual([repo.url, what, offered ? allowed : 403]);
      const id = uniqueId('X');
      expectStatus(
        'add concept',
        await asJdoe().post(`${repo.url}concepts/`, {
          id,
          concept_class: 'Misc',
          datatype: 'None',
          names: [{ locale: 'en', name_type: 'Fully-Specified', name: id, locale_preferred: true }],
        }),
        201,
      );
      const from = offered ? `${repo.url}concepts/${id}/` : `${w.other.source.url}concepts/NONE/`;
      expectStatus(
        'add mapping',
        await asJdoe().post(`${repo.url}mappings/`, {
          map_type: 'SAME-AS',
          from_concept_url: from,
          to_concept_url: `${w.icdx.url}concepts/I02/`,
        }),
        201,
      );
      expectStatus('edit', await asJdoe().put(repo.url, { description: 'edited' }), 200);
      const version = uniqueId('v');
      expectStatus(
        'create version',
        await asJdoe().post(`${repo.url}versions/`, { id: version }),
        201,
      );
      const versionUrl = offered ? `${repo.url}${version}/` : `${repo.url}HEAD/`;
      expectStatus('release', await asJdoe().put(versionUrl, { released: true }), 200);
      if (offered) {
        expectStatus('delete version', await asJdoe().delete(versionUrl), 204);
      }
      expectStatus(
        'new repository',
        await asJdoe().post(`${owner}/sources/`, { id: 'SCRATCH', name: 'Scratch' }),
        201,
      );
      const scratch = offered ? `${owner}/sources/SCRATCH/` : repo.url;
      expectStatus('delete repository', await asJdoe().delete(scratch), 204);
    }
    expect(hasAccessToURL(user, `/orgs/${w.demo}/`)).toBe(true);
    expect(hasAccessToURL(user, w.other.source.url)).toBe(false);
    // Nothing changed where jdoe was refused.
    const theirs = await anonymous().get(`${w.other.source.url}?includeSummary=true`);
    expect(theirs.body).toMatchObject({ description: null, summary: { active_concepts: 0 } });
    expect((await anonymous().get(`${w.other.source.url}versions/`)).body).toHaveLength(1);
  });
});

describe('compare versions (repos/CompareVersions.jsx, VersionResourcesComparison.jsx, SourceVersionsTab.jsx)', () => {
  it('reads both versions from the verbose list, their summaries, and the changelog', async () => {
    const src = await createRepo(t, `/orgs/${w.demo}`, w.owner, { id: uniqueId('CMP') });
    await createConcept(t, src.url, w.owner, { id: 'K1' });
    await createVersion(t, src.url, w.owner, 'r1', { released: true });
    await createConcept(t, src.url, w.owner, { id: 'K2' });
    await createVersion(t, src.url, w.owner, 'r2', { released: true });
    const versions = await asJdoe().get(`${src.url}versions/?verbose=true&includeSummary=true`);
    type Listed = { id: string; url: string; version_url: string };
    const listed = versions.body as Listed[];
    const [r1, r2] = ['r1', 'r2'].map((id) => listed.find((v) => v.id === id)!);
    // fetchVerboseSummary: `version.url + version.id + '/summary/'`.
    for (const v of [r1, r2]) {
      const summary = await asJdoe().get(`${v.url}${v.id}/summary/?verbose=true`);
      expect(summary.status).toBe(200);
    }
    // VersionResourcesComparison: POST /sources/$changelog/ with the two version URLs.
    const log = await asJdoe().post('/sources/$changelog/', {
      version1: r1.version_url,
      version2: r2.version_url,
      verbosity: 3,
    });
    expect(log.status).toBe(200);
    expect(log.body.meta.diff.concepts).toMatchObject({ new: 1 });
    expect(Object.keys(log.body.concepts.new)).toEqual(['K2']);
    // The version's changelog dialog: verbosity 4, output=markdown.
    const note = await asJdoe().post(
      '/sources/$changelog/?inline=true&output=markdown&verbosity=4',
      {
        version1: r1.version_url,
        version2: r2.version_url,
        verbosity: 4,
      },
    );
    expect(note.body.markdown).toContain('K2');
  });
});
