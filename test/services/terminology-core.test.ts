import { Client } from 'pg';
import request from 'supertest';
import type { ServiceContext } from '../../src/services';
import { isTerminologyError } from '../../src/services';
import { contextOf, createTestApp, uniqueId, type TestApp, type TestUser } from '../factories';
import { createConcept, createSource, createVersion } from '../factories/content';

/**
 * The terminology core without transport: $lookup, CodeSystem $validate-code and $subsumes
 * called on the service over stored sources, and what a $lookup reads of a large one.
 */
let t: TestApp;
let ctx: ServiceContext;
/**
 * A source with a small hierarchy (A above B above C, D apart), released as v1, then edited and
 * versioned as v2, not released.
 */
let system: string;

beforeAll(async () => {
  t = await createTestApp();
  system = `http://example.org/core/${uniqueId('cs')}`;
  const source = await createSource(t, { canonical_url: system });
  const owner: TestUser = source.owner;
  const concept = (id: string, name: string, parents: string[] = [], extra = {}) =>
    createConcept(t, source.url, owner, {
      id,
      names: [{ name, locale: 'en', locale_preferred: true }],
      parent_concept_urls: parents.map((p) => `${source.url}concepts/${p}/`),
      ...extra,
    });
  await concept('A', 'Alpha');
  await concept('B', 'Beta', ['A'], {
    descriptions: [{ description: 'The second letter', locale: 'en' }],
  });
  await concept('C', 'Gamma', ['B']);
  await concept('D', 'Delta');
  await createVersion(t, source.url, owner, 'v1', { released: true });
  // A version-less request reads the released v1, not the newer v2.
  await request(t.app)
    .patch(`${source.url}concepts/A/`)
    .set('Authorization', owner.auth)
    .send({ names: [{ name: 'Alpha renamed', locale: 'en', locale_preferred: true }] })
    .expect(200);
  await createVersion(t, source.url, owner, 'v2', { released: false });
  ctx = await contextOf(t, 'anonymous');
});
afterAll(async () => t.close());

const lookup = (code: string, version?: string, properties: string[] = []) =>
  t.services.terminology.lookup(
    ctx,
    { coding: { system, version, code }, properties, useSupplements: [] },
    [],
  );

/** The code and first issue text of the terminology error `work` throws. */
async function failure(work: Promise<unknown>): Promise<[string, string]> {
  const error: unknown = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isTerminologyError(error))
    throw new Error(`expected a terminology error, got ${String(error)}`);
  return [error.code, error.issues[0].text];
}

describe('$lookup', () => {
  it('answers a concept of the newest released version with its parents and children', async () => {
    const result = await lookup('B');
    expect(result).toMatchObject({
      system,
      version: 'v1',
      code: 'B',
      display: 'Beta',
      definition: 'The second letter',
      abstract: false,
    });
    expect(result.properties).toEqual([
      { code: 'child', value: { valueCode: 'C' } },
      { code: 'conceptclass', value: { valueString: 'Misc' } },
      { code: 'datatype', value: { valueString: 'N/A' } },
      { code: 'inactive', value: { valueBoolean: false } },
      { code: 'parent', value: { valueCode: 'A' } },
    ]);
    expect(result.designations).toContainEqual({ language: 'en', value: 'Beta' });
  });

  it('reads the version asked for, and the released one without a version', async () => {
    expect((await lookup('A')).display).toBe('Alpha');
    expect((await lookup('A', 'v1')).display).toBe('Alpha');
    expect((await lookup('A', 'v2')).display).toBe('Alpha renamed');
  });

  it('answers only the properties asked for', async () => {
    const result = await lookup('B', undefined, ['parent']);
    expect(result.properties).toEqual([{ code: 'parent', value: { valueCode: 'A' } }]);
    expect(result.definition).toBeUndefined();
    expect(result.designations).toEqual([]);
  });

  it('refuses an unknown code and an unknown version as not found', async () => {
    expect(await failure(lookup('Z'))).toEqual([
      'NOT_FOUND',
      `Unknown code 'Z' in the CodeSystem '${system}' version 'v1'`,
    ]);
    const [status, text] = await failure(lookup('A', 'v9'));
    expect(status).toBe('NOT_FOUND');
    expect(text).toContain(`version 'v9' could not be found`);
    const unknown = t.services.terminology.lookup(
      ctx,
      {
        coding: { system: 'http://nowhere.example', code: 'A' },
        properties: [],
        useSupplements: [],
      },
      [],
    );
    expect(await failure(unknown)).toEqual([
      'NOT_FOUND',
      `A definition for CodeSystem 'http://nowhere.example' could not be found`,
    ]);
  });
});

