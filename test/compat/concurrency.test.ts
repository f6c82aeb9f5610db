import request from 'supertest';
import { createTestApp, uniqueId, type TestApp, type TestUser } from '../factories';
import { createCollection, createConcept, createSource, createVersion } from '../factories/content';

/**
 * Parallel callers (issue 9): no request may hang the service, no race may duplicate data. The
 * test app's pool has 4 connections, so a request that holds one connection while it waits for
 * another starves the pool within a handful of parallel calls.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/** Every request of these tests must be answered within this time, or the test fails. */
const DEADLINE = { deadline: 30_000 };

interface World {
  owner: TestUser;
  org: string;
  source: string;
}

/** An org with a source of concepts C0…C(n-1) and `collections` empty collections K0, K1, … */
async function world(concepts: number, collections: number): Promise<World> {
  const { owner, org, url: source } = await createSource(t);
  for (let i = 0; i < concepts; i++) {
    await createConcept(t, source, owner, {
      id: `C${i}`,
      names: [{ name: `Concept ${i}`, locale: 'en' }],
    });
  }
  for (let i = 0; i < collections; i++) {
    await createCollection(t, { id: `K${i}` }, { owner, org });
  }
  return { owner, org, source };
}

/** Polls `/healthz/` until `done` settles; answers every status and the slowest answer. */
async function healthWhile(
  done: Promise<unknown>,
): Promise<{ statuses: number[]; slowest: number }> {
  let finished = false;
  void done.finally(() => (finished = true));
  const statuses: number[] = [];
  let slowest = 0;
  while (!finished) {
    const started = Date.now();
    const res = await request(t.app).get('/healthz/').timeout({ deadline: 10_000 });
    slowest = Math.max(slowest, Date.now() - started);
    statuses.push(res.status);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { statuses, slowest };
}

describe('no request can hang the service', () => {
  it('twelve parallel reference adds, one per collection, all finish', async () => {
    const w = await world(1, 12);
    const adds = Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        request(t.app)
          .put(`/orgs/${w.org}/collections/K${i}/references/`)
          .set('Authorization', w.owner.auth)
          .send({ data: { expressions: [`${w.source}concepts/C0/`] } })
          .timeout(DEADLINE),
      ),
    );
    const health = healthWhile(adds);
    const answers = await adds;
    expect(answers.map((res) => res.status)).toEqual(Array(12).fill(200));
    expect(answers.every((res) => (res.body as Array<{ added: boolean }>)[0].added)).toBe(true);
    expect((await health).statuses.every((status) => status === 200)).toBe(true);
  });

  it('fifty parallel reference adds, removals and expansions across collections all finish, and /healthz/ answers throughout', async () => {
    const w = await world(6, 5);
    const collection = (i: number) => `/orgs/${w.org}/collections/K${i % 5}/`;
    const work = Array.from({ length: 50 }, (_, i) => {
      const concept = `${w.source}concepts/C${i % 6}/`;
      switch (i % 3) {
        case 0:
          return request(t.app)
            .put(`${collection(i)}references/`)
            .set('Authorization', w.owner.auth)
            .send({ data: { expressions: [concept] } })
            .timeout(DEADLINE);
        case 1:
          return request(t.app)
            .delete(`${collection(i)}references/`)
            .set('Authorization', w.owner.auth)
            .send({ expressions: [concept] })
            .timeout(DEADLINE);
        default:
          return request(t.app)
            .post(`${collection(i)}HEAD/expansions/`)
            .set('Authorization', w.owner.auth)
            .send({ mnemonic: `e${i}`, parameters: {} })
            .timeout(DEADLINE);
      }
    });
    const all = Promise.all(work);
    const health = await healthWhile(all);
    const answers = await all;
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((status) => status >= 500)).toEqual([]);
    expect(statuses.every((status) => [200, 201, 204].includes(status))).toBe(true);
    expect(health.statuses.length).toBeGreaterThan(0);
    expect(health.statuses.every((status) => status === 200)).toBe(true);
    // Each collection's HEAD expansion still holds exactly its current references' concepts.
    for (let k = 0; k < 5; k++) {
      const refs = await request(t.app)
        .get(`/orgs/${w.org}/collections/K${k}/references/?limit=0`)
        .set('Authorization', w.owner.auth)
        .expect(200);
      const concepts = await request(t.app)
        .get(`/orgs/${w.org}/collections/K${k}/concepts/?limit=0`)
        .set('Authorization', w.owner.auth)
        .expect(200);
      expect(concepts.body).toHaveLength((refs.body as unknown[]).length);
    }
  });

  it('a request that finds no free connection in time answers 503 with Retry-After, not a hang', async () => {
    const small = await createTestApp({ DB_POOL_SIZE: '1', DB_ACQUIRE_TIMEOUT_MS: '300' });
    const holder = small.dataSource.createQueryRunner();
    try {
      await holder.connect(); // the pool's only connection
      const started = Date.now();
      const res = await request(small.app).get('/orgs/').timeout(DEADLINE);
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('2');
      expect(res.body).toEqual({
        code: 'Service Unavailable',
        message: 'The service is busy; nothing was changed. Try again shortly.',
      });
      expect(Date.now() - started).toBeLessThan(5_000);
      const gql = await request(small.app)
        .post('/graphql')
        .send({ query: '{ orgs { totalCount } }' })
        .timeout(DEADLINE);
      expect(gql.body.errors[0].extensions.code).toBe('UNAVAILABLE');
    } finally {
      await holder.release();
      await small.close();
    }
    expect((await request(t.app).get('/healthz/')).status).toBe(200);
  });

  it('every connection carries the time limits and the session settings (SESSION_SETTINGS)', async () => {
    const limited = await createTestApp({
      DB_STATEMENT_TIMEOUT_MS: '150',
      DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '200',
    });
    try {
      const [settings] = await limited.dataSource.query<
        Array<{ statement: string; idle: string; pages: string }>
      >(
        `SELECT current_setting('statement_timeout') AS statement,
                current_setting('idle_in_transaction_session_timeout') AS idle,
                current_setting('random_page_cost') AS pages`,
      );
      expect(settings).toEqual({ statement: '150ms', idle: '200ms', pages: '1.1' });
      await expect(limited.dataSource.query('SELECT pg_sleep(1)')).rejects.toMatchObject({
        code: '57014',
      });
      // A transaction left idle is ended by Postgres, which frees its connection.
      const runner = limited.dataSource.createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      await new Promise((resolve) => setTimeout(resolve, 600));
      await expect(runner.query('SELECT 1')).rejects.toThrow();
      await runner.release().catch(() => undefined);
    } finally {
      await limited.close();
    }
  });
});

