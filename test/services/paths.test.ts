import request from 'supertest';
import type { RepoRef } from '../../src/services';
import type { ServiceContext } from '../../src/services/shared/context';
import {
  addMember,
  contextOf,
  createOrg,
  createTestApp,
  createUser,
  tasksSettled,
  uniqueId,
  type TestApp,
  type TestUser,
} from '../factories';

/**
 * The one path resolver (PathResolver, through RepositoryService.get/resolveOwner): owner,
 * repository and version found in one statement, then the one set of access rules.
 */
let t: TestApp;
let owner: TestUser;
let member: TestUser;
let outsider: TestUser;
let publicOrg: string;
let privateOrg: string;

beforeAll(async () => {
  t = await createTestApp();
  [owner, member, outsider] = await Promise.all([createUser(t), createUser(t), createUser(t)]);
  publicOrg = (await createOrg(t, owner)).id;
  privateOrg = (await createOrg(t, owner, { public_access: 'None' })).id;
  await addMember(t, privateOrg, owner, member);
  await addMember(t, publicOrg, owner, member);
});
afterAll(async () => t.close());

const as = (caller: TestUser | 'anonymous' | 'admin') => contextOf(t, caller);

async function repo(
  ownerPath: string,
  by: TestUser,
  fields: Record<string, unknown> = {},
  kind: 'sources' | 'collections' = 'sources',
): Promise<string> {
  const id = uniqueId('repo');
  const res = await request(t.app)
    .post(`${ownerPath}${kind}/`)
    .set('Authorization', by.auth)
    .send({ id, name: id, ...fields });
  expect(res.status).toBe(201);
  return id;
}

async function version(url: string, id: string, released: boolean): Promise<void> {
  const res = await request(t.app)
    .post(`${url}versions/`)
    .set('Authorization', owner.auth)
    .send({ id, released });
  expect(res.status).toBe(201);
}

function orgSource(org: string, id: string, version?: string): RepoRef {
  return { owner: { type: 'org', id: org }, kind: 'source', id, version };
}

/** The error code a resolution fails with, or 'ok'. */
async function outcome(ctx: ServiceContext, ref: RepoRef): Promise<string> {
  try {
    await t.services.repositories.get(ctx, ref);
    return 'ok';
  } catch (error) {
    return (error as { code: string }).code;
  }
}

