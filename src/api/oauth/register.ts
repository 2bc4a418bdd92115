// Dynamic client registration (RFC 7591) at /oauth/register, only when oauth.dynamic_registration is on
// (off by default: anyone who reaches the Core could register clients, and a registered client with a
// look-alike name is half a phishing page; every grant still needs a consent with a token). The client's
// metadata is read with the MCP SDK's schema. Secrets never expire (client_secret_expires_at 0): Home
// Assistant refuses a registration whose secret would expire, since it cannot renew it.
import { OAuthClientMetadataSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { CLIENT_AUTH_METHODS, OAuthClientError, redirectUriProblem, type ClientAuthMethod, type NewClient } from '../../access/oauth-clients.js';
import { OAUTH_SCOPE } from '../../access/oauth-grants.js';
import { oauthErrorHandler, type OAuthContext } from './context.js';

const GRANT_TYPES = new Set(['authorization_code', 'refresh_token']);
const SCOPES = new Set([OAUTH_SCOPE, 'offline_access']);

function refuse(reply: FastifyReply, status: number, error: string, description: string): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').send({ error, error_description: description });
}

export function registerRegistrationRoute(app: FastifyInstance, context: OAuthContext): void {
  app.post('/oauth/register', { errorHandler: oauthErrorHandler(context.log) }, async (request, reply) => {
    if (!context.settings.dynamic_registration) {
      return refuse(
        reply,
        403,
        'access_denied',
        'dynamic client registration is off: the admin adds clients with `homeclaw oauth clients add`, or sets oauth.dynamic_registration: true',
      );
    }
    if (context.clients.countDynamic() >= context.settings.max_dynamic_clients) {
      context.log.warn({ ip: request.ip, max: context.settings.max_dynamic_clients }, 'OAuth client registration refused: too many registered clients');
      return refuse(
        reply,
        403,
        'access_denied',
        `too many dynamically registered clients (oauth.max_dynamic_clients = ${context.settings.max_dynamic_clients}); remove unused ones with homeclaw oauth clients remove`,
      );
    }
    const parsed = OAuthClientMetadataSchema.safeParse(request.body);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`).join('; ');
      return refuse(reply, 400, 'invalid_client_metadata', problems);
    }
    const metadata = parsed.data;
    for (const uri of metadata.redirect_uris) {
      const problem = redirectUriProblem(uri);
      if (problem) return refuse(reply, 400, 'invalid_redirect_uri', `redirect URI ${problem}`);
    }
    const method = metadata.token_endpoint_auth_method ?? 'client_secret_basic';
    if (!(CLIENT_AUTH_METHODS as readonly string[]).includes(method)) {
      return refuse(reply, 400, 'invalid_client_metadata', `token_endpoint_auth_method must be one of ${CLIENT_AUTH_METHODS.join(', ')}`);
    }
    const grantTypes = metadata.grant_types ?? ['authorization_code', 'refresh_token'];
    if (grantTypes.some((type) => !GRANT_TYPES.has(type)))
      return refuse(reply, 400, 'invalid_client_metadata', 'grant_types may only be authorization_code and refresh_token');
    const responseTypes = metadata.response_types ?? ['code'];
    if (responseTypes.some((type) => type !== 'code')) return refuse(reply, 400, 'invalid_client_metadata', 'response_types may only be code');
    const scopes = (metadata.scope ?? OAUTH_SCOPE).split(' ').filter(Boolean);
    if (scopes.some((scope) => !SCOPES.has(scope))) return refuse(reply, 400, 'invalid_client_metadata', `scope may only be "${OAUTH_SCOPE}"`);

    let created: NewClient;
    try {
      created = context.clients.add({
        name: metadata.client_name ?? 'unnamed client',
        redirect_uris: metadata.redirect_uris,
        auth_method: method as ClientAuthMethod,
        source: 'dynamic',
      });
    } catch (err) {
      if (err instanceof OAuthClientError) return refuse(reply, 400, 'invalid_client_metadata', err.message);
      throw err;
    }
    const { client, client_secret } = created;
    context.log.info(
      { client_id: client.client_id, client_name: client.name, redirect_uris: client.redirect_uris, ip: request.ip },
      'OAuth client registered itself',
    );
    return reply
      .code(201)
      .header('cache-control', 'no-store')
      .send({
        client_id: client.client_id,
        ...(client_secret ? { client_secret, client_secret_expires_at: 0 } : {}),
        client_id_issued_at: Math.floor(client.created_at / 1000),
        client_name: client.name,
        redirect_uris: client.redirect_uris,
        token_endpoint_auth_method: client.auth_method,
        grant_types: grantTypes,
        response_types: responseTypes,
        scope: scopes.join(' '),
      });
  });
}
