import request from 'supertest';
import { createCollection, createConcept, createMappingBetween, createSource } from './content';
import type { TestApp, TestUser } from './index';

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
  const s = await createSource(t, options.sourceFields);
  const { owner, org } = s;
  const w: CollectionWorld = {
    owner,
    org,
    source: s.url,
    other: (await createSource(t, { id: 'S2' }, { owner, org })).url,
    collection: (await createCollection(t, options.collectionFields, { owner, org })).url,
  };
  for (const [source, id, name, cls] of [
    [w.source, 'A', 'Malaria', 'Diagnosis'],
    [w.source, 'B', 'Fever', 'Symptom'],
    [w.source, 'C', 'Cough', 'Symptom'],
    [w.source, 'D', 'Aspirin', 'Drug'],
    [w.source, 'E', 'Headache', 'Symptom'],
    [w.other, 'X', 'Paludism', 'Diagnosis'],
  ]) {
    const extras = options.conceptExtras?.[id];
    await createConcept(t, source, owner, {
      id,
      concept_class: cls,
      names: [{ name, locale: 'en', locale_preferred: true }],
      ...(extras ? { extras } : {}),
    });
  }
  await request(t.app)
    .delete(`${w.source}concepts/C/`)
    .set('Authorization', owner.auth)
    .expect(204);
  for (const mapping of options.mappings(w))
    await createMappingBetween(t, w.source, owner, mapping);
  return w;
}
