import request from 'supertest';
import { createOrg, createUser, type TestApp, type TestUser } from './index';

/** A source made for a test: its URL, its org and the org's administrator. */
export interface TestSource {
  /** `/orgs/:org/sources/:id/` */
  url: string;
  id: string;
  org: string;
  owner: TestUser;
}

/**
 * A fresh source (id `S` unless `fields.id` says otherwise) in a fresh org of a fresh user, or
 * of `options.owner` in `options.org`.
 */
export async function createSource(
  t: TestApp,
  fields: Record<string, unknown> = {},
  options: { owner?: TestUser; org?: string; orgFields?: Record<string, unknown> } = {},
): Promise<TestSource> {
  const owner = options.owner ?? (await createUser(t));
  const org = options.org ?? (await createOrg(t, owner, options.orgFields)).id;
  const id = (fields.id as string | undefined) ?? 'S';
  const res = await request(t.app)
    .post(`/orgs/${org}/sources/`)
    .set('Authorization', owner.auth)
    .send({ name: id, ...fields, id });
  if (res.status !== 201)
    throw new Error(`source create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { url: `/orgs/${org}/sources/${encodeURIComponent(id)}/`, id, org, owner };
}

/**
 * A concept created in a source by `user` (class `Misc` and one English name, `Name <id>`,
 * unless the fields say otherwise); answers the detail the API returned.
 */
export async function createConcept(
  t: TestApp,
  sourceUrl: string,
  user: TestUser,
  fields: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const res = await request(t.app)
    .post(`${sourceUrl}concepts/`)
    .set('Authorization', user.auth)
    .send({
      concept_class: 'Misc',
      names: [{ name: `Name ${String(fields.id)}`, locale: 'en', locale_preferred: true }],
      ...fields,
    });
  if (res.status !== 201)
    throw new Error(`concept create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Record<string, unknown>;
}

/** A mapping created in a source by `user`; answers the detail the API returned. */
export async function createMapping(
  t: TestApp,
  sourceUrl: string,
  user: TestUser,
  fields: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const res = await request(t.app)
    .post(`${sourceUrl}mappings/`)
    .set('Authorization', user.auth)
    .send(fields);
  if (res.status !== 201)
    throw new Error(`mapping create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Record<string, unknown>;
}
