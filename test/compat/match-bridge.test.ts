import request from 'supertest';
import {
  approveForMatching,
  createTestApp,
  createUser,
  uniqueId,
  type TestApp,
  type TestUser,
} from '../factories';
import {
  createConcept,
  createMapping,
  createSource,
  createVersion,
  retire,
  type TestSource,
} from '../factories/content';
import { gql } from '../graphql/gql';

/**
 * Bridge matching (spec operations §4.5, `ocl-ciel-bridge`): rows matched against the bridging
 * reference source, answered with the concepts of the source `filter.target_repo` names that the
 * matched concepts' mappings reach. A small bridge mapped to two target sources.
 */

let t: TestApp;
let matcher: TestUser;
let bridge: TestSource;
let icd: TestSource;
let sct: TestSource;
let local: TestSource;
let hidden: TestSource;

interface Result {
  id: string;
  url: string;
  display_name: string;
  source: string;
  owner: string;
  names?: Array<{ name: string }>;
  search_meta: {
    algorithm: string;
    match_type: string;
    search_score: number;
    search_highlight: Record<string, string[]>;
    bridge?: { url: string; id: string; display_name: string; map_type: string };
  };
}
interface Row {
  row: Record<string, unknown>;
  results: Result[];
  filter: Record<string, unknown>;
}

const BRIDGE_ORG = uniqueId('bridge');

async function concepts(source: TestSource, list: Array<[string, string, string?]>): Promise<void> {
  for (const [id, name, cls] of list) {
    await createConcept(t, source.url, source.owner, {
      id,
      concept_class: cls ?? 'Diagnosis',
      names: [{ name, locale: 'en', locale_preferred: true }],
    });
  }
}

async function map(from: TestSource, code: string, mapType: string, to: string, toCode: string) {
  await createMapping(t, from.url, from.owner, {
    map_type: mapType,
    from_concept_url: `${from.url}concepts/${code}/`,
    to_source_url: to,
    to_concept_code: toCode,
  });
}

beforeAll(async () => {
  t = await createTestApp({ MATCH_BRIDGE_SOURCE: `/orgs/${BRIDGE_ORG}/sources/BRIDGE/` });
  const owner = await createUser(t);
  bridge = await createSource(t, { id: 'BRIDGE' }, { owner, orgFields: { id: BRIDGE_ORG } });
  icd = await createSource(t, { id: 'ICD10' });
  sct = await createSource(t, { id: 'SCT' });
  local = await createSource(t, { id: 'LOCAL' });
  hidden = await createSource(t, { id: 'HIDDEN', public_access: 'None' });
  await concepts(bridge, [
    ['B1', 'Malaria'],
    ['B2', 'Acute bronchitis'],
    ['B3', 'Hemoglobin serum level', 'Test'],
    ['B4', 'Plasmodium falciparum malaria'],
    ['B5', 'Chronic bronchitis'],
  ]);
  await concepts(icd, [
    ['B54', 'Unspecified malaria'],
    ['B50', 'Plasmodium falciparum malaria'],
    ['J21', 'Acute bronchiolitis'],
  ]);
  await createVersion(t, icd.url, icd.owner, 'v1', { released: true });
  await concepts(icd, [['J20.9', 'Acute bronchitis, unspecified']]);
  await retire(t, icd.url, icd.owner, 'concepts', 'J21');
  await concepts(sct, [
    ['61462000', 'Malaria'],
    ['10509002', 'Acute bronchitis'],
    ['104142005', 'Hemoglobin measurement'],
  ]);
  await concepts(hidden, [['H1', 'Malaria (hidden)']]);
  await concepts(local, [
    ['L1', 'Malaria'],
    ['L2', 'Malaria screening'],
  ]);
  await map(bridge, 'B1', 'SAME-AS', icd.url, 'B54');
  await map(bridge, 'B1', 'BROADER-THAN', icd.url, 'B50');
  await map(bridge, 'B1', 'SAME-AS', icd.url, 'B54.9'); // a code the target lacks
  await map(bridge, 'B1', 'SAME-AS', sct.url, '61462000');
  await map(bridge, 'B1', 'SAME-AS', hidden.url, 'H1');
  await map(bridge, 'B4', 'SAME-AS', icd.url, 'B50');
  await map(bridge, 'B4', 'NARROWER-THAN', bridge.url, 'B1');
  await map(bridge, 'B2', 'SAME-AS', icd.url, 'J20.9');
  await map(bridge, 'B2', 'SAME-AS', icd.url, 'J21');
  await map(bridge, 'B2', 'SAME-AS', sct.url, '10509002');
  await map(bridge, 'B3', 'SAME-AS', sct.url, '104142005');
  await map(local, 'L1', 'SAME-AS', icd.url, 'B54');
  matcher = await createUser(t);
  for (const user of [matcher, hidden.owner]) await approveForMatching(t, user);
}, 120_000);
afterAll(async () => t.close());

