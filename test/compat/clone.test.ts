import request from 'supertest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../factories';
import {
  createConcept,
  createConcepts,
  createMappingBetween,
  createSource,
} from '../factories/content';

/**
 * `$clone` (spec operations §4.3). The origin ORIG holds a question Q with answers A1 and A2
 * (Q-AND-A), A1 mapped SAME-AS to an external ICD-10 code, and a child C of Q; A3 (added later)
 * answers to A1 as well. Each test clones into a destination source of its own.
 */
let t: TestApp;
let author: TestUser;
let origin: string;
/** The origin's author. */
let originBy: TestUser;

type Outcome = {
  status: number;
  message?: string;
  bundle?: { total: number; entry: Array<Record<string, unknown>> };
};

beforeAll(async () => {
  t = await createTestApp();
  const s = await createSource(t, { id: 'ORIG' });
  origin = s.url;
  originBy = s.owner;
  await createConcepts(t, origin, s.owner, [
    ['Q', 'Which test?', 'Question'],
    ['A1', 'Smear', 'Test'],
    ['A2', 'Rapid test', 'Test'],
    ['A3', 'Follow-up', 'Question'],
  ]);
  await createConcept(t, origin, s.owner, {
    id: 'C',
    parent_concept_urls: [`${origin}concepts/Q/`],
  });
  const c = (id: string) => `${origin}concepts/${id}/`;
  await createMappingBetween(t, origin, s.owner, ['m1', 'Q-AND-A', c('Q'), c('A1')]);
  await createMappingBetween(t, origin, s.owner, ['m2', 'Q-AND-A', c('Q'), c('A2')]);
  await createMappingBetween(t, origin, s.owner, ['m3', 'Q-AND-A', c('A3'), c('A1')]);
  await request(t.app)
    .post(`${origin}mappings/`)
    .set('Authorization', s.owner.auth)
    .send({
      id: 'm4',
      map_type: 'SAME-AS',
      from_concept_url: c('A1'),
      to_source_url: '/orgs/WHO/sources/ICD-10/',
      to_concept_code: 'B54',
    })
    .expect(201);
  author = await createUser(t);
});
afterAll(() => t.close());

async function destination(fields: Record<string, unknown> = {}): Promise<string> {
  return (await createSource(t, { id: 'DEST', ...fields }, { owner: author })).url;
}

async function clone(
  dest: string,
  body: Record<string, unknown>,
  auth = author.auth,
): Promise<Record<string, Outcome>> {
  const res = await request(t.app)
    .post(`${dest}concepts/$clone/`)
    .set('Authorization', auth)
    .send(body);
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Record<string, Outcome>;
}

async function conceptsOf(dest: string): Promise<string[]> {
  const res = await request(t.app)
    .get(`${dest}concepts/?limit=0`)
    .set('Authorization', author.auth)
    .expect(200);
  return (res.body as Array<{ id: string }>).map((c) => c.id).sort();
}

async function mappingsOf(dest: string): Promise<string[]> {
  const res = await request(t.app)
    .get(`${dest}mappings/?limit=0`)
    .set('Authorization', author.auth)
    .expect(200);
  return (res.body as Array<Record<string, string>>)
    .map((m) => `${m.from_concept_code} ${m.map_type} ${m.to_source_url}${m.to_concept_code}`)
    .sort();
}

