// Liveness and readiness for supervisors (Docker HEALTHCHECK, Kubernetes probes, the Home Assistant
// watchdog). Both are served without the token and say nothing beyond up/down per part.
import type { FastifyInstance } from 'fastify';
import type { ReadinessReport } from '../../observability/readiness.js';

export interface HealthRoutesDeps {
  readiness: { check(): Promise<ReadinessReport> };
}

/** Paths the HTTP server must serve without a bearer token. */
export const HEALTH_PATHS = ['/healthz', '/readyz'];

export function registerHealthRoutes(app: FastifyInstance, deps: HealthRoutesDeps): void {
  // The process answers: nothing else is consulted, so a slow dependency never gets the Core restarted.
  app.get('/healthz', async (_request, reply) => {
    void reply.header('cache-control', 'no-store');
    return { status: 'ok' };
  });

  app.get('/readyz', async (_request, reply) => {
    const report = await deps.readiness.check();
    void reply.code(report.ready ? 200 : 503).header('cache-control', 'no-store');
    return { status: report.ready ? 'ready' : 'not ready', checks: report.checks };
  });
}