async function match(
  body: Record<string, unknown>,
  query: Record<string, string | number | boolean> = {},
  by = matcher.auth,
  status = 200,
): Promise<Row[]> {
  const res = await request(t.app)
    .post('/concepts/$match/')
    .query(query)
    .set('Authorization', by)
    .send(body);
  if (res.status !== status) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Row[];
}

const through = (targetRepo: string, extra: Record<string, string> = {}) => ({
  target_repo_url: bridge.url,
  filter: { target_repo: targetRepo, ...extra },
});
const ids = (row: Row): string[] => row.results.map((r) => r.id);

describe('$match through the bridge (ocl-ciel-bridge)', () => {
  it("answers the other source's concepts the matched bridge concepts map to", async () => {
    const [row] = await match(
      { ...through(`${icd.url}HEAD/`), rows: [{ name: 'Malaria' }] },
      { limit: 5 },
    );
    // B54 through B1's SAME-AS; B50 through B1 too (its best match), though B4 also reaches it;
    // B54.9 is not a concept of the target: nothing to answer.
    expect(ids(row)).toEqual(['B54', 'B50']);
    expect(row.results[0]).toMatchObject({
      id: 'B54',
      url: `${icd.url}concepts/B54/`,
      display_name: 'Unspecified malaria',
      source: 'ICD10',
      owner: icd.org,
      search_meta: {
        algorithm: 'ocl-ciel-bridge',
        match_type: 'very_high',
        search_highlight: { name: ['Malaria'] },
        bridge: {
          url: `${bridge.url}concepts/B1/`,
          id: 'B1',
          display_name: 'Malaria',
          map_type: 'SAME-AS',
        },
      },
    });
    expect(row.results[1].search_meta.bridge).toMatchObject({ id: 'B1', map_type: 'BROADER-THAN' });
    expect(row.results[1].search_meta.search_score).toBe(row.results[0].search_meta.search_score);
    expect(row.filter).toEqual({ target_repo: `${icd.url}HEAD/` });
  });

  it('reaches each target source through its own mappings', async () => {
    const rows = await match({
      ...through(sct.url),
      rows: [{ name: 'Malaria' }, { name: 'Acute bronchitis' }, { name: 'Hemoglobin serum' }],
    });
    expect(rows.map((r) => r.results[0]?.id)).toEqual(['61462000', '10509002', '104142005']);
    expect(rows.every((r) => r.results[0].source === 'SCT')).toBe(true);
  });

  it('matches only bridge concepts that map to the target source', async () => {
    // B3 maps to SCT only; B5 maps nowhere: neither is a candidate for ICD-10.
    const [hemoglobin, chronic] = await match(
      {
        ...through(`${icd.url}HEAD/`),
        rows: [{ name: 'Hemoglobin serum level' }, { name: 'Chronic bronchitis' }],
      },
      { limit: 5 },
    );
    expect(hemoglobin.results).toEqual([]);
    // "Chronic bronchitis" is close to B2 "Acute bronchitis", which maps to ICD-10: J20.9.
    expect(ids(chronic)).toEqual(['J20.9']);
    expect(chronic.results[0].search_meta.bridge?.id).toBe('B2');
  });

  it('pages the concepts reached, per row', async () => {
    const body = { ...through(`${icd.url}HEAD/`), rows: [{ name: 'Malaria' }] };
    const [second] = await match(body, { limit: 1, page: 2 });
    const [offset] = await match(body, { limit: 1, offset: 1 });
    const [past] = await match(body, { limit: 1, page: 3 });
    expect(ids(second)).toEqual(['B50']);
    expect(ids(offset)).toEqual(['B50']);
    expect(past.results).toEqual([]);
  });

  it('follows only the map types target_repo_map_type names', async () => {
    const [row] = await match(
      {
        ...through(`${icd.url}HEAD/`, { target_repo_map_type: 'same-as' }),
        rows: [{ name: 'Malaria' }],
      },
      { limit: 5 },
    );
    // B50 is now reached only through B4's SAME-AS, a weaker match than B1.
    expect(ids(row)).toEqual(['B54', 'B50']);
    expect(row.results.map((r) => r.search_meta.bridge?.id)).toEqual(['B1', 'B4']);
    expect(row.results.every((r) => r.search_meta.bridge?.map_type === 'SAME-AS')).toBe(true);
  });

  it('reads the target source at the version named, else at its latest released version', async () => {
    const rows = [{ name: 'Acute bronchitis' }];
    // v1 predates J20.9 and J21's retirement.
    const [released] = await match({ ...through(icd.url), rows }, { limit: 5 });
    const [v1] = await match({ ...through(`${icd.url}v1/`), rows }, { limit: 5 });
    const [head] = await match({ ...through(`${icd.url}HEAD/`), rows }, { limit: 5 });
    const [withRetired] = await match(
      { ...through(`${icd.url}HEAD/`), rows },
      { limit: 5, includeRetired: true },
    );
    expect(ids(released)).toEqual(['J21']);
    expect(ids(v1)).toEqual(['J21']);
    expect(ids(head)).toEqual(['J20.9']);
    expect(ids(withRetired)).toEqual(['J20.9', 'J21']);
  });

  it('answers verbose and brief results as the target concepts', async () => {
    const body = { ...through(`${icd.url}HEAD/`), rows: [{ name: 'Malaria' }] };
    const [verbose] = await match(body, { verbose: true });
    expect(verbose.results[0].names?.map((n) => n.name)).toEqual(['Unspecified malaria']);
    const [brief] = await match(body, { brief: true });
    expect(Object.keys(brief.results[0]).sort()).toEqual(
      ['display_name', 'id', 'search_meta', 'url'].sort(),
    );
    expect(brief.results[0].search_meta.bridge?.id).toBe('B1');
  });

  it('does not reach a source the caller may not see, and says nothing of it', async () => {
    const body = { ...through(hidden.url), rows: [{ name: 'Malaria' }] };
    const res = await request(t.app)
      .post('/concepts/$match/')
      .set('Authorization', matcher.auth)
      .send(body);
    expect(res.status).toBe(404);
    expect(JSON.stringify(res.body)).toContain(hidden.url);
    const missing = await request(t.app)
      .post('/concepts/$match/')
      .set('Authorization', matcher.auth)
      .send({ ...through(`/orgs/${icd.org}/sources/NOPE/`), rows: [{ name: 'Malaria' }] });
    expect(missing.status).toBe(404);
    const said = (body: unknown, url: string): string => JSON.stringify(body).replace(url, '<url>');
    expect(said(res.body, hidden.url)).toEqual(
      said(missing.body, `/orgs/${icd.org}/sources/NOPE/`),
    );
    // The owner of the hidden source may.
    const [own] = await match(body, {}, hidden.owner.auth);
    expect(ids(own)).toEqual(['H1']);
  });

  it('refuses a malformed mapping filter with a 400 naming it', async () => {
    for (const [filter, field] of [
      [{ target_repo: 'ICD-10' }, 'filter.target_repo'],
      [{ target_repo: 7 }, 'filter.target_repo'],
      [{ target_repo: icd.url, target_repo_map_type: '' }, 'filter.target_repo_map_type'],
    ] as const) {
      const res = await request(t.app)
        .post('/concepts/$match/')
        .set('Authorization', matcher.auth)
        .send({ target_repo_url: bridge.url, filter, rows: [{ name: 'Malaria' }] });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain(field);
    }
  });

  it('answers the same through GraphQL matchConcepts', async () => {
    const res = await gql(
      t,
      matcher.auth,
      `query($url: String, $rows: [JSONObject!]!, $filter: JSONObject) {
        matchConcepts(targetRepoUrl: $url, rows: $rows, filter: $filter, limit: 5) { results }
      }`,
      { url: bridge.url, rows: [{ name: 'Malaria' }], filter: { target_repo: `${icd.url}HEAD/` } },
    );
    expect(res.errors).toBeUndefined();
    const results = (res.data as { matchConcepts: Array<{ results: Result[] }> }).matchConcepts[0]
      .results;
    expect(results.map((r) => [r.id, r.search_meta.algorithm])).toEqual([
      ['B54', 'ocl-ciel-bridge'],
      ['B50', 'ocl-ciel-bridge'],
    ]);
  });
});

