import { once } from 'node:events';
import type http from 'node:http';
import request from 'supertest';
import { contextOf, createTestApp, uniqueId, type TestApp } from '../factories';
import {
  createConcept,
  createRepo,
  createSource,
  createVersion,
  type TestSource,
} from '../factories/content';

/**
 * The terminology operations over stored code systems, which the service keeps rendered between
 * requests: what a request answers is what is stored when it is made, whatever was read before.
 */
let t: TestApp;
/** One server for every request, so that they share one base URL (a part of what is cached). */
let server: http.Server;
beforeAll(async () => {
  t = await createTestApp();
  server = t.app.listen(0, '127.0.0.1');
  await once(server, 'listening');
});
afterAll(async () => {
  server.close();
  await t.close();
});

async function storedSource(): Promise<{ source: TestSource; system: string }> {
  const system = `http://example.org/stored/${uniqueId('cs')}`;
  const source = await createSource(t, { canonical_url: system });
  await createConcept(t, source.url, source.owner, {
    id: 'C',
    names: [{ name: 'First', locale: 'en', locale_preferred: true }],
  });
  return { source, system };
}

async function lookup(system: string, code = 'C', version?: string): Promise<string | number> {
  const query = new URLSearchParams({ system, code, ...(version ? { version } : {}) });
  const res = await request(server).get(`/fhir/CodeSystem/$lookup?${query.toString()}`);
  if (res.status !== 200) return res.status;
  const parameters = (res.body as { parameter: Array<{ name: string; valueString?: string }> })
    .parameter;
  return parameters.find((p) => p.name === 'display')?.valueString ?? '(no display)';
}

function rename(source: TestSource, name: string) {
  return request(server)
    .patch(`${source.url}concepts/C/`)
    .set('Authorization', source.owner.auth)
    .send({ names: [{ name, locale: 'en', locale_preferred: true }] })
    .expect(200);
}

describe('operations over stored code systems', () => {
  it('see an edit of HEAD (no version made) at the very next request', async () => {
    const { source, system } = await storedSource();
    expect(await lookup(system)).toBe('First');
    await rename(source, 'Second');
    expect(await lookup(system)).toBe('Second');
    await createConcept(t, source.url, source.owner, { id: 'D' });
    expect(await lookup(system, 'D')).toBe('Name D');
  });

  it('read the latest version as it was made, and a new version at once', async () => {
    const { source, system } = await storedSource();
    await createVersion(t, source.url, source.owner, 'v1', { released: true });
    expect(await lookup(system)).toBe('First');
    // HEAD moves on; the operations read the latest version, which keeps what it froze.
    await rename(source, 'Second');
    expect(await lookup(system)).toBe('First');
    await createVersion(t, source.url, source.owner, 'v2', { released: true });
    expect(await lookup(system)).toBe('Second');
    expect(await lookup(system, 'C', 'v1')).toBe('First');
  });

  it('see a version edit and a source made private at the very next request', async () => {
    const { source, system } = await storedSource();
    await createVersion(t, source.url, source.owner, 'v1', { released: true });
    // What the operations read of it (the cached path), as an anonymous caller.
    const status = async () => {
      const ctx = await contextOf(t, 'anonymous');
      const [read] = await t.services.fhirResources.stored(ctx).codeSystems(system);
      return read.status;
    };
    expect(await status()).toBe('active');
    await request(server)
      .patch(`${source.url}v1/`)
      .set('Authorization', source.owner.auth)
      .send({ retired: true })
      .expect(200);
    expect(await status()).toBe('retired');

    await request(server)
      .patch(source.url)
      .set('Authorization', source.owner.auth)
      .send({ public_access: 'None' })
      .expect(200);
    expect(await lookup(system)).toBe(404);
  });

  it('answer parallel first requests for a code system alike', async () => {
    const { system } = await storedSource();
    const answers = await Promise.all(Array.from({ length: 8 }, () => lookup(system)));
    expect(answers).toEqual(Array.from({ length: 8 }, () => 'First'));
  });
});

