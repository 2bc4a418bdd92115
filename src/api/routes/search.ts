// GET /api/plugins/search?q=<text>&k=<n>[&include_unroutable=true]: the plugins that fit a request.
// Bad q or k → 400 with a message saying what to send; a k above the maximum is clamped (with a warning).
import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import type { PluginRecord } from '../../registry/record.js';
import type { PluginSearchApi, SearchOptions } from '../../retrieval/search-api.js';
import { MAX_K } from '../../retrieval/search-request.js';
import { searchView } from '../../retrieval/search-view.js';
import { sendError } from '../errors.js';
import { principalOf, USER_ROUTE } from '../principal-auth.js';
import { listProblems, validatedRoute } from '../route-validation.js';
import type { ValidationIssue } from '../../protocol/types.js';
import { SearchQueryString } from './search-schema.js';

export interface SearchRoutesDeps {
  search: PluginSearchApi;
  /** Whether a user may reach a plugin (policy); a user token sees only those. */
  mayReach?: (userId: string, record: PluginRecord) => boolean;
}

/** The refusal's sentence says what to send. */
function searchRefusal(problems: ValidationIssue[]): string {
  if (problems.some((problem) => problem.path === '/q' && problem.message === 'q is required')) {
    return `missing q: GET /api/plugins/search?q=<what the plugin should do>&k=<1-${MAX_K}>`;
  }
  if (problems.some((problem) => problem.message.startsWith('give '))) return 'give q and k once each';
  return listProblems(problems);
}

/** "k=" (an empty field of a form) means the default k. */
const omitEmptyK: preValidationHookHandler = async (request) => {
  const query = request.query as Record<string, unknown>;
  if (query['k'] === '') delete query['k'];
};

export function registerSearchRoutes(app: FastifyInstance, deps: SearchRoutesDeps): void {
  const route = validatedRoute({ querystring: SearchQueryString }, { querystring: searchRefusal }, USER_ROUTE);
  app.get<{ Querystring: SearchQueryString }>('/api/plugins/search', { ...route, preValidation: omitEmptyK }, async (request, reply) => {
    const { q, k, include_unroutable } = request.query;
    const options: SearchOptions = { include_unroutable: include_unroutable === 'true' || include_unroutable === '1' };
    if (k !== undefined) options.k = k;
    const principal = principalOf(request);
    const mayReach = deps.mayReach;
    if (principal.kind === 'user' && mayReach) options.filter = (record) => mayReach(principal.user_id, record);
    const response = await deps.search.search(q, options);
    if (response.error) {
      const path = /^k\b/.test(response.error) ? '/k' : '/q';
      return sendError(reply, 400, response.error, [{ path, message: response.error }]);
    }
    return searchView(response);
  });
}