describe('$clone', () => {
  it('copies a concept and what the walk reaches, each mapped to its original, without hierarchy', async () => {
    const dest = await destination();
    const expression = `${origin}concepts/Q/`;
    const answer = await clone(dest, { expressions: [expression] });
    const outcome = answer[expression];
    expect(outcome.status).toBe(201);
    const concepts = outcome.bundle!.entry.filter((e) => e.type === 'Concept');
    expect(concepts.map((e) => e.id)).toEqual(['Q', 'A1', 'A2', 'C']);
    expect(concepts[0]).toMatchObject({ url: `${dest}concepts/Q/`, retired: false });
    expect(outcome.bundle!.total).toBe(outcome.bundle!.entry.length);
    expect(await conceptsOf(dest)).toEqual(['A1', 'A2', 'C', 'Q']);
    expect(await mappingsOf(dest)).toEqual(
      [
        `A1 SAME-AS ${origin}A1`,
        'A1 SAME-AS /orgs/WHO/sources/ICD-10/B54',
        `A2 SAME-AS ${origin}A2`,
        `C SAME-AS ${origin}C`,
        `Q Q-AND-A ${dest}A1`,
        `Q Q-AND-A ${dest}A2`,
        `Q SAME-AS ${origin}Q`,
      ].sort(),
    );
    const qa = outcome.bundle!.entry.find(
      (e) => e.type === 'Mapping' && e.map_type === 'Q-AND-A' && e.to_concept_code === 'A1',
    )!;
    expect(qa).toMatchObject({
      from_concept_code: 'Q',
      to_concept_url: `${dest}concepts/A1/`,
      cascade_target_concept_code: 'A1',
      cascade_target_source_name: 'DEST',
    });
    const child = await request(t.app)
      .get(`${dest}concepts/C/`)
      .set('Authorization', author.auth)
      .expect(200);
    expect(child.body.parent_concept_urls).toEqual([]);
    expect(child.body.names[0].name).toBe('Name C');
  });

  it('skips what already has an equivalent, and maps to that equivalent', async () => {
    const dest = await destination();
    await clone(dest, { expressions: [`${origin}concepts/Q/`] });
    const again = await clone(dest, { expressions: [`${origin}concepts/Q/`] });
    expect(again[`${origin}concepts/Q/`]).toMatchObject({ status: 200, bundle: { total: 0 } });
    const a3 = await clone(dest, { expressions: [`${origin}concepts/A3/`] });
    const created = a3[`${origin}concepts/A3/`].bundle!.entry;
    expect(created.filter((e) => e.type === 'Concept').map((e) => e.id)).toEqual(['A3']);
    expect(await conceptsOf(dest)).toEqual(['A1', 'A2', 'A3', 'C', 'Q']);
    expect(await mappingsOf(dest)).toContain(`A3 Q-AND-A ${dest}A1`);
  });

  it('follows the destination’s id schemes; a taken id gets the next free number', async () => {
    const numbered = await destination({ id: 'NUM', autoid_concept_mnemonic: 'sequential' });
    await clone(numbered, { expressions: [`${origin}concepts/A2/`] });
    expect(await conceptsOf(numbered)).toEqual(['1']);
    const taken = await destination({ id: 'TAKEN' });
    await createConcept(t, taken, author, { id: 'A2' });
    await clone(taken, { expressions: [`${origin}concepts/A2/`] });
    expect(await conceptsOf(taken)).toEqual(['1', 'A2']);
  });

  it('takes cascade parameters: levels, map types, the equivalency type', async () => {
    const dest = await destination();
    await clone(dest, {
      expressions: [`${origin}concepts/Q/`],
      parameters: {
        cascadeLevels: 0,
        cascadeHierarchy: false,
        equivalencyMapType: 'NARROWER-THAN',
      },
    });
    expect(await conceptsOf(dest)).toEqual(['A1', 'A2', 'Q']);
    expect(await mappingsOf(dest)).toContain(`Q NARROWER-THAN ${origin}Q`);
  });

  it('answers each expression on its own: one failing writes nothing, the others land', async () => {
    const dest = await destination();
    const answer = await clone(dest, {
      expressions: [`${origin}concepts/NOPE/`, 'not a concept', `${origin}concepts/A2/`],
    });
    expect(answer[`${origin}concepts/NOPE/`].status).toBe(404);
    expect(answer[`${origin}concepts/NOPE/`].message).toMatch(/NOPE/);
    expect(answer['not a concept'].status).toBe(400);
    expect(answer[`${origin}concepts/A2/`].status).toBe(201);
    expect(await conceptsOf(dest)).toEqual(['A2']);
  });

  it('needs read access to the origin and write access to the destination', async () => {
    const dest = await destination();
    const body = { expressions: [`${origin}concepts/A2/`] };
    await request(t.app).post(`${dest}concepts/$clone/`).send(body).expect(401);
    const stranger = await createUser(t);
    await request(t.app)
      .post(`${dest}concepts/$clone/`)
      .set('Authorization', stranger.auth)
      .send(body)
      .expect(403);
    const hidden = await createSource(t, { id: 'HIDDEN', public_access: 'None' });
    await createConcept(t, hidden.url, hidden.owner, { id: 'X' });
    const answer = await clone(dest, { expressions: [`${hidden.url}concepts/X/`] });
    expect(answer[`${hidden.url}concepts/X/`].status).toBe(403);
    expect(await conceptsOf(dest)).toEqual([]);
  });

  it('refuses a body without expressions with 400, and other methods with 405', async () => {
    const dest = await destination();
    for (const body of [
      {},
      { expressions: [] },
      { expressions: 'x' },
      { expressions: [1] },
      { expressions: ['x'.repeat(2000)] },
      { expressions: [`${origin}concepts/Q/`], parameters: { cascadeLevels: { a: 1 } } },
      { expressions: [`${origin}concepts/Q/`], parameters: [] },
      { expressions: [`${origin}concepts/Q/`], parameters: { view: 'tree' } },
    ]) {
      const res = await request(t.app)
        .post(`${dest}concepts/$clone/`)
        .set('Authorization', author.auth)
        .send(body);
      expect(res.status).toBe(400);
    }
    await request(t.app)
      .get(`${dest}concepts/$clone/`)
      .set('Authorization', author.auth)
      .expect(405);
    expect(await conceptsOf(dest)).toEqual([]);
  });

  it('parallel clones of one concept create it once', async () => {
    const dest = await destination();
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => clone(dest, { expressions: [`${origin}concepts/Q/`] })),
    );
    const statuses = answers.map((a) => a[`${origin}concepts/Q/`].status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(await conceptsOf(dest)).toEqual(['A1', 'A2', 'C', 'Q']);
    expect(await mappingsOf(dest)).toHaveLength(7);
  });
});

