import request from 'supertest';
import { createTestApp, createUser, type TestApp } from '../factories';
import { createConcept, createSource, createVersion, type TestSource } from '../factories/content';
import { gql } from '../graphql/gql';

/**
 * The hierarchy view of the OCL web client: a source's `hierarchy_root_url`, its concept list
 * with `onlyHierarchyRoot=true` (the root, telling `has_children`), and each concept's
 * `children/` (and `parents/`) as a plain array, at HEAD and as of a source version.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/**
 * ROOT ─┬─ A ─── A1
 *       └─ B
 * (and LONE, no parent, no child; R, a retired child of B)
 */
async function tree(fields: Record<string, unknown> = {}): Promise<TestSource> {
  const source = await createSource(t, fields);
  const parent = (code: string) => ({ parent_concept_urls: [`${source.url}concepts/${code}/`] });
  await createConcept(t, source.url, source.owner, { id: 'ROOT' });
  await createConcept(t, source.url, source.owner, { id: 'A', ...parent('ROOT') });
  await createConcept(t, source.url, source.owner, { id: 'B', ...parent('ROOT') });
  await createConcept(t, source.url, source.owner, { id: 'A1', ...parent('A') });
  await createConcept(t, source.url, source.owner, { id: 'LONE' });
  await createConcept(t, source.url, source.owner, { id: 'R', ...parent('B') });
  await request(t.app)
    .delete(`${source.url}concepts/R/`)
    .set('Authorization', source.owner.auth)
    .expect(204);
  return source;
}

async function setRoot(source: TestSource, url: unknown) {
  return request(t.app)
    .put(source.url)
    .set('Authorization', source.owner.auth)
    .send({ hierarchy_root_url: url });
}

const ids = (body: Array<{ id: string }>) => body.map((c) => c.id);

describe('a source hierarchy root', () => {
  it('is set to one of its concepts, shown, and cleared by a blank', async () => {
    const source = await tree();
    const rootUrl = `${source.url}concepts/ROOT/`;
    const set = await setRoot(source, rootUrl);
    expect(set.status).toBe(200);
    expect(set.body.hierarchy_root_url).toBe(rootUrl);
    expect((await request(t.app).get(source.url)).body.hierarchy_root_url).toBe(rootUrl);

    const cleared = await setRoot(source, '');
    expect(cleared.status).toBe(200);
    expect(cleared.body.hierarchy_root_url).toBeNull();
    expect((await request(t.app).get(source.url)).body.hierarchy_root_url).toBeNull();
  });

  it('refuses a concept of another source, an unknown concept, a version or no URL, changing nothing', async () => {
    const source = await tree();
    const other = await tree({ id: 'OTHER' });
    await setRoot(source, `${source.url}concepts/ROOT/`).then((r) => expect(r.status).toBe(200));
    const refused = [
      `${other.url}concepts/ROOT/`,
      `${source.url}concepts/NOPE/`,
      `${source.url}concepts/ROOT/1/`,
      'not a url',
      42,
    ];
    for (const url of refused) {
      const res = await setRoot(source, url);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toMatch(/hierarchy_root_url/);
    }
    expect((await request(t.app).get(source.url)).body.hierarchy_root_url).toBe(
      `${source.url}concepts/ROOT/`,
    );
  });

  it('cannot be set on a source being made (it has no concepts yet)', async () => {
    const owner = await createUser(t);
    const res = await request(t.app)
      .post(`/users/${owner.username}/sources/`)
      .set('Authorization', owner.auth)
      .send({ id: 'NEW', name: 'New', hierarchy_root_url: '/users/x/sources/NEW/concepts/ROOT/' });
    expect(res.status).toBe(400);
    const after = await request(t.app)
      .get(`/users/${owner.username}/sources/NEW/`)
      .set('Authorization', owner.auth);
    expect(after.status).toBe(404);
  });

  it('may be set only by an editor of the source', async () => {
    const source = await tree();
    const stranger = await createUser(t);
    const res = await request(t.app)
      .put(source.url)
      .set('Authorization', stranger.auth)
      .send({ hierarchy_root_url: `${source.url}concepts/ROOT/` });
    expect(res.status).toBe(403);
    expect((await request(t.app).get(source.url)).body.hierarchy_root_url).toBeNull();
  });

  it('is frozen by a version: a later change of root leaves the version as it was', async () => {
    const source = await tree();
    await setRoot(source, `${source.url}concepts/ROOT/`);
    await createVersion(t, source.url, source.owner, 'v1');
    await setRoot(source, `${source.url}concepts/A/`);
    expect((await request(t.app).get(`${source.url}v1/`)).body.hierarchy_root_url).toBe(
      `${source.url}concepts/ROOT/`,
    );
    const atV1 = await request(t.app)
      .get(`${source.url}v1/concepts/`)
      .query({ onlyHierarchyRoot: true });
    expect(ids(atV1.body)).toEqual(['ROOT']);
    const atHead = await request(t.app)
      .get(`${source.url}concepts/`)
      .query({ onlyHierarchyRoot: true });
    expect(ids(atHead.body)).toEqual(['A']);
  });
});

