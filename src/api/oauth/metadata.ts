// Discovery: authorization server metadata (RFC 8414) and protected resource metadata (RFC 9728), and
// the 401 of /mcp pointing to the latter (WWW-Authenticate: Bearer resource_metadata="..."), which is how
// Home Assistant's MCP client and the MCP SDK's client find out that /mcp takes OAuth and where to start.
// The resource metadata is served at the path-specific URL (/.well-known/oauth-protected-resource/mcp)
// and at the root one, which clients try when the header is missing; both name exactly <origin>/mcp,
// the URL a user types into Home Assistant.
import type { FastifyInstance } from 'fastify';
import { OAUTH_SCOPE } from '../../access/oauth-grants.js';
import { CLIENT_AUTH_METHODS } from '../../access/oauth-clients.js';
import { errorBody } from '../errors.js';
import type { UnauthorizedResponder } from '../server.js';
import { RESOURCE_PATH, serverUrls, type OAuthContext } from './context.js';

export const AUTHORIZATION_SERVER_METADATA_PATH = '/.well-known/oauth-authorization-server';
export const RESOURCE_METADATA_PATHS = ['/.well-known/oauth-protected-resource', `/.well-known/oauth-protected-resource${RESOURCE_PATH}`] as const;
/** Paths clients probe that this server does not serve: public, so they get a plain 404 rather than 401. */
export const PROBED_PATHS = ['/.well-known/openid-configuration', `/.well-known/openid-configuration${RESOURCE_PATH}`];

export function registerMetadataRoutes(app: FastifyInstance, context: OAuthContext): void {
  app.get(AUTHORIZATION_SERVER_METADATA_PATH, async (request, reply) => {
    const urls = serverUrls(request, context);
    return reply.header('cache-control', 'no-store').send({
      issuer: urls.issuer,
      authorization_endpoint: urls.authorization_endpoint,
      token_endpoint: urls.token_endpoint,
      ...(context.settings.dynamic_registration ? { registration_endpoint: urls.registration_endpoint } : {}),
      revocation_endpoint: urls.revocation_endpoint,
      scopes_supported: [OAUTH_SCOPE],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
      revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
      authorization_response_iss_parameter_supported: true,
    });
  });
  for (const path of RESOURCE_METADATA_PATHS) {
    app.get(path, async (request, reply) => {
      const urls = serverUrls(request, context);
      return reply.header('cache-control', 'no-store').send({
        resource: urls.resource,
        authorization_servers: [urls.issuer],
        scopes_supported: [OAUTH_SCOPE],
        bearer_methods_supported: ['header'],
        resource_name: 'HomeClaw',
      });
    });
  }
}

/** RFC 6750 §3 and RFC 9728 §5.1: the challenge names the resource metadata, and the error when a token was sent. */
export function mcpUnauthorized(context: OAuthContext): UnauthorizedResponder {
  return {
    appliesTo: (path) => path === RESOURCE_PATH,
    respond: async (request, reply, presented) => {
      const urls = serverUrls(request, context);
      const parts = [`resource_metadata="${urls.resource_metadata}"`, `scope="${OAUTH_SCOPE}"`];
      if (presented) parts.push('error="invalid_token"', 'error_description="the access token is unknown, expired or revoked"');
      const message = presented
        ? 'invalid or expired bearer token: use the admin token, a user token, or an OAuth access token (refresh it, or authorize again)'
        : 'missing bearer token: use the admin token, a user token, or OAuth (see the resource metadata in WWW-Authenticate)';
      return reply
        .code(401)
        .header('www-authenticate', `Bearer ${parts.join(', ')}`)
        .send(errorBody(401, message));
    },
  };
}