describe('operations over stored value sets', () => {
  /** A released collection of two concepts of a public source and one of a private one. */
  async function storedValueSet() {
    const { source, system } = await storedSource();
    await createConcept(t, source.url, source.owner, { id: 'D' });
    await createConcept(t, source.url, source.owner, { id: 'E' });
    const hidden = await createRepo(t, `/orgs/${source.org}`, source.owner, {
      id: 'Hidden',
      public_access: 'None',
      canonical_url: `${system}-hidden`,
    });
    await createConcept(t, hidden.url, source.owner, { id: 'H' });
    const url = `http://example.org/stored/${uniqueId('vs')}`;
    const collection = await createRepo(
      t,
      `/orgs/${source.org}`,
      source.owner,
      { id: 'VS', canonical_url: url },
      'collections',
    );
    await request(server)
      .put(`${collection.url}references/`)
      .set('Authorization', source.owner.auth)
      .send({
        data: {
          expressions: [
            `${source.url}concepts/C/`,
            `${source.url}concepts/D/`,
            `${hidden.url}concepts/H/`,
          ],
        },
      })
      .expect(200);
    await createVersion(t, collection.url, source.owner, 'v1', { released: true });
    return { source, system, url };
  }

  const expand = async (url: string, auth?: string) => {
    const req = request(server).get(`/fhir/ValueSet/$expand?url=${encodeURIComponent(url)}`);
    const res = await (auth ? req.set('Authorization', auth) : req);
    expect(res.status).toBe(200);
    const { expansion } = res.body as {
      expansion: { total: number; contains: Array<{ code: string; display?: string }> };
    };
    return { total: expansion.total, contains: expansion.contains.map((c) => [c.code, c.display]) };
  };

  it('expand to the members the caller may see, with their displays', async () => {
    const { source, url } = await storedValueSet();
    expect(await expand(url)).toEqual({
      total: 2,
      contains: [
        ['C', 'First'],
        ['D', 'Name D'],
      ],
    });
    expect(await expand(url, source.owner.auth)).toEqual({
      total: 3,
      contains: [
        ['C', 'First'],
        ['D', 'Name D'],
        ['H', 'Name H'],
      ],
    });
  });

  it('see a member renamed, and a reference added, at the very next request', async () => {
    const { source } = await storedSource();
    await createConcept(t, source.url, source.owner, { id: 'D' });
    const url = `http://example.org/stored/${uniqueId('vs')}`;
    const collection = await createRepo(
      t,
      `/orgs/${source.org}`,
      source.owner,
      { id: 'Live', canonical_url: url },
      'collections',
    );
    const add = (code: string) =>
      request(server)
        .put(`${collection.url}references/`)
        .set('Authorization', source.owner.auth)
        .send({ data: { expressions: [`${source.url}concepts/${code}/`] } })
        .expect(200);
    await add('C');
    expect(await expand(url)).toEqual({ total: 1, contains: [['C', 'First']] });
    await rename(source, 'Renamed');
    expect(await expand(url)).toEqual({ total: 1, contains: [['C', 'Renamed']] });
    await add('D');
    expect(await expand(url)).toEqual({
      total: 2,
      contains: [
        ['C', 'Renamed'],
        ['D', 'Name D'],
      ],
    });
  });

  it('show the current content of members that follow their source, at the very next request', async () => {
    const { source, url } = await storedValueSet();
    expect((await expand(url)).contains[0]).toEqual(['C', 'First']);
    await rename(source, 'Renamed');
    expect((await expand(url)).contains[0]).toEqual(['C', 'Renamed']);
  });

  it('show a private member to a caller as soon as its source is made public', async () => {
    const { source, url } = await storedValueSet();
    expect((await expand(url)).total).toBe(2);
    await request(server)
      .put(`/orgs/${source.org}/sources/Hidden/`)
      .set('Authorization', source.owner.auth)
      .send({ public_access: 'View' })
      .expect(200);
    expect((await expand(url)).total).toBe(3);
  });

  it('validate membership: a member is in, a concept of the source that is not a member is out', async () => {
    const { system, url } = await storedValueSet();
    const validate = async (code: string) => {
      const query = new URLSearchParams({ url, system, code });
      const res = await request(server).get(`/fhir/ValueSet/$validate-code?${query.toString()}`);
      const parameters = (
        res.body as { parameter: Array<{ name: string; valueBoolean?: boolean }> }
      ).parameter;
      return parameters.find((p) => p.name === 'result')?.valueBoolean;
    };
    expect(await validate('C')).toBe(true);
    expect(await validate('E')).toBe(false);
  });
});
