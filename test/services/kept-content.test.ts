import request from 'supertest';
import type { ServiceContext } from '../../src/services';
import type { ExpansionPage } from '../../src/services/terminology/expand';
import { contextOf, createTestApp, uniqueId, type TestApp } from '../factories';
import {
  createConcept,
  createSource,
  createVersion,
  releasedValueSet,
  valueSetAtHead,
  type TestSource,
} from '../factories/content';

/**
 * Content that cannot change is read once and kept (`ContentCache`): a concept of a source
 * version read by code (`$lookup`, `$validate-code`), and a page of a collection version's
 * members when they are all pinned and read at a source version (`$expand`; a collection
 * version's expansions pin the versions they read). HEAD, whose members follow their concepts'
 * current versions, is read every time. Who may see the version is
 * decided afresh at every call, before anything kept is used.
 */
let t: TestApp;
let anyone: ServiceContext;

beforeAll(async () => {
  t = await createTestApp({ JOBS_WORKERS: '0' });
  anyone = await contextOf(t, 'anonymous');
});
afterAll(async () => t.close());

/** A source with a fresh canonical URL and concepts `codes` (`Name <code>`). */
async function sourceWith(codes: string[]): Promise<TestSource & { system: string }> {
  const system = `http://example.org/kept/${uniqueId('cs')}`;
  const source = await createSource(t, { id: uniqueId('src'), canonical_url: system });
  for (const id of codes) await createConcept(t, source.url, source.owner, { id });
  return { ...source, system };
}

/** A concept read by code (`FhirRepository.conceptsByCode`). */
const CONCEPT_READ = 'FROM concepts c JOIN concept_versions cv';
/** A page of an expansion's members (`FhirRepository.memberConcepts`). */
const MEMBER_PAGE = /FROM expansion_concepts x[\s\S]*LIMIT \$\d+::int OFFSET/;

/** The statements a call sends, and its answer. */
async function sent<T>(call: () => Promise<T>): Promise<{ statements: string[]; answer: T }> {
  const statements: string[] = [];
  t.queries.texts = statements;
  try {
    return { statements, answer: await call() };
  } finally {
    t.queries.texts = undefined;
  }
}

/** How many of `statements` match `what`. */
const howMany = (statements: string[], what: string | RegExp): number =>
  statements.filter((sql) => (typeof what === 'string' ? sql.includes(what) : what.test(sql)))
    .length;

const lookup = (ctx: ServiceContext, system: string, code: string) =>
  t.services.terminology.lookup(
    ctx,
    { coding: { system, code }, properties: [], useSupplements: [] },
    [],
  );

async function rename(source: TestSource, code: string, name: string): Promise<void> {
  await request(t.app)
    .put(`${source.url}concepts/${code}/`)
    .set('Authorization', source.owner.auth)
    .send({
      names: [{ name, locale: 'en', locale_preferred: true }],
      update_comment: 'renamed',
    })
    .expect(200);
}