describe('filter.target_repo elsewhere: concepts mapped to that source (ocl-search)', () => {
  it('keeps only the target concepts with a mapping to the source named', async () => {
    const body = { target_repo_url: local.url, rows: [{ name: 'Malaria' }] };
    const [all] = await match(body, { limit: 5 });
    const [mapped] = await match({ ...body, filter: { target_repo: icd.url } }, { limit: 5 });
    expect(ids(all).sort()).toEqual(['L1', 'L2']);
    expect(ids(mapped)).toEqual(['L1']);
    expect(mapped.results[0].search_meta.algorithm).toBe('ocl-search');
    expect(mapped.results[0].search_meta.bridge).toBeUndefined();
  });

  it('on the bridge itself naming the bridge, filters rather than bridges', async () => {
    const [row] = await match(
      { ...through(bridge.url), rows: [{ name: 'Malaria' }] },
      { limit: 5 },
    );
    // Only B4 maps within the bridge.
    expect(ids(row)).toEqual(['B4']);
    expect(row.results[0].search_meta.algorithm).toBe('ocl-search');
  });

  it('is no bridge where the service names no bridging source', async () => {
    const plain = await createTestApp({ MATCH_BRIDGE_SOURCE: '' });
    try {
      const res = await request(plain.app)
        .post('/concepts/$match/')
        .query({ limit: 5 })
        .set('Authorization', matcher.auth)
        .send({ ...through(`${icd.url}HEAD/`), rows: [{ name: 'Malaria' }] });
      expect(res.status).toBe(200);
      const [row] = res.body as Row[];
      expect(ids(row).sort()).toEqual(['B1', 'B4']);
      expect(row.results.every((r) => r.search_meta.algorithm === 'ocl-search')).toBe(true);
    } finally {
      await plain.close();
    }
  });
});
