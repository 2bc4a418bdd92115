import type { FastifyInstance } from 'fastify';

export interface StatusRoutesDeps {
  /** Snapshot of every service's state; computed per request. */
  status: () => Record<string, unknown>;
}

export function registerStatusRoutes(app: FastifyInstance, deps: StatusRoutesDeps): void {
  app.get('/api/status', async () => deps.status());
}
