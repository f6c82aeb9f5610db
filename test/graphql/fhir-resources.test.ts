import request from 'supertest';
import { createTestApp, createUser, uniqueId, type TestApp } from '../factories';
import {
  createConcept,
  createMappingBetween,
  createRepo,
  createVersion,
} from '../factories/content';
import { orgWithPeople } from '../factories/people';
import { dataOf, errorCode, gql } from './gql';

/** GraphQL parity of the FHIR resource reads (spec operations §4.7, design §2 feature parity). */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const QUERY = `query ($url: String!, $version: String) {
  codeSystem(url: $url, version: $version)
  valueSet(url: $url, version: $version)
  conceptMap(url: $url, version: $version)
}`;

async function world(orgFields: Record<string, unknown> = {}) {
  const {
    org: { id: org },
    admin,
    member,
  } = await orgWithPeople(t, orgFields);
  const canonical = `http://example.org/gql/${uniqueId('cs')}`;
  const source = await createRepo(t, `/orgs/${org}`, admin, { id: 'S', canonical_url: canonical });
  const concept = (id: string) => `/orgs/${org}/sources/S/concepts/${id}/`;
  await createConcept(t, source.url, admin, { id: 'A' });
  await createConcept(t, source.url, admin, { id: 'B' });
  await createMappingBetween(t, source.url, admin, ['M1', 'SAME-AS', concept('A'), concept('B')]);
  await createVersion(t, source.url, admin, 'v1', { released: true });
  await createConcept(t, source.url, admin, { id: 'C' });
  await createVersion(t, source.url, admin, 'v2');
  const vsCanonical = `http://example.org/gql/${uniqueId('vs')}`;
  const collection = await createRepo(
    t,
    `/orgs/${org}`,
    admin,
    { id: 'V', canonical_url: vsCanonical },
    'collections',
  );
  const added = await request(t.app)
    .put(`${collection.url}references/`)
    .set('Authorization', admin.auth)
    .send({ data: { expressions: [`/orgs/${org}/sources/S/v1/concepts/A/`] } });
  expect(added.status).toBe(200);
  await createVersion(t, collection.url, admin, 'c1', { released: true });
  return { org, admin, member, canonical, vsCanonical };
}

describe('FHIR resources through GraphQL', () => {
  it('reads a CodeSystem, a ValueSet and a ConceptMap as the FHIR edge does', async () => {
    const w = await world();
    const cs = dataOf(await gql(t, undefined, QUERY, { url: w.canonical }));
    expect(cs.codeSystem).toMatchObject({
      resourceType: 'CodeSystem',
      url: w.canonical,
      version: 'v1',
    });
    expect(cs.codeSystem.concept.map((c: { code: string }) => c.code)).toEqual(['A', 'B']);
    expect(cs.conceptMap).toMatchObject({ resourceType: 'ConceptMap', version: 'v1' });
    expect(cs.conceptMap.group[0].element[0]).toMatchObject({
      code: 'A',
      target: [expect.objectContaining({ code: 'B', equivalence: 'equivalent' })],
    });
    expect(cs.valueSet).toBeNull();
    // The same resource the FHIR edge answers.
    const rest = await request(t.app).get(
      `/fhir/CodeSystem?url=${encodeURIComponent(w.canonical)}`,
    );
    // (each supertest request has its own port: the accession identifier's system differs)
    const withoutIdentifier = (resource: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(resource).filter(([k]) => k !== 'identifier'));
    expect(withoutIdentifier(cs.codeSystem)).toEqual(
      withoutIdentifier(rest.body.entry[0].resource),
    );

    const draft = dataOf(await gql(t, undefined, QUERY, { url: w.canonical, version: 'v2' }));
    expect(draft.codeSystem.concept.map((c: { code: string }) => c.code)).toEqual(['A', 'B', 'C']);

    const vs = dataOf(await gql(t, undefined, QUERY, { url: w.vsCanonical }));
    expect(vs.valueSet).toMatchObject({
      resourceType: 'ValueSet',
      version: 'c1',
      compose: { include: [{ system: w.canonical, concept: [{ code: 'A' }] }] },
    });
    expect(vs.codeSystem).toBeNull();
  });

  it('answers null for private content to those who may not see it', async () => {
    const w = await world({ public_access: 'None' });
    const outsider = await createUser(t);
    for (const auth of [undefined, outsider.auth]) {
      const res = dataOf(await gql(t, auth, QUERY, { url: w.canonical }));
      expect(res).toEqual({ codeSystem: null, valueSet: null, conceptMap: null });
    }
    const member = dataOf(await gql(t, w.member.auth, QUERY, { url: w.canonical }));
    expect(member.codeSystem).toMatchObject({ version: 'v1' });
  });

  it('refuses version * and a bad page as INVALID', async () => {
    const w = await world();
    expect(errorCode(await gql(t, undefined, QUERY, { url: w.canonical, version: '*' }))).toBe(
      'INVALID',
    );
    const page = await gql(t, undefined, `{ codeSystem(url: "${w.canonical}", page: 0) }`);
    expect(errorCode(page)).toBe('INVALID');
  });
});

