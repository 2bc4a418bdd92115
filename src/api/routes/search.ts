// GET /api/plugins/search?q=<text>&k=<n>[&include_unroutable=true]: the plugins that fit a request.
// Bad q or k → 400 with a message saying what to send; a k above the maximum is clamped (with a warning).
import type { FastifyInstance } from 'fastify';
import type { PluginRecord } from '../../registry/record.js';
import type { PluginSearchApi, SearchOptions } from '../../retrieval/search-api.js';
import { MAX_K } from '../../retrieval/search-request.js';
import { searchView } from '../../retrieval/search-view.js';
import { sendError } from '../errors.js';
import { principalOf, USER_ROUTE } from '../principal-auth.js';

export interface SearchRoutesDeps {
  search: PluginSearchApi;
  /** Whether a user may reach a plugin (policy); a user token sees only those. */
  mayReach?: (userId: string, record: PluginRecord) => boolean;
}

export function registerSearchRoutes(app: FastifyInstance, deps: SearchRoutesDeps): void {
  app.get('/api/plugins/search', USER_ROUTE, async (request, reply) => {
    const query = (request.query ?? {}) as Record<string, unknown>;
    const q = query.q;
    const k = query.k;
    if (Array.isArray(q) || Array.isArray(k)) return sendError(reply, 400, 'give q and k once each');
    if (q === undefined)
      return sendError(reply, 400, 'missing q: GET /api/plugins/search?q=<what the plugin should do>&k=<1-50>', [{ path: '/q', message: 'required' }]);
    let kNumber: number | undefined;
    if (k !== undefined && k !== '') {
      kNumber = typeof k === 'string' && /^\s*-?\d+\s*$/.test(k) ? Number(k) : NaN;
      if (!Number.isSafeInteger(kNumber)) {
        const message = `k must be a whole number between 1 and ${MAX_K}, got ${JSON.stringify(k)}`;
        return sendError(reply, 400, message, [{ path: '/k', message }]);
      }
    }
    const includeUnroutable = query.include_unroutable === 'true' || query.include_unroutable === '1';
    const options: SearchOptions = { include_unroutable: includeUnroutable };
    if (kNumber !== undefined) options.k = kNumber;
    const principal = principalOf(request);
    const mayReach = deps.mayReach;
    if (principal.kind === 'user' && mayReach) options.filter = (record) => mayReach(principal.user_id, record);
    const response = await deps.search.search(String(q), options);
    if (response.error) {
      const path = /^k\b/.test(response.error) ? '/k' : '/q';
      return sendError(reply, 400, response.error, [{ path, message: response.error }]);
    }
    return searchView(response);
  });
}
