import { once } from 'node:events';
import type http from 'node:http';
import request from 'supertest';
import { contextOf, createTestApp, uniqueId, type TestApp } from '../factories';
import { createConcept, createSource, createVersion, type TestSource } from '../factories/content';

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
