import { Client } from 'pg';
import request from 'supertest';
import type { ServiceContext } from '../../src/services';
import { isTerminologyError, parseLanguages } from '../../src/services';
import { contextOf, createTestApp, uniqueId, type TestApp, type TestUser } from '../factories';
import {
  createCollection,
  createConcept,
  createSource,
  createVersion,
  releasedValueSet,
  retire,
  type TestSource,
} from '../factories/content';
import {
  byCodeValidatable,
  sqlPageable,
  TerminologyService,
} from '../../src/services/terminology/terminology.service';
import type { CodeInput, ValidateResult } from '../../src/services/terminology/validate';
import { FhirRepository } from '../../src/repositories/fhir.repository';
import { foldedWords } from '../../src/repositories/list';
import type { ParameterValue } from '../../src/services/terminology/fhir';
import type {
  ExpansionEntry,
  ExpansionOptions,
  ExpansionPage,
} from '../../src/services/terminology/expand';

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
    return (await madeSourceOf(size)).url;
  }

  async function madeSourceOf(size: number): Promise<{ url: string; made: TestSource }> {
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
         display_name, display_locale, names, parent_codes, search_text)
       SELECT c.id, c.repository_id, c.mnemonic, 1, 'Name ' || c.mnemonic, 'en',
         jsonb_build_array(jsonb_build_object('name', 'Name ' || c.mnemonic, 'locale', 'en',
           'locale_preferred', true)),
         CASE WHEN c.mnemonic = 'C1' THEN '{}'::text[] ELSE ARRAY['C1'] END,
         -- As the API folds it (foldedWords): the code, then the names.
         lower(c.mnemonic || ' name ' || c.mnemonic)
       FROM concepts c WHERE c.repository_id = $1`,
      [id],
    );
    return { url, made };
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
      // Snapshot walks (a new version's export, in the background) are not a request's reads.
      const walk =
        (this as unknown as { connectionParameters?: { application_name?: string } })
          .connectionParameters?.application_name === 'registry-walk';
      const count = (result: unknown): void => {
        if (walk) return;
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

  describe('$expand of a stored collection version paged in the database', () => {
    /** A released collection (a fresh canonical URL) of every concept of a source's HEAD. */
    async function collectionOf(source: TestSource): Promise<string> {
      return releasedValueSet(t, source, [`${source.url}concepts/`]);
    }

    /** What a request echoes of `count` and `offset`, as the FHIR edge gives them. */
    const paging = (count?: number, offset?: number) => ({
      count,
      offset,
      echo: [
        ...(offset !== undefined ? [{ name: 'offset', valueInteger: offset }] : []),
        ...(count !== undefined ? [{ name: 'count', valueInteger: count }] : []),
      ] as ParameterValue[],
    });

    /**
     * The answer without what differs at each call (its identifier and timestamp), nor the value
     * set's compose: paged in the database, the definition is read without its members (only
     * `includeDefinition` shows the compose, and it is never paged so).
     */
    const stable = (page: ExpansionPage) => {
      const { identifier, timestamp, valueSet, ...rest } = page;
      expect(identifier).toMatch(/^urn:uuid:/);
      expect(new Date(timestamp).toISOString()).toBe(timestamp);
      const definition = { ...valueSet };
      delete definition.compose;
      return { ...rest, valueSet: definition };
    };

    /**
     * The expansion of `url` asked with `options`, paged in the database (checked: its value set
     * read without the members), compared with the in-memory expansion's answer.
     */
    async function pagedAsInMemory(
      url: string,
      options: Omit<ExpansionOptions, 'maxCodes'>,
    ): Promise<ExpansionPage> {
      const anyone = await contextOf(t, 'anonymous');
      const request = { target: { url }, resources: [], options };
      expect(sqlPageable(request)).toBe(true);
      const paged = await t.services.terminology.expand(anyone, request.target, [], options);
      expect(paged.valueSet.compose).toBeUndefined();
      const whole = await t.services.terminology.expandInMemory(
        anyone,
        request.target,
        [],
        options,
      );
      expect(stable(paged)).toEqual(stable(whole));
      return paged;
    }

    /**
     * The page of `url` asked with `options`, paged in the database, and the rows its reading
     * received (asked once before, to warm), checked against the in-memory answer.
     */
    async function measuredPage(
      url: string,
      options: Omit<ExpansionOptions, 'maxCodes'>,
    ): Promise<{ paged: ExpansionPage; rows: number }> {
      const anyone = await contextOf(t, 'anonymous');
      await t.services.terminology.expand(anyone, { url }, [], options); // warm
      rowsReceived = 0;
      const paged = await t.services.terminology.expand(anyone, { url }, [], options);
      const rows = rowsReceived;
      rowsReceived = 0;
      const whole = await t.services.terminology.expandInMemory(anyone, { url }, [], options);
      expect(paged.valueSet.compose).toBeUndefined();
      expect(stable(paged)).toEqual(stable(whole));
      return { paged, rows };
    }

    /** An expanded code of the source as the page holds it: a plain entry, nothing nested. */
    const entry = (code: string, display: string): ExpansionEntry => ({
      system: expect.any(String) as string,
      version: undefined,
      code,
      display,
      abstract: false,
      inactive: false,
      designations: [],
      properties: [],
      extensions: [],
      contains: [],
    });

    let fifty: string;
    beforeAll(async () => {
      // ~50 members of one source: released as v1 (which a version-less member is read at) with
      // C3 retired; at HEAD C9 renamed and C50 added (not in v1: no member of the value set).
      const source = await createSource(t, { id: uniqueId('mid') });
      for (let i = 1; i <= 49; i += 1) {
        await createConcept(t, source.url, source.owner, {
          id: `C${i}`,
          names: [
            { name: `Name C${i}`, locale: 'en', locale_preferred: true },
            { name: `Nom C${i}`, locale: 'fr', locale_preferred: true },
          ],
        });
      }
      await retire(t, source.url, source.owner, 'concepts', 'C3');
      await createVersion(t, source.url, source.owner, 'v1', { released: true });
      await request(t.app)
        .patch(`${source.url}concepts/C9/`)
        .set('Authorization', source.owner.auth)
        .send({ names: [{ name: 'Renamed', locale: 'en', locale_preferred: true }] })
        .expect(200);
      await createConcept(t, source.url, source.owner, { id: 'C50' });
      fifty = await collectionOf(source);
    });

    it("keeps no count that can change: a reference added to the collection's HEAD is counted", async () => {
      // Counts of a collection version's members, all pinned, read at a source version are kept
      // by the process (FhirResourceService.memberCount); HEAD's members change, so are counted
      // each time.
      const source = await createSource(t, {
        id: uniqueId('cnt'),
        canonical_url: `http://example.org/core/${uniqueId('cnt')}`,
      });
      for (const id of ['K1', 'K2', 'K3']) await createConcept(t, source.url, source.owner, { id });
      await createVersion(t, source.url, source.owner, 'v1', { released: true });
      const url = `http://example.org/core/${uniqueId('vs')}`;
      // No version of the collection: its HEAD is the value set read.
      const collection = await createCollection(
        t,
        { id: uniqueId('vs'), canonical_url: url },
        { owner: source.owner, org: source.org },
      );
      const add = (code: string) =>
        request(t.app)
          .put(`${collection.url}references/`)
          .set('Authorization', source.owner.auth)
          .send({ data: { expressions: [`${source.url}v1/concepts/${code}/`] } })
          .expect(200);
      const anyone = await contextOf(t, 'anonymous');
      const both = async () => (await pagedAsInMemory(url, paging(10, 0))).total;
      await add('K1');
      expect(await both()).toBe(1);
      await add('K2');
      expect(await both()).toBe(2);
      // A version of it is counted once and kept, and answers the same.
      await createVersion(t, collection.url, source.owner, 'v1', { released: true });
      const counts = jest.spyOn(FhirRepository.prototype, 'memberConceptCount');
      try {
        await t.services.terminology.expand(anyone, { url }, [], paging(10, 0));
        await t.services.terminology.expand(anyone, { url }, [], paging(5, 1));
        expect(counts).toHaveBeenCalledTimes(1);
      } finally {
        counts.mockRestore();
      }
      expect(await both()).toBe(2);
    });

    const pairs: Array<[number | undefined, number | undefined]> = [
      [10, undefined],
      [10, 0],
      [10, 20],
      [7, 44],
      [10, 45],
      [10, 48],
      [10, 500],
      [0, undefined],
      [0, 5],
      [undefined, 40],
      [100, undefined],
    ];

    it.each(pairs)(
      'answers count=%p offset=%p as the in-memory expansion does',
      async (count, offset) => {
        await pagedAsInMemory(fifty, paging(count, offset));
      },
    );

    it('shows displays from the code system version read, and leaves out codes it lacks', async () => {
      const anyone = await contextOf(t, 'anonymous');
      const answer = await t.services.terminology.expand(anyone, { url: fifty }, [], paging(10, 0));
      // C3 was retired in the version its members were taken at (HEAD): not a member.
      expect(answer.total).toBe(48);
      const codes = answer.contains.map((c) => c.code);
      expect(codes).toEqual(['C1', 'C10', 'C11', 'C12', 'C13', 'C14', 'C15', 'C16', 'C17', 'C18']);
      expect(answer.contains[0]).toEqual(entry('C1', 'Name C1'));
      // The last member, C9, as released in v1 (renamed at HEAD only); C50 is not in v1.
      const last = await t.services.terminology.expand(anyone, { url: fifty }, [], paging(5, 47));
      expect(last.contains).toEqual([entry('C9', 'Name C9')]);
      expect(last.parameters).toContainEqual({
        name: 'used-codesystem',
        valueUri: expect.stringMatching(/\|v1$/),
      });
    });

    it('answers a plain ExpansionPage: the value set, total, offset and the page, no FHIR JSON', async () => {
      const anyone = await contextOf(t, 'anonymous');
      const page = await t.services.terminology.expand(anyone, { url: fifty }, [], paging(3, 10));
      expect(page).not.toHaveProperty('resourceType');
      expect(page).not.toHaveProperty('expansion');
      expect(page.valueSet.url).toBe(fifty);
      expect(page).toMatchObject({
        total: 48,
        offset: 10,
        count: 3,
        fragments: [],
        properties: [],
      });
      expect(page.contains).toEqual([
        entry('C19', 'Name C19'),
        entry('C2', 'Name C2'),
        entry('C20', 'Name C20'),
      ]);
      // The request's paging echoed first; the code system version used among the rest.
      expect(page.parameters.slice(0, 2)).toEqual([
        { name: 'offset', valueInteger: 10 },
        { name: 'count', valueInteger: 3 },
      ]);
      expect(page.parameters.map((p) => p.name)).toContain('used-codesystem');

      // Unpaged: the whole value set, no offset.
      const whole = await t.services.terminology.expand(anyone, { url: fifty }, [], {});
      expect(whole.total).toBe(48);
      expect(whole.offset).toBeUndefined();
      expect(whole.count).toBeUndefined();
      expect(whole.contains.slice(10, 13)).toEqual(page.contains);
    });

    it('takes nothing else: version rules, supplements, the definition, brought content are expanded in memory', () => {
      const target = { url: fifty };
      const pageable = (options: Omit<ExpansionOptions, 'maxCodes'>, others = {}) =>
        sqlPageable({ target, resources: [], options, ...others });
      const system = 'http://example.org/cs|1';
      expect(pageable({ systemVersions: [system] })).toBe(false);
      expect(pageable({ checkSystemVersions: [system] })).toBe(false);
      expect(pageable({ forceSystemVersions: [system] })).toBe(false);
      expect(pageable({ defaultValueSetVersions: [`${fifty}|v1`] })).toBe(false);
      expect(pageable({ useSupplements: ['http://example.org/supplement'] })).toBe(false);
      // includeDefinition shows the compose, which a page read in the database is read without.
      expect(pageable({ echo: [{ name: 'includeDefinition', valueBoolean: true }] })).toBe(false);
      const valueSet = { resourceType: 'ValueSet' as const, url: fifty };
      expect(pageable({}, { target: { valueSet } })).toBe(false);
      expect(pageable({}, { resources: [valueSet] })).toBe(false);
      expect(pageable({}, { target: {} })).toBe(false);
      // Unset ones are no parameters.
      expect(pageable({ ...paging(10, 0), systemVersions: [], useSupplements: undefined })).toBe(
        true,
      );
      expect(
        pageable({
          ...paging(10, 0),
          filter: 'x',
          activeOnly: true,
          languages: parseLanguages('fr'),
          acceptLanguage: 'de',
          includeDesignations: true,
          designations: ['fr'],
          properties: ['parent'],
          excludeNested: true,
        }),
      ).toBe(true);
    });

    it('reads a page of 10 from thousands of members in a few rows', async () => {
      const { made } = await madeSourceOf(3_000);
      const url = await collectionOf(made);
      const anyone = await contextOf(t, 'anonymous');
      const page = async (offset: number) => {
        rowsReceived = 0;
        t.queries.count = 0;
        const answer = await t.services.terminology.expand(anyone, { url }, [], paging(10, offset));
        return { answer, rows: rowsReceived, statements: t.queries.count };
      };
      await page(0); // warm: plans its statements
      const first = await page(0);
      const later = await page(2_500);
      const whole = async () => {
        rowsReceived = 0;
        const answer = await t.services.terminology.expandInMemory(
          anyone,
          { url },
          [],
          paging(10, 2_500),
        );
        return { answer, rows: rowsReceived };
      };
      const inMemory = await whole();
      expect(stable(later.answer)).toEqual(stable(inMemory.answer));
      expect(later.answer.total).toBe(3_000);
      expect(first.rows).toBeLessThanOrEqual(30);
      // A page near the end reads no more than the first: the rows it shows, and a few besides
      // (the versions found, the expansion, the count); other work of the app may add a few.
      expect(later.rows).toBeLessThanOrEqual(30);
      expect(inMemory.rows).toBeGreaterThan(3_000);
      // Before/after, for the record.
      console.log(
        `page of 10 from 3000 members: in memory ${inMemory.rows} rows; paged ${first.rows} rows (offset 0), ${later.rows} rows (offset 2500)`,
      );
    });

    describe('with other parameters', () => {
      /**
       * A source whose concepts have names in several locales (en, fr, de), punctuation and
       * letters outside ASCII, a hierarchy and a definition; released as v1 with W03, W04 and W18
       * retired, which are active again at HEAD (where the members are taken): members whose
       * concept in the version read (v1) is retired.
       */
      let words: string;
      beforeAll(async () => {
        const source = await createSource(t, { id: uniqueId('words') });
        const name = (text: string, locale = 'en', preferred = true) => ({
          name: text,
          locale,
          locale_preferred: preferred,
        });
        const concepts: Array<[string, Array<ReturnType<typeof name>>, Record<string, unknown>?]> =
          [
            [
              'W01',
              [name('Heart attack'), name('Crise cardiaque', 'fr'), name('Herzinfarkt', 'de')],
              { descriptions: [{ description: 'Death of heart muscle', locale: 'en' }] },
            ],
            [
              'W02',
              [name('Heart-failure'), name('Insuffisance cardiaque', 'fr')],
              { parent: 'W01' },
            ],
            ['W03', [name('Heartburn')], { parent: 'W01' }],
            ['W04', [name('Cardiac arrest'), name('Arrêt cardiaque', 'fr')]],
            ['W05', [name('Éclair au chocolat', 'fr'), name('Chocolate eclair', 'en', false)]],
            ['W06', [name('Street'), name('Straße', 'de')]],
            ['W07', [name('İstanbul')]],
            // The Kelvin sign, whose lower case is an ASCII k.
            ['W08', [name('100 \u212a'), name('Cent', 'fr')]],
            ['ABC-123', [name('Zebra crossing')]],
            ['W10', [name('Bradycardia')]],
            ['W11', [name('Type-2 diabetes (adult)'), name('Diabète de type 2', 'fr')]],
            ['W12', [name('Œdème'), name('Oedema', 'en', false)]],
          ];
        for (let i = 13; i <= 30; i += 1) {
          concepts.push([
            `W${i}`,
            [
              name(`Heart valve ${i}`),
              ...(i % 3 === 0 ? [name(`Valve cardiaque ${i}`, 'fr')] : []),
            ],
          ]);
        }
        for (const [id, names, extra = {}] of concepts) {
          const { parent, ...fields } = extra as { parent?: string };
          await createConcept(t, source.url, source.owner, {
            id,
            names,
            ...(parent ? { parent_concept_urls: [`${source.url}concepts/${parent}/`] } : {}),
            ...fields,
          });
        }
        const retiredInV1 = ['W03', 'W04', 'W18'];
        for (const id of retiredInV1) await retire(t, source.url, source.owner, 'concepts', id);
        await createVersion(t, source.url, source.owner, 'v1', { released: true });
        for (const id of retiredInV1) {
          await request(t.app)
            .put(`${source.url}concepts/${id}/reactivate/`)
            .set('Authorization', source.owner.auth)
            .expect(204);
        }
        words = await collectionOf(source);
      });

      /** The request's options and their echo (as the FHIR edge gives them), with paging. */
      const asked = (
        options: Partial<ExpansionOptions>,
        echo: ParameterValue[],
        count?: number,
        offset?: number,
      ) => {
        const paged = paging(count, offset);
        return { ...options, count, offset, echo: [...echo, ...paged.echo] };
      };

      const lang = (value: string): ParameterValue => ({
        name: 'displayLanguage',
        valueCode: value,
      });

      /** Codes W`from` to W`to`. */
      const range = (from: number, to: number) =>
        Array.from({ length: to - from + 1 }, (_, i) => `W${String(from + i).padStart(2, '0')}`);

      /** The expansion of `words` asked with `options`, as `pagedAsInMemory` checks it. */
      const asInMemory = (options: Omit<ExpansionOptions, 'maxCodes'>) =>
        pagedAsInMemory(words, options);

      /** Pages asked of each option: the first, one in the middle, past the end, and all. */
      const pages: Array<[number | undefined, number | undefined]> = [
        [5, 0],
        [4, 3],
        [6, 20],
        [5, 100],
        [undefined, undefined],
      ];

      it.each(pages)(
        'activeOnly: leaves out members retired in the version read, count=%p offset=%p',
        async (count, offset) => {
          const answer = await asInMemory(
            asked(
              { activeOnly: true },
              [{ name: 'activeOnly', valueBoolean: true }],
              count,
              offset,
            ),
          );
          expect(answer.total).toBe(27);
          const all = await asInMemory(asked({}, [], count, offset));
          expect(all.total).toBe(30);
        },
      );

      it('activeOnly: shows only active codes, where the page shows the retired ones without it', async () => {
        const active = await asInMemory(asked({ activeOnly: true }, [], 3, 1));
        expect(active.contains.map((c) => c.code)).toEqual(['W01', 'W02', 'W05']);
        const all = await asInMemory(asked({}, [], 3, 1));
        expect(all.contains.map((c) => [c.code, c.inactive])).toEqual([
          ['W01', false],
          ['W02', false],
          ['W03', true],
        ]);
      });

      /** Filters, and the codes each finds in the whole expansion (in member order). */
      const filtered: Array<[string, string[]]> = [
        ['heart', ['W01', 'W02', 'W03', ...range(13, 30)]],
        ['Heart valve 2', range(20, 29)],
        ['valve heart 2', range(20, 29)],
        // Only names in another locale (fr, de) hold these.
        ['cardiaque', ['W01', 'W02', 'W04', 'W15', 'W18', 'W21', 'W24', 'W27', 'W30']],
        ['herzinf', ['W01']],
        // The code holds these words.
        ['abc', ['ABC-123']],
        ['123', ['ABC-123']],
        ['abc zebra', []],
        // Words start words: `cardia` is in Bradycardia, but starts no word of it.
        ['cardia', ['W01', 'W02', 'W04', 'W15', 'W18', 'W21', 'W24', 'W27', 'W30']],
        ['ardiac', []],
        // Punctuation parts words; a word with punctuation starts none.
        ['2 diab', ['W11']],
        ['adult', ['W11']],
        ['(adult)', []],
        ['type-2', []],
        ['heart-failure', []],
        ['failure', ['W02']],
        // Letters beyond ASCII, upper and lower case.
        ['éclair', ['W05']],
        ['ÉCLAIR', ['W05']],
        ['straße', ['W06']],
        ['stra', ['W06']],
        ['ß', []],
        ['œdème', ['W12']],
        ['oedema', ['W12']],
        ['arrêt', ['W04']],
        ['arret', []],
        // İ lower-cases to i and a combining dot (two words); the Kelvin sign to k.
        ['i stanbul', ['W07']],
        ['istanbul', []],
        ['100 k', ['W08']],
        ['zzzz', []],
        ['   ', [...['ABC-123'], ...range(1, 8), ...range(10, 30)]],
      ];

      it.each(filtered)('filter %p: finds %p, page by page', async (filter, codes) => {
        const echo = [{ name: 'filter', valueString: filter }];
        const whole = await asInMemory(asked({ filter }, echo));
        expect(whole.contains.map((c) => c.code)).toEqual(codes);
        expect(whole.total).toBe(codes.length);
        for (const [count, offset] of pages) {
          const page = await asInMemory(asked({ filter }, echo, count, offset));
          expect(page.total).toBe(codes.length);
        }
      });

      it('filter with activeOnly: the members active in the version read that match', async () => {
        const options = (count?: number, offset?: number) =>
          asked(
            { filter: 'heart', activeOnly: true },
            [
              { name: 'filter', valueString: 'heart' },
              { name: 'activeOnly', valueBoolean: true },
            ],
            count,
            offset,
          );
        const whole = await asInMemory(options());
        expect(whole.contains.map((c) => c.code)).toEqual([
          'W01',
          'W02',
          ...range(13, 30).filter((code) => code !== 'W18'),
        ]);
        for (const [count, offset] of pages) await asInMemory(options(count, offset));
      });

      /** How each shown code is rendered: the options, and their echo. */
      const rendering: Array<[string, Partial<ExpansionOptions>, ParameterValue[]]> = [
        ['displayLanguage=fr', { languages: parseLanguages('fr') }, [lang('fr')]],
        ['displayLanguage=de', { languages: parseLanguages('de') }, [lang('de')]],
        ['displayLanguage=fr-CA', { languages: parseLanguages('fr-CA') }, [lang('fr-CA')]],
        [
          'displayLanguage=de,fr;q=0.5',
          { languages: parseLanguages('de,fr;q=0.5') },
          [lang('de,fr;q=0.5')],
        ],
        ['Accept-Language: fr', { acceptLanguage: 'fr' }, []],
        ['Accept-Language: de-DE,fr;q=0.8', { acceptLanguage: 'de-DE,fr;q=0.8' }, []],
        [
          'includeDesignations',
          { includeDesignations: true },
          [{ name: 'includeDesignations', valueBoolean: true }],
        ],
        [
          'includeDesignations, displayLanguage=fr',
          { includeDesignations: true, languages: parseLanguages('fr') },
          [{ name: 'includeDesignations', valueBoolean: true }, lang('fr')],
        ],
        [
          'includeDesignations, designation=fr',
          { includeDesignations: true, designations: ['fr'] },
          [
            { name: 'includeDesignations', valueBoolean: true },
            { name: 'designation', valueString: 'fr' },
          ],
        ],
        [
          'includeDesignations, designation=urn:ietf:bcp:47|de',
          { includeDesignations: true, designations: ['urn:ietf:bcp:47|de'] },
          [
            { name: 'includeDesignations', valueBoolean: true },
            { name: 'designation', valueString: 'urn:ietf:bcp:47|de' },
          ],
        ],
        ['designation=fr', { designations: ['fr'] }, [{ name: 'designation', valueString: 'fr' }]],
        ['property=parent,child', { properties: ['parent', 'child'] }, []],
        [
          'property=definition,inactive,conceptclass,datatype',
          { properties: ['definition', 'inactive', 'conceptclass', 'datatype'] },
          [],
        ],
        ['property=unknown', { properties: ['unknown'] }, []],
        ['excludeNested', { excludeNested: true }, [{ name: 'excludeNested', valueBoolean: true }]],
        [
          'all of them, with filter and activeOnly',
          {
            filter: 'cardiaque',
            activeOnly: true,
            includeDesignations: true,
            languages: parseLanguages('fr'),
            properties: ['parent', 'child', 'definition'],
          },
          [
            { name: 'filter', valueString: 'cardiaque' },
            { name: 'activeOnly', valueBoolean: true },
            { name: 'includeDesignations', valueBoolean: true },
            lang('fr'),
          ],
        ],
      ];

      it.each(rendering)('%s: each page shows its codes as in memory', async (_, options, echo) => {
        for (const [count, offset] of pages) await asInMemory(asked(options, echo, count, offset));
      });

      it('shows what those parameters ask for: the language, designations and properties', async () => {
        const fr = await asInMemory(
          asked(
            {
              languages: parseLanguages('fr'),
              includeDesignations: true,
              properties: ['child', 'definition'],
            },
            [lang('fr'), { name: 'includeDesignations', valueBoolean: true }],
            2,
            1,
          ),
        );
        expect(fr.contains.map((c) => [c.code, c.display])).toEqual([
          ['W01', 'Crise cardiaque'],
          ['W02', 'Insuffisance cardiaque'],
        ]);
        expect(fr.contains[0].designations).toContainEqual(
          expect.objectContaining({ language: 'de', value: 'Herzinfarkt' }),
        );
        expect(fr.contains[0].properties).toEqual(
          expect.arrayContaining([
            { code: 'child', value: { valueCode: 'W02' } },
            { code: 'child', value: { valueCode: 'W03' } },
            { code: 'definition', value: { valueString: 'Death of heart muscle' } },
          ]),
        );
        // Accept-Language is the display language when no parameter names one, and is echoed so.
        const de = await asInMemory(asked({ acceptLanguage: 'de' }, [], 1, 1));
        expect(de.contains.map((c) => c.display)).toEqual(['Herzinfarkt']);
        expect(de.parameters).toContainEqual({ name: 'displayLanguage', valueCode: 'de' });
      });

      it('refuses as too costly where the in-memory expansion does: by the members, then by what is shown unpaged', async () => {
        const anyone = await contextOf(t, 'anonymous');
        /** The answer (total) or failure of both ways, with at most `max` codes, `unpaged` unpaged. */
        const both = async (
          max: number,
          unpaged: number,
          options: Omit<ExpansionOptions, 'maxCodes'>,
        ) => {
          const limited = new TerminologyService(
            (c) => t.services.fhirResources.stored(c),
            max,
            unpaged,
          );
          const outcome = async (work: Promise<ExpansionPage>) => {
            const total = await work.then(
              (page) => page.total,
              () => undefined,
            );
            return total !== undefined ? { total } : { failure: await failure(work) };
          };
          const request = { target: { url: words }, resources: [], options };
          expect(sqlPageable(request)).toBe(true);
          const paged = await outcome(limited.expand(anyone, request.target, [], options));
          const whole = await outcome(limited.expandInMemory(anyone, request.target, [], options));
          expect(paged).toEqual(whole);
          return paged;
        };
        const activeOnly = asked({ activeOnly: true }, []);
        // 30 members, 27 active: the members count against the most an expansion may hold.
        expect(await both(28, 100, activeOnly)).toEqual({
          failure: ['INVALID', expect.stringContaining('too many codes to produce (>28)')],
        });
        expect(await both(30, 100, activeOnly)).toEqual({ total: 27 });
        // Unpaged, what is shown counts against the most an unpaged expansion answers.
        expect(await both(100, 27, activeOnly)).toEqual({ total: 27 });
        expect(await both(100, 26, activeOnly)).toEqual({
          failure: ['INVALID', expect.stringContaining('too many codes to produce (>26)')],
        });
        expect(await both(100, 26, asked({ activeOnly: true }, [], 5, 0))).toEqual({ total: 27 });
        // So with filter: 9 codes match `cardiaque`, from 30 members.
        const filter = asked({ filter: 'cardiaque' }, []);
        expect(await both(29, 100, filter)).toEqual({
          failure: ['INVALID', expect.stringContaining('too many codes to produce (>29)')],
        });
        expect(await both(30, 9, filter)).toEqual({ total: 9 });
        expect(await both(30, 8, filter)).toEqual({
          failure: ['INVALID', expect.stringContaining('too many codes to produce (>8)')],
        });
      });
    });

    it('reads a filtered page of 10 from thousands of members in a few rows', async () => {
      const { made } = await madeSourceOf(3_000);
      const url = await collectionOf(made);
      const filtered = (filter: string, count: number, offset: number) => {
        const paged = paging(count, offset);
        return { ...paged, filter, echo: [{ name: 'filter', valueString: filter }, ...paged.echo] };
      };
      const measure = async (filter: string, count: number, offset: number) => {
        const options = filtered(filter, count, offset);
        expect(sqlPageable({ target: { url }, resources: [], options })).toBe(true);
        const { paged, rows } = await measuredPage(url, options);
        return { paged, rows, inMemory: rowsReceived };
      };
      // C12, C120–C129 and C1200–C1299: their texts only are read, then the page's 10 concepts.
      const some = await measure('name c12', 10, 20);
      expect(some.paged.total).toBe(111);
      // In member order (by code, as text): C12, C120, C1200–C1209, C121, C1210–C1219, C122, …
      expect(some.paged.contains.map((c) => c.code)).toEqual([
        'C1217',
        'C1218',
        'C1219',
        'C122',
        ...Array.from({ length: 6 }, (_, i) => `C122${i}`),
      ]);
      expect(some.rows).toBeLessThanOrEqual(150);
      expect(some.inMemory).toBeGreaterThan(3_000);
      const one = await measure('C2999', 10, 0);
      expect(one.paged.contains.map((c) => c.code)).toEqual(['C2999']);
      expect(one.rows).toBeLessThanOrEqual(30);
      console.log(
        `filtered page of 10 from 3000 members: in memory ${some.inMemory} rows; paged ${some.rows} rows (111 match), ${one.rows} rows (1 matches)`,
      );
    });

    it('narrows filters in SQL by the folded search text, which keeps every ASCII letter and digit a lower case has', () => {
      // The SQL narrowing (FhirRepository.memberConceptTexts) asks the folded search text for the
      // ASCII runs of the filter's words; a text JavaScript's lower case matches must hold them
      // there too. Outside ASCII, only İ and the Kelvin sign lower-case to ASCII: both fold to it.
      const differ: string[] = [];
      for (let c = 0x80; c <= 0x10ffff; c += 1) {
        if (c >= 0xd800 && c <= 0xdfff) continue;
        const character = String.fromCodePoint(c);
        const ascii = character.toLowerCase().replace(/[^a-z0-9]/g, '');
        if (ascii === '') continue;
        if (foldedWords(character).join('') !== ascii) differ.push(character);
      }
      expect(differ).toEqual([]);
      expect(foldedWords('\u0130stanbul \u212a')).toEqual(['istanbul', 'k']);
    });

    describe('members from several source versions', () => {
      let several: string;
      beforeAll(async () => {
        // Three member sources whose codes interleave in member order (by id): the whole value
        // set lists its includes by their first member (A5 of `second`, B1 of `first`, E1 of
        // `third`), each with its members in turn. `first` is read at its released v1, which
        // lacks B4 (a member taken at HEAD): left out both ways.
        const first = await createSource(t, { id: uniqueId('first') });
        const by = { owner: first.owner, org: first.org };
        const second = await createSource(t, { id: uniqueId('second') }, by);
        const third = await createSource(t, { id: uniqueId('third') }, by);
        for (const id of ['B1', 'B2', 'B3', 'D1']) {
          await createConcept(t, first.url, first.owner, { id });
        }
        await createVersion(t, first.url, first.owner, 'v1', { released: true });
        await createConcept(t, first.url, first.owner, { id: 'B4' });
        for (const id of ['A5', 'C1', 'C2']) {
          await createConcept(t, second.url, first.owner, { id });
        }
        await createConcept(t, third.url, first.owner, { id: 'E1' });
        several = `http://example.org/core/${uniqueId('vs')}`;
        const collection = await createCollection(
          t,
          { id: uniqueId('vs'), canonical_url: several },
          by,
        );
        await request(t.app)
          .put(`${collection.url}references/`)
          .set('Authorization', first.owner.auth)
          .send({
            data: {
              expressions: [first, second, third].map((source) => `${source.url}concepts/`),
            },
          })
          .expect(200);
        await createVersion(t, collection.url, first.owner, 'v1', { released: true });
      });

      it('pages through the sources in the order of the whole expansion', async () => {
        const anyone = await contextOf(t, 'anonymous');
        const whole = await t.services.terminology.expandInMemory(
          anyone,
          { url: several },
          [],
          paging(),
        );
        const order = ['A5', 'C1', 'C2', 'B1', 'B2', 'B3', 'D1', 'E1'];
        expect(whole.contains.map((c) => c.code)).toEqual(order);
        const paged = await t.services.terminology.expand(anyone, { url: several }, [], paging());
        // Paged in the database: the definition is read without its members (no compose).
        expect(paged.valueSet.compose).toBeUndefined();
        expect(paged.contains.map((c) => c.code)).toEqual(order);
      });

      it.each<[number | undefined, number | undefined]>([
        [3, 0],
        [3, 2],
        [2, 3],
        [5, 2],
        [4, 6],
        [1, 7],
        [4, 8],
        [10, 100],
        [0, 3],
        [undefined, 4],
        [100, undefined],
      ])('answers count=%p offset=%p as the in-memory expansion does', async (count, offset) => {
        await pagedAsInMemory(several, paging(count, offset));
      });

      it('reads a page across two large sources in a few rows', async () => {
        const [one, two] = [await madeSourceOf(1_500), await madeSourceOf(1_500)];
        const url = `http://example.org/core/${uniqueId('vs')}`;
        const by = { owner: one.made.owner, org: one.made.org };
        const collection = await createCollection(
          t,
          { id: uniqueId('vs'), canonical_url: url },
          by,
        );
        await request(t.app)
          .put(`${collection.url}references/`)
          .set('Authorization', one.made.owner.auth)
          .send({ data: { expressions: [one, two].map((s) => `${s.made.url}concepts/`) } })
          .expect(200);
        await createVersion(t, collection.url, one.made.owner, 'v1', { released: true });
        // The page spans the end of the first source's members and the start of the second's.
        const { paged, rows } = await measuredPage(url, paging(10, 1_495));
        expect(paged.total).toBe(3_000);
        expect(new Set(paged.contains.map((c) => c.system))).toEqual(new Set([one.url, two.url]));
        expect(rows).toBeLessThanOrEqual(40);
        expect(rowsReceived).toBeGreaterThan(3_000);
      });
    });
  });

  describe('ValueSet $validate-code of a stored collection version, by code', () => {
    /** The canonical URLs of the collection and of its two member sources. */
    let valueSet: string;
    let letters: string;
    let digits: string;
    beforeAll(async () => {
      // Letters: K1–K4, K3 retired in the released v1 (the version a version-less include reads) and
      // active again at HEAD (where members are taken), K4 no member. Digits: one member, Z1.
      letters = `http://example.org/core/${uniqueId('letters')}`;
      const source = await createSource(t, { id: uniqueId('letters'), canonical_url: letters });
      for (const [id, name] of [
        ['K1', 'Kilo'],
        ['K2', 'Lima'],
        ['K3', 'Mike'],
        ['K4', 'November'],
      ]) {
        await createConcept(t, source.url, source.owner, {
          id,
          names: [{ name, locale: 'en', locale_preferred: true }],
        });
      }
      await retire(t, source.url, source.owner, 'concepts', 'K3');
      await createVersion(t, source.url, source.owner, 'v1', { released: true });
      await request(t.app)
        .put(`${source.url}concepts/K3/reactivate/`)
        .set('Authorization', source.owner.auth)
        .expect(204);
      digits = `http://example.org/core/${uniqueId('digits')}`;
      const other = await createSource(
        t,
        { id: uniqueId('digits'), canonical_url: digits },
        { owner: source.owner, org: source.org },
      );
      await createConcept(t, other.url, source.owner, { id: 'Z1' });
      await createConcept(t, other.url, source.owner, { id: 'Z2' });
      valueSet = await releasedValueSet(t, source, [
        ...['K1', 'K2', 'K3'].map((code) => `${source.url}concepts/${code}/`),
        `${other.url}concepts/Z1/`,
      ]);
    });

    const code = (system: string, code: string, display?: string): CodeInput => ({
      kind: 'code',
      coding: { system, code, display },
    });

    /** The answer by code and the in-memory one, which must be equal. */
    async function answers(input: CodeInput) {
      const anyone = await contextOf(t, 'anonymous');
      const target = { url: valueSet };
      const options = {};
      expect(byCodeValidatable({ target, input, resources: [], options })).toBe(true);
      const byCode = await t.services.terminology.validateInValueSet(
        anyone,
        target,
        input,
        [],
        options,
      );
      const whole = await t.services.terminology.validateInMemory(
        anyone,
        target,
        input,
        [],
        options,
      );
      expect(byCode).toEqual(whole);
      return byCode;
    }

    const texts = (result: ValidateResult) => result.issues.map((i) => i.text);

    it('finds a member, as the in-memory check does', async () => {
      const result = await answers(code(letters, 'K1', 'Kilo'));
      expect(result).toMatchObject({ result: true, code: 'K1', version: 'v1', display: 'Kilo' });
      expect(result.issues).toEqual([]);
      expect((await answers(code(digits, 'Z1'))).result).toBe(true);
    });

    it('refuses a code of the code system that is no member, as the in-memory check does', async () => {
      const result = await answers(code(letters, 'K4'));
      expect(result.result).toBe(false);
      expect(texts(result)).toEqual([
        `The provided code '${letters}#K4' was not found in the value set '${valueSet}|v1'`,
      ]);
      // A member source's code that is not a member (the source has another member).
      expect((await answers(code(digits, 'Z2'))).result).toBe(false);
      // A code no source has.
      expect((await answers(code(letters, 'K9'))).result).toBe(false);
    });

    it('finds a member retired in the version read, with its warning', async () => {
      const result = await answers(code(letters, 'K3'));
      expect(result).toMatchObject({ result: true, inactive: true });
      expect(texts(result)).toEqual([
        `The concept 'K3' has a status of inactive and its use should be reviewed`,
      ]);
    });

    it('refuses a wrong display, naming the right one', async () => {
      const result = await answers(code(letters, 'K2', 'Kilo'));
      expect(result.result).toBe(false);
      expect(texts(result)[0]).toMatch(
        /^Wrong Display Name 'Kilo' for .*#K2\. Valid display is 'Lima'/,
      );
    });

    it('reports an unknown code system', async () => {
      const unknown = `http://example.org/core/${uniqueId('unknown')}`;
      const result = await answers(code(unknown, 'K1'));
      expect(result.result).toBe(false);
      expect(result.unknownInputSystems).toEqual([unknown]);
    });

    it('checks each coding of a CodeableConcept', async () => {
      const result = await answers({
        kind: 'codeableConcept',
        concept: {
          coding: [
            { system: letters, code: 'K4' },
            { system: digits, code: 'Z1' },
          ],
        },
      });
      expect(result).toMatchObject({ result: true, code: 'Z1', system: digits });
    });

    it('takes nothing else: version rules, a code without system, brought resources', () => {
      const target = { url: valueSet };
      const input = code(letters, 'K1');
      const asks = (request: Partial<Parameters<typeof byCodeValidatable>[0]>) =>
        byCodeValidatable({ target, input, resources: [], options: {}, ...request });
      expect(asks({})).toBe(true);
      expect(asks({ options: { systemVersion: '1' } })).toBe(false);
      expect(asks({ options: { forceSystemVersions: [`${letters}|v1`] } })).toBe(false);
      expect(asks({ input: { kind: 'code', coding: { code: 'K1' } } })).toBe(false);
      expect(asks({ target: { valueSet: { resourceType: 'ValueSet' } } })).toBe(false);
      expect(asks({ resources: [{ resourceType: 'ValueSet', url: valueSet }] })).toBe(false);
    });

    it('reads the asked code, not the members: a few rows from thousands of members', async () => {
      const { made, url: system } = await madeSourceOf(3_000);
      const url = await releasedValueSet(t, made, [`${made.url}concepts/`]);
      const anyone = await contextOf(t, 'anonymous');
      const input = code(system, 'C2999', 'Name C2999');
      const measure = async (work: () => Promise<ValidateResult>) => {
        rowsReceived = 0;
        const result = await work();
        return { result, rows: rowsReceived };
      };
      const byCode = () =>
        t.services.terminology.validateInValueSet(anyone, { url }, input, [], {});
      await byCode(); // warm: plans its statements
      const read = await measure(byCode);
      const whole = await measure(() =>
        t.services.terminology.validateInMemory(anyone, { url }, input, [], {}),
      );
      expect(read.result).toEqual(whole.result);
      expect(read.result.result).toBe(true);
      expect(read.rows).toBeLessThanOrEqual(30);
      expect(whole.rows).toBeGreaterThan(3_000);
      // Before/after, for the record.
      console.log(
        `$validate-code of one code among 3000 members: in memory ${whole.rows} rows; by code ${read.rows} rows`,
      );
    });
  });
});
