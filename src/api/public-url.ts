// The origin clients reach the Core at, for URLs the Core hands out (OAuth metadata, redirects): the
// configured http.public_url behind a reverse proxy, else the scheme and Host header of the request
// itself, so a LAN client using http://192.168.1.10:8765 gets URLs it can reach. A Host header that is
// not a plain host[:port] (it would end up inside headers and documents) falls back to the listener.
import type { Server } from 'node:http';
import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';

const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

export interface PublicUrlSettings {
  /** http.public_url; null: from the request. */
  public_url: string | null;
  /** The listener's own host:port, when the Host header is unusable. */
  fallbackHost: () => string;
}

export function publicOrigin(request: FastifyRequest, settings: PublicUrlSettings): string {
  if (settings.public_url) return settings.public_url.replace(/\/+$/, '');
  const host = request.host;
  return `${request.protocol}://${HOST.test(host) ? host : settings.fallbackHost()}`;
}

/** host:port of a listening server, as a URL authority (IPv6 in brackets). */
export function listenerAuthority(server: Server, host: string, configuredPort: number): string {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : configuredPort;
  return `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}
