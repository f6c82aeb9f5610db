import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Client, Pool } from 'pg';
import {
  ADMIN_PASSWORD,
  ADMIN_USERNAME,
  APP_POOL_SIZE,
  benchParams,
  forkFloor,
  login,
  measureHttp,
  measureLoop,
  print,
  printSetup,
  printStackFloors,
  printTable,
  request,
  startBenchServer,
  type BenchServer,
} from './harness';

/**
 * GET /orgs/:org/ and the GraphQL `org` query against the raw database fetching the same row
 * with the same counts.
 */
export const title = 'Org detail: GET /orgs/:org/ and GraphQL org(id) vs the raw database';

const MEMBERS = 5; // besides the admin who creates the org
const USER_PASSWORD = 'bench-user-password';
const EXPECTED = { members: MEMBERS + 1, publicSources: 2, publicCollections: 1 };

/** What the endpoint needs from the database: the org row by mnemonic and its counts. */
const ORG_WITH_COUNTS = `
  SELECT o.*,
    (SELECT count(*)::int FROM org_memberships m JOIN users u ON u.id = m.user_id
      WHERE m.org_id = o.id AND u.is_active) AS members,
    (SELECT count(*)::int FROM repositories r
      WHERE r.owner_org_id = o.id AND r.kind = 'source' AND r.is_active AND r.public_access <> 'None') AS public_sources,
    (SELECT count(*)::int FROM repositories r
      WHERE r.owner_org_id = o.id AND r.kind = 'collection' AND r.is_active AND r.public_access <> 'None') AS public_collections
  FROM organizations o WHERE o.mnemonic = $1`;

interface Fixture {
  org: string;
  name: string;
  company: string;
  /** Token of a plain member (not a superuser). */
  memberToken: string;
}

export async function run(): Promise<void> {
  const params = benchParams();
  const server = await startBenchServer();
  try {
    const fx = await createFixture(server);
    printSetup(server, params, [
      `org:        '${fx.org}', public, ${EXPECTED.members} members, ` +
        `${EXPECTED.publicSources} public sources, ${EXPECTED.publicCollections} public collection`,
    ]);

    const restPath = `/orgs/${fx.org}/`;
    const restBody = await request(server, 'GET', restPath);
    checkRest(restBody, fx);
    const restTokenBody = await request(server, 'GET', restPath, { token: fx.memberToken });
    assert.deepEqual(JSON.parse(restTokenBody), JSON.parse(restBody));
    const graphqlRequest = {
      query: `{ org(id: "${fx.org}") { id name company publicAccess membersCount publicSources publicCollections } }`,
    };
    const graphqlBody = await request(server, 'POST', '/graphql', { body: graphqlRequest });
    checkGraphql(graphqlBody, fx);

    const results = [
      await measureHttp(
        server,
        {
          label: 'REST GET /orgs/:org/, anonymous',
          method: 'GET',
          path: restPath,
          expectBody: restBody,
        },
        params,
      ),
      await measureHttp(
        server,
        {
          label: 'REST GET /orgs/:org/, Token of a member',
          method: 'GET',
          path: restPath,
          headers: { Authorization: `Token ${fx.memberToken}` },
          expectBody: restTokenBody,
        },
        params,
      ),
      await measureHttp(
        server,
        {
          label: 'GraphQL org(id), anonymous',
          method: 'POST',
          path: '/graphql',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(graphqlRequest),
          expectBody: graphqlBody,
        },
        params,
      ),
    ];
    const pool = new Pool({ connectionString: server.databaseUrl, max: APP_POOL_SIZE });
    try {
      const raw = await measureLoop('raw DB: org row + counts (pg.Pool)', params, async () => {
        const { rows } = await pool.query<{ mnemonic: string } & Record<string, unknown>>(
          ORG_WITH_COUNTS,
          [fx.org],
        );
        const row = rows[0];
        if (
          rows.length !== 1 ||
          row.mnemonic !== fx.org ||
          row.members !== EXPECTED.members ||
          row.public_sources !== EXPECTED.publicSources ||
          row.public_collections !== EXPECTED.publicCollections
        ) {
          throw new Error(`unexpected rows: ${JSON.stringify(rows)}`);
        }
      });
      results.push(raw);
      printTable(results, raw);
    } finally {
      await pool.end();
    }
    print('REST and GraphQL go through HTTP, Express and the services; the raw row is one SQL');
    print('statement on a pg.Pool. "vs raw DB" is req/s divided by the raw-database queries/s.');
    // The stack's floors writing the anonymous answer, in the same minutes.
    const floor = await forkFloor(server, [restPath], {}, () => Promise.resolve([]));
    try {
      await printStackFloors(
        floor,
        { label: 'floor', next: () => ({ path: restPath, check: okStatus }) },
        params,
        [
          { label: 'anonymous', result: results[0] },
          { label: 'with a token', result: results[1] },
        ],
      );
    } finally {
      await floor.stop();
    }
  } finally {
    await server.stop();
  }
}

