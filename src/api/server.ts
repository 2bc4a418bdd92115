// The Core's HTTP server (fastify): bearer auth, one error format, and the route modules of each room.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { ADMIN, type Principal } from '../access/principal.js';
import { diskFullMessage } from '../kit/disk-full.js';
import { nestsDeeperThan } from '../kit/json-depth.js';
import { MAX_JSON_DEPTH } from '../protocol/limits.js';
import type { Logger } from '../log.js';
import type { ErrorObject } from 'ajv';
import { errorBody } from './errors.js';
import { routeProblems, routeValidatorCompiler } from './route-validation.js';
import { installOpenApi } from './openapi.js';
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_ADDRESS, limitConnections } from './connection-limits.js';
import { LogWindow } from '../kit/log-window.js';
import type { IngressAuth } from './ingress-auth.js';
import { adminOnlyMessage, principalOf, resolvePrincipal, type UserTokenVerifier } from './principal-auth.js';

export interface HttpServerOptions {
  host: string;
  port: number;
  token: string;
  log: Logger;
  /** Paths reachable without the token. */
  publicPaths?: string[];
  /** Per-user tokens; without it only the admin token is accepted. */
  userTokens?: UserTokenVerifier;
  /** Path prefixes reachable without the token (the dashboard's static files). */
  publicPrefixes?: string[];
  /** Requests from a trusted ingress proxy without an Authorization header act as the admin. */
  ingress?: IngressAuth;
  /** Open connections one client address may hold (default DEFAULT_MAX_CONNECTIONS_PER_ADDRESS). */
  maxConnectionsPerAddress?: number;
  /** Open connections from all clients together (default DEFAULT_MAX_CONNECTIONS). */
  maxConnections?: number;
}

/** A further kind of bearer token, accepted only on the paths it guards (e.g. OAuth access tokens on /mcp). */
export interface BearerScheme {
  appliesTo(path: string): boolean;
  /** The principal the token acts as, or undefined when it is not one of this scheme's valid tokens. */
  verify(token: string): Principal | undefined;
}

/** How a front door answers a request without a valid token, in its own protocol's shape. */
export interface UnauthorizedResponder {
  appliesTo(path: string): boolean;
  /** `presented`: the request carried a bearer token (a wrong or expired one). */
  respond(request: FastifyRequest, reply: FastifyReply, presented: boolean): Promise<unknown>;
}

