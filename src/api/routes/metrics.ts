// GET /metrics: the Prometheus text exposition. It takes the admin token or the metrics token
// (metrics.token / HOMECLAW_METRICS_TOKEN), a scraper's token that opens this route and nothing else:
// the server's bearer check does not know it, so every other route answers it 401. The route is
// therefore one of the server's public paths and checks the bearer token itself.
import type { FastifyInstance } from 'fastify';
import type { Logger } from '../../log.js';
import { bearerMatches } from '../admin-token.js';
import { errorBody } from '../errors.js';

export const METRICS_PATH = '/metrics';

export interface MetricsRoutesDeps {
  metrics: { scrape(): Promise<string>; readonly contentType: string };
  adminToken: string;
  /** metrics.token; null: only the admin token may scrape. */
  metricsToken: string | null;
  log: Logger;
}

export function registerMetricsRoutes(app: FastifyInstance, deps: MetricsRoutesDeps): void {
  app.get(METRICS_PATH, async (request, reply) => {
    const header = request.headers.authorization;
    const allowed = bearerMatches(header, deps.adminToken) || (deps.metricsToken !== null && bearerMatches(header, deps.metricsToken));
    if (!allowed) {
      deps.log.warn({ path: METRICS_PATH, ip: request.ip }, 'metrics scrape without a valid bearer token refused');
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer')
        .send(
          errorBody(401, 'GET /metrics needs the admin token or the metrics token (metrics.token, HOMECLAW_METRICS_TOKEN) as "Authorization: Bearer <token>"'),
        );
    }
    const text = await deps.metrics.scrape();
    return reply.header('content-type', deps.metrics.contentType).header('cache-control', 'no-store').send(text);
  });
}
