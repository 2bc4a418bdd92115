// GET /api/whoami (admin and user tokens): who this request acts as, so a client such as the web
// dashboard shows only what its credential may do. Answers nothing about other users.
import type { FastifyInstance } from 'fastify';
import type { IngressAuth } from '../ingress-auth.js';
import { principalOf, USER_ROUTE } from '../principal-auth.js';

export interface WhoamiRoutesDeps {
  /** Set when Home Assistant ingress is trusted; tells an ingress session from a token. */
  ingress?: IngressAuth;
}

export type WhoamiAnswer =
  | { kind: 'admin'; via: 'token' }
  | { kind: 'admin'; via: 'ingress'; ingress_path: string; ingress_user?: string; ingress_display_name?: string }
  | { kind: 'user'; via: 'token'; user_id: string };

export function registerWhoamiRoutes(app: FastifyInstance, deps: WhoamiRoutesDeps = {}): void {
  app.get('/api/whoami', USER_ROUTE, async (request, reply): Promise<WhoamiAnswer> => {
    void reply.header('cache-control', 'no-store');
    const principal = principalOf(request);
    if (principal.kind === 'user') return { kind: 'user', via: 'token', user_id: principal.user_id };
    // The server lets an ingress request in only without an Authorization header.
    const ingress = request.headers.authorization === undefined ? deps.ingress?.identify(request) : undefined;
    if (!ingress) return { kind: 'admin', via: 'token' };
    return {
      kind: 'admin',
      via: 'ingress',
      ingress_path: ingress.path,
      ...(ingress.user_name ? { ingress_user: ingress.user_name } : {}),
      ...(ingress.display_name ? { ingress_display_name: ingress.display_name } : {}),
    };
  });
}
