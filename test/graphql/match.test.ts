import request from 'supertest';
import {
  approveForMatching,
  createTestApp,
  createUser,
  type TestApp,
  type TestUser,
} from '../factories';
import { createConcept, createSource, type TestSource } from '../factories/content';
import { errorCode, gql } from './gql';

let t: TestApp;
let source: TestSource;
let approved: TestUser;

const MATCH = `query($url: String, $rows: [JSONObject!]!, $limit: Int, $bestMatch: Boolean,
    $semantic: Boolean, $mapConfig: [JSONObject!], $filter: JSONObject) {
  matchConcepts(targetRepoUrl: $url, rows: $rows, limit: $limit, bestMatch: $bestMatch,
      semantic: $semantic, mapConfig: $mapConfig, filter: $filter) {
    row results mapConfig filter
  }
}`;

beforeAll(async () => {
  t = await createTestApp();
  source = await createSource(t, { id: 'DICT' });
  for (const [id, name] of [
    ['1', 'Acute bronchitis'],
    ['2', 'Chronic bronchitis'],
    ['3', 'Malaria'],
  ]) {
    await createConcept(t, source.url, source.owner, {
      id,
      concept_class: 'Diagnosis',
      names: [{ name, locale: 'en', locale_preferred: true }],
    });
  }
  approved = await createUser(t);
  await approveForMatching(t, approved);
}, 60_000);
afterAll(async () => t.close());

describe('matchConcepts', () => {
  it('answers what POST /concepts/$match/ answers', async () => {
    const variables = {
      url: source.url,
      rows: [{ name: 'Acute bronchits' }, { name: 'malria', local: 'M-1' }],
      limit: 2,
      mapConfig: [
        { type: 'mapping-code', input_column: 'icd', target_source_url: '/orgs/W/sources/I/' },
      ],
      filter: { conceptClass: 'Diagnosis' },
    };
    const res = await gql(t, approved.auth, MATCH, variables);
    expect(res.errors).toBeUndefined();
    const rest = await request(t.app)
      .post('/concepts/$match/')
      .query({ limit: 2 })
      .set('Authorization', approved.auth)
      .send({
        target_repo_url: source.url,
        rows: variables.rows,
        map_config: variables.mapConfig,
        filter: variables.filter,
      });
    expect(rest.status).toBe(200);
    const rows = res.data.matchConcepts as Array<Record<string, unknown>>;
    expect(rows.map((r) => ({ ...r, map_config: r.mapConfig, mapConfig: undefined }))).toEqual(
      (rest.body as Array<Record<string, unknown>>).map((r) => ({ ...r, mapConfig: undefined })),
    );
    expect(rows[0].row).toEqual({ name: 'Acute bronchits', __index: 0 });
    const results = rows[0].results as Array<{ id: string; search_meta: { match_type: string } }>;
    expect(results[0].id).toBe('1');
    expect(results[0].search_meta.match_type).toBe('very_high');
    expect((rows[1].results as Array<{ id: string }>)[0].id).toBe('3');
  });

  it('needs a signed-in, approved user', async () => {
    const rows = [{ name: 'Malaria' }];
    expect(errorCode(await gql(t, undefined, MATCH, { url: source.url, rows }))).toBe(
      'UNAUTHENTICATED',
    );
    const waiting = await createUser(t);
    expect(errorCode(await gql(t, waiting.auth, MATCH, { url: source.url, rows }))).toBe(
      'FORBIDDEN',
    );
    const APPROVE = `mutation($u: String) {
      updateUser(username: $u, input: { matchApproved: true }) { user { username matchApproved } }
    }`;
    expect(errorCode(await gql(t, waiting.auth, APPROVE, { u: waiting.username }))).toBe(
      'FORBIDDEN',
    );
    const approval = await gql(t, t.admin, APPROVE, { u: waiting.username });
    expect(approval.data.updateUser.user).toEqual({
      username: waiting.username,
      matchApproved: true,
    });
    const res = await gql(t, waiting.auth, MATCH, { url: source.url, rows });
    expect(res.errors).toBeUndefined();
    expect(res.data.matchConcepts[0].results[0].id).toBe('3');
  });

  it('refuses bad input with a client error', async () => {
    const empty = await gql(t, approved.auth, MATCH, { url: source.url, rows: [] });
    expect(errorCode(empty)).toBe('INVALID');
    const semantic = await gql(t, approved.auth, MATCH, {
      url: source.url,
      rows: [{ name: 'x' }],
      semantic: true,
    });
    expect(errorCode(semantic)).toBe('INVALID');
    expect(semantic.errors?.[0].message).toMatch(/Semantic matching is not enabled/);
    const missing = await gql(t, approved.auth, MATCH, {
      url: '/orgs/none/sources/none/',
      rows: [{ name: 'x' }],
    });
    expect(errorCode(missing)).toBe('NOT_FOUND');
  });
});
