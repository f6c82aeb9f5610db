import net from 'node:net';
import { once } from 'node:events';

/**
 * A small TCP load balancer for the two-process benchmark, in a process of its own so that its CPU
 * is counted apart: each new connection goes to the next backend port in turn (round robin, as a
 * layer-4 balancer in front of API replicas does) and bytes are piped both ways. The backend
 * ports are the arguments. Sends `{ port }` once listening; stops on any message or when the
 * parent goes away.
 */
async function main(): Promise<void> {
  const ports = process.argv.slice(2).map(Number);
  if (ports.length === 0 || ports.some((port) => !Number.isInteger(port) || port <= 0)) {
    throw new Error(`Backend ports expected, not '${process.argv.slice(2).join(' ')}'.`);
  }
  let next = 0;
  const server = net.createServer((client) => {
    const port = ports[next];
    next = (next + 1) % ports.length;
    const backend = net.connect({ port, host: '127.0.0.1', noDelay: true });
    client.setNoDelay(true);
    client.pipe(backend).pipe(client);
    const close = (): void => {
      client.destroy();
      backend.destroy();
    };
    client.on('error', close);
    backend.on('error', close);
    client.on('close', close);
    backend.on('close', close);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const stop = (): void => {
    server.close();
    process.exit(0);
  };
  process.on('message', stop);
  process.once('disconnect', stop);
  process.send?.({ port: (server.address() as net.AddressInfo).port });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `Balancer failed: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
