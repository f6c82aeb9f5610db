import { defaultListParams, type RepoRef, type ServiceContext } from '../../src/services';
import {
  contextOf,
  createOrg,
  createTestApp,
  createUser,
  uniqueId,
  type TestApp,
  type TestUser,
} from '../factories';

/**
 * The content rules at the service level: concepts and mappings called directly on the real
 * database, as every edge calls them (no HTTP).
 */
let t: TestApp;
let owner: TestUser;
let outsider: TestUser;
let org: string;
let ctx: ServiceContext;

const name = (text: string) => ({
  name: text,
  locale: 'en',
  localePreferred: true,
  nameType: 'FULLY_SPECIFIED',
});

async function newSource(options: { private?: boolean } = {}): Promise<RepoRef> {
  const id = uniqueId('rules');
  await t.services.repositories.create(ctx, { type: 'org', id: org }, 'source', {
    id,
    name: id,
    ...(options.private ? { publicAccess: 'None' } : {}),
  });
  return { owner: { type: 'org', id: org }, kind: 'source', id };
}

async function concept(source: RepoRef, id: string, display = `Concept ${id}`) {
  return t.services.concepts.create(ctx, source, {
    id,
    conceptClass: 'Diagnosis',
    datatype: 'N/A',
    names: [name(display)],
  });
}

const conceptUrl = (source: RepoRef, id: string) =>
  `/orgs/${org}/sources/${source.id}/concepts/${id}/`;

beforeAll(async () => {
  t = await createTestApp();
  [owner, outsider] = await Promise.all([createUser(t), createUser(t)]);
  org = (await createOrg(t, owner)).id;
  ctx = await contextOf(t, owner);
});
afterAll(async () => t.close());

describe('concepts', () => {
  it('an edit makes a new version and keeps the previous one', async () => {
    const source = await newSource();
    const created = await concept(source, 'C1', 'Malaria');
    const edited = await t.services.concepts.update(
      ctx,
      source,
      'C1',
      { names: [name('Malaria, unspecified')], updateComment: 'clearer' },
      'partial',
    );
    expect(edited.view.version.id).not.toBe(created.view.version.id);
    expect(edited.view.version.names.map((n) => n.name)).toEqual(['Malaria, unspecified']);
    const versions = await t.services.concepts.listVersions(ctx, source, 'C1', defaultListParams());
    expect(versions.total).toBe(2);
    const previous = await t.services.concepts.get(
      ctx,
      source,
      'C1',
      String(created.view.version.id),
    );
    expect(previous.version.names.map((n) => n.name)).toEqual(['Malaria']);
  });

  it('a concept id is unique within its source', async () => {
    const source = await newSource();
    await concept(source, 'DUP');
    await expect(concept(source, 'DUP')).rejects.toMatchObject({
      code: 'INVALID',
      fieldErrors: { id: ['Concept ID must be unique within a source.'] },
    });
  });

  it('the same id in two parallel creates: one concept, one refusal', async () => {
    const source = await newSource();
    const outcomes = await Promise.allSettled([concept(source, 'RACE'), concept(source, 'RACE')]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === 'rejected')).toHaveLength(1);
  });

  it('retire then reactivate, each a new version; retiring twice is refused', async () => {
    const source = await newSource();
    await concept(source, 'R1');
    const retired = await t.services.concepts.retire(ctx, source, 'R1', 'gone');
    expect(retired.version.retired).toBe(true);
    await expect(t.services.concepts.retire(ctx, source, 'R1')).rejects.toMatchObject({
      code: 'INVALID',
    });
    const back = await t.services.concepts.reactivate(ctx, source, 'R1');
    expect(back.version.retired).toBe(false);
    expect(back.version.id).not.toBe(retired.version.id);
  });

  it('an edit that changes nothing is refused as unchanged and makes no version', async () => {
    const source = await newSource();
    await concept(source, 'U1', 'Same');
    await expect(
      t.services.concepts.update(ctx, source, 'U1', { names: [name('Same')] }, 'partial'),
    ).rejects.toMatchObject({ code: 'UNCHANGED' });
    const detail = await t.services.concepts.detail(ctx, source, 'U1');
    expect(detail.versionCount).toBe(1);
  });

  it('a source version freezes content: a later edit does not change what v1 holds', async () => {
    const source = await newSource();
    await concept(source, 'F1', 'Before');
    await t.services.repositories.createVersion(ctx, source, { id: 'v1', description: 'one' });
    await t.services.concepts.update(ctx, source, 'F1', { names: [name('After')] }, 'partial');
    const atV1 = await t.services.concepts.get(ctx, { ...source, version: 'v1' }, 'F1');
    const atHead = await t.services.concepts.get(ctx, source, 'F1');
    expect(atV1.version.names.map((n) => n.name)).toEqual(['Before']);
    expect(atHead.version.names.map((n) => n.name)).toEqual(['After']);
  });

  it('content is written at HEAD only, not through a version', async () => {
    const source = await newSource();
    await concept(source, 'H1');
    await t.services.repositories.createVersion(ctx, source, { id: 'v1', description: 'one' });
    await expect(concept({ ...source, version: 'v1' }, 'H2')).rejects.toBeDefined();
    await expect(
      t.services.concepts.get(ctx, { ...source, version: 'v1' }, 'H2'),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('writes are refused to anonymous callers and to non-members of the owner', async () => {
    const source = await newSource();
    const anonymous = await contextOf(t, 'anonymous');
    const stranger = await contextOf(t, outsider);
    const input = { id: 'W1', conceptClass: 'Misc', names: [name('Nope')] };
    await expect(t.services.concepts.create(anonymous, source, input)).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
    });
    await expect(t.services.concepts.create(stranger, source, input)).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(t.services.concepts.get(ctx, source, 'W1')).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('a private source refuses readers who may not see it (docs/rights.md: 401, 403)', async () => {
    const source = await newSource({ private: true });
    await concept(source, 'P1');
    const stranger = await contextOf(t, outsider);
    const anonymous = await contextOf(t, 'anonymous');
    await expect(t.services.concepts.get(stranger, source, 'P1')).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(t.services.concepts.get(anonymous, source, 'P1')).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
    });
    expect((await t.services.concepts.get(ctx, source, 'P1')).concept.mnemonic).toBe('P1');
  });
});