describe('CodeSystem $validate-code', () => {
  const validate = (code: string, display?: string) =>
    t.services.terminology.validateInCodeSystem(
      ctx,
      { kind: 'coding', coding: { system, code, display } },
      [],
      {},
    );

  it('is true for a known code with its display', async () => {
    expect(await validate('C', 'Gamma')).toMatchObject({
      result: true,
      code: 'C',
      system,
      version: 'v1',
      display: 'Gamma',
      issues: [],
    });
  });

  it('is false for a wrong display, and says which display is right', async () => {
    const result = await validate('C', 'Gamma ray');
    expect(result.result).toBe(false);
    expect(result.issues).toHaveLength(1);
    expect(result.issues[0]).toMatchObject({ severity: 'error', txCode: 'invalid-display' });
    expect(result.issues[0].text).toContain(`Wrong Display Name 'Gamma ray'`);
  });

  it('is false for an unknown code', async () => {
    const result = await validate('Z');
    expect(result.result).toBe(false);
    expect(result.issues[0]).toMatchObject({ txCode: 'invalid-code' });
  });
});

describe('$subsumes', () => {
  const subsumes = async (a: string, b: string) =>
    (await t.services.terminology.subsumes(ctx, { system, code: a }, { system, code: b }, []))
      .outcome;

  it('follows the hierarchy up from either code', async () => {
    expect(await subsumes('A', 'C')).toBe('subsumes');
    expect(await subsumes('C', 'A')).toBe('subsumed-by');
    expect(await subsumes('B', 'B')).toBe('equivalent');
    expect(await subsumes('C', 'D')).toBe('not-subsumed');
  });

  it('refuses an unknown code as not found', async () => {
    const [status] = await failure(subsumes('A', 'Z'));
    expect(status).toBe('NOT_FOUND');
  });
});

describe('a code system that is not case-sensitive', () => {
  let caseless: string;
  beforeAll(async () => {
    caseless = `http://example.org/core/${uniqueId('ci')}`;
    const source = await createSource(t, {
      id: uniqueId('ci'),
      canonical_url: caseless,
      extras: { caseSensitive: false },
    });
    await createConcept(t, source.url, source.owner, { id: 'Top' });
    await createConcept(t, source.url, source.owner, {
      id: 'Leaf',
      parent_concept_urls: [`${source.url}concepts/Top/`],
    });
  });

  it('finds a code whatever its case, and says the case differs', async () => {
    const found = await t.services.terminology.lookup(
      ctx,
      { coding: { system: caseless, code: 'leaf' }, properties: [], useSupplements: [] },
      [],
    );
    expect(found.code).toBe('Leaf');
    const result = await t.services.terminology.validateInCodeSystem(
      ctx,
      { kind: 'coding', coding: { system: caseless, code: 'LEAF' } },
      [],
      {},
    );
    expect(result.result).toBe(true);
    // (HEAD only: the code system is a draft, which is noted too.)
    expect(result.issues.map((i) => i.messageId)).toEqual(['MSG_DRAFT', 'CODE_CASE_DIFFERENCE']);
  });

  it('follows the hierarchy whatever the case', async () => {
    const outcome = await t.services.terminology.subsumes(
      ctx,
      { system: caseless, code: 'TOP' },
      { system: caseless, code: 'leaf' },
      [],
    );
    expect(outcome.outcome).toBe('subsumes');
  });
});

