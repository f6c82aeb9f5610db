import request from 'supertest';
import { createOrg, createUser, type TestApp, type TestUser } from './index';

/** The small world the collection REST tests share. */
export interface CollectionWorld {
  owner: TestUser;
  org: string;
  /** `/orgs/:org/sources/S/` */
  source: string;
  /** `/orgs/:org/sources/S2/`, holding X */
  other: string;
  /** `/orgs/:org/collections/C/` */
  collection: string;
}

export interface CollectionWorldOptions {
  sourceFields?: Record<string, unknown>;
  collectionFields?: Record<string, unknown>;
  /** Extras of concepts, by concept id. */
  conceptExtras?: Record<string, Record<string, unknown>>;
  /** The mappings of S: id, map type, from and to concept URLs. */
  mappings: (w: CollectionWorld) => Array<[string, string, string, string]>;
}

/**
 * An org (of a new user) with source S: concepts A Malaria (Diagnosis), B Fever, C Cough
 * (retired), D Aspirin (Drug), E Headache (Symptoms); source S2 with concept X Paludism; an empty
 * collection C; and the mappings the caller names.
 */
export async function collectionWorld(
  t: TestApp,
  options: CollectionWorldOptions,
): Promise<CollectionWorld> {
  const owner = await createUser(t);
  const org = (await createOrg(t, owner)).id;
  const auth = { Authorization: owner.auth };
  const w: CollectionWorld = {
    owner,
    org,
    source: `/orgs/${org}/sources/S/`,
    other: `/orgs/${org}/sources/S2/`,
    collection: `/orgs/${org}/collections/C/`,
  };
  for (const [id, fields] of [
    ['S', options.sourceFields ?? {}],
    ['S2', {}],
  ] as const) {
    await request(t.app)
      .post(`/orgs/${org}/sources/`)
      .set(auth)
      .send({ name: id, ...fields, id })
      .expect(201);
  }
  await request(t.app)
    .post(`/orgs/${org}/collections/`)
    .set(auth)
    .send({ name: 'C', ...options.collectionFields, id: 'C' })
    .expect(201);
  for (const [source, id, name, cls] of [
    [w.source, 'A', 'Malaria', 'Diagnosis'],
    [w.source, 'B', 'Fever', 'Symptom'],
    [w.source, 'C', 'Cough', 'Symptom'],
    [w.source, 'D', 'Aspirin', 'Drug'],
    [w.source, 'E', 'Headache', 'Symptom'],
    [w.other, 'X', 'Paludism', 'Diagnosis'],
  ]) {
    const extras = options.conceptExtras?.[id];
    await request(t.app)
      .post(`${source}concepts/`)
      .set(auth)
      .send({
        id,
        concept_class: cls,
        names: [{ name, locale: 'en', locale_preferred: true }],
        ...(extras ? { extras } : {}),
      })
      .expect(201);
  }
  await request(t.app).delete(`${w.source}concepts/C/`).set(auth).expect(204);
  for (const [id, mapType, from, to] of options.mappings(w)) {
    await request(t.app)
      .post(`${w.source}mappings/`)
      .set(auth)
      .send({ id, map_type: mapType, from_concept_url: from, to_concept_url: to })
      .expect(201);
  }
  return w;
}
