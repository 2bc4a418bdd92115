// OAuth administration over HTTP (admin token only): `homeclaw oauth clients add|list|remove` and
// `homeclaw oauth tokens list|revoke` call these.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { OAuthClientError, type OAuthClient } from '../../access/oauth-clients.js';
import { sendError } from '../errors.js';
import { validatedRoute } from '../route-validation.js';
import { OAuthClientRequest, RevokeGrantsRequest } from './admin-schema.js';
import type { OAuthContext } from './context.js';

function answerError(reply: FastifyReply, err: unknown): FastifyReply {
  if (err instanceof OAuthClientError) return sendError(reply, err.status, err.message);
  throw err;
}

export function registerOAuthAdminRoutes(app: FastifyInstance, context: OAuthContext): void {
  const { clients, grants, log } = context;

  app.get('/api/oauth/clients', async () => ({ clients: clients.list() }));

  const clientRoute = validatedRoute({ body: OAuthClientRequest }, 'invalid OAuth client');
  app.post<{ Body: OAuthClientRequest }>('/api/oauth/clients', clientRoute, async (request, reply) => {
    const body = request.body;
    try {
      const { client, client_secret } = clients.add({ name: body.name, redirect_uris: body.redirect_uris, source: 'cli' });
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

  const revokeRoute = validatedRoute({ body: RevokeGrantsRequest }, 'invalid revocation');
  app.post<{ Body: RevokeGrantsRequest }>('/api/oauth/tokens/revoke', revokeRoute, async (request, reply) => {
    const body = request.body;
    if (body.client === undefined && body.user_id === undefined && body.all !== true) {
      return sendError(reply, 400, 'say what to revoke: client, user_id, or "all": true');
    }
    let clientId: string | undefined;
    if (body.client !== undefined) {
      try {
        clientId = clients.resolve(body.client).client_id;
      } catch (err) {
        return answerError(reply, err);
      }
    }
    const revoked = grants.revoke({
      ...(clientId !== undefined ? { client_id: clientId } : {}),
      ...(body.user_id !== undefined ? { user_id: body.user_id } : {}),
      ...(body.all === true ? { all: true } : {}),
    });
    log.warn({ client_id: clientId, user_id: body.user_id, all: body.all === true, revoked }, 'OAuth grants revoked by the admin');
    return { revoked };
  });
}