describe('FHIR writes through GraphQL', () => {
  const CREATE = `mutation ($type: FhirResourceType!, $owner: String, $resource: JSONObject!) {
    createFhirResource(type: $type, owner: $owner, resource: $resource) { id resource taskId }
  }`;
  const UPDATE = `mutation ($type: FhirResourceType!, $owner: String, $id: String!, $resource: JSONObject!) {
    updateFhirResource(type: $type, owner: $owner, id: $id, resource: $resource) { id resource }
  }`;
  const DELETE = `mutation ($type: FhirResourceType!, $owner: String, $id: String!) {
    deleteFhirResource(type: $type, owner: $owner, id: $id) { deletedId }
  }`;

  it('creates, updates and deletes a CodeSystem as the FHIR edge does; refusals change nothing', async () => {
    const w = await world();
    const id = uniqueId('gcs');
    const url = `http://example.org/gql/${id}`;
    const resource = {
      resourceType: 'CodeSystem',
      id,
      url,
      status: 'active',
      concept: [{ code: 'x', display: 'Ex' }],
    };
    const owner = `/orgs/${w.org}/`;
    expect(
      errorCode(await gql(t, undefined, CREATE, { type: 'CodeSystem', owner, resource })),
    ).toBe('UNAUTHENTICATED');
    const outsider = await createUser(t);
    expect(
      errorCode(await gql(t, outsider.auth, CREATE, { type: 'CodeSystem', owner, resource })),
    ).toBe('FORBIDDEN');
    expect(dataOf(await gql(t, undefined, QUERY, { url })).codeSystem).toBeNull();

    const made = dataOf(
      await gql(t, w.admin.auth, CREATE, { type: 'CodeSystem', owner, resource }),
    );
    expect(made.createFhirResource.id).toBe(id);
    expect(made.createFhirResource.resource).toMatchObject({
      id,
      version: '0.1',
      meta: { versionId: '0.1' },
    });
    const read = dataOf(await gql(t, undefined, QUERY, { url }));
    expect(read.codeSystem.concept.map((c: { code: string }) => c.code)).toEqual(['x']);

    const edited = { ...resource, version: '0.2', concept: [{ code: 'y', display: 'Why' }] };
    const bad = await gql(t, outsider.auth, UPDATE, {
      type: 'CodeSystem',
      owner,
      id,
      resource: edited,
    });
    expect(errorCode(bad)).toBe('FORBIDDEN');
    const invalid = await gql(t, w.admin.auth, UPDATE, {
      type: 'CodeSystem',
      owner,
      id,
      resource: { ...edited, url: undefined },
    });
    expect(errorCode(invalid)).toBe('INVALID');
    expect(dataOf(await gql(t, undefined, QUERY, { url })).codeSystem.version).toBe('0.1');

    const updated = dataOf(
      await gql(t, w.admin.auth, UPDATE, { type: 'CodeSystem', owner, id, resource: edited }),
    );
    expect(updated.updateFhirResource.resource).toMatchObject({ version: '0.2' });
    const latest = dataOf(await gql(t, undefined, QUERY, { url })).codeSystem;
    expect(latest.version).toBe('0.2');
    expect(latest.concept.map((c: { code: string }) => c.code)).toEqual(['x', 'y']);

    const global = `org${w.org.length}-${w.org}-${id}`;
    expect(errorCode(await gql(t, outsider.auth, DELETE, { type: 'CodeSystem', id: global }))).toBe(
      'FORBIDDEN',
    );
    expect(
      dataOf(await gql(t, w.admin.auth, DELETE, { type: 'CodeSystem', id: global }))
        .deleteFhirResource.deletedId,
    ).toBeTruthy();
    expect(dataOf(await gql(t, undefined, QUERY, { url })).codeSystem).toBeNull();
  });
});
