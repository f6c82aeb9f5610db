import request from 'supertest';
import { createTestApp, type TestApp } from '../factories';
import { collectionWorld, type CollectionWorld } from '../factories/collection-world';
import { hugeString } from './generator';

/** The defects the hostile suite of the newer surfaces found (issue 23, part 6), one test each. */

let t: TestApp;
let world: CollectionWorld;
beforeAll(async () => {
  t = await createTestApp({ MATCH_REQUIRES_APPROVAL: 'false' });
  world = await collectionWorld(t, { mappings: () => [] });
});
afterAll(async () => t?.close());

describe('an inline value set of the wrong shape is a 400 OperationOutcome, not a 500', () => {
  it.each([
    ['compose of a string', 'x'],
    ['include of a string', { include: 'x' }],
    ['an include of a number', { include: [5] }],
    ['a system of a number', { include: [{ system: 5 }] }],
    ['concept of a string', { include: [{ system: 'http://x', concept: 'x' }] }],
    ['a code of a number', { include: [{ system: 'http://x', concept: [{ code: 5 }] }] }],
    ['a filter of numbers', { exclude: [{ system: 'http://x', filter: [{ property: 1 }] }] }],
    ['valueSet of objects', { include: [{ valueSet: [{}] }] }],
  ])('%s', async (_label, compose) => {
    const res = await request(t.app)
      .post('/fhir/ValueSet/$expand')
      .set('Content-Type', 'application/fhir+json')
      .send(
        JSON.stringify({
          resourceType: 'Parameters',
          parameter: [{ name: 'valueSet', resource: { resourceType: 'ValueSet', compose } }],
        }),
      );
    expect(res.status).toBe(400);
    expect(res.body.resourceType).toBe('OperationOutcome');
    expect(JSON.stringify(res.body.issue)).toMatch(/valueSet\.compose/);
  });

  it.each([
    ['a concept without a code', { include: [{ system: 'http://x', concept: [{}] }] }],
    [
      'a filter without a value',
      { include: [{ system: 'http://x', filter: [{ property: 'a' }] }] },
    ],
  ])('%s is left to the engine, still below 500', async (_label, compose) => {
    const res = await request(t.app)
      .post('/fhir/ValueSet/$expand')
      .set('Content-Type', 'application/fhir+json')
      .send(
        JSON.stringify({
          resourceType: 'Parameters',
          parameter: [{ name: 'valueSet', resource: { resourceType: 'ValueSet', compose } }],
        }),
      );
    expect(res.status).toBeLessThan(500);
  });

  it('a well-formed one still expands', async () => {
    const res = await request(t.app)
      .post('/fhir/ValueSet/$expand')
      .set('Content-Type', 'application/fhir+json')
      .send(
        JSON.stringify({
          resourceType: 'Parameters',
          parameter: [
            {
              name: 'valueSet',
              resource: {
                resourceType: 'ValueSet',
                compose: { include: [{ system: 'http://x', concept: [{ code: 'a' }] }] },
              },
            },
          ],
        }),
      );
    expect(res.status).toBeLessThan(500);
    expect(JSON.stringify(res.body)).not.toMatch(/valueSet\.compose/);
  });
});

it('$match refuses a row text over 10000 characters with a 400 naming the field', async () => {
  const match = (row: Record<string, unknown>): request.Test =>
    request(t.app)
      .post('/concepts/$match/')
      .set('Authorization', world.owner.auth)
      .send({ target_repo_url: world.source, rows: [row] });
  const huge = await match({ name: hugeString() });
  expect(huge.status).toBe(400);
  expect(huge.body.errors).toHaveProperty(['rows[0].name']);
  const synonyms = await match({ name: 'x', synonyms: [hugeString(10_001)] });
  expect(synonyms.status).toBe(400);
  expect((await match({ name: 'y'.repeat(10_000) })).status).toBe(200);
});

it.each([
  ['without a boundary', 'multipart/form-data', 'x'],
  [
    'truncated',
    'multipart/form-data; boundary=XyZ',
    '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.json"\r\n\r\n{"type',
  ],
])('a bulk import of a malformed multipart body (%s) is a 400', async (_label, type, body) => {
  const res = await request(t.app)
    .post('/importers/bulk-import/')
    .set('Authorization', world.owner.auth)
    .set('Content-Type', type)
    .send(body);
  expect(res.status).toBe(400);
});
