import request from 'supertest';
import { createOrg, createTestApp, createUser, type TestApp } from '../factories';
import { createCollection, createMapping, createSource } from '../factories/content';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/** A mapping between two concepts outside the service. */
const EXTERNAL_MAPPING = {
  map_type: 'SAME-AS',
  from_source_url: 'http://a.example.org',
  from_concept_code: '1',
  to_source_url: 'http://b.example.org',
  to_concept_code: '2',
};

describe('extras as sub-resources on every resource that has them (spec operations §4.9)', () => {
  it('work the same on an org, a user, a source, a collection and a mapping', async () => {
    const source = await createSource(t);
    const { owner, org } = source;
    const collection = await createCollection(t, {}, { owner, org });
    const mapping = await createMapping(t, source.url, owner, EXTERNAL_MAPPING);
    const bases = [
      `/orgs/${org}/`,
      `/users/${owner.username}/`,
      '/user/',
      source.url,
      collection.url,
      `${source.url}mappings/${String(mapping.id)}/`,
    ];
    for (const [i, base] of bases.entries()) {
      const name = `attr_${i}`;
      const put = await request(t.app)
        .put(`${base}extras/${name}/`)
        .set('Authorization', owner.auth)
        .send({ [name]: { units: 'mg' } });
      expect([base, put.status, put.body]).toEqual([base, 200, { [name]: { units: 'mg' } }]);
      const one = await request(t.app)
        .get(`${base}extras/${name}/`)
        .set('Authorization', owner.auth);
      expect(one.body).toEqual({ [name]: { units: 'mg' } });
      const all = await request(t.app).get(`${base}extras/`).set('Authorization', owner.auth);
      expect(all.body[name]).toEqual({ units: 'mg' });
      expect(
        (await request(t.app).delete(`${base}extras/${name}/`).set('Authorization', owner.auth))
          .status,
      ).toBe(204);
      expect(
        (await request(t.app).get(`${base}extras/${name}/`).set('Authorization', owner.auth))
          .status,
      ).toBe(404);
    }
  });

  it('refuses a malformed body, an outsider and an anonymous writer, changing nothing', async () => {
    const owner = await createUser(t);
    const outsider = await createUser(t);
    const org = await createOrg(t, owner, { extras: { kept: 1 } });
    const bad = await request(t.app)
      .put(`/orgs/${org.id}/extras/a/`)
      .set('Authorization', owner.auth)
      .send({ b: 1 });
    expect(bad.status).toBe(400);
    expect(
      (
        await request(t.app)
          .put(`/orgs/${org.id}/extras/a/`)
          .set('Authorization', outsider.auth)
          .send({ a: 1 })
      ).status,
    ).toBe(403);
    expect((await request(t.app).put(`/orgs/${org.id}/extras/a/`).send({ a: 1 })).status).toBe(401);
    expect((await request(t.app).get(`/orgs/${org.id}/extras/`)).body).toEqual({ kept: 1 });
  });

  it('a mapping extra is a new mapping version; the same value again answers 208', async () => {
    const { url: source, owner } = await createSource(t);
    const m = await createMapping(t, source, owner, EXTERNAL_MAPPING);
    const url = `${source}mappings/${String(m.id)}/`;
    await request(t.app).put(`${url}extras/x/`).set('Authorization', owner.auth).send({ x: 1 });
    expect((await request(t.app).get(url)).body.versions).toBe(2);
    expect(
      (await request(t.app).put(`${url}extras/x/`).set('Authorization', owner.auth).send({ x: 1 }))
        .status,
    ).toBe(208);
  });
});