describe('the hierarchy view', () => {
  it('lists only the root with has_children, and nothing when the source has no root', async () => {
    const source = await tree();
    const none = await request(t.app)
      .get(`${source.url}concepts/`)
      .query({ onlyHierarchyRoot: true, includeSearchMeta: true, page: 1, limit: 25 });
    expect(none.status).toBe(200);
    expect(none.body).toEqual([]);
    expect(none.headers.num_found).toBe('0');

    await setRoot(source, `${source.url}concepts/ROOT/`);
    const root = await request(t.app)
      .get(`${source.url}concepts/`)
      .query({ onlyHierarchyRoot: true, includeSearchMeta: true, page: 1, limit: 25 });
    expect(root.body).toEqual([
      expect.objectContaining({
        id: 'ROOT',
        has_children: true,
        url: `${source.url}concepts/ROOT/`,
      }),
    ]);
    expect(root.headers.num_found).toBe('1');

    // A plain list shows no has_children (OCL shows it only on hierarchy levels).
    const plain = await request(t.app).get(`${source.url}concepts/`);
    expect(ids(plain.body).sort()).toEqual(['A', 'A1', 'B', 'LONE', 'ROOT']);
    expect(plain.body[0]).not.toHaveProperty('has_children');
  });

  it("answers a concept's children as a plain array, each telling has_children; retired ones only when asked", async () => {
    const source = await tree();
    const children = await request(t.app).get(`${source.url}concepts/ROOT/children/`);
    expect(children.status).toBe(200);
    expect(children.body).toEqual([
      expect.objectContaining({ id: 'A', has_children: true }),
      expect.objectContaining({ id: 'B', has_children: false }),
    ]);
    expect(children.headers.num_found).toBe('2');
    const leaf = await request(t.app).get(`${source.url}concepts/A1/children/`);
    expect(leaf.body).toEqual([]);
    const withRetired = await request(t.app)
      .get(`${source.url}concepts/B/children/`)
      .query({ includeRetired: true });
    expect(ids(withRetired.body)).toEqual(['R']);
    const verbose = await request(t.app)
      .get(`${source.url}concepts/ROOT/children/`)
      .query({ verbose: true, limit: 1 });
    expect(verbose.body).toEqual([
      expect.objectContaining({ id: 'A', has_children: true, names: expect.any(Array) }),
    ]);
    expect(verbose.headers.num_found).toBe('2');
  });

  it("answers a concept's parents", async () => {
    const source = await tree();
    const parents = await request(t.app).get(`${source.url}concepts/A1/parents/`);
    expect(parents.status).toBe(200);
    expect(parents.body).toEqual([expect.objectContaining({ id: 'A', has_children: true })]);
    expect((await request(t.app).get(`${source.url}concepts/ROOT/parents/`)).body).toEqual([]);
  });

  it('reads children as of a source version: later edits at HEAD do not show there', async () => {
    const source = await tree();
    await createVersion(t, source.url, source.owner, 'v1');
    await createConcept(t, source.url, source.owner, {
      id: 'C',
      parent_concept_urls: [`${source.url}concepts/ROOT/`],
    });
    await createConcept(t, source.url, source.owner, {
      id: 'B1',
      parent_concept_urls: [`${source.url}concepts/B/`],
    });
    const atV1 = await request(t.app).get(`${source.url}v1/concepts/ROOT/children/`);
    expect(atV1.body).toEqual([
      expect.objectContaining({ id: 'A', has_children: true }),
      expect.objectContaining({ id: 'B', has_children: false }),
    ]);
    const atHead = await request(t.app).get(`${source.url}concepts/ROOT/children/`);
    expect(atHead.body).toEqual([
      expect.objectContaining({ id: 'A', has_children: true }),
      expect.objectContaining({ id: 'B', has_children: true }),
      expect.objectContaining({ id: 'C', has_children: false }),
    ]);
  });

  it('answers 404 for an unknown concept, and keeps a private source private', async () => {
    const source = await tree({ public_access: 'None' });
    const unknown = await request(t.app)
      .get(`${source.url}concepts/NOPE/children/`)
      .set('Authorization', source.owner.auth);
    expect(unknown.status).toBe(404);
    // Anonymous callers meet the private source as they do at its concepts' details.
    const anonymous = await request(t.app).get(`${source.url}concepts/ROOT/children/`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).not.toEqual(expect.arrayContaining([expect.anything()]));
    const stranger = await createUser(t);
    const strangers = await request(t.app)
      .get(`${source.url}concepts/ROOT/parents/`)
      .set('Authorization', stranger.auth);
    expect(strangers.status).toBe(
      (await request(t.app).get(`${source.url}concepts/ROOT/`).set('Authorization', stranger.auth))
        .status,
    );
    expect(strangers.status).toBeGreaterThanOrEqual(403);
    const owner = await request(t.app)
      .get(`${source.url}concepts/ROOT/children/`)
      .set('Authorization', source.owner.auth);
    expect(ids(owner.body)).toEqual(['A', 'B']);
  });

  it('parallel root changes end with one of them, whole', async () => {
    const source = await tree();
    const urls = ['ROOT', 'A', 'B', 'A1'].map((c) => `${source.url}concepts/${c}/`);
    const answers = await Promise.all(urls.map((url) => setRoot(source, url)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    const shown = (await request(t.app).get(source.url)).body.hierarchy_root_url;
    expect(urls).toContain(shown);
  });
});

describe('the hierarchy through GraphQL', () => {
  it('sets the root, lists it, and walks children and parents with hasChildren', async () => {
    const source = await tree();
    const set = await gql(
      t,
      source.owner.auth,
      `mutation($url: String!, $root: String) {
         updateSource(url: $url, input: { hierarchyRootUrl: $root }) { source { hierarchyRootUrl } }
       }`,
      { url: source.url, root: `${source.url}concepts/ROOT/` },
    );
    expect(set.errors).toBeUndefined();
    expect(set.data.updateSource.source.hierarchyRootUrl).toBe(`${source.url}concepts/ROOT/`);

    const read = await gql(
      t,
      undefined,
      `query($url: String!) {
         source(url: $url) {
           hierarchyRootUrl
           concepts(onlyHierarchyRoot: true) {
             totalCount
             items { id hasChildren children { items { id hasChildren children { items { id } } } } }
           }
         }
         concept(url: "${source.url}concepts/A1/") { parents { items { id hasChildren } } }
       }`,
      { url: source.url },
    );
    expect(read.errors).toBeUndefined();
    expect(read.data.source.concepts).toEqual({
      totalCount: 1,
      items: [
        {
          id: 'ROOT',
          hasChildren: true,
          children: {
            items: [
              { id: 'A', hasChildren: true, children: { items: [{ id: 'A1' }] } },
              { id: 'B', hasChildren: false, children: { items: [] } },
            ],
          },
        },
      ],
    });
    expect(read.data.concept.parents.items).toEqual([{ id: 'A', hasChildren: true }]);
  });

  it('refuses a root from another source with a field error', async () => {
    const source = await tree();
    const other = await tree({ id: 'ELSEWHERE' });
    const res = await gql(
      t,
      source.owner.auth,
      `mutation($url: String!, $root: String) {
         updateSource(url: $url, input: { hierarchyRootUrl: $root }) { source { hierarchyRootUrl } }
       }`,
      { url: source.url, root: `${other.url}concepts/ROOT/` },
    );
    expect(res.errors?.[0].extensions?.code).toBe('INVALID');
    expect(Object.keys(res.errors?.[0].extensions?.fieldErrors ?? {})).toEqual([
      'hierarchyRootUrl',
    ]);
    const after = await gql(t, undefined, `{ source(url: "${source.url}") { hierarchyRootUrl } }`);
    expect(after.data.source.hierarchyRootUrl).toBeNull();
  });
});