function okStatus(status: number): string | null {
  return status === 200 ? null : `HTTP ${status}`;
}

/** A public org with members, created through the API, and a few repositories to count. */
async function createFixture(server: BenchServer): Promise<Fixture> {
  const admin = await login(server, ADMIN_USERNAME, ADMIN_PASSWORD);
  const suffix = crypto.randomBytes(3).toString('hex');
  const fx = { org: `bench-${suffix}`, name: 'Benchmark Organization', company: 'Bench Co' };
  await request(server, 'POST', '/orgs/', {
    token: admin,
    body: { id: fx.org, name: fx.name, company: fx.company },
    status: 201,
  });
  const usernames = Array.from({ length: MEMBERS }, (_, i) => `bench-${suffix}-user${i + 1}`);
  for (const username of usernames) {
    await request(server, 'POST', '/users/', {
      token: admin,
      body: {
        username,
        name: `Bench user ${username}`,
        email: `${username}@example.org`,
        password: USER_PASSWORD,
      },
      status: 201,
    });
    await request(server, 'PUT', `/orgs/${fx.org}/members/${username}/`, {
      token: admin,
      body: { role: 'member' },
      status: 204,
    });
  }
  await insertRepositories(server.databaseUrl, fx.org);
  return { ...fx, memberToken: await login(server, usernames[0], USER_PASSWORD) };
}

/**
 * The repositories the counts look at, written directly in SQL to keep this benchmark about the
 * org read alone: two public sources, one public collection, and a private source (not counted).
 */
async function insertRepositories(databaseUrl: string, org: string): Promise<void> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO repositories (kind, owner_org_id, mnemonic, name, public_access)
       SELECT v.kind, o.id, v.mnemonic, v.mnemonic, v.access
       FROM organizations o,
         (VALUES ('source', 'SRC1', 'View'), ('source', 'SRC2', 'Edit'),
                 ('collection', 'COL1', 'View'), ('source', 'PRIVATE', 'None'))
           AS v (kind, mnemonic, access)
       WHERE o.mnemonic = $1`,
      [org],
    );
  } finally {
    await client.end();
  }
}

function checkRest(body: string, fx: Fixture): void {
  const org = JSON.parse(body) as Record<string, unknown>;
  assert.deepEqual(
    {
      id: org.id,
      name: org.name,
      company: org.company,
      public_access: org.public_access,
      members: org.members,
      public_sources: org.public_sources,
      public_collections: org.public_collections,
    },
    {
      id: fx.org,
      name: fx.name,
      company: fx.company,
      public_access: 'View',
      members: EXPECTED.members,
      public_sources: EXPECTED.publicSources,
      public_collections: EXPECTED.publicCollections,
    },
  );
}

function checkGraphql(body: string, fx: Fixture): void {
  assert.deepEqual(JSON.parse(body), {
    data: {
      org: {
        id: fx.org,
        name: fx.name,
        company: fx.company,
        publicAccess: 'VIEW',
        membersCount: EXPECTED.members,
        publicSources: EXPECTED.publicSources,
        publicCollections: EXPECTED.publicCollections,
      },
    },
  });
}
