// Open HTTP connections, bounded per client address and in total. Each is a file descriptor held until the
// server's header timeout (or a keep-alive timeout after each response), so without a bound one machine on
// the LAN could take every descriptor the Core has; the total keeps descriptors for the broker and the
// database even against clients with many addresses. Unlike the broker's silent connections, an open HTTP
// connection may be a real client's long-lived stream (the dashboard's event feed, an MCP session), so a
// newcomer over a bound is the one refused.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** A household's browsers, Home Assistant and a reverse proxy's keep-alive pool stay well below this. */
export const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 128;
/** All clients together. */
export const DEFAULT_MAX_CONNECTIONS = 1024;

export interface ConnectionLimits {
  perAddress: number;
  total: number;
}

/** Closes a new connection at once over either bound; `onRefused` says which (once per connection). */
export function limitConnections(server: Server, limits: ConnectionLimits, onRefused: (address: string, reason: string) => void): void {
  // Node closes connections over maxConnections before any listener sees them, and reports each as 'drop'.
  server.maxConnections = limits.total;
  server.on('drop', (data) => onRefused(data?.remoteAddress ?? 'unknown', `${limits.total} connections open in all`));
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const count = open.get(address) ?? 0;
    if (count >= limits.perAddress) {
      onRefused(address, `${count} connections open from this address`);
      socket.destroy();
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}
