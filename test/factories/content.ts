import request from 'supertest';
import { createOrg, createUser, uniqueId, type TestApp, type TestUser } from './index';

/**
 * Content factories: repositories, versions, concepts and mappings made over HTTP as a client
 * would. Each throws with the status and body when the API refuses, so a broken set-up fails at
 * the line that made it rather than in a later assertion.
 */

/** Who sends a request: a test user or an `Authorization` header value (such as `t.admin`). */
export type Caller = TestUser | string;

const authorization = (by: Caller) => (typeof by === 'string' ? by : by.auth);

/** POSTs `body` to `path` as `by`; answers the created body, or throws unless the answer is 201. */
async function created(
  t: TestApp,
  what: string,
  path: string,
  by: Caller,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const res = await request(t.app).post(path).set('Authorization', authorization(by)).send(body);
  if (res.status !== 201)
    throw new Error(`${what} create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Record<string, unknown>;
}

/** A repository made through the API: its id, its URL and the detail the API answered. */
export interface TestRepo {
  id: string;
  /** `{owner}/sources/:id/` or `{owner}/collections/:id/` */
  url: string;
  body: Record<string, unknown>;
}

/**
 * A source (or collection) of `owner`, a path prefix (`/orgs/x`, `/users/u`, `/user`), created by
 * `by`. The id is `fields.id` (or `fields.short_code`), else a unique one; the name is
 * `Source <id>` (`Collection <id>`) unless the fields name it.
 */
export async function createRepo(
  t: TestApp,
  owner: string,
  by: Caller,
  fields: Record<string, unknown> = {},
  kind: 'sources' | 'collections' = 'sources',
): Promise<TestRepo> {
  const id =
    (fields.id as string | undefined) ??
    (fields.short_code as string | undefined) ??
    uniqueId(kind === 'sources' ? 'src' : 'col');
  const label = kind === 'sources' ? 'Source' : 'Collection';
  const body = await created(t, label.toLowerCase(), `${owner}/${kind}/`, by, {
    name: `${label} ${id}`,
    ...fields,
    id,
  });
  return { id, url: body.url as string, body };
}

/** A repository made for a test: its URL, its org and the org's administrator. */
export interface TestSource {
  /** `/orgs/:org/sources/:id/` (`/orgs/:org/collections/:id/` for a collection) */
  url: string;
  id: string;
  org: string;
  owner: TestUser;
}

export interface RepoOptions {
  /** The org's administrator; a fresh user when not given. */
  owner?: TestUser;
  /** An org `owner` administers; a fresh org of `owner` when not given. */
  org?: string;
  /** Fields of the fresh org. */
  orgFields?: Record<string, unknown>;
}

async function orgRepo(
  t: TestApp,
  kind: 'sources' | 'collections',
  id: string,
  fields: Record<string, unknown>,
  options: RepoOptions,
): Promise<TestSource> {
  const owner = options.owner ?? (await createUser(t));
  const org = options.org ?? (await createOrg(t, owner, options.orgFields)).id;
  const repo = await createRepo(t, `/orgs/${org}`, owner, { name: id, ...fields, id }, kind);
  return { url: repo.url, id, org, owner };
}

/**
 * An org source, id and name `S` unless the fields say otherwise, in a fresh org of a fresh user,
 * or of `options.owner` in `options.org`.
 */
export async function createSource(
  t: TestApp,
  fields: Record<string, unknown> = {},
  options: RepoOptions = {},
): Promise<TestSource> {
  return orgRepo(t, 'sources', (fields.id as string | undefined) ?? 'S', fields, options);
}

/** An org collection, id and name `C` unless the fields say otherwise; as {@link createSource}. */
export async function createCollection(
  t: TestApp,
  fields: Record<string, unknown> = {},
  options: RepoOptions = {},
): Promise<TestSource> {
  return orgRepo(t, 'collections', (fields.id as string | undefined) ?? 'C', fields, options);
}

/**
 * A value set at its collection's HEAD: a collection of `source`'s org and owner with a fresh
 * canonical URL and `expressions` as its references. Answers the value set's URL and the collection.
 */
export async function valueSetAtHead(
  t: TestApp,
  source: TestSource,
  expressions: string[],
): Promise<{ url: string; collection: TestSource }> {
  const url = `http://example.org/vs/${uniqueId('vs')}`;
  const collection = await createCollection(
    t,
    { id: uniqueId('vs'), canonical_url: url },
    { owner: source.owner, org: source.org },
  );
  await request(t.app)
    .put(`${collection.url}references/`)
    .set('Authorization', source.owner.auth)
    .send({ data: { expressions } })
    .expect(200);
  return { url, collection };
}

/** A value set as `valueSetAtHead` makes it, released as v1. Answers the value set's URL. */
export async function releasedValueSet(
  t: TestApp,
  source: TestSource,
  expressions: string[],
): Promise<string> {
  const { url, collection } = await valueSetAtHead(t, source, expressions);
  await createVersion(t, collection.url, source.owner, 'v1', { released: true });
  return url;
}

/** A version `id` of the repository at `repoUrl`; answers the detail the API returned. */
export async function createVersion(
  t: TestApp,
  repoUrl: string,
  by: Caller,
  id: string,
  fields: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  return created(t, 'version', `${repoUrl}versions/`, by, { ...fields, id });
}

/**
 * A concept created in a source by `by` (class `Misc` and one English name, `Name <id>`, unless
 * the fields say otherwise); answers the detail the API returned.
 */
export async function createConcept(
  t: TestApp,
  sourceUrl: string,
  by: Caller,
  fields: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  return created(t, 'concept', `${sourceUrl}concepts/`, by, {
    concept_class: 'Misc',
    names: [{ name: `Name ${String(fields.id)}`, locale: 'en', locale_preferred: true }],
    ...fields,
  });
}

/** Concepts `[id, name, class]` of a source, each with one preferred English name. */
export async function createConcepts(
  t: TestApp,
  sourceUrl: string,
  by: Caller,
  concepts: Array<readonly [string, string, string]>,
): Promise<void> {
  for (const [id, name, cls] of concepts) {
    await createConcept(t, sourceUrl, by, {
      id,
      concept_class: cls,
      names: [{ name, locale: 'en', locale_preferred: true }],
    });
  }
}

/** A mapping created in a source by `by`; answers the detail the API returned. */
export async function createMapping(
  t: TestApp,
  sourceUrl: string,
  by: Caller,
  fields: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  return created(t, 'mapping', `${sourceUrl}mappings/`, by, fields);
}

/** A mapping `id` of `mapType` from one concept URL to another, in a source. */
export async function createMappingBetween(
  t: TestApp,
  sourceUrl: string,
  by: Caller,
  [id, mapType, from, to]: readonly [string, string, string, string],
): Promise<Record<string, unknown>> {
  return createMapping(t, sourceUrl, by, {
    id,
    map_type: mapType,
    from_concept_url: from,
    to_concept_url: to,
  });
}

/**
 * Retires a concept (`resource` `concepts`) or a mapping (`mappings`) of a source through the
 * API: a new, retired version in HEAD; throws unless the answer is 204.
 */
export async function retire(
  t: TestApp,
  sourceUrl: string,
  by: Caller,
  resource: 'concepts' | 'mappings',
  id: string,
): Promise<void> {
  const res = await request(t.app)
    .delete(`${sourceUrl}${resource}/${encodeURIComponent(id)}/`)
    .set('Authorization', authorization(by));
  if (res.status !== 204)
    throw new Error(
      `retire of ${resource} ${id} failed: ${res.status} ${JSON.stringify(res.body)}`,
    );
}