describe('mappings', () => {
  it('a mapping between two concepts resolves both ends', async () => {
    const source = await newSource();
    await concept(source, 'A', 'Anemia');
    await concept(source, 'B', 'Bleeding');
    const made = await t.services.mappings.create(ctx, source, {
      mapType: 'SAME-AS',
      fromConceptUrl: conceptUrl(source, 'A'),
      toConceptUrl: conceptUrl(source, 'B'),
    });
    expect(made.view.version.mapType).toBe('SAME-AS');
    expect(made.view.version.fromConceptCode).toBe('A');
    expect(made.view.version.toConceptCode).toBe('B');
    expect(made.view.version.toConceptId).not.toBeNull();
  });

  it('a mapping to a code of an external source keeps the code and no concept', async () => {
    const source = await newSource();
    await concept(source, 'A');
    const made = await t.services.mappings.create(ctx, source, {
      mapType: 'NARROWER-THAN',
      fromConceptUrl: conceptUrl(source, 'A'),
      toSourceUrl: '/orgs/WHO/sources/ICD-10/',
      toConceptCode: 'B54',
      toConceptName: 'Unspecified malaria',
    });
    expect(made.view.version.toConceptCode).toBe('B54');
    expect(made.view.version.toConceptId).toBeNull();
  });

  it('a mapping without a map type is refused and nothing is written', async () => {
    const source = await newSource();
    await concept(source, 'A');
    await expect(
      t.services.mappings.create(ctx, source, {
        fromConceptUrl: conceptUrl(source, 'A'),
        toConceptCode: 'X',
        toSourceUrl: '/orgs/WHO/sources/ICD-10/',
      }),
    ).rejects.toMatchObject({ code: 'INVALID' });
    const page = await t.services.mappings.list(ctx, source, defaultListParams());
    expect(page.total).toBe(0);
  });

  it('retire makes a new, retired version; the mapping reads as retired at HEAD', async () => {
    const source = await newSource();
    await concept(source, 'A');
    await concept(source, 'B');
    const made = await t.services.mappings.create(ctx, source, {
      mapType: 'SAME-AS',
      fromConceptUrl: conceptUrl(source, 'A'),
      toConceptUrl: conceptUrl(source, 'B'),
    });
    const retired = await t.services.mappings.retire(ctx, source, made.view.mapping.mnemonic);
    expect(retired.version.retired).toBe(true);
    expect(retired.version.id).not.toBe(made.view.version.id);
  });
});
