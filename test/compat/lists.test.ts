import request from 'supertest';
import { createOrg, createTestApp, createUser, uniqueId, type TestApp } from '../factories';
import { binary, unzip } from '../factories/zip';

let t: TestApp;
let tag: string;
let ids: string[];

beforeAll(async () => {
  t = await createTestApp();
  const owner = await createUser(t);
  tag = uniqueId('pg').replace('-', '');
  ids = [];
  for (let i = 0; i < 25; i += 1) {
    const id = `${tag}-${String(i).padStart(2, '0')}`;
    await createOrg(t, owner, {
      id,
      company: i % 3 === 0 ? 'Three' : i % 2 === 0 ? 'Two' : 'Other',
      location: 'Here',
    });
    ids.push(id);
  }
});
afterAll(async () => t.close());

const list = (query: Record<string, string | number>) =>
  request(t.app)
    .get('/orgs/')
    .query({ q: tag, sortAsc: 'id', ...query });

describe('paging (spec core §2.1, §8)', () => {
  it('defaults to 10 per page, with the paging headers', async () => {
    const res = await list({});
    expect(res.body).toHaveLength(10);
    expect(res.headers).toMatchObject({
      num_found: '25',
      num_returned: '10',
      offset: '0',
      pages: '3',
      page_number: '1',
    });
    expect(res.headers.previous).toBeUndefined();
    const next = new URL(res.headers.next);
    expect(next.protocol).toBe('http:');
    expect(next.searchParams.get('page')).toBe('2');
    expect(next.searchParams.get('q')).toBe(tag);
  });

  it('follows next to the following page', async () => {
    const first = await list({ limit: 10 });
    const next = new URL(first.headers.next);
    const second = await request(t.app).get(`${next.pathname}${next.search}`);
    expect(second.body.map((o: { id: string }) => o.id)).toEqual(ids.slice(10, 20));
    expect(second.headers).toMatchObject({ offset: '10', page_number: '2' });
    expect(new URL(second.headers.previous).searchParams.get('page')).toBe('1');
  });

  it('the last page is short and has no next', async () => {
    const res = await list({ page: 3 });
    expect(res.body.map((o: { id: string }) => o.id)).toEqual(ids.slice(20));
    expect(res.headers.num_returned).toBe('5');
    expect(res.headers.next).toBeUndefined();
  });

  it('a page past the end is empty, not an error', async () => {
    const res = await list({ page: 9 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
    expect(res.headers.num_found).toBe('25');
  });

  it('limit=0 returns everything on one page', async () => {
    const res = await list({ limit: 0 });
    expect(res.body).toHaveLength(25);
    expect(res.headers).toMatchObject({ pages: '1', num_returned: '25' });
    expect(res.headers.next).toBeUndefined();
  });

  it.each([
    ['limit', '-1'],
    ['limit', 'ten'],
    ['page', '0'],
    ['page', '1.5'],
  ])('answers 400 for %s=%s', async (name, value) => {
    const res = await list({ [name]: value });
    expect(res.status).toBe(400);
    expect(res.body.errors[name]).toBeDefined();
  });

  it('HEAD answers the headers only', async () => {
    const res = await request(t.app).head('/orgs/').query({ q: tag });
    expect(res.status).toBe(200);
    expect(res.headers.num_found).toBe('25');
  });
});

describe('sorting and filters', () => {
  it('sortDesc reverses sortAsc', async () => {
    const res = await list({ sortAsc: '', sortDesc: 'id', limit: 3 });
    expect(res.body.map((o: { id: string }) => o.id)).toEqual(ids.slice(-3).reverse());
  });

  it('answers 400 when both sortAsc and sortDesc are sent', async () => {
    expect((await list({ sortDesc: 'name' })).status).toBe(400);
  });

  it('updatedSince keeps what changed at or after the time, in both documented formats', async () => {
    const owner = await createUser(t);
    const org = await createOrg(t, owner, { id: `${tag}-late` });
    const created = new Date(
      (await request(t.app).get(`/orgs/${org.id}/`)).body.updated_on as string,
    );
    const iso = await list({ updatedSince: created.toISOString(), limit: 0 });
    expect(iso.body.map((o: { id: string }) => o.id)).toEqual([org.id]);
    const spaced = created.toISOString().slice(0, 19).replace('T', ' ');
    const plain = await list({ updatedSince: spaced, limit: 0 });
    expect(plain.body.map((o: { id: string }) => o.id)).toContain(org.id);
    const future = await list({ updatedSince: '2999-01-01T00:00:00Z' });
    expect(future.body).toEqual([]);
    await request(t.app).delete(`/orgs/${org.id}/`).set('Authorization', t.admin);
  });

  it('answers 400 for an updatedSince that is not a date', async () => {
    const res = await list({ updatedSince: 'yesterday' });
    expect(res.status).toBe(400);
    expect(res.body.errors.updatedSince).toBeDefined();
  });
});

describe('facets (includeFacets header)', () => {
  it('answers {facets: {fields}, results} with [value, count] pairs over the whole filtered set', async () => {
    const res = await list({ limit: 5 }).set('includeFacets', 'true');
    expect(res.body.results).toHaveLength(5);
    expect(res.body.facets.fields.company).toEqual([
      ['Three', 9],
      ['Other', 8],
      ['Two', 8],
    ]);
    expect(res.body.facets.fields.location).toEqual([['Here', 25]]);
  });

  it('facetsOnly=true answers only the facets', async () => {
    const res = await list({ facetsOnly: 'true' });
    expect(Object.keys(res.body)).toEqual(['facets']);
    expect(res.body.facets.fields.location).toEqual([['Here', 25]]);
  });

  it('without the header the body is the plain array', async () => {
    expect(Array.isArray((await list({})).body)).toBe(true);
  });
});

describe('compress: true', () => {
  it('answers the same JSON zipped as export.json', async () => {
    const plain = await list({ limit: 0 });
    const zipped = await list({ limit: 0 }).set('compress', 'true').buffer(true).parse(binary);
    expect(zipped.headers['content-type']).toBe('application/zip');
    expect(zipped.headers.num_found).toBe('25');
    const entries = await unzip(zipped.body as Buffer);
    expect(Object.keys(entries)).toEqual(['export.json']);
    expect(JSON.parse(entries['export.json'])).toEqual(plain.body);
  });
});
