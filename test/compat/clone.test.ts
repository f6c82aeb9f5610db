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

type Outcome = {
  status: number;
  message?: string;
  bundle?: { total: number; entry: Array<Record<string, unknown>> };
};

beforeAll(async () => {
  t = await createTestApp();
  const s = await createSource(t, { id: 'ORIG' });
  origin = s.url;
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
