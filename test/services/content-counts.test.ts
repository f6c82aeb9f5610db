import request from 'supertest';
import { createTestApp, uniqueId, type TestApp } from '../factories';
import {
  createCollection,
  createConcept,
  createMappingBetween,
  createSource,
  createVersion,
  retire,
} from '../factories/content';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/** A fresh source and its repository id. */
async function source(): Promise<{ url: string; id: string; auth: string }> {
  const made = await createSource(t, { id: uniqueId('src') });
  const rows = await t.dataSource.query<Array<{ id: string }>>(
    'SELECT r.id::text AS id FROM repositories r JOIN organizations o ON o.id = r.owner_org_id WHERE o.mnemonic = $1 AND r.mnemonic = $2',
    [made.org, made.id],
  );
  return { url: made.url, id: rows[0].id, auth: made.owner.auth };
}

/** What the counts must be: a recount of the current, not retired rows. */
async function recount(repositoryId: string): Promise<{ stored: number; actual: number }> {
  const rows = await t.dataSource.query<Array<{ stored: number; actual: number }>>(
    `SELECT r.active_concepts AS stored,
       (SELECT count(*)::int FROM concept_versions c
         WHERE c.repository_id = r.id AND c.valid_to_seq IS NULL AND NOT c.retired) AS actual
     FROM repositories r WHERE r.id = $1`,
    [repositoryId],
  );
  return rows[0];
}

describe('active counts kept by the content triggers', () => {
  it('stay exact through set-based inserts, retirements, edits and deletes', async () => {
    const src = await source();
    await t.dataSource.query(`UPDATE repositories SET head_seq = 1 WHERE id = $1`, [src.id]);
    await t.dataSource.query(
      `INSERT INTO concepts (repository_id, mnemonic) SELECT $1, 'C' || g FROM generate_series(1, 500) g`,
      [src.id],
    );
    await t.dataSource.query(
      `INSERT INTO concept_versions (concept_id, repository_id, valid_from_seq) SELECT id, repository_id, 1 FROM concepts WHERE repository_id = $1`,
      [src.id],
    );
    expect(await recount(src.id)).toEqual({ stored: 500, actual: 500 });

    // Retire 50 at change 2: end the current rows, add retired ones.
    await t.dataSource.query(`UPDATE repositories SET head_seq = 2 WHERE id = $1`, [src.id]);
    await t.dataSource.query(
      `WITH ended AS (
         UPDATE concept_versions SET valid_to_seq = 2
         WHERE repository_id = $1 AND valid_to_seq IS NULL AND concept_id IN (
           SELECT id FROM concepts WHERE repository_id = $1 ORDER BY id LIMIT 50)
         RETURNING concept_id)
       INSERT INTO concept_versions (concept_id, repository_id, valid_from_seq, retired)
       SELECT concept_id, $1, 2, true FROM ended`,
      [src.id],
    );
    expect(await recount(src.id)).toEqual({ stored: 450, actual: 450 });

    // An edit of a retired concept that keeps it retired changes nothing.
    await t.dataSource.query(
      `UPDATE concept_versions SET created_by = 'editor' WHERE repository_id = $1 AND retired`,
      [src.id],
    );
    expect(await recount(src.id)).toEqual({ stored: 450, actual: 450 });

    // Deleting concepts cascades to their versions.
    await t.dataSource.query(
      `DELETE FROM concepts WHERE id IN (SELECT id FROM concepts WHERE repository_id = $1 ORDER BY id DESC LIMIT 20)`,
      [src.id],
    );
    expect(await recount(src.id)).toEqual({ stored: 430, actual: 430 });

    const detail = await request(t.app).get(src.url);
    expect(detail.body.active_concepts).toBe(430);
  });

  it('a version keeps the counts it froze while HEAD moves on', async () => {
    const src = await source();
    await t.dataSource.query(`UPDATE repositories SET head_seq = 1 WHERE id = $1`, [src.id]);
    await t.dataSource.query(
      `INSERT INTO concepts (repository_id, mnemonic) SELECT $1, 'C' || g FROM generate_series(1, 30) g`,
      [src.id],
    );
    await t.dataSource.query(
      `INSERT INTO concept_versions (concept_id, repository_id, valid_from_seq) SELECT id, repository_id, 1 FROM concepts WHERE repository_id = $1`,
      [src.id],
    );
    const v1 = await request(t.app)
      .post(`${src.url}versions/`)
      .set('Authorization', src.auth)
      .send({ id: 'v1' });
    expect(v1.status).toBe(201);
    expect(v1.body.active_concepts).toBe(30);

    await t.dataSource.query(`UPDATE repositories SET head_seq = 2 WHERE id = $1`, [src.id]);
    await t.dataSource.query(
      `INSERT INTO concepts (repository_id, mnemonic) SELECT $1, 'D' || g FROM generate_series(1, 12) g`,
      [src.id],
    );
    await t.dataSource.query(
      `INSERT INTO concept_versions (concept_id, repository_id, valid_from_seq)
       SELECT id, repository_id, 2 FROM concepts WHERE repository_id = $1 AND mnemonic LIKE 'D%'`,
      [src.id],
    );
    expect((await request(t.app).get(src.url)).body.active_concepts).toBe(42);
    expect((await request(t.app).get(`${src.url}v1/`)).body.active_concepts).toBe(30);
  });
});

