import request from 'supertest';
import { createTestApp, createUser, type TestApp } from '../factories';
import { createCollection, createSource, createVersion } from '../factories/content';
import { gql } from '../graphql/gql';

/**
 * OCL's `meta` of a repository and of each version: how the web client shows it. Its "save as
 * default filters" (oclweb3 `repos/RepoHome.jsx`) PATCHes `{meta}` on the repository (or the
 * version shown) with `display.default_filter`, and opens the concept list with them.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const FILTERS = { display: { default_filter: { conceptClass: ['Diagnosis'], locale: ['en'] } } };

describe("a repository's meta", () => {
  it('is saved by an editor with PATCH, shown on the detail, and kept apart per version', async () => {
    const source = await createSource(t);
    await createVersion(t, source.url, source.owner, 'v1');
    expect((await request(t.app).get(source.url)).body.meta).toBeNull();
    const saved = await request(t.app)
      .patch(source.url)
      .set('Authorization', source.owner.auth)
      .send({ meta: FILTERS });
    expect(saved.status).toBe(200);
    expect(saved.body.meta).toEqual(FILTERS);
    expect((await request(t.app).get(source.url)).body.meta).toEqual(FILTERS);
    // The version keeps its own: none yet, then its own filters.
    expect((await request(t.app).get(`${source.url}v1/`)).body.meta).toBeNull();
    const versionFilters = { display: { default_filter: { datatype: ['Numeric'] } } };
    const atVersion = await request(t.app)
      .patch(`${source.url}v1/`)
      .set('Authorization', source.owner.auth)
      .send({ meta: versionFilters });
    expect(atVersion.status).toBe(200);
    expect((await request(t.app).get(`${source.url}v1/`)).body.meta).toEqual(versionFilters);
    expect((await request(t.app).get(source.url)).body.meta).toEqual(FILTERS);
  });

  it('works the same on a collection, and is cleared by null', async () => {
    const collection = await createCollection(t);
    await request(t.app)
      .patch(collection.url)
      .set('Authorization', collection.owner.auth)
      .send({ meta: FILTERS })
      .expect(200);
    const cleared = await request(t.app)
      .patch(collection.url)
      .set('Authorization', collection.owner.auth)
      .send({ meta: null });
    expect(cleared.body.meta).toBeNull();
  });

  it('refuses what is not an object, and callers who may not edit, changing nothing', async () => {
    const source = await createSource(t);
    await request(t.app)
      .patch(source.url)
      .set('Authorization', source.owner.auth)
      .send({ meta: FILTERS })
      .expect(200);
    for (const meta of ['filters', [1, 2], 3]) {
      const res = await request(t.app)
        .patch(source.url)
        .set('Authorization', source.owner.auth)
        .send({ meta });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toMatch(/meta/);
    }
    const stranger = await createUser(t);
    const denied = await request(t.app)
      .patch(source.url)
      .set('Authorization', stranger.auth)
      .send({ meta: { display: {} } });
    expect(denied.status).toBe(403);
    expect((await request(t.app).get(source.url)).body.meta).toEqual(FILTERS);
  });

  it('is read and written through GraphQL', async () => {
    const source = await createSource(t);
    const res = await gql(
      t,
      source.owner.auth,
      `mutation($url: String!, $meta: JSONObject) {
         updateSource(url: $url, input: { meta: $meta }) { source { meta } }
       }`,
      { url: source.url, meta: FILTERS },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.updateSource.source.meta).toEqual(FILTERS);
    const read = await gql(t, undefined, `{ source(url: "${source.url}") { meta } }`);
    expect(read.data.source.meta).toEqual(FILTERS);
  });
});
