// Open HTTP connections per client address, bounded. Each is a file descriptor held until the server's
// header timeout (or a keep-alive timeout after each response), so without a bound one machine on the LAN
// could take every descriptor the Core has. Unlike the broker's silent connections, an open HTTP connection
// may be a real client's long-lived stream (the dashboard's event feed, an MCP session), so a newcomer over
// the bound is the one refused.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** A household's browsers, Home Assistant and a reverse proxy's keep-alive pool stay well below this. */
export const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 128;

/** Closes a new connection at once when its address already holds `max`; `onRefused` says so (once per call). */
export function limitConnectionsPerAddress(server: Server, max: number, onRefused: (address: string, open: number) => void): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const count = open.get(address) ?? 0;
    if (count >= max) {
      onRefused(address, count);
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
