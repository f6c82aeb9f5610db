import request from 'supertest';
import { loadConfig } from '../../src/config';
import { createTestApp, createUser, type TestApp } from '../factories';
import { createRepo, createSource } from '../factories/content';

/** OCL's lookup sources (issue 15 part 3): the pick lists of the concept and mapping forms. */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  // Two processes starting at once: the org is made once.
  const made = await Promise.all([t.services.lookups.ensure(), t.services.lookups.ensure()]);
  expect(made.filter(Boolean).length).toBeLessThanOrEqual(1);
}, 120_000);
afterAll(async () => t.close());

const lookup = async (source: string): Promise<string[]> => {
  const res = await request(t.app).get(`/orgs/OCL/sources/${source}/concepts/lookup/`);
  expect(res.status).toBe(200);
  return (res.body as Array<{ id: string }>).map((c) => c.id);
};

describe('the OCL org', () => {
  it('is public, administered by ocladmin, with the six lookup sources', async () => {
    const org = await request(t.app).get('/orgs/OCL/');
    expect(org.status).toBe(200);
    expect(org.body).toMatchObject({ id: 'OCL', public_access: 'View' });
    const sources = await request(t.app).get('/orgs/OCL/sources/?limit=0');
    expect(sources.body.map((s: { id: string }) => s.id).sort()).toEqual(
      ['Classes', 'Datatypes', 'DescriptionTypes', 'Locales', 'MapTypes', 'NameTypes'].sort(),
    );
    const members = await request(t.app).get('/orgs/OCL/members/');
    expect(members.body.map((m: { username: string }) => m.username)).toEqual(['ocladmin']);
  });

  it('is made once: a later start changes nothing', async () => {
    expect(await t.services.lookups.ensure()).toBe(false);
    const classes = await request(t.app).get('/orgs/OCL/sources/Classes/');
    expect(classes.body.active_concepts).toBe(30);
  });
});

describe('{source}/concepts/lookup/', () => {
  it("answers OCL's values for each pick list of the concept form", async () => {
    expect(await lookup('Classes')).toEqual(expect.arrayContaining(['Diagnosis', 'Drug', 'Test']));
    expect(await lookup('Datatypes')).toEqual(expect.arrayContaining(['Coded', 'Numeric', 'None']));
    expect(await lookup('NameTypes')).toEqual(
      expect.arrayContaining(['Fully-Specified', 'Short', 'Index-Term']),
    );
    expect(await lookup('DescriptionTypes')).toEqual(
      expect.arrayContaining(['None', 'Definition']),
    );
    expect(await lookup('MapTypes')).toEqual(expect.arrayContaining(['SAME-AS', 'NARROWER-THAN']));
  });

  it('answers uuid, id and url, and with verbose the display name', async () => {
    const res = await request(t.app).get('/orgs/OCL/sources/Classes/concepts/lookup/?verbose=true');
    const diagnosis = res.body.find((c: { id: string }) => c.id === 'Diagnosis');
    expect(diagnosis).toMatchObject({
      id: 'Diagnosis',
      url: '/orgs/OCL/sources/Classes/concepts/Diagnosis/',
      display_name: 'Diagnosis',
    });
    expect(typeof diagnosis.uuid).toBe('string');
  });

  it('keeps a private source to those who may see it, and answers 404 for an unknown one', async () => {
    const owner = await createUser(t);
    const outsider = await createUser(t);
    const repo = await createRepo(t, `/users/${owner.username}`, owner, {
      public_access: 'None',
    });
    const path = `${repo.url}concepts/lookup/`;
    expect((await request(t.app).get(path)).status).toBe(401);
    expect((await request(t.app).get(path).set('Authorization', outsider.auth)).status).toBe(403);
    expect((await request(t.app).get(path).set('Authorization', owner.auth)).status).toBe(200);
    expect((await request(t.app).get('/orgs/OCL/sources/Nothing/concepts/lookup/')).status).toBe(
      404,
    );
  });
});

describe('/locales/', () => {
  it('answers the ISO 639-1 locales, each id its two-letter code (as OCL’s iso639-1 source)', async () => {
    const res = await request(t.app).get('/locales/?verbose=true');
    expect(res.status).toBe(200);
    expect(res.body.find((l: { locale: string }) => l.locale === 'en')).toMatchObject({
      id: 'en',
      display_name: 'English',
      url: '/orgs/ISO/sources/iso639-1/concepts/en/',
    });
    const items = res.body as Array<{ id: string; locale: string }>;
    expect(items.every((l) => /^[a-z]{2}$/.test(l.locale) && l.id === l.locale)).toBe(true);
    // Every two-letter code of OCL's Locales source, once (184, as OCL's iso_639_1_locales.json).
    expect(new Set(items.map((l) => l.id)).size).toBe(184);
    expect(items).toHaveLength(184);
    const org = await request(t.app).get('/orgs/ISO/');
    expect(org.body).toMatchObject({ id: 'ISO', public_access: 'View' });
  });

  it('the concept form’s choice (the ids it offers) is the code an `en` source declares', async () => {
    // oclweb3's LocaleForm offers `locales.map(locale => locale.id)`; English is the one named so.
    const res = await request(t.app).get('/locales/?verbose=true');
    const chosen = (res.body as Array<{ id: string; display_name: string }>).find(
      (l) => l.display_name === 'English',
    )!.id;
    const src = await createSource(t, { default_locale: 'en', supported_locales: 'en' });
    const created = await request(t.app)
      .post(`${src.url}concepts/`)
      .set('Authorization', src.owner.auth)
      .send({
        id: 'C1',
        concept_class: 'Misc',
        datatype: 'N/A',
        names: [
          {
            name: 'Form name',
            locale: chosen,
            locale_preferred: true,
            name_type: 'Fully Specified',
          },
        ],
      });
    expect(created.status).toBe(201);
    expect(created.body.names.map((n: { locale: string }) => n.locale)).toEqual(['en']);
    // Named in the source's default locale, it is the concept's display name there.
    expect(created.body.display_locale).toBe('en');
    const source = await request(t.app).get(src.url);
    expect(source.body).toMatchObject({ default_locale: 'en', supported_locales: 'en' });
  });
});

describe('LOOKUP_SOURCES', () => {
  it('is on by default; off turns the org off; anything else stops the start', () => {
    expect(loadConfig({}).lookupSources).toBe(true);
    expect(loadConfig({ LOOKUP_SOURCES: 'off' }).lookupSources).toBe(false);
    expect(() => loadConfig({ LOOKUP_SOURCES: 'maybe' })).toThrow(/LOOKUP_SOURCES/);
  });
});
