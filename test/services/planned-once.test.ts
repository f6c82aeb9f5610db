import type { ServiceContext } from '../../src/services';
import { contextOf, createTestApp, uniqueId, type TestApp } from '../factories';
import { createConcept, createSource, createVersion, releasedValueSet } from '../factories/content';

/**
 * The by-code statements of `$lookup` and ValueSet `$validate-code` are prepared with single
 * values, the forms PostgreSQL can plan once per connection: it keeps a generic plan for a
 * prepared statement only when it judges it no dearer than planning each call's values, and at
 * dictionary scale judged the array-valued forms dearer, planning every call anew (planning then
 * cost more than running: bench/fhir.bench.ts, bench/terminology.bench.ts). Which plan it picks
 * depends on the database's statistics, so these tests hold the forms; the benchmarks measure the
 * plans. The app's pool has one connection here, so the statements it prepared are that session's
 * `pg_prepared_statements`.
 */
let t: TestApp;
let ctx: ServiceContext;
let system: string;
let valueSet: string;
const CODES = Array.from({ length: 10 }, (_, i) => `P${i}`);

beforeAll(async () => {
  t = await createTestApp({ DB_POOL_SIZE: '1', JOBS_WORKERS: '0' });
  system = `http://example.org/planned/${uniqueId('cs')}`;
  const source = await createSource(t, { canonical_url: system });
  for (const id of CODES) await createConcept(t, source.url, source.owner, { id });
  await createVersion(t, source.url, source.owner, 'v1', { released: true });
  valueSet = await releasedValueSet(t, source, [`${source.url}v1/concepts/`]);
  ctx = await contextOf(t, 'anonymous');
});
afterAll(async () => t.close());

/** The parameter types of the one statement prepared in the session whose text has `marker`. */
async function preparedParameters(marker: string): Promise<string[]> {
  const rows = await t.dataSource.query<Array<{ parameters: string }>>(
    `SELECT parameter_types::text AS parameters
     FROM pg_prepared_statements WHERE statement LIKE $1`,
    [`%${marker}%`],
  );
  expect(rows).toHaveLength(1);
  return rows[0].parameters.replace(/[{}]/g, '').split(',');
}

it('sends the one code of a $lookup as one value, to a prepared statement', async () => {
  for (const code of CODES) {
    const found = await t.services.terminology.lookup(
      ctx,
      { coding: { system, code }, properties: [], useSupplements: [] },
      [],
    );
    expect(found.code).toBe(code);
  }
  // The repository, the code (text, not text[]), the source version's change number.
  expect(await preparedParameters('FROM concepts c JOIN concept_versions cv')).toEqual([
    'bigint',
    'text',
    'bigint',
  ]);
});

it('sends the code of a ValueSet $validate-code and its member source as single values, to a prepared statement', async () => {
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
  // The expansion, the member repository (not bigint[]), the code (not text[]).
  expect(await preparedParameters('AS among')).toEqual(['bigint', 'bigint', 'text']);
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