describe('no race duplicates data', () => {
  it('eight parallel adds of one reference store it once; the others are told it is there', async () => {
    const w = await world(1, 1);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        request(t.app)
          .put(`/orgs/${w.org}/collections/K0/references/`)
          .set('Authorization', w.owner.auth)
          .send({ data: { expressions: [`${w.source}concepts/C0/`] } })
          .timeout(DEADLINE),
      ),
    );
    expect(answers.map((res) => res.status)).toEqual(Array(8).fill(200));
    const results = answers.map(
      (res) => (res.body as Array<{ added: boolean; message: string }>)[0],
    );
    expect(results.filter((r) => r.added)).toHaveLength(1);
    for (const refused of results.filter((r) => !r.added)) {
      expect(refused.message).toMatch(/^Already in the collection/);
    }
    const refs = await request(t.app)
      .get(`/orgs/${w.org}/collections/K0/references/`)
      .set('Authorization', w.owner.auth)
      .expect(200);
    expect(refs.body).toHaveLength(1);
  });

  it('twenty parallel creates of one mapping store one; the others get the sequential 400', async () => {
    const w = await world(2, 0);
    const body = {
      map_type: 'SAME-AS',
      from_concept_url: `${w.source}concepts/C0/`,
      to_concept_url: `${w.source}concepts/C1/`,
    };
    const sequential = () =>
      request(t.app).post(`${w.source}mappings/`).set('Authorization', w.owner.auth).send(body);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => sequential().timeout(DEADLINE)),
    );
    const statuses = answers.map((res) => res.status).sort();
    expect(statuses).toEqual([201, ...Array(19).fill(400)]);
    const again = await sequential();
    expect(again.status).toBe(400);
    for (const refused of answers.filter((res) => res.status === 400)) {
      expect(refused.body.message).toBe(again.body.message);
    }
    const list = await request(t.app)
      .get(`${w.source}mappings/?limit=0`)
      .set('Authorization', w.owner.auth)
      .expect(200);
    expect(list.body).toHaveLength(1);
  });

  it('a reactivation that would duplicate a current mapping is refused', async () => {
    const w = await world(2, 0);
    const body = {
      map_type: 'SAME-AS',
      from_concept_url: `${w.source}concepts/C0/`,
      to_concept_url: `${w.source}concepts/C1/`,
    };
    const post = () =>
      request(t.app).post(`${w.source}mappings/`).set('Authorization', w.owner.auth).send(body);
    const first = await post().expect(201);
    const firstId = (first.body as { id: string }).id;
    await request(t.app)
      .delete(`${w.source}mappings/${firstId}/`)
      .set('Authorization', w.owner.auth)
      .expect(204);
    await post().expect(201); // the retired one no longer counts
    const reactivated = await request(t.app)
      .put(`${w.source}mappings/${firstId}/reactivate/`)
      .set('Authorization', w.owner.auth);
    expect(reactivated.status).toBe(400);
    expect(reactivated.body.message).toMatch(/already maps these ends/);
    const still = await request(t.app)
      .get(`${w.source}mappings/${firstId}/`)
      .set('Authorization', w.owner.auth);
    expect([still.body.retired, still.body.versions]).toEqual([true, 2]);
  });

  it('ten parallel version creates with the default previous_version make one chain', async () => {
    const w = await world(1, 0);
    const ids = Array.from({ length: 10 }, (_, i) => `v${i}`);
    const answers = await Promise.all(
      ids.map((id) =>
        request(t.app)
          .post(`${w.source}versions/`)
          .set('Authorization', w.owner.auth)
          .send({ id, description: id })
          .timeout(DEADLINE),
      ),
    );
    expect(answers.map((res) => res.status)).toEqual(Array(10).fill(201));
    const previous = new Map(
      answers.map((res) => {
        const body = res.body as { id: string; previous_version: string | null };
        return [body.id, body.previous_version];
      }),
    );
    // One first version, every other based on a distinct one: a single line, no fork.
    const firsts = [...previous.values()].filter((p) => p === null);
    expect(firsts).toHaveLength(1);
    const bases = [...previous.values()].filter((p): p is string => p !== null);
    expect(new Set(bases).size).toBe(9);
    let length = 1;
    let at = ids.find((id) => !bases.includes(id))!; // the newest: nothing is based on it
    while (previous.get(at) !== null) {
      at = previous.get(at)!;
      length += 1;
    }
    expect(length).toBe(10);
  });

  it('the default previous_version is the version inserted last, whatever its transaction start time', async () => {
    const w = await world(1, 0);
    for (const id of ['v1', 'v2']) {
      await createVersion(t, w.source, w.owner, id);
    }
    // What two creates racing for the source's lock leave behind: the one that waited began its
    // transaction (created_at) before the one that went first, but was inserted after it.
    await t.dataSource.query(
      `UPDATE repository_versions v SET created_at = v.created_at - interval '1 minute'
       FROM repositories r JOIN organizations o ON o.id = r.owner_org_id
       WHERE v.repository_id = r.id AND o.mnemonic = $1 AND r.mnemonic = 'S'
         AND v.mnemonic = 'v2'`,
      [w.org],
    );
    const v3 = await request(t.app)
      .post(`${w.source}versions/`)
      .set('Authorization', w.owner.auth)
      .send({ id: 'v3' })
      .expect(201);
    expect(v3.body.previous_version).toBe('v2');
  });

  it('parallel writes of different extras of one resource all land (orgs, users, sources, mappings, concepts)', async () => {
    const w = await world(2, 0);
    const mapping = await request(t.app)
      .post(`${w.source}mappings/`)
      .set('Authorization', w.owner.auth)
      .send({
        map_type: 'SAME-AS',
        from_concept_url: `${w.source}concepts/C0/`,
        to_concept_url: `${w.source}concepts/C1/`,
      })
      .expect(201);
    const bases = [
      `/orgs/${w.org}/`,
      `/user/`,
      w.source,
      `${w.source}mappings/${(mapping.body as { id: string }).id}/`,
      `${w.source}concepts/C0/`,
    ];
    const names = Array.from({ length: 8 }, (_, i) => `k${i}`);
    for (const base of bases) {
      const answers = await Promise.all(
        names.map((name, i) =>
          request(t.app)
            .put(`${base}extras/${name}/`)
            .set('Authorization', w.owner.auth)
            .send({ [name]: i })
            .timeout(DEADLINE),
        ),
      );
      expect(answers.map((res) => [res.status, res.body as unknown])).toEqual(
        names.map((name, i) => [200, { [name]: i }]),
      );
      const extras = await request(t.app)
        .get(`${base}extras/`)
        .set('Authorization', w.owner.auth)
        .expect(200);
      expect(extras.body).toEqual(Object.fromEntries(names.map((name, i) => [name, i])));
      // Parallel removals of different attributes keep the rest.
      await Promise.all(
        names
          .slice(0, 4)
          .map((name) =>
            request(t.app)
              .delete(`${base}extras/${name}/`)
              .set('Authorization', w.owner.auth)
              .timeout(DEADLINE)
              .expect(204),
          ),
      );
      const left = await request(t.app)
        .get(`${base}extras/`)
        .set('Authorization', w.owner.auth)
        .expect(200);
      expect(Object.keys(left.body as object).sort()).toEqual(names.slice(4));
    }
  });

  it('parallel edits of different fields of one org, user, source and version all land', async () => {
    const w = await world(0, 0);
    await createVersion(t, w.source, w.owner, 'v1');
    // [path, fields sent, the field each is read back as where the detail names it otherwise]
    const cases: Array<[string, Record<string, string>, Record<string, string>?]> = [
      [
        `/orgs/${w.org}/`,
        { name: 'New name', company: 'New company', website: 'https://x.org', location: 'Kigali' },
      ],
      [
        `/user/`,
        { name: 'New name', company: 'New company', location: 'Kigali', website: 'https://x.org' },
      ],
      [
        w.source,
        {
          full_name: 'Full',
          description: 'Described',
          website: 'https://x.org',
          custom_validation_schema: 'None',
        },
      ],
      [
        `${w.source}v1/`,
        { description: 'Described', external_id: 'E1' },
        { external_id: 'version_external_id' },
      ],
    ];
    for (const [path, fields, readAs = {}] of cases) {
      const answers = await Promise.all(
        Object.entries(fields).map(([field, value]) =>
          request(t.app)
            .put(path)
            .set('Authorization', w.owner.auth)
            .send({ [field]: value })
            .timeout(DEADLINE),
        ),
      );
      expect(answers.map((res) => res.status)).toEqual(Object.keys(fields).map(() => 200));
      const read = await request(t.app).get(path).set('Authorization', w.owner.auth).expect(200);
      const body = read.body as Record<string, unknown>;
      for (const [field, value] of Object.entries(fields)) {
        expect([path, field, body[readAs[field] ?? field]]).toEqual([path, field, value]);
      }
    }
  });

  it('parallel creates of one expansion mnemonic make one; the others get the sequential 409', async () => {
    const w = await world(1, 1);
    const post = () =>
      request(t.app)
        .post(`/orgs/${w.org}/collections/K0/HEAD/expansions/`)
        .set('Authorization', w.owner.auth)
        .send({ mnemonic: uniqueId('e'), parameters: {} });
    const mnemonic = uniqueId('same');
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        request(t.app)
          .post(`/orgs/${w.org}/collections/K0/HEAD/expansions/`)
          .set('Authorization', w.owner.auth)
          .send({ mnemonic, parameters: {} })
          .timeout(DEADLINE),
      ),
    );
    expect(answers.map((res) => res.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    // Exactly one expansion under that mnemonic exists.
    const listed = await request(t.app)
      .get(`/orgs/${w.org}/collections/K0/HEAD/expansions/`)
      .query({ limit: 0 })
      .set('Authorization', w.owner.auth)
      .expect(200);
    const named = (listed.body as Array<{ mnemonic: string }>).filter(
      (e) => e.mnemonic === mnemonic,
    );
    expect(named).toHaveLength(1);
    await post().expect(201);
  });
});
