// Home Assistant ingress: the sidebar panel of the add-on reaches the Core through Home Assistant, which
// has already signed the person in, and then through the Supervisor, which connects from one fixed
// address (172.30.32.2) and adds `X-Ingress-Path: /api/hassio_ingress/<token>` (and, for sessions that
// carry one, `X-Remote-User-Id/-Name/-Display-Name`). Home Assistant's add-on rules say such connections
// are to be treated as authenticated. So a request counts as an ingress request only when both hold:
// its TCP peer is the configured proxy address (the socket's address, never a forwarded header, which
// anyone can write) and it carries X-Ingress-Path. Off unless `dashboard.ingress_proxy` is set.
import type { FastifyRequest } from 'fastify';

export interface IngressIdentity {
  /** The path prefix the browser sees (X-Ingress-Path). */
  path: string;
  /** Home Assistant's user, when the Supervisor's session names one. */
  user_id?: string;
  user_name?: string;
  display_name?: string;
}

export interface IngressAuth {
  /** The ingress identity of a request from the trusted proxy, or undefined for any other request. */
  identify(request: FastifyRequest): IngressIdentity | undefined;
}

const INGRESS_PATH = /^\/[A-Za-z0-9._~/-]{0,255}$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is this pattern's job.
const PRINTABLE = /^[^\u0000-\u001f\u007f]{1,256}$/;

/** IPv4 peers of a dual-stack socket appear as ::ffff:a.b.c.d. */
function normalizeAddress(address: string | undefined): string | undefined {
  return address?.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && PRINTABLE.test(value) ? value : undefined;
}

export function createIngressAuth(proxyAddress: string | null): IngressAuth {
  const trusted = normalizeAddress(proxyAddress ?? undefined);
  return {
    identify(request) {
      if (!trusted) return undefined;
      if (normalizeAddress(request.socket.remoteAddress) !== trusted) return undefined;
      const path = request.headers['x-ingress-path'];
      if (typeof path !== 'string' || !INGRESS_PATH.test(path)) return undefined;
      const user_id = header(request, 'x-remote-user-id');
      const user_name = header(request, 'x-remote-user-name');
      const display_name = header(request, 'x-remote-user-display-name');
      return { path, ...(user_id ? { user_id } : {}), ...(user_name ? { user_name } : {}), ...(display_name ? { display_name } : {}) };
    },
  };
}
