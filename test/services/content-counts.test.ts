import request from 'supertest';
import { createTestApp, uniqueId, type TestApp } from '../factories';
import { createSource } from '../factories/content';

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
