import request from 'supertest';
import { collectionWorld, type CollectionWorld } from '../factories/collection-world';
import { createTestApp, createUser, uniqueId, type TestApp } from '../factories';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const SURROGATE = '\ud800';
const LONE_LOW = '\udc00';

/** A 400 that names the field, with the refused character, in the message and `errors`. */
function expectRefused(res: request.Response, field: string, codePoint: string): void {
  expect(res.status).toBe(400);
  const message = `'${field}' contains an invalid character (U+${codePoint}).`;
  expect(res.body.message).toBe(message);
  expect(res.body.errors).toEqual({ [field]: [message] });
}

let world: CollectionWorld;
beforeAll(async () => {
  world = await collectionWorld(t, {
    mappings: (w) => [['M1', 'SAME-AS', `${w.source}concepts/A/`, `${w.source}concepts/B/`]],
  });
});
const auth = (): { Authorization: string } => ({ Authorization: world.owner.auth });

const concept = (fields: Record<string, unknown>) =>
  request(t.app)
    .post(`${world.source}concepts/`)
    .set(auth())
    .send({
      id: uniqueId('c'),
      concept_class: 'Diagnosis',
      names: [{ name: 'Good', locale: 'en', locale_preferred: true }],
      ...fields,
    });

describe('a lone surrogate anywhere in a body is a 400 naming the field (was 500)', () => {
  it('in a concept name', async () => {
    const id = uniqueId('c');
    const res = await concept({ id, names: [{ name: `Mal${SURROGATE}aria`, locale: 'en' }] });
    expectRefused(res, 'names[0].name', 'D800');
    expect((await request(t.app).get(`${world.source}concepts/${id}/`).set(auth())).status).toBe(
      404,
    );
  });

  it('in a concept description', async () => {
    const res = await concept({
      descriptions: [
        { description: 'ok', locale: 'en' },
        { description: LONE_LOW, locale: 'en' },
      ],
    });
    expectRefused(res, 'descriptions[1].description', 'DC00');
  });

  it('in an extras value and in an extras key', async () => {
    expectRefused(await concept({ extras: { k: `v${SURROGATE}` } }), 'extras.k', 'D800');
    const key = await concept({ extras: { [`k${SURROGATE}`]: 'v' } });
    expect(key.status).toBe(400);
    expect(key.body.errors).toEqual({
      extras: ["'extras' holds a key that contains an invalid character (U+D800)."],
    });
  });

  it('in a concept sub-resource and a concept edit', async () => {
    expectRefused(
      await request(t.app)
        .post(`${world.source}concepts/A/names/`)
        .set(auth())
        .send({ name: SURROGATE, locale: 'en' }),
      'name',
      'D800',
    );
    expectRefused(
      await request(t.app)
        .put(`${world.source}concepts/A/extras/k/`)
        .set(auth())
        .send({ k: SURROGATE }),
      'k',
      'D800',
    );
  });

  it('in org, user, source and collection fields', async () => {
    const user = await createUser(t);
    const orgId = uniqueId('org');
    expectRefused(
      await request(t.app)
        .post('/orgs/')
        .set('Authorization', user.auth)
        .send({ id: orgId, name: `Org ${SURROGATE}` }),
      'name',
      'D800',
    );
    expect((await request(t.app).get(`/orgs/${orgId}/`)).status).toBe(404);
    expectRefused(
      await request(t.app)
        .post('/user/')
        .set('Authorization', user.auth)
        .send({ company: `Acme ${SURROGATE}` }),
      'company',
      'D800',
    );
    expectRefused(
      await request(t.app)
        .post(`/orgs/${world.org}/sources/`)
        .set(auth())
        .send({ id: uniqueId('s'), name: 'S', description: SURROGATE }),
      'description',
      'D800',
    );
    expectRefused(
      await request(t.app)
        .post(`/orgs/${world.org}/collections/`)
        .set(auth())
        .send({ id: uniqueId('c'), name: 'C', extras: { a: [1, { b: SURROGATE }] } }),
      'extras.a[1].b',
      'D800',
    );
    expectRefused(
      await request(t.app)
        .post(`/orgs/${world.org}/collections/C/versions/`)
        .set(auth())
        .send({ id: 'v9', description: SURROGATE }),
      'description',
      'D800',
    );
  });

  it('in mapping fields', async () => {
    const body = {
      map_type: 'SAME-AS',
      from_concept_url: `${world.source}concepts/A/`,
      to_source_url: '/orgs/x/sources/ICD/',
      to_concept_code: `A01${SURROGATE}`,
    };
    expectRefused(
      await request(t.app).post(`${world.source}mappings/`).set(auth()).send(body),
      'to_concept_code',
      'D800',
    );
    expectRefused(
      await request(t.app)
        .post(`${world.source}mappings/M1/`)
        .set(auth())
        .send({ extras: { note: SURROGATE } }),
      'extras.note',
      'D800',
    );
  });

  it('in a reference expression and a reference filter value', async () => {
    expectRefused(
      await request(t.app)
        .put(`${world.collection}references/`)
        .set(auth())
        .send({ data: { expressions: [`${world.source}concepts/${SURROGATE}/`] } }),
      'data.expressions[0]',
      'D800',
    );
    expectRefused(
      await request(t.app)
        .put(`${world.collection}references/`)
        .set(auth())
        .send({
          data: {
            url: world.source,
            filter: [{ property: 'concept_class', op: '=', value: SURROGATE }],
          },
        }),
      'data.filter[0].value',
      'D800',
    );
    const refs = await request(t.app).get(`${world.collection}references/`).set(auth());
    expect(refs.body).toEqual([]);
  });

  it('in an expansion parameter', async () => {
    expectRefused(
      await request(t.app)
        .post(`${world.collection}HEAD/expansions/`)
        .set(auth())
        .send({ mnemonic: 'e1', parameters: { filter: SURROGATE } }),
      'parameters.filter',
      'D800',
    );
  });

  it('in reference resolution and URL registry input', async () => {
    expectRefused(
      await request(t.app)
        .post('/$resolveReference/')
        .send([{ url: `http://x.org/${SURROGATE}` }]),
      '[0].url',
      'D800',
    );
    expectRefused(
      await request(t.app)
        .post(`/orgs/${world.org}/url-registry/`)
        .set(auth())
        .send({ url: `http://x.org/${SURROGATE}`, namespace: `/orgs/${world.org}/` }),
      'url',
      'D800',
    );
  });
});

