import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
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
 * The floor of our stack for a benchmark: Node's own HTTP server and a `pg.Pool`, in a process of
 * its own, answering each recorded path by sending the same statements the registry sends for it
 * (each a prepared statement, one after the other, as the registry's reads run) and writing the
 * same status, headers and body bytes. Nothing is parsed, checked or rendered: what it costs is
 * what no registry built on Node and Postgres can go below. Sends `{ port }` once listening;
 * stops on a `{ stop }` message or when the parent goes away.
 */
async function main(): Promise<void> {
  const [setup] = (await once(process, 'message')) as [FloorSetup];
  const pool = new Pool({ connectionString: setup.databaseUrl, max: setup.poolSize });
  const names = new Map<string, string>();
  const nameOf = (sql: string): string => {
    let name = names.get(sql);
    if (name === undefined) {
      name = `floor_${names.size}`;
      names.set(sql, name);
    }
    return name;
  };
  const server = http.createServer((req, res) => {
    const route = setup.routes[req.url ?? ''];
    if (!route) {
      res.writeHead(404).end();
      return;
    }
    void (async () => {
      try {
        for (const s of route.statements) {
          await pool.query({ name: nameOf(s.sql), text: s.sql, values: s.parameters });
        }
        res.writeHead(route.status, route.headers).end(route.body);
      } catch (error) {
        res.writeHead(500).end(String(error));
      }
    })();
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const stop = (): void => {
    server.close();
    server.closeAllConnections();
    void pool.end().finally(() => process.exit(0));
  };
  process.on('message', stop);
  process.once('disconnect', stop);
  process.send?.({ port: (server.address() as AddressInfo).port });
}

main().catch((error: unknown) => {
  process.stderr.write(`Floor failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
