import request from 'supertest';
import {
  createConcept,
  createMapping,
  createMappingBetween,
  createRepo,
  createVersion,
  type TestRepo,
} from './content';
import { addMember, createOrg, createUser, uniqueId, type TestApp, type TestUser } from './index';

/**
 * Strings only the private source's content holds: a response that shows any of them to someone
 * who may not read that source leaks it. The code of S1 is not among them: a public mapping to S1
 * stores it (its `to_concept_code`), and a public source's mapping is public.
 */
export const SECRET = {
  name: 'Quokkaphobic Nebulitis',
  description: 'secret-description-marker',
  extra: 'secret-extra-marker',
  extraKey: 'quokkaextrakey',
  /** The private source's name. */
  sourceName: 'Clandestine Quokka Register',
  conceptClass: 'Quokkaclass',
  mapExtra: 'secret-map-extra-marker',
  /** The id of the private source's mapping. */
  mapping: 'SECRETMAPPING',
} as const;

/** The code of the private concept S1. */
export const S1 = 'S1SECRET';
/** The code of the public concept P1. */
export const P1 = 'P1OPEN';

/**
 * Org A (public) of alice, carol a signed-in non-member. A/secret (private) holds S1, named and
 * described by `SECRET`, and mapping `SECRET.mapping` S1 → P1; A/open (public) holds P1 and its
 * mapping OPENMAP P1 → S1; the public collection A/pubcol references S1, the secret mapping and
 * P1, with a released version v1 (and its expansion). A private source of alice's own,
 * alice/mine, holds S1 too.
 */
export interface PrivacyWorld {
  alice: TestUser;
  carol: TestUser;
  org: string;
  /** `/orgs/A/sources/secret/` */
  secret: TestRepo;
  /** `/orgs/A/sources/open/` */
  open: TestRepo;
  /** `/orgs/A/collections/pubcol/` */
  pubcol: TestRepo;
  /** `/users/alice/sources/mine/` */
  mine: TestRepo;
}

async function secretConcept(t: TestApp, source: string, by: TestUser): Promise<void> {
  await createConcept(t, source, by, {
    id: S1,
    concept_class: SECRET.conceptClass,
    names: [{ name: SECRET.name, locale: 'en', locale_preferred: true }],
    descriptions: [{ description: SECRET.description, locale: 'en' }],
    extras: { [SECRET.extraKey]: SECRET.extra },
  });
}

export async function privacyWorld(t: TestApp): Promise<PrivacyWorld> {
  const alice = await createUser(t);
  const carol = await createUser(t);
  const org = (await createOrg(t, alice, { id: uniqueId('A') })).id;
  const secret = await createRepo(t, `/orgs/${org}`, alice, {
    id: 'secret',
    name: SECRET.sourceName,
    public_access: 'None',
    canonical_url: `http://example.org/CodeSystem/${org}-secret`,
  });
  const open = await createRepo(t, `/orgs/${org}`, alice, {
    id: 'open',
    canonical_url: `http://example.org/CodeSystem/${org}-open`,
  });
  await secretConcept(t, secret.url, alice);
  await createConcept(t, open.url, alice, {
    id: P1,
    names: [{ name: 'Openly Known Cough', locale: 'en', locale_preferred: true }],
  });
  const s1 = `${secret.url}concepts/${S1}/`;
  const p1 = `${open.url}concepts/${P1}/`;
  await createMapping(t, secret.url, alice, {
    id: SECRET.mapping,
    map_type: 'SAME-AS',
    from_concept_url: s1,
    to_concept_url: p1,
    extras: { marker: SECRET.mapExtra },
  });
  await createMappingBetween(t, open.url, alice, ['OPENMAP', 'NARROWER-THAN', p1, s1]);
  const pubcol = await createRepo(
    t,
    `/orgs/${org}`,
    alice,
    {
      id: 'pubcol',
      canonical_url: `http://example.org/ValueSet/${org}-pubcol`,
    },
    'collections',
  );
  const res = await request(t.app)
    .put(`${pubcol.url}references/`)
    .set('Authorization', alice.auth)
    .send({ data: { expressions: [s1, `${secret.url}mappings/${SECRET.mapping}/`, p1] } });
  if (res.status !== 200) throw new Error(`references: ${res.status} ${JSON.stringify(res.body)}`);
  await createVersion(t, pubcol.url, alice, 'v1', { released: true });
  await createVersion(t, open.url, alice, 'v1', { released: true });
  const mine = await createRepo(t, '/user', alice, { id: 'mine', public_access: 'None' });
  await secretConcept(t, mine.url, alice);
  // carol joins nothing; a member of another org, to tell membership of some org from A's.
  const elsewhere = await createUser(t);
  await addMember(t, (await createOrg(t, elsewhere)).id, elsewhere, carol);
  return { alice, carol, org, secret, open, pubcol, mine };
}

/** The secret strings `text` holds (a response body as text); none for a clean answer. */
export function secretsIn(text: string): string[] {
  return Object.values(SECRET).filter((s) => text.includes(s));
}