describe('control characters are refused (TAB, LF and CR are text)', () => {
  it.each([
    ['U+0007 (BEL)', '\u0007', '0007'],
    ['U+001B (ESC)', '\u001b', '001B'],
    ['U+007F (DEL)', '\u007f', '007F'],
    ['U+0085 (a C1 control)', '\u0085', '0085'],
  ])('a concept name with %s', async (_what, char, code) => {
    const res = await concept({ names: [{ name: `Mal${char}aria`, locale: 'en' }] });
    expectRefused(res, 'names[0].name', code);
  });

  it('a concept_class with a control character', async () => {
    expectRefused(await concept({ concept_class: 'Diag\u0001nosis' }), 'concept_class', '0001');
  });

  it('TAB, LF, CR and characters outside the BMP are kept, and stored as echoed', async () => {
    const name = 'Malaria\tvivax\r\nline two 😷 ✓';
    const id = uniqueId('c');
    const res = await concept({
      id,
      names: [{ name, locale: 'en', locale_preferred: true }],
      extras: { 'note 😷': name },
    });
    expect(res.status).toBe(201);
    expect(res.body.names[0].name).toBe(name);
    const read = await request(t.app).get(`${world.source}concepts/${id}/`).set(auth());
    expect(read.body.names[0].name).toBe(name);
    expect(read.body.extras).toEqual({ 'note 😷': name });
  });
});

describe('what a text column stores is what the 201 echoed', () => {
  it('an org name with a lone surrogate is refused, not stored as U+FFFD', async () => {
    const user = await createUser(t);
    const id = uniqueId('org');
    const res = await request(t.app)
      .post('/orgs/')
      .set('Authorization', user.auth)
      .send({ id, name: 'Org', company: `A${LONE_LOW}` });
    expectRefused(res, 'company', 'DC00');
    expect((await request(t.app).get(`/orgs/${id}/`)).status).toBe(404);
  });

  it('a body that is not UTF-8 is refused, not stored with U+FFFD in place of its bytes', async () => {
    const user = await createUser(t);
    const id = uniqueId('org');
    const json = Buffer.concat([
      Buffer.from(`{"id": "${id}", "name": "Caf`),
      Buffer.from([0xe9]),
      Buffer.from('"}'),
    ]);
    const res = await request(t.app)
      .post('/orgs/')
      .set('Authorization', user.auth)
      .set('Content-Type', 'application/json')
      .serialize((raw: unknown) => raw as string)
      .send(json);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/not valid UTF-8/);
    expect((await request(t.app).get(`/orgs/${id}/`)).status).toBe(404);
  });
});

describe('the query string, the path and headers', () => {
  it('a control character in a filter value names the parameter', async () => {
    expectRefused(await request(t.app).get('/orgs/?company=Ac%01me'), 'company', '0001');
    expectRefused(
      await request(t.app).get(`${world.source}concepts/?extras.k=%7F`).set(auth()),
      'extras.k',
      '007F',
    );
  });

  it('an encoded lone surrogate (not UTF-8) in a query value names the parameter', async () => {
    const res = await request(t.app).get('/concepts/?q=a%ED%A0%80b');
    expect(res.status).toBe(400);
    expect(res.body.errors.q).toEqual(["'q' is not valid UTF-8."]);
  });

  it('a control character in a path segment', async () => {
    const res = await request(t.app).get(`/orgs/${world.org}/sources/S%07/concepts/`).set(auth());
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('The path contains an invalid character (U+0007).');
    expect(Object.keys(res.body.errors)).toEqual(['path']);
  });

  it('a C1 control in a header read as text', async () => {
    const res = await request(t.app).get('/orgs/').set('includeFacets', 'tr\u0085ue');
    expectRefused(res, 'includeFacets', '0085');
  });
});

describe('error messages repeat at most a short part of what was sent', () => {
  it('a REST error about a long value is cut to 1,000 characters', async () => {
    const long = 'x'.repeat(5_000);
    const res = await request(t.app).get(`/orgs/${long}/`);
    expect(res.status).toBe(404);
    expect(res.body.message.length).toBeLessThanOrEqual(1_001);
    expect(res.body.message.endsWith('…')).toBe(true);
  });
});
