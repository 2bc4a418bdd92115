// Streamable HTTP at /mcp on the Core's fastify server. Each client session (mcp-session-id) gets its
// own transport and its own MCP server instance; sessions end on DELETE, on idle timeout and when the
// HTTP server closes.
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../access/principal.js';
import { OutputSchemaCheck } from '../mcp-output-check.js';
import { createMcpSessionServer, type McpServerDeps, type McpSessionServer } from '../mcp-server.js';
import { InputSchemaCache } from '../mcp-tool-catalog.js';
import { principalOf as requestPrincipal, USER_ROUTE } from '../principal-auth.js';

export interface McpRouteDeps extends McpServerDeps {
  /** Bearer check shared with the rest of the HTTP API. */
  authorize(request: FastifyRequest): boolean;
  /** Who a request acts as; a session acts as the principal that initialized it. Default: the server's hook. */
  principalOf?: (request: FastifyRequest) => Principal;
  /** A session without any request for this long is closed. Default 30 minutes. */
  session_idle_timeout_ms?: number;
  /** Default '/mcp'. */
  path?: string;
  /** Sessions one principal (the admin, or one user) may hold; a new one closes its least recently used. Default 32. */
  max_sessions_per_principal?: number;
}

/**
 * Each session holds an MCP server and a transport (~56 KB) for up to the idle timeout: without a bound a
 * single user token could open sessions until the Core runs out of memory. A real client holds one or two.
 */
export const MAX_MCP_SESSIONS_PER_PRINCIPAL = 32;

export interface McpRoutes {
  sessionCount(): number;
  closeAllSessions(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  mcp: McpSessionServer;
  last_seen: number;
  principal: Principal;
}

function samePrincipal(a: Principal, b: Principal): boolean {
  return a.kind === b.kind && (a.kind === 'admin' || a.user_id === (b as { user_id: string }).user_id);
}

function jsonRpcError(reply: FastifyReply, status: number, code: number, message: string): FastifyReply {
  return reply.code(status).send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

export function registerMcpRoutes(app: FastifyInstance, deps: McpRouteDeps): McpRoutes {
  const path = deps.path ?? '/mcp';
  const idleMs = deps.session_idle_timeout_ms ?? 30 * 60_000;
  const log = deps.log.child({ room: 'api', route: path });
  const sessions = new Map<string, Session>();
  const serverDeps: McpServerDeps = {
    ...deps,
    outputCheck: deps.outputCheck ?? new OutputSchemaCheck(),
    inputSchemas: deps.inputSchemas ?? new InputSchemaCache(),
  };

  const closeSession = async (id: string, why: string): Promise<void> => {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    log.info({ mcp_session: id, why }, 'MCP session closed');
    await session.mcp.close();
    await session.transport.close().catch(() => undefined);
  };

  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, session] of sessions) if (now - session.last_seen > idleMs) void closeSession(id, 'idle');
    },
    Math.max(50, Math.min(idleMs / 4, 60_000)),
  );
  sweep.unref();

  const perPrincipal = deps.max_sessions_per_principal ?? MAX_MCP_SESSIONS_PER_PRINCIPAL;
  /** The principal's least recently used sessions beyond its limit are closed; their clients get 404 and initialize again. */
  const closeOldestBeyondLimit = (principal: Principal): void => {
    const own = [...sessions].filter(([, session]) => samePrincipal(session.principal, principal));
    if (own.length <= perPrincipal) return;
    own.sort(([, a], [, b]) => a.last_seen - b.last_seen);
    for (const [id] of own.slice(0, own.length - perPrincipal)) void closeSession(id, `more than ${perPrincipal} sessions for this token`);
  };

  const closeAllSessions = async (): Promise<void> => {
    await Promise.all([...sessions.keys()].map((id) => closeSession(id, 'server closing')));
  };
  // preClose: open SSE streams would otherwise keep fastify's close waiting.
  app.addHook('preClose', async () => {
    clearInterval(sweep);
    await closeAllSessions();
  });

  const refuse = (request: FastifyRequest, reply: FastifyReply): boolean => {
    if (deps.authorize(request)) return false;
    log.warn({ ip: request.ip }, 'MCP request without a valid bearer token refused');
    void reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'missing or invalid bearer token' });
    return true;
  };

  const sessionIdOf = (request: FastifyRequest): string | undefined => {
    const header = request.headers['mcp-session-id'];
    return typeof header === 'string' && header.length > 0 ? header : undefined;
  };

  const principalOf = deps.principalOf ?? requestPrincipal;
  /** A session id is not a credential: another token may not use it. */
  const foreign = (session: Session, request: FastifyRequest, reply: FastifyReply): boolean => {
    if (samePrincipal(session.principal, principalOf(request))) return false;
    log.warn({ ip: request.ip }, 'MCP session used with another token refused');
    void jsonRpcError(reply, 403, -32001, 'this MCP session belongs to another token; initialize your own session');
    return true;
  };

  const forward = async (session: Session, request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    session.last_seen = Date.now();
    reply.hijack();
    try {
      await session.transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (err) {
      log.error({ err }, 'MCP request failed');
      if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'application/json' });
      if (!reply.raw.writableEnded) reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'internal error' }, id: null }));
    }
  };

  app.post(path, USER_ROUTE, async (request, reply) => {
    if (refuse(request, reply)) return reply;
    const id = sessionIdOf(request);
    if (id) {
      const session = sessions.get(id);
      // 404 tells the client its session is gone so it starts a new one (MCP spec).
      if (!session) return jsonRpcError(reply, 404, -32001, `MCP session ${id} not found (expired or closed); initialize again`);
      if (foreign(session, request, reply)) return reply;
      await forward(session, request, reply);
      return reply;
    }
    if (!isInitializeRequest(request.body)) {
      return jsonRpcError(reply, 400, -32000, 'no mcp-session-id header: the first request of a session must be initialize');
    }
    const principal = principalOf(request);
    const mcp = createMcpSessionServer({ ...serverDeps, principal });
    let session: Session | undefined;
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        session = { transport, mcp, last_seen: Date.now(), principal };
        sessions.set(sessionId, session);
        log.info({ mcp_session: sessionId, sessions: sessions.size }, 'MCP session started');
        closeOldestBeyondLimit(principal);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) void closeSession(transport.sessionId, 'client closed');
    };
    await mcp.server.connect(transport);
    await forward(session ?? { transport, mcp, last_seen: Date.now(), principal }, request, reply);
    if (!transport.sessionId) await mcp.close(); // initialize was refused: nothing to keep
    return reply;
  });

  const withSession = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    if (refuse(request, reply)) return reply;
    const id = sessionIdOf(request);
    if (!id) return jsonRpcError(reply, 400, -32000, 'mcp-session-id header required');
    const session = sessions.get(id);
    if (!session) return jsonRpcError(reply, 404, -32001, `MCP session ${id} not found (expired or closed)`);
    if (foreign(session, request, reply)) return reply;
    await forward(session, request, reply);
    return reply;
  };
  app.get(path, USER_ROUTE, withSession);
  app.delete(path, USER_ROUTE, withSession);

  return { sessionCount: () => sessions.size, closeAllSessions };
}
