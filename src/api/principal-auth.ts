// Bearer authentication as a principal resolved once per request: the admin token, or a user token that
// acts only as its user. Routes say whether user tokens may call them (`config: USER_ROUTE`); every
// other route answers 403 to a user token. Front doors added later (an OpenAI-compatible endpoint, OAuth
// for /mcp, a dashboard) read the same `principalOf(request)`.
import type { FastifyRequest } from 'fastify';
import { ADMIN, describePrincipal, type Principal } from '../access/principal.js';
import { bearerMatches } from './admin-token.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** User tokens may call this route (acting only as their user); default admin only. */
    allow_users?: boolean;
  }
  interface FastifyRequest {
    /** Set by the server's authentication hook on every authenticated request. */
    principal: Principal | null;
  }
}

/** Route options for the routes user tokens may call. */
export const USER_ROUTE = { config: { allow_users: true } } as const;

/** What user tokens may call, for error messages. */
export function userRoutesText(userId: string): string {
  return `POST /api/messages, GET/PUT /api/profiles/${userId}, GET /api/plugins/search, GET /api/whoami, POST /v1/chat/completions, GET /v1/models and /mcp`;
}

export interface UserTokenVerifier {
  /** The user a token belongs to, or undefined. */
  verify(token: string): string | undefined;
}

export function resolvePrincipal(header: string | undefined, adminToken: string, users?: UserTokenVerifier): Principal | undefined {
  if (bearerMatches(header, adminToken)) return ADMIN;
  if (!users || !header?.startsWith('Bearer ')) return undefined;
  const userId = users.verify(header.slice('Bearer '.length).trim());
  return userId === undefined ? undefined : { kind: 'user', user_id: userId };
}

/**
 * The principal of an authenticated request. On a route mounted on a bare fastify instance (no server
 * hook, so the property was never declared) the route's own admin-token check is the only gate, and the
 * caller is the admin. A request the hook let through without a principal (a public path) has none:
 * asking for it is a programming error, never a reason to grant the admin's rights.
 */
export function principalOf(request: FastifyRequest): Principal {
  const principal = (request as { principal?: Principal | null }).principal;
  if (principal === undefined) return ADMIN;
  if (principal === null) throw new Error(`no authenticated principal on ${request.method} ${request.url.split('?')[0] ?? ''}`);
  return principal;
}

/** The 403 text for a user token on an admin route. */
export function adminOnlyMessage(principal: Principal, method: string, path: string): string {
  const own = principal.kind === 'user' ? ` ${describePrincipal(principal)} may call ${userRoutesText(principal.user_id)}` : '';
  return `${method} ${path} needs the admin token;${own}`;
}
