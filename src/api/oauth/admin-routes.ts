// OAuth administration over HTTP (admin token only): `homeclaw oauth clients add|list|remove` and
// `homeclaw oauth tokens list|revoke` call these.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { OAuthClientError, type OAuthClient } from '../../access/oauth-clients.js';
import { isUserId } from '../../access/user-id.js';
import { sendError } from '../errors.js';
import type { OAuthContext } from './context.js';
import { isPlainObject } from '../../kit/plain-object.js';

function answerError(reply: FastifyReply, err: unknown): FastifyReply {
  if (err instanceof OAuthClientError) return sendError(reply, err.status, err.message);
  throw err;
}

function unknownFields(body: Record<string, unknown>, known: string[]): string[] {
  return Object.keys(body).filter((key) => !known.includes(key));
}

export function registerOAuthAdminRoutes(app: FastifyInstance, context: OAuthContext): void {
  const { clients, grants, log } = context;

  app.get('/api/oauth/clients', async () => ({ clients: clients.list() }));

  app.post('/api/oauth/clients', async (request, reply) => {
    const body = request.body;
    if (!isPlainObject(body)) return sendError(reply, 400, 'the body must be {"name": "...", "redirect_uris": ["..."]}');
    const extra = unknownFields(body as Record<string, unknown>, ['name', 'redirect_uris']);
    if (extra.length > 0)
      return sendError(
        reply,
        400,
        `unknown field "${extra[0]}"`,
        extra.map((key) => ({ path: `/${key}`, message: `unknown field "${key}"` })),
      );
    try {
      const input = body as { name?: unknown; redirect_uris?: unknown };
      const { client, client_secret } = clients.add({ name: input.name, redirect_uris: input.redirect_uris, source: 'cli' });
      log.info({ client_id: client.client_id, client_name: client.name, redirect_uris: client.redirect_uris }, 'OAuth client added');
      return reply.code(201).send({ ...client, client_secret });
    } catch (err) {
      return answerError(reply, err);
    }
  });

  app.delete<{ Params: { client: string } }>('/api/oauth/clients/:client', async (request, reply) => {
    let removed: OAuthClient;
    try {
      removed = clients.remove(request.params.client);
    } catch (err) {
      return answerError(reply, err);
    }
    const revoked = grants.revoke({ client_id: removed.client_id });
    log.warn({ client_id: removed.client_id, client_name: removed.name, grants_revoked: revoked }, 'OAuth client removed');
    return { client_id: removed.client_id, name: removed.name, removed: true, grants_revoked: revoked };
  });

  app.get('/api/oauth/grants', async () => {
    const names = new Map(clients.list().map((client) => [client.client_id, client.name]));
    return { grants: grants.list().map((grant) => ({ ...grant, client_name: names.get(grant.client_id) ?? null })) };
  });

  app.post('/api/oauth/tokens/revoke', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (typeof body !== 'object' || Array.isArray(body)) return sendError(reply, 400, 'the body must be {"client"?: "...", "user_id"?: "...", "all"?: true}');
    const extra = unknownFields(body, ['client', 'user_id', 'all']);
    if (extra.length > 0) return sendError(reply, 400, `unknown field "${extra[0]}"`);
    if (body.client === undefined && body.user_id === undefined && body.all !== true) {
      return sendError(reply, 400, 'say what to revoke: client, user_id, or "all": true');
    }
    if (body.user_id !== undefined && !isUserId(body.user_id))
      return sendError(reply, 400, 'user_id must be a user id', [{ path: '/user_id', message: 'not a user id' }]);
    let clientId: string | undefined;
    if (body.client !== undefined) {
      if (typeof body.client !== 'string') return sendError(reply, 400, 'client must be a client id or name');
      try {
        clientId = clients.resolve(body.client).client_id;
      } catch (err) {
        return answerError(reply, err);
      }
    }
    const revoked = grants.revoke({
      ...(clientId !== undefined ? { client_id: clientId } : {}),
      ...(typeof body.user_id === 'string' ? { user_id: body.user_id } : {}),
      ...(body.all === true ? { all: true } : {}),
    });
    log.warn({ client_id: clientId, user_id: body.user_id, all: body.all === true, revoked }, 'OAuth grants revoked by the admin');
    return { revoked };
  });
}
