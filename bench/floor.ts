import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Pool } from 'pg';

/** One path the floor serves: the statements the registry sends for it, then its answer. */
export interface FloorRoute {
  statements: Array<{ sql: string; parameters: unknown[] }>;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What the parent sends first: the database and the routes by path (with their query). */
export interface FloorSetup {
  databaseUrl: string;
  poolSize: number;
  routes: Record<string, FloorRoute>;
}

/**
 * The stack's own floors (issue 27), each on a listener of its own, answering every recorded path
 * with the registry's status, headers and bytes:
 * - `http-memory`: Node's HTTP server writing the bytes from memory;
 * - `http-text`: the same after one prepared query returning the stored answer as text;
 * - `express-memory`: Express 5 writing the bytes from memory;
 * - `express-query`: Express 5 after one prepared query returning the stored answer as JSON,
 *   parsed by `pg` and serialised again by `res.json`, as a registry that stored its answers
 *   would.
 */
export const STACK_FLOORS = [
  'http-memory',
  'http-text',
  'express-memory',
  'express-query',
] as const;
export type StackFloor = (typeof STACK_FLOORS)[number];

/** What the floor sends once listening. */
export interface FloorPorts {
  /** The registry's statements and bytes (`routes`), on `node:http`. */
  port: number;
  stack: Record<StackFloor, number>;
}

/** Where the stack floors read their answers: a table of this benchmark's own database. */
const ANSWERS = 'bench_floor_answers';

/**
 * The floor of our stack for a benchmark: Node's own HTTP server and a `pg.Pool`, in a process of
 * its own, answering each recorded path by sending the same statements the registry sends for it
 * (each a prepared statement, one after the other, as the registry's reads run) and writing the
 * same status, headers and body bytes. Nothing is parsed, checked or rendered: what it costs is
 * what no registry built on Node and Postgres can go below. Beside it, the stack floors above.
 * Sends `FloorPorts` once listening; stops on a `{ stop }` message or when the parent goes away.
 */
async function main(): Promise<void> {
  const [setup] = (await once(process, 'message')) as [FloorSetup];
  const pool = new Pool({ connectionString: setup.databaseUrl, max: setup.poolSize });
  await storeAnswers(pool, setup.routes);
  const names = new Map<string, string>();
  const nameOf = (sql: string): string => {
    let name = names.get(sql);
    if (name === undefined) {
      name = `floor_${names.size}`;
      names.set(sql, name);
    }
    return name;
  };
  const served = (
    handle: (route: FloorRoute, path: string, res: http.ServerResponse) => Promise<void>,
  ) =>
    http.createServer((req, res) => {
      const route = setup.routes[req.url ?? ''];
      if (!route) {
        res.writeHead(404).end();
        return;
      }
      handle(route, req.url!, res).catch((error: unknown) => {
        res.writeHead(500).end(String(error));
      });
    });
  const readText = { name: 'floor_text', text: `SELECT body FROM ${ANSWERS} WHERE path = $1` };
  const readJson = { name: 'floor_json', text: `SELECT doc FROM ${ANSWERS} WHERE path = $1` };

  const statements = served(async (route, _path, res) => {
    for (const s of route.statements) {
      await pool.query({ name: nameOf(s.sql), text: s.sql, values: s.parameters });
    }
    res.writeHead(route.status, route.headers).end(route.body);
  });
  const httpMemory = http.createServer((req, res) => {
    const route = setup.routes[req.url ?? ''];
    if (!route) res.writeHead(404).end();
    else res.writeHead(route.status, route.headers).end(route.body);
  });
  const httpText = served(async (route, path, res) => {
    const { rows } = await pool.query<{ body: string }>({ ...readText, values: [path] });
    res.writeHead(route.status, route.headers).end(rows[0].body);
  });
  const memoryApp = express();
  memoryApp.set('etag', false);
  memoryApp.use((req, res) => {
    const route = setup.routes[req.originalUrl];
    if (!route) return void res.status(404).end();
    res.status(route.status).set(route.headers).send(route.body);
  });
  const queryApp = express();
  queryApp.set('etag', false);
  queryApp.use((req, res, next) => {
    const route = setup.routes[req.originalUrl];
    if (!route) return void res.status(404).end();
    pool
      .query<{ doc: unknown }>({ ...readJson, values: [req.originalUrl] })
      .then(({ rows }) => void res.status(route.status).set(route.headers).json(rows[0].doc))
      .catch(next);
  });

  const listeners = [
    statements,
    httpMemory,
    httpText,
    http.createServer(memoryApp),
    http.createServer(queryApp),
  ];
  for (const server of listeners) {
    server.keepAliveTimeout = 60_000;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  }
  const portOf = (server: http.Server): number => (server.address() as AddressInfo).port;
  const ports: FloorPorts = {
    port: portOf(statements),
    stack: {
      'http-memory': portOf(listeners[1]),
      'http-text': portOf(listeners[2]),
      'express-memory': portOf(listeners[3]),
      'express-query': portOf(listeners[4]),
    },
  };
  const stop = (): void => {
    for (const server of listeners) {
      server.close();
      server.closeAllConnections();
    }
    void pool.end().finally(() => process.exit(0));
  };
  process.on('message', stop);
  process.once('disconnect', stop);
  process.send?.(ports);
}

/** The recorded answers, as text and as JSON (answers that are not JSON are stored as a string). */
async function storeAnswers(pool: Pool, routes: Record<string, FloorRoute>): Promise<void> {
  await pool.query(
    `CREATE UNLOGGED TABLE IF NOT EXISTS ${ANSWERS} (path text PRIMARY KEY, body text NOT NULL, doc jsonb NOT NULL)`,
  );
  for (const [path, route] of Object.entries(routes)) {
    let doc: unknown;
    try {
      doc = JSON.parse(route.body);
    } catch {
      doc = route.body;
    }
    await pool.query(
      `INSERT INTO ${ANSWERS} (path, body, doc) VALUES ($1, $2, $3)
       ON CONFLICT (path) DO UPDATE SET body = EXCLUDED.body, doc = EXCLUDED.doc`,
      [path, route.body, JSON.stringify(doc)],
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`Floor failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