describe('a concept of a source version, by code', () => {
  it('is read once in a released version, and anew at HEAD', async () => {
    const released = await sourceWith(['A', 'B']);
    await createVersion(t, released.url, released.owner, 'v1', { released: true });
    const first = await sent(() => lookup(anyone, released.system, 'B'));
    const again = await sent(() => lookup(anyone, released.system, 'B'));
    expect(again.answer).toEqual(first.answer);
    expect(howMany(first.statements, CONCEPT_READ)).toBe(1);
    // The versions by URL are read again (who may see them), the concept is not.
    expect(howMany(again.statements, CONCEPT_READ)).toBe(0);
    expect(again.statements).toHaveLength(first.statements.length - 1);

    const head = await sourceWith(['A', 'B']); // no version: read at HEAD
    await lookup(anyone, head.system, 'B');
    const atHead = await sent(() => lookup(anyone, head.system, 'B'));
    expect(howMany(atHead.statements, CONCEPT_READ)).toBe(1);
    await rename(head, 'B', 'Renamed B');
    expect((await lookup(anyone, head.system, 'B')).display).toBe('Renamed B');
  });

  it('shows the version as released after HEAD changes, and the next version as it is', async () => {
    const source = await sourceWith(['A']);
    await createVersion(t, source.url, source.owner, 'v1', { released: true });
    expect((await lookup(anyone, source.system, 'A')).display).toBe('Name A');
    await rename(source, 'A', 'Renamed A');
    expect((await lookup(anyone, source.system, 'A')).display).toBe('Name A');
    await createVersion(t, source.url, source.owner, 'v2', { released: true });
    const v2 = await lookup(anyone, source.system, 'A');
    expect([v2.version, v2.display]).toEqual(['v2', 'Renamed A']);
  });

  it('is not shown to a caller who may no longer see the version', async () => {
    const source = await sourceWith(['A']);
    await createVersion(t, source.url, source.owner, 'v1', { released: true });
    expect((await lookup(anyone, source.system, 'A')).code).toBe('A');
    await request(t.app)
      .put(source.url)
      .set('Authorization', source.owner.auth)
      .send({ public_access: 'None' })
      .expect(200);
    await expect(lookup(anyone, source.system, 'A')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const owner = await contextOf(t, source.owner);
    expect((await lookup(owner, source.system, 'A')).code).toBe('A');
  });
});

describe('a page of a collection version’s members', () => {
  const CODES = ['M1', 'M2', 'M3', 'M4'];
  const expand = (ctx: ServiceContext, url: string) =>
    t.services.terminology.expand(ctx, { url }, [], { count: 10, offset: 0, echo: [] });
  const inMemory = (ctx: ServiceContext, url: string) =>
    t.services.terminology.expandInMemory(ctx, { url }, [], { count: 10, offset: 0, echo: [] });
  /** The answer without what differs at each call, nor the compose (read only in memory). */
  const shown = (page: ExpansionPage) => ({
    total: page.total,
    codes: page.contains.map((c) => [c.code, c.display]),
  });

  it('is read once when the members are pinned to a source version', async () => {
    const source = await sourceWith(CODES);
    await createVersion(t, source.url, source.owner, 'v1', { released: true });
    const url = await releasedValueSet(t, source, [`${source.url}v1/concepts/`]);
    const first = await sent(() => expand(anyone, url));
    const again = await sent(() => expand(anyone, url));
    expect(shown(again.answer)).toEqual(shown(first.answer));
    expect(shown(again.answer)).toEqual(shown(await inMemory(anyone, url)));
    expect(shown(again.answer).codes).toHaveLength(4);
    expect(howMany(first.statements, MEMBER_PAGE)).toBe(1);
    // Its page is not read a second time (what else the call reads, it reads again).
    expect(howMany(again.statements, MEMBER_PAGE)).toBe(0);
  });

  it('is read anew at the collection’s HEAD, whose members follow their concepts', async () => {
    const source = await sourceWith(CODES);
    const { url } = await valueSetAtHead(t, source, [`${source.url}concepts/`]);
    await expand(anyone, url);
    const again = await sent(() => expand(anyone, url));
    expect(howMany(again.statements, MEMBER_PAGE)).toBe(1);
    await rename(source, 'M2', 'Renamed M2');
    const renamed = await expand(anyone, url);
    expect(shown(renamed)).toEqual(shown(await inMemory(anyone, url)));
    expect(shown(renamed).codes).toContainEqual(['M2', 'Renamed M2']);
  });

  it('is not shown to a caller who may no longer see the member source', async () => {
    const source = await sourceWith(CODES);
    await createVersion(t, source.url, source.owner, 'v1', { released: true });
    const url = await releasedValueSet(t, source, [`${source.url}v1/concepts/`]);
    expect(shown(await expand(anyone, url)).codes).toHaveLength(4);
    await request(t.app)
      .put(source.url)
      .set('Authorization', source.owner.auth)
      .send({ public_access: 'None' })
      .expect(200);
    // Its code system is no longer one the caller may read: the expansion cannot be made.
    await expect(expand(anyone, url)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(inMemory(anyone, url)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const owner = await contextOf(t, source.owner);
    expect(shown(await expand(owner, url)).codes).toHaveLength(4);
  });
});