describe('$clone, parameters and rules in detail', () => {
  async function mappingDetails(dest: string): Promise<Array<Record<string, unknown>>> {
    const res = await request(t.app)
      .get(`${dest}mappings/?limit=0&verbose=true`)
      .set('Authorization', author.auth)
      .expect(200);
    return res.body as Array<Record<string, unknown>>;
  }

  async function mappingIn(dest: string, code: string, mapType: string): Promise<string[]> {
    const res = await request(t.app)
      .get(`${dest}mappings/?limit=0`)
      .set('Authorization', author.auth)
      .expect(200);
    return (res.body as Array<Record<string, string>>)
      .filter((m) => m.from_concept_code === code && m.map_type === mapType)
      .map((m) => `${m.to_source_url}${m.to_concept_code}`)
      .sort();
  }

  it('honours omitIfExistsIn as well as the destination: what either holds is not cloned', async () => {
    const local = await createSource(t, { id: 'LOCAL' }, { owner: author });
    await createConcept(t, local.url, author, { id: 'MY-A1' });
    await createMappingBetween(t, local.url, author, [
      'eq',
      'SAME-AS',
      `${local.url}concepts/MY-A1/`,
      `${origin}concepts/A1/`,
    ]);
    const dest = await destination();
    await clone(dest, { expressions: [`${origin}concepts/A2/`] });
    const parameters = { omitIfExistsIn: local.url };
    const answer = await clone(dest, { expressions: [`${origin}concepts/Q/`], parameters });
    const created = answer[`${origin}concepts/Q/`].bundle!.entry;
    // A1: an equivalent in LOCAL; A2: already cloned into the destination.
    expect(created.filter((e) => e.type === 'Concept').map((e) => e.id)).toEqual(['Q', 'C']);
    expect(await conceptsOf(dest)).toEqual(['A2', 'C', 'Q']);
    expect(await mappingIn(dest, 'Q', 'Q-AND-A')).toEqual([`${origin}A1`, `${dest}A2`].sort());
    // The expression's own concept held there: nothing to clone.
    const held = await clone(dest, { expressions: [`${origin}concepts/A1/`], parameters });
    expect(held[`${origin}concepts/A1/`]).toMatchObject({ status: 200, bundle: { total: 0 } });
    expect(await conceptsOf(dest)).toEqual(['A2', 'C', 'Q']);
  });

  it('refuses an omitIfExistsIn the caller may not read, writing nothing', async () => {
    const hidden = await createSource(t, { id: 'HIDDEN2', public_access: 'None' });
    const dest = await destination();
    const res = await request(t.app)
      .post(`${dest}concepts/$clone/`)
      .set('Authorization', author.auth)
      .send({ expressions: [`${origin}concepts/Q/`], parameters: { omitIfExistsIn: hidden.url } });
    expect(res.status).toBe(403);
    expect(await conceptsOf(dest)).toEqual([]);
  });

  it('tries several comma-separated equivalency map types in order', async () => {
    const dest = await destination();
    await createConcepts(t, dest, author, [
      ['BROAD', 'Broader A2', 'Misc'],
      ['SAME', 'Same A2', 'Misc'],
    ]);
    await createMappingBetween(t, dest, author, [
      'b',
      'BROADER-THAN',
      `${dest}concepts/BROAD/`,
      `${origin}concepts/A2/`,
    ]);
    // Only BROADER-THAN is known: A2 counts as already there.
    const a2 = await clone(dest, {
      expressions: [`${origin}concepts/A2/`],
      parameters: { equivalencyMapType: 'SAME-AS,BROADER-THAN' },
    });
    expect(a2[`${origin}concepts/A2/`]).toMatchObject({ status: 200, bundle: { total: 0 } });
    await createMappingBetween(t, dest, author, [
      's',
      'SAME-AS',
      `${dest}concepts/SAME/`,
      `${origin}concepts/A2/`,
    ]);
    const answer = await clone(dest, {
      expressions: [`${origin}concepts/Q/`],
      parameters: { equivalencyMapType: 'BROADER-THAN,SAME-AS', cascadeHierarchy: false },
    });
    const created = answer[`${origin}concepts/Q/`].bundle!.entry;
    expect(created.filter((e) => e.type === 'Concept').map((e) => e.id)).toEqual(['Q', 'A1']);
    // The first type names the clones' mapping to their originals, and wins where both exist.
    expect(await mappingIn(dest, 'Q', 'BROADER-THAN')).toEqual([`${origin}Q`]);
    expect(await mappingIn(dest, 'Q', 'Q-AND-A')).toEqual([`${dest}A1`, `${dest}BROAD`]);
    const other = await destination({ id: 'ORDER' });
    await createConcepts(t, other, author, [
      ['BROAD', 'Broader A2', 'Misc'],
      ['SAME', 'Same A2', 'Misc'],
    ]);
    for (const [id, type, from] of [
      ['b', 'BROADER-THAN', 'BROAD'],
      ['s', 'SAME-AS', 'SAME'],
    ]) {
      await createMappingBetween(t, other, author, [
        id,
        type,
        `${other}concepts/${from}/`,
        `${origin}concepts/A2/`,
      ]);
    }
    await clone(other, {
      expressions: [`${origin}concepts/Q/`],
      parameters: { equivalencyMapType: ['SAME-AS', 'BROADER-THAN'], cascadeHierarchy: false },
    });
    expect(await mappingIn(other, 'Q', 'Q-AND-A')).toEqual([`${other}A1`, `${other}SAME`]);
  });

  it('assigns ids and external ids by the destination’s schemes, blank where it has none (rule 3)', async () => {
    await createConcept(t, origin, originBy, {
      id: 'EXT',
      external_id: 'ORIGINAL-EXT',
      names: [{ name: 'With ids', locale: 'en', locale_preferred: true, external_id: 'N-EXT' }],
    });
    const plain = await destination({ id: 'PLAIN' });
    await clone(plain, { expressions: [`${origin}concepts/EXT/`] });
    const copy = await request(t.app)
      .get(`${plain}concepts/EXT/`)
      .set('Authorization', author.auth)
      .expect(200);
    expect(copy.body.external_id).toBeNull();
    expect(copy.body.names[0].external_id).toBeNull();
    const [plainMapping] = await mappingDetails(plain);
    expect(plainMapping).toMatchObject({ id: '1', external_id: null });

    const schemes = await destination({
      id: 'SCHEMES',
      autoid_concept_mnemonic: 'sequential',
      autoid_concept_mnemonic_start_from: 100,
      autoid_concept_external_id: 'sequential',
      autoid_concept_external_id_start_from: 500,
      autoid_concept_name_external_id: 'uuid',
      autoid_mapping_mnemonic: 'uuid',
      autoid_mapping_external_id: 'sequential',
      autoid_mapping_external_id_start_from: 7,
    });
    await clone(schemes, {
      expressions: [`${origin}concepts/Q/`],
      parameters: { cascadeLevels: 0, cascadeHierarchy: false },
    });
    const concepts = await request(t.app)
      .get(`${schemes}concepts/?limit=0&verbose=true`)
      .set('Authorization', author.auth)
      .expect(200);
    const byId = (concepts.body as Array<Record<string, unknown>>)
      .map((c) => [c.id, c.external_id, c.display_name])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(byId).toEqual([
      ['100', '500', 'Which test?'],
      ['101', '501', 'Smear'],
      ['102', '502', 'Rapid test'],
    ]);
    const named = await request(t.app)
      .get(`${schemes}concepts/100/`)
      .set('Authorization', author.auth)
      .expect(200);
    expect(named.body.names[0].external_id).toMatch(/^[0-9a-f-]{36}$/);
    const mappings = await mappingDetails(schemes);
    expect(mappings).toHaveLength(5);
    for (const m of mappings) expect(m.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(mappings.map((m) => Number(m.external_id)).sort((a, b) => a - b)).toEqual([
      7, 8, 9, 10, 11,
    ]);
  });

  it('rolls an expression back whole when it fails after writing, the others still land', async () => {
    const boom = `BOOM-${Date.now()}`;
    const owner = originBy;
    await createConcepts(t, origin, owner, [
      ['F1', 'Fails', 'Question'],
      ['F2', 'Its answer', 'Misc'],
    ]);
    await createMappingBetween(t, origin, owner, [
      'mf',
      boom,
      `${origin}concepts/F1/`,
      `${origin}concepts/F2/`,
    ]);
    // The database refuses a cloned mapping of that type: after F1, F2 and their SAME-AS
    // mappings were written in the expression's transaction.
    const fn = `fail_${boom.replace(/-/g, '_').toLowerCase()}`;
    await t.dataSource.query(
      `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION 'refused' USING ERRCODE = 'unique_violation'; END $$`,
    );
    await t.dataSource.query(
      `CREATE TRIGGER ${fn} BEFORE INSERT ON mapping_versions FOR EACH ROW
       WHEN (NEW.map_type = '${boom}' AND NEW.update_comment LIKE 'Cloned from %')
       EXECUTE FUNCTION ${fn}()`,
    );
    try {
      const dest = await destination();
      const answer = await clone(dest, {
        expressions: [`${origin}concepts/A3/`, `${origin}concepts/F1/`, `${origin}concepts/A2/`],
        parameters: { mapTypes: `Q-AND-A,${boom}`, returnMapTypes: '*' },
      });
      expect(answer[`${origin}concepts/F1/`].status).toBe(409);
      expect(answer[`${origin}concepts/A3/`].status).toBe(201);
      expect(answer[`${origin}concepts/A2/`].status).toBe(201);
      expect(await conceptsOf(dest)).toEqual(['A1', 'A2', 'A3']);
      expect(await mappingIn(dest, 'F1', 'SAME-AS')).toEqual([]);
      expect(await mappingIn(dest, 'F2', 'SAME-AS')).toEqual([]);
      expect(await mappingsOf(dest)).toHaveLength(5);
    } finally {
      await t.dataSource.query(`DROP TRIGGER ${fn} ON mapping_versions`);
      await t.dataSource.query(`DROP FUNCTION ${fn}()`);
    }
  });
});
