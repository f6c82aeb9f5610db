import request from 'supertest';
import type { ServiceContext } from '../../src/services';
import { contextOf, createTestApp, uniqueId, type TestApp } from '../factories';
import { createCollection, createConcept, createSource, createVersion } from '../factories/content';

/**
 * The by-code statements of `$lookup` and ValueSet `$validate-code` are planned once per
 * connection, not at every call: PostgreSQL keeps a generic plan for a prepared statement only
 * when it judges it no dearer than planning for each call's values, and judged the array-valued
 * forms dearer (planning then cost more than running them). The app's pool has one connection
 * here, so the statements it prepared are that session's `pg_prepared_statements`.
 */
let t: TestApp;
let ctx: ServiceContext;
let system: string;
let valueSet: string;
const CODES = Array.from({ length: 10 }, (_, i) => `P${i}`);

beforeAll(async () => {
  t = await createTestApp({ DB_POOL_SIZE: '1', JOBS_WORKERS: '0' });
  system = `http://example.org/planned/${uniqueId('cs')}`;
  valueSet = `http://example.org/planned/${uniqueId('vs')}`;
  const source = await createSource(t, { canonical_url: system });
  for (const id of CODES) await createConcept(t, source.url, source.owner, { id });
  await createVersion(t, source.url, source.owner, 'v1', { released: true });
  const collection = await createCollection(
    t,
    { id: uniqueId('vs'), canonical_url: valueSet },
    { owner: source.owner, org: source.org },
  );
  await request(t.app)
    .put(`${collection.url}references/`)
    .set('Authorization', source.owner.auth)
    .send({ data: { expressions: [`${source.url}v1/concepts/`] } })
    .expect(200);
  await createVersion(t, collection.url, source.owner, 'v1', { released: true });
  ctx = await contextOf(t, 'anonymous');
});
afterAll(async () => t.close());

/**
 * How the prepared statements whose text has `marker` were planned so far in the session, and
 * the types of their parameters.
 */
async function plans(
  marker: string,
): Promise<{ generic: number; custom: number; parameters: string[] }> {
  const rows = await t.dataSource.query<
    Array<{ generic: number; custom: number; parameters: string }>
  >(
    `SELECT generic_plans::int AS generic, custom_plans::int AS custom,
       parameter_types::text AS parameters
     FROM pg_prepared_statements WHERE statement LIKE $1`,
    [`%${marker}%`],
  );
  expect(rows).toHaveLength(1);
  const [{ generic, custom, parameters }] = rows;
  return { generic, custom, parameters: parameters.replace(/[{}]/g, '').split(',') };
}

it('reads the one code of a $lookup as one value, in a statement planned once', async () => {
  for (const code of CODES) {
    const found = await t.services.terminology.lookup(
      ctx,
      { coding: { system, code }, properties: [], useSupplements: [] },
      [],
    );
    expect(found.code).toBe(code);
  }
  // Against an array of codes PostgreSQL plans each call anew at dictionary scale (its generic
  // plan looks dearer there; bench/fhir.bench.ts), though not on this small database: the code
  // is a single text value.
  const { generic, custom, parameters } = await plans('FROM concepts c JOIN concept_versions cv');
  expect(parameters).toEqual(['bigint', 'text', 'bigint']);
  // Five custom plans first (PostgreSQL's rule), then the generic one for the rest.
  expect(custom).toBeLessThanOrEqual(5);
  expect(generic).toBeGreaterThanOrEqual(CODES.length - 5);
});

it('plans the statement finding a code among a value set’s members once for every $validate-code', async () => {
  for (const code of [...CODES, 'NOT-A-MEMBER']) {
    const answer = await t.services.terminology.validateInValueSet(
      ctx,
      { url: valueSet },
      { kind: 'code', coding: { system, code } },
      [],
      {},
    );
    expect(answer.result).toBe(code !== 'NOT-A-MEMBER');
  }
  const { generic, custom, parameters } = await plans('AS among');
  expect(parameters).toEqual(['bigint', 'bigint', 'text']);
  expect(custom).toBeLessThanOrEqual(5);
  expect(generic).toBeGreaterThanOrEqual(CODES.length + 1 - 5);
});

it('reads each thing a ValueSet $validate-code needs once', async () => {
  const validate = () =>
    t.services.terminology.validateInValueSet(
      ctx,
      { url: valueSet },
      { kind: 'code', coding: { system, code: 'P3' } },
      [],
      {},
    );
  await validate();
  t.queries.count = 0;
  expect((await validate()).result).toBe(true);
  // The value set's versions by URL, its expansion, its member sources, the code among the
  // members, the code system's versions by URL, the concept: not the code system's versions or
  // the expansion a second time.
  expect(t.queries.count).toBeLessThanOrEqual(6);
});
