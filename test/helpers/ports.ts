// Free loopback ports for tests that must name a port up front (Mosquitto's config, a restart on the
// same port). Prefer port 0 wherever the server can report what it bound.
import { createServer, type AddressInfo } from 'node:net';

/** A port that was free a moment ago on 127.0.0.1. Another process can still take it: use it at once. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