/** Kept member totals of every expansion of a collection, and what a recount of the members says. */
async function memberTotals(
  collectionUrl: string,
): Promise<{ kept: Record<string, number>; actual: Record<string, number> }> {
  const [, , org, , id] = collectionUrl.split('/');
  const scope = `SELECT e.id FROM expansions e JOIN repositories r ON r.id = e.collection_id
    JOIN organizations o ON o.id = r.owner_org_id WHERE o.mnemonic = $1 AND r.mnemonic = $2`;
  const kept = await t.dataSource.query<Array<{ key: string; n: number }>>(
    `SELECT expansion_id || resource || repository_id || (retired_pinned > 0)::text AS key,
       members AS n FROM expansion_member_totals
     WHERE expansion_id IN (${scope}) AND members <> 0`,
    [org, id],
  );
  const actual = await t.dataSource.query<Array<{ key: string; n: number }>>(
    `SELECT expansion_id || resource || repository_id || pinned::text AS key, n FROM (
       SELECT expansion_id, resource, repository_id, bool_or(pinned_retired) AS pinned,
         count(*)::int AS n FROM (
       SELECT x.expansion_id, 'c' AS resource, x.repository_id, coalesce(v.retired, false) AS pinned_retired
       FROM expansion_concepts x LEFT JOIN concept_versions v ON v.id = x.concept_version_id
       UNION ALL
       SELECT x.expansion_id, 'm', x.repository_id, coalesce(v.retired, false)
       FROM expansion_mappings x LEFT JOIN mapping_versions v ON v.id = x.mapping_version_id) m
     WHERE expansion_id IN (${scope}) GROUP BY 1, 2, 3) g`,
    [org, id],
  );
  const byKey = (rows: Array<{ key: string; n: number }>) =>
    Object.fromEntries(rows.map((r) => [r.key, r.n]));
  return { kept: byKey(kept), actual: byKey(actual) };
}

describe('expansion member totals kept by the member triggers', () => {
  it('stay exact through parallel adds, removals, retirements, versions and deletes', async () => {
    const a = await createSource(t, { id: uniqueId('A') });
    const owner = { owner: a.owner, org: a.org };
    const b = await createSource(t, { id: uniqueId('B') }, owner);
    for (let i = 0; i < 12; i += 1) {
      await createConcept(t, a.url, a.owner, { id: `a${i}` });
      if (i < 4) await createConcept(t, b.url, a.owner, { id: `b${i}` });
    }
    await createMappingBetween(t, a.url, a.owner, [
      'M1',
      'SAME-AS',
      `${a.url}concepts/a0/`,
      `${a.url}concepts/a1/`,
    ]);
    const c = await createCollection(t, { id: uniqueId('C') }, owner);
    const put = (expressions: string[]) =>
      request(t.app)
        .put(`${c.url}references/`)
        .set('Authorization', a.owner.auth)
        .send({ data: { expressions } });
    // Parallel adds to one collection: each lands once, the totals agree with the members.
    const answers = await Promise.all([
      ...Array.from({ length: 12 }, (_, i) => put([`${a.url}concepts/a${i}/`])),
      put([`${b.url}concepts/`]),
      put([`${a.url}mappings/M1/`]),
    ]);
    for (const res of answers) expect(res.status).toBe(200);
    let totals = await memberTotals(c.url);
    expect(totals.kept).toEqual(totals.actual);
    expect(Object.values(totals.actual).reduce((x, y) => x + y, 0)).toBe(17);
    const members = async (path: string) => {
      const res = await request(t.app).get(`${c.url}${path}concepts/?limit=1`);
      expect(res.status).toBe(200);
      return Number(res.headers.num_found);
    };
    expect(await members('')).toBe(16);

    // A retired member the collection follows is counted out at once; a version pins it.
    await retire(t, a.url, a.owner, 'concepts', 'a3');
    expect(await members('')).toBe(15);
    await createVersion(t, c.url, a.owner, 'v1');
    totals = await memberTotals(c.url);
    expect(totals.kept).toEqual(totals.actual);
    expect(Object.keys(totals.kept).some((key) => key.endsWith('true'))).toBe(true);
    expect(await members('v1/')).toBe(15);

    // Removals (in parallel with an add) and a deleted version's expansion.
    const removed = await Promise.all([
      request(t.app)
        .delete(`${c.url}references/`)
        .set('Authorization', a.owner.auth)
        .send({ expressions: [`${a.url}concepts/a5/`] }),
      request(t.app)
        .delete(`${c.url}references/`)
        .set('Authorization', a.owner.auth)
        .send({ expressions: [`${b.url}concepts/`] }),
    ]);
    for (const res of removed) expect(res.status).toBe(204);
    totals = await memberTotals(c.url);
    expect(totals.kept).toEqual(totals.actual);
    expect(await members('')).toBe(10);
    expect(await members('v1/')).toBe(15);
    const deleted = await request(t.app).delete(`${c.url}v1/`).set('Authorization', a.owner.auth);
    expect(deleted.status).toBe(204);
    totals = await memberTotals(c.url);
    expect(totals.kept).toEqual(totals.actual);
  });
});
