import { Pool } from 'pg';
import { signInAtProvider, startProvider, REDIRECT_URI, CLIENT_ID } from '../test/oidc/provider';
import {
  ADMIN_PASSWORD,
  ADMIN_USERNAME,
  APP_POOL_SIZE,
  benchParams,
  login,
  measureHttp,
  measureLoop,
  print,
  printSetup,
  printTable,
  request,
  startBenchServer,
  type BenchServer,
} from './harness';

/**
 * What a single sign-on token costs per request: `GET /user/` and GraphQL `me` with the identity
 * provider's access token (its verdict cached) against our own API token, the provider's userinfo
 * call (what a token not seen before costs on top) and the raw database reading the user.
 */
export const title = "Single sign-on: the provider's access token as Bearer vs our API token";

const ACTIVE_USER = `SELECT id::text, username, is_superuser, rate_limit_per_minute, rate_limit_per_day
  FROM users WHERE username = $1 AND is_active`;

export async function run(): Promise<void> {
  const params = benchParams();
  const provider = await startProvider();
  // The server child inherits the environment: it signs people in at this provider.
  Object.assign(process.env, provider.env);
  let server: BenchServer | undefined;
  try {
    server = await startBenchServer();
    const adminToken = await login(server, ADMIN_USERNAME, ADMIN_PASSWORD);
    const username = `bench-sso-${Date.now().toString(36)}`;
    const accessToken = await signIn(server, username);
    printSetup(server, params, [
      `provider:   oidc-provider in a child process at ${provider.issuer} (opaque access tokens)`,
      `user:       '${username}', created by its first sign-in`,
    ]);

    const bearer = `Bearer ${accessToken}`;
    const results = [
      await measureHttp(
        server,
        {
          label: 'REST GET /user/, our API token',
          method: 'GET',
          path: '/user/',
          headers: { Authorization: `Token ${adminToken}` },
          expectBody: await request(server, 'GET', '/user/', { token: adminToken }),
        },
        params,
      ),
      await measureHttp(
        server,
        {
          label: "REST GET /user/, provider's token",
          method: 'GET',
          path: '/user/',
          headers: { Authorization: bearer },
          expectBody: await fetchText(server, '/user/', bearer),
        },
        params,
      ),
      await measureHttp(
        server,
        {
          label: "GraphQL me, provider's token",
          method: 'POST',
          path: '/graphql',
          headers: { Authorization: bearer, 'Content-Type': 'application/json' },
          body: JSON.stringify({ query: '{ me { username } }' }),
          expectBody: await graphqlMe(server, bearer, username),
        },
        params,
      ),
    ];
    const userinfo = `${provider.issuer}/me`;
    results.push(
      await measureLoop('provider userinfo (a token not seen before)', params, async () => {
        const res = await fetch(userinfo, { headers: { Authorization: bearer } });
        const body = (await res.json()) as { sub?: string };
        if (res.status !== 200 || body.sub !== username) {
          throw new Error(`userinfo answered ${res.status}: ${JSON.stringify(body)}`);
        }
      }),
    );
    const pool = new Pool({ connectionString: server.databaseUrl, max: APP_POOL_SIZE });
    try {
      const raw = await measureLoop('raw DB: the active user (pg.Pool)', params, async () => {
        const { rows } = await pool.query<{ username: string }>(ACTIVE_USER, [username]);
        if (rows.length !== 1) throw new Error(`unexpected rows: ${JSON.stringify(rows)}`);
      });
      results.push(raw);
      printTable(results, raw);
    } finally {
      await pool.end();
    }
    print(
      "The provider's verdict on a token is cached (OIDC_TOKEN_CACHE_SECONDS, 60 s): the first",
    );
    print(
      'request with a new token pays one userinfo call (the row above) on top of the cached cost.',
    );
  } finally {
    await server?.stop();
    await provider.stop();
  }
}

/** The browser's part and the client's code exchange, as oclweb3 does them. */
async function signIn(server: BenchServer, login: string): Promise<string> {
  const query = new URLSearchParams({ client_id: CLIENT_ID, redirect_uri: REDIRECT_URI });
  const start = await fetch(`${server.url}/users/login/?${query.toString()}`, {
    redirect: 'manual',
  });
  const back = await signInAtProvider(start.headers.get('location')!, login);
  const body = await request(server, 'POST', '/users/oidc/code-exchange/', {
    body: { code: back.searchParams.get('code'), redirect_uri: REDIRECT_URI },
  });
  return (JSON.parse(body) as { access_token: string }).access_token;
}

/** The exact answer of `me` (as served, newline included), checked to name the user. */
async function graphqlMe(server: BenchServer, auth: string, username: string): Promise<string> {
  const res = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { Authorization: auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: '{ me { username } }' }),
  });
  const text = await res.text();
  const me = (JSON.parse(text) as { data?: { me?: { username?: string } } }).data?.me;
  if (me?.username !== username) throw new Error(`GraphQL me answered ${text}`);
  return text;
}

async function fetchText(server: BenchServer, path: string, auth: string): Promise<string> {
  const res = await fetch(server.url + path, { headers: { Authorization: auth } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${text}`);
  return text;
}
