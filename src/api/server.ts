// The Core's HTTP server (fastify): bearer auth, one error format, and the route modules of each room.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Logger } from '../log.js';
import { bearerMatches } from './admin-token.js';
import { errorBody } from './errors.js';

export interface HttpServerOptions {
  host: string;
  port: number;
  token: string;
  log: Logger;
  /** Paths reachable without the token. */
  publicPaths?: string[];
}

export interface HttpServer {
  app: FastifyInstance;
  authorize(request: FastifyRequest): boolean;
  listen(): Promise<{ port: number; url: string }>;
  close(): Promise<void>;
}

export function createHttpServer(options: HttpServerOptions): HttpServer {
  const app = Fastify({
    // pino's Logger is fastify's logger; only the generic parameters of the two type declarations differ.
    loggerInstance: options.log.child({ room: 'api' }) as unknown as FastifyBaseLogger,
    // Per-request lines would drown the log of a home server; failures are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    // Large enough that an oversized chat message reaches the conversation engine and gets its own clear answer.
    bodyLimit: 4 * 1024 * 1024,
  });
  const publicPaths = new Set(['/api/openapi.json', ...(options.publicPaths ?? [])]);
  const authorize = (request: FastifyRequest): boolean => bearerMatches(request.headers.authorization, options.token);

  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    if (publicPaths.has(path)) return;
    if (!authorize(request)) {
      options.log.warn({ path, ip: request.ip }, 'HTTP request without a valid bearer token refused');
      await reply
        .code(401)
        .header('www-authenticate', 'Bearer')
        .send(errorBody(401, 'missing or invalid bearer token (see <data dir>/admin.token or HOMECLAW_ADMIN_TOKEN)'));
    }
  });

  app.setErrorHandler((error: Error & { statusCode?: number; validation?: { instancePath: string; message?: string }[] }, request, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
    if (status >= 500) options.log.error({ err: error, path: request.url }, 'HTTP handler failed');
    else options.log.info({ path: request.url, status, message: error.message }, 'HTTP request rejected');
    const problems = error.validation?.map((v) => ({ path: v.instancePath, message: v.message ?? 'invalid' })) ?? [];
    void reply.code(status).send(errorBody(status, status >= 500 ? 'internal error (see the Core log)' : error.message, problems));
  });

  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send(errorBody(404, `no route ${request.method} ${request.url.split('?')[0] ?? ''}`));
  });

  return {
    app,
    authorize,
    async listen() {
      await app.listen({ host: options.host, port: options.port });
      const address = app.server.address();
      const port = typeof address === 'object' && address ? address.port : options.port;
      return { port, url: `http://${options.host}:${port}` };
    },
    async close() {
      await app.close();
    },
  };
}