export interface HttpServer {
  app: FastifyInstance;
  /** Paths reachable without any token (exact paths, without the query string). */
  addPublicPaths(paths: readonly string[]): void;
  addBearerScheme(scheme: BearerScheme): void;
  onUnauthorized(responder: UnauthorizedResponder): void;
  /** True for a request carrying any valid token (admin or user). */
  authorize(request: FastifyRequest): boolean;
  /** Who the request acts as; resolved once per request by the authentication hook. */
  principalOf(request: FastifyRequest): Principal;
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
  // Refusals repeat as fast as a client sends them; each kind is logged once per address (or user) per window.
  const warnings = new LogWindow();
  limitConnections(
    app.server,
    { perAddress: options.maxConnectionsPerAddress ?? DEFAULT_MAX_CONNECTIONS_PER_ADDRESS, total: options.maxConnections ?? DEFAULT_MAX_CONNECTIONS },
    (address, reason) => warnings.warn(options.log, `connection\u0000${address}`, { address, reason }, 'HTTP connection refused: too many open'),
  );
  // Every route schema validates bodies as sent and lists every problem (see route-validation.ts).
  app.setValidatorCompiler(routeValidatorCompiler);
  refuseDeepJson(app);
  // Before any route: each route gets its documentation as it is registered.
  installOpenApi(app);
  const publicPaths = new Set(['/api/openapi.json', ...(options.publicPaths ?? [])]);
  const publicPrefixes = options.publicPrefixes ?? [];
  const schemes: BearerScheme[] = [];
  const responders: UnauthorizedResponder[] = [];
  const pathOf = (request: FastifyRequest): string => request.url.split('?')[0] ?? '';
  const fromSchemes = (request: FastifyRequest): Principal | undefined => {
    const header = request.headers.authorization;
    if (!header?.startsWith('Bearer ')) return undefined;
    const path = pathOf(request);
    const token = header.slice('Bearer '.length).trim();
    for (const scheme of schemes) {
      if (!scheme.appliesTo(path)) continue;
      const principal = scheme.verify(token);
      if (principal) return principal;
    }
    return undefined;
  };
  const resolve = (request: FastifyRequest): Principal | undefined => {
    if (request.principal) return request.principal;
    const header = request.headers.authorization;
    // Explicit credentials win: a wrong token is refused even on a request that came through ingress.
    if (header !== undefined || !options.ingress) return resolvePrincipal(header, options.token, options.userTokens) ?? fromSchemes(request);
    return options.ingress.identify(request) ? ADMIN : undefined;
  };
  const authorize = (request: FastifyRequest): boolean => resolve(request) !== undefined;

  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    if (publicPaths.has(path) || publicPrefixes.some((prefix) => path.startsWith(prefix))) return;
    const principal = resolve(request);
    if (!principal) {
      warnings.warn(options.log, `unauthorized\u0000${request.ip}`, { path, ip: request.ip }, 'HTTP request without a valid bearer token refused');
      const responder = responders.find((candidate) => candidate.appliesTo(path));
      if (responder) {
        await responder.respond(request, reply, request.headers.authorization !== undefined);
        return;
      }
      await reply
        .code(401)
        .header('www-authenticate', 'Bearer')
        .send(
          errorBody(401, 'missing or invalid bearer token (see <data dir>/admin.token or HOMECLAW_ADMIN_TOKEN, or `homeclaw users add <id>` for a user token)'),
        );
      return;
    }
    request.principal = principal;
    if (principal.kind === 'user' && !request.is404 && request.routeOptions.config.allow_users !== true) {
      warnings.warn(
        options.log,
        `admin-route\u0000${principal.user_id}`,
        { path, method: request.method, user_id: principal.user_id },
        'user token refused on an admin route',
      );
      await reply.code(403).send(errorBody(403, adminOnlyMessage(principal, request.method, path)));
    }
  });

  app.setErrorHandler((error: Error & { statusCode?: number; validation?: ErrorObject[]; validationContext?: string }, request, reply) => {
    const full = diskFullMessage(error, `${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]}`);
    if (full) {
      options.log.error({ err: error, path: request.url }, 'disk full');
      void reply.code(507).send(errorBody(507, full));
      return;
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
    if (status >= 500) options.log.error({ err: error, path: request.url }, 'HTTP handler failed');
    else
      warnings.info(options.log, `rejected\u0000${request.ip}\u0000${status}`, { path: request.url, status, message: error.message }, 'HTTP request rejected');
    const problems = error.validation ? routeProblems(error.validation, error.validationContext) : [];
    void reply.code(status).send(errorBody(status, status >= 500 ? 'internal error (see the Core log)' : error.message, problems));
  });

  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send(errorBody(404, `no route ${request.method} ${request.url.split('?')[0] ?? ''}`));
  });

  return {
    app,
    addPublicPaths: (paths) => {
      for (const path of paths) publicPaths.add(path);
    },
    addBearerScheme: (scheme) => void schemes.push(scheme),
    onUnauthorized: (responder) => void responders.push(responder),
    authorize,
    principalOf,
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

/**
 * Fastify's own JSON body parser (prototype poisoning refused), then the nesting limit: a body nested
 * deeper than MAX_JSON_DEPTH is a 400 before any route, schema or error formatter walks it.
 */
function refuseDeepJson(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parseJson(request, typeof body === 'string' ? body : body.toString('utf8'), (error: Error | null, value?: unknown) => {
      if (error) return done(error, undefined);
      if (nestsDeeperThan(value, MAX_JSON_DEPTH)) {
        const tooDeep = Object.assign(new Error(`the JSON body is nested deeper than ${MAX_JSON_DEPTH} levels of objects and arrays`), { statusCode: 400 });
        return done(tooDeep, undefined);
      }
      done(null, value);
    });
  });
}