describe('reads of a large source', () => {
  /** A source at HEAD of `size` concepts (set-based inserts), known by a fresh canonical URL. */
  async function sourceOf(size: number): Promise<string> {
    const url = `http://example.org/core/${uniqueId('big')}`;
    const made = await createSource(t, { id: uniqueId('big'), canonical_url: url });
    const [{ id }] = await t.dataSource.query<Array<{ id: string }>>(
      `SELECT r.id::text AS id FROM repositories r JOIN organizations o ON o.id = r.owner_org_id
       WHERE o.mnemonic = $1 AND r.mnemonic = $2`,
      [made.org, made.id],
    );
    await t.dataSource.query(`UPDATE repositories SET head_seq = 1 WHERE id = $1`, [id]);
    await t.dataSource.query(
      `INSERT INTO concepts (repository_id, mnemonic)
       SELECT $1, 'C' || g FROM generate_series(1, $2::int) g`,
      [id, size],
    );
    await t.dataSource.query(
      `INSERT INTO concept_versions (concept_id, repository_id, mnemonic, valid_from_seq,
         display_name, display_locale, names, parent_codes)
       SELECT c.id, c.repository_id, c.mnemonic, 1, 'Name ' || c.mnemonic, 'en',
         jsonb_build_array(jsonb_build_object('name', 'Name ' || c.mnemonic, 'locale', 'en',
           'locale_preferred', true)),
         CASE WHEN c.mnemonic = 'C1' THEN '{}'::text[] ELSE ARRAY['C1'] END
       FROM concepts c WHERE c.repository_id = $1`,
      [id],
    );
    return url;
  }

  /**
   * Statements sent and rows received by a $lookup of `code` in the code system `url` (rows as
   * the driver hands them over: every statement, TypeORM's and prepared ones, goes through
   * `pg.Client#query`).
   */
  async function measured(
    url: string,
    code: string,
  ): Promise<{ statements: number; rows: number }> {
    const ctx = await contextOf(t, 'anonymous');
    t.queries.count = 0;
    rowsReceived = 0;
    const result = await t.services.terminology.lookup(
      ctx,
      { coding: { system: url, code }, properties: [], useSupplements: [] },
      [],
    );
    expect(result.display).toBe(`Name ${code}`);
    return { statements: t.queries.count, rows: rowsReceived };
  }

  let rowsReceived = 0;
  // Kept unbound on purpose: it is put back on the prototype after.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const query = Client.prototype.query;
  beforeAll(() => {
    // Counts what the database answers; the statements still run on the real database.
    Client.prototype.query = function (this: Client, ...args: unknown[]) {
      const count = (result: unknown): void => {
        const rows = (result as { rows?: unknown } | undefined)?.rows;
        if (Array.isArray(rows)) rowsReceived += rows.length;
      };
      // pg-pool passes a callback; TypeORM awaits the promise.
      const last = args.length - 1;
      const callback = args[last];
      if (typeof callback === 'function') {
        args[last] = (error: unknown, result: unknown) => {
          count(result);
          (callback as (e: unknown, r: unknown) => void)(error, result);
        };
      }
      const answer = (query as (...a: unknown[]) => unknown).apply(this, args);
      if (answer instanceof Promise) {
        return answer.then((result: unknown) => {
          count(result);
          return result;
        });
      }
      return answer;
    } as typeof query;
  });
  afterAll(() => {
    Client.prototype.query = query;
  });

  it('reads the one concept: what a $lookup reads does not grow with the source', async () => {
    const small = await sourceOf(10);
    const large = await sourceOf(20_000);
    // Warm: the first read of each plans its statements.
    await measured(small, 'C5');
    await measured(large, 'C5');
    const inSmall = await measured(small, 'C7');
    const inLarge = await measured(large, 'C19999');
    expect(inLarge.statements).toBe(inSmall.statements);
    expect(inLarge.statements).toBeLessThanOrEqual(8);
    expect(inLarge.rows).toBe(inSmall.rows);
    expect(inLarge.rows).toBeGreaterThan(0);
    expect(inLarge.rows).toBeLessThanOrEqual(8);
  });

  it('reads a concept with thousands of children in a few rows', async () => {
    const large = await sourceOf(5_000);
    const ctx = await contextOf(t, 'anonymous');
    rowsReceived = 0;
    const result = await t.services.terminology.lookup(
      ctx,
      { coding: { system: large, code: 'C1' }, properties: ['child'], useSupplements: [] },
      [],
    );
    expect(result.properties).toHaveLength(4_999);
    expect(rowsReceived).toBeGreaterThan(0);
    expect(rowsReceived).toBeLessThanOrEqual(8);
  });
});