describe('versions', () => {
  let id: string;
  beforeAll(async () => {
    id = await repo(`/orgs/${publicOrg}/`, owner);
    const url = `/orgs/${publicOrg}/sources/${id}/`;
    await version(url, 'v1', true);
    await version(url, 'v2', true);
    await version(url, 'v3', false);
  });

  it('reads HEAD without a version, and a version by id', async () => {
    const ctx = await as('anonymous');
    expect(
      (await t.services.repositories.get(ctx, orgSource(publicOrg, id))).version.mnemonic,
    ).toBe('HEAD');
    const v1 = await t.services.repositories.get(ctx, orgSource(publicOrg, id, 'v1'));
    expect(v1.version.mnemonic).toBe('v1');
    expect(v1.owner).toMatchObject({ type: 'Organization', id: publicOrg });
  });

  it('reads latest as the newest released version, not a newer unreleased one', async () => {
    const view = await t.services.repositories.get(
      await as('anonymous'),
      orgSource(publicOrg, id, 'latest'),
    );
    expect(view.version.mnemonic).toBe('v2');
  });

  it('answers the latest released version or null (no released version) by the same rules', async () => {
    const anonymous = await as('anonymous');
    const latest = await t.services.repositories.latestReleased(
      anonymous,
      orgSource(publicOrg, id),
    );
    expect(latest?.version.mnemonic).toBe('v2');
    const bare = await repo(`/orgs/${publicOrg}/`, owner);
    expect(
      await t.services.repositories.latestReleased(anonymous, orgSource(publicOrg, bare)),
    ).toBeNull();
    // The repository's own rules come first: a private one is refused, a missing one not found.
    const hidden = await repo(`/orgs/${publicOrg}/`, owner, { public_access: 'None' });
    await expect(
      t.services.repositories.latestReleased(anonymous, orgSource(publicOrg, hidden)),
    ).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(
      t.services.repositories.latestReleased(anonymous, orgSource(publicOrg, uniqueId('none'))),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('answers 404 naming what is missing', async () => {
    const ctx = await as('anonymous');
    await expect(t.services.repositories.get(ctx, orgSource(publicOrg, id, 'v9'))).rejects.toThrow(
      `Version 'v9' of '${id}'`,
    );
    const bare = await repo(`/orgs/${publicOrg}/`, owner);
    await expect(
      t.services.repositories.get(ctx, orgSource(publicOrg, bare, 'latest')),
    ).rejects.toThrow(`A released version of '${bare}'`);
    await expect(
      t.services.repositories.get(ctx, orgSource(publicOrg, uniqueId('none'))),
    ).rejects.toThrow('Source');
    await expect(
      t.services.repositories.get(ctx, orgSource(uniqueId('no-org'), id)),
    ).rejects.toThrow('Organization');
  });

  it('does not read a source through a collection path, nor the other way round', async () => {
    const ctx = await as('anonymous');
    expect(await outcome(ctx, { ...orgSource(publicOrg, id), kind: 'collection' })).toBe(
      'NOT_FOUND',
    );
  });
});

describe('visibility and roles', () => {
  it('hides a private org and its public sources from anonymous callers and outsiders', async () => {
    const id = await repo(`/orgs/${privateOrg}/`, owner);
    const ref = orgSource(privateOrg, id);
    expect(await outcome(await as('anonymous'), ref)).toBe('UNAUTHENTICATED');
    expect(await outcome(await as(outsider), ref)).toBe('FORBIDDEN');
    expect(await outcome(await as(member), ref)).toBe('ok');
    expect(await outcome(await as('admin'), ref)).toBe('ok');
  });

  it('shows a private source of a public org to its members only', async () => {
    const id = await repo(`/orgs/${publicOrg}/`, owner, { public_access: 'None' });
    const ref = orgSource(publicOrg, id);
    expect(await outcome(await as('anonymous'), ref)).toBe('UNAUTHENTICATED');
    expect(await outcome(await as(outsider), ref)).toBe('FORBIDDEN');
    expect(await outcome(await as(member), ref)).toBe('ok');
    expect(await outcome(await as('admin'), ref)).toBe('ok');
  });

  it('shows a private user source to that user only, also as /user/', async () => {
    const id = await repo(`/users/${owner.username}/`, owner, { public_access: 'None' });
    const ref: RepoRef = { owner: { type: 'user', username: owner.username }, kind: 'source', id };
    expect(await outcome(await as(owner), ref)).toBe('ok');
    expect(await outcome(await as(member), ref)).toBe('FORBIDDEN');
    expect(await outcome(await as('anonymous'), ref)).toBe('UNAUTHENTICATED');
    const self: RepoRef = { owner: { type: 'self' }, kind: 'source', id };
    const mine = await t.services.repositories.get(await as(owner), self);
    expect(mine.owner).toMatchObject({ type: 'User', id: owner.username });
    expect(await outcome(await as(member), self)).toBe('NOT_FOUND');
    expect(await outcome(await as('anonymous'), self)).toBe('UNAUTHENTICATED');
  });

  it('hides a deleted (deactivated) collection from everyone but superusers', async () => {
    const id = await repo(`/orgs/${publicOrg}/`, owner, {}, 'collections');
    const url = `/orgs/${publicOrg}/collections/${id}/`;
    expect((await request(t.app).delete(url).set('Authorization', owner.auth)).status).toBe(204);
    const ref: RepoRef = { owner: { type: 'org', id: publicOrg }, kind: 'collection', id };
    expect(await outcome(await as(owner), ref)).toBe('NOT_FOUND');
    expect(await outcome(await as('admin'), ref)).toBe('ok');
  });

  it('sees a membership change on the very next resolution', async () => {
    const joiner = await createUser(t);
    const id = await repo(`/orgs/${privateOrg}/`, owner);
    const ref = orgSource(privateOrg, id);
    expect(await outcome(await as(joiner), ref)).toBe('FORBIDDEN');
    await addMember(t, privateOrg, owner, joiner);
    expect(await outcome(await as(joiner), ref)).toBe('ok');
    const removed = await request(t.app)
      .delete(`/orgs/${privateOrg}/members/${joiner.username}/`)
      .set('Authorization', owner.auth);
    expect(removed.status).toBe(204);
    expect(await outcome(await as(joiner), ref)).toBe('FORBIDDEN');
  });

  it('resolves owners with the same rules', async () => {
    const resolve = async (ctx: ServiceContext, id: string): Promise<string> =>
      t.services.repositories.resolveOwner(ctx, { type: 'org', id }).then(
        (found) => found.id,
        (error: { code: string }) => error.code,
      );
    expect(await resolve(await as('anonymous'), privateOrg)).toBe('UNAUTHENTICATED');
    expect(await resolve(await as(outsider), privateOrg)).toBe('FORBIDDEN');
    expect(await resolve(await as(member), privateOrg)).toBe(privateOrg);
    expect(await resolve(await as('anonymous'), uniqueId('none'))).toBe('NOT_FOUND');
  });
});

describe('cost', () => {
  it('resolves owner, repository, version and the caller’s role in one statement', async () => {
    const id = await repo(`/orgs/${privateOrg}/`, owner, { public_access: 'None' });
    await version(`/orgs/${privateOrg}/sources/${id}/`, 'v1', true);
    await tasksSettled(t, owner.username); // the version's export, run in the background
    for (const ref of [orgSource(privateOrg, id), orgSource(privateOrg, id, 'latest')]) {
      const ctx = await as(member);
      t.queries.count = 0;
      await t.services.repositories.get(ctx, ref);
      expect(t.queries.count).toBe(1);
    }
  });
});
