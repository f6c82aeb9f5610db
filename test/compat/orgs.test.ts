import request from 'supertest';
import {
  addMember,
  createOrg,
  createTestApp,
  createUser,
  uniqueId,
  type TestApp,
} from '../factories';
import { as } from '../factories/http';
import { orgWithPeople } from '../factories/people';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/** An org of the Ministry of Health, as open as `publicAccess`, with its people. */
const ministryOrg = (publicAccess: 'View' | 'Edit' | 'None' = 'View') =>
  orgWithPeople(t, { public_access: publicAccess, company: 'Ministry of Health' });

describe('POST /orgs/', () => {
  it('creates the org with 201 and Location; the creator becomes its administrator', async () => {
    const owner = await createUser(t);
    const id = uniqueId('org');
    const res = await request(t.app)
      .post('/orgs/')
      .set(as(owner))
      .send({
        id,
        name: 'Health Org',
        company: 'MoH',
        website: 'https://moh.example.org',
        location: 'Kampala',
        extras: { a: 1 },
      });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/orgs/${id}/`);
    expect(res.body).toMatchObject({
      type: 'Organization',
      id,
      name: 'Health Org',
      company: 'MoH',
      website: 'https://moh.example.org',
      location: 'Kampala',
      public_access: 'View',
      extras: { a: 1 },
      url: `/orgs/${id}/`,
      members_url: `/orgs/${id}/members/`,
      sources_url: `/orgs/${id}/sources/`,
      collections_url: `/orgs/${id}/collections/`,
      members: 1,
      public_sources: 0,
      public_collections: 0,
      created_by: owner.username,
    });
    const check = await request(t.app).get(`/orgs/${id}/members/${owner.username}/`).set(as(owner));
    expect(check.status).toBe(204);
    const promote = await request(t.app)
      .put(`/orgs/${id}/members/${(await createUser(t)).username}/`)
      .set(as(owner));
    expect(promote.status).toBe(204);
  });

  it('answers 401 to an anonymous caller', async () => {
    const res = await request(t.app)
      .post('/orgs/')
      .send({ id: uniqueId('org'), name: 'X' });
    expect(res.status).toBe(401);
  });

  it('answers 400 for a duplicate id (any letter case) and for bad fields, creating nothing', async () => {
    const owner = await createUser(t);
    const org = await createOrg(t, owner);
    const dup = await request(t.app)
      .post('/orgs/')
      .set(as(owner))
      .send({ id: org.id.toUpperCase(), name: 'Dup' });
    expect(dup.status).toBe(400);
    expect(dup.body.errors.id[0]).toMatch(/already exists/);
    const badId = uniqueId('org');
    const bad = await request(t.app)
      .post('/orgs/')
      .set(as(owner))
      .send({ id: `${badId}/x`, name: '', public_access: 'Sometimes', extras: 'not an object' });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['extras', 'id', 'name', 'public_access']);
    expect((await request(t.app).get('/orgs/').query({ q: badId })).body).toEqual([]);
  });
});

describe('who may see an org (spec core §5, §7)', () => {
  it('a public org is readable by anyone', async () => {
    const { org } = await ministryOrg();
    const res = await request(t.app).get(`/orgs/${org.id}/`);
    expect(res.status).toBe(200);
    expect(res.body.members).toBe(2);
  });

  it.each([
    ['anonymous', undefined, 401],
    ['an outsider', 'outsider', 403],
    ['a member', 'member', 200],
    ['the administrator', 'admin', 200],
    ['a superuser', 'superuser', 200],
  ] as const)('a private org answers %s with %i', async (_who, role, status) => {
    const people = await ministryOrg('None');
    const caller = role === undefined ? undefined : role === 'superuser' ? t.admin : people[role];
    const res = await request(t.app).get(`/orgs/${people.org.id}/`).set(as(caller));
    expect(res.status).toBe(status);
    const members = await request(t.app).get(`/orgs/${people.org.id}/members/`).set(as(caller));
    expect(members.status).toBe(status);
  });

  it('answers 404 for an org that does not exist, whoever asks', async () => {
    expect((await request(t.app).get(`/orgs/${uniqueId('none')}/`)).status).toBe(404);
    expect(
      (
        await request(t.app)
          .get(`/orgs/${uniqueId('none')}/`)
          .set('Authorization', t.admin)
      ).status,
    ).toBe(404);
  });

  it('lists, counts and facets never show a private org to those outside it', async () => {
    const { org, member, outsider } = await ministryOrg('None');
    const query = { q: org.id };
    for (const caller of [undefined, outsider]) {
      const res = await request(t.app)
        .get('/orgs/')
        .query(query)
        .set(as(caller))
        .set('includeFacets', 'true');
      expect(res.body.results).toEqual([]);
      expect(res.headers.num_found).toBe('0');
      expect(res.body.facets.fields.company).toEqual([]);
      const head = await request(t.app).head('/orgs/').query(query).set(as(caller));
      expect(head.headers.num_found).toBe('0');
    }
    for (const caller of [member, t.admin]) {
      const res = await request(t.app).get('/orgs/').query(query).set(as(caller));
      expect(res.body.map((o: { id: string }) => o.id)).toEqual([org.id]);
    }
  });
});

describe('editing and deleting orgs', () => {
  it('a member may edit (spec core §4.2); only the fields sent change', async () => {
    const { org, member } = await ministryOrg();
    const res = await request(t.app)
      .post(`/orgs/${org.id}/`)
      .set(as(member))
      .send({ location: 'Lusaka' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      location: 'Lusaka',
      company: 'Ministry of Health',
      updated_by: member.username,
    });
    expect((await request(t.app).get(`/orgs/${org.id}/`)).body).toMatchObject({
      location: 'Lusaka',
      company: 'Ministry of Health',
      name: `Org ${org.id}`,
    });
  });

  it('an outsider gets 403 and an anonymous caller 401, and nothing changes', async () => {
    const { org, outsider } = await ministryOrg();
    expect(
      (await request(t.app).post(`/orgs/${org.id}/`).set(as(outsider)).send({ name: 'Taken' }))
        .status,
    ).toBe(403);
    expect((await request(t.app).put(`/orgs/${org.id}/`).send({ name: 'Taken' })).status).toBe(401);
    expect((await request(t.app).get(`/orgs/${org.id}/`)).body.name).toBe(`Org ${org.id}`);
  });

  it('the id never changes', async () => {
    const { org, admin } = await ministryOrg();
    const res = await request(t.app)
      .patch(`/orgs/${org.id}/`)
      .set(as(admin))
      .send({ id: 'renamed' });
    expect(res.status).toBe(400);
    expect(res.body.errors.id).toBeDefined();
  });

  it('making an org private hides it at once from outsiders', async () => {
    const { org, admin, outsider } = await ministryOrg();
    await request(t.app).post(`/orgs/${org.id}/`).set(as(admin)).send({ public_access: 'None' });
    expect((await request(t.app).get(`/orgs/${org.id}/`).set(as(outsider))).status).toBe(403);
  });

  it('DELETE is for superusers: 204, then 404; the org admin gets 403', async () => {
    const { org, admin } = await ministryOrg();
    expect((await request(t.app).delete(`/orgs/${org.id}/`).set(as(admin))).status).toBe(403);
    expect((await request(t.app).delete(`/orgs/${org.id}/`)).status).toBe(401);
    expect(
      (await request(t.app).delete(`/orgs/${org.id}/`).set('Authorization', t.admin)).status,
    ).toBe(204);
    expect((await request(t.app).get(`/orgs/${org.id}/`)).status).toBe(404);
    expect((await request(t.app).get(`/user/orgs/`).set(as(admin))).body).toEqual([]);
  });
});

describe('members (spec core §4.2)', () => {
  it('lists members of a public org to anyone, as user summaries', async () => {
    const { org, admin, member } = await ministryOrg();
    const res = await request(t.app).get(`/orgs/${org.id}/members/`);
    expect(res.status).toBe(200);
    expect(res.body.map((u: { username: string }) => u.username).sort()).toEqual(
      [admin.username, member.username].sort(),
    );
    expect(res.body[0]).toEqual({
      username: expect.any(String),
      name: expect.any(String),
      url: expect.stringMatching(/^\/users\//),
    });
  });

  it('membership check: 204 for a member, 404 for a non-member, and only members may ask', async () => {
    const { org, admin, member, outsider } = await ministryOrg();
    expect(
      (await request(t.app).get(`/orgs/${org.id}/members/${member.username}/`).set(as(admin)))
        .status,
    ).toBe(204);
    expect(
      (await request(t.app).get(`/orgs/${org.id}/members/${outsider.username}/`).set(as(member)))
        .status,
    ).toBe(404);
    expect(
      (await request(t.app).get(`/orgs/${org.id}/members/${member.username}/`).set(as(outsider)))
        .status,
    ).toBe(403);
    expect((await request(t.app).get(`/orgs/${org.id}/members/${member.username}/`)).status).toBe(
      401,
    );
  });

  it('adding: 403 by a plain member or an outsider (spec core §4.2: an administrative member), 204 by an administrator, 404 for an unknown user', async () => {
    const { org, admin, member, outsider } = await ministryOrg();
    for (const role of [undefined, 'admin']) {
      const res = await request(t.app)
        .put(`/orgs/${org.id}/members/${outsider.username}/`)
        .set(as(member))
        .send(role ? { role } : {});
      expect(res.status).toBe(403);
    }
    expect(
      (await request(t.app).put(`/orgs/${org.id}/members/${outsider.username}/`).set(as(outsider)))
        .status,
    ).toBe(403);
    expect((await request(t.app).get(`/orgs/${org.id}/`)).body.members).toBe(2);
    expect(
      (
        await request(t.app)
          .put(`/orgs/${org.id}/members/${uniqueId('ghost')}/`)
          .set(as(admin))
      ).status,
    ).toBe(404);
    expect(
      (await request(t.app).put(`/orgs/${org.id}/members/${outsider.username}/`).set(as(admin)))
        .status,
    ).toBe(204);
    expect((await request(t.app).get(`/orgs/${org.id}/`)).body.members).toBe(3);
  });

  it('an administrator may promote a member, who can then manage members', async () => {
    const { org, admin, member, outsider } = await ministryOrg();
    await addMember(t, org.id, admin, member, 'admin');
    expect(
      (await request(t.app).put(`/orgs/${org.id}/members/${outsider.username}/`).set(as(member)))
        .status,
    ).toBe(204);
  });

  it('rejects an unknown role with 400', async () => {
    const { org, admin, outsider } = await ministryOrg();
    const res = await request(t.app)
      .put(`/orgs/${org.id}/members/${outsider.username}/`)
      .set(as(admin))
      .send({ role: 'emperor' });
    expect(res.status).toBe(400);
    expect(res.body.errors.role).toBeDefined();
  });

  it('removing: 204, then 404 as no longer a member; the user stays', async () => {
    const { org, admin, member } = await ministryOrg();
    expect(
      (await request(t.app).delete(`/orgs/${org.id}/members/${member.username}/`).set(as(admin)))
        .status,
    ).toBe(204);
    expect(
      (await request(t.app).delete(`/orgs/${org.id}/members/${member.username}/`).set(as(admin)))
        .status,
    ).toBe(404);
    expect((await request(t.app).get(`/users/${member.username}/`)).status).toBe(200);
    expect(
      (await request(t.app).get(`/orgs/${org.id}/members/${member.username}/`).set(as(admin)))
        .status,
    ).toBe(404);
  });

  it('removing: 404 for an unknown user, 401 anonymous, 403 without permission', async () => {
    const { org, admin, member, outsider } = await ministryOrg();
    expect(
      (
        await request(t.app)
          .delete(`/orgs/${org.id}/members/${uniqueId('ghost')}/`)
          .set(as(admin))
      ).status,
    ).toBe(404);
    expect(
      (await request(t.app).delete(`/orgs/${org.id}/members/${member.username}/`)).status,
    ).toBe(401);
    expect(
      (await request(t.app).delete(`/orgs/${org.id}/members/${member.username}/`).set(as(outsider)))
        .status,
    ).toBe(403);
    const members = await request(t.app).get(`/orgs/${org.id}/members/`);
    expect(members.body.map((u: { username: string }) => u.username).sort()).toEqual(
      [admin.username, member.username].sort(),
    );
  });

  it('refuses with 409 to remove or demote the last administrator', async () => {
    const { org, admin } = await ministryOrg();
    const remove = await request(t.app)
      .delete(`/orgs/${org.id}/members/${admin.username}/`)
      .set(as(admin));
    expect(remove.status).toBe(409);
    const demote = await request(t.app)
      .put(`/orgs/${org.id}/members/${admin.username}/`)
      .set(as(admin))
      .send({ role: 'member' });
    expect(demote.status).toBe(409);
    expect(
      (await request(t.app).get(`/orgs/${org.id}/members/${admin.username}/`).set(as(admin)))
        .status,
    ).toBe(204);
  });

  it('a private org lists its members to members only', async () => {
    const { org, member, outsider } = await ministryOrg('None');
    expect(
      (await request(t.app).get(`/orgs/${org.id}/members/`).set(as(member))).body,
    ).toHaveLength(2);
    expect((await request(t.app).get(`/orgs/${org.id}/members/`).set(as(outsider))).status).toBe(
      403,
    );
  });

  it('a deactivated member leaves the member list and count', async () => {
    const { org, member } = await ministryOrg();
    await request(t.app).delete(`/users/${member.username}/`).set('Authorization', t.admin);
    expect((await request(t.app).get(`/orgs/${org.id}/members/`)).body).toHaveLength(1);
    expect((await request(t.app).get(`/orgs/${org.id}/`)).body.members).toBe(1);
  });
});

describe('GET /orgs/', () => {
  it('searches id, name and company; filters by company (comma = OR)', async () => {
    const owner = await createUser(t);
    const tag = uniqueId('srch').replace('-', '');
    const a = await createOrg(t, owner, { id: `${tag}-a`, name: 'Alpha Clinic', company: 'Acme' });
    const b = await createOrg(t, owner, { id: `${tag}-b`, name: 'Beta Lab', company: 'Bolt' });
    await createOrg(t, owner, { id: `${tag}-c`, name: 'Gamma', company: 'Cogs' });
    const byName = await request(t.app)
      .get('/orgs/')
      .query({ q: `${tag} clinic` });
    expect(byName.body.map((o: { id: string }) => o.id)).toEqual([a.id]);
    const byCompany = await request(t.app)
      .get('/orgs/')
      .query({ q: tag, company: 'acme,BOLT', sortAsc: 'name' });
    expect(byCompany.body.map((o: { id: string }) => o.id)).toEqual([a.id, b.id]);
  });

  it('sorts by name and by last update, and rejects an unknown sort with 400', async () => {
    const owner = await createUser(t);
    const tag = uniqueId('sort').replace('-', '');
    const z = await createOrg(t, owner, { id: `${tag}-1`, name: 'Zulu' });
    const y = await createOrg(t, owner, { id: `${tag}-2`, name: 'Yankee' });
    await request(t.app).post(`/orgs/${z.id}/`).set(as(owner)).send({ company: 'touched' });
    const byName = await request(t.app).get('/orgs/').query({ q: tag, sortAsc: 'name' });
    expect(byName.body.map((o: { id: string }) => o.id)).toEqual([y.id, z.id]);
    const byUpdate = await request(t.app).get('/orgs/').query({ q: tag, sortDesc: 'last_update' });
    expect(byUpdate.body.map((o: { id: string }) => o.id)).toEqual([z.id, y.id]);
    const bad = await request(t.app).get('/orgs/').query({ sortAsc: 'shoeSize' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/shoeSize/);
  });

  it('verbose=true gives full orgs with counts', async () => {
    const { org } = await ministryOrg();
    const res = await request(t.app).get('/orgs/').query({ q: org.id, verbose: 'true' });
    expect(res.body[0]).toMatchObject({
      type: 'Organization',
      id: org.id,
      members: 2,
      public_access: 'View',
    });
  });
});

describe('extras filters on /orgs/ (spec operations §4.9)', () => {
  it('match exactly and case-insensitively, with wildcards, OR by space, negation and exists', async () => {
    const owner = await createUser(t);
    const tag = uniqueId('ex').replace('-', '');
    const a = await createOrg(t, owner, {
      id: `${tag}-a`,
      extras: { program: 'HIV', year: 'FY19' },
    });
    const b = await createOrg(t, owner, {
      id: `${tag}-b`,
      extras: { program: 'TB', year: 'FY20' },
    });
    const c = await createOrg(t, owner, { id: `${tag}-c`, extras: { year: 'FY19' } });
    const ids = async (query: Record<string, string | string[]>): Promise<string[]> => {
      const res = await request(t.app)
        .get('/orgs/')
        .query({ q: tag, sortAsc: 'id', ...query });
      return (res.body as Array<{ id: string }>).map((o) => o.id);
    };
    expect(await ids({ 'extras.program': 'hiv' })).toEqual([a.id]);
    expect(await ids({ 'extras.year': 'FY1*' })).toEqual([a.id, c.id]);
    expect(await ids({ 'extras.program': 'HIV TB' })).toEqual([a.id, b.id]);
    expect(await ids({ 'extras.program': '!HIV' })).toEqual([b.id, c.id]);
    expect(await ids({ 'extras.exists': 'program' })).toEqual([a.id, b.id]);
    expect(await ids({ extras__year: 'FY20,FY21' })).toEqual([b.id]);
  });
});
